//! The API port's HTTP side, called as relay tools and browsers call it, over raw TCP:
//! `GET /pdn/<event>[/<round>]` snapshots that read back to the moves, refusals with
//! the right HTTP status and a message, tokens as on gRPC, the public delay on the
//! snapshots and on `GET /pdn/<event>/<round>/stream`, which sends every game and then
//! each changed game again and ends with the round; grpc-web unary and streaming calls
//! over HTTP/1.1; CORS only for the origins configured.

use crate::common::http::{self, Reply};
use crate::common::server::TestServer;

use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::notation::pdn::{PdnResult, read_games};
use prost::Message;
use tokio::io::AsyncReadExt;
use tonic::Request;
use tonic::transport::Channel;

const TOKENS: &str = r#"
[[tokens]]
token = "arb"
role = "arbiter"
[[tokens]]
token = "view"
role = "viewer"
"#;

fn authed<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

fn games(c: &Channel) -> GameServiceClient<Channel> {
    GameServiceClient::new(c.clone())
}

async fn new_game(c: &Channel, token: &str, id: &str, round: &str, board: u32, delay_ms: u64) {
    games(c)
        .create_game(authed(
            token,
            pb::CreateGameRequest {
                game_id: id.into(),
                variant: pb::Variant::Russian as i32,
                time_control: "10m+5s".into(),
                white: Some(pb::Player {
                    name: format!("White {board}"),
                    ..Default::default()
                }),
                black: Some(pb::Player {
                    name: format!("Black {board}"),
                    ..Default::default()
                }),
                event: "Open 2026".into(),
                round: round.into(),
                board,
                settings: Some(pb::GameSettings {
                    broadcast_delay_ms: (delay_ms > 0).then_some(delay_ms),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ))
        .await
        .expect("create");
    games(c)
        .start_game(authed(
            token,
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
}

async fn play(c: &Channel, token: &str, id: &str, mv: &str) {
    games(c)
        .submit_move(authed(
            token,
            pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: mv.into(),
                ..Default::default()
            },
        ))
        .await
        .expect("move");
}

/// The moves of every record of a PDN text, per game (by its Board tag).
fn moves_by_board(pdn: &str) -> Vec<(String, Vec<String>)> {
    read_games(pdn)
        .into_iter()
        .map(|g| {
            let g = g.unwrap_or_else(|e| panic!("unreadable: {e}\n{pdn}"));
            (
                g.tag("Board").unwrap_or("?").to_string(),
                g.moves.iter().map(|m| m.text.clone()).collect(),
            )
        })
        .collect()
}

/// Snapshots of an event and of a round read back to the moves played; refusals carry
/// the HTTP status of their gRPC code and the message as text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_read_back_and_refusals_say_why() {
    let s = TestServer::start(TOKENS).await;
    new_game(&s.channel, "arb", "b1", "1", 1, 0).await;
    new_game(&s.channel, "arb", "b2", "1", 2, 0).await;
    new_game(&s.channel, "arb", "c1", "2", 1, 0).await;
    for mv in ["c3-d4", "f6-g5"] {
        play(&s.channel, "arb", "b1", mv).await;
    }
    play(&s.channel, "arb", "b2", "a3-b4").await;
    let round = http::get(s.addr, "/pdn/Open%202026/1", &[]).await;
    assert_eq!(round.status, 200, "{round:?}");
    assert_eq!(
        round.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        moves_by_board(&round.text()),
        vec![
            ("1".into(), vec!["c3-d4".into(), "f6-g5".into()]),
            ("2".into(), vec!["a3-b4".into()]),
        ]
    );
    let event = http::get(s.addr, "/pdn/Open%202026", &[]).await;
    assert_eq!(event.status, 200);
    assert_eq!(moves_by_board(&event.text()).len(), 3, "both rounds");
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], u16, &'a str);
    let cases: [Case; 4] = [
        (
            "/pdn/Nowhere",
            &[],
            404,
            "NOT_FOUND: no games of event \"Nowhere\"",
        ),
        (
            "/pdn/Open%202026/9",
            &[],
            404,
            "NOT_FOUND: no games of event",
        ),
        ("/pdn/Open%01", &[], 400, "INVALID_ARGUMENT: event: "),
        (
            "/pdn/Open%202026",
            &[("authorization", "Bearer nobody")],
            401,
            "UNAUTHENTICATED: ",
        ),
    ];
    for (path, headers, code, starts) in cases {
        let r = http::get(s.addr, path, headers).await;
        assert_eq!(r.status, code, "{path}: {r:?}");
        assert!(r.text().starts_with(starts), "{path}: {:?}", r.text());
    }
    let r = http::get(
        s.addr,
        "/pdn/Open%202026",
        &[("authorization", "Bearer nobody")],
    )
    .await;
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    s.stop().await;
}

/// A plain HTTP request for a path that is no page gets 404 with the refusal as text,
/// as the pages' own refusals do, not gRPC's "200 OK, grpc-status 12" with an empty
/// body; a gRPC call (content-type application/grpc…) to a method that does not exist
/// still gets gRPC's UNIMPLEMENTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_path_is_404_over_http_and_unimplemented_over_grpc() {
    let s = TestServer::start("").await;
    for path in [
        "/pdn/",
        "/pdn",
        "/live/",
        "/live/Open/1/extra",
        "/pdn/a/b/c/d",
        "/pdn/Open/1/stream2",
        "/favicon.ico",
        "/nothing/here",
    ] {
        let r = http::get(s.addr, path, &[]).await;
        assert_eq!(r.status, 404, "{path}: {r:?}");
        assert_eq!(
            r.header("content-type"),
            Some("text/plain; charset=utf-8"),
            "{path}: {r:?}"
        );
        assert_eq!(r.header("grpc-status"), None, "{path}: {r:?}");
        assert!(
            r.text().starts_with("NOT_FOUND: path: ") && r.text().contains(path),
            "{path}: {:?}",
            r.text()
        );
    }
    // gRPC (HTTP/2) to a method of a service that exists and to a service that does not.
    for path in [
        "/draughts.arbiter.v1.GameService/Nope",
        "/nothing.Here/Method",
    ] {
        let mut grpc = tonic::client::Grpc::new(s.channel.clone());
        grpc.ready().await.expect("ready");
        let e = grpc
            .unary(
                Request::new(pb::GetGameRequest::default()),
                tonic::codegen::http::uri::PathAndQuery::from_static(path),
                tonic_prost::ProstCodec::<pb::GetGameRequest, pb::Game>::default(),
            )
            .await
            .expect_err("no such method");
        assert_eq!(e.code(), tonic::Code::Unimplemented, "{path}: {e:?}");
    }
    // grpc-web over HTTP/1.1, as a browser sends it.
    for path in [
        "/draughts.arbiter.v1.GameService/Nope",
        "/nothing.Here/Method",
    ] {
        let r = http::request(
            s.addr,
            "POST",
            path,
            &[
                ("content-type", "application/grpc-web+proto"),
                ("x-grpc-web", "1"),
            ],
            &grpc_web_body(&pb::GetGameRequest::default()),
        )
        .await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
        assert_eq!(r.header("grpc-status"), Some("12"), "{path}: {r:?}");
    }
    s.stop().await;
}

/// A round's stream: every game at once, a game again when it changes (within a
/// second), a game created in the round meanwhile, and the end when the last game
/// finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_stream_sends_each_change_and_ends_with_the_round() {
    let s = TestServer::start(TOKENS).await;
    new_game(&s.channel, "arb", "b1", "1", 1, 0).await;
    let mut conn = http::open(s.addr, "GET", "/pdn/Open%202026/1/stream", &[], b"").await;
    let mut raw = Vec::new();
    let mut read_until = async |raw: &mut Vec<u8>, what: &dyn Fn(&str) -> bool| {
        let start = Instant::now();
        loop {
            if let Some(reply) = http::parse(raw)
                && what(&String::from_utf8_lossy(&reply.body))
            {
                return start.elapsed();
            }
            let mut buf = [0u8; 8192];
            let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
                .await
                .expect("data within 5 s")
                .expect("read");
            assert!(
                n > 0,
                "the stream ended early: {}",
                String::from_utf8_lossy(raw)
            );
            raw.extend_from_slice(&buf[..n]);
        }
    };
    read_until(&mut raw, &|t| t.contains("[Board \"1\"]")).await;
    let head = http::parse(&raw).expect("head");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("transfer-encoding"), Some("chunked"));
    play(&s.channel, "arb", "b1", "c3-d4").await;
    let took = read_until(&mut raw, &|t| t.contains("1. c3-d4")).await;
    assert!(
        took < Duration::from_secs(1),
        "a move reaches the stream in {took:?}"
    );
    new_game(&s.channel, "arb", "b2", "1", 2, 0).await;
    new_game(&s.channel, "arb", "x1", "2", 1, 0).await;
    read_until(&mut raw, &|t| t.contains("[Board \"2\"]")).await;
    for (id, side) in [("b1", pb::Side::Black), ("b2", pb::Side::White)] {
        games(&s.channel)
            .resign(authed(
                "arb",
                pb::ResignRequest {
                    game_id: id.into(),
                    side: side as i32,
                    expected_seq: 0,
                },
            ))
            .await
            .expect("resign");
    }
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut rest))
        .await
        .expect("the stream ends with the round")
        .expect("read");
    raw.extend_from_slice(&rest);
    assert!(http::ended(&raw), "a complete chunked body");
    let text = http::parse(&raw).expect("reply").text();
    assert!(!text.contains("White 1\"]\n[Black \"Black 1\"]\n[Result \"*\"]\n[Board \"2\"]"));
    assert!(!text.contains("[Round \"2\"]"), "a game of another round");
    // Every record on the stream reads; the last of each game has its result.
    let records = read_games(&text);
    assert!(records.iter().all(Result::is_ok));
    let last_of = |board: &str| {
        records
            .iter()
            .flatten()
            .rev()
            .find(|g| g.tag("Board") == Some(board))
            .and_then(|g| g.result_tag())
    };
    assert_eq!(last_of("1"), Some(PdnResult::WhiteWins), "black resigned");
    assert_eq!(last_of("2"), Some(PdnResult::BlackWins), "white resigned");
    s.stop().await;
}

