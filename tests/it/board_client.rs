//! Boards as real clients (issue 38 item 5): the arbiter creates games, each board binds
//! to its game with its own token (`board-sim --bind … --token …`) and plays it to the
//! end; the same through a graceful server restart mid-game (the boards reconnect, rebind
//! and go on: every move in the log once) and through a PostgreSQL failover between two
//! nodes (skipped, saying so, without `ARBITER_TEST_DATABASE_URL`); and a board written
//! from the proto alone, in Python (`tests/data/board_client.py`, stubs generated at test
//! time with grpcio-tools; skipped, saying so, where Python lacks grpcio), binds, plays
//! captures and survives a restart.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::notation::pdn::read_games_bytes;
use draughts_arbiter::notation::replay::replay_record;
use draughts_arbiter::notation::{parse_move, square_number};
use draughts_arbiter::rules::{Position, Variant};
use tokio_stream::StreamExt;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

use crate::common::pg::TestDb;
use crate::common::server::TestServer;

const EVENT: &str = "Board clients";
/// The server's binary (the failover's nodes).
const BIN: &str = env!("CARGO_BIN_EXE_draughts-arbiter");
/// The tools' binary: `board-sim`.
const TOOLS: &str = env!("CARGO_BIN_EXE_arbiter-tools");

/// An arbiter's token and one board token per game (a board token names one game).
fn config(games: &[&str]) -> String {
    let mut c = String::from(
        "[limits]\nboard_messages_per_s = 1000000\nboard_burst = 1000000\n\
         [[tokens]]\ntoken = \"arb\"\nrole = \"arbiter\"\n",
    );
    for g in games {
        c.push_str(&format!(
            "[[tokens]]\ntoken = \"board-{g}\"\nrole = \"board\"\nevent = \"{EVENT}\"\ngame = \"{g}\"\n"
        ));
    }
    c
}

fn authed<T>(msg: T, token: &str) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        MetadataValue::try_from(format!("Bearer {token}")).expect("header"),
    );
    r
}

fn abatsiev() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/abatsiev.pdn")
}

/// Game `n` of the Russian reference file: its plies and its final FEN.
fn record(n: usize) -> (usize, String) {
    let bytes = std::fs::read(abatsiev()).expect("reference file");
    let g = read_games_bytes(&bytes)
        .into_iter()
        .nth(n - 1)
        .expect("game")
        .expect("reads");
    let r = replay_record(&g, Some(Variant::Russian)).expect("replays");
    (
        r.game.moves().len(),
        draughts_arbiter::notation::write_fen(r.game.position()),
    )
}

/// The arbiter creates and starts a timed Russian game `id`.
async fn create(ch: &Channel, id: &str) {
    let mut games = GameServiceClient::new(ch.clone());
    games
        .create_game(authed(
            pb::CreateGameRequest {
                game_id: id.into(),
                variant: pb::Variant::Russian as i32,
                time_control: "90m+30s".into(),
                white: Some(pb::Player {
                    name: "Abatsiev, Kh.".into(),
                    fmjd_id: "16033".into(),
                    federation: "RUS".into(),
                    rating: 2400,
                    ..pb::Player::default()
                }),
                black: Some(pb::Player {
                    name: "Other, A.".into(),
                    rating: 2210,
                    ..Default::default()
                }),
                event: EVENT.into(),
                round: "1".into(),
                ..Default::default()
            },
            "arb",
        ))
        .await
        .expect("create");
    games
        .start_game(authed(
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
            "arb",
        ))
        .await
        .expect("start");
}

async fn get(ch: &Channel, id: &str) -> pb::Game {
    GameServiceClient::new(ch.clone())
        .get_game(authed(pb::GetGameRequest { game_id: id.into() }, "arb"))
        .await
        .expect("get game")
        .into_inner()
}

