//! Memory: eviction, listings without loading, the memory limit, loading gates, the row
//! following the log.

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
    eprintln!("listing 5000 finished games: RSS {before:?} KiB -> {after:?} KiB, 0 games loaded");
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
