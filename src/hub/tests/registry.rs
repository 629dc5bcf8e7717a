//! Recovery and creation: the outage charged at a restart, the alive mark, lost flags,
//! a created game's first event.

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
