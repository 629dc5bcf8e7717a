//! The hub under random interleavings: legal and refused moves, callers that give up
//! after queueing their command, watchers joining (from any seq), lagging, reading and
//! leaving, time passing (clock flags fall by the timer), and restarts over the same
//! log. After every step the log, the live state and each watcher's folded view agree,
//! and no watcher ever sees a gap or a duplicate. tokio's clock is paused, so time is
//! exact and the runs are reproducible.

use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::game::{Actor, Command, GameSettings};
use draughts_arbiter::hub::metrics::Metrics;
use draughts_arbiter::hub::{GameMeta, Hub, HubConfig, Watch, WatchEnd, WatchItem};
use draughts_arbiter::notation::movetext::write_move_full;
use draughts_arbiter::rules::Variant;
use draughts_arbiter::store::{EventStore, MemoryStore, Stream};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// The `i`-th legal move of the side to move (modulo their number).
    Move(u16),
    /// A move sent by a caller that gives up once it is queued.
    GiveUp(u16),
    /// A move by the side not to move (refused; nothing changes).
    WrongSide(u16),
    /// A watcher joins from this seq (clamped to the log).
    Join(u8),
    /// Watcher `i` reads up to `n` items.
    Read(u8, u8),
    /// Watcher `i` leaves.
    Leave(u8),
    /// Time passes (ms); a flag may fall.
    Wait(u32),
    /// The server restarts over the same log.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => any::<u16>().prop_map(Op::Move),
        3 => any::<u16>().prop_map(Op::GiveUp),
        2 => any::<u16>().prop_map(Op::WrongSide),
        3 => any::<u8>().prop_map(Op::Join),
        5 => (any::<u8>(), 1u8..40).prop_map(|(i, n)| Op::Read(i, n)),
        1 => any::<u8>().prop_map(Op::Leave),
        2 => (0u32..90_000).prop_map(Op::Wait),
        1 => Just(Op::Restart),
    ]
}

/// A watcher and what it has folded so far.
struct Follower {
    watch: Watch,
    /// The last seq it holds (from the events, or a resync's snapshot).
    last: u64,
    ended: bool,
}

impl Follower {
    /// Reads up to `n` items that are ready; checks density.
    async fn read(&mut self, n: u8) {
        for _ in 0..n {
            if self.ended {
                return;
            }
            let item = tokio::time::timeout(Duration::from_millis(1), self.watch.next()).await;
            let Ok(item) = item else {
                return; // nothing ready
            };
            match item.expect("not read after its end").expect("no error") {
                WatchItem::Event(e) => {
                    assert_eq!(e.event.seq, self.last + 1, "no gap, no duplicate");
                    self.last = e.event.seq;
                }
                WatchItem::Resync(snap) => {
                    assert!(snap.seq() >= self.last, "a resync never goes back");
                    self.last = snap.seq();
                }
                WatchItem::End(WatchEnd::Finished | WatchEnd::ShuttingDown) => self.ended = true,
            }
        }
    }
}

fn hub(store: &Arc<MemoryStore>) -> Arc<Hub> {
    let store: Arc<dyn EventStore> = store.clone();
    Hub::with_config(
        store,
        false,
        Arc::new(Metrics::new()),
        HubConfig {
            watcher_queue: 8,
            ..HubConfig::default()
        },
    )
}

async fn run(ops: Vec<Op>) {
    let store = Arc::new(MemoryStore::new());
    let mut hub = hub(&store);
    let arbiter = Actor::Arbiter("a".into());
    let mut settings = GameSettings::new(Variant::Russian);
    settings.time_control = Some("1m+1s".parse().expect("time control"));
    let meta = GameMeta {
        id: "g".into(),
        ..GameMeta::default()
    };
    let mut game = hub
        .create(meta, settings, None, arbiter.clone())
        .await
        .expect("created");
    game.command(arbiter.clone(), Command::Start, None, |_, _| ())
        .await
        .expect("started");
    let mut followers: Vec<Follower> = Vec::new();
    for op in ops {
        match op {
            Op::Move(i) | Op::GiveUp(i) | Op::WrongSide(i) => {
                let Ok(choice) = game
                    .read(move |s, _| {
                        let pos = s.position();
                        let moves = pos.legal_moves();
                        let side = pos.turn();
                        (!moves.is_empty() && s.result().is_none()).then(|| {
                            let mv = &moves[usize::from(i) % moves.len()];
                            (side, write_move_full(pos, mv))
                        })
                    })
                    .await
                else {
                    continue;
                };
                let Some((side, notation)) = choice else {
                    continue;
                };
                let side = if matches!(op, Op::WrongSide(_)) {
                    !side
                } else {
                    side
                };
                let call = game.command(
                    Actor::Player(side),
                    Command::SubmitMove {
                        side,
                        notation,
                        offer_draw: false,
                    },
                    None,
                    |s, _| s.last_seq(),
                );
                if matches!(op, Op::GiveUp(_)) {
                    // Queued on the first poll, then abandoned.
                    let _ = tokio::time::timeout(Duration::ZERO, call).await;
                } else {
                    let result = call.await;
                    if matches!(op, Op::WrongSide(_)) {
                        assert!(result.is_err(), "a move out of turn is refused");
                    }
                }
            }
            Op::Join(from) => {
                let last = store.last_seq(Stream::Game("g")).await.expect("log");
                let from = u64::from(from) % (last + 1);
                if let Ok(watch) = game.watch(from).await {
                    followers.push(Follower {
                        watch,
                        last: from,
                        ended: false,
                    });
                }
            }
            Op::Read(i, n) => {
                if !followers.is_empty() {
                    let k = usize::from(i) % followers.len();
                    followers[k].read(n).await;
                }
            }
            Op::Leave(i) => {
                if !followers.is_empty() {
                    let k = usize::from(i) % followers.len();
                    followers.swap_remove(k);
                }
            }
            Op::Wait(ms) => tokio::time::advance(Duration::from_millis(u64::from(ms))).await,
            Op::Restart => {
                hub.shutdown().await;
                for f in &mut followers {
                    f.read(u8::MAX).await;
                    assert!(f.ended, "every watch ends at shutdown");
                }
                followers.clear();
                hub = self::hub(&store);
                hub.recover().await.expect("recovers");
                game = hub.game("g").await.expect("loaded");
            }
        }
        // Let the game's task finish what it was given.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        let live = game.read(|s, _| s.last_seq()).await.expect("read");
        let log = store.load(Stream::Game("g"), 1).await.expect("log");
        assert_eq!(live, log.len() as u64, "the live state is the log");
        assert!(
            log.iter().zip(1..).all(|(e, seq)| e.seq == seq),
            "the log is dense"
        );
        for f in &followers {
            assert!(f.last <= live, "no watcher is ahead of the log");
        }
    }
    // Every watcher still open catches up to the log exactly.
    let live = game.read(|s, _| s.last_seq()).await.expect("read");
    for f in &mut followers {
        while !f.ended && f.last < live {
            let before = f.last;
            f.read(64).await;
            if f.last == before && !f.ended {
                tokio::time::advance(Duration::from_millis(1)).await;
            }
        }
        assert!(f.ended || f.last == live, "caught up: {} of {live}", f.last);
    }
    hub.shutdown().await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn log_state_and_watchers_always_agree(ops in proptest::collection::vec(op(), 1..60)) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime")
            .block_on(run(ops));
    }
}
