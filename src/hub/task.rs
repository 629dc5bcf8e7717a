//! One task per live game: it owns the game's [`Session`], its next clock deadline and its
//! watchers. Commands reach it over a bounded channel with a reply; the whole commit
//! (append durably → take the new state → answer → publish) runs inside the task, so a
//! caller that goes away mid-way cannot change the outcome: a command happened completely
//! or not at all. The timer is the same task (`select!` over commands, the deadline and
//! shutdown), shaped like mini-redis's `db.rs` purge task.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use super::error::{HubError, append_decided, decode};
use super::metrics::Metrics;
use super::queue::{Departures, Published, WatchEnd, WatchQueue, WatchStart};
use super::timeline::Timeline;
use crate::game::GameMeta;
use crate::game::{Actor, Command, Decided, EventKind, GameEvent, Session};
use crate::rules::Color;
use crate::store::{EventStore, Standing, StoreError, Stream};

/// The reply to a command: the session after it (and the instant it was read at) and the
/// events it recorded, or why nothing was recorded.
pub(super) type Done =
    Box<dyn for<'a> FnOnce(Result<(&'a Session, u64, Vec<Arc<Published>>), HubError>) + Send>;

/// A read of the session as it stands, with the instant (monotonic ms).
pub(super) type Read = Box<dyn for<'a> FnOnce(&'a Session, u64) + Send>;

/// What a game's task is asked to do.
pub(super) enum Msg {
    /// Decide a command and record it.
    Command {
        actor: Actor,
        cmd: Pending,
        expected_seq: Option<u64>,
        /// An electronic board's own timestamp on the message, recorded in the events.
        board_ms: Option<i64>,
        received: Instant,
        done: Done,
    },
    /// Look at the session: the live one, or (`public`) the one viewers see.
    Read { f: Read, public: bool },
    /// Register a watcher's queue; a `public` one is told the game's delay.
    Watch {
        queue: Arc<WatchQueue>,
        from_seq: u64,
        public: bool,
        reply: oneshot::Sender<WatchStart>,
    },
    /// The store dropped this node's lease on the game: step down (checked after every
    /// wake; this only wakes the task).
    LeaseLost,
    /// The game's log grew on another node: a follower reads it now.
    Follow,
    /// Where the game stands in the shared log (the hub's survey of the games this node
    /// follows): a follower reads the rows it lacks, and takes a running game whose
    /// lease ran out.
    Surveyed(Standing),
}

impl Msg {
    /// A message of the hub's own (not a caller's): it does not keep a finished game in
    /// memory.
    fn internal(&self) -> bool {
        matches!(self, Msg::LeaseLost | Msg::Follow | Msg::Surveyed(_))
    }
}

/// A command as a caller sends it: made already, or made for the side to move when the
/// task decides it (an arbiter acting for "the side to move" saves a read first).
pub enum Pending {
    /// The command.
    Ready(Command),
    /// The command for the side to move, made in the task.
    ForSideToMove(Box<dyn FnOnce(Color) -> Command + Send>),
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pending::Ready(c) => f.debug_tuple("Ready").field(c).finish(),
            Pending::ForSideToMove(_) => f.write_str("ForSideToMove"),
        }
    }
}

/// The game as viewers see it, `delay_ms` behind the live one (DESIGN.md §10: the
/// public delay is applied at the edge, as Lichess applies its relay delay).
pub(super) struct Public {
    pub(super) delay_ms: u64,
    session: Session,
    /// Recorded events not yet public, in order.
    pub(super) pending: VecDeque<GameEvent>,
}

impl Public {
    /// The public copy of a game whose log is `events`, as of `cutoff`: every event up to
    /// that instant (the first, `GameCreated`, always: the game is announced at once).
    pub fn new(events: &[GameEvent], delay_ms: u64, cutoff: u64) -> Option<Public> {
        let first = events.first()?;
        let mut session = Session::replay(std::slice::from_ref(first)).ok()?;
        let mut pending = VecDeque::new();
        for e in &events[1..] {
            if pending.is_empty() && e.at.mono_ms <= cutoff {
                session.apply(e).ok()?;
            } else {
                pending.push_back(e.clone());
            }
        }
        Some(Public {
            delay_ms,
            session,
            pending,
        })
    }

