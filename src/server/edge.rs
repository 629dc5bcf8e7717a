//! The gRPC server's edge, around every service: what no handler should have to think
//! about.
//!
//! - Request trailers are dropped, on every transport (gRPC over HTTP/2, grpc-web over
//!   HTTP/1.1 chunked bodies or HTTP/2, grpc-web-text): a gRPC request carries its
//!   metadata in its headers, and tonic would otherwise merge a unary or
//!   server-streaming request's trailers into its metadata, where an `authorization`
//!   trailer would authenticate a call that sent none (issue 37). Ignored, not refused:
//!   gRPC's protocol has no request trailers, so a client that sends some gets the answer
//!   its headers earn (UNAUTHENTICATED without a token).
//! - A request message longer than the limit is refused with RESOURCE_EXHAUSTED as soon
//!   as its 5-byte gRPC prefix arrives: nothing of it is buffered. (tonic's own check
//!   answers OUT_OF_RANGE, and only up to the limit it was given; this one sees every
//!   size, and tonic's stays behind it as a second wall.) A body that ends inside a
//!   message, and an empty body for a method that takes exactly one message (unary and
//!   server-streaming), are INVALID_ARGUMENT; a client-streaming method may get none.
//!   These checks run twice: here on gRPC bodies (before anything buffers them, as the
//!   cluster's forwarding does) and behind tonic-web's translation, on each service
//!   ([`framed`]), where grpc-web and grpc-web-text bodies are plain gRPC framing and a
//!   refusal keeps its code (tonic-web turns an error of the body it reads into
//!   INTERNAL).
//! - No status message leaves longer than `api::MAX_STATUS_MESSAGE` bytes, in the
//!   headers or the trailers: a handler that quoted its whole input cannot push the
//!   response past a client's metadata limit.
//! - Each RPC counts as an open stream of its connection until its response ends, for
//!   the idle timeout of `server::conn`.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, ready};

use http_body::{Body as HttpBody, Frame, SizeHint};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode, utf8_percent_encode};
use prost::Message as _;
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::http::{self, HeaderMap, HeaderValue};
use tonic::codegen::{Bytes, Service};
use tonic::server::NamedService;

use super::conn::{ConnInfo, StreamGuard};
use crate::api::Refusal;
use crate::api::{MAX_STATUS_MESSAGE, bounded_message};

/// The edge's settings.
#[derive(Debug, Clone, Copy)]
pub struct EdgeLayer {
    /// The longest request message (bytes, as its gRPC prefix says).
    pub max_message: usize,
}

impl<S> tower::Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            max_message: self.max_message,
        }
    }
}

/// The edge around a service.
#[derive(Debug, Clone)]
pub struct Edge<S> {
    inner: S,
    max_message: usize,
}

/// The future of a middleware's call (this one's and [`super::forward`]'s).
pub(super) type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S> Service<http::Request<Body>> for Edge<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        let conn = req.extensions().get::<ConnInfo>().cloned();
        let guard = conn.map(|c| {
            // `Request::remote_addr` looks for the TCP addresses.
            req.extensions_mut().insert(c.tcp.clone());
            c.state.open_stream()
        });
        // gRPC's binary framing is checked here; grpc-web's (and grpc-web-text's base64)
        // behind tonic-web, by `framed`, where a refusal keeps its code.
        let grpc = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| {
                let v = v.as_bytes();
                v.starts_with(b"application/grpc") && !v.starts_with(b"application/grpc-web")
            });
        let framing = grpc.then(|| Framing::new(self.max_message, req.uri().path()));
        if grpc {
            // Followed here: the services' own check ([`framed`]) lets it through.
            req.extensions_mut().insert(FramingFollowed);
        }
        let req = req.map(|body| Body::new(Incoming::new(body, framing)));
        // The clone that was made ready serves this call (tower's usual swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let call = inner.call(req);
        Box::pin(async move {
            let mut response = call.await?;
            bound_grpc_message(response.headers_mut());
            Ok(response.map(|body| Body::new(Outgoing { body, guard })))
        })
    }
}

/// The services' methods that take exactly one request message (unary and
/// server-streaming), by path (`/package.Service/Method`): the API's, health's and
/// reflection's, from their descriptors.
fn one_message_methods() -> &'static HashSet<String> {
    static METHODS: OnceLock<HashSet<String>> = OnceLock::new();
    METHODS.get_or_init(|| {
        let sets = [
            crate::api::pb::FILE_DESCRIPTOR_SET,
            tonic_health::pb::FILE_DESCRIPTOR_SET,
            tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
            tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
        ];
        let mut methods = HashSet::new();
        for set in sets {
            // Built into the binary; a set that does not decode (a build error, which
            // the reflection test would show) leaves its methods unchecked.
            let Ok(set) = prost_types::FileDescriptorSet::decode(set) else {
                continue;
            };
            for file in &set.file {
                for service in &file.service {
                    for method in &service.method {
                        if !method.client_streaming() {
                            methods.insert(format!(
                                "/{}.{}/{}",
                                file.package(),
                                service.name(),
                                method.name()
                            ));
                        }
                    }
                }
            }
        }
        methods
    })
}

