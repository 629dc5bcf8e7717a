//! Hostile and broken input (issue 13, items 5 and 6): a game whose stored log does not
//! replay is quarantined, not fatal. The real server binary on its own data directory;
//! rows are corrupted with SQLite while it is stopped.
//!
//! - one undecodable row in a running game and a seq gap in a finished one: the server
//!   starts, every other game serves, ListGames answers a viewer without them and shows
//!   them to an arbiter with their bad seqs, GetGame and commands on them answer
//!   DATA_LOSS naming the seq, the quarantine gauge counts them; `check` exits 0 on the
//!   good log and 1 on the broken one, naming both games with their seqs;
//! - `export` then `import` into a fresh data directory gives the same `GetGame`; import
//!   refuses a game that exists or does not replay, and then writes nothing;
//! - a running clock's flag still falls after a restart with nobody asking for the game
//!   (the unfinished games are loaded in the background after SERVING).

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

pub(super) const CONFIG: &str = r#"
[[tokens]]
token = "arb"
role = "arbiter"
[[tokens]]
token = "view"
role = "viewer"
"#;

pub(super) const BIN: &str = env!("CARGO_BIN_EXE_draughts-arbiter");

/// The server binary on a data directory; SIGKILLed if dropped while running.
pub(super) struct Server {
    pub(super) child: Child,
    channel: Channel,
    metrics_port: u16,
    pub(super) log: PathBuf,
}

pub(super) fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

impl Server {
    pub(super) async fn start(data: &Path) -> Server {
        Server::start_with(data, &[]).await
    }

