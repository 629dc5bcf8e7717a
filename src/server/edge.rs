//! The gRPC server's edge, around every service: what no handler should have to think
//! about.
//!
//! - A request message longer than the limit is refused with RESOURCE_EXHAUSTED as soon
//!   as its 5-byte gRPC prefix arrives: nothing of it is buffered. (tonic's own check
//!   answers OUT_OF_RANGE, and only up to the limit it was given; this one sees every
//!   size, and tonic's stays behind it as a second wall.)
//! - No status message leaves longer than `api::MAX_STATUS_MESSAGE` bytes, in the
//!   headers or the trailers: a handler that quoted its whole input cannot push the
//!   response past a client's metadata limit.
//! - Each RPC counts as an open stream of its connection until its response ends, for
//!   the idle timeout of `server::conn`.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http_body::{Body as HttpBody, Frame, SizeHint};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode, utf8_percent_encode};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::http::{self, HeaderMap, HeaderValue};
use tonic::codegen::{Bytes, Service};
use tonic::transport::server::TlsConnectInfo;

use super::conn::{ConnInfo, StreamGuard};
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
        let conn = req.extensions().get::<ConnInfo>().cloned().or_else(|| {
            req.extensions()
                .get::<TlsConnectInfo<ConnInfo>>()
                .map(|t| t.get_ref().clone())
        });
        let guard = conn.map(|c| {
            // `Request::remote_addr` looks for the TCP addresses.
            req.extensions_mut().insert(c.tcp.clone());
            c.state.open_stream()
        });
        // grpc-web-text bodies are base64: their framing is not the prefix's (tonic's own
        // size check, behind the translation, still applies to them).
        let content_type = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map_or(&b""[..], |v| v.as_bytes());
        let text = content_type.starts_with(b"application/grpc-web-text");
        let framed = content_type.starts_with(b"application/grpc") && !text;
        let max = if text { usize::MAX } else { self.max_message };
        let req = req.map(|body| Body::new(Incoming::new(body, max, framed)));
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

/// A request body whose gRPC messages are checked against the limit as they arrive.
struct Incoming {
    body: Body,
    max: usize,
    /// A gRPC body in binary framing: one that ends inside a message is refused.
    framed: bool,
    prefix: [u8; 5],
    have: usize,
    skip: u64,
    refused: bool,
}

impl Incoming {
    fn new(body: Body, max: usize, framed: bool) -> Incoming {
        Incoming {
            body,
            max,
            framed,
            prefix: [0; 5],
            have: 0,
            skip: 0,
            refused: false,
        }
    }

    /// The body ended: inside a message (a prefix cut short, or fewer bytes than its
    /// prefix said) is the caller's malformed request, INVALID_ARGUMENT, not tonic's
    /// INTERNAL "Unexpected EOF decoding stream.".
    fn ended(&self) -> Result<(), Status> {
        if !self.framed || (self.have == 0 && self.skip == 0) {
            return Ok(());
        }
        Err(Status::invalid_argument(if self.have > 0 {
            format!(
                "the request ended inside a gRPC message prefix ({} of 5 bytes)",
                self.have
            )
        } else {
            format!(
                "the request ended inside a gRPC message: {} bytes of it missing",
                self.skip
            )
        }))
    }

    /// Follows the framing (1 flag byte, 4 bytes of length, the message) through `data`.
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
                let [_, a, b, c, d] = self.prefix;
                let len = u32::from_be_bytes([a, b, c, d]);
                if len as usize > self.max {
                    return Err(Status::resource_exhausted(format!(
                        "a request message of {len} bytes: the server takes at most {} \
                         (max_message_bytes)",
                        self.max
                    )));
                }
                self.skip = u64::from(len);
            }
        }
        Ok(())
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
        if this.refused {
            return Poll::Ready(None);
        }
        let frame = ready!(Pin::new(&mut this.body).poll_frame(cx));
        if frame.is_none()
            && let Err(status) = this.ended()
        {
            this.refused = true;
            return Poll::Ready(Some(Err(status)));
        }
        if let Some(Ok(f)) = &frame
            && let Some(data) = f.data_ref()
            && let Err(status) = this.scan(data)
        {
            this.refused = true;
            return Poll::Ready(Some(Err(status)));
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.refused || (self.body.is_end_stream() && self.ended().is_ok())
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
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
        let mut i = Incoming::new(Body::empty(), 10, true);
        // A 10-byte message split oddly, then an 11-byte prefix split in two.
        i.scan(&[0, 0, 0]).expect("partial prefix");
        i.scan(&[0, 10, 1, 2, 3]).expect("10 bytes allowed");
        i.scan(&[4, 5, 6, 7, 8, 9, 10]).expect("the rest of it");
        i.scan(&[0, 0, 0]).expect("partial prefix");
        let e = i.scan(&[0, 11]).expect_err("11 bytes refused");
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        let mut i = Incoming::new(Body::empty(), 4 << 20, true);
        let e = i.scan(&[0, 0xff, 0xff, 0xff, 0xff]).expect_err("4 GiB");
        assert!(e.message().contains("4294967295 bytes"), "{}", e.message());
    }
}
