//! A live game as callers hold it: [`GameHandle`] sends commands and reads to the game's
//! task and opens watches.
//!
//! Watchers: each is a receiver of its audience's channel of the game (`fanout.rs`),
//! subscribed by the game's task with the events it missed before. A watcher that falls
//! behind is never slowed down to, and never slows the game: the channel moves on without
//! it and it gets a [`WatchItem::Resync`] with a fresh snapshot of the game, then the
//! events after it, densely. A stream ends after its game's final event and at shutdown.
//! The shape follows mini-redis (`broadcast` per channel, a receiver per subscriber),
//! neon's storage broker (laggards get a snapshot) and lila-ws (a gap is answered with the
//! whole state).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::Instant;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::error::{HubError, decode};
use super::fanout::{Published, Told, WatchEnd, WatchStart};
use super::slots::{Slot, Slots};
use super::task::{self, Msg, Pending};
use crate::game::GameMeta;
use crate::game::{Actor, Command, Session};
use crate::store::{EventStore, Stream};

/// Loads a game again when its task left memory after a handle was taken (the hub).
pub(super) trait Loader: Send + Sync {
    /// The game, loaded anew if it is not in memory.
    fn reload(
        self: Arc<Self>,
        id: String,
    ) -> Pin<Box<dyn Future<Output = Result<GameHandle, HubError>> + Send>>;
    /// Whether shutdown has begun.
    fn stopping(&self) -> bool;
}

/// A live game: its names and the way to its task. Cheap to clone.
#[derive(Clone)]
pub struct GameHandle {
    pub(super) meta: Arc<GameMeta>,
    pub(super) tx: mpsc::Sender<Msg>,
    pub(super) store: Arc<dyn EventStore>,
    /// The game's watcher count and the hub's, with their limits.
    pub(super) slots: Slots,
    /// To load the game again if its task left memory after this handle was taken.
    pub(super) hub: Weak<dyn Loader>,
}

/// Who is looking: the live game, or the public view behind the broadcast delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Audience {
    /// Arbiters, the game's board and its players: the game as it stands.
    Live,
    /// Viewers: the game as it was `broadcast_delay_ms` ago.
    Public,
}

impl std::fmt::Debug for GameHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameHandle")
            .field("id", &self.meta.id)
            .finish_non_exhaustive()
    }
}

impl GameHandle {
    /// The game's names.
    pub fn meta(&self) -> &Arc<GameMeta> {
        &self.meta
    }

    /// Sends to the game's task. A task that left memory (an idle finished game) drops
    /// what it had not started: such a message comes back (`Err(msg)`) to be sent again
    /// to the game loaded anew.
    async fn send(&self, msg: Msg) -> Result<(), HubError> {
        let Err(mpsc::error::SendError(msg)) = self.tx.send(msg).await else {
            return Ok(());
        };
        let hub = self.hub.upgrade().ok_or(HubError::ShuttingDown)?;
        if hub.stopping() {
            return Err(HubError::ShuttingDown);
        }
        let fresh = hub.reload(self.meta.id.clone()).await?;
        fresh.tx.send(msg).await.map_err(|_| HubError::ShuttingDown)
    }

