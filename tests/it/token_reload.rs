//! Tokens without a restart (issue 42, item 3): the release binary started with a config
//! file reads its `[[tokens]]` again at SIGHUP. A token added works at once, a revoked
//! one is refused and its open streams (a watch, a board stream) end with
//! UNAUTHENTICATED, and a config that does not parse is refused with the old tokens kept.

use std::net::TcpListener as StdListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use tokio::time::timeout;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request};

struct Served {
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(tokens: &[(&str, &str)]) -> String {
    let mut text = String::new();
    for (token, rest) in tokens {
        text.push_str(&format!("[[tokens]]\ntoken = \"{token}\"\n{rest}\n"));
    }
    text
}

fn authed<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

fn hangup(s: &Served) {
    let ok = Command::new("kill")
        .args(["-HUP", &s.child.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok, "kill -HUP");
}

async fn get(channel: &Channel, token: &str) -> Result<pb::Game, tonic::Status> {
    GameServiceClient::new(channel.clone())
        .get_game(authed(
            token,
            pb::GetGameRequest {
                game_id: "r1".into(),
            },
        ))
        .await
        .map(tonic::Response::into_inner)
}

/// Waits until `token` gets `code` (or a game, for `None`): the reload happens when the
/// server's signal task runs, a moment after `kill` returns.
async fn until(channel: &Channel, token: &str, code: Option<Code>, log: &Path) {
    for _ in 0..200 {
        let got = get(channel, token).await;
        if got.as_ref().err().map(tonic::Status::code) == code {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "token {token} never got {code:?}; server log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

#[tokio::test]
async fn sighup_reloads_tokens_and_ends_the_streams_of_revoked_ones() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("arbiter.toml");
    let arbiter = r#"role = "arbiter"
event = "Open"
name = "Chief arbiter I. Petrov""#;
    let board = "role = \"board\"\nevent = \"Open\"\ngame = \"r1\"";
    std::fs::write(
        &path,
        config(&[
            ("chief", arbiter),
            ("old-viewer", "role = \"viewer\""),
            ("brd", board),
        ]),
    )
    .expect("config");
    let port = StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let log = dir.path().join("server.log");
    let child = Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"))
        .args(["serve", "--memory", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--config")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("spawn the server");
    let served = Served { child, log };
    let endpoint = Endpoint::from_shared(format!("http://127.0.0.1:{port}")).expect("url");
    let mut channel = None;
    for _ in 0..300 {
        if let Ok(c) = endpoint.connect().await {
            channel = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let channel = channel.expect("server up");
    GameServiceClient::new(channel.clone())
        .create_game(authed(
            "chief",
            pb::CreateGameRequest {
                game_id: "r1".into(),
                variant: pb::Variant::Russian as i32,
                time_control: "10m".into(),
                event: "Open".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("create");
    // Streams opened with the tokens about to go: a viewer's watch, a board's stream.
    let mut watch = BroadcastServiceClient::new(channel.clone())
        .watch_game(authed(
            "old-viewer",
            pb::WatchGameRequest {
                game_id: "r1".into(),
                from_seq: 0,
            },
        ))
        .await
        .expect("watch")
        .into_inner();
    let first = timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("an event in time")
        .expect("an event")
        .expect("ok");
    assert_eq!(first.seq, 1);
    let (to_board, from_client) = tokio::sync::mpsc::channel::<pb::BoardMessage>(4);
    let mut feedback = BoardServiceClient::new(channel.clone())
        .connect(authed(
            "brd",
            tokio_stream::wrappers::ReceiverStream::new(from_client),
        ))
        .await
        .expect("board stream")
        .into_inner();
    // The chief's own watch stays open: the same token, role and label.
    let mut kept = BroadcastServiceClient::new(channel.clone())
        .watch_game(authed(
            "chief",
            pb::WatchGameRequest {
                game_id: "r1".into(),
                from_seq: 1,
            },
        ))
        .await
        .expect("watch")
        .into_inner();

    // Unknown before the reload.
    assert_eq!(
        get(&channel, "new-viewer")
            .await
            .expect_err("unknown")
            .code(),
        Code::Unauthenticated
    );
    std::fs::write(
        &path,
        config(&[("chief", arbiter), ("new-viewer", "role = \"viewer\"")]),
    )
    .expect("config");
    hangup(&served);
    until(&channel, "new-viewer", None, &served.log).await;
    until(
        &channel,
        "old-viewer",
        Some(Code::Unauthenticated),
        &served.log,
    )
    .await;
    let ended = timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("the revoked watch ends in time")
        .expect("a last message")
        .expect_err("an error");
    assert_eq!(ended.code(), Code::Unauthenticated, "{ended:?}");
    assert!(ended.message().contains("revoked"), "{}", ended.message());
    // Whatever feedback came before (none is asked for), then the end.
    let ended = timeout(Duration::from_secs(5), async {
        loop {
            match feedback.next().await {
                Some(Ok(_)) => continue,
                other => break other,
            }
        }
    })
    .await
    .expect("the revoked board stream ends in time");
    match ended {
        Some(Err(e)) => assert_eq!(e.code(), Code::Unauthenticated, "{e:?}"),
        other => panic!("the board stream should end with UNAUTHENTICATED: {other:?}"),
    }
    drop(to_board);
    // The chief's watch is still open, and its new actions carry its label.
    GameServiceClient::new(channel.clone())
        .start_game(authed(
            "chief",
            pb::StartGameRequest {
                game_id: "r1".into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
    let next = timeout(Duration::from_secs(5), kept.next())
        .await
        .expect("the chief's watch goes on")
        .expect("an event")
        .expect("ok");
    assert_eq!(next.seq, 2);

    // A config that does not parse: refused, logged, the tokens stay as they were.
    std::fs::write(&path, "[[tokens]\ntoken = ").expect("config");
    hangup(&served);
    let mut logged = false;
    for _ in 0..200 {
        let text = std::fs::read_to_string(&served.log).unwrap_or_default();
        if text.contains("tokens not reloaded") {
            logged = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(logged, "the refused reload is logged");
    get(&channel, "new-viewer").await.expect("kept");
    get(&channel, "chief").await.expect("kept");
    // A repeated secret is refused too.
    std::fs::write(
        &path,
        config(&[("chief", arbiter), ("chief", "role = \"viewer\"")]),
    )
    .expect("config");
    hangup(&served);
    tokio::time::sleep(Duration::from_millis(300)).await;
    get(&channel, "new-viewer").await.expect("still kept");
    let text = std::fs::read_to_string(&served.log).unwrap_or_default();
    assert!(
        text.contains("tokens[1]: the same token as tokens[0]"),
        "{text}"
    );
}