    /// Makes public what happened up to `cutoff`; returns the session then.
    fn at(&mut self, cutoff: u64) -> &Session {
        while self.pending.front().is_some_and(|e| e.at.mono_ms <= cutoff) {
            if let Some(e) = self.pending.pop_front()
                && let Err(err) = self.session.apply(&e)
            {
                // Every event applied to the live session already: this cannot fail.
                tracing::error!(error = %err, "public copy of a game");
            }
        }
        &self.session
    }
}

/// How a task holds its game: the owner's or a follower's (see the `follow` module).
#[derive(Debug, Clone)]
pub(super) struct Tenure {
    /// This node holds the lease: it decides and appends.
    pub owner: bool,
    /// The node serving the game when this one follows (node id, address), if known.
    pub elsewhere: Option<(String, String)>,
}

impl Tenure {
    /// The owner's tenure.
    pub(super) fn owner() -> Tenure {
        Tenure {
            owner: true,
            elsewhere: None,
        }
    }

    /// A follower's, of a game served by `elsewhere`.
    pub(super) fn follower(elsewhere: Option<(String, String)>) -> Tenure {
        Tenure {
            owner: false,
            elsewhere,
        }
    }
}

/// Where a task that leaves memory removes itself (the hub).
pub(super) trait Registry: Send + Sync {
    /// Forgets the game `id` if `tx` is still its task's channel and `idle()` holds
    /// (checked under the registry's lock); returns whether it did.
    fn evict(&self, id: &str, tx: &mpsc::Sender<Msg>, idle: &dyn Fn() -> bool) -> bool;
    /// Sends `msg` to the game `id` loaded anew (a task that left memory passes on what
    /// came after it was forgotten and must outlive it).
    fn forward(self: Arc<Self>, id: String, msg: Msg);
}

/// How many recent events a task keeps for watchers that resume close behind.
const RECENT: usize = 16;

/// The room a task's list of watchers keeps however few are left
/// ([`GameTask::drop_gone`]).
const MIN_ROOM: usize = 16;

/// How long the timer waits before trying again after the store refused what time did.
const RETRY: Duration = Duration::from_millis(200);

pub(super) struct GameTask {
    pub meta: Arc<GameMeta>,
    pub session: Session,
    pub store: Arc<dyn EventStore>,
    pub timeline: Timeline,
    pub metrics: Arc<Metrics>,
    pub rx: mpsc::Receiver<Msg>,
    pub stop: watch::Receiver<bool>,
    /// Held while the task runs: the hub's shutdown waits for every copy to be dropped.
    pub alive: mpsc::Sender<()>,
    pub watchers: Vec<Arc<WatchQueue>>,
    /// How many of them have left: wakes the task to drop them ([`Self::drop_gone`]).
    pub departures: Arc<Departures>,
    pub recent: VecDeque<Arc<Published>>,
    pub retry_at: Option<tokio::time::Instant>,
    /// The hub, to leave its map when evicted.
    pub hub: Weak<dyn Registry>,
    /// The task's own channel (to check it is still the one the hub has).
    pub me: mpsc::WeakSender<Msg>,
    /// How long a finished game with no watcher stays after its last message.
    pub evict_after: Duration,
    /// The last message's instant.
    pub active_at: tokio::time::Instant,
    /// The viewers' copy, for a game with a broadcast delay.
    pub public: Option<Public>,
    /// Whether this node owns the game or follows it (see the `follow` module).
    pub tenure: Tenure,
    /// Whether an outage is charged to the side on move (the server's setting).
    pub charge_outage: bool,
}

enum Wake {
    Stop,
    Departed,
    Msg(Option<Msg>),
    Deadline,
    Idle,
}

