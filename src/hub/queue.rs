//! A watcher's bounded queue, shared by the game's task (which fills it as it commits)
//! and the watcher (which empties it). A watcher that cannot keep up is marked lagged
//! instead of being waited for.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

use crate::game::{EventNote, GameEvent};

/// An event as the hub publishes it: what was recorded and what the judge knew right
/// after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The recorded event.
    pub event: GameEvent,
    /// Its note (move number, clocks, time spent, the seq it refers to).
    pub note: EventNote,
    /// The event as the API sends it, made by the first stream that sends it.
    pub wire: Wire,
}

impl Published {
    /// An event and its note, not yet encoded.
    pub fn new(event: GameEvent, note: EventNote) -> Published {
        Published {
            event,
            note,
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

/// What the watcher does next, decided under the queue's lock.
pub(super) enum Step {
    Resync,
    Item(Arc<Published>),
    End(WatchEnd),
    Wait,
}

#[derive(Debug, Default)]
struct QueueState {
    items: VecDeque<Arc<Published>>,
    lagged: bool,
    end: Option<WatchEnd>,
    dropped: bool,
}

/// One watcher's queue, shared by the game's task (which fills it) and the watcher.
#[derive(Debug)]
pub(super) struct WatchQueue {
    state: Mutex<QueueState>,
    notify: Notify,
    capacity: usize,
    /// Goes on past the game's end (a bound board hears the rulings and corrections
    /// recorded after it), ending only when the watcher leaves or at shutdown.
    pub(super) through_end: bool,
}

impl WatchQueue {
    pub(super) fn new(capacity: usize, through_end: bool) -> WatchQueue {
        WatchQueue {
            state: Mutex::new(QueueState::default()),
            notify: Notify::new(),
            capacity: capacity.max(1),
            through_end,
        }
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A panic while holding this short lock cannot leave the queue half-updated in a
        // way that matters more than losing the watcher's place: carry on.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues events; a watcher that cannot take them all is marked lagged (its queue
    /// is emptied: it will resync). Returns false once the watcher has gone.
    pub(super) fn push(&self, events: &[Arc<Published>]) -> bool {
        let mut s = self.lock();
        if s.dropped {
            return false;
        }
        if s.end.is_none() && !s.lagged {
            if s.items.len() + events.len() > self.capacity {
                s.items.clear();
                s.lagged = true;
            } else {
                s.items.extend(events.iter().cloned());
            }
        }
        drop(s);
        self.notify.notify_one();
        true
    }

    /// Ends the watch after what is queued.
    pub(super) fn close(&self, end: WatchEnd) {
        let mut s = self.lock();
        if s.end.is_none() {
            s.end = Some(end);
        }
        drop(s);
        self.notify.notify_one();
    }

    /// Whether the watcher has gone (its `Watch` was dropped).
    pub(super) fn gone(&self) -> bool {
        self.lock().dropped
    }

    /// Whether the game's task ended the watch for shutdown.
    pub(super) fn shutting_down(&self) -> bool {
        self.lock().end == Some(WatchEnd::ShuttingDown)
    }

    /// The watcher has gone: the task drops the queue at its next publish, tick or new
    /// watcher (`GameTask::add_watcher`).
    pub(super) fn leave(&self) {
        self.lock().dropped = true;
    }

    /// A wake-up for the next push or close (take it before [`WatchQueue::take`]).
    pub(super) fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }

    /// The watcher's next step: resync after a lag (the queue was emptied), the next
    /// queued event, the end, or wait.
    pub(super) fn take(&self) -> Step {
        let mut s = self.lock();
        if s.lagged {
            s.lagged = false;
            s.items.clear();
            Step::Resync
        } else if let Some(e) = s.items.pop_front() {
            Step::Item(e)
        } else if let Some(end) = s.end {
            Step::End(end)
        } else {
            Step::Wait
        }
    }
}

/// What the game's task answers a new watcher.
#[derive(Debug)]
pub(super) struct WatchStart {
    /// The game's last seq when the queue was registered: the queue gets every event
    /// after it.
    pub last_seq: u64,
    /// The events after the watcher's `from_seq` up to `last_seq`, when the task still
    /// had them all in memory; `None`: read them from the store.
    pub backlog: Option<Vec<Arc<Published>>>,
    /// The public delay this watcher sees events with (0: live).
    pub delay_ms: u64,
    /// When the game's last event was recorded (monotonic ms) at registration: a public
    /// watcher of a game that already ended hears the end no earlier than `delay` after
    /// it, as it would have after the final event.
    pub last_ms: u64,
}