/// Every event of the game's log, in order.
async fn log(ch: &Channel, id: &str) -> Vec<pb::GameEvent> {
    let last = get(ch, id).await.last_seq;
    let mut stream = BroadcastServiceClient::new(ch.clone())
        .watch_game(authed(
            pb::WatchGameRequest {
                game_id: id.into(),
                from_seq: 0,
            },
            "arb",
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut events = Vec::new();
    while events.last().is_none_or(|e: &pb::GameEvent| e.seq < last) {
        let e = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("events come")
            .expect("stream open")
            .expect("event");
        events.push(e);
    }
    events
}

/// The game's log holds each move once, in the record's order, and nothing flagged: the
/// boards never sent a move twice, and the judge never saw a message twice.
async fn every_move_once(ch: &Channel, id: &str, plies: usize, fen: &str) -> Vec<pb::GameEvent> {
    let game = get(ch, id).await;
    assert_eq!(game.move_count as usize, plies, "{id}: the record's moves");
    assert_eq!(game.fen, fen, "{id}: the record's final position");
    let events = log(ch, id).await;
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=game.last_seq).collect::<Vec<_>>(),
        "{id}: dense seqs"
    );
    let moves: Vec<&pb::GameEvent> = events
        .iter()
        .filter(|e| matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))))
        .collect();
    assert_eq!(moves.len(), plies, "{id}: each move recorded once");
    let flagged: Vec<&pb::GameEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                Some(pb::game_event::Kind::IrregularityFlagged(_))
                    | Some(pb::game_event::Kind::WarningIssued(_))
            )
        })
        .collect();
    assert!(flagged.is_empty(), "{id}: nothing flagged: {flagged:?}");
    events
}

/// `board-sim` binding `game` (file game `n`) with the game's board token.
fn board_sim(servers: &[String], n: usize, game: &str, extra: &[&str]) -> Child {
    let mut c = Command::new(TOOLS);
    c.arg("board-sim");
    for s in servers {
        c.args(["--server", s]);
    }
    c.arg("--pdn")
        .arg(abatsiev())
        .args(["--variant", "russian", "--game", &n.to_string()])
        .args(["--bind", game, "--token", &format!("board-{game}")])
        .args(extra)
        .env_remove("ARBITER_TOKEN")
        .env_remove("ARBITER_SERVER")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("board-sim runs")
}

async fn finish(child: Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().expect("board-sim ends"))
        .await
        .expect("join")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Waits until both games have at least `moves` moves.
async fn until_moves(ch: &Channel, ids: &[&str], moves: u32) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let mut all = true;
        for id in ids {
            all &= get(ch, id).await.move_count >= moves;
        }
        if all {
            return;
        }
        assert!(
            Instant::now() < until,
            "the boards did not reach {moves} moves"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The board ids the games' boards gave (each game's board status).
