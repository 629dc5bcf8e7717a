//! Faults a judge must survive at the server's edge (issue 37), sent as raw HTTP on each
//! transport: gRPC over HTTP/2, grpc-web (binary and text) over HTTP/2 and over HTTP/1.1.
//!
//! - Request trailers never authenticate: a call whose `authorization` comes only in its
//!   trailers is UNAUTHENTICATED, a viewer's call with an arbiter's trailer is
//!   PERMISSION_DENIED and changes nothing. Before: tonic merged a unary request's
//!   trailers into its metadata (GetGame answered, PauseClocks paused the game).
//! - A body that ends inside a message, and an empty body where one message is due, are
//!   INVALID_ARGUMENT; a length prefix over the limit is RESOURCE_EXHAUSTED; on every
//!   transport. Before: grpc-web got INTERNAL, grpc-web-text OUT_OF_RANGE, an empty
//!   body INTERNAL "Missing request message".

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use http_body_util::{BodyExt, Full};
use prost::Message;
use prost::bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::codegen::http::{self, HeaderMap, HeaderValue};
use tonic::transport::Channel;
use tonic::{Code, Request};
use tower::{Service, ServiceExt};

use crate::common::http::parse;
use crate::common::server::TestServer;

/// An arbiter and a viewer; broadcasts not public, so that a call without a token is
/// UNAUTHENTICATED on every service.
const TOKENS: &str = r#"
[web]
public_broadcast = false
[[tokens]]
token = "arb"
role = "arbiter"
[[tokens]]
token = "view"
role = "viewer"
"#;

const GET_GAME: &str = "/draughts.arbiter.v1.GameService/GetGame";
const WATCH_GAME: &str = "/draughts.arbiter.v1.BroadcastService/WatchGame";
const PAUSE: &str = "/draughts.arbiter.v1.ArbiterService/PauseClocks";
const CONNECT: &str = "/draughts.arbiter.v1.BoardService/Connect";

fn authed<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

/// A started game with a running clock.
async fn running_game(c: &Channel, id: &str) {
    let mut games = GameServiceClient::new(c.clone());
    games
        .create_game(authed(
            "arb",
            pb::CreateGameRequest {
                game_id: id.into(),
                variant: pb::Variant::Russian as i32,
                time_control: "10m+5s".into(),
                event: "Edge".into(),
                round: "1".into(),
                board: 1,
                ..Default::default()
            },
        ))
        .await
        .expect("create");
    games
        .start_game(authed(
            "arb",
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
}

async fn clock_state(c: &Channel, id: &str) -> pb::ClockState {
    GameServiceClient::new(c.clone())
        .get_game(authed("arb", pb::GetGameRequest { game_id: id.into() }))
        .await
        .expect("get")
        .into_inner()
        .clock
        .expect("a clock")
        .state()
}

/// The wire forms of a call's body.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Wire {
    Grpc,
    GrpcWeb,
    GrpcWebText,
}

impl Wire {
    fn content_type(self) -> &'static str {
        match self {
            Wire::Grpc => "application/grpc",
            Wire::GrpcWeb => "application/grpc-web+proto",
            Wire::GrpcWebText => "application/grpc-web-text+proto",
        }
    }

    /// The body as this wire carries it (grpc-web-text: base64).
    fn encode(self, body: &[u8]) -> Vec<u8> {
        match self {
            Wire::GrpcWebText => base64::engine::general_purpose::STANDARD
                .encode(body)
                .into_bytes(),
            _ => body.to_vec(),
        }
    }
}

/// One gRPC message: flag 0, length, bytes.
fn framed(msg: &impl Message) -> Vec<u8> {
    let bytes = msg.encode_to_vec();
    let mut body = vec![0];
    body.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    body.extend_from_slice(&bytes);
    body
}