/// At shutdown the round's stream is cut off without the chunked body's last chunk, so a
/// relay tells it from the end of the round (which ends the body cleanly, above). Before,
/// both ended the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_stream_is_cut_off_at_shutdown_not_ended() {
    let s = TestServer::start(TOKENS).await;
    new_game(&s.channel, "arb", "b1", "1", 1, 0).await;
    let mut conn = http::open(s.addr, "GET", "/pdn/Open%202026/1/stream", &[], b"").await;
    let mut raw = Vec::new();
    while !String::from_utf8_lossy(&raw).contains("[Board \"1\"]") {
        let mut buf = [0u8; 8192];
        let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
            .await
            .expect("data within 5 s")
            .expect("read");
        assert!(n > 0, "ended early");
        raw.extend_from_slice(&buf[..n]);
    }
    let stopping = tokio::spawn(s.stop());
    let mut rest = Vec::new();
    // A cut-off connection may end in a reset: what came before it is what counts.
    let _ = tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut rest))
        .await
        .expect("the connection closes at shutdown");
    raw.extend_from_slice(&rest);
    assert!(
        !http::ended(&raw),
        "not a complete chunked body: {}",
        String::from_utf8_lossy(&raw)
    );
    stopping.await.expect("stopped");
}

/// The public sees a delayed game as it was `broadcast_delay_ms` ago on the snapshots
/// and on the stream; an arbiter's token sees it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_delay_holds_for_the_public_on_http() {
    const DELAY: u64 = 1_500;
    let s = TestServer::start(TOKENS).await;
    new_game(&s.channel, "arb", "d1", "1", 1, DELAY).await;
    let mut public_stream = http::open(s.addr, "GET", "/pdn/Open%202026/1/stream", &[], b"").await;
    let made = Instant::now();
    play(&s.channel, "arb", "d1", "c3-d4").await;
    let arbiter = http::get(
        s.addr,
        "/pdn/Open%202026/1",
        &[("authorization", "Bearer arb")],
    )
    .await;
    assert!(arbiter.text().contains("1. c3-d4"), "the arbiter at once");
    for headers in [&[][..], &[("authorization", "Bearer view")][..]] {
        let public = http::get(s.addr, "/pdn/Open%202026/1", headers).await;
        assert_eq!(public.status, 200);
        assert!(
            !public.text().contains("c3-d4"),
            "not yet public: {}",
            public.text()
        );
    }
    let mut raw = Vec::new();
    loop {
        let mut buf = [0u8; 8192];
        let n = tokio::time::timeout(Duration::from_secs(5), public_stream.read(&mut buf))
            .await
            .expect("the move within 5 s")
            .expect("read");
        assert!(n > 0);
        raw.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&raw).contains("c3-d4") {
            break;
        }
    }
    let seen = made.elapsed();
    assert!(
        seen >= Duration::from_millis(DELAY - 50),
        "the stream showed the move after {seen:?}, before the delay"
    );
    let public = http::get(s.addr, "/pdn/Open%202026/1", &[]).await;
    assert!(
        public.text().contains("1. c3-d4"),
        "public once the delay is over"
    );
    s.stop().await;
}