async fn board_ids(ch: &Channel, ids: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        let g = get(ch, id).await;
        out.push(g.board_status.expect("a board was bound").board_id);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_boards_with_their_tokens_play_the_arbiters_games_to_the_end() {
    let ids = ["bc-1", "bc-2"];
    let server = TestServer::start(&config(&ids)).await;
    let url = format!("http://{}", server.addr);
    for id in ids {
        create(&server.channel, id).await;
    }
    let a = board_sim(std::slice::from_ref(&url), 1, ids[0], &[]);
    let b = board_sim(
        std::slice::from_ref(&url),
        2,
        ids[1],
        &["--board-id", "table-2"],
    );
    let (a, b) = (finish(a).await, finish(b).await);
    for (n, (out, id)) in [(&a, ids[0]), (&b, ids[1])].into_iter().enumerate() {
        let (plies, fen) = record(n + 1);
        assert!(out.status.success(), "{id}: {}", text(out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("game {}: ok, {plies} plies, result ", n + 1)),
            "{}",
            text(out)
        );
        // A result no move makes (the record's resignation or agreed draw) is the
        // arbiter's: said, not done, and no failure.
        if !stdout.contains("pending for the arbiter") {
            assert_ne!(get(&server.channel, id).await.result, 0, "{}", text(out));
        }
        every_move_once(&server.channel, id, plies, &fen).await;
    }
    // --board-id names the board; without it the name is the process's own.
    let named = board_ids(&server.channel, &ids).await;
    assert!(named[0].starts_with("sim-"), "{named:?}");
    assert_eq!(named[1], "table-2");

    // A board token acts on its own game only: another's is refused, and the board
    // gives up at once (exit 1, saying why).
    let other = Command::new(TOOLS)
        .args(["board-sim", "--server", &url, "--pdn"])
        .arg(abatsiev())
        .args(["--variant", "russian", "--game", "1", "--bind", "bc-2"])
        .args(["--token", "board-bc-1"])
        .output()
        .expect("runs");
    assert_eq!(other.status.code(), Some(1), "{}", text(&other));
    assert!(
        String::from_utf8_lossy(&other.stdout).contains("PERMISSION_DENIED"),
        "{}",
        text(&other)
    );
    // Our own export of a bound game is a record board-sim reads whole: played again on
    // a game it creates, with the players' FMJD ids and ratings, the round and the
    // time control the export wrote.
    let pdn = BroadcastServiceClient::new(server.channel.clone())
        .export_pdn(authed(
            pb::ExportPdnRequest {
                game_id: ids[0].into(),
                ..Default::default()
            },
            "arb",
        ))
        .await
        .expect("export")
        .into_inner()
        .pdn;
    assert!(pdn.contains("[WhiteFmjdId \"16033\"]"), "{pdn}");
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("export.pdn");
    std::fs::write(&file, &pdn).expect("write");
    let again = Command::new(TOOLS)
        .args(["board-sim", "--server", &url, "--token", "arb", "--pdn"])
        .arg(&file)
        .args(["--id-prefix", "exported"])
        .output()
        .expect("runs");
    let (plies, _) = record(1);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains(&format!("game 1: ok, {plies} plies")),
        "{}",
        text(&again)
    );
    let copy = get(&server.channel, "exported-1").await;
    let white = copy.white.expect("white");
    assert_eq!((white.fmjd_id.as_str(), white.rating), ("16033", 2400));
    assert_eq!(copy.black.expect("black").rating, 2210);
    assert_eq!((copy.event.as_str(), copy.round.as_str()), (EVENT, "1"));
    assert!(copy.white_clock_ms >= 0, "timed, as exported");

    // One --bind per selected game: a mismatch is a usage error (exit 2) before any call.
    let mismatch = Command::new(TOOLS)
        .args(["board-sim", "--server", &url, "--pdn"])
        .arg(abatsiev())
        .args(["--variant", "russian", "--all", "--bind", "bc-1"])
        .output()
        .expect("runs");
    assert_eq!(mismatch.status.code(), Some(2), "{}", text(&mismatch));
    assert!(
        String::from_utf8_lossy(&mismatch.stderr).contains("--bind names 1 games"),
        "{}",
        text(&mismatch)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_boards_go_on_through_a_server_restart_and_record_every_move_once() {
    let ids = ["rs-1", "rs-2"];
    let toml = config(&ids);
    let server = TestServer::start(&toml).await;
    let addr = server.addr;
    let url = format!("http://{addr}");
    for id in ids {
        create(&server.channel, id).await;
    }
    let pace = ["--move-every", "120"];
    let a = board_sim(std::slice::from_ref(&url), 1, ids[0], &pace);
    let b = board_sim(std::slice::from_ref(&url), 2, ids[1], &pace);
    until_moves(&server.channel, &ids, 6).await;
    // Stopped as at SIGTERM: the boards' streams end with UNAVAILABLE, then connections
    // are refused until it is back on the same port and log.
    let dir = server.stop().await.expect("its folder");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let server = TestServer::start_in(dir.path(), &toml, Some(addr)).await;
    let (a, b) = (finish(a).await, finish(b).await);
    // Two simulators never call themselves the same board.
    let named = board_ids(&server.channel, &ids).await;
    assert!(named.iter().all(|b| b.starts_with("sim-")), "{named:?}");
    assert_ne!(named[0], named[1]);
    for (n, (out, id)) in [(&a, ids[0]), (&b, ids[1])].into_iter().enumerate() {
        let (plies, fen) = record(n + 1);
        assert!(out.status.success(), "{id}: {}", text(out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("the stream broke"), "{}", text(out));
        assert!(stderr.contains("bound again"), "{}", text(out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("reconnected "),
            "{}",
            text(out)
        );
        let events = every_move_once(&server.channel, id, plies, &fen).await;
        assert!(
            events
                .iter()
                .any(|e| matches!(e.kind, Some(pb::game_event::Kind::OutageRecorded(_)))),
            "{id}: the restart is in the log"
        );
    }
    server.stop().await;
    drop(dir);
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// A `serve` process on PostgreSQL; killed with SIGKILL when dropped.
struct Node(Child);

impl Node {
    fn start(id: &str, port: u16, db: &str, config: &Path, log: &Path) -> Node {
        let log = std::fs::File::create(log).expect("log file");
        Node(
            Command::new(BIN)
                .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
                .arg("--config")
                .arg(config)
                .env("ARBITER_STORE", "postgres")
                .env("ARBITER_DATABASE_URL", db)
                .env("ARBITER_NODE_ID", id)
                .env("ARBITER_LEASE_MS", "600")
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("serve"),
        )
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn connect(url: &str) -> Channel {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(ch) = Endpoint::from_shared(url.to_string())
            .expect("url")
            .connect()
            .await
        {
            return ch;
        }
        assert!(Instant::now() < until, "{url} did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_boards_go_on_through_a_postgres_failover() {
    let Some(db) = TestDb::create("board_failover").await else {
        return;
    };
    let ids = ["fo-1", "fo-2"];
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("arbiter.toml");
    std::fs::write(&config, self::config(&ids)).expect("config");
    let (pa, pb_) = (free_port(), free_port());
    let (ua, ub) = (
        format!("http://127.0.0.1:{pa}"),
        format!("http://127.0.0.1:{pb_}"),
    );
    let node_a = Node::start("a", pa, &db.url(), &config, &dir.path().join("a.log"));
    let node_b = Node::start("b", pb_, &db.url(), &config, &dir.path().join("b.log"));
    let (cha, chb) = (connect(&ua).await, connect(&ub).await);
    // Created on node a: a owns both games.
    for id in ids {
        create(&cha, id).await;
    }
    let servers = [ua.clone(), ub.clone()];
    let pace = ["--move-every", "120"];
    let a = board_sim(&servers, 1, ids[0], &pace);
    let b = board_sim(&servers, 2, ids[1], &pace);
    until_moves(&cha, &ids, 6).await;
    // The owner dies: b takes the games over when their lease runs out.
    drop(node_a);
    let (a, b) = (finish(a).await, finish(b).await);
    for (n, (out, id)) in [(&a, ids[0]), (&b, ids[1])].into_iter().enumerate() {
        let (plies, fen) = record(n + 1);
        assert!(
            out.status.success(),
            "{id}: {}\nnode b:\n{}",
            text(out),
            std::fs::read_to_string(dir.path().join("b.log")).unwrap_or_default()
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("bound again"),
            "{}",
            text(out)
        );
        every_move_once(&chb, id, plies, &fen).await;
    }
    drop(node_b);
    db.drop_schema().await;
}

// ---------------------------------------------------------------------------------------
// A board written from the proto alone, in Python.

/// Stubs generated from the proto into `dir`, or why not (grpcio / grpcio-tools missing).
fn python_stubs(dir: &Path) -> Result<(), String> {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    let out = Command::new("python3")
        .args([
            "-c",
            "import grpc, grpc_tools.protoc, sys, importlib.resources as r; \
             inc = str(r.files('grpc_tools') / '_proto'); \
             sys.exit(grpc_tools.protoc.main(['protoc', '-I' + sys.argv[1], '-I' + inc, \
             '--python_out=' + sys.argv[2], '--grpc_python_out=' + sys.argv[2], \
             sys.argv[1] + '/draughts/arbiter/v1/arbiter.proto']))",
        ])
        .arg(&proto)
        .arg(dir)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The plies of a Russian line with captures, as the Python board plays them: side, the
/// start square, the landing squares, the captured squares in capture order (PDN
/// numbers).
fn python_plies(line: &[&str]) -> String {
    let v = Variant::Russian;
    let mut pos = Position::start(v);
    let mut plies = Vec::new();
    for text in line {
        let mv = parse_move(text, &pos).unwrap_or_else(|e| panic!("{text}: {e}"));
        let side = if pos.turn() == draughts_arbiter::rules::Color::White {
            1
        } else {
            2
        };
        plies.push(serde_json::json!({
            "side": side,
            "from": square_number(mv.from(), v),
            "landings": mv.landings().map(|s| square_number(s, v)).collect::<Vec<_>>(),
            "captured": mv.captured().map(|s| square_number(s, v)).collect::<Vec<_>>(),
        }));
        pos = pos.play(&mv).expect("legal");
    }
    serde_json::Value::Array(plies).to_string()
}

const LINE: [&str; 8] = [
    "c3-d4", "f6-e5", "d4:f6", "g7:e5", "g3-f4", "e5:g3", "h2:f4", "b6-a5",
];

fn python_board(stubs: &Path, addr: std::net::SocketAddr, game: &str, plies: &str) -> Child {
    Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/board_client.py"))
        .arg("--stubs")
        .arg(stubs)
        .args(["--server", &addr.to_string(), "--game", game])
        .args(["--token", &format!("board-{game}"), "--plies", plies])
        .args(["--pause-ms", "600"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_board_from_the_proto_alone_plays_captures() {
    let stubs = tempfile::tempdir().expect("dir");
    if let Err(e) = python_stubs(stubs.path()) {
        eprintln!("SKIPPED (python board): grpcio / grpcio-tools not importable: {e}");
        return;
    }
    let server = TestServer::start(&config(&["py-1"])).await;
    create(&server.channel, "py-1").await;
    let plies = python_plies(&LINE[..4]);
    let out = finish(python_board(stubs.path(), server.addr, "py-1", &plies)).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("played 4"),
        "{}",
        text(&out)
    );
    let game = get(&server.channel, "py-1").await;
    let paths: Vec<Vec<u32>> = game
        .moves
        .iter()
        .map(|m| m.r#move.as_ref().expect("move").path.clone())
        .collect();
    assert_eq!(
        paths,
        [vec![22, 18], vec![11, 15], vec![18, 11], vec![8, 15]]
    );
    assert!(game.pending_irregularities.is_empty());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_board_from_the_proto_alone_survives_a_restart() {
    let stubs = tempfile::tempdir().expect("dir");
    if let Err(e) = python_stubs(stubs.path()) {
        eprintln!("SKIPPED (python board): grpcio / grpcio-tools not importable: {e}");
        return;
    }
    let toml = config(&["py-2"]);
    let server = TestServer::start(&toml).await;
    let addr = server.addr;
    create(&server.channel, "py-2").await;
    let plies = python_plies(&LINE);
    let mut child = python_board(stubs.path(), addr, "py-2", &plies);
    // After the first capture, while the board thinks about the next ply: restart.
    let stdout = child.stdout.take().expect("stdout");
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines_tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    loop {
        let l = tokio::time::timeout(Duration::from_secs(30), lines.recv())
            .await
            .expect("the board goes on")
            .expect("the board runs");
        seen.push(l.clone());
        if l == "played 3" {
            break;
        }
    }
    let dir = server.stop().await.expect("its folder");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let server = TestServer::start_in(dir.path(), &toml, Some(addr)).await;
    let out = finish(child).await;
    while let Ok(l) = lines.try_recv() {
        seen.push(l);
    }
    let all = seen.join("\n");
    assert!(out.status.success(), "{all}\n{}", text(&out));
    assert!(all.contains("played 8"), "{all}");
    // Bound again with resume_from_seq: the events missed were replayed, the outage the
    // restart recorded among them.
    let replayed = seen
        .iter()
        .find(|l| l.starts_with("replayed "))
        .unwrap_or_else(|| panic!("no replay: {all}"));
    assert!(replayed.contains("outage_recorded"), "{all}");
    let game = get(&server.channel, "py-2").await;
    assert_eq!(game.move_count, 8, "every ply once");
    let events = log(&server.channel, "py-2").await;
    let moves = events
        .iter()
        .filter(|e| matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))))
        .count();
    assert_eq!(moves, 8);
    server.stop().await;
    drop(dir);
}
