//! The registry of live games: the hub's map of game tasks, creation, eviction, and the
//! shutdown token every task and stream stops on (loading a game once: `loading.rs`;
//! listings: `listing.rs`). Recovery (`recovery.rs`), the nodes' loop (`nodes.rs`) and the tournaments
//! (`tournaments.rs`) work through it; `mod.rs` assembles the hub and starts its loops.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::error::{HubError, encode, summary_of};
use super::fanout;
use super::handle::{GameHandle, Loader};
use super::metrics::Metrics;
use super::quarantine::Quarantine;
use super::slots;
use super::task::{GameTask, Msg, Public, Registry, Tenure};
use super::timeline::{Clocks, Started, Timeline};
use crate::game::{
    Actor, GameEvent, GameMeta, GameSettings, GameSummary, Now, OutageMeasure, Session,
};
use crate::store::{AliveMark, EventStore, GameRecord, Stream};

/// The hub's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubConfig {
    /// Commands waiting for one game's task; a caller beyond that waits to queue.
    pub command_queue: usize,
    /// Messages one watcher may fall behind its game's channel before it is
    /// resynchronised instead (the capacity of each broadcast channel, `fanout.rs`).
    pub watcher_queue: usize,
    /// Games in memory at most; loading one more answers [`HubError::Full`].
    pub max_loaded: usize,
    /// A finished game with no watcher leaves memory after this long without a command
    /// or a read (its summary row answers listings meanwhile).
    pub evict_after: Duration,
    /// Watchers of one game at most; one more answers [`HubError::TooManyWatchers`].
    pub max_watchers_per_game: usize,
    /// Watchers of all games together at most.
    pub max_watchers: usize,
    /// How often the hub surveys the games this node follows (another node owns them),
    /// in one statement: a game whose log grew without a hint (hints can be lost) reads
    /// the new rows, and a running game whose owner's lease ran out is taken over. A
    /// survey also comes just after the first of those leases is due to end (its owner
    /// may be dead). Every fourth period the hub also looks for running games that no
    /// node serves.
    pub takeover_every: Duration,
}

impl Default for HubConfig {
    fn default() -> HubConfig {
        HubConfig {
            command_queue: 64,
            watcher_queue: 1024,
            max_loaded: 100_000,
            evict_after: Duration::from_secs(60),
            max_watchers_per_game: 5_000,
            max_watchers: 50_000,
            takeover_every: Duration::from_millis(250),
        }
    }
}

/// What a listing shows of a game.
#[derive(Debug, Clone)]
pub enum Listed {
    /// In memory: ask its task.
    Live(GameHandle),
    /// Not in memory (finished and idle): its stored summary.
    Stored(Arc<GameMeta>, Box<GameSummary>),
    /// Quarantined: its log does not replay. Its stored summary if the game finished
    /// before (the row is current only for finished games).
    Quarantined(Arc<GameMeta>, Quarantine, Option<Box<GameSummary>>),
}

/// How often the hub marks the service alive in the store
/// ([`EventStore::mark_alive`]): after a crash, at most this much of the time before it
/// counts as outage.
pub const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// A test's hook on the next eviction (see `Hub::on_evict`).
#[cfg(test)]
type OnEvict = Box<dyn FnOnce(&GameHandle) + Send>;

/// All live games, their store and the shutdown signal.
pub struct Hub {
    pub(super) store: Arc<dyn EventStore>,
    games: Mutex<HashMap<String, GameHandle>>,
    pub(super) timeline: Timeline,
    /// Where the time comes from (the host's clocks; a fake one in tests).
    pub(super) clocks: Arc<dyn Clocks>,
    pub(super) charge_outage: bool,
    /// When the previous run last served the store's games (read before this hub first
    /// marked itself alive), and what measured the time since: a running game loaded now
    /// was down from then.
    pub(super) down_since: Option<(u64, OutageMeasure)>,
    /// Recovery has loaded the unfinished games: from then on the hub marks the service
    /// alive. A start that fails before (the store cannot list the games) leaves the
    /// previous run's mark, so the next start still counts the outage from there.
    pub(super) serving: std::sync::atomic::AtomicBool,
    next_id: AtomicU64,
    pub(super) metrics: Arc<Metrics>,
    pub(super) config: HubConfig,
    /// Watchers of all games, for [`HubConfig::max_watchers`].
    watchers: Arc<std::sync::atomic::AtomicUsize>,
    /// The one shutdown signal (mini-redis `shutdown.rs`): cancelled when shutdown begins.
    /// The games' tasks, the streams and the hub's own loops stop on it; checking it
    /// takes no lock (10,000 round streams look at it at every message).
    shutdown: CancellationToken,
    /// The games' tasks: shutdown waits for every one to end.
    tasks: TaskTracker,
    /// Games whose log does not replay, by id: set aside, every other game serves.
    pub(super) quarantined: Mutex<BTreeMap<String, Quarantine>>,
    /// One gate per game being loaded, so two requests never load (and record the
    /// outage of) the same game twice.
    pub(super) loading: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Games being created: each has its place among the loaded games from before its
    /// write (see [`Hub::create`]).
    creating: std::sync::atomic::AtomicUsize,
    /// Every game created, announced once it is durable and loaded (round streams add
    /// it); a listener that falls behind lists the store again.
    pub(super) created: broadcast::Sender<Arc<GameMeta>>,
    /// Tests: run once on the handle of the next game evicted, just after it left the
    /// map (a caller that took the handle before, reaching the task as it leaves).
    #[cfg(test)]
    pub(super) on_evict: Mutex<Option<OnEvict>>,
}