    /// Runs a command: time's own events first (flags, "Time!"), then the command's,
    /// appended durably before the reply. Returns the events and `view` of the session
    /// after them, read in the same step. Dropping the future does not undo or stop the
    /// command once it is queued: it happens completely or, if refused, not at all.
    ///
    /// # Errors
    /// The game refuses (nothing changed), `expected_seq` is stale, the store fails
    /// (nothing changed), or the server is shutting down (nothing recorded).
    pub async fn command<R, F>(
        &self,
        actor: Actor,
        cmd: Command,
        expected_seq: Option<u64>,
        view: F,
    ) -> Result<(Vec<Arc<Published>>, R), HubError>
    where
        F: FnOnce(&Session, u64) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.send_command(actor, Pending::Ready(cmd), expected_seq, None, view)
            .await
    }

    /// Like [`GameHandle::command`], for a command that may be made in the task for the
    /// side to move ([`Pending::ForSideToMove`]), recording an electronic board's own
    /// timestamp (`board_ms`) in the events if one caused it.
    ///
    /// # Errors
    /// As [`GameHandle::command`].
    pub async fn send_command<R, F>(
        &self,
        actor: Actor,
        cmd: Pending,
        expected_seq: Option<u64>,
        board_ms: Option<i64>,
        view: F,
    ) -> Result<(Vec<Arc<Published>>, R), HubError>
    where
        F: FnOnce(&Session, u64) -> R + Send + 'static,
        R: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let done: task::Done = Box::new(move |result| {
            let _ = reply.send(result.map(|(session, now, events)| (events, view(session, now))));
        });
        self.send(Msg::Command {
            actor,
            cmd,
            expected_seq,
            board_ms,
            received: Instant::now(),
            done,
        })
        .await?;
        answer.await.map_err(|_| HubError::ShuttingDown)?
    }

    /// Reads the session as it stands (in the game's task; no copy of the game).
    ///
    /// # Errors
    /// [`HubError::ShuttingDown`].
    pub async fn read<R, F>(&self, f: F) -> Result<R, HubError>
    where
        F: FnOnce(&Session, u64) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.read_as(Audience::Live, f).await
    }

    /// Reads the session as `audience` sees it, with the instant it is seen at: for the
    /// public of a game with a broadcast delay, the game as it was `delay` ago.
    ///
    /// # Errors
    /// [`HubError::ShuttingDown`].
    pub async fn read_as<R, F>(&self, audience: Audience, f: F) -> Result<R, HubError>
    where
        F: FnOnce(&Session, u64) -> R + Send + 'static,
        R: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.send(Msg::Read {
            f: Box::new(move |session, now| {
                let _ = reply.send(f(session, now));
            }),
            public: audience == Audience::Public,
        })
        .await?;
        answer.await.map_err(|_| HubError::ShuttingDown)
    }

    /// Watches the game live: every event with `seq > from_seq`, then the live ones.
    ///
    /// # Errors
    /// [`HubError::ShuttingDown`]; [`HubError::TooManyWatchers`].
    pub async fn watch(&self, from_seq: u64) -> Result<Watch, HubError> {
        self.watch_as(Audience::Live, from_seq).await
    }

    /// Watches the game as `audience` sees it: for the public of a game with a
    /// broadcast delay, each event `delay` after it was recorded (its task sends it to
    /// the viewers then).
    ///
    /// # Errors
    /// [`HubError::ShuttingDown`]; [`HubError::TooManyWatchers`]: the game or the hub has
    /// as many watchers as the server allows (nothing is registered).
    pub async fn watch_as(&self, audience: Audience, from_seq: u64) -> Result<Watch, HubError> {
        self.watch_with(audience, from_seq, false).await
    }

    /// Watches the game live, past its end: every event, the ones recorded after the
    /// game finished (a warning, a corrected result) included, until the watch is
    /// dropped or the server shuts down. What a bound board hears.
    ///
    /// # Errors
    /// As [`GameHandle::watch_as`].
    pub async fn watch_through_end(&self, from_seq: u64) -> Result<Watch, HubError> {
        self.watch_with(Audience::Live, from_seq, true).await
    }

    /// Watches the game as `audience` sees it, in the place `permit` holds among its
    /// watchers: a stream that follows the game through a shared feed catches up from
    /// the log without taking a second place (which the limit might refuse).
    ///
    /// # Errors
    /// [`HubError::ShuttingDown`].
    pub async fn watch_in(
        &self,
        _permit: &WatchPermit,
        audience: Audience,
        from_seq: u64,
    ) -> Result<Watch, HubError> {
        self.watch_shared(audience, from_seq).await
    }

    /// Watches the game as `audience` sees it for a feed that many streams share (a
    /// round's `WatchEvent` feed): it takes no place among the game's watchers, as each
    /// stream on the feed holds one ([`GameHandle::watch_permit`]).
    ///
    /// # Errors
    /// [`HubError::ShuttingDown`].
    pub async fn watch_shared(&self, audience: Audience, from_seq: u64) -> Result<Watch, HubError> {
        self.register(audience, from_seq, false, None).await
    }

    async fn watch_with(
        &self,
        audience: Audience,
        from_seq: u64,
        through_end: bool,
    ) -> Result<Watch, HubError> {
        let slot = self.slots.take(&self.meta.id, audience == Audience::Live)?;
        self.register(audience, from_seq, through_end, Some(slot))
            .await
    }

    /// Subscribes through the game's task. A caller that goes away while it registers
    /// (a stream cancelled as its round stream catches up game by game) leaves nothing:
    /// the receiver the task made is dropped with the answer (issue 37).
    async fn register(
        &self,
        audience: Audience,
        from_seq: u64,
        through_end: bool,
        slot: Option<Slot>,
    ) -> Result<Watch, HubError> {
        let (reply, answer) = oneshot::channel();
        self.send(Msg::Watch {
            from_seq,
            public: audience == Audience::Public,
            through_end,
            reply,
        })
        .await?;
        let start = answer.await.map_err(|_| HubError::ShuttingDown)?;
        Ok(Watch::new(
            self.clone(),
            self.store.clone(),
            from_seq,
            start,
            through_end,
            slot,
        ))
    }

    /// Tests: how many watchers the game's channels have.
    #[cfg(test)]
    pub(super) async fn watchers(&self) -> usize {
        let (reply, answer) = oneshot::channel();
        self.send(Msg::Watchers(reply)).await.expect("sent");
        answer.await.expect("answered")
    }

    /// A watcher's place in the game's and the hub's counts, for a stream that follows
    /// the game through a feed it shares with others (a WatchEvent stream on a round
    /// feed) instead of a receiver of its own; given back when dropped.
    ///
    /// # Errors
    /// [`HubError::TooManyWatchers`], as [`GameHandle::watch_as`].
    pub fn watch_permit(&self, audience: Audience) -> Result<WatchPermit, HubError> {
        self.slots
            .take(&self.meta.id, audience == Audience::Live)
            .map(|slot| WatchPermit { _slot: slot })
    }
}

