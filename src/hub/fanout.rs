//! The fan-out of a game: what its task tells its watchers, once, on one broadcast
//! channel per audience (mini-redis `db.rs` publishes the same way).
//!
//! - `live`: the game as it stands (arbiters, the game's board and players, every
//!   watcher of a game without a broadcast delay). The task sends each event as it is
//!   committed.
//! - `public`: the viewers of a game with a broadcast delay. The task sends each event
//!   when its delay has passed (`task.rs`, `Public`): the delay is applied once, there,
//!   not by every watcher.
//!
//! What one commit recorded is one message (a move and its clock press wake each watcher
//! once), each event one `Arc<Published>` whatever the number of watchers; the API encodes
//! it once for all of them ([`Wire`]). A watcher that falls more than the channel's
//! capacity behind is not waited for: the channel tells it it lagged, and it resyncs
//! (`handle.rs`). A channel exists while someone watches: a game nobody watches holds
//! none (the task makes it for the first watcher and drops it when a send finds none).

use std::any::Any;
use std::sync::{Arc, OnceLock};

use tokio::sync::broadcast;

use crate::game::{EventNote, GameEvent};
use crate::rules::Variant;

/// An event as the hub publishes it: what was recorded and what the judge knew right
/// after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The recorded event.
    pub event: GameEvent,
    /// Its note (move number, clocks, time spent, the seq it refers to).
    pub note: EventNote,
    /// The game's variant (its notation names the squares in the event's words).
    pub variant: Variant,
    /// The event as the API sends it, made by the first stream that sends it.
    pub wire: Wire,
}

impl Published {
    /// An event and its note, not yet encoded.
    pub fn new(event: GameEvent, note: EventNote, variant: Variant) -> Published {
        Published {
            event,
            note,
            variant,
            wire: Wire::default(),
        }
    }
}

/// A place for what the API makes of a published event to send it (its message, encoded
/// once for every watcher of the game instead of once each); the hub neither fills nor
/// reads it. It is no part of the event: a copy starts empty and any two are equal.
#[derive(Default)]
pub struct Wire(OnceLock<Box<dyn Any + Send + Sync>>);

impl Wire {
    /// What was made first, made by `make` if nothing was.
    pub fn get_or_init(
        &self,
        make: impl FnOnce() -> Box<dyn Any + Send + Sync>,
    ) -> &(dyn Any + Send + Sync) {
        self.0.get_or_init(make).as_ref()
    }
}

impl Clone for Wire {
    fn clone(&self) -> Wire {
        Wire::default()
    }
}

impl PartialEq for Wire {
    fn eq(&self, _: &Wire) -> bool {
        true
    }
}

impl Eq for Wire {}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Wire(made)"
        } else {
            "Wire"
        })
    }
}

/// Why a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEnd {
    /// The game is over and its final event was delivered.
    Finished,
    /// The server is shutting down.
    ShuttingDown,
}

/// What a game's task tells its watchers.
#[derive(Debug, Clone)]
pub(super) enum Told {
    /// The next events, in order (what one commit recorded, or what one step of the
    /// broadcast delay made public).
    Events(Arc<[Arc<Published>]>),
    /// The game is over (after its final event; a watch that goes on past the end, a
    /// bound board's, reads on), or the task stops (the server is shutting down).
    End(WatchEnd),
}

/// One audience's channel: made for the first watcher, dropped once none is left.
#[derive(Debug)]
pub(super) struct Channel {
    tx: Option<broadcast::Sender<Told>>,
    capacity: usize,
}

impl Channel {
    /// A channel whose watchers may fall `capacity` messages behind.
    pub(super) fn new(capacity: usize) -> Channel {
        Channel {
            tx: None,
            capacity: capacity.max(1),
        }
    }

    /// A new watcher: it hears every message sent from now on.
    pub(super) fn subscribe(&mut self) -> broadcast::Receiver<Told> {
        let capacity = self.capacity;
        self.tx
            .get_or_insert_with(|| broadcast::channel(capacity).0)
            .subscribe()
    }

    /// Tells every watcher; a channel that has none left is dropped.
    pub(super) fn send(&mut self, told: Told) {
        if let Some(tx) = &self.tx
            && tx.send(told).is_err()
        {
            self.tx = None;
        }
    }

    /// How many watchers the channel has.
    pub(super) fn watchers(&self) -> usize {
        self.tx
            .as_ref()
            .map_or(0, broadcast::Sender::receiver_count)
    }
}

/// A game's two channels.
#[derive(Debug)]
pub(super) struct Fanout {
    pub(super) live: Channel,
    pub(super) public: Channel,
}

impl Fanout {
    /// Channels whose watchers may fall `capacity` messages behind.
    pub(super) fn new(capacity: usize) -> Fanout {
        Fanout {
            live: Channel::new(capacity),
            public: Channel::new(capacity),
        }
    }

    /// How many watchers the game has (both audiences).
    pub(super) fn watchers(&self) -> usize {
        self.live.watchers() + self.public.watchers()
    }

    /// Tells every watcher the server is shutting down, and drops the channels.
    pub(super) fn shut(&mut self) {
        for channel in [&mut self.live, &mut self.public] {
            channel.send(Told::End(WatchEnd::ShuttingDown));
            channel.tx = None;
        }
    }
}

/// Sends `events` on `channel`, then the end if `finished`.
pub(super) fn tell(channel: &mut Channel, events: &[Arc<Published>], finished: bool) {
    // A game nobody watches makes no message (a commit's hot path).
    if events.is_empty() || channel.tx.is_none() {
        return;
    }
    channel.send(Told::Events(events.into()));
    if finished {
        channel.send(Told::End(WatchEnd::Finished));
    }
}

/// What the game's task answers a new watcher.
#[derive(Debug)]
pub(super) struct WatchStart {
    /// The last seq the watcher's audience has seen when it subscribed: the channel
    /// brings every event after it.
    pub last_seq: u64,
    /// The events after the watcher's `from_seq` up to `last_seq`, when the task still
    /// had them all in memory; `None`: read them from the store.
    pub backlog: Option<Vec<Arc<Published>>>,
    /// What comes next: `None` when the game is over for this watcher (it ends after the
    /// backlog).
    pub rx: Option<broadcast::Receiver<Told>>,
    /// The watcher sees the game behind a broadcast delay: after a lag it fills the gap
    /// from the log (a snapshot would show it the live game).
    pub delayed: bool,
}