/// How many creations a round stream may fall behind before it lists again.
const CREATED_QUEUE: usize = 256;

impl Hub {
    /// The hub itself, its background loops not started (`mod.rs` starts them).
    pub(super) fn build(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
        config: HubConfig,
        clocks: Arc<dyn Clocks>,
    ) -> Arc<Hub> {
        let mark = store.alive_mark();
        let (timeline, started) = Timeline::resume(mark.as_ref(), clocks.as_ref());
        told_of_the_start(mark.as_ref(), &started, &metrics);
        Arc::new(Hub {
            store,
            games: Mutex::new(HashMap::new()),
            timeline,
            clocks,
            charge_outage,
            down_since: mark.map(|m| (m.at_ms, started.measured)),
            serving: std::sync::atomic::AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            metrics,
            config,
            watchers: Arc::default(),
            shutdown: CancellationToken::new(),
            tasks: TaskTracker::new(),
            quarantined: Mutex::new(BTreeMap::new()),
            loading: Mutex::new(HashMap::new()),
            creating: std::sync::atomic::AtomicUsize::new(0),
            created: broadcast::channel(CREATED_QUEUE).0,
            #[cfg(test)]
            on_evict: Mutex::new(None),
        })
    }

    /// The metrics it counts into.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// How many messages a watcher may fall behind before it is resynced
    /// ([`HubConfig::watcher_queue`]).
    pub fn watcher_queue(&self) -> usize {
        self.config.watcher_queue
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// A game's log as recorded, decoded (every event, whatever the audience: the caller
    /// cuts it where its reader may see).
    ///
    /// # Errors
    /// The game not found in the store ([`StoreError::GameNotFound`]); a row that does not
    /// decode ([`HubError::Corrupt`]); the store failing.
    pub async fn log_of(&self, id: &str) -> Result<Vec<GameEvent>, HubError> {
        let rows = self.store.load(Stream::Game(id), 1).await?;
        super::error::decode(id, &rows)
    }

    /// The current instant on the server's timeline.
    pub fn now(&self) -> Now {
        self.timeline.now(0)
    }

    /// The alive mark of this instant: the timeline, and the host's boot clock.
    pub(super) fn alive_mark(&self) -> AliveMark {
        // The boot clock first: read after, the timeline's instant can only be later, so
        // the next run never counts the time between the two reads as served.
        let boot = self.clocks.boot();
        AliveMark {
            at_ms: self.now().mono_ms,
            boot,
        }
    }

    pub(super) fn games(&self) -> std::sync::MutexGuard<'_, HashMap<String, GameHandle>> {
        self.games.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn new_id(&self) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let t = self.timeline.now(0).mono_ms;
        format!("g{t:x}{n:04x}")
    }

    /// Creates a game: its metadata row and its first event, durably, and its task.
    ///
    /// The game has its place among the loaded games before it is written, and the
    /// write, the task and the announcement to the round streams run on a task of their
    /// own: a caller that goes away (a deadline, a disconnect) cannot leave a game that is
    /// durable but not loaded nor announced, and a game refused for want of room is never
    /// written.
    ///
    /// # Errors
    /// A bad start position, the id taken, the store failing, no room
    /// ([`HubError::Full`]), or shutting down.
    pub async fn create(
        self: &Arc<Self>,
        mut meta: GameMeta,
        settings: GameSettings,
        start_fen: Option<&str>,
        actor: Actor,
    ) -> Result<GameHandle, HubError> {
        if self.stopping() {
            return Err(HubError::ShuttingDown);
        }
        if meta.id.is_empty() {
            meta.id = self.new_id();
        }
        let now = self.timeline.now(0);
        let (session, first) =
            Session::create(settings, start_fen, actor, now).map_err(HubError::Game)?;
        let record = GameRecord {
            game_id: meta.id.clone(),
            created_at_ms: now.mono_ms as i64,
            event: meta.event.clone(),
            round: meta.round.clone(),
            board: meta.board,
            finished: false,
            metadata_json: serde_json::to_string(&meta)
                .map_err(|e| HubError::Internal(format!("metadata: {e}")))?,
            summary_json: summary_of(&session)?.summary_json,
        };
        let payloads = encode(std::slice::from_ref(&first))?;
        let place = self.reserve()?;
        let hub = self.clone();
        tokio::spawn(async move {
            let _place = place;
            // One atomic write: a crash between a bare game row and its first event would
            // leave a log that does not replay.
            hub.store.create_game_with_events(record, payloads).await?;
            hub.metrics.events_appended(1);
            let line = hub.timeline.for_game();
            let public = hub.public(&session, std::slice::from_ref(&first), &line);
            // Its place was taken before the write.
            let handle = hub.insert(meta, session, public, Tenure::owner(), false, line)?;
            // No listener is no error.
            let _ = hub.created.send(handle.meta().clone());
            Ok(handle)
        })
        .await
        .map_err(|e| HubError::Internal(format!("creating a game: {e}")))?
    }

