//! `WatchEvent`: every game of a round on one stream with one opaque cursor. Over a real
//! server: concurrent moves in several games arrive in order per game with no gap and no
//! duplicate, across a reconnect with the cursor; a game created in the round mid-stream
//! joins it, one of another round does not. In-process (the hub's sizes set small): a
//! lagging display gets `Resync` and its cursor still resumes; a stream on a round with
//! no game yet waits for one; a finished round ends; bad cursors are refused.

use crate::common::server::TestServer;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::Api;
use draughts_arbiter::api::auth::Tokens;
use draughts_arbiter::api::frame::BroadcastService;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::game_service_server::GameService;
use draughts_arbiter::hub::metrics::Metrics;
use draughts_arbiter::hub::{Hub, HubConfig};
use draughts_arbiter::store::MemoryStore;
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

/// Russian kings that can shuffle for ever (repetition only claimable).
const SHUFFLE: &str = "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7";
const CYCLE: [&str; 4] = ["c1-d2", "h8-g7", "d2-c1", "g7-h8"];

fn create(id: &str, round: &str, board: u32) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        game_id: id.into(),
        variant: pb::Variant::Russian as i32,
        time_control: "10m+5s".into(),
        event: "Open".into(),
        round: round.into(),
        board,
        start_fen: SHUFFLE.into(),
        ..Default::default()
    }
}

fn submit(id: &str, ply: usize) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: id.into(),
        r#move: CYCLE[ply % 4].into(),
        ..Default::default()
    }
}

fn watch_round(round: &str) -> pb::WatchEventRequest {
    pb::WatchEventRequest {
        event: "Open".into(),
        round: round.into(),
        ..Default::default()
    }
}

fn games(c: &Channel) -> GameServiceClient<Channel> {
    GameServiceClient::new(c.clone())
}

async fn new_game(c: &Channel, id: &str, round: &str, board: u32) {
    games(c)
        .create_game(create(id, round, board))
        .await
        .expect("create");
    games(c)
        .start_game(pb::StartGameRequest {
            game_id: id.into(),
            expected_seq: 0,
        })
        .await
        .expect("start");
}

/// What a display received, per game: the seqs in arrival order.
#[derive(Default)]
struct Seen {
    seqs: BTreeMap<String, Vec<u64>>,
    cursor: String,
    resyncs: usize,
}

impl Seen {
    fn take(&mut self, e: &pb::GameEvent) {
        assert!(
            !e.cursor.is_empty(),
            "every WatchEvent message has a cursor: {e:?}"
        );
        self.cursor.clone_from(&e.cursor);
        if matches!(e.kind, Some(pb::game_event::Kind::Resync(_))) {
            self.resyncs += 1;
        }
        self.seqs.entry(e.game_id.clone()).or_default().push(e.seq);
    }

    fn last(&self, id: &str) -> u64 {
        self.seqs
            .get(id)
            .and_then(|s| s.last().copied())
            .unwrap_or(0)
    }

    /// Every game's seqs dense from 1 to `last`, no gap, no duplicate.
    fn dense(&self, id: &str, last: u64) {
        let got = self.seqs.get(id).cloned().unwrap_or_default();
        assert_eq!(got, (1..=last).collect::<Vec<_>>(), "game {id}");
    }
}

async fn next<S, T>(s: &mut S) -> Option<Result<pb::GameEvent, Status>>
where
    S: Stream<Item = Result<T, Status>> + Unpin,
    T: Into<pb::GameEvent>,
{
    tokio::time::timeout(Duration::from_secs(10), s.next())
        .await
        .expect("a message or the end within 10 s")
        .map(|r| r.map(Into::into))
}

