//! The hub's tests: recovery and creation, watchers, memory (eviction, listings, limits).

use crate::game::{Actor, Command, GameSettings};
use crate::hub::*;
use crate::rules::Variant;
use crate::store::{MemoryStore, Stream};
use std::time::Duration;

/// A hub on a memory store of its own.
fn hub_with(config: HubConfig) -> Arc<Hub> {
    Hub::with_config(
        Arc::new(MemoryStore::new()),
        false,
        Arc::new(Metrics::new()),
        config,
    )
}

mod registry {
    use super::*;
    use crate::game::GameEvent;
    use crate::store::{GameRecord, StoreError};

    fn meta(id: &str) -> GameMeta {
        GameMeta {
            id: id.into(),
            event: "Open".into(),
            round: "1".into(),
            board: 1,
            ..GameMeta::default()
        }
    }

    fn arbiter() -> Actor {
        Actor::Arbiter("test".into())
    }

    /// A game row without events is what a crash between writing the row and the first
    /// event left behind before games were created in one write. It was never
    /// acknowledged: recovery skips it instead of refusing to start, and it is not found.
    #[tokio::test]
    async fn recovery_skips_a_game_whose_creation_never_completed() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        registry
            .create(
                meta("whole"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        store
            .create_game(GameRecord {
                game_id: "bare".into(),
                created_at_ms: 0,
                event: "Open".into(),
                round: "1".into(),
                board: 2,
                finished: false,
                metadata_json: serde_json::to_string(&meta("bare")).expect("json"),
                summary_json: String::new(),
            })
            .await
            .expect("bare row");

        let restarted = Hub::new(store, false);
        assert_eq!(restarted.recover().await.expect("recovery starts"), 1);
        assert!(restarted.game("whole").await.is_ok());
        assert!(matches!(
            restarted.game("bare").await,
            Err(HubError::NotFound(_))
        ));
    }

    async fn last_event(store: &MemoryStore, id: &str) -> GameEvent {
        let events = store.load(Stream::Game(id), 1).await.expect("log");
        serde_json::from_slice(&events.last().expect("an event").payload).expect("event")
    }

    /// The outage is charged when the game's settings ask for it, not only when the
    /// server's configuration does.
    #[tokio::test]
    async fn recovery_charges_the_outage_as_each_game_is_set() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        for (id, charged) in [("free", false), ("charged", true)] {
            let mut settings = GameSettings::new(Variant::Russian);
            settings.time_control = Some("10m+5s".parse().expect("time control"));
            settings.charge_outage = charged;
            registry
                .create(meta(id), settings, None, arbiter())
                .await
                .expect("created");
            registry
                .game(id)
                .await
                .expect("game")
                .command(arbiter(), Command::Start, None, |_, _| ())
                .await
                .expect("started");
        }
        // The outage must last at least a millisecond to be recorded.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let restarted = Hub::new(store.clone(), false);
        assert_eq!(restarted.recover().await.expect("recovered"), 2);
        for (id, charged) in [("free", false), ("charged", true)] {
            let e = last_event(&store, id).await;
            assert!(
                matches!(e.kind, crate::game::EventKind::Outage { charged: c, .. } if c == charged),
                "{id}: {:?}",
                e.kind
            );
        }
    }

    /// A restart gives the side on move back only the downtime: the outage starts at the
    /// stop (the hub marks it as it shuts down), not at the game's last event, so the time
    /// White thought while the first run served stays on White's clock.
    #[tokio::test]
    async fn the_outage_starts_when_the_previous_run_stopped() {
        let store = Arc::new(MemoryStore::new());
        let first = Hub::new(store.clone(), false);
        // Serving once recovery has loaded the (no) unfinished games.
        assert_eq!(first.recover().await.expect("recovered"), 0);
        let mut settings = GameSettings::new(Variant::Russian);
        settings.time_control = Some("10m".parse().expect("time control"));
        first
            .create(meta("g"), settings, None, arbiter())
            .await
            .expect("created");
        first
            .game("g")
            .await
            .expect("game")
            .command(arbiter(), Command::Start, None, |_, _| ())
            .await
            .expect("started");
        let started = last_event(&store, "g").await.at.mono_ms;
        // White thinks while the service runs, then it stops and is down a while.
        tokio::time::sleep(Duration::from_millis(300)).await;
        first.shutdown().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let second = Hub::new(store.clone(), false);
        assert_eq!(second.recover().await.expect("recovered"), 1);
        let e = last_event(&store, "g").await;
        let crate::game::EventKind::Outage {
            from_ms, until_ms, ..
        } = e.kind
        else {
            panic!("not an outage: {:?}", e.kind);
        };
        assert!(
            from_ms >= started + 300,
            "down from {from_ms}, started {started}"
        );
        assert!(until_ms - from_ms < 300, "{} ms down", until_ms - from_ms);
        let white = second
            .game("g")
            .await
            .expect("game")
            .read(|s, now| s.view(now).white_ms)
            .await
            .expect("read")
            .expect("a clock");
        assert!(
            white <= 600_000 - 300,
            "White's clock after the restart: {white}"
        );
    }

