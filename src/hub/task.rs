//! One task per live game: it owns the game's [`Session`], its next clock deadline and its
//! fan-out (`fanout.rs`). Commands reach it over a bounded channel with a reply; the whole commit
//! (append durably → take the new state → answer → publish) runs inside the task, so a
//! caller that goes away mid-way cannot change the outcome: a command happened completely
//! or not at all. The timer is the same task (`select!` over commands, the deadline and
//! shutdown), shaped like mini-redis's `db.rs` purge task.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::error::{HubError, append_decided, decode};
use super::fanout::{Fanout, Published, WatchStart, tell};
use super::metrics::Metrics;
use super::timeline::Timeline;
use crate::game::GameMeta;
use crate::game::{Actor, Command, Decided, EventKind, GameEvent, Play, Session};
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
    /// Subscribe a watcher: to the viewers' channel if `public` (and the game has a
    /// broadcast delay); `through_end`: it goes on past the game's end.
    Watch {
        from_seq: u64,
        public: bool,
        through_end: bool,
        reply: oneshot::Sender<WatchStart>,
    },
    /// Tests: how many watchers the game's channels have.
    #[cfg(test)]
    Watchers(oneshot::Sender<usize>),
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

/// A command as a caller sends it: made already, or a player's command for the side to
/// move, which the task knows (an arbiter acting for "the side to move" saves a read
/// first). Data, not code: the task makes the command.
#[derive(Debug)]
pub enum Pending {
    /// The command.
    Ready(Command),
    /// A player's command for the side to move when the task decides it.
    ForSideToMove(Play),
}

/// The game as viewers see it, `delay_ms` behind the live one (DESIGN.md §10: the
/// public delay is applied at the edge, as Lichess applies its relay delay). The task
/// makes each event public once, when its delay has passed, and sends it to the viewers'
/// channel then.
pub(super) struct Public {
    pub(super) delay_ms: u64,
    session: Session,
    /// Recorded events not yet public, in order.
    pub(super) pending: VecDeque<Arc<Published>>,
}

impl Public {
    /// The public copy of a game whose log is `events`, as of `cutoff`: every event up to
    /// that instant (the first, `GameCreated`, always: the game is announced at once).
    pub fn new(events: &[GameEvent], delay_ms: u64, cutoff: u64) -> Option<Public> {
        let first = events.first()?;
        let mut session = Session::replay(std::slice::from_ref(first)).ok()?;
        let mut at = 1;
        while let Some(e) = events.get(at)
            && e.at.mono_ms <= cutoff
        {
            session.apply(e).ok()?;
            at += 1;
        }
        // The notes of the held-back events, as the owner noted them.
        let mut ahead = session.clone();
        let notes = ahead.apply_all_noted(&events[at..]).ok()?;
        let variant = session.variant();
        let pending = events[at..]
            .iter()
            .cloned()
            .zip(notes)
            .map(|(event, note)| Arc::new(Published::new(event, note, variant)))
            .collect();
        Some(Public {
            delay_ms,
            session,
            pending,
        })
    }

    /// Makes public what happened up to `cutoff`; returns what it made public.
    fn release(&mut self, cutoff: u64) -> Vec<Arc<Published>> {
        let mut released = Vec::new();
        while self
            .pending
            .front()
            .is_some_and(|e| e.event.at.mono_ms <= cutoff)
        {
            if let Some(e) = self.pending.pop_front() {
                if let Err(err) = self.session.apply(&e.event) {
                    // Every event applied to the live session already: this cannot fail.
                    tracing::error!(error = %err, "public copy of a game");
                }
                released.push(e);
            }
        }
        released
    }

