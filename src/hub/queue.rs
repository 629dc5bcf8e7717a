//! A watcher's bounded queue, shared by the game's task (which fills it as it commits)
//! and the watcher (which empties it). A watcher that cannot keep up is marked lagged
//! instead of being waited for.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

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

/// The watchers that left a game since its task last dropped the gone ones from its list,
/// shared by the task and the queues it holds: once as many have left as half the list,
/// the task is woken to drop them (`GameTask::drop_gone`).
///
/// Before, a gone watcher stayed in the list until the game published, its timer fired,
/// or the list had doubled: after a burst of `WatchEvent` streams on a quiet round (each
/// stream's catching up registers a watch of every game), up to half the list's last
/// length of gone queues stayed until more watchers came, each a small block among what
/// the burst had freed, keeping its page from going back to the system (issue 37).
#[derive(Debug, Default)]
pub(super) struct Departures {
    /// Watchers that left since the task's last look (an estimate from above: one that
    /// leaves while the task looks may be counted for the next look too).
    left: AtomicUsize,
    /// How many watchers the task's list held at its last change.
    held: AtomicUsize,
    notify: Notify,
}

impl Departures {
    /// A watcher of the list has left: wakes the task once half the list has.
    fn left(&self) {
        let left = self.left.fetch_add(1, Ordering::SeqCst) + 1;
        if 2 * left >= self.held.load(Ordering::SeqCst) {
            self.notify.notify_one();
        }
    }

    /// The task's list now holds `n` watchers. (It looks at the count again: a watcher
    /// that left while the list changed, and compared its count with the old length,
    /// is not missed.)
    pub(super) fn held(&self, n: usize) {
        self.held.store(n, Ordering::SeqCst);
        let left = self.left.load(Ordering::SeqCst);
        if left > 0 && 2 * left >= n {
            self.notify.notify_one();
        }
    }

    /// The task looks at its list now: the count starts again.
    pub(super) fn looked(&self) {
        self.left.store(0, Ordering::SeqCst);
    }

    /// Ready once enough watchers have left for the task to look.
    pub(super) fn wait(&self) -> Notified<'_> {
        self.notify.notified()
    }
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
    /// The departures of the task whose list holds the queue (set when it is added).
    departures: OnceLock<Arc<Departures>>,
}

impl WatchQueue {
    pub(super) fn new(capacity: usize, through_end: bool) -> WatchQueue {
        WatchQueue {
            state: Mutex::new(QueueState::default()),
            notify: Notify::new(),
            capacity: capacity.max(1),
            through_end,
            departures: OnceLock::new(),
        }
    }

    /// The queue is in the list of the task that counts `departures`.
    pub(super) fn held_by(&self, departures: &Arc<Departures>) {
        let _ = self.departures.set(departures.clone());
    }

    /// How many watchers the list of the task that holds the queue had at its last
    /// change.
    #[cfg(test)]
    pub(super) fn listed(&self) -> Option<usize> {
        self.departures.get().map(|d| d.held.load(Ordering::SeqCst))
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

    /// The watcher has gone: the task drops the queue once half its list has gone (see
    /// [`Departures`]), or at its next publish, tick or idle look.
    pub(super) fn leave(&self) {
        self.lock().dropped = true;
        if let Some(d) = self.departures.get() {
            d.left();
        }
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
