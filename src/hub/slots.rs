//! How many watchers a game, and the whole hub, may have ([`HubConfig`]'s
//! `max_watchers_per_game` and `max_watchers`). Every [`Watch`] holds a slot of its game
//! and one of the hub until it is dropped: a WatchGame stream, each game of a WatchEvent
//! stream, a bound board. One more is refused with [`HubError::TooManyWatchers`] and
//! nothing is registered. The live audience (arbiters, the board, the players) has a
//! reserve above both limits ([`LIVE_RESERVE_PER_GAME`], [`LIVE_RESERVE_TOTAL`]): viewers
//! filling a game cannot keep its board or its arbiter out.
//!
//! [`HubConfig`]: super::HubConfig
//! [`Watch`]: super::Watch

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::error::{HubError, WatcherLimit};

/// Places above `max_watchers_per_game` kept for the live audience (arbiters, the bound
/// board, the game's players).
pub(super) const LIVE_RESERVE_PER_GAME: usize = 16;
/// Places above `max_watchers` kept for the live audience.
pub(super) const LIVE_RESERVE_TOTAL: usize = 1024;

/// A game's watcher count and the hub's, with their limits. Cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct Slots {
    game: Arc<AtomicUsize>,
    per_game: usize,
    total: Arc<AtomicUsize>,
    max_total: usize,
}

/// One watcher's place in both counts, given back when dropped.
#[derive(Debug)]
pub(super) struct Slot {
    game: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.game.fetch_sub(1, Ordering::SeqCst);
        self.total.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Adds one to `count` unless it is at `max`.
fn take(count: &AtomicUsize, max: usize) -> bool {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < max).then_some(n + 1)
        })
        .is_ok()
}

impl Slots {
    /// A new game's count, under the hub's `total`.
    pub(super) fn new(total: &Arc<AtomicUsize>, per_game: usize, max_total: usize) -> Slots {
        Slots {
            game: Arc::new(AtomicUsize::new(0)),
            per_game,
            total: total.clone(),
            max_total,
        }
    }

    /// A place for one more watcher of `id`.
    ///
    /// # Errors
    /// [`HubError::TooManyWatchers`]: the game or the hub is at its limit.
    pub(super) fn take(&self, id: &str, live: bool) -> Result<Slot, HubError> {
        // The game's own people (its arbiters, board and players) have a reserve above
        // the limits, so a crowd of viewers can never keep a board from binding.
        let (per_game, max_total) = if live {
            (
                self.per_game.saturating_add(LIVE_RESERVE_PER_GAME),
                self.max_total.saturating_add(LIVE_RESERVE_TOTAL),
            )
        } else {
            (self.per_game, self.max_total)
        };
        if !take(&self.game, per_game) {
            return Err(HubError::TooManyWatchers(WatcherLimit::Game {
                game: id.to_string(),
                max: self.per_game,
            }));
        }
        if !take(&self.total, max_total) {
            self.game.fetch_sub(1, Ordering::SeqCst);
            return Err(HubError::TooManyWatchers(WatcherLimit::Total {
                max: self.max_total,
            }));
        }
        Ok(Slot {
            game: self.game.clone(),
            total: self.total.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_game_and_in_total_and_given_back() {
        let total = Arc::new(AtomicUsize::new(0));
        let a = Slots::new(&total, 2, 3);
        let b = Slots::new(&total, 2, 3);
        let a1 = a.take("a", false).expect("1st of a");
        let _a2 = a.take("a", false).expect("2nd of a");
        assert!(matches!(
            a.take("a", false),
            Err(HubError::TooManyWatchers(WatcherLimit::Game { max: 2, .. }))
        ));
        let _b1 = b.take("b", false).expect("1st of b");
        assert!(matches!(
            b.take("b", false),
            Err(HubError::TooManyWatchers(WatcherLimit::Total { max: 3 }))
        ));
        assert_eq!(b.game.load(Ordering::SeqCst), 1, "a refusal takes nothing");
        drop(a1);
        assert_eq!(total.load(Ordering::SeqCst), 2);
        b.take("b", false).expect("room again");
    }

    #[test]
    fn the_live_audience_has_a_reserve_above_the_viewers_limit() {
        let total = Arc::new(AtomicUsize::new(0));
        let g = Slots::new(&total, 2, 1000);
        let _viewers: Vec<Slot> = (0..2)
            .map(|_| g.take("g", false).expect("viewer"))
            .collect();
        assert!(g.take("g", false).is_err(), "the viewers' limit holds");
        let live: Vec<Slot> = (0..LIVE_RESERVE_PER_GAME)
            .map(|_| g.take("g", true).expect("the board or an arbiter"))
            .collect();
        assert!(g.take("g", true).is_err(), "the reserve is bounded too");
        assert_eq!(live.len(), LIVE_RESERVE_PER_GAME);
    }
}