/// Four games move at once while a display follows the round; it drops its stream
/// half-way and comes back with its last cursor while the moves go on; a fifth game
/// created in the round joins, one created in round 2 does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_on_one_stream_resumes_with_its_cursor_across_a_reconnect() {
    let s = TestServer::start("").await;
    let ids: Vec<String> = (1..=4).map(|b| format!("r1-b{b}")).collect();
    for (b, id) in ids.iter().enumerate() {
        new_game(&s.channel, id, "1", b as u32 + 1).await;
    }
    const PLIES: usize = 24;
    let mut broadcast = BroadcastServiceClient::new(s.channel.clone());
    let mut stream = broadcast
        .watch_event(watch_round("1"))
        .await
        .expect("watch")
        .into_inner();
    let movers: Vec<_> = ids
        .iter()
        .map(|id| {
            let (c, id) = (s.channel.clone(), id.clone());
            tokio::spawn(async move {
                for ply in 0..PLIES {
                    games(&c).submit_move(submit(&id, ply)).await.expect("move");
                    tokio::time::sleep(Duration::from_millis(3)).await;
                }
            })
        })
        .collect();
    let mut seen = Seen::default();
    // Half-way through (by messages), the display drops its stream.
    while seen.seqs.values().map(Vec::len).sum::<usize>() < 40 {
        let e = next(&mut stream).await.expect("open").expect("event");
        seen.take(&e);
    }
    drop(stream);
    let dropped_at = seen.cursor.clone();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let mut stream = broadcast
        .watch_event(pb::WatchEventRequest {
            from_cursor: dropped_at,
            ..watch_round("1")
        })
        .await
        .expect("resume")
        .into_inner();
    for m in movers {
        m.await.expect("mover");
    }
    new_game(&s.channel, "r2-b1", "2", 1).await;
    new_game(&s.channel, "r1-b5", "1", 5).await;
    let mut last = BTreeMap::new();
    for id in ids.iter().chain([&"r1-b5".to_string()]) {
        let g = games(&s.channel)
            .get_game(pb::GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .expect("get")
            .into_inner();
        last.insert(id.clone(), g.last_seq);
    }
    while last.iter().any(|(id, l)| seen.last(id) < *l) {
        let e = next(&mut stream).await.expect("open").expect("event");
        assert_ne!(e.game_id, "r2-b1", "a game of another round");
        seen.take(&e);
    }
    for (id, l) in &last {
        seen.dense(id, *l);
    }
    assert!(
        last["r1-b1"] >= 2 + PLIES as u64,
        "created, started, the moves"
    );
    assert_eq!(seen.resyncs, 0);
    // The late game arrived from its start: created (seq 1) then started.
    assert_eq!(seen.seqs["r1-b5"], vec![1, 2]);
    drop(stream);
    s.stop().await;
}

fn in_process(watcher_queue: usize) -> (Arc<Hub>, Api) {
    let hub = Hub::with_config(
        Arc::new(MemoryStore::new()),
        false,
        Arc::new(Metrics::new()),
        HubConfig {
            watcher_queue,
            ..HubConfig::default()
        },
    );
    let api = Api::new(hub.clone(), Arc::new(Tokens::new(&[])));
    (hub, api)
}

async fn in_process_game(api: &Api, id: &str, round: &str) {
    api.create_game(Request::new(create(id, round, 1)))
        .await
        .expect("create");
    api.start_game(Request::new(pb::StartGameRequest {
        game_id: id.into(),
        expected_seq: 0,
    }))
    .await
    .expect("start");
}

/// A display that does not read while a game moves on past its queue gets one
/// `Resync` for that game (its state at the seq the message carries), then the game
/// densely again; its cursor after the resync resumes after it.
#[tokio::test]
async fn a_lagging_display_gets_a_resync_and_its_cursor_still_resumes() {
    let (_hub, api) = in_process(4);
    in_process_game(&api, "a", "1").await;
    in_process_game(&api, "b", "1").await;
    let mut stream = api
        .watch_event(Request::new(watch_round("1")))
        .await
        .expect("watch")
        .into_inner();
    // Read what there is now (history) so the stream's watches are live.
    let mut seen = Seen::default();
    while seen.last("a") < 2 || seen.last("b") < 2 {
        let e = next(&mut stream).await.expect("open").expect("event");
        seen.take(&e);
    }
    for ply in 0..12 {
        api.submit_move(Request::new(submit("a", ply)))
            .await
            .expect("move");
    }
    api.submit_move(Request::new(submit("b", 0)))
        .await
        .expect("move");
    let last = |id: &str| {
        let api = api.clone();
        let id = id.to_string();
        async move {
            api.get_game(Request::new(pb::GetGameRequest { game_id: id }))
                .await
                .expect("get")
                .into_inner()
                .last_seq
        }
    };
    let (last_a, last_b) = (last("a").await, last("b").await);
    assert!(last_a >= 14, "12 moves after created and started");
    let mut resync_at = None;
    while seen.last("a") < last_a || seen.last("b") < last_b {
        let e = next(&mut stream).await.expect("open").expect("event");
        if let Some(pb::game_event::Kind::Resync(r)) = &e.kind {
            assert_eq!(e.game_id, "a");
            let game = r.game.as_ref().expect("the game");
            assert_eq!(game.last_seq, e.seq, "the snapshot is at the message's seq");
            resync_at = Some(e.seq);
        } else if let Some(at) = resync_at
            && e.game_id == "a"
        {
            assert_eq!(e.seq, seen.last("a") + 1, "dense after the resync");
            let _ = at;
        }
        seen.take(&e);
    }
    assert_eq!(seen.resyncs, 1, "one resync for the game that overflowed");
    seen.dense("b", last_b);
    // The cursor of the last message: nothing more to send until the next move.
    let e = after_cursor(&api, &seen.cursor, "1", submit("b", 1)).await;
    assert_eq!(
        (e.game_id.as_str(), e.seq),
        ("b", last_b + 1),
        "exactly after the cursor"
    );
}