    /// A start that never served (its recovery did not load the games: here it never
    /// ran) leaves the previous run's mark, so the next start still counts the outage
    /// from there and does not charge the downtime before the failed start.
    #[tokio::test]
    async fn a_run_that_never_served_leaves_the_previous_mark() {
        use crate::store::EventStore;
        let store = Arc::new(MemoryStore::new());
        let mark = crate::store::AliveMark {
            at_ms: 1_000,
            boot: None,
        };
        store.mark_alive(&mark).await.expect("mark");
        let hub = Hub::new(store.clone(), false);
        tokio::time::sleep(Duration::from_millis(20)).await;
        hub.shutdown().await;
        assert_eq!(store.alive_mark(), Some(mark));
    }

    /// The game ended in its log but the finished flag was not written (a crash between
    /// the two writes): recovery writes the flag instead of resuming the game.
    #[tokio::test]
    async fn recovery_completes_a_lost_finished_flag() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        let g = registry.game("g").await.expect("game");
        g.command(arbiter(), Command::Start, None, |_, _| ())
            .await
            .expect("started");
        g.command(
            arbiter(),
            Command::Resign {
                side: crate::rules::Color::White,
            },
            None,
            |_, _| (),
        )
        .await
        .expect("resigned");
        let last = store.last_seq(Stream::Game("g")).await.expect("log");
        store
            .update_game("g", false, None)
            .await
            .expect("flag lost");

        let restarted = Hub::new(store.clone(), false);
        assert_eq!(restarted.recover().await.expect("recovered"), 0);
        assert!(store.unfinished_games().await.expect("list").is_empty());
        assert_eq!(
            store.last_seq(Stream::Game("g")).await.expect("log"),
            last,
            "nothing recorded for a finished game"
        );
    }

    /// Creating a game writes its row and its first event in one step.
    #[tokio::test]
    async fn a_created_game_has_its_first_event() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        assert_eq!(store.last_seq(Stream::Game("g")).await.expect("g"), 1);
        let again = registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await;
        assert!(matches!(
            again,
            Err(HubError::Store(StoreError::GameExists(_)))
        ));
        assert_eq!(store.last_seq(Stream::Game("g")).await.expect("g"), 1);
    }
}

mod watch {
    use super::*;
    use crate::game::EventKind;
    use crate::rules::Color;

    fn hub(watcher_queue: usize) -> Arc<Hub> {
        hub_with(HubConfig {
            command_queue: 8,
            watcher_queue,
            ..HubConfig::default()
        })
    }

    async fn started(hub: &Arc<Hub>, id: &str) -> GameHandle {
        let meta = GameMeta {
            id: id.into(),
            ..GameMeta::default()
        };
        let g = hub
            .create(
                meta,
                GameSettings::new(Variant::Russian),
                Some("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7"),
                Actor::Arbiter("a".into()),
            )
            .await
            .expect("created");
        g.command(Actor::Arbiter("a".into()), Command::Start, None, |_, _| ())
            .await
            .expect("started");
        g
    }

    /// Issue 37: watches that come and go on a game where nothing happens leave nothing on
    /// it. Before the broadcast channel (issue 39), each was a queue in its task's list
    /// that stayed until the game published or its timer fired: a burst of 10,000
    /// WatchEvent streams on a quiet round of 8 left 80,000 queues (+4 MB a burst, never
    /// given back). A receiver leaves its channel when dropped.
    #[tokio::test]
    async fn gone_watches_of_a_quiet_game_are_dropped() {
        let hub = hub(8);
        let g = started(&hub, "g").await;
        for _ in 0..1_000 {
            let w = g.watch_as(Audience::Live, 0).await.expect("watch");
            drop(w);
        }
        // Queued behind every registration: the task has handled them all.
        assert_eq!(
            g.watchers().await,
            0,
            "gone watches still on the game's channel"
        );
    }