    /// A place among the loaded games for a game about to be created, given back when
    /// dropped (the game is in memory by then, or was never written).
    fn reserve(self: &Arc<Self>) -> Result<Place, HubError> {
        let games = self.games();
        let creating = self.creating.load(Ordering::Acquire);
        if games.len() + creating >= self.config.max_loaded {
            return Err(HubError::Full(games.len()));
        }
        // Under the games' lock, as every look at the room is.
        self.creating.fetch_add(1, Ordering::AcqRel);
        Ok(Place(self.clone()))
    }

    /// The games created from now on, each once it is durable and loaded.
    pub fn subscribe_created(&self) -> broadcast::Receiver<Arc<GameMeta>> {
        self.created.subscribe()
    }

    /// The viewers' copy of a game with a broadcast delay, built from its log; `line` is
    /// the game's timeline.
    pub(super) fn public(
        &self,
        session: &Session,
        events: &[GameEvent],
        line: &Timeline,
    ) -> Option<Public> {
        let delay = session.settings().broadcast_delay_ms;
        if delay == 0 {
            return None;
        }
        let cutoff = line.now(0).mono_ms.saturating_sub(delay);
        let public = Public::new(events, delay, cutoff)?;
        // The gauge counts what the public copy holds back (never the creation).
        let now = tokio::time::Instant::now();
        for e in &public.pending {
            let wait = std::time::Duration::from_millis(e.event.at.mono_ms.saturating_sub(cutoff));
            self.metrics.delayed(now + wait, 1);
        }
        Some(public)
    }

    /// Puts a game in memory and starts its task; if another request loaded the same
    /// game meanwhile, keeps that one. `capped`: refused when the loaded games and those
    /// being created fill [`HubConfig::max_loaded`] (a game being created has its place
    /// already). `line` is the game's timeline (the hub's, shifted for the game).
    pub(super) fn insert(
        self: &Arc<Self>,
        meta: GameMeta,
        session: Session,
        public: Option<Public>,
        tenure: Tenure,
        capped: bool,
        line: Timeline,
    ) -> Result<GameHandle, HubError> {
        let mut games = self.games();
        if let Some(existing) = games.get(&meta.id) {
            return Ok(existing.clone());
        }
        if capped && games.len() + self.creating.load(Ordering::Acquire) >= self.config.max_loaded {
            return Err(HubError::Full(games.len()));
        }
        if self.stopping() {
            return Err(HubError::ShuttingDown);
        }
        if session.result().is_none() && tenure.owner {
            self.metrics.game_started();
        }
        let (tx, rx) = mpsc::channel(self.config.command_queue.max(1));
        let this: Arc<Hub> = self.clone();
        let loader: std::sync::Weak<dyn Loader> = Arc::downgrade(&this) as _;
        let registry: std::sync::Weak<dyn Registry> = Arc::downgrade(&this) as _;
        drop(this);
        let me = tx.downgrade();
        let meta = Arc::new(meta);
        let handle = GameHandle {
            meta: meta.clone(),
            tx,
            store: self.store.clone(),
            slots: slots::Slots::new(
                &self.watchers,
                self.config.max_watchers_per_game,
                self.config.max_watchers,
            ),
            hub: loader,
        };
        games.insert(meta.id.clone(), handle.clone());
        drop(games);
        let task = GameTask {
            meta,
            session,
            store: self.store.clone(),
            timeline: line,
            metrics: self.metrics.clone(),
            rx,
            stop: self.shutdown.clone(),
            fanout: fanout::Fanout::new(self.config.watcher_queue),
            recent: Default::default(),
            retry_at: None,
            hub: registry,
            me,
            evict_after: self.config.evict_after,
            active_at: tokio::time::Instant::now(),
            public,
            tenure,
            charge_outage: self.charge_outage,
        };
        self.tasks.spawn(task.run());
        Ok(handle)
    }