/// The first message of a `WatchEvent` stream of `round` resumed at `cursor`, after
/// `then` (a move) was made.
async fn after_cursor(
    api: &Api,
    cursor: &str,
    round: &str,
    then: pb::SubmitMoveRequest,
) -> pb::GameEvent {
    let mut resumed = api
        .watch_event(Request::new(pb::WatchEventRequest {
            from_cursor: cursor.to_string(),
            ..watch_round(round)
        }))
        .await
        .expect("resume")
        .into_inner();
    api.submit_move(Request::new(then)).await.expect("move");
    next(&mut resumed).await.expect("open").expect("event")
}

/// Games that join a stream out of the order a listing gives them ("z" created before
/// "a" in the same millisecond: the listing puts "a" first) resume at their own seqs
/// from the stream's cursor: before, the cursor was matched in list order and "z" came
/// again from its beginning (a display got `GameCreated`, `GameStarted` and every move
/// twice). Paused time: every creation has the same millisecond.
#[tokio::test(start_paused = true)]
async fn games_that_joined_out_of_listing_order_resume_without_duplicates() {
    let (_hub, api) = in_process(1024);
    in_process_game(&api, "m", "5").await;
    let mut stream = api
        .watch_event(Request::new(watch_round("5")))
        .await
        .expect("watch")
        .into_inner();
    let mut seen = Seen::default();
    while seen.last("m") < 2 {
        seen.take(&next(&mut stream).await.expect("open").expect("event"));
    }
    for id in ["z", "a"] {
        in_process_game(&api, id, "5").await;
        while seen.last(id) < 2 {
            seen.take(&next(&mut stream).await.expect("open").expect("event"));
        }
    }
    api.submit_move(Request::new(submit("z", 0)))
        .await
        .expect("move");
    let z = api
        .get_game(Request::new(pb::GetGameRequest {
            game_id: "z".into(),
        }))
        .await
        .expect("get")
        .into_inner()
        .last_seq;
    while seen.last("z") < z {
        seen.take(&next(&mut stream).await.expect("open").expect("event"));
    }
    drop(stream);
    let e = after_cursor(&api, &seen.cursor, "5", submit("a", 0)).await;
    assert_eq!(
        (e.game_id.as_str(), e.seq),
        ("a", 3),
        "the next event after the cursor, nothing again: {e:?}"
    );
}

/// A display opened before the round's games exist waits for them; the stream ends
/// once every game on it has finished.
#[tokio::test]
async fn an_empty_round_waits_for_its_games_and_a_finished_round_ends() {
    let (_hub, api) = in_process(1024);
    let mut stream = api
        .watch_event(Request::new(watch_round("7")))
        .await
        .expect("watch")
        .into_inner();
    assert!(
        tokio::time::timeout(Duration::from_millis(100), stream.next())
            .await
            .is_err(),
        "no game yet: the stream waits"
    );
    in_process_game(&api, "late", "7").await;
    let e = next(&mut stream).await.expect("open").expect("event");
    assert_eq!((e.game_id.as_str(), e.seq), ("late", 1));
    api.resign(Request::new(pb::ResignRequest {
        game_id: "late".into(),
        side: pb::Side::White as i32,
        expected_seq: 0,
    }))
    .await
    .expect("resign");
    let mut last = None;
    while let Some(item) = next(&mut stream).await {
        last = Some(item.expect("event"));
    }
    assert!(
        matches!(
            last.and_then(|e| e.kind),
            Some(pb::game_event::Kind::GameFinished(_))
        ),
        "the game's end, then the stream's"
    );
}

/// A cursor is refused (INVALID_ARGUMENT, naming `from_cursor`) when it is not one, when
/// it belongs to another round, or when `from_seq` or `resume_from` come with it.
#[tokio::test]
async fn bad_cursors_are_refused() {
    let (_hub, api) = in_process(1024);
    in_process_game(&api, "a", "1").await;
    let mut stream = api
        .watch_event(Request::new(watch_round("1")))
        .await
        .expect("watch")
        .into_inner();
    let cursor = next(&mut stream)
        .await
        .expect("open")
        .expect("event")
        .cursor;
    let refused = |r: pb::WatchEventRequest| {
        let api = api.clone();
        async move {
            match api.watch_event(Request::new(r)).await {
                Ok(_) => panic!("accepted"),
                Err(e) => e,
            }
        }
    };
    let cases = [
        pb::WatchEventRequest {
            from_cursor: "not-a-cursor!".into(),
            ..watch_round("1")
        },
        pb::WatchEventRequest {
            from_cursor: cursor.clone(),
            ..watch_round("2")
        },
        pb::WatchEventRequest {
            from_cursor: cursor.clone(),
            from_seq: 3,
            ..watch_round("1")
        },
        pb::WatchEventRequest {
            from_cursor: cursor.clone(),
            resume_from: [("a".to_string(), 1)].into(),
            ..watch_round("1")
        },
    ];
    for case in cases {
        let e = refused(case.clone()).await;
        assert_eq!(e.code(), Code::InvalidArgument, "{case:?}: {e:?}");
        assert!(e.message().starts_with("from_cursor: "), "{}", e.message());
    }
    // The cursor itself is good.
    api.watch_event(Request::new(pb::WatchEventRequest {
        from_cursor: cursor,
        ..watch_round("1")
    }))
    .await
    .expect("resume");
}