    /// Issue 37: a crowd that leaves a quiet game together, with no watch coming after
    /// it, leaves nothing on the game's channel. Before, the last crowd's queues (up to
    /// the task's list's last doubling) stayed until the game published again: after a
    /// burst of streams, thousands of small blocks scattered over what the burst had
    /// freed, which glibc could not give back.
    #[tokio::test]
    async fn a_crowd_that_leaves_a_quiet_game_is_dropped() {
        let hub = hub(8);
        let g = started(&hub, "g").await;
        let stays = g.watch_as(Audience::Live, 0).await.expect("watch");
        let mut crowd = Vec::new();
        for _ in 0..1_000 {
            crowd.push(g.watch_as(Audience::Live, 0).await.expect("watch"));
        }
        assert_eq!(g.watchers().await, 1_001);
        // Leaving in two halves, the task running in between.
        let second = crowd.split_off(500);
        drop(crowd);
        tokio::task::yield_now().await;
        drop(second);
        assert_eq!(
            g.watchers().await,
            1,
            "only the watcher that stayed is on the game's channel"
        );
        drop(stays);
    }

    /// Issue 37: a watch whose registration is dropped half-way (a stream cancelled while
    /// it registers: a client that hangs up as its round stream catches up game by game)
    /// leaves nothing on the game, whether the task had subscribed it or not yet.
    /// Before, the queue stayed on the task's list for as long as the game ran, never
    /// marked gone: 2,000 to 4,000 a burst of 10,000 WatchEvent streams.
    #[tokio::test]
    async fn a_registration_dropped_half_way_leaves_nothing_on_the_game() {
        use std::future::Future;
        use std::task::Poll;

        let hub = hub(8);
        let g = started(&hub, "g").await;
        let stays = g.watch_as(Audience::Live, 0).await.expect("watch");
        for i in 0..200 {
            let mut watch = Box::pin(g.watch_as(Audience::Live, 0));
            let first = std::future::poll_fn(|cx| Poll::Ready(watch.as_mut().poll(cx))).await;
            assert!(first.is_pending(), "registered at once");
            if i % 2 == 0 {
                // Sent to the task, dropped before the task has seen it.
                drop(watch);
                g.read(|_, _| ()).await.expect("read");
            } else {
                // Sent, added by the task, dropped before it took the answer.
                g.read(|_, _| ()).await.expect("read");
                drop(watch);
            }
        }
        assert_eq!(
            g.watchers().await,
            1,
            "the game's channel has more than the watch that stays"
        );
        drop(stays);
    }

    async fn shuffle(g: &GameHandle, n: usize) {
        shuffle_from(g, 0, n).await;
        let plies = g.read(|s, _| s.moves().len()).await.expect("read");
        assert_eq!(plies, n);
    }

    async fn seq_of(item: Option<Result<WatchItem, HubError>>) -> WatchItem {
        item.expect("not over").expect("no error")
    }

    /// A watcher that does not keep up is not waited for: the channel moves on, it gets
    /// one `Resync` with the game as it stands, then every later event densely.
    #[tokio::test]
    async fn a_lagging_watcher_gets_a_resync_then_a_dense_stream() {
        let hub = hub(4);
        let g = started(&hub, "g").await;
        let mut w = g.watch(2).await.expect("watch");
        // 10 moves while the watcher reads nothing: more than the channel holds.
        shuffle(&g, 10).await;
        let last = g.read(|s, _| s.last_seq()).await.expect("read");
        match seq_of(w.next().await).await {
            WatchItem::Resync(snap) => {
                assert_eq!(snap.seq(), last);
                assert_eq!(snap.session.moves().len(), 10);
            }
            other => panic!("a resync first: {other:?}"),
        }
        shuffle_from(&g, 10, 2).await;
        for want in last + 1..=last + 2 {
            match seq_of(w.next().await).await {
                WatchItem::Event(e) => assert_eq!(e.event.seq, want),
                other => panic!("dense after the resync: {other:?}"),
            }
        }
        hub.shutdown().await;
        assert!(matches!(
            seq_of(w.next().await).await,
            WatchItem::End(WatchEnd::ShuttingDown)
        ));
        assert!(w.next().await.is_none(), "nothing after the end");
    }