/// grpc-web frames: a message (flag 0) or the trailers (flag 0x80).
fn frames(body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = body;
    while at.len() >= 5 {
        let len = u32::from_be_bytes([at[1], at[2], at[3], at[4]]) as usize;
        out.push((at[0], at[5..5 + len].to_vec()));
        at = &at[5 + len..];
    }
    out
}

fn grpc_web_body(msg: &impl Message) -> Vec<u8> {
    let bytes = msg.encode_to_vec();
    let mut body = vec![0];
    body.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    body.extend_from_slice(&bytes);
    body
}

/// A browser's grpc-web calls over HTTP/1.1: unary (GetGame) and server streaming
/// (WatchEvent), each answered with its messages and a trailer frame; a refusal's status
/// is in the headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_works_over_http1() {
    let s = TestServer::start(TOKENS).await;
    new_game(&s.channel, "arb", "w1", "1", 1, 0).await;
    let headers = [
        ("content-type", "application/grpc-web+proto"),
        ("x-grpc-web", "1"),
        ("authorization", "Bearer view"),
    ];
    let r = http::request(
        s.addr,
        "POST",
        "/draughts.arbiter.v1.GameService/GetGame",
        &headers,
        &grpc_web_body(&pb::GetGameRequest {
            game_id: "w1".into(),
        }),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let f = frames(&r.body);
    assert_eq!(f.len(), 2, "one message, then the trailers");
    let game = pb::Game::decode(f[0].1.as_slice()).expect("a Game");
    assert_eq!(game.id, "w1");
    assert_eq!(f[1].0, 0x80);
    assert!(String::from_utf8_lossy(&f[1].1).contains("grpc-status:0"));
    // Server streaming: a finished game's whole history, then the end.
    games(&s.channel)
        .resign(authed(
            "arb",
            pb::ResignRequest {
                game_id: "w1".into(),
                side: pb::Side::White as i32,
                expected_seq: 0,
            },
        ))
        .await
        .expect("resign");
    let r = http::request(
        s.addr,
        "POST",
        "/draughts.arbiter.v1.BroadcastService/WatchEvent",
        &headers,
        &grpc_web_body(&pb::WatchEventRequest {
            event: "Open 2026".into(),
            round: "1".into(),
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(r.status, 200);
    let f = frames(&r.body);
    let events: Vec<pb::GameEvent> = f
        .iter()
        .filter(|(flag, _)| *flag == 0)
        .map(|(_, m)| pb::GameEvent::decode(m.as_slice()).expect("an event"))
        .collect();
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=events.len() as u64).collect::<Vec<_>>()
    );
    assert!(events.iter().all(|e| !e.cursor.is_empty()));
    assert!(String::from_utf8_lossy(&f.last().expect("trailers").1).contains("grpc-status:0"));
    // A refusal: trailers only, its status in the headers.
    let r = http::request(
        s.addr,
        "POST",
        "/draughts.arbiter.v1.GameService/GetGame",
        &headers,
        &grpc_web_body(&pb::GetGameRequest {
            game_id: "nope".into(),
        }),
    )
    .await;
    assert_eq!(r.header("grpc-status"), Some("5"), "NOT_FOUND: {r:?}");
    s.stop().await;
}

/// CORS: none by default (the service's own pages are same-origin); the origins of
/// `[web] cors_origins` get their preflight answered and grpc-web's status headers
/// exposed; another origin gets nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_is_for_the_configured_origins_only() {
    let preflight = [
        ("origin", "https://live.example.org"),
        ("access-control-request-method", "POST"),
        ("access-control-request-headers", "content-type,x-grpc-web"),
    ];
    let path = "/draughts.arbiter.v1.BroadcastService/WatchEvent";
    let s = TestServer::start("").await;
    let r = http::request(s.addr, "OPTIONS", path, &preflight, b"").await;
    assert_eq!(r.header("access-control-allow-origin"), None, "{r:?}");
    s.stop().await;

    let s = TestServer::start("[web]\ncors_origins = [\"https://live.example.org\"]").await;
    let r = http::request(s.addr, "OPTIONS", path, &preflight, b"").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://live.example.org")
    );
    let allowed = r.header("access-control-allow-headers").unwrap_or("");
    assert!(
        allowed.contains("x-grpc-web") && allowed.contains("content-type"),
        "{allowed}"
    );
    let other = [
        ("origin", "https://evil.example.com"),
        preflight[1],
        preflight[2],
    ];
    let r = http::request(s.addr, "OPTIONS", path, &other, b"").await;
    assert_eq!(r.header("access-control-allow-origin"), None);
    // An actual call from the allowed origin exposes the status headers to its script.
    let r = http::get(
        s.addr,
        "/pdn/Nowhere",
        &[("origin", "https://live.example.org")],
    )
    .await;
    assert_eq!(r.status, 404);
    let exposed: Reply = r;
    assert!(
        exposed
            .header("access-control-expose-headers")
            .is_some_and(|h| h.contains("grpc-status")),
        "{exposed:?}"
    );
    s.stop().await;
}