/// Marks a request whose framing the edge follows, so the services' own check
/// ([`framed`]) does not follow it a second time.
#[derive(Debug, Clone, Copy)]
struct FramingFollowed;

/// A request body's gRPC framing (1 flag byte, 4 bytes of length, the message), followed
/// as the body arrives.
#[derive(Debug)]
struct Framing {
    /// The longest message.
    max: usize,
    /// The method, if it takes exactly one message (an empty body is refused).
    one: Option<&'static str>,
    prefix: [u8; 5],
    have: usize,
    skip: u64,
    messages: u64,
}

impl Framing {
    fn new(max: usize, path: &str) -> Framing {
        let one = one_message_methods()
            .get(path)
            .map(|p| p.rsplit('/').next().unwrap_or(p.as_str()));
        Framing {
            max,
            one,
            prefix: [0; 5],
            have: 0,
            skip: 0,
            messages: 0,
        }
    }

    /// The body ended: inside a message (a prefix cut short, or fewer bytes than its
    /// prefix said) is the caller's malformed request, INVALID_ARGUMENT, not tonic's
    /// INTERNAL "Unexpected EOF decoding stream."; so is no message at all for a method
    /// that takes one (tonic's INTERNAL "Missing request message.").
    fn ended(&self) -> Result<(), Status> {
        if self.have > 0 {
            return Err(Refusal::Field(format!(
                "the request ended inside a gRPC message prefix ({} of 5 bytes)",
                self.have
            ))
            .into());
        }
        if self.skip > 0 {
            return Err(Refusal::Field(format!(
                "the request ended inside a gRPC message: {} bytes of it missing",
                self.skip
            ))
            .into());
        }
        match &self.one {
            Some(method) if self.messages == 0 => Err(Refusal::Field(format!(
                "the request has no message: {method} takes exactly one"
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// Follows the framing through `data`.
    fn scan(&mut self, data: &[u8]) -> Result<(), Status> {
        let mut at = 0;
        while at < data.len() {
            if self.skip > 0 {
                let n = self.skip.min((data.len() - at) as u64);
                self.skip -= n;
                at += n as usize;
                continue;
            }
            self.prefix[self.have] = data[at];
            self.have += 1;
            at += 1;
            if self.have == self.prefix.len() {
                self.have = 0;
                self.messages += 1;
                let [_, a, b, c, d] = self.prefix;
                let len = u32::from_be_bytes([a, b, c, d]);
                if len as usize > self.max {
                    return Err(Refusal::Limit(format!(
                        "a request message of {len} bytes: the server takes at most {} \
                         (max_message_bytes)",
                        self.max
                    ))
                    .into());
                }
                self.skip = u64::from(len);
            }
        }
        Ok(())
    }
}

/// A request body without its trailers, its gRPC framing checked if it has one.
struct Incoming {
    body: Body,
    framing: Option<Framing>,
    refused: bool,
}

impl Incoming {
    fn new(body: Body, framing: Option<Framing>) -> Incoming {
        Incoming {
            body,
            framing,
            refused: false,
        }
    }

    fn ended(&self) -> Result<(), Status> {
        self.framing.as_ref().map_or(Ok(()), Framing::ended)
    }
}

impl HttpBody for Incoming {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        loop {
            if this.refused {
                return Poll::Ready(None);
            }
            let frame = match ready!(Pin::new(&mut this.body).poll_frame(cx)) {
                None => {
                    if let Err(status) = this.ended() {
                        this.refused = true;
                        return Poll::Ready(Some(Err(status)));
                    }
                    return Poll::Ready(None);
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                Some(Ok(frame)) => frame,
            };
            // Trailers never reach tonic: see the module's comment.
            if frame.is_trailers() {
                continue;
            }
            if let (Some(framing), Some(data)) = (&mut this.framing, frame.data_ref())
                && let Err(status) = framing.scan(data)
            {
                this.refused = true;
                return Poll::Ready(Some(Err(status)));
            }
            return Poll::Ready(Some(Ok(frame)));
        }
    }

    fn is_end_stream(&self) -> bool {
        self.refused || (self.body.is_end_stream() && self.ended().is_ok())
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A gRPC service whose request bodies are checked as the edge checks gRPC's (see the
/// module): put behind tonic-web, it sees grpc-web and grpc-web-text requests as the
/// plain gRPC they were translated to.
pub fn framed<S>(inner: S, max_message: usize) -> Framed<S> {
    Framed { inner, max_message }
}

/// A service behind [`framed`].
#[derive(Debug, Clone)]
pub struct Framed<S> {
    inner: S,
    max_message: usize,
}

impl<S: NamedService> NamedService for Framed<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> Service<http::Request<Body>> for Framed<S>
where
    S: Service<http::Request<Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        // A plain gRPC body was followed at the edge already: only what tonic-web
        // translated (grpc-web, grpc-web-text) is followed here.
        if req.extensions().get::<FramingFollowed>().is_some() {
            return self.inner.call(req);
        }
        let framing = Framing::new(self.max_message, req.uri().path());
        self.inner
            .call(req.map(|body| Body::new(Incoming::new(body, Some(framing)))))
    }
}

/// A response body: its trailers' status message bounded, its stream counted open until
/// it is dropped.
struct Outgoing {
    body: Body,
    #[allow(dead_code)] // held for its Drop
    guard: Option<StreamGuard>,
}

impl HttpBody for Outgoing {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        let mut frame = ready!(Pin::new(&mut this.body).poll_frame(cx));
        if let Some(Ok(f)) = &mut frame
            && let Some(trailers) = f.trailers_mut()
        {
            bound_grpc_message(trailers);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// What gRPC's `grpc-message` leaves unescaped is printable ASCII but '%'.
const GRPC_MESSAGE: &AsciiSet = &CONTROLS.add(b'%');

/// Cuts a `grpc-message` longer than `MAX_STATUS_MESSAGE` bytes (decoded).
fn bound_grpc_message(headers: &mut HeaderMap) {
    let Some(value) = headers.get("grpc-message") else {
        return;
    };
    // Escaping only lengthens: a short value is a short message.
    if value.len() <= MAX_STATUS_MESSAGE {
        return;
    }
    let decoded = percent_decode(value.as_bytes()).decode_utf8_lossy();
    let bounded = bounded_message(&decoded);
    if bounded.len() == decoded.len() {
        return;
    }
    let encoded = utf8_percent_encode(&bounded, GRPC_MESSAGE).to_string();
    match HeaderValue::from_str(&encoded) {
        Ok(v) => {
            headers.insert("grpc-message", v);
        }
        Err(_) => {
            headers.remove("grpc-message");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_grpc_messages_are_cut_short_ones_kept() {
        let mut h = HeaderMap::new();
        h.insert(
            "grpc-message",
            HeaderValue::from_static("game%20'x'%20not%20found"),
        );
        bound_grpc_message(&mut h);
        assert_eq!(h["grpc-message"], "game%20'x'%20not%20found");
        let long = format!("bad fen \"{}\"", "é%".repeat(5000));
        let encoded = utf8_percent_encode(&long, GRPC_MESSAGE).to_string();
        h.insert(
            "grpc-message",
            HeaderValue::from_str(&encoded).expect("ascii"),
        );
        bound_grpc_message(&mut h);
        let cut = percent_decode(h["grpc-message"].as_bytes())
            .decode_utf8()
            .expect("utf-8");
        assert!(cut.len() <= MAX_STATUS_MESSAGE, "{}", cut.len());
        assert!(cut.starts_with("bad fen \"é%é%"), "{cut}");
        assert!(cut.ends_with('…'), "{cut}");
    }

    #[test]
    fn the_framing_is_followed_across_chunks() {
        let mut i = Framing::new(10, "/x.Y/Z");
        // A 10-byte message split oddly, then an 11-byte prefix split in two.
        i.scan(&[0, 0, 0]).expect("partial prefix");
        i.scan(&[0, 10, 1, 2, 3]).expect("10 bytes allowed");
        i.scan(&[4, 5, 6, 7, 8, 9, 10]).expect("the rest of it");
        i.scan(&[0, 0, 0]).expect("partial prefix");
        let e = i.scan(&[0, 11]).expect_err("11 bytes refused");
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        let mut i = Framing::new(4 << 20, "/x.Y/Z");
        let e = i.scan(&[0, 0xff, 0xff, 0xff, 0xff]).expect_err("4 GiB");
        assert!(e.message().contains("4294967295 bytes"), "{}", e.message());
    }

    #[test]
    fn an_empty_body_is_refused_only_where_one_message_is_due() {
        let unary = Framing::new(10, "/draughts.arbiter.v1.GameService/GetGame");
        let e = unary.ended().expect_err("GetGame takes one message");
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(
            e.message().contains("GetGame takes exactly one"),
            "{}",
            e.message()
        );
        let watch = Framing::new(10, "/draughts.arbiter.v1.BroadcastService/WatchGame");
        assert!(watch.ended().is_err(), "server streaming takes one message");
        let health = Framing::new(10, "/grpc.health.v1.Health/Check");
        assert!(health.ended().is_err(), "health's Check takes one message");
        let board = Framing::new(10, "/draughts.arbiter.v1.BoardService/Connect");
        assert!(board.ended().is_ok(), "a board may send nothing");
        let reflection = Framing::new(
            10,
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        );
        assert!(reflection.ended().is_ok(), "reflection streams");
        let mut one = Framing::new(10, "/draughts.arbiter.v1.GameService/GetGame");
        one.scan(&[0, 0, 0, 0, 0]).expect("an empty message");
        assert!(one.ended().is_ok(), "one empty message is a message");
    }
}
