//! Which board stream holds each game (issue 38 item 4): one at a time. A bind for a game
//! another stream holds takes it over: the old stream is told why and ends, the new one
//! is bound. The health the streams record in the game goes through the seat, so the old
//! stream's end never records `DISCONNECTED` over the new one's `ACTIVE`: a stream
//! records its health only while it holds the seat, under the seat's lock, and a bind
//! takes the seat and records `ACTIVE` under the same lock.
//!
//! On one node: the seats live in the node's [`super::service::Api`]. A game's board
//! streams reach the node that serves them; two streams of one game on two nodes are not
//! seen by each other.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedMutexGuard, oneshot};

/// The seats of every game a board stream holds on this node.
#[derive(Default)]
pub(super) struct Seats {
    games: Mutex<HashMap<String, Arc<Seat>>>,
    /// The last stream number given ([`Seats::stream`]).
    streams: AtomicU64,
}

/// One game's seat: who holds it, under a lock held across the health record.
#[derive(Default)]
struct Seat(Arc<tokio::sync::Mutex<Holder>>);

/// The stream holding a seat.
#[derive(Default)]
struct Holder {
    /// Its number (0: nobody).
    stream: u64,
    /// Tells it, with the reason, that another stream took the seat over.
    replaced: Option<oneshot::Sender<String>>,
}

/// A game's seat, locked: while it is held no other stream takes the seat over or leaves
/// it, so what is recorded meanwhile is recorded for the holder.
pub(super) struct SeatGuard<'a> {
    seats: &'a Seats,
    game: String,
    seat: Arc<Seat>,
    holder: OwnedMutexGuard<Holder>,
}

impl Seats {
    /// A number for a new stream, never 0 and never given twice.
    pub(super) fn stream(&self) -> u64 {
        self.streams.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Seat>>> {
        self.games.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Locks `game`'s seat (made if nobody holds it), waiting for another stream's
    /// record in progress.
    pub(super) async fn lock(&self, game: &str) -> SeatGuard<'_> {
        loop {
            let seat = self.map().entry(game.to_string()).or_default().clone();
            let holder = seat.0.clone().lock_owned().await;
            // A seat left empty is removed from the map under its lock: one taken from
            // the map before that is stale, and a fresh one is in the map (or will be).
            if self.map().get(game).is_some_and(|s| Arc::ptr_eq(s, &seat)) {
                return SeatGuard {
                    seats: self,
                    game: game.to_string(),
                    seat,
                    holder,
                };
            }
        }
    }
}

impl SeatGuard<'_> {
    /// Whether `stream` holds the seat.
    pub(super) fn held_by(&self, stream: u64) -> bool {
        self.holder.stream == stream
    }

    /// `stream` takes the seat. Another stream holding it is sent `why` and ends; the
    /// receiver hears the same when `stream` is taken over in turn.
    pub(super) fn take(&mut self, stream: u64, why: String) -> oneshot::Receiver<String> {
        if let Some(old) = self.holder.replaced.take()
            && self.holder.stream != stream
        {
            // A stream already gone does not listen: nothing to tell.
            let _ = old.send(why);
        }
        let (tell, told) = oneshot::channel();
        self.holder.stream = stream;
        self.holder.replaced = Some(tell);
        told
    }

    /// `stream` leaves the seat if it holds it; true when it did.
    pub(super) fn leave(&mut self, stream: u64) -> bool {
        if !self.held_by(stream) {
            return false;
        }
        self.holder.stream = 0;
        self.holder.replaced = None;
        true
    }
}

impl Drop for SeatGuard<'_> {
    fn drop(&mut self) {
        // Still locked: an empty seat leaves the map (see [`Seats::lock`]).
        if self.holder.stream == 0 {
            let mut map = self.seats.map();
            if map
                .get(&self.game)
                .is_some_and(|s| Arc::ptr_eq(s, &self.seat))
            {
                map.remove(&self.game);
            }
        }
    }
}

/// The number of games whose seat is held (tests).
#[cfg(test)]
impl Seats {
    fn held(&self) -> usize {
        self.map().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_take_over_tells_the_old_holder_and_a_leave_empties_the_map() {
        let seats = Seats::default();
        let (a, b) = (seats.stream(), seats.stream());
        assert_ne!(a, b);
        let mut told_a = {
            let mut g = seats.lock("g").await;
            assert!(!g.held_by(a));
            g.take(a, "unused".into())
        };
        assert!(told_a.try_recv().is_err(), "nothing said yet");
        let told_b = {
            let mut g = seats.lock("g").await;
            assert!(g.held_by(a));
            g.take(b, "replaced by b".into())
        };
        assert_eq!(told_a.await.expect("told"), "replaced by b");
        {
            // The old holder's end finds the seat taken: it leaves nothing.
            let mut g = seats.lock("g").await;
            assert!(!g.leave(a));
            assert!(g.held_by(b));
        }
        assert_eq!(seats.held(), 1);
        {
            let mut g = seats.lock("g").await;
            assert!(g.leave(b));
        }
        assert_eq!(seats.held(), 0, "an empty seat leaves the map");
        drop(told_b);
    }

    #[tokio::test]
    async fn the_same_stream_taking_its_own_seat_again_tells_nobody() {
        let seats = Seats::default();
        let a = seats.stream();
        let mut first = seats.lock("g").await.take(a, String::new());
        let _second = seats.lock("g").await.take(a, "again".into());
        // The first sender was dropped without a word.
        assert!(matches!(
            first.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
    }
}
