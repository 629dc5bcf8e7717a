//! How many watchers a game, and the whole hub, may have ([`HubConfig`]'s
//! `max_watchers_per_game` and `max_watchers`). Every [`Watch`] holds a slot of its game
//! and one of the hub until it is dropped: a WatchGame stream, each game of a WatchEvent
//! stream, a bound board. One more is refused with [`HubError::TooManyWatchers`] and
//! nothing is registered.
//!
//! [`HubConfig`]: super::HubConfig
//! [`Watch`]: super::Watch

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::error::{HubError, WatcherLimit};

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
    pub(super) fn take(&self, id: &str) -> Result<Slot, HubError> {
        if !take(&self.game, self.per_game) {
            return Err(HubError::TooManyWatchers(WatcherLimit::Game {
                game: id.to_string(),
                max: self.per_game,
            }));
        }
        if !take(&self.total, self.max_total) {
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
        let a1 = a.take("a").expect("1st of a");
        let _a2 = a.take("a").expect("2nd of a");
        assert!(matches!(
            a.take("a"),
            Err(HubError::TooManyWatchers(WatcherLimit::Game { max: 2, .. }))
        ));
        let _b1 = b.take("b").expect("1st of b");
        assert!(matches!(
            b.take("b"),
            Err(HubError::TooManyWatchers(WatcherLimit::Total { max: 3 }))
        ));
        assert_eq!(b.game.load(Ordering::SeqCst), 1, "a refusal takes nothing");
        drop(a1);
        assert_eq!(total.load(Ordering::SeqCst), 2);
        b.take("b").expect("room again");
    }
}