/// The value of a gauge or counter line of the metrics page.
fn metric(hub: &Hub, line: &str) -> String {
    hub.metrics()
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(line).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no {line} on the metrics page"))
}

/// Displays opened at different moments and from different places (the start, a cursor,
/// `from_seq`) on one round while its games move and a game joins: they share one feed
/// (one per round and audience), each receives every game densely from where it asked,
/// and once all have everything they stand in the same place (the same cursor), whatever
/// path each took. The feed stops once no stream is on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn displays_share_the_round_feed_and_each_stays_dense_from_where_it_asked() {
    let (hub, api) = in_process(1024);
    for id in ["a", "b", "c"] {
        in_process_game(&api, id, "1").await;
    }
    const PLIES: usize = 24;
    let movers: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|id| {
            let api = api.clone();
            tokio::spawn(async move {
                for ply in 0..PLIES {
                    api.submit_move(Request::new(submit(id, ply)))
                        .await
                        .expect("move");
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
        })
        .collect();
    let open = |r: pb::WatchEventRequest| {
        let api = api.clone();
        async move {
            api.watch_event(Request::new(r))
                .await
                .expect("watch")
                .into_inner()
        }
    };
    // (stream, what it saw, the seq of each game it starts after)
    let mut displays = Vec::new();
    let mut first = open(watch_round("1")).await;
    let mut seen = Seen::default();
    for _ in 0..20 {
        seen.take(&next(&mut first).await.expect("open").expect("event"));
    }
    let at_cursor: BTreeMap<String, u64> = ["a", "b", "c"]
        .iter()
        .map(|id| (id.to_string(), seen.last(id)))
        .collect();
    let cursor = seen.cursor.clone();
    displays.push((first, seen, BTreeMap::new()));
    for i in 0..6 {
        let (request, from) = match i % 3 {
            0 => (watch_round("1"), BTreeMap::new()),
            1 => (
                pb::WatchEventRequest {
                    from_cursor: cursor.clone(),
                    ..watch_round("1")
                },
                at_cursor.clone(),
            ),
            _ => (
                pb::WatchEventRequest {
                    from_seq: 2,
                    ..watch_round("1")
                },
                // Every game listed when it opens (the fourth joined at i = 3).
                ["a", "b", "c", "d"][..if i > 3 { 4 } else { 3 }]
                    .iter()
                    .map(|id| (id.to_string(), 2))
                    .collect(),
            ),
        };
        displays.push((open(request).await, Seen::default(), from));
        if i == 3 {
            // A game joins the round while the displays follow it.
            in_process_game(&api, "d", "1").await;
            for ply in 0..4 {
                api.submit_move(Request::new(submit("d", ply)))
                    .await
                    .expect("move");
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        metric(&hub, "arbiter_round_feeds"),
        "1",
        "one feed for the round and the audience"
    );
    for m in movers {
        m.await.expect("mover");
    }
    let mut last = BTreeMap::new();
    for id in ["a", "b", "c", "d"] {
        let g = api
            .get_game(Request::new(pb::GetGameRequest { game_id: id.into() }))
            .await
            .expect("get")
            .into_inner();
        last.insert(id.to_string(), g.last_seq);
    }
    let mut cursors = Vec::new();
    for (n, (mut stream, mut seen, from)) in displays.into_iter().enumerate() {
        while last.iter().any(|(id, l)| seen.last(id) < *l) {
            seen.take(&next(&mut stream).await.expect("open").expect("event"));
        }
        assert_eq!(seen.resyncs, 0, "display {n}");
        for (id, l) in &last {
            let start = from.get(id).copied().unwrap_or(0);
            assert_eq!(
                seen.seqs[id],
                (start + 1..=*l).collect::<Vec<_>>(),
                "display {n}, game {id}: dense from {start}"
            );
        }
        cursors.push(seen.cursor.clone());
    }
    assert!(
        cursors.windows(2).all(|w| w[0] == w[1]),
        "every display stands in the same place at the end"
    );
    // Nobody left on the feed: it stops.
    let mut stopped = false;
    for _ in 0..50 {
        if metric(&hub, "arbiter_round_feeds") == "0" {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(stopped, "the feed stops once no stream is on it");
}
