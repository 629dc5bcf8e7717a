//! Prometheus metrics (issue #6: "Prometheus metrics on a separate port (moves, acks,
//! fsync and ack latency histograms, active games, watchers)"): the real server on
//! 127.0.0.1:0 with its SQLite log and a metrics port; moves, a refusal, a watcher and a
//! board move the counters and gauges, read back from `GET /metrics`; `/healthz` and
//! `/readyz` answer the probes; shutdown closes the metrics port too. A bound board's
//! health (issue 16 item 3) is recorded in its game, shown by GetGame and ListGames, and
//! counted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::hub::metrics::{CONTENT_TYPE, Metrics};
use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::{Listeners, open_store, run_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_stream::StreamExt;
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

/// Sends one HTTP/1.1 request; returns the status line, the headers and the body.
async fn http(addr: SocketAddr, method: &str, path: &str) -> (String, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr)
        .await
        .expect("metrics port");
    s.write_all(
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .expect("request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("response");
    let raw = String::from_utf8(raw).expect("utf-8");
    let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (
        status.to_string(),
        headers.to_ascii_lowercase(),
        body.to_string(),
    )
}

async fn scrape(addr: SocketAddr) -> String {
    let (status, headers, body) = http(addr, "GET", "/metrics").await;
    assert!(status.contains("200"), "{status}");
    assert!(
        headers.contains(&format!("content-type: {CONTENT_TYPE}")),
        "{headers}"
    );
    assert!(
        body.ends_with("# EOF\n"),
        "OpenMetrics text ends with # EOF"
    );
    body
}

/// The value of one series (name with labels, exactly as exposed).
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in\n{text}"))
        .parse()
        .expect("a number")
}

/// Waits until a series reaches `want` (gauges moved by stream ends are eventually set).
async fn eventually(addr: SocketAddr, series: &str, want: f64) {
    let mut last = f64::NAN;
    for _ in 0..100 {
        last = value(&scrape(addr).await, series);
        if last == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{series} stayed {last}, wanted {want}");
}

struct Server {
    channel: Channel,
    metrics: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    start_with(FileConfig::default()).await
}

async fn start_with(file: FileConfig) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = grpc.local_addr().expect("addr");
    let metrics_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let metrics_addr = metrics_listener.local_addr().expect("addr");
    let config = Config::resolve(
        file,
        Some(addr),
        Some(dir.path().to_path_buf()),
        false,
        Some(metrics_addr),
        None,
        false,
    )
    .expect("config");
    let metrics = Arc::new(Metrics::new());
    let store = open_store(&config, &metrics).await.expect("SQLite store");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let listeners = Listeners {
        grpc,
        metrics: Some(metrics_listener),
        tls: None,
    };
    let done = tokio::spawn(async move {
        run_with(&config, store, listeners, metrics, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    let endpoint = Endpoint::from_shared(format!("http://{addr}")).expect("url");
    for _ in 0..100 {
        if let Ok(channel) = endpoint.connect().await {
            return Server {
                channel,
                metrics: metrics_addr,
                stop: Some(stop),
                done,
                _dir: dir,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("server did not come up");
}

#[tokio::test]
async fn counters_and_gauges_follow_moves_refusals_watchers_and_boards() {
    let mut s = start().await;
    let before = scrape(s.metrics).await;
    assert_eq!(
        value(&before, "arbiter_moves_accepted_total{variant=\"russian\"}"),
        0.0
    );
    assert_eq!(value(&before, "arbiter_active_games"), 0.0);
    assert_eq!(value(&before, "arbiter_recovered_games"), 0.0);
    assert!(value(&before, "arbiter_recovery_duration_seconds") >= 0.0);
    for help in [
        "# HELP arbiter_moves_accepted ",
        "# HELP arbiter_requests_rejected ",
        "# HELP arbiter_store_commit_seconds",
        "# HELP arbiter_ack_latency_seconds",
        "# HELP arbiter_watchers",
        "# HELP arbiter_watch_deliveries",
        "# HELP arbiter_watch_resyncs",
        "# HELP arbiter_delayed_events",
        "# HELP arbiter_boards_connected",
    ] {
        assert!(before.contains(help), "{help}");
    }

    let mut games = GameServiceClient::new(s.channel.clone());
    let id = games
        .create_game(pb::CreateGameRequest {
            variant: pb::Variant::Russian as i32,
            time_control: "10m+5s".into(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
        .id;
    games
        .start_game(pb::StartGameRequest {
            game_id: id.clone(),
            expected_seq: 0,
        })
        .await
        .expect("start");
    for mv in ["c3-d4", "b6-c5"] {
        games
            .submit_move(pb::SubmitMoveRequest {
                game_id: id.clone(),
                r#move: mv.into(),
                ..Default::default()
            })
            .await
            .expect("a legal move (RU 1.4)");
    }
    // Refusals: an unknown game, and a move that is not legal (RU 1.4); neither is recorded.
    let e = games
        .submit_move(pb::SubmitMoveRequest {
            game_id: "no-such-game".into(),
            r#move: "c3-d4".into(),
            ..Default::default()
        })
        .await
        .expect_err("unknown game");
    assert_eq!(e.code(), Code::NotFound);
    let e = games
        .submit_move(pb::SubmitMoveRequest {
            game_id: id.clone(),
            r#move: "a1-h8".into(),
            ..Default::default()
        })
        .await
        .expect_err("illegal move");
    let illegal = match e.code() {
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        other => panic!("unexpected {other:?}"),
    };

    let mut watch = BroadcastServiceClient::new(s.channel.clone())
        .watch_game(pb::WatchGameRequest {
            game_id: id.clone(),
            from_seq: 0,
        })
        .await
        .expect("watch")
        .into_inner();
    watch
        .next()
        .await
        .expect("an event")
        .expect("the first event");

    let (board_tx, board, _) = bind_board(&s.channel, &id, "dgt-1").await;

    let text = scrape(s.metrics).await;
    assert_eq!(
        value(&text, "arbiter_moves_accepted_total{variant=\"russian\"}"),
        2.0
    );
    assert_eq!(
        value(
            &text,
            "arbiter_moves_accepted_total{variant=\"international\"}"
        ),
        0.0
    );
    assert_eq!(
        value(&text, "arbiter_requests_rejected_total{code=\"NOT_FOUND\"}"),
        1.0
    );
    assert_eq!(
        value(
            &text,
            &format!("arbiter_requests_rejected_total{{code=\"{illegal}\"}}")
        ),
        1.0
    );
    // Start, two moves and the bound board's health (active) were acknowledged after
    // their events were durable.
    assert_eq!(value(&text, "arbiter_commands_acknowledged_total"), 4.0);
    assert_eq!(value(&text, "arbiter_ack_latency_seconds_count"), 4.0);
    assert_eq!(
        value(&text, "arbiter_ack_latency_seconds_bucket{le=\"+Inf\"}"),
        4.0
    );
    assert!(value(&text, "arbiter_ack_latency_seconds_sum") > 0.0);
    // Created, started, two moves (each with its clock press, or more): at least 4.
    let appended = value(&text, "arbiter_events_appended_total");
    assert!(appended >= 4.0, "{appended}");
    // Every append is a commit of the SQLite writer, timed around its fsync.
    let commits = value(&text, "arbiter_store_commit_seconds_count");
    assert!(commits >= 4.0, "{commits}");
    assert_eq!(value(&text, "arbiter_store_commits_total"), commits);
    assert!(value(&text, "arbiter_store_commit_seconds_sum") > 0.0);
    assert_eq!(value(&text, "arbiter_active_games"), 1.0);
    assert_eq!(value(&text, "arbiter_watchers{kind=\"game\"}"), 1.0);
    assert_eq!(value(&text, "arbiter_watchers{kind=\"event\"}"), 0.0);
    assert_eq!(value(&text, "arbiter_watch_resyncs_total"), 0.0);
    assert_eq!(
        value(&text, "arbiter_delayed_events"),
        0.0,
        "no game has a delay"
    );
    assert_eq!(value(&text, "arbiter_boards_connected"), 1.0);

    // Streams that end leave the gauges; a resignation ends the game (RU 1.7).
    drop(watch);
    eventually(s.metrics, "arbiter_watchers{kind=\"game\"}", 0.0).await;
    drop(board_tx);
    drop(board);
    eventually(s.metrics, "arbiter_boards_connected", 0.0).await;
    games
        .resign(pb::ResignRequest {
            game_id: id.clone(),
            side: pb::Side::White as i32,
            expected_seq: 0,
        })
        .await
        .expect("resign");
    assert_eq!(value(&scrape(s.metrics).await, "arbiter_active_games"), 0.0);

    // The probes for orchestrators without gRPC over TLS: live, and ready since
    // recovery ended (the gRPC health service's SERVING).
    let (status, _, body) = http(s.metrics, "GET", "/healthz").await;
    assert!(status.contains("200") && body == "ok\n", "{status} {body}");
    let (status, _, body) = http(s.metrics, "GET", "/readyz").await;
    assert!(
        status.contains("200") && body == "ready\n",
        "{status} {body}"
    );

    // Nothing else is served.
    let (status, _, body) = http(s.metrics, "GET", "/").await;
    assert!(
        status.contains("404") && body.contains("/metrics"),
        "{status}"
    );
    let (status, headers, _) = http(s.metrics, "POST", "/metrics").await;
    assert!(
        status.contains("405") && headers.contains("allow: get, head"),
        "{status}"
    );

    // Shutdown stops the metrics listener with the gRPC one.
    drop(s.stop.take());
    tokio::time::timeout(Duration::from_secs(10), &mut s.done)
        .await
        .expect("server stops")
        .expect("server task");
    assert!(
        tokio::net::TcpStream::connect(s.metrics).await.is_err(),
        "metrics port closed after shutdown"
    );
}

/// A board stream bound to `game` as `board_id`: its sender, its feedback and the game
/// the bind answered with.
async fn bind_board(
    channel: &Channel,
    game: &str,
    board_id: &str,
) -> (
    tokio::sync::mpsc::Sender<pb::BoardMessage>,
    tonic::Streaming<pb::BoardFeedback>,
    pb::Game,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::BoardMessage>(4);
    let mut board = BoardServiceClient::new(channel.clone())
        .connect(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect("board stream")
        .into_inner();
    tx.send(pb::BoardMessage {
        message_id: 1,
        board_time_ms: 0,
        kind: Some(pb::board_message::Kind::Bind(pb::BindBoard {
            game_id: game.into(),
            board_id: board_id.into(),
            resume_from_seq: 0,
        })),
    })
    .await
    .expect("send bind");
    loop {
        match board.next().await.expect("feedback").expect("ok").kind {
            Some(pb::board_feedback::Kind::Bound(g)) => return (tx, board, g),
            _ => continue,
        }
    }
}

/// The next event of `health` the board hears of its own game (message id 0: recorded
/// by the stream, not in answer to a message).
async fn health_event(
    board: &mut tonic::Streaming<pb::BoardFeedback>,
    want: pb::BoardHealth,
) -> (pb::BoardHealthChanged, pb::GameEvent) {
    loop {
        let f = tokio::time::timeout(Duration::from_secs(5), board.next())
            .await
            .unwrap_or_else(|_| panic!("no {want:?} within 5 s"))
            .expect("stream open")
            .expect("feedback");
        if let Some(pb::board_feedback::Kind::Event(e)) = &f.kind
            && let Some(pb::game_event::Kind::BoardHealthChanged(h)) = &e.kind
            && h.health == want as i32
        {
            return (h.clone(), e.clone());
        }
    }
}

#[tokio::test]
async fn board_health_is_recorded_shown_and_counted() {
    let file: FileConfig = toml::from_str("[limits]\nboard_silence_s = 1\n").expect("config file");
    let mut s = start_with(file).await;
    let mut games = GameServiceClient::new(s.channel.clone());
    let id = "health".to_string();
    games
        .create_game(pb::CreateGameRequest {
            game_id: id.clone(),
            variant: pb::Variant::Russian as i32,
            time_control: "5m+3s".into(),
            ..Default::default()
        })
        .await
        .expect("create");
    let status = |g: &pb::Game| {
        g.board_status
            .as_ref()
            .map(|b| (b.board_id.clone(), b.health))
    };
    let get = |games: &mut GameServiceClient<Channel>| {
        let mut games = games.clone();
        let id = id.clone();
        async move {
            games
                .get_game(pb::GetGameRequest { game_id: id })
                .await
                .expect("get")
                .into_inner()
        }
    };
    assert_eq!(status(&get(&mut games).await), None, "no board bound yet");

    let (board_tx, mut board, bound) = bind_board(&s.channel, &id, "dgt-9").await;
    let active = Some(("dgt-9".to_string(), pb::BoardHealth::Active as i32));
    // Recorded before the bound view (which shows it), so not sent again.
    assert_eq!(status(&bound), active, "the bound game shows the board");
    let text = scrape(s.metrics).await;
    assert_eq!(value(&text, "arbiter_boards_bound{health=\"active\"}"), 1.0);

    // Silent before the start: no clock runs, so nothing is recorded.
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert_eq!(status(&get(&mut games).await), active);
    games
        .start_game(pb::StartGameRequest {
            game_id: id.clone(),
            expected_seq: 0,
        })
        .await
        .expect("start");
    // White's clock runs: silent for board_silence_s, the board is not responding.
    let (h, _) = health_event(&mut board, pb::BoardHealth::NotResponding).await;
    assert!(h.silent_ms >= 1_000, "{h:?}");
    assert_eq!(
        status(&get(&mut games).await),
        Some(("dgt-9".to_string(), pb::BoardHealth::NotResponding as i32))
    );
    let text = scrape(s.metrics).await;
    assert_eq!(
        value(&text, "arbiter_boards_bound{health=\"not_responding\"}"),
        1.0
    );
    assert_eq!(value(&text, "arbiter_boards_bound{health=\"active\"}"), 0.0);
    assert_eq!(
        value(
            &text,
            "arbiter_board_health_changes_total{health=\"not_responding\"}"
        ),
        1.0
    );
    // Its next message: active again, recorded before what the message does.
    board_tx
        .send(pb::BoardMessage {
            message_id: 2,
            board_time_ms: 0,
            kind: Some(pb::board_message::Kind::Touch(pb::BoardSquare {
                square: 22,
            })),
        })
        .await
        .expect("send touch");
    let (h, again) = health_event(&mut board, pb::BoardHealth::Active).await;
    assert!(h.silent_ms >= 1_000, "{h:?}");
    assert!(
        format!("{:?}", again.actor).contains("dgt-9"),
        "{:?}",
        again.actor
    );
    assert_eq!(status(&get(&mut games).await), active);
    // The stream ends while the game runs: disconnected, in GetGame and ListGames.
    drop(board_tx);
    drop(board);
    let mut shown = None;
    for _ in 0..100 {
        shown = status(&get(&mut games).await);
        if shown
            .as_ref()
            .is_some_and(|(_, h)| *h == pb::BoardHealth::Disconnected as i32)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        shown,
        Some(("dgt-9".to_string(), pb::BoardHealth::Disconnected as i32))
    );
    let listed = games
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("list")
        .into_inner()
        .games;
    assert_eq!(
        listed.iter().find(|g| g.id == id).and_then(status),
        Some(("dgt-9".to_string(), pb::BoardHealth::Disconnected as i32))
    );
    let text = scrape(s.metrics).await;
    assert_eq!(value(&text, "arbiter_boards_bound{health=\"active\"}"), 0.0);
    assert_eq!(
        value(
            &text,
            "arbiter_board_health_changes_total{health=\"disconnected\"}"
        ),
        1.0
    );
    // The arbiter sees each change on the game's watch, in order, by the board.
    let mut watch = BroadcastServiceClient::new(s.channel.clone())
        .watch_game(pb::WatchGameRequest {
            game_id: id.clone(),
            from_seq: 0,
        })
        .await
        .expect("watch")
        .into_inner();
    let last = get(&mut games).await.last_seq;
    let mut changes = Vec::new();
    while let Some(e) = watch.next().await {
        let e = e.expect("event");
        if let Some(pb::game_event::Kind::BoardHealthChanged(h)) = &e.kind {
            assert_eq!(h.board_id, "dgt-9");
            changes.push(h.health);
        }
        if e.seq == last {
            break;
        }
    }
    use pb::BoardHealth::{Active, Disconnected, NotResponding};
    assert_eq!(
        changes,
        [Active, NotResponding, Active, Disconnected].map(|h| h as i32)
    );
    if let Some(stop) = s.stop.take() {
        let _ = stop.send(());
    }
    (&mut s.done).await.expect("server");
}
