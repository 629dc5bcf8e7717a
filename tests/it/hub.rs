//! The hub from outside, over a real server on 127.0.0.1:0 with a SQLite log: cancelled
//! requests never wedge a game, streams end at the game's end and at shutdown, boards
//! hear every event of their game, and a watch stream folds into the same score sheet
//! GetGame shows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::store::{EventStore, SqliteStore, Stream};
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Streaming};

struct Server {
    channel: Channel,
    store: Arc<SqliteStore>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SqliteStore::open(dir.path().join("arbiter.sqlite")).expect("store"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = Config::resolve(
        FileConfig::default(),
        Some(addr),
        None,
        true,
        None,
        None,
        false,
    )
    .expect("config");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving: Arc<dyn EventStore> = store.clone();
    let done = tokio::spawn(async move {
        run(&config, serving, listener, async {
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
                store,
                stop: Some(stop),
                done,
                _dir: dir,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("server did not come up");
}

fn games(s: &Server) -> GameServiceClient<Channel> {
    GameServiceClient::new(s.channel.clone())
}

/// A Russian game with kings that can shuffle for ever (repetition only claimable).
const SHUFFLE: &str = "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7";
const CYCLE: [&str; 4] = ["c1-d2", "h8-g7", "d2-c1", "g7-h8"];

async fn new_game(s: &Server, fen: &str, tc: &str) -> String {
    let g = games(s)
        .create_game(pb::CreateGameRequest {
            variant: pb::Variant::Russian as i32,
            time_control: tc.into(),
            white: Some(pb::Player {
                name: "Ann".into(),
                ..Default::default()
            }),
            black: Some(pb::Player {
                name: "Bob".into(),
                ..Default::default()
            }),
            event: "Open".into(),
            round: "1".into(),
            board: 1,
            start_fen: fen.into(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    games(s)
        .start_game(pb::StartGameRequest {
            game_id: g.id.clone(),
            expected_seq: 0,
        })
        .await
        .expect("start");
    g.id
}

async fn get(s: &Server, id: &str) -> pb::Game {
    games(s)
        .get_game(pb::GetGameRequest { game_id: id.into() })
        .await
        .expect("get")
        .into_inner()
}

async fn watch(s: &Server, id: &str, from_seq: u64) -> Streaming<pb::GameEvent> {
    BroadcastServiceClient::new(s.channel.clone())
        .watch_game(pb::WatchGameRequest {
            game_id: id.into(),
            from_seq,
        })
        .await
        .expect("watch")
        .into_inner()
}

fn submit(id: &str, mv: &str) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: id.into(),
        r#move: mv.into(),
        expected_seq: 0,
        side: 0,
        offer_draw: false,
    }
}

/// The next message of a stream, within a second.
async fn next(
    stream: &mut Streaming<pb::GameEvent>,
) -> Option<Result<pb::GameEvent, tonic::Status>> {
    tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("a message or the end within 5 s")
}

/// A deterministic spread of deadlines over 50 µs .. 5 ms.
fn deadline(i: u64) -> Duration {
    let x = i
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        >> 33;
    Duration::from_micros(50 + x % 4_950)
}

/// The log, GetGame and a watcher from seq 0 agree on every event of a game.
async fn agree(s: &Server, id: &str) {
    let game = get(s, id).await;
    let log = s.store.load(Stream::Game(id), 1).await.expect("log");
    assert_eq!(log.len() as u64, game.last_seq, "log and GetGame");
    let mut watcher = watch(s, id, 0).await;
    let mut seqs = Vec::new();
    let mut moves = 0;
    while (seqs.len() as u64) < game.last_seq {
        let e = next(&mut watcher).await.expect("open").expect("event");
        if matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))) {
            moves += 1;
        }
        seqs.push(e.seq);
    }
    assert_eq!(
        seqs,
        (1..=game.last_seq).collect::<Vec<_>>(),
        "dense, no duplicate"
    );
    assert_eq!(moves, game.move_count, "the watcher saw every move");
}

/// 1,000 SubmitMoves with client deadlines spread over 50 µs–5 ms (sent as grpc-timeout
/// and enforced by dropping the call), some cancelled while their move was being
/// appended, and watch streams cancelled midway: every command happened completely or
/// not at all, each game takes the next move, and the log, GetGame and a watcher agree
/// on every event. The shuffling kings end each game by a move-count draw after a few
/// dozen moves; the next game starts then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_submits_never_wedge_a_game() {
    let s = start().await;
    let mut id = new_game(&s, SHUFFLE, "").await;
    let mut live = watch(&s, &id, 0).await;
    let (mut cut, mut ok, mut raced, mut played) = (0, 0, 0, 1);
    let mut cut_last = false;
    for i in 0..1000u64 {
        let game = get(&s, &id).await;
        if game.status == pb::GameStatus::Finished as i32 {
            agree(&s, &id).await;
            id = new_game(&s, SHUFFLE, "").await;
            live = watch(&s, &id, 0).await;
            played += 1;
            continue;
        }
        // The game's own count says which move of the cycle is next.
        let mv = CYCLE[game.move_count as usize % 4];
        let d = deadline(i);
        let mut r = Request::new(submit(&id, mv));
        r.set_timeout(d);
        let mut client = games(&s);
        match tokio::time::timeout(d, client.submit_move(r)).await {
            Err(_) => cut_last = true,
            Ok(Ok(_)) => {
                ok += 1;
                cut_last = false;
            }
            Ok(Err(e)) if matches!(e.code(), Code::DeadlineExceeded | Code::Cancelled) => {
                cut_last = true
            }
            // A call cut short on the client may still be queued at the server, and then
            // it happens: the move read from GetGame can be one behind. That is the only
            // refusal allowed.
            Ok(Err(e)) if cut_last && e.code() == Code::FailedPrecondition => {
                raced += 1;
                cut_last = false;
            }
            Ok(Err(e)) => panic!("a cycle move is legal or cut short, never refused: {e:?}"),
        }
        if cut_last {
            cut += 1;
        }
        // A stream cancelled midway now and then.
        if i % 100 == 7 {
            let mut w = watch(&s, &id, 0).await;
            let _ = next(&mut w).await;
            drop(w);
        }
    }
    eprintln!(
        "1000 submits over {played} games: {ok} acknowledged, {cut} cut short by their deadline, \
         {raced} refused after racing a cut-short move that still happened"
    );
    assert!(cut > 0, "some deadlines must expire");
    let game = get(&s, &id).await;
    if game.status != pb::GameStatus::Finished as i32 {
        let plies = game.move_count as usize;
        games(&s)
            .submit_move(submit(&id, CYCLE[plies % 4]))
            .await
            .expect("the game takes the next move");
        assert_eq!(get(&s, &id).await.move_count as usize, plies + 1);
    }
    agree(&s, &id).await;
    // The watcher that stayed on the last game saw its every event live.
    let last = get(&s, &id).await.last_seq;
    let mut n = 0;
    while n < last {
        next(&mut live).await.expect("open").expect("event");
        n += 1;
    }
}

/// WatchGame ends (status OK) after the game's final event; a watch of a finished game
/// sends its history and ends.
#[tokio::test]
async fn streams_end_after_the_final_event() {
    let s = start().await;
    let id = new_game(&s, SHUFFLE, "10m+5s").await;
    let mut live = watch(&s, &id, 0).await;
    games(&s)
        .submit_move(submit(&id, "c1-d2"))
        .await
        .expect("move");
    games(&s)
        .resign(pb::ResignRequest {
            game_id: id.clone(),
            side: pb::Side::Black as i32,
            expected_seq: 0,
        })
        .await
        .expect("resign");
    let mut kinds = Vec::new();
    while let Some(e) = next(&mut live).await {
        kinds.push(e.expect("event").kind.expect("kind"));
    }
    assert!(
        matches!(kinds.last(), Some(pb::game_event::Kind::GameFinished(_))),
        "the last message is the end: {kinds:?}"
    );
    let last = get(&s, &id).await.last_seq;
    let mut after = watch(&s, &id, 0).await;
    let mut n = 0;
    while let Some(e) = next(&mut after).await {
        e.expect("event");
        n += 1;
    }
    assert_eq!(
        n, last,
        "a finished game's watch sends its history, then ends"
    );
}

/// At shutdown every watch stream ends with UNAVAILABLE "server shutting down" and the
/// server stops.
#[tokio::test]
async fn shutdown_ends_every_stream() {
    let mut s = start().await;
    let id = new_game(&s, SHUFFLE, "10m+5s").await;
    let mut streams = Vec::new();
    for _ in 0..20 {
        streams.push(watch(&s, &id, 0).await);
    }
    for w in &mut streams {
        next(w).await.expect("open").expect("history");
    }
    let began = Instant::now();
    s.stop.take().expect("running").send(()).expect("stop");
    for w in &mut streams {
        loop {
            match next(w).await {
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    assert_eq!(e.code(), Code::Unavailable);
                    assert_eq!(e.message(), "server shutting down");
                    break;
                }
                None => panic!("a stream ended without saying why"),
            }
        }
    }
    tokio::time::timeout(Duration::from_secs(2), &mut s.done)
        .await
        .expect("the server stops within 2 s")
        .expect("cleanly");
    eprintln!("shutdown with 20 watchers: {:?}", began.elapsed());
}

async fn board_stream(
    s: &Server,
    id: &str,
) -> (
    tokio::sync::mpsc::Sender<pb::BoardMessage>,
    Streaming<pb::BoardFeedback>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let mut feed = BoardServiceClient::new(s.channel.clone())
        .connect(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect("connect")
        .into_inner();
    tx.send(pb::BoardMessage {
        message_id: 1,
        board_time_ms: 0,
        kind: Some(pb::board_message::Kind::Bind(pb::BindBoard {
            game_id: id.into(),
            board_id: "b1".into(),
            resume_from_seq: 0,
        })),
    })
    .await
    .expect("bind");
    let bound = feed.next().await.expect("open").expect("feedback");
    assert!(
        matches!(bound.kind, Some(pb::board_feedback::Kind::Bound(_))),
        "{bound:?}"
    );
    (tx, feed)
}

/// The next event the board did not cause (the periodic clocks are skipped).
async fn unsolicited(feed: &mut Streaming<pb::BoardFeedback>) -> pb::game_event::Kind {
    loop {
        let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("within 5 s")
            .expect("open")
            .expect("feedback");
        assert_eq!(f.message_id, 0, "not an answer to a board message: {f:?}");
        match f.kind {
            Some(pb::board_feedback::Kind::Event(e)) => return e.kind.expect("kind"),
            Some(pb::board_feedback::Kind::Clock(_)) => continue,
            other => panic!("not an event: {other:?}"),
        }
    }
}

/// While a clock runs, a bound board is sent both clocks every second.
#[tokio::test]
async fn a_board_is_sent_the_running_clocks() {
    let s = start().await;
    let id = new_game(&s, "", "10m").await;
    let (_tx, mut feed) = board_stream(&s, &id).await;
    let f = tokio::time::timeout(Duration::from_secs(3), feed.next())
        .await
        .expect("within 3 s")
        .expect("open")
        .expect("feedback");
    let Some(pb::board_feedback::Kind::Clock(c)) = f.kind else {
        panic!("the clocks: {f:?}")
    };
    assert_eq!(c.running_side, pb::Side::White as i32);
    assert!(c.white_ms < 600_000 && c.black_ms == 600_000, "{c:?}");
}

/// A bound board hears its game's events that others caused: a digital move, an
/// arbiter's pause, the flag the timer records with nobody sending anything, and what an
/// arbiter records after the end (a warning, a corrected result): before, the board's
/// stream stopped hearing its game at the end.
#[tokio::test]
async fn a_board_hears_digital_moves_rulings_and_the_timer() {
    let s = start().await;
    let id = new_game(&s, SHUFFLE, "2s").await;
    let (_tx, mut feed) = board_stream(&s, &id).await;
    games(&s)
        .submit_move(submit(&id, "c1-d2"))
        .await
        .expect("move");
    let k = unsolicited(&mut feed).await;
    let pb::game_event::Kind::MovePlayed(m) = k else {
        panic!("the digital move: {k:?}")
    };
    assert_eq!(m.move_number, 1);
    // The board is told to copy the move (issue 38): c1 off, d2 on.
    let k = unsolicited(&mut feed).await;
    let pb::game_event::Kind::BoardOutOfStep(o) = k else {
        panic!("the board told to follow: {k:?}")
    };
    assert_eq!(o.to_clear, vec![30]);
    assert_eq!(
        o.to_fill.iter().map(|p| p.square).collect::<Vec<_>>(),
        vec![26]
    );
    assert!(matches!(
        unsolicited(&mut feed).await,
        pb::game_event::Kind::ClockPressed(_)
    ));
    ArbiterServiceClient::new(s.channel.clone())
        .pause_clocks(pb::PauseClocksRequest {
            game_id: id.clone(),
            reason: "light".into(),
            rule: String::new(),
        })
        .await
        .expect("pause");
    let k = unsolicited(&mut feed).await;
    assert!(
        matches!(k, pb::game_event::Kind::ClocksPaused(ref p) if p.clock.is_some()),
        "{k:?}"
    );
    ArbiterServiceClient::new(s.channel.clone())
        .resume_clocks(pb::ResumeClocksRequest {
            game_id: id.clone(),
            ..Default::default()
        })
        .await
        .expect("resume");
    assert!(matches!(
        unsolicited(&mut feed).await,
        pb::game_event::Kind::ClocksResumed(_)
    ));
    // Black has 2 s: the timer records the flag and the result.
    let k = unsolicited(&mut feed).await;
    let pb::game_event::Kind::FlagFell(f) = k else {
        panic!("the flag: {k:?}")
    };
    assert_eq!(f.side, pb::Side::Black as i32);
    let k = unsolicited(&mut feed).await;
    assert!(
        matches!(k, pb::game_event::Kind::GameFinished(ref g) if g.reason == pb::ResultReason::TimeForfeit as i32),
        "{k:?}"
    );
    ArbiterServiceClient::new(s.channel.clone())
        .issue_warning(pb::IssueWarningRequest {
            game_id: id.clone(),
            side: pb::Side::Black as i32,
            reason: "unsporting".into(),
            ..Default::default()
        })
        .await
        .expect("a warning after the end");
    let k = unsolicited(&mut feed).await;
    assert!(matches!(k, pb::game_event::Kind::WarningIssued(_)), "{k:?}");
}

/// A display rebuilds the score sheet with clock times from the stream alone: folding a
/// WatchGame stream gives GetGame's moves, field by field.
#[tokio::test]
async fn a_watch_stream_folds_into_the_score_sheet() {
    let s = start().await;
    let id = new_game(&s, "", "5m+3s").await;
    for mv in ["c3-d4", "f6-e5", "d4xf6", "g7xe5", "b2-c3", "h6-g5"] {
        tokio::time::sleep(Duration::from_millis(15)).await;
        games(&s).submit_move(submit(&id, mv)).await.expect(mv);
    }
    let game = get(&s, &id).await;
    let mut stream = watch(&s, &id, 0).await;
    let mut sheet: Vec<pb::PlayedMove> = Vec::new();
    while (sheet.len() as u32) < game.move_count {
        let e = next(&mut stream).await.expect("open").expect("event");
        if let Some(pb::game_event::Kind::MovePlayed(m)) = e.kind {
            let clock = m.clock.expect("a timed move carries the clocks");
            sheet.push(pb::PlayedMove {
                r#move: m.r#move,
                side: m.side,
                move_number: m.move_number,
                seq: e.seq,
                white_clock_ms: clock.white_ms,
                black_clock_ms: clock.black_ms,
                time_spent_ms: m.time_spent_ms,
                fen_after: m.fen_after,
            });
        }
    }
    assert_eq!(
        sheet, game.moves,
        "the folded stream is GetGame's score sheet"
    );
    assert!(
        sheet.iter().all(|m| m.time_spent_ms >= 10),
        "time spent is measured"
    );
    assert_eq!(sheet[5].move_number, 3);
    // After the increment: 5 minutes + 3 s minus what white spent.
    assert_eq!(
        sheet[0].white_clock_ms,
        300_000 + 3_000 - sheet[0].time_spent_ms
    );
}

/// The board's own timestamp is recorded in the event beside the server's, and comes back
/// on the board's stream and to a watcher that joins later.
#[tokio::test]
async fn a_board_timestamp_is_recorded_beside_the_servers() {
    let s = start().await;
    let id = new_game(&s, "", "10m").await;
    let (tx, mut feed) = board_stream(&s, &id).await;
    tx.send(pb::BoardMessage {
        message_id: 2,
        board_time_ms: 987_654,
        kind: Some(pb::board_message::Kind::Touch(pb::BoardSquare {
            square: 22,
        })),
    })
    .await
    .expect("touch");
    // The answer to message 2 (the clocks, sent every second, may come first).
    let f = loop {
        let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("within 5 s")
            .expect("open")
            .expect("feedback");
        if !matches!(f.kind, Some(pb::board_feedback::Kind::Clock(_))) {
            break f;
        }
    };
    assert_eq!(f.message_id, 2);
    let Some(pb::board_feedback::Kind::Event(e)) = f.kind else {
        panic!("the touch's event: {f:?}")
    };
    let Some(pb::game_event::Kind::PieceTouched(t)) = e.kind else {
        panic!("a touch: {e:?}")
    };
    assert_eq!(t.board_time_ms, 987_654);
    let mut stream = watch(&s, &id, e.seq - 1).await;
    let again = next(&mut stream).await.expect("open").expect("event");
    assert!(
        matches!(again.kind, Some(pb::game_event::Kind::PieceTouched(ref t)) if t.board_time_ms == 987_654),
        "{again:?}"
    );
}

/// A move made on the board carries the board's timestamp of the message that made it
/// (the release), on the board's own stream and to a watcher, as the touch, lift and
/// placement before it do; the opponent's digital move carries 0.
#[tokio::test]
async fn a_move_made_on_the_board_carries_the_release_s_timestamp() {
    let s = start().await;
    // Untimed: the board's move needs no press before the reply.
    let id = new_game(&s, "", "").await;
    let (tx, mut feed) = board_stream(&s, &id).await;
    use pb::board_message::Kind as Msg;
    let square = |n| pb::BoardSquare { square: n };
    // c3-d4: touch, lift, place and release c3 (22) on d4 (18).
    for (n, kind) in [
        (2, Msg::Touch(square(22))),
        (3, Msg::Lift(square(22))),
        (4, Msg::Place(square(18))),
        (5, Msg::Release(square(18))),
    ] {
        tx.send(pb::BoardMessage {
            message_id: n,
            board_time_ms: 4_999 + n as i64,
            kind: Some(kind),
        })
        .await
        .expect("send");
    }
    // The events the release caused, as the board is sent them.
    let played = loop {
        let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("within 5 s")
            .expect("open")
            .expect("feedback");
        if let Some(pb::board_feedback::Kind::Event(e)) = f.kind
            && let Some(pb::game_event::Kind::MovePlayed(m)) = e.kind
        {
            assert_eq!(f.message_id, 5, "the release made the move");
            break m;
        }
    };
    assert_eq!(played.source, pb::MoveSource::Board as i32);
    assert_eq!(played.board_time_ms, 5_004, "{played:?}");
    games(&s)
        .submit_move(submit(&id, "f6-g5"))
        .await
        .expect("f6-g5");
    // A watcher from the start sees the same, and 0 on the digital move.
    let mut stream = watch(&s, &id, 0).await;
    let mut moves = Vec::new();
    while moves.len() < 2 {
        let e = next(&mut stream).await.expect("open").expect("event");
        match e.kind {
            Some(pb::game_event::Kind::MovePlayed(m)) => moves.push(m),
            Some(pb::game_event::Kind::PieceTouched(t)) => assert_eq!(t.board_time_ms, 5_001),
            Some(pb::game_event::Kind::PieceLifted(l)) => assert_eq!(l.board_time_ms, 5_002),
            Some(pb::game_event::Kind::PiecePlaced(p)) => assert_eq!(p.board_time_ms, 5_003),
            _ => {}
        }
    }
    assert_eq!(
        (moves[0].board_time_ms, moves[1].board_time_ms),
        (5_004, 0),
        "{moves:?}"
    );
}

/// An irregularity on the board names the official position to restore.
#[tokio::test]
async fn an_irregularity_names_the_position_to_restore() {
    let s = start().await;
    let id = new_game(&s, "", "").await;
    let official = get(&s, &id).await.fen;
    let (tx, mut feed) = board_stream(&s, &id).await;
    for (n, kind) in [
        (
            2,
            pb::board_message::Kind::Lift(pb::BoardSquare { square: 22 }),
        ),
        (
            3,
            pb::board_message::Kind::Release(pb::BoardSquare { square: 13 }),
        ),
    ] {
        tx.send(pb::BoardMessage {
            message_id: n,
            board_time_ms: 0,
            kind: Some(kind),
        })
        .await
        .expect("send");
    }
    loop {
        let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("within 5 s")
            .expect("open")
            .expect("feedback");
        if let Some(pb::board_feedback::Kind::Event(e)) = f.kind
            && let Some(pb::game_event::Kind::IrregularityFlagged(i)) = e.kind
        {
            assert_eq!(i.official_fen, official, "c3 to a5 is not a move (RU 1.4)");
            assert_eq!(i.retake_with, 22);
            return;
        }
    }
}

/// Over the board stream: a board out of step reads the official position back with a
/// snapshot; the irregularity is resolved with no ruling (`IRREGULARITY_RULING_UNSPECIFIED`,
/// as the proto says: nobody ruled), and a refused message names its code as gRPC spells
/// it (`INVALID_ARGUMENT`).
#[tokio::test]
async fn a_snapshot_puts_the_board_back_and_a_refusal_names_its_code() {
    let s = start().await;
    let id = new_game(&s, "", "").await;
    let (tx, mut feed) = board_stream(&s, &id).await;
    let white: Vec<u32> = (21..=32).collect();
    let black: Vec<u32> = (1..=12).collect();
    for (n, kind) in [
        (
            2,
            pb::board_message::Kind::Lift(pb::BoardSquare { square: 22 }),
        ),
        (
            3,
            pb::board_message::Kind::Release(pb::BoardSquare { square: 13 }),
        ),
        (
            4,
            pb::board_message::Kind::Snapshot(pb::BoardOccupancy {
                white: white.clone(),
                black: black.clone(),
                ..Default::default()
            }),
        ),
        (
            5,
            pb::board_message::Kind::Snapshot(pb::BoardOccupancy {
                occupied: white.iter().chain(&black).copied().collect(),
                ..Default::default()
            }),
        ),
    ] {
        tx.send(pb::BoardMessage {
            message_id: n,
            board_time_ms: 0,
            kind: Some(kind),
        })
        .await
        .expect("send");
    }
    let mut ruled = None;
    loop {
        let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("within 5 s")
            .expect("open")
            .expect("feedback");
        match f.kind {
            Some(pb::board_feedback::Kind::Event(e)) => {
                if let Some(pb::game_event::Kind::IrregularityRuled(r)) = e.kind {
                    ruled = Some(r);
                }
            }
            Some(pb::board_feedback::Kind::Rejected(r)) => {
                assert_eq!(f.message_id, 5);
                assert_eq!(r.code, "INVALID_ARGUMENT");
                break;
            }
            _ => {}
        }
    }
    let ruled = ruled.expect("the irregularity was resolved");
    assert_eq!(ruled.ruling, pb::IrregularityRuling::Unspecified as i32);
    assert_eq!(ruled.reason, "the board was put back");
}