/// A place among a game's watchers without a receiver of its own (see [`GameHandle::watch_permit`]).
#[derive(Debug)]
pub struct WatchPermit {
    _slot: Slot,
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

/// A watcher of one game: every event after `from_seq` in order, then the live ones.
/// Dropping it unregisters it (its receiver leaves the channel).
pub struct Watch {
    game: GameHandle,
    store: Arc<dyn EventStore>,
    /// The channel (none once the game is over for this watch: the backlog is the rest).
    rx: Option<broadcast::Receiver<Told>>,
    last: u64,
    backlog: VecDeque<Arc<Published>>,
    history_until: u64,
    ended: bool,
    /// Goes on past the game's end (a bound board hears the rulings and corrections
    /// recorded after it), ending only when dropped or at shutdown.
    through_end: bool,
    /// Sees the game behind its broadcast delay.
    delayed: bool,
    /// Its place in the watcher counts, given back when the watch is dropped (none: it
    /// has one through a [`WatchPermit`]).
    _slot: Option<Slot>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("game", &self.game.meta().id)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Watch {
    pub(super) fn new(
        game: GameHandle,
        store: Arc<dyn EventStore>,
        from_seq: u64,
        start: WatchStart,
        through_end: bool,
        slot: Option<Slot>,
    ) -> Watch {
        let (backlog, history_until) = match start.backlog {
            Some(events) => (events.into(), 0),
            None if start.last_seq > from_seq => (VecDeque::new(), start.last_seq),
            None => (VecDeque::new(), 0),
        };
        Watch {
            game,
            store,
            rx: start.rx,
            last: from_seq,
            backlog,
            history_until,
            ended: false,
            through_end,
            delayed: start.delayed,
            _slot: slot,
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
            // Off the channel at once: a finished game with no watcher leaves memory.
            self.rx = None;
        }
        Some(item)
    }

    async fn next_inner(&mut self) -> Result<WatchItem, HubError> {
        loop {
            // A gap first: what the log holds before the backlog.
            if self.history_until > self.last {
                let until = self.history_until;
                self.history_until = 0;
                let mut history: VecDeque<_> = self.history(self.last, until).await?.into();
                history.append(&mut self.backlog);
                self.backlog = history;
                continue;
            }
            if let Some(e) = self.backlog.pop_front() {
                if e.event.seq > self.last {
                    self.last = e.event.seq;
                    return Ok(WatchItem::Event(e));
                }
                continue;
            }
            let Some(rx) = self.rx.as_mut() else {
                // The game was over for this watch when it began.
                return Ok(WatchItem::End(WatchEnd::Finished));
            };
            let told = rx.recv().await;
            if let Err(RecvError::Lagged(_)) = told {
                // Off the messages the channel still holds for it, on to the next: what
                // it missed comes from the game (read after this, so nothing falls in
                // between), and a watcher left at the oldest message held would lag
                // again at the next.
                *rx = rx.resubscribe();
            }
            match told {
                Ok(Told::Events(events)) => {
                    if let Some(first) = events.first()
                        && first.event.seq > self.last + 1
                    {
                        // Never expected (the channel starts where the history ends),
                        // but a gap is filled from the log rather than passed on.
                        self.history_until = first.event.seq - 1;
                    }
                    self.backlog.extend(events.iter().cloned());
                }
                Ok(Told::End(WatchEnd::Finished)) if self.through_end => {}
                Ok(Told::End(end)) => return Ok(WatchItem::End(end)),
                // The task is gone without a word: it stopped.
                Err(RecvError::Closed) => return Ok(WatchItem::End(WatchEnd::ShuttingDown)),
                Err(RecvError::Lagged(_)) if self.delayed => {
                    // Behind the public delay a snapshot would be the live game: fill
                    // the gap from the log, up to what the viewers have seen (the
                    // channel brings the rest).
                    match self
                        .game
                        .read_as(Audience::Public, |s, _| s.last_seq())
                        .await
                    {
                        Ok(seen) => self.history_until = seen,
                        Err(HubError::ShuttingDown) => {
                            return Ok(WatchItem::End(WatchEnd::ShuttingDown));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(RecvError::Lagged(_)) => {
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
            }
        }
    }

    /// The events in `(after, until]` from the store, with their notes (the whole log is
    /// folded to compute them).
    async fn history(&self, after: u64, until: u64) -> Result<Vec<Arc<Published>>, HubError> {
        let id = &self.game.meta().id;
        let rows = self.store.load(Stream::Game(id), 1).await?;
        let events = decode(id, &rows)?;
        let (session, notes) =
            Session::replay_noted(&events).map_err(|e| HubError::Corrupt(format!("{id}: {e}")))?;
        let variant = session.variant();
        Ok(events
            .into_iter()
            .zip(notes)
            .filter(|(e, _)| e.seq > after && e.seq <= until)
            .map(|(event, note)| Arc::new(Published::new(event, note, variant)))
            .collect())
    }
}