impl GameTask {
    /// Runs until shutdown (or until every handle is gone), then ends every watch.
    pub async fn run(mut self) {
        loop {
            // A follower has no timer: the hub's survey and hints wake it.
            let deadline = if self.tenure.owner {
                self.retry_at.or_else(|| {
                    self.session
                        .next_deadline()
                        .map(|ms| self.timeline.instant(ms))
                })
            } else {
                None
            };
            // Not before the viewers have seen the end either.
            let public_until = self
                .timeline
                .instant(self.session.last_ms() + self.public.as_ref().map_or(0, |p| p.delay_ms));
            // Finished: only a bound board's watch (which goes on past the end) can be
            // left, and it may leave at any time; the idle look below drops the gone.
            let idle_at = self
                .session
                .result()
                .is_some()
                .then(|| (self.active_at + self.evict_after).max(public_until));
            let stop = &mut self.stop;
            let rx = &mut self.rx;
            let departures = &self.departures;
            let wake = tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s) => Wake::Stop,
                () = departures.wait() => Wake::Departed,
                msg = rx.recv() => Wake::Msg(msg),
                () = sleep_until(deadline), if deadline.is_some() => Wake::Deadline,
                () = sleep_until(idle_at), if idle_at.is_some() => Wake::Idle,
            };
            match wake {
                Wake::Stop | Wake::Msg(None) => break,
                Wake::Departed => self.drop_gone(),
                Wake::Msg(Some(msg)) => {
                    if !msg.internal() {
                        self.active_at = tokio::time::Instant::now();
                    }
                    self.handle(msg).await;
                    self.check_lease();
                }
                Wake::Deadline => {
                    self.tick().await;
                    self.check_lease();
                }
                Wake::Idle => {
                    self.drop_gone();
                    if self.watchers.is_empty() && self.leave() {
                        // What was queued before the hub forgot this task is still
                        // done here; later callers load the game anew.
                        while let Ok(msg) = self.rx.try_recv() {
                            match msg {
                                // A watch that goes on past the end (a bound board's)
                                // registered here would be left with a task that is gone
                                // and never hear the events recorded after: it registers
                                // with the game loaded anew.
                                Msg::Watch { ref queue, .. } if queue.through_end => {
                                    if let Some(hub) = self.hub.upgrade() {
                                        hub.forward(self.meta.id.clone(), msg);
                                    }
                                }
                                msg => self.handle(msg).await,
                            }
                        }
                        drop(self.alive);
                        return;
                    }
                    self.active_at = tokio::time::Instant::now();
                }
            }
        }
        for w in self.watchers.drain(..) {
            w.close(WatchEnd::ShuttingDown);
        }
        self.departures.held(0);
        // Commands still queued are dropped with their replies: their callers learn that
        // the server is shutting down, and nothing of them was recorded.
        self.rx.close();
        drop(self.alive);
    }

    /// Leaves the hub's map if nothing waits for this task; closes its channel then.
    fn leave(&mut self) -> bool {
        let (Some(hub), Some(me)) = (self.hub.upgrade(), self.me.upgrade()) else {
            return false;
        };
        let rx = &self.rx;
        let left = hub.evict(&self.meta.id, &me, &|| rx.is_empty());
        drop(me);
        if left {
            self.rx.close();
            tracing::debug!(game = %self.meta.id, "finished and idle: left memory");
        }
        left
    }

    pub(super) fn now(&self) -> crate::game::Now {
        self.timeline.now(self.session.last_ms())
    }

    async fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Command {
                actor,
                cmd,
                expected_seq,
                board_ms,
                received,
                done,
            } => {
                let result = if self.tenure.owner {
                    self.command(&actor, cmd, expected_seq, board_ms).await
                } else {
                    Err(self.not_owner())
                };
                if result.is_ok() {
                    self.metrics.acknowledged(received.elapsed());
                }
                let now = self.now().mono_ms;
                // The caller hears first, then the watchers: each woken watcher is work
                // queued ahead of the caller's answer otherwise, and a move has hundreds.
                // Nothing else of this game runs in between.
                let held = match &result {
                    Ok(events) if !events.is_empty() => Some(events.clone()),
                    _ => None,
                };
                done(result.map(|events| (&self.session, now, events)));
                if let Some(events) = held {
                    if !self.watchers.is_empty() {
                        // The caller's answer runs before the watchers are woken.
                        tokio::task::yield_now().await;
                    }
                    self.release(&events);
                }
            }
            Msg::Read { f, public } => {
                let now = self.now().mono_ms;
                match self.public.as_mut() {
                    Some(p) if public => {
                        let cutoff = now.saturating_sub(p.delay_ms);
                        let session = p.at(cutoff);
                        f(session, cutoff.max(session.last_ms()));
                    }
                    _ => f(&self.session, now),
                }
            }
            Msg::Watch {
                queue,
                from_seq,
                public,
                reply,
            } => {
                let delay_ms = match &self.public {
                    Some(p) if public => p.delay_ms,
                    _ => 0,
                };
                let last_seq = self.session.last_seq();
                let backlog = if from_seq >= last_seq {
                    Some(Vec::new())
                } else if self
                    .recent
                    .front()
                    .is_some_and(|e| e.event.seq <= from_seq + 1)
                {
                    Some(
                        self.recent
                            .iter()
                            .filter(|e| e.event.seq > from_seq)
                            .cloned()
                            .collect(),
                    )
                } else {
                    None
                };
                if self.session.result().is_some() && !queue.through_end {
                    queue.close(WatchEnd::Finished);
                } else {
                    self.add_watcher(queue);
                }
                let _ = reply.send(WatchStart {
                    last_seq,
                    backlog,
                    delay_ms,
                    last_ms: self.session.last_ms(),
                });
            }
            Msg::LeaseLost => {}
            Msg::Follow => {
                if !self.tenure.owner {
                    self.follow().await;
                }
            }
            Msg::Surveyed(standing) => {
                if !self.tenure.owner {
                    self.surveyed(standing).await;
                }
            }
        }
    }

    async fn command(
        &mut self,
        actor: &Actor,
        cmd: Pending,
        expected_seq: Option<u64>,
        board_ms: Option<i64>,
    ) -> Result<Vec<Arc<Published>>, HubError> {
        let cmd = match cmd {
            Pending::Ready(c) => c,
            Pending::ForSideToMove(make) => make(self.session.position().turn()),
        };
        let last = self.session.last_seq();
        if let Some(expected) = expected_seq
            && expected != 0
            && expected != last
        {
            return Err(HubError::Stale {
                expected,
                actual: last,
            });
        }
        let now = self.now();
        // Time's own events first (flags, "Time!"); usually there are none.
        let ticked = self.session.ticked(now);
        let base = ticked.as_ref().map_or(&self.session, |d| &d.session);
        match base.handled_from_board(actor, cmd, now, board_ms) {
            Ok(decided) => {
                let decided = match ticked {
                    Some(mut t) => {
                        t.events.extend(decided.events);
                        t.notes.extend(decided.notes);
                        Decided {
                            session: decided.session,
                            ..t
                        }
                    }
                    None => decided,
                };
                self.commit_held(decided).await
            }
            Err(e) => {
                if let Some(t) = ticked {
                    self.commit(t).await?;
                }
                Err(HubError::Game(e))
            }
        }
    }

    /// Appends the decided events durably, then takes the new state and tells the
    /// watchers. A failed append changes nothing.
    pub(super) async fn commit(
        &mut self,
        decided: Decided,
    ) -> Result<Vec<Arc<Published>>, HubError> {
        let published = self.commit_held(decided).await?;
        self.release(&published);
        Ok(published)
    }

    /// [`Self::commit`] but for telling the watchers, which [`Self::release`] does: the
    /// caller answers its command in between.
    async fn commit_held(&mut self, decided: Decided) -> Result<Vec<Arc<Published>>, HubError> {
        if decided.events.is_empty() {
            return Ok(Vec::new());
        }
        let id = &self.meta.id;
        let was_finished = self.session.result().is_some();
        let appended = append_decided(
            self.store.as_ref(),
            id,
            &self.session,
            &decided.session,
            &decided.events,
        )
        .await;
        if let Err(HubError::Store(StoreError::Conflict { .. })) = &appended {
            // Someone else wrote this game's log (another copy of the task in the
            // instant of an eviction): take the log as it is, then refuse.
            self.reload().await;
        }
        if let Err(HubError::Store(StoreError::Fenced { owner, .. })) = &appended {
            // Another node holds the game now: nothing was written; follow it.
            self.step_down(owner.clone());
        }
        appended?;
        self.metrics.events_appended(decided.events.len());
        for e in &decided.events {
            if matches!(e.kind, EventKind::MovePlayed { .. }) {
                self.metrics.move_accepted(decided.session.variant());
            }
        }
        self.session = decided.session;
        if let Some(p) = self.public.as_mut() {
            p.pending.extend(decided.events.iter().cloned());
            self.metrics.delayed(
                tokio::time::Instant::now() + Duration::from_millis(p.delay_ms),
                decided.events.len(),
            );
        }
        if !was_finished && self.session.result().is_some() {
            self.metrics.game_finished();
        }
        let variant = self.session.variant();
        Ok(decided
            .events
            .into_iter()
            .zip(decided.notes)
            .map(|(event, note)| Arc::new(Published::new(event, note, variant)))
            .collect())
    }

    /// Tells the watchers of events [`Self::commit_held`] recorded (the session is still
    /// the one after them).
    fn release(&mut self, events: &[Arc<Published>]) {
        if !events.is_empty() {
            let finished = self.session.result().is_some();
            self.publish(events, finished);
        }
    }

    /// Rebuilds the session from the log (after a conflicting write).
    async fn reload(&mut self) {
        let id = &self.meta.id;
        let rebuilt = match self.store.load(Stream::Game(id), 1).await {
            Ok(rows) => decode(id, &rows).and_then(|events| {
                Session::replay(&events).map_err(|e| HubError::Corrupt(format!("{id}: {e}")))
            }),
            Err(e) => Err(e.into()),
        };
        match rebuilt {
            Ok(session) => self.session = session,
            Err(e) => tracing::error!(game = %id, error = %e, "reload after a conflict"),
        }
    }

    pub(super) fn publish(&mut self, events: &[Arc<Published>], finished: bool) {
        for e in events {
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(e.clone());
        }
        self.watchers.retain(|w| w.push(events));
        if finished {
            // Each stream ends after the event that finished the game, but a bound
            // board's, which hears what is recorded after it too.
            self.watchers.retain(|w| {
                if !w.through_end {
                    w.close(WatchEnd::Finished);
                }
                w.through_end
            });
        }
        self.departures.held(self.watchers.len());
    }

    /// Adds a watcher to the list; the task is told when it leaves ([`Departures`]). One
    /// that left before it got here (its registration was dropped) is not added.
    pub(super) fn add_watcher(&mut self, queue: Arc<WatchQueue>) {
        // Told first: a watcher that leaves after the look below is counted.
        queue.held_by(&self.departures);
        if queue.gone() {
            return;
        }
        self.watchers.push(queue);
        self.departures.held(self.watchers.len());
    }

    /// Drops the watchers that have gone, and the list's room a crowd that has left no
    /// longer needs. Woken once half the list has gone ([`Departures`]), so the work is
    /// amortised O(1) a watcher, and a crowd that leaves a quiet game leaves nothing of
    /// itself behind. (Before, a quiet game's gone watches were dropped only as new ones
    /// came, when the list had doubled: the last crowd's stayed.)
    pub(super) fn drop_gone(&mut self) {
        // Before the look: a watcher that leaves during it is counted for the next one.
        self.departures.looked();
        self.watchers.retain(|w| !w.gone());
        let live = self.watchers.len();
        if self.watchers.capacity() > 4 * live.max(MIN_ROOM) {
            self.watchers.shrink_to(2 * live.max(MIN_ROOM));
        }
        self.departures.held(live);
    }

    /// Records what time has done (the timer fired).
    async fn tick(&mut self) {
        self.retry_at = None;
        let now = self.now();
        match self.session.ticked(now) {
            Some(decided) => {
                if let Err(e) = self.commit(decided).await {
                    tracing::warn!(game = %self.meta.id, error = %e, "timer: not recorded, retrying");
                    self.retry_at = Some(tokio::time::Instant::now() + RETRY);
                }
            }
            None => {
                // Woken at a deadline with nothing due (the clock's instant rounds to
                // the millisecond): look again shortly rather than spin.
                if self
                    .session
                    .next_deadline()
                    .is_some_and(|ms| ms <= now.mono_ms)
                {
                    self.retry_at = Some(tokio::time::Instant::now() + Duration::from_millis(1));
                }
            }
        }
        self.drop_gone();
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
