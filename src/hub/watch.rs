//! Watchers: each has a bounded queue the game's task fills as it commits. A watcher that
//! falls behind is never slowed down to, and never slows the game: its queue is emptied
//! and it gets a [`WatchItem::Resync`] with a fresh snapshot of the game, then the events
//! after it, densely. A stream ends after its game's final event and at shutdown.
//!
//! The shape follows neon's storage broker (subscribers unregister when dropped, laggards
//! get a snapshot) and lila-ws (a gap is answered with the whole state).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::{GameHandle, HubError, decode};
use crate::game::{EventNote, GameEvent, Session};
use crate::store::EventStore;

/// An event as the hub publishes it: what was recorded and what the judge knew right
/// after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The recorded event.
    pub event: GameEvent,
    /// Its note (move number, clocks, time spent, the seq it refers to).
    pub note: EventNote,
}

/// The game as it stood at one seq, for a watcher that fell behind.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The session at [`Snapshot::seq`].
    pub session: Session,
    /// The instant it was read at (monotonic ms), for its clocks.
    pub now_ms: u64,
}

impl Snapshot {
    /// The last seq the snapshot reflects.
    pub fn seq(&self) -> u64 {
        self.session.last_seq()
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

/// What a watcher receives.
#[derive(Debug, Clone)]
pub enum WatchItem {
    /// The next event (its seq is the previous one's plus one).
    Event(Arc<Published>),
    /// The watcher fell behind: the game as it stands; events continue after its seq.
    Resync(Box<Snapshot>),
    /// The stream is over; nothing follows.
    End(WatchEnd),
}

/// What the watcher does next, decided under the queue's lock.
enum Step {
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
}

impl WatchQueue {
    pub(super) fn new(capacity: usize) -> WatchQueue {
        WatchQueue {
            state: Mutex::new(QueueState::default()),
            notify: Notify::new(),
            capacity: capacity.max(1),
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

    /// Whether the watcher has gone (its [`Watch`] was dropped).
    pub(super) fn gone(&self) -> bool {
        self.lock().dropped
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
}

/// A watcher of one game: every event after `from_seq` in order, then the live ones.
/// Dropping it unregisters it.
pub struct Watch {
    game: GameHandle,
    store: Arc<dyn EventStore>,
    queue: Arc<WatchQueue>,
    last: u64,
    backlog: VecDeque<Arc<Published>>,
    history_until: u64,
    ended: bool,
    delay_ms: u64,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("game", &self.game.meta().id)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.queue.lock().dropped = true;
    }
}

impl Watch {
    pub(super) fn new(
        game: GameHandle,
        store: Arc<dyn EventStore>,
        queue: Arc<WatchQueue>,
        from_seq: u64,
        start: WatchStart,
    ) -> Watch {
        let (backlog, history_until) = match start.backlog {
            Some(events) => (events.into(), 0),
            None if start.last_seq > from_seq => (VecDeque::new(), start.last_seq),
            None => (VecDeque::new(), 0),
        };
        Watch {
            game,
            store,
            queue,
            last: from_seq,
            backlog,
            history_until,
            ended: false,
            delay_ms: start.delay_ms,
        }
    }

    /// The game watched.
    pub fn game(&self) -> &GameHandle {
        &self.game
    }

    /// The last seq delivered (or the snapshot's, after a resync).
    pub fn last_seq(&self) -> u64 {
        self.last
    }

    /// Counts events up to `seq` as delivered (a caller that delivered them another way,
    /// as a board stream does with the events of its own messages).
    pub fn skip_to(&mut self, seq: u64) {
        self.last = self.last.max(seq);
    }

    /// The next item; `None` after [`WatchItem::End`] was returned.
    ///
    /// # Errors
    /// The store failing while the history is read, or a stored event that does not
    /// decode or replay; the watch is over then.
    pub async fn next(&mut self) -> Option<Result<WatchItem, HubError>> {
        if self.ended {
            return None;
        }
        let item = self.next_inner().await;
        if matches!(item, Ok(WatchItem::End(_)) | Err(_)) {
            self.ended = true;
        }
        if let (Ok(WatchItem::Event(e)), true) = (&item, self.delay_ms > 0) {
            // The public sees each event `delay` after it was recorded.
            let at = e.event.at.mono_ms.saturating_add(self.delay_ms);
            tokio::time::sleep_until(self.game.timeline().instant(at)).await;
        }
        Some(item)
    }

    async fn next_inner(&mut self) -> Result<WatchItem, HubError> {
        loop {
            if let Some(e) = self.backlog.pop_front() {
                if e.event.seq > self.last {
                    self.last = e.event.seq;
                    return Ok(WatchItem::Event(e));
                }
                continue;
            }
            if self.history_until > self.last {
                let until = self.history_until;
                self.history_until = 0;
                let mut history: VecDeque<_> = self.history(self.last, until).await?.into();
                history.append(&mut self.backlog);
                self.backlog = history;
                continue;
            }
            let notified = self.queue.notify.notified();
            let step = {
                let mut s = self.queue.lock();
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
            };
            match step {
                Step::Resync if self.delay_ms > 0 => {
                    // Behind the public delay a snapshot would be the live game: fill
                    // the gap from the log instead, each event still delayed.
                    match self.game.read(|s, _| s.last_seq()).await {
                        Ok(live) => self.history_until = live,
                        Err(HubError::ShuttingDown) => {
                            return Ok(WatchItem::End(WatchEnd::ShuttingDown));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Step::Resync => {
                    let snapshot = self
                        .game
                        .read(|session, now_ms| Snapshot {
                            session: session.clone(),
                            now_ms,
                        })
                        .await;
                    return match snapshot {
                        Ok(snap) => {
                            self.last = self.last.max(snap.seq());
                            Ok(WatchItem::Resync(Box::new(snap)))
                        }
                        Err(HubError::ShuttingDown) => Ok(WatchItem::End(WatchEnd::ShuttingDown)),
                        Err(e) => Err(e),
                    };
                }
                Step::Item(e) => {
                    let seq = e.event.seq;
                    if seq <= self.last {
                        continue;
                    }
                    if seq > self.last + 1 {
                        // Never expected (the queue starts where the history ends), but
                        // a gap is filled from the log rather than passed on.
                        self.history_until = seq - 1;
                        self.backlog.push_back(e);
                        continue;
                    }
                    self.last = seq;
                    return Ok(WatchItem::Event(e));
                }
                Step::End(end) => return Ok(WatchItem::End(end)),
                Step::Wait => notified.await,
            }
        }
    }

    /// The events in `(after, until]` from the store, with their notes (the whole log is
    /// folded to compute them).
    async fn history(&self, after: u64, until: u64) -> Result<Vec<Arc<Published>>, HubError> {
        let id = &self.game.meta().id;
        let rows = self.store.load(id, 1).await?;
        let events = decode(id, &rows)?;
        let (_, notes) =
            Session::replay_noted(&events).map_err(|e| HubError::Corrupt(format!("{id}: {e}")))?;
        Ok(events
            .into_iter()
            .zip(notes)
            .filter(|(e, _)| e.seq > after && e.seq <= until)
            .map(|(event, note)| Arc::new(Published { event, note }))
            .collect())
    }
}
