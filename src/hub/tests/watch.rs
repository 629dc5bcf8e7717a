//! Watchers: dropped watches, lagging watchers, history then live, the end.

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