    /// [`Server::start`] with more arguments to `serve`.
    pub(super) async fn start_with(data: &Path, extra: &[&str]) -> Server {
        let config = data.with_extension("toml");
        std::fs::write(&config, CONFIG).expect("config");
        let log = data.with_extension("log");
        let port = free_port();
        let metrics_port = free_port();
        let mut cmd = Command::new(BIN);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ARBITER_") {
                cmd.env_remove(&key);
            }
        }
        let child = cmd
            .arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--metrics-listen")
            .arg(format!("127.0.0.1:{metrics_port}"))
            .arg("--data-dir")
            .arg(data)
            .arg("--config")
            .arg(&config)
            .args(extra)
            .env("ARBITER_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(&log).expect("log file")))
            .spawn()
            .expect("start the server binary");
        let mut server = Server {
            child,
            channel: Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
            metrics_port,
            log,
        };
        let endpoint = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .expect("url")
            .connect_timeout(Duration::from_millis(500));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = server.child.try_wait().expect("try_wait") {
                panic!(
                    "the server exited ({status}) instead of serving:\n{}",
                    std::fs::read_to_string(&server.log).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "not SERVING within 60 s");
            if let Ok(channel) = endpoint.connect().await {
                let answer = HealthClient::new(channel.clone())
                    .check(tonic_health::pb::HealthCheckRequest::default())
                    .await;
                if answer.is_ok_and(|a| a.into_inner().status == ServingStatus::Serving as i32) {
                    server.channel = channel;
                    return server;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(super) fn channel(&self) -> Channel {
        self.channel.clone()
    }

    pub(super) fn games(&self) -> GameServiceClient<Channel> {
        GameServiceClient::new(self.channel.clone())
    }

    /// SIGTERM and wait for the exit (without blocking the runtime: the client's
    /// connection must see the server's goodbye).
    pub(super) async fn stop(mut self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("kill(1)");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(status.success(), "server exit: {status}");
    }

    pub(super) async fn metric(&self, name: &str) -> f64 {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", self.metrics_port))
            .await
            .expect("metrics port");
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .expect("request");
        let mut body = String::new();
        s.read_to_string(&mut body).await.expect("response");
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {name} in\n{body}"))
            .trim()
            .parse()
            .expect("a number")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn authed<T>(token: &str, msg: T) -> tonic::Request<T> {
    let mut req = tonic::Request::new(msg);
    req.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    req
}

/// Creates a game as the arbiter, starts it and plays `moves` (each side in turn).
pub(super) async fn game(
    s: &Server,
    id: &str,
    board: u32,
    time_control: &str,
    moves: &[&str],
) -> pb::Game {
    let mut games = s.games();
    games
        .create_game(authed(
            "arb",
            pb::CreateGameRequest {
                variant: pb::Variant::Russian as i32,
                time_control: time_control.into(),
                white: Some(pb::Player {
                    name: format!("White {id}"),
                    ..Default::default()
                }),
                black: Some(pb::Player {
                    name: format!("Black {id}"),
                    ..Default::default()
                }),
                event: "Open".into(),
                round: "1".into(),
                board,
                game_id: id.into(),
                ..Default::default()
            },
        ))
        .await
        .expect("created");
    let mut g = games
        .start_game(authed(
            "arb",
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("started")
        .into_inner()
        .game
        .expect("game");
    for m in moves {
        g = games
            .submit_move(authed(
                "arb",
                pb::SubmitMoveRequest {
                    game_id: id.into(),
                    r#move: (*m).into(),
                    ..Default::default()
                },
            ))
            .await
            .unwrap_or_else(|e| panic!("{id} {m}: {e}"))
            .into_inner()
            .game
            .expect("game");
    }
    g
}

pub(super) async fn resign(s: &Server, id: &str) {
    s.games()
        .resign(authed(
            "arb",
            pb::ResignRequest {
                game_id: id.into(),
                side: pb::Side::White as i32,
                expected_seq: 0,
            },
        ))
        .await
        .expect("resigned");
}

pub(super) async fn get(s: &Server, token: &str, id: &str) -> Result<pb::Game, tonic::Status> {
    s.games()
        .get_game(authed(token, pb::GetGameRequest { game_id: id.into() }))
        .await
        .map(tonic::Response::into_inner)
}

pub(super) async fn list(s: &Server, token: &str, include_moves: bool) -> Vec<pb::Game> {
    s.games()
        .list_games(authed(
            token,
            pb::ListGamesRequest {
                include_moves,
                ..Default::default()
            },
        ))
        .await
        .unwrap_or_else(|e| panic!("ListGames as {token}: {e}"))
        .into_inner()
        .games
}

fn sql(data: &Path, statement: &str) {
    let conn = rusqlite::Connection::open(data.join("arbiter.sqlite")).expect("open the log");
    let changed = conn.execute(statement, []).expect(statement);
    assert_eq!(changed, 1, "{statement}");
}

pub(super) fn cli(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("ARBITER_DATA_DIR")
        .output()
        .expect("run the binary")
}

pub(super) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub(super) const MOVES: [&str; 4] = ["c3-d4", "f6-g5", "g3-f4", "g7-f6"];

/// The old server refused to start ("recovery: stored game does not replay") and its
/// ListGames answered DATA_LOSS to everyone.
#[tokio::test]
async fn a_corrupt_row_quarantines_its_game_and_every_other_game_serves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let s = Server::start(&data).await;
    game(&s, "good-running", 1, "90m+30s", &MOVES).await;
    game(&s, "good-finished", 2, "", &MOVES[..2]).await;
    resign(&s, "good-finished").await;
    game(&s, "bad-running", 3, "90m+30s", &MOVES).await;
    game(&s, "bad-finished", 4, "", &MOVES).await;
    resign(&s, "bad-finished").await;
    s.stop().await;

    let good = cli(&["check", "--data-dir", data.to_str().expect("utf-8")]);
    assert!(
        good.status.success(),
        "check on a good log: {}\n{}",
        text(&good.stdout),
        text(&good.stderr)
    );
    assert!(
        text(&good.stdout).contains("4 games"),
        "{}",
        text(&good.stdout)
    );

    // An undecodable row in a running game, a missing row in a finished one.
    sql(
        &data,
        "UPDATE events SET payload = CAST('{\"seq\": 3, broken' AS BLOB) \
         WHERE game_id = 'bad-running' AND seq = 3",
    );
    sql(
        &data,
        "DELETE FROM events WHERE game_id = 'bad-finished' AND seq = 2",
    );

    let bad = cli(&["check", "--data-dir", data.to_str().expect("utf-8")]);
    let out = text(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "check on a broken log: {out}");
    assert!(
        out.contains("game bad-running: seq 3: undecodable event"),
        "{out}"
    );
    assert!(out.contains("game bad-finished: seq 2: seq gap"), "{out}");
    assert!(!out.contains("game good-"), "{out}");

    let s = Server::start(&data).await;
    // Every other game serves, and takes commands.
    let g = get(&s, "view", "good-running").await.expect("good-running");
    assert_eq!(g.status, pb::GameStatus::Running as i32);
    assert_eq!(g.move_count, 4);
    let g = get(&s, "view", "good-finished")
        .await
        .expect("good-finished");
    assert_eq!(g.status, pb::GameStatus::Finished as i32);
    s.games()
        .submit_move(authed(
            "arb",
            pb::SubmitMoveRequest {
                game_id: "good-running".into(),
                r#move: "b2-c3".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("a move on a good game");

    // The quarantined games answer DATA_LOSS naming the seq, to everyone, commands too.
    for (id, seq) in [("bad-running", 3), ("bad-finished", 2)] {
        for token in ["view", "arb"] {
            let e = get(&s, token, id).await.expect_err("quarantined");
            assert_eq!(e.code(), Code::DataLoss, "{id} as {token}: {e}");
            assert!(
                e.message().contains(&format!("seq {seq}")),
                "{id}: {}",
                e.message()
            );
        }
    }
    let e = s
        .games()
        .submit_move(authed(
            "arb",
            pb::SubmitMoveRequest {
                game_id: "bad-running".into(),
                r#move: "b2-c3".into(),
                ..Default::default()
            },
        ))
        .await
        .expect_err("a move on a quarantined game");
    assert_eq!(e.code(), Code::DataLoss, "{e}");
    assert!(e.message().contains("seq 3"), "{}", e.message());

    // Viewers list the others; arbiters see the quarantined ones with their seqs.
    for include_moves in [false, true] {
        let ids: Vec<String> = list(&s, "view", include_moves)
            .await
            .into_iter()
            .map(|g| g.id)
            .collect();
        assert_eq!(
            ids,
            ["good-running", "good-finished"],
            "viewer, moves {include_moves}"
        );
        let games = list(&s, "arb", include_moves).await;
        let shown: Vec<(String, Option<u64>)> = games
            .iter()
            .map(|g| (g.id.clone(), g.quarantine.as_ref().map(|q| q.seq)))
            .collect();
        assert_eq!(
            shown,
            [
                ("good-running".to_string(), None),
                ("good-finished".to_string(), None),
                ("bad-running".to_string(), Some(3)),
                ("bad-finished".to_string(), Some(2)),
            ],
            "arbiter, moves {include_moves}"
        );
        let bad = games
            .iter()
            .find(|g| g.id == "bad-running")
            .expect("listed");
        let q = bad.quarantine.as_ref().expect("quarantine");
        assert!(q.reason.contains("undecodable"), "{}", q.reason);
        assert_eq!(bad.board, 3);
        assert_eq!(
            bad.white.as_ref().map(|p| p.name.as_str()),
            Some("White bad-running")
        );
        let finished = games
            .iter()
            .find(|g| g.id == "bad-finished")
            .expect("listed");
        assert!(
            finished
                .quarantine
                .as_ref()
                .expect("q")
                .reason
                .contains("gap"),
            "{finished:?}"
        );
        assert_eq!(
            finished.status,
            pb::GameStatus::Finished as i32,
            "a game finished before is listed from its stored summary"
        );
    }
    assert_eq!(s.metric("arbiter_quarantined_games").await, 2.0);
    let log = std::fs::read_to_string(&s.log).expect("server log");
    assert!(
        log.contains("game quarantined") && log.contains("bad-running"),
        "{log}"
    );
    s.stop().await;
}

/// A finished game that nobody asks for is found by the background check of the finished
/// games' logs, so viewers' listings leave it out without anyone loading it.
#[tokio::test]
async fn a_corrupt_finished_game_is_found_without_a_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let s = Server::start(&data).await;
    game(&s, "fine", 1, "", &MOVES[..2]).await;
    resign(&s, "fine").await;
    game(&s, "refused", 2, "", &MOVES).await;
    resign(&s, "refused").await;
    s.stop().await;
    // Seq 4 (Black's f6-g5) replaced by a copy of seq 3 (White's c3-d4), renumbered: the
    // judge refuses a White move with Black to move.
    let conn = rusqlite::Connection::open(data.join("arbiter.sqlite")).expect("open");
    let third: Vec<u8> = conn
        .query_row(
            "SELECT payload FROM events WHERE game_id = 'refused' AND seq = 3",
            [],
            |r| r.get(0),
        )
        .expect("seq 3");
    let mut event: serde_json::Value = serde_json::from_slice(&third).expect("json");
    assert!(
        event.to_string().contains("c3-d4") || event.to_string().contains("MovePlayed"),
        "seq 3 is White's move: {event}"
    );
    event["seq"] = 4.into();
    conn.execute(
        "UPDATE events SET payload = ?1 WHERE game_id = 'refused' AND seq = 4",
        [serde_json::to_vec(&event).expect("json")],
    )
    .expect("update");
    drop(conn);

    let s = Server::start(&data).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ids: Vec<String> = list(&s, "view", false)
            .await
            .into_iter()
            .map(|g| g.id)
            .collect();
        if ids == ["fine"] {
            break;
        }
        assert!(Instant::now() < deadline, "the viewer still lists {ids:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = list(&s, "arb", false).await;
    let q = listed
        .iter()
        .find(|g| g.id == "refused")
        .and_then(|g| g.quarantine.clone())
        .expect("the arbiter sees it quarantined");
    assert_eq!(q.seq, 4, "{q:?}");
    assert!(q.reason.contains("judge refuses"), "{}", q.reason);
    s.stop().await;
}

/// Export then import into a fresh data directory gives the same games; import refuses
/// a game that exists, or one that does not replay, and then writes nothing.
#[tokio::test]
async fn export_then_import_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("a");
    let s = Server::start(&data).await;
    game(&s, "timed", 1, "5m+3s", &MOVES).await;
    resign(&s, "timed").await;
    game(&s, "plain", 2, "", &MOVES[..3]).await;
    let mut games = s.games();
    games
        .offer_draw(authed(
            "arb",
            pb::OfferDrawRequest {
                game_id: "plain".into(),
                side: pb::Side::Black as i32,
                expected_seq: 0,
            },
        ))
        .await
        .expect("offer");
    games
        .respond_to_draw_offer(authed(
            "arb",
            pb::RespondToDrawOfferRequest {
                game_id: "plain".into(),
                side: pb::Side::White as i32,
                response: pb::DrawResponse::Accept as i32,
                expected_seq: 0,
            },
        ))
        .await
        .expect("accepted");
    let before = [
        get(&s, "arb", "timed").await.expect("timed"),
        get(&s, "arb", "plain").await.expect("plain"),
    ];
    assert!(
        before
            .iter()
            .all(|g| g.status == pb::GameStatus::Finished as i32)
    );
    s.stop().await;

    let a = data.to_str().expect("utf-8");
    let file = dir.path().join("games.jsonl");
    let export = cli(&[
        "export",
        "--data-dir",
        a,
        "--game",
        "timed",
        "--game",
        "plain",
        "--out",
        file.to_str().expect("utf-8"),
    ]);
    assert!(export.status.success(), "export: {}", text(&export.stderr));
    let lines = std::fs::read_to_string(&file).expect("export file");
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.starts_with("{\"game\":"))
            .count(),
        2,
        "{lines}"
    );
    let one = cli(&["export", "--data-dir", a, "--game", "timed"]);
    assert!(one.status.success());
    assert!(
        lines.starts_with(&text(&one.stdout)),
        "stdout is the same form"
    );

    let b = dir.path().join("b");
    let b_str = b.to_str().expect("utf-8");
    let import = cli(&["import", "--data-dir", b_str, file.to_str().expect("utf-8")]);
    assert!(
        import.status.success(),
        "import: {}\n{}",
        text(&import.stdout),
        text(&import.stderr)
    );
    assert!(
        text(&import.stdout).contains("imported timed"),
        "{}",
        text(&import.stdout)
    );
    let check = cli(&["check", "--data-dir", b_str]);
    assert!(check.status.success(), "{}", text(&check.stdout));

    // Again into the same directory: the games exist.
    let again = cli(&["import", "--data-dir", b_str, file.to_str().expect("utf-8")]);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("game timed already exists"),
        "{}",
        text(&again.stderr)
    );

    // A line taken out of the second game: it does not replay; nothing is written, not
    // even the first game.
    let mut cut: Vec<&str> = lines.lines().collect();
    let last = cut.len() - 3;
    cut.remove(last);
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, cut.join("\n") + "\n").expect("write");
    let c = dir.path().join("c");
    let refused = cli(&[
        "import",
        "--data-dir",
        c.to_str().expect("utf-8"),
        broken.to_str().expect("utf-8"),
    ]);
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(
        message.contains("game plain does not replay at seq")
            && message.contains("nothing was imported"),
        "{message}"
    );
    assert!(!c.join("arbiter.sqlite").exists(), "nothing written");

    let s = Server::start(&b).await;
    for want in before {
        let mut got = get(&s, "arb", &want.id).await.expect("imported game");
        let mut want = want;
        // The instant a clock is read at is the reader's.
        for g in [&mut got, &mut want] {
            if let Some(c) = g.clock.as_mut() {
                c.read_at = None;
            }
        }
        assert_eq!(got, want);
    }
    s.stop().await;
}

/// The unfinished games are loaded after SERVING, in the background: a running clock's
/// flag still falls after a restart with nobody asking for the game (read from the log
/// itself, not through a request that would load it).
#[tokio::test]
async fn a_flag_falls_after_a_restart_with_nobody_asking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let s = Server::start(&data).await;
    game(&s, "flag", 1, "3s", &[]).await;
    s.stop().await;
    let s = Server::start(&data).await;
    let deadline = Instant::now() + Duration::from_secs(8);
    let conn = rusqlite::Connection::open(data.join("arbiter.sqlite")).expect("open");
    loop {
        let payloads: Vec<Vec<u8>> = conn
            .prepare("SELECT payload FROM events WHERE game_id = 'flag' ORDER BY seq")
            .expect("select")
            .query_map([], |r| r.get(0))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("payloads");
        let kinds: Vec<String> = payloads.iter().map(|p| text(p)).collect();
        if kinds
            .iter()
            .any(|k| k.contains("flag_fall") || k.contains("FlagFall"))
        {
            assert!(
                kinds
                    .iter()
                    .any(|k| k.contains("outage") || k.contains("Outage")),
                "the restart was recorded: {kinds:?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "no flag fell: {kinds:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(conn);
    let g = get(&s, "view", "flag").await.expect("flag");
    assert_eq!(g.result_reason, pb::ResultReason::TimeForfeit as i32);
    s.stop().await;
}