/// The status of a response: its headers' (trailers-only), else its trailers' (gRPC) or
/// its grpc-web trailer frame's (base64 for grpc-web-text).
fn status_of(
    wire: Wire,
    headers: &HeaderMap,
    body: &[u8],
    trailers: Option<&HeaderMap>,
) -> (Code, String) {
    if let Some(s) = tonic::Status::from_header_map(headers) {
        return (s.code(), s.message().to_string());
    }
    if let Some(t) = trailers
        && let Some(s) = tonic::Status::from_header_map(t)
    {
        return (s.code(), s.message().to_string());
    }
    assert_ne!(wire, Wire::Grpc, "a gRPC response without a status");
    // tonic-web answers in base64 only to a caller that accepts it: the response's
    // content type says which.
    let text = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc-web-text"));
    let body = if text {
        // Each message and the trailer frame are encoded on their own (padded): every
        // 4 characters decode alone.
        let mut out = Vec::new();
        for quad in body.chunks(4) {
            out.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(quad)
                    .expect("base64"),
            );
        }
        out
    } else {
        body.to_vec()
    };
    let mut at = body.as_slice();
    while at.len() >= 5 {
        let len = u32::from_be_bytes([at[1], at[2], at[3], at[4]]) as usize;
        let frame = &at[5..5 + len];
        if at[0] & 0x80 != 0 {
            let mut map = HeaderMap::new();
            for line in String::from_utf8_lossy(frame).split("\r\n") {
                if let Some((n, v)) = line.split_once(':') {
                    map.insert(
                        http::HeaderName::from_bytes(n.trim().as_bytes()).expect("name"),
                        HeaderValue::from_str(v.trim()).expect("value"),
                    );
                }
            }
            let s = tonic::Status::from_header_map(&map).expect("a status in the trailers");
            return (s.code(), s.message().to_string());
        }
        at = &at[5 + len..];
    }
    panic!("no status in the response: {headers:?}");
}