    async fn shuffle_from(g: &GameHandle, from: usize, n: usize) {
        const CYCLE: [&str; 4] = ["c1-d2", "h8-g7", "d2-c1", "g7-h8"];
        for i in from..from + n {
            let side = if i % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            g.command(
                Actor::Player(side),
                Command::SubmitMove {
                    side,
                    notation: CYCLE[i % 4].into(),
                    offer_draw: false,
                },
                None,
                |_, _| (),
            )
            .await
            .expect("legal");
        }
    }

    /// A watcher that keeps up gets the history from the log (with the same notes a live
    /// event has) and then the live events; one that resumes close behind gets them
    /// from memory.
    #[tokio::test]
    async fn history_then_live_with_the_same_notes() {
        let hub = hub(1024);
        let g = started(&hub, "g").await;
        let mut live = g.watch(0).await.expect("watch");
        shuffle(&g, 6).await;
        let mut seen = Vec::new();
        // GameCreated, GameStarted and six moves (untimed: no presses).
        while seen.len() < 2 + 6 {
            match seq_of(live.next().await).await {
                WatchItem::Event(e) => seen.push(e),
                other => panic!("{other:?}"),
            }
        }
        let mut replayed = g.watch(0).await.expect("watch");
        for want in &seen {
            match seq_of(replayed.next().await).await {
                WatchItem::Event(e) => assert_eq!(&e, want, "history equals live"),
                other => panic!("{other:?}"),
            }
        }
        let mut close = g.watch(5).await.expect("watch");
        match seq_of(close.next().await).await {
            WatchItem::Event(e) => assert_eq!(e.event.seq, 6),
            other => panic!("{other:?}"),
        }
        let moves: Vec<u32> = seen
            .iter()
            .filter(|e| matches!(e.event.kind, EventKind::MovePlayed { .. }))
            .map(|e| e.note.move_number)
            .collect();
        assert_eq!(moves, [1, 1, 2, 2, 3, 3]);
    }

    /// The game ends: every watcher's stream ends after the final event.
    #[tokio::test]
    async fn watches_end_after_the_final_event() {
        let hub = hub(1024);
        let g = started(&hub, "g").await;
        let mut w = g.watch(2).await.expect("watch");
        g.command(
            Actor::Player(Color::White),
            Command::Resign { side: Color::White },
            None,
            |_, _| (),
        )
        .await
        .expect("resigned");
        assert!(matches!(
            seq_of(w.next().await).await,
            WatchItem::Event(e) if matches!(e.event.kind, EventKind::GameEnded { .. })
        ));
        assert!(matches!(
            seq_of(w.next().await).await,
            WatchItem::End(WatchEnd::Finished)
        ));
    }

    /// A command whose caller is gone still happens completely: durable, applied and
    /// published.
    #[tokio::test]
    async fn a_dropped_caller_cannot_cut_a_commit_short() {
        let hub = hub(1024);
        let g = started(&hub, "g").await;
        let mut w = g.watch(2).await.expect("watch");
        for _ in 0..50 {
            let call = g.command(
                Actor::Player(Color::White),
                Command::SubmitMove {
                    side: Color::White,
                    notation: "c1-d2".into(),
                    offer_draw: false,
                },
                None,
                |_, _| (),
            );
            // Polled once (queued), then dropped.
            let _ = tokio::time::timeout(Duration::from_micros(1), call).await;
        }
        let (seq, plies) = g
            .read(|s, _| (s.last_seq(), s.moves().len()))
            .await
            .expect("read");
        let log = hub.store().last_seq(Stream::Game("g")).await.expect("log");
        assert_eq!(seq, log, "the state is the log");
        assert!(plies <= 1, "at most the one legal move happened");
        for want in 3..=seq {
            match seq_of(w.next().await).await {
                WatchItem::Event(e) => assert_eq!(e.event.seq, want),
                other => panic!("{other:?}"),
            }
        }
    }
}

mod memory {
    use super::*;
    use crate::game::GameSummary;
    use crate::rules::Color;
    use crate::store::GameFilter;

    use super::hub_with as hub;