    /// How many games are in memory.
    pub fn loaded(&self) -> usize {
        self.games().len()
    }

    /// Whether shutdown has begun.
    pub fn stopping(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Resolves once shutdown has begun (for streams that must end then).
    pub fn stopped(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        self.shutdown.clone().cancelled_owned()
    }

    /// Begins shutdown without waiting: no new games or commands; every task stops after
    /// the command it is committing and ends its watchers' streams.
    pub fn begin_shutdown(&self) {
        self.shutdown.cancel();
        self.tasks.close();
    }

    /// Shuts down: no new games or commands; each game's task finishes the command it is
    /// committing, ends its watchers' streams and stops. Returns when every task has.
    pub async fn shutdown(&self) {
        self.begin_shutdown();
        // A task started after the tracker closed is waited for as well; one started
        // after this wait ends sees the token cancelled and stops at once.
        self.tasks.wait().await;
        self.games().clear();
        // The instant the games stopped being served: the next run's outages start here.
        if self.serving.load(Ordering::Acquire)
            && let Err(e) = self.store.mark_alive(&self.alive_mark()).await
        {
            tracing::warn!(error = %e, "the stop was not marked: the next start counts the outage from the last mark");
        }
    }

    /// Removes an idle finished game's task from memory, if it is still the one loaded
    /// and nothing waits for it (`idle` is checked under the same lock). Returns whether
    /// it was removed.
    pub(super) fn evict(&self, id: &str, tx: &mpsc::Sender<Msg>, idle: &dyn Fn() -> bool) -> bool {
        let mut games = self.games();
        let ours = games.get(id).is_some_and(|h| h.tx.same_channel(tx));
        if ours && idle() {
            let _removed = games.remove(id);
            drop(games);
            #[cfg(test)]
            if let (Some(f), Some(h)) = (
                self.on_evict
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take(),
                &_removed,
            ) {
                f(h);
            }
            if self.store.holds(id) && tokio::runtime::Handle::try_current().is_ok() {
                // Another node may serve the game at once (a finished game, mostly).
                let store = self.store.clone();
                let id = id.to_string();
                tokio::spawn(async move { store.release(&id).await });
            }
            true
        } else {
            false
        }
    }
}

impl Registry for Hub {
    fn evict(&self, id: &str, tx: &mpsc::Sender<Msg>, idle: &dyn Fn() -> bool) -> bool {
        Hub::evict(self, id, tx, idle)
    }

    fn forward(self: Arc<Self>, id: String, msg: Msg) {
        tokio::spawn(async move {
            // Failing, the message is dropped with its reply: the watcher hears that
            // the server is shutting down (or the store failed), as a watch refused.
            if let Ok(fresh) = self.game(&id).await {
                let _ = fresh.tx.send(msg).await;
            }
        });
    }
}

impl Loader for Hub {
    fn reload(
        self: Arc<Self>,
        id: String,
    ) -> Pin<Box<dyn Future<Output = Result<GameHandle, HubError>> + Send>> {
        Box::pin(async move { self.game(&id).await })
    }

    fn stopping(&self) -> bool {
        Hub::stopping(self)
    }
}

/// Says at start how the timeline went on from the previous run, loudly when the wall
/// clock is not where the log says it can be, and sets the wall-clock gauge.
fn told_of_the_start(mark: Option<&AliveMark>, started: &Started, metrics: &Metrics) {
    metrics.wall_clock_offset(started.wall_offset_ms);
    let Some(mark) = mark else { return };
    if let Some(behind) = started.wall_behind_ms {
        metrics.wall_clock_implausible();
        tracing::error!(
            behind_ms = behind,
            alive_mark_ms = mark.at_ms,
            "the wall clock is behind the store's last alive mark (stepped back, or the \
             data came from another host): the timeline goes on from the mark, so no \
             running clock freezes; the outage is recorded as a lower bound"
        );
    } else if started.wall_offset_ms.unsigned_abs() > WALL_STEP_MS {
        metrics.wall_clock_implausible();
        tracing::error!(
            wall_offset_ms = started.wall_offset_ms,
            "the wall clock moved by more than the time the service was down (a step while \
             it was down): the timeline goes on by the host's boot clock, and event times \
             differ from the wall clock by that much until the next restart on another boot"
        );
    } else {
        tracing::info!(
            measured = ?started.measured,
            wall_offset_ms = started.wall_offset_ms,
            "timeline resumed from the alive mark"
        );
    }
}

/// How far the wall clock may drift from the timeline (ms) before it is reported as a
/// step.
pub(crate) const WALL_STEP_MS: u64 = 1_000;

/// A game's place among the loaded games while it is being created
/// ([`Hub::reserve`]).
pub(super) struct Place(Arc<Hub>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.creating.fetch_sub(1, Ordering::AcqRel);
    }
}