/// A call over HTTP/2 through tonic's channel (hyper's h2 client): the headers, the body
/// in one DATA frame, then `trailers` in a HEADERS frame if any.
async fn h2_call(
    channel: &Channel,
    addr: SocketAddr,
    wire: Wire,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    trailers: &[(&'static str, &str)],
) -> (Code, String) {
    let mut builder = http::Request::builder()
        .method("POST")
        .uri(format!("http://{addr}{path}"))
        .header("content-type", wire.content_type())
        .header("te", "trailers");
    if wire != Wire::Grpc {
        builder = builder.header("x-grpc-web", "1");
    }
    for (n, v) in headers {
        builder = builder.header(*n, *v);
    }
    let data = Full::new(Bytes::from(wire.encode(body)));
    let body = if trailers.is_empty() {
        tonic::body::Body::new(data)
    } else {
        let mut map = HeaderMap::new();
        for (n, v) in trailers {
            map.insert(*n, HeaderValue::from_str(v).expect("value"));
        }
        tonic::body::Body::new(data.with_trailers(async move { Some(Ok(map)) }))
    };
    let req = builder.body(body).expect("request");
    let mut channel = channel.clone();
    let response = tokio::time::timeout(Duration::from_secs(10), async {
        channel.ready().await.expect("ready").call(req).await
    })
    .await
    .expect("an answer within 10 s")
    .expect("an HTTP answer");
    let (parts, mut body) = response.into_parts();
    if let Some(s) = tonic::Status::from_header_map(&parts.headers) {
        return (s.code(), s.message().to_string());
    }
    let mut bytes = Vec::new();
    let mut trailers = None;
    loop {
        match tokio::time::timeout(OPEN, body.frame()).await {
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => bytes.extend_from_slice(&data),
                Err(frame) => trailers = frame.into_trailers().ok(),
            },
            Ok(Some(Err(e))) => panic!("the response body failed: {e:?}"),
            Ok(None) => break,
            // Messages came and the stream stays open: the call was taken.
            Err(_) if !bytes.is_empty() => return (Code::Ok, "a stream, open".into()),
            Err(_) => panic!("no answer in {OPEN:?}"),
        }
    }
    status_of(wire, &parts.headers, &bytes, trailers.as_ref())
}

/// How long a response may stay silent: a stream silent this long after its first
/// messages is open (the call was taken).
const OPEN: Duration = Duration::from_secs(2);

/// A grpc-web call over HTTP/1.1 on a raw TCP connection: a chunked body (one chunk, if
/// not empty), then `trailers` in the chunked trailer section.
async fn h1_call(
    addr: SocketAddr,
    wire: Wire,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    trailers: &[(&'static str, &str)],
) -> (Code, String) {
    assert_ne!(wire, Wire::Grpc, "gRPC needs HTTP/2");
    let body = wire.encode(body);
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: {}\r\nx-grpc-web: 1\r\ntransfer-encoding: chunked\r\n",
        wire.content_type()
    );
    for (n, v) in headers {
        raw.push_str(&format!("{n}: {v}\r\n"));
    }
    if !trailers.is_empty() {
        let names: Vec<&str> = trailers.iter().map(|(n, _)| *n).collect();
        raw.push_str(&format!("trailer: {}\r\n", names.join(", ")));
    }
    raw.push_str("\r\n");
    let mut raw = raw.into_bytes();
    if !body.is_empty() {
        raw.extend_from_slice(format!("{:x}\r\n", body.len()).as_bytes());
        raw.extend_from_slice(&body);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n");
    for (n, v) in trailers {
        raw.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    let mut conn = tokio::net::TcpStream::connect(addr).await.expect("connect");
    conn.write_all(&raw).await.expect("write");
    let mut answer = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match tokio::time::timeout(OPEN, conn.read(&mut buf)).await {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("read: {e}"),
            Err(_) => {
                // Messages came and the stream stays open: the call was taken.
                let reply = parse(&answer).expect("an HTTP answer");
                if reply.header("grpc-status").is_none() && !reply.body.is_empty() {
                    return (Code::Ok, "a stream, open".into());
                }
                panic!("no whole answer in {OPEN:?}: {reply:?}");
            }
        }
    }
    let reply = parse(&answer).expect("an HTTP answer");
    assert_eq!(reply.status, 200, "{reply:?}");
    let mut headers = HeaderMap::new();
    for (n, v) in &reply.headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            headers.append(n, v);
        }
    }
    status_of(wire, &headers, &reply.body, None)
}

/// The transports: HTTP version and wire.
const TRANSPORTS: [(bool, Wire); 5] = [
    (true, Wire::Grpc),
    (true, Wire::GrpcWeb),
    (true, Wire::GrpcWebText),
    (false, Wire::GrpcWeb),
    (false, Wire::GrpcWebText),
];

async fn call(
    s: &TestServer,
    (h2, wire): (bool, Wire),
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    trailers: &[(&'static str, &str)],
) -> (Code, String) {
    if h2 {
        h2_call(&s.channel, s.addr, wire, path, headers, body, trailers).await
    } else {
        h1_call(s.addr, wire, path, headers, body, trailers).await
    }
}

/// Request trailers never authenticate, on any transport: no `authorization` header and
/// an arbiter's token in the trailers is UNAUTHENTICATED (unary and server streaming); a
/// viewer's header and an arbiter's trailer on PauseClocks is PERMISSION_DENIED and the
/// clock keeps running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_trailers_never_authenticate() {
    let s = TestServer::start_memory(TOKENS).await;
    running_game(&s.channel, "t1").await;
    let arbiter = [("authorization", "Bearer arb")];
    let get = framed(&pb::GetGameRequest {
        game_id: "t1".into(),
    });
    let watch = framed(&pb::WatchGameRequest {
        game_id: "t1".into(),
        from_seq: 0,
    });
    let pause = framed(&pb::PauseClocksRequest {
        game_id: "t1".into(),
        reason: "a trailer's order".into(),
        rule: String::new(),
    });
    // Every transport and case is tried; the failures are listed together.
    let mut wrong = Vec::new();
    for transport in TRANSPORTS {
        let mut expect = |case: &str, (code, message): (Code, String), want: Code| {
            if code != want {
                wrong.push(format!(
                    "{transport:?} {case}: {code:?} {message:?}, want {want:?}"
                ));
            }
        };
        let got = call(&s, transport, GET_GAME, &[], &get, &arbiter).await;
        expect("GetGame, token in a trailer", got, Code::Unauthenticated);
        let got = call(&s, transport, WATCH_GAME, &[], &watch, &arbiter).await;
        expect("WatchGame, token in a trailer", got, Code::Unauthenticated);
        let viewer = [("authorization", "Bearer view")];
        let got = call(&s, transport, PAUSE, &viewer, &pause, &arbiter).await;
        expect(
            "PauseClocks, viewer + arbiter trailer",
            got,
            Code::PermissionDenied,
        );
        // The same call with the token in the headers is answered (the trailers are
        // dropped, the call is not refused for having them).
        let got = call(&s, transport, GET_GAME, &arbiter, &get, &arbiter).await;
        expect("GetGame, token in the headers and a trailer", got, Code::Ok);
        let state = clock_state(&s.channel, "t1").await;
        if state != pb::ClockState::Running {
            wrong.push(format!(
                "{transport:?}: the clock is {state:?}: a viewer with an arbiter's trailer paused it"
            ));
            // Running again for the next transport.
            ArbiterServiceClient::new(s.channel.clone())
                .resume_clocks(authed(
                    "arb",
                    pb::ResumeClocksRequest {
                        game_id: "t1".into(),
                        ..Default::default()
                    },
                ))
                .await
                .expect("resume");
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    s.stop().await;
}

/// Exact codes at the edge, on every transport: a body cut inside a message or inside a
/// prefix and an empty body where one message is due are INVALID_ARGUMENT; a prefix over
/// the limit (by one byte, or 4 GiB) is RESOURCE_EXHAUSTED. An empty body on the board
/// stream (client streaming) is not refused by the edge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_get_their_codes_on_every_transport() {
    let s = TestServer::start_memory(TOKENS).await;
    let arbiter = [("authorization", "Bearer arb")];
    let over = {
        let mut p = vec![0u8];
        p.extend_from_slice(&((4u32 << 20) + 1).to_be_bytes());
        p
    };
    let cases: [(&str, &str, Vec<u8>, Code, &str); 6] = [
        (
            "cut inside a message",
            GET_GAME,
            vec![0, 0, 0, 0, 16, 1, 2, 3],
            Code::InvalidArgument,
            "13 bytes of it missing",
        ),
        (
            "cut inside a prefix",
            GET_GAME,
            vec![0, 0, 0],
            Code::InvalidArgument,
            "prefix (3 of 5 bytes)",
        ),
        (
            "an empty unary body",
            GET_GAME,
            vec![],
            Code::InvalidArgument,
            "the request has no message: GetGame takes exactly one",
        ),
        (
            "an empty server-streaming body",
            WATCH_GAME,
            vec![],
            Code::InvalidArgument,
            "the request has no message: WatchGame takes exactly one",
        ),
        (
            "a 4 GiB prefix",
            GET_GAME,
            vec![0, 0xff, 0xff, 0xff, 0xff],
            Code::ResourceExhausted,
            "a request message of 4294967295 bytes",
        ),
        (
            "a prefix one byte over the limit",
            GET_GAME,
            over,
            Code::ResourceExhausted,
            "max_message_bytes",
        ),
    ];
    // Every transport and case is tried; the failures are listed together.
    let mut wrong = Vec::new();
    for transport in TRANSPORTS {
        for (case, path, body, want, says) in &cases {
            let (code, message) = call(&s, transport, path, &arbiter, body, &[]).await;
            if code != *want || !message.contains(says) {
                wrong.push(format!(
                    "{transport:?} {case}: {code:?} {message:?}, want {want:?} saying {says:?}"
                ));
            }
        }
        let (code, message) = call(&s, transport, CONNECT, &arbiter, &[], &[]).await;
        if message.contains("the request") || code == Code::Internal {
            wrong.push(format!(
                "{transport:?} an empty board stream: {code:?} {message:?}, want no refusal of the edge's"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    s.stop().await;
}