    /// When the next held-back event becomes public (monotonic ms).
    fn next_ms(&self) -> Option<u64> {
        self.pending
            .front()
            .map(|e| e.event.at.mono_ms.saturating_add(self.delay_ms))
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

/// How long the timer waits before trying again after the store refused what time did.
const RETRY: Duration = Duration::from_millis(200);

pub(super) struct GameTask {
    pub meta: Arc<GameMeta>,
    pub session: Session,
    pub store: Arc<dyn EventStore>,
    pub timeline: Timeline,
    pub metrics: Arc<Metrics>,
    pub rx: mpsc::Receiver<Msg>,
    /// The hub's shutdown token: cancelled, the task stops (the hub's shutdown waits for
    /// it: every task runs on the hub's tracker).
    pub stop: CancellationToken,
    /// The watchers' channels.
    pub fanout: Fanout,
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
    Msg(Option<Msg>),
    Deadline,
    Public,
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
            // The next held-back event the viewers see.
            let public_at = self
                .public
                .as_ref()
                .and_then(Public::next_ms)
                .map(|ms| self.timeline.instant(ms));
            // Finished: a game that nobody watches leaves memory once idle.
            let idle_at = self
                .session
                .result()
                .is_some()
                .then(|| (self.active_at + self.evict_after).max(public_until));
            let stop = &self.stop;
            let rx = &mut self.rx;
            let wake = tokio::select! {
                biased;
                () = stop.cancelled() => Wake::Stop,
                msg = rx.recv() => Wake::Msg(msg),
                () = sleep_until(deadline), if deadline.is_some() => Wake::Deadline,
                () = sleep_until(public_at), if public_at.is_some() => Wake::Public,
                () = sleep_until(idle_at), if idle_at.is_some() => Wake::Idle,
            };
            match wake {
                Wake::Stop | Wake::Msg(None) => break,
                Wake::Public => {
                    self.release_public();
                }
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
                    if self.fanout.watchers() == 0 && self.leave() {
                        // What was queued before the hub forgot this task is still
                        // done here; later callers load the game anew.
                        while let Ok(msg) = self.rx.try_recv() {
                            match msg {
                                // A watch that goes on past the end (a bound board's)
                                // registered here would be left with a task that is gone
                                // and never hear the events recorded after: it registers
                                // with the game loaded anew.
                                Msg::Watch {
                                    through_end: true, ..
                                } => {
                                    if let Some(hub) = self.hub.upgrade() {
                                        hub.forward(self.meta.id.clone(), msg);
                                    }
                                }
                                msg => self.handle(msg).await,
                            }
                        }
                        return;
                    }
                    self.active_at = tokio::time::Instant::now();
                }
            }
        }
        self.fanout.shut();
        // Commands still queued are dropped with their replies: their callers learn that
        // the server is shutting down, and nothing of them was recorded.
        self.rx.close();
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
                    if self.fanout.live.watchers() > 0 {
                        // The caller's answer runs before the watchers are woken.
                        tokio::task::yield_now().await;
                    }
                    self.release(&events);
                }
            }
            Msg::Read { f, public } => {
                let now = self.now().mono_ms;
                let cutoff = self.release_public();
                match (&self.public, cutoff) {
                    (Some(p), Some(cutoff)) if public => {
                        f(&p.session, cutoff.max(p.session.last_ms()));
                    }
                    _ => f(&self.session, now),
                }
            }
            #[cfg(test)]
            Msg::Watchers(reply) => {
                let _ = reply.send(self.fanout.watchers());
            }
            Msg::Watch {
                from_seq,
                public,
                through_end,
                reply,
            } => {
                self.release_public();
                let (session, channel) = match &self.public {
                    Some(p) if public => (&p.session, &mut self.fanout.public),
                    _ => (&self.session, &mut self.fanout.live),
                };
                let delayed = public && self.public.is_some();
                let last_seq = session.last_seq();
                let over = session.result().is_some() && !through_end;
                let rx = (!over).then(|| channel.subscribe());
                // The recent events are the live game's last: the viewers' copy, behind
                // it, takes those it has seen.
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
                            .filter(|e| e.event.seq > from_seq && e.event.seq <= last_seq)
                            .cloned()
                            .collect(),
                    )
                } else {
                    None
                };
                let _ = reply.send(WatchStart {
                    last_seq,
                    backlog,
                    rx,
                    delayed,
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
            Pending::ForSideToMove(play) => play.by(self.session.position().turn()),
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
        if !was_finished && self.session.result().is_some() {
            self.metrics.game_finished();
        }
        let variant = self.session.variant();
        let published: Vec<Arc<Published>> = decided
            .events
            .into_iter()
            .zip(decided.notes)
            .map(|(event, note)| Arc::new(Published::new(event, note, variant)))
            .collect();
        self.hold_back(&published);
        Ok(published)
    }

    /// Holds recorded events back from the viewers of a game with a broadcast delay.
    pub(super) fn hold_back(&mut self, events: &[Arc<Published>]) {
        if let Some(p) = self.public.as_mut() {
            p.pending.extend(events.iter().cloned());
            self.metrics.delayed(
                tokio::time::Instant::now() + Duration::from_millis(p.delay_ms),
                events.len(),
            );
        }
    }

    /// Makes public what the broadcast delay no longer holds back, and tells the
    /// viewers' channel; returns the viewers' instant (none: no delay).
    fn release_public(&mut self) -> Option<u64> {
        let delay_ms = self.public.as_ref()?.delay_ms;
        let cutoff = self.now().mono_ms.saturating_sub(delay_ms);
        let p = self.public.as_mut()?;
        let released = p.release(cutoff);
        let finished = p.session.result().is_some();
        tell(&mut self.fanout.public, &released, finished);
        Some(cutoff)
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

    /// Tells the live channel (each stream ends after the event that finished the game,
    /// but a bound board's, which hears what is recorded after it too).
    pub(super) fn publish(&mut self, events: &[Arc<Published>], finished: bool) {
        for e in events {
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(e.clone());
        }
        tell(&mut self.fanout.live, events, finished);
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
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