    async fn finished(hub: &Arc<Hub>, id: &str) -> GameHandle {
        let meta = GameMeta {
            id: id.into(),
            event: "Open".into(),
            round: "1".into(),
            ..GameMeta::default()
        };
        let g = hub
            .create(
                meta,
                GameSettings::new(Variant::Russian),
                None,
                Actor::Arbiter("a".into()),
            )
            .await
            .expect("created");
        for cmd in [Command::Start, Command::Resign { side: Color::Black }] {
            g.command(Actor::Arbiter("a".into()), cmd, None, |_, _| ())
                .await
                .expect("accepted");
        }
        g
    }

    async fn until_empty(hub: &Hub) {
        for _ in 0..400 {
            if hub.loaded() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("{} games still in memory", hub.loaded());
    }

    /// A finished game nobody watches leaves memory once idle; its summary row answers
    /// listings; a request loads it again, and a handle taken before still works.
    #[tokio::test]
    async fn finished_idle_games_leave_memory_and_come_back_on_demand() {
        let hub = hub(HubConfig {
            evict_after: Duration::from_millis(20),
            ..HubConfig::default()
        });
        let old = finished(&hub, "g").await;
        until_empty(&hub).await;
        let listed = hub.listing(&GameFilter::default()).await.expect("list");
        match listed.as_slice() {
            [Listed::Stored(meta, summary)] => {
                assert_eq!(meta.id, "g");
                assert!(summary.view.result.is_some());
                assert_eq!(summary.view.last_seq, 3);
            }
            other => panic!("the stored summary, no replay: {other:?}"),
        }
        assert_eq!(hub.loaded(), 0, "listing loaded nothing");
        // A handle from before the eviction reaches the game loaded anew.
        let seq = old.read(|s, _| s.last_seq()).await.expect("read");
        assert_eq!(seq, 3);
        assert_eq!(hub.loaded(), 1);
    }

    /// 5,000 finished games are listed from their summary rows: no session is loaded,
    /// so memory does not grow with the games listed.
    #[tokio::test]
    async fn listing_5000_finished_games_loads_none() {
        let hub = hub(HubConfig {
            evict_after: Duration::ZERO,
            ..HubConfig::default()
        });
        for i in 0..5000 {
            finished(&hub, &format!("g{i}")).await;
        }
        until_empty(&hub).await;
        let before = resident_kib();
        let listed = hub.listing(&GameFilter::default()).await.expect("list");
        assert_eq!(listed.len(), 5000);
        assert!(listed.iter().all(|l| matches!(l, Listed::Stored(..))));
        assert_eq!(hub.loaded(), 0, "no game was loaded to list it");
        drop(listed);
        let after = resident_kib();
        eprintln!(
            "listing 5000 finished games: RSS {before:?} KiB -> {after:?} KiB, 0 games loaded"
        );
    }

    /// A bound board's watch (one that goes on past the end) reaching a finished game's
    /// task in the instant the task leaves memory is passed on to the game loaded anew,
    /// and hears what is recorded after: before, the departing task registered it and
    /// ended, and the board never heard of the game again. The hook sends the watch on a
    /// handle taken before the eviction, after the task found itself idle and left the
    /// map, before it closed its channel: the window of the race, made deterministic.
    #[tokio::test]
    async fn a_board_watch_reaching_a_leaving_task_goes_to_the_game_loaded_anew() {
        use crate::game::{ArbiterAction, EventKind, Given};
        use tokio::sync::oneshot;

        let hub = hub(HubConfig {
            evict_after: Duration::from_millis(20),
            ..HubConfig::default()
        });
        let (reply, started) = oneshot::channel();
        *hub.on_evict.lock().expect("hook") = Some(Box::new(move |h: &GameHandle| {
            h.tx.try_send(task::Msg::Watch {
                from_seq: 3,
                public: false,
                through_end: true,
                reply,
            })
            .expect("queued behind the eviction");
        }));
        let old = finished(&hub, "g").await;
        // Answered once the game is idle (20 ms) and the task left the map with the
        // watch queued behind it.
        let start = tokio::time::timeout(Duration::from_secs(2), started)
            .await
            .expect("answered")
            .expect("registered");
        let mut board = Watch::new(old, hub.store.clone(), 3, start, true, None);
        let warned = ArbiterAction::Warn { side: Color::White };
        let given = Given {
            reason: Some("unsporting".into()),
            rule: None,
        };
        hub.game("g")
            .await
            .expect("loaded anew")
            .command(
                Actor::Arbiter("a".into()),
                Command::Arbiter(warned, given),
                None,
                |_, _| (),
            )
            .await
            .expect("a warning after the end");
        let heard = tokio::time::timeout(Duration::from_secs(2), board.next())
            .await
            .expect("the board hears the game loaded anew, not a task that is gone");
        match heard {
            Some(Ok(WatchItem::Event(e))) => {
                assert_eq!(e.event.seq, 4);
                assert!(matches!(e.event.kind, EventKind::Warning { .. }), "{e:?}");
            }
            other => panic!("the warning: {other:?}"),
        }
    }

    /// Resident memory from `/proc/self/status` (Linux), for the report.
    fn resident_kib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Past the limit, loading one more game is refused with a clear error, and nothing
    /// is created.
    #[tokio::test]
    async fn the_memory_limit_refuses_one_game_more() {
        let hub = hub(HubConfig {
            max_loaded: 2,
            ..HubConfig::default()
        });
        finished(&hub, "a").await;
        finished(&hub, "b").await;
        let third = hub
            .create(
                GameMeta {
                    id: "c".into(),
                    ..GameMeta::default()
                },
                GameSettings::new(Variant::Russian),
                None,
                Actor::Arbiter("a".into()),
            )
            .await;
        assert!(matches!(third, Err(HubError::Full(2))), "{third:?}");
        assert!(
            hub.store().get_game("c").await.expect("store").is_none(),
            "a game refused for want of room is not written (before, it was durable and \
             unreachable until a restart)"
        );
    }

    /// Loads whose callers go away (a deadline, a disconnect) while they wait for the
    /// game's gate or while it loads leave no gate behind: before, each cancelled load
    /// left its gate in the hub's map for ever.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancelled_loads_leave_no_gate_behind() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Arc::new(crate::store::SqliteStore::open(dir.path().join("a.db")).expect("db"));
        let first = Hub::new(store.clone(), false);
        finished(&first, "g").await;
        first.shutdown().await;
        let hub = Hub::new(store, false);
        assert_eq!(hub.recover().await.expect("recovered"), 0);
        for _ in 0..200 {
            // Polled once, then dropped.
            let _ = futures_util::FutureExt::now_or_never(hub.game("g"));
        }
        for _ in 0..400 {
            if hub.loading_gates().is_empty() && hub.loaded() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(hub.loading_gates().len(), 0, "no gate left");
        assert_eq!(hub.loaded(), 1, "the game loaded once");
    }

    /// A creation whose caller goes away while the game is written still completes: the
    /// game is durable, in memory and announced to the round streams. Before, a caller
    /// gone between the write and the task left a game that was durable but neither
    /// loaded nor announced.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_creation_whose_caller_left_is_loaded_and_announced() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Arc::new(crate::store::SqliteStore::open(dir.path().join("a.db")).expect("db"));
        let hub = Hub::new(store, false);
        let mut announced = hub.subscribe_created();
        for i in 0..20 {
            let call = hub.create(
                GameMeta {
                    id: format!("g{i}"),
                    event: "Open".into(),
                    ..GameMeta::default()
                },
                GameSettings::new(Variant::Russian),
                None,
                Actor::Arbiter("a".into()),
            );
            let _ = tokio::time::timeout(Duration::from_micros(1), call).await;
        }
        let written = || async {
            let filter = crate::store::GameFilter::default();
            hub.store().list_games(&filter).await.expect("list").len()
        };
        for _ in 0..400 {
            if written().await == 20 && hub.loaded() == 20 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(written().await, 20, "every creation completed");
        assert_eq!(hub.loaded(), 20, "every game written is in memory");
        let mut heard = 0;
        while announced.try_recv().is_ok() {
            heard += 1;
        }
        assert_eq!(heard, 20, "every game written was announced");
    }

    /// The finished flag and the summary are written with the events that finish the
    /// game, in the same step.
    #[tokio::test]
    async fn the_row_follows_the_log() {
        let hub = hub(HubConfig::default());
        finished(&hub, "g").await;
        let row = hub.store().get_game("g").await.expect("row").expect("game");
        assert!(row.finished);
        let summary: GameSummary = serde_json::from_str(&row.summary_json).expect("summary");
        assert_eq!(
            summary.view.last_seq,
            hub.store().last_seq(Stream::Game("g")).await.expect("seq")
        );
    }
}
