//! The hub: the live games, one task per game that owns its judge.
//!
//! Callers (the gRPC services) reach a game through a [`GameHandle`]: a command goes to
//! the game's task over a bounded channel with a reply, and the task decides it, appends
//! its events durably, takes the new state and publishes the events to the watchers, in
//! that order and without the caller — so a cancelled request can never leave half a
//! commit behind, and nothing unacknowledged is ever applied or published. The task also
//! owns the game's clock deadline (a flag falls with nobody sending anything) and its
//! watchers ([`Watch`]: bounded queues, `Resync` for laggards, an end at the game's end
//! and at shutdown). See DESIGN.md §10.

mod error;
mod handle;
mod meta;
pub mod metrics;
mod queue;
mod task;
mod timeline;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch as signal};

pub use error::HubError;
pub(crate) use error::{decode, encode, summary_of};
pub use handle::{Audience, GameHandle, Snapshot, Watch, WatchItem};
pub use meta::{GameMeta, PlayerInfo};
pub use queue::{Published, WatchEnd};
pub use timeline::Timeline;

use crate::game::{Actor, GameEvent, GameSettings, GameSummary, Now, Session};
use crate::store::{EventStore, GameFilter, GameRecord};
use handle::Loader;
use metrics::Metrics;
use task::{GameTask, Msg, Public, Registry};

/// The hub's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubConfig {
    /// Commands waiting for one game's task; a caller beyond that waits to queue.
    pub command_queue: usize,
    /// Events one watcher may have waiting before it is resynchronised instead.
    pub watcher_queue: usize,
    /// Games in memory at most; loading one more answers [`HubError::Full`].
    pub max_loaded: usize,
    /// A finished game with no watcher leaves memory after this long without a command
    /// or a read (its summary row answers listings meanwhile).
    pub evict_after: Duration,
}

impl Default for HubConfig {
    fn default() -> HubConfig {
        HubConfig {
            command_queue: 64,
            watcher_queue: 1024,
            max_loaded: 100_000,
            evict_after: Duration::from_secs(60),
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
}

/// All live games, their store and the shutdown signal.
pub struct Hub {
    store: Arc<dyn EventStore>,
    games: Mutex<HashMap<String, GameHandle>>,
    timeline: Timeline,
    charge_outage: bool,
    next_id: AtomicU64,
    metrics: Arc<Metrics>,
    config: HubConfig,
    stop: signal::Sender<bool>,
    /// Each task holds a clone; `None` once shutting down (no new tasks).
    alive: Mutex<Option<mpsc::Sender<()>>>,
    all_stopped: tokio::sync::Mutex<mpsc::Receiver<()>>,
}

impl Hub {
    /// A hub over a store.
    pub fn new(store: Arc<dyn EventStore>, charge_outage: bool) -> Arc<Hub> {
        Self::with_metrics(store, charge_outage, Arc::new(Metrics::new()))
    }

    /// A hub over a store, counting into `metrics`.
    pub fn with_metrics(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
    ) -> Arc<Hub> {
        Self::with_config(store, charge_outage, metrics, HubConfig::default())
    }

    /// A hub with explicit sizes.
    pub fn with_config(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
        config: HubConfig,
    ) -> Arc<Hub> {
        let (alive, all_stopped) = mpsc::channel(1);
        Arc::new(Hub {
            store,
            games: Mutex::new(HashMap::new()),
            timeline: Timeline::start(),
            charge_outage,
            next_id: AtomicU64::new(0),
            metrics,
            config,
            stop: signal::channel(false).0,
            alive: Mutex::new(Some(alive)),
            all_stopped: tokio::sync::Mutex::new(all_stopped),
        })
    }

    /// The metrics it counts into.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// The current instant on the server's timeline.
    pub fn now(&self) -> Now {
        self.timeline.now(0)
    }

    fn games(&self) -> std::sync::MutexGuard<'_, HashMap<String, GameHandle>> {
        self.games.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn new_id(&self) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let t = self.timeline.now(0).mono_ms;
        format!("g{t:x}{n:04x}")
    }

    /// Creates a game: its metadata row and its first event, durably, and its task.
    ///
    /// # Errors
    /// A bad start position, the id taken, the store failing, or shutting down.
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
        // One atomic write: a crash between a bare game row and its first event would
        // leave a log that does not replay.
        self.store
            .create_game_with_events(record, encode(std::slice::from_ref(&first))?)
            .await?;
        self.metrics.events_appended(1);
        let public = self.public(&session, std::slice::from_ref(&first));
        self.insert(meta, session, public)
    }

    /// The viewers' copy of a game with a broadcast delay, built from its log.
    fn public(&self, session: &Session, events: &[GameEvent]) -> Option<Public> {
        let delay = session.settings().broadcast_delay_ms;
        (delay > 0)
            .then(|| {
                let cutoff = self.timeline.now(0).mono_ms.saturating_sub(delay);
                Public::new(events, delay, cutoff)
            })
            .flatten()
    }

    /// Puts a game in memory and starts its task; if another request loaded the same
    /// game meanwhile, keeps that one.
    fn insert(
        self: &Arc<Self>,
        meta: GameMeta,
        session: Session,
        public: Option<Public>,
    ) -> Result<GameHandle, HubError> {
        let mut games = self.games();
        if let Some(existing) = games.get(&meta.id) {
            return Ok(existing.clone());
        }
        if games.len() >= self.config.max_loaded {
            return Err(HubError::Full(games.len()));
        }
        let alive = self
            .alive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or(HubError::ShuttingDown)?;
        if session.result().is_none() {
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
            watcher_queue: self.config.watcher_queue,
            hub: loader,
            timeline: self.timeline,
        };
        games.insert(meta.id.clone(), handle.clone());
        drop(games);
        let task = GameTask {
            meta,
            session,
            store: self.store.clone(),
            timeline: self.timeline,
            metrics: self.metrics.clone(),
            rx,
            stop: self.stop.subscribe(),
            alive,
            watchers: Vec::new(),
            recent: Default::default(),
            retry_at: None,
            hub: registry,
            me,
            evict_after: self.config.evict_after,
            active_at: tokio::time::Instant::now(),
            public,
        };
        tokio::spawn(task.run());
        Ok(handle)
    }

    /// A game by id, loaded from the store if it is not in memory.
    ///
    /// # Errors
    /// Not found, its log does not replay, or shutting down.
    pub async fn game(self: &Arc<Self>, id: &str) -> Result<GameHandle, HubError> {
        if let Some(h) = self.games().get(id) {
            return Ok(h.clone());
        }
        let record = self
            .store
            .get_game(id)
            .await?
            .ok_or_else(|| HubError::NotFound(id.to_string()))?;
        let (session, events) = self
            .load_session(id)
            .await?
            .ok_or_else(|| HubError::NotFound(id.to_string()))?;
        let public = self.public(&session, &events);
        self.insert(GameMeta::of_record(&record), session, public)
    }

    /// Rebuilds a game from its log; `None` for a game row without events, left by a
    /// creation that never completed (older versions wrote the row and the first event
    /// separately): it was never acknowledged, so it does not exist.
    async fn load_session(&self, id: &str) -> Result<Option<(Session, Vec<GameEvent>)>, HubError> {
        let stored = self.store.load(id, 1).await?;
        if stored.is_empty() {
            return Ok(None);
        }
        let events = decode(id, &stored)?;
        let session =
            Session::replay(&events).map_err(|e| HubError::Corrupt(format!("{id}: {e}")))?;
        Ok(Some((session, events)))
    }

    /// The games matching a filter, with their metadata.
    ///
    /// # Errors
    /// The store failing.
    pub async fn list(&self, filter: &GameFilter) -> Result<Vec<GameMeta>, HubError> {
        Ok(self
            .store
            .list_games(filter)
            .await?
            .iter()
            .map(GameMeta::of_record)
            .collect())
    }

    /// What a listing shows of the games matching a filter: the live task of a game in
    /// memory; the stored summary of a finished game that is not (no replay); an
    /// unfinished game not in memory, or one stored before summaries existed, is loaded.
    ///
    /// # Errors
    /// The store failing, a game that does not replay, the memory limit.
    pub async fn listing(self: &Arc<Self>, filter: &GameFilter) -> Result<Vec<Listed>, HubError> {
        let records = self.store.list_games(filter).await?;
        let mut out = Vec::with_capacity(records.len());
        for record in records {
            if let Some(h) = self.games().get(&record.game_id) {
                out.push(Listed::Live(h.clone()));
                continue;
            }
            let stored = record
                .finished
                .then(|| serde_json::from_str::<GameSummary>(&record.summary_json).ok())
                .flatten();
            match stored {
                Some(summary) => out.push(Listed::Stored(
                    Arc::new(GameMeta::of_record(&record)),
                    Box::new(summary),
                )),
                None => out.push(Listed::Live(self.game(&record.game_id).await?)),
            }
        }
        Ok(out)
    }

    /// Loads every unfinished game, records the outage since its last event (by default
    /// not charged to the side on move; charged if the server's or the game's settings
    /// say so) and starts its task. Returns how many games.
    ///
    /// # Errors
    /// The store failing or a log that does not replay.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, HubError> {
        let records = self.store.unfinished_games().await?;
        let mut n = 0;
        for record in records {
            let id = &record.game_id;
            let Some((mut session, mut events)) = self.load_session(id).await? else {
                tracing::warn!(game = %id, "game without events skipped: its creation never completed");
                continue;
            };
            if session.result().is_some() {
                // Finished in its log, but the crash came between the last append and
                // the finished flag: set the flag now so it is listed as finished.
                self.store.update_game(id, true, None).await?;
                continue;
            }
            let now = self.timeline.now(session.last_ms());
            // The server's setting, or the game's own (GameSettings.charge_outage).
            let charged = self.charge_outage || session.settings().charge_outage;
            if let Some(d) = session.outage(now, charged) {
                self.store
                    .append_with_summary(
                        id,
                        session.last_seq() + 1,
                        encode(&d.events)?,
                        summary_of(&d.session)?,
                    )
                    .await?;
                self.metrics.events_appended(d.events.len());
                session = d.session;
                events.extend(d.events);
                if session.result().is_some() {
                    self.metrics.game_finished();
                }
            }
            n += 1;
            let public = self.public(&session, &events);
            self.insert(GameMeta::of_record(&record), session, public)?;
        }
        Ok(n)
    }

    /// How many games are in memory.
    pub fn loaded(&self) -> usize {
        self.games().len()
    }

    /// Whether shutdown has begun.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once shutdown has begun (for streams that must end then).
    pub fn stopped(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        let mut rx = self.stop.subscribe();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    }

    /// Begins shutdown without waiting: no new games or commands; every task stops after
    /// the command it is committing and ends its watchers' streams.
    pub fn begin_shutdown(&self) {
        self.stop.send_replace(true);
        self.alive.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Shuts down: no new games or commands; each game's task finishes the command it is
    /// committing, ends its watchers' streams and stops. Returns when every task has.
    pub async fn shutdown(&self) {
        self.begin_shutdown();
        let mut all = self.all_stopped.lock().await;
        // `None` once every task has dropped its sender.
        while all.recv().await.is_some() {}
        self.games().clear();
    }

    /// Removes an idle finished game's task from memory, if it is still the one loaded
    /// and nothing waits for it (`idle` is checked under the same lock). Returns whether
    /// it was removed.
    fn evict(&self, id: &str, tx: &mpsc::Sender<Msg>, idle: &dyn Fn() -> bool) -> bool {
        let mut games = self.games();
        let ours = games.get(id).is_some_and(|h| h.tx.same_channel(tx));
        if ours && idle() {
            games.remove(id);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Command;
    use crate::rules::Variant;
    use crate::store::MemoryStore;
    use crate::store::StoreError;
    use std::time::Duration;

    fn meta(id: &str) -> GameMeta {
        GameMeta {
            id: id.into(),
            event: "Open".into(),
            round: "1".into(),
            board: 1,
            ..GameMeta::default()
        }
    }

    fn arbiter() -> Actor {
        Actor::Arbiter("test".into())
    }

    /// A game row without events is what a crash between writing the row and the first
    /// event left behind before games were created in one write. It was never
    /// acknowledged: recovery skips it instead of refusing to start, and it is not found.
    #[tokio::test]
    async fn recovery_skips_a_game_whose_creation_never_completed() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        registry
            .create(
                meta("whole"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        store
            .create_game(GameRecord {
                game_id: "bare".into(),
                created_at_ms: 0,
                event: "Open".into(),
                round: "1".into(),
                board: 2,
                finished: false,
                metadata_json: serde_json::to_string(&meta("bare")).expect("json"),
                summary_json: String::new(),
            })
            .await
            .expect("bare row");

        let restarted = Hub::new(store, false);
        assert_eq!(restarted.recover().await.expect("recovery starts"), 1);
        assert!(restarted.game("whole").await.is_ok());
        assert!(matches!(
            restarted.game("bare").await,
            Err(HubError::NotFound(_))
        ));
    }

    async fn last_event(store: &MemoryStore, id: &str) -> GameEvent {
        let events = store.load(id, 1).await.expect("log");
        serde_json::from_slice(&events.last().expect("an event").payload).expect("event")
    }

    /// The outage is charged when the game's settings ask for it, not only when the
    /// server's configuration does.
    #[tokio::test]
    async fn recovery_charges_the_outage_as_each_game_is_set() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        for (id, charged) in [("free", false), ("charged", true)] {
            let mut settings = GameSettings::new(Variant::Russian);
            settings.time_control = Some("10m+5s".parse().expect("time control"));
            settings.charge_outage = charged;
            registry
                .create(meta(id), settings, None, arbiter())
                .await
                .expect("created");
            registry
                .game(id)
                .await
                .expect("game")
                .command(arbiter(), Command::Start, None, |_, _| ())
                .await
                .expect("started");
        }
        // The outage must last at least a millisecond to be recorded.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let restarted = Hub::new(store.clone(), false);
        assert_eq!(restarted.recover().await.expect("recovered"), 2);
        for (id, charged) in [("free", false), ("charged", true)] {
            let e = last_event(&store, id).await;
            assert!(
                matches!(e.kind, crate::game::EventKind::Outage { charged: c, .. } if c == charged),
                "{id}: {:?}",
                e.kind
            );
        }
    }

    /// The game ended in its log but the finished flag was not written (a crash between
    /// the two writes): recovery writes the flag instead of resuming the game.
    #[tokio::test]
    async fn recovery_completes_a_lost_finished_flag() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        let g = registry.game("g").await.expect("game");
        g.command(arbiter(), Command::Start, None, |_, _| ())
            .await
            .expect("started");
        g.command(
            arbiter(),
            Command::Resign {
                side: crate::rules::Color::White,
            },
            None,
            |_, _| (),
        )
        .await
        .expect("resigned");
        let last = store.last_seq("g").await.expect("log");
        store
            .update_game("g", false, None)
            .await
            .expect("flag lost");

        let restarted = Hub::new(store.clone(), false);
        assert_eq!(restarted.recover().await.expect("recovered"), 0);
        assert!(store.unfinished_games().await.expect("list").is_empty());
        assert_eq!(
            store.last_seq("g").await.expect("log"),
            last,
            "nothing recorded for a finished game"
        );
    }

    /// Creating a game writes its row and its first event in one step.
    #[tokio::test]
    async fn a_created_game_has_its_first_event() {
        let store = Arc::new(MemoryStore::new());
        let registry = Hub::new(store.clone(), false);
        registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        assert_eq!(store.last_seq("g").await.expect("g"), 1);
        let again = registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await;
        assert!(matches!(
            again,
            Err(HubError::Store(StoreError::GameExists(_)))
        ));
        assert_eq!(store.last_seq("g").await.expect("g"), 1);
    }
}

#[cfg(test)]
mod watch_tests {
    use super::*;
    use crate::game::Command;
    use crate::game::EventKind;
    use crate::rules::{Color, Variant};
    use crate::store::MemoryStore;
    use std::time::Duration;

    fn hub(watcher_queue: usize) -> Arc<Hub> {
        Hub::with_config(
            Arc::new(MemoryStore::new()),
            false,
            Arc::new(Metrics::new()),
            HubConfig {
                command_queue: 8,
                watcher_queue,
                ..HubConfig::default()
            },
        )
    }

    async fn started(hub: &Arc<Hub>, id: &str) -> GameHandle {
        let meta = GameMeta {
            id: id.into(),
            ..GameMeta::default()
        };
        let g = hub
            .create(
                meta,
                GameSettings::new(Variant::Russian),
                Some("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7"),
                Actor::Arbiter("a".into()),
            )
            .await
            .expect("created");
        g.command(Actor::Arbiter("a".into()), Command::Start, None, |_, _| ())
            .await
            .expect("started");
        g
    }

    async fn shuffle(g: &GameHandle, n: usize) {
        shuffle_from(g, 0, n).await;
        let plies = g.read(|s, _| s.moves().len()).await.expect("read");
        assert_eq!(plies, n);
    }

    async fn seq_of(item: Option<Result<WatchItem, HubError>>) -> WatchItem {
        item.expect("not over").expect("no error")
    }

    /// A watcher that does not keep up is not waited for: its queue is dropped, it gets
    /// one `Resync` with the game as it stands, then every later event densely.
    #[tokio::test]
    async fn a_lagging_watcher_gets_a_resync_then_a_dense_stream() {
        let hub = hub(4);
        let g = started(&hub, "g").await;
        let mut w = g.watch(2).await.expect("watch");
        // 10 moves while the watcher reads nothing: more than its queue holds.
        shuffle(&g, 10).await;
        let last = g.read(|s, _| s.last_seq()).await.expect("read");
        match seq_of(w.next().await).await {
            WatchItem::Resync(snap) => {
                assert_eq!(snap.seq(), last);
                assert_eq!(snap.session.moves().len(), 10);
            }
            other => panic!("a resync first: {other:?}"),
        }
        shuffle_from(&g, 10, 2).await;
        for want in last + 1..=last + 2 {
            match seq_of(w.next().await).await {
                WatchItem::Event(e) => assert_eq!(e.event.seq, want),
                other => panic!("dense after the resync: {other:?}"),
            }
        }
        hub.shutdown().await;
        assert!(matches!(
            seq_of(w.next().await).await,
            WatchItem::End(WatchEnd::ShuttingDown)
        ));
        assert!(w.next().await.is_none(), "nothing after the end");
    }

    async fn shuffle_from(g: &GameHandle, from: usize, n: usize) {
        const CYCLE: [&str; 4] = ["c1-d2", "h8-g7", "d2-c1", "g7-h8"];
        for i in from..from + n {
            let side = if i % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            g.command(
                Actor::Player(side),
                Command::SubmitMove {
                    side,
                    notation: CYCLE[i % 4].into(),
                    offer_draw: false,
                },
                None,
                |_, _| (),
            )
            .await
            .expect("legal");
        }
    }

    /// A watcher that keeps up gets the history from the log (with the same notes a live
    /// event has) and then the live events; one that resumes close behind gets them
    /// from memory.
    #[tokio::test]
    async fn history_then_live_with_the_same_notes() {
        let hub = hub(1024);
        let g = started(&hub, "g").await;
        let mut live = g.watch(0).await.expect("watch");
        shuffle(&g, 6).await;
        let mut seen = Vec::new();
        // GameCreated, GameStarted and six moves (untimed: no presses).
        while seen.len() < 2 + 6 {
            match seq_of(live.next().await).await {
                WatchItem::Event(e) => seen.push(e),
                other => panic!("{other:?}"),
            }
        }
        let mut replayed = g.watch(0).await.expect("watch");
        for want in &seen {
            match seq_of(replayed.next().await).await {
                WatchItem::Event(e) => assert_eq!(&e, want, "history equals live"),
                other => panic!("{other:?}"),
            }
        }
        let mut close = g.watch(5).await.expect("watch");
        match seq_of(close.next().await).await {
            WatchItem::Event(e) => assert_eq!(e.event.seq, 6),
            other => panic!("{other:?}"),
        }
        let moves: Vec<u32> = seen
            .iter()
            .filter(|e| matches!(e.event.kind, EventKind::MovePlayed { .. }))
            .map(|e| e.note.move_number)
            .collect();
        assert_eq!(moves, [1, 1, 2, 2, 3, 3]);
    }

    /// The game ends: every watcher's stream ends after the final event.
    #[tokio::test]
    async fn watches_end_after_the_final_event() {
        let hub = hub(1024);
        let g = started(&hub, "g").await;
        let mut w = g.watch(2).await.expect("watch");
        g.command(
            Actor::Player(Color::White),
            Command::Resign { side: Color::White },
            None,
            |_, _| (),
        )
        .await
        .expect("resigned");
        assert!(matches!(
            seq_of(w.next().await).await,
            WatchItem::Event(e) if matches!(e.event.kind, EventKind::GameEnded { .. })
        ));
        assert!(matches!(
            seq_of(w.next().await).await,
            WatchItem::End(WatchEnd::Finished)
        ));
    }

    /// A command whose caller is gone still happens completely: durable, applied and
    /// published.
    #[tokio::test]
    async fn a_dropped_caller_cannot_cut_a_commit_short() {
        let hub = hub(1024);
        let g = started(&hub, "g").await;
        let mut w = g.watch(2).await.expect("watch");
        for _ in 0..50 {
            let call = g.command(
                Actor::Player(Color::White),
                Command::SubmitMove {
                    side: Color::White,
                    notation: "c1-d2".into(),
                    offer_draw: false,
                },
                None,
                |_, _| (),
            );
            // Polled once (queued), then dropped.
            let _ = tokio::time::timeout(Duration::from_micros(1), call).await;
        }
        let (seq, plies) = g
            .read(|s, _| (s.last_seq(), s.moves().len()))
            .await
            .expect("read");
        let log = hub.store().last_seq("g").await.expect("log");
        assert_eq!(seq, log, "the state is the log");
        assert!(plies <= 1, "at most the one legal move happened");
        for want in 3..=seq {
            match seq_of(w.next().await).await {
                WatchItem::Event(e) => assert_eq!(e.event.seq, want),
                other => panic!("{other:?}"),
            }
        }
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use crate::game::Command;
    use crate::rules::{Color, Variant};
    use crate::store::MemoryStore;

    fn hub(config: HubConfig) -> Arc<Hub> {
        Hub::with_config(
            Arc::new(MemoryStore::new()),
            false,
            Arc::new(Metrics::new()),
            config,
        )
    }

    async fn finished(hub: &Arc<Hub>, id: &str) -> GameHandle {
        let meta = GameMeta {
            id: id.into(),
            event: "Open".into(),
            round: "1".into(),
            ..GameMeta::default()
        };
        let g = hub
            .create(
                meta,
                GameSettings::new(Variant::Russian),
                None,
                Actor::Arbiter("a".into()),
            )
            .await
            .expect("created");
        for cmd in [Command::Start, Command::Resign { side: Color::Black }] {
            g.command(Actor::Arbiter("a".into()), cmd, None, |_, _| ())
                .await
                .expect("accepted");
        }
        g
    }

    async fn until_empty(hub: &Hub) {
        for _ in 0..400 {
            if hub.loaded() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("{} games still in memory", hub.loaded());
    }

    /// A finished game nobody watches leaves memory once idle; its summary row answers
    /// listings; a request loads it again, and a handle taken before still works.
    #[tokio::test]
    async fn finished_idle_games_leave_memory_and_come_back_on_demand() {
        let hub = hub(HubConfig {
            evict_after: Duration::from_millis(20),
            ..HubConfig::default()
        });
        let old = finished(&hub, "g").await;
        until_empty(&hub).await;
        let listed = hub.listing(&GameFilter::default()).await.expect("list");
        match listed.as_slice() {
            [Listed::Stored(meta, summary)] => {
                assert_eq!(meta.id, "g");
                assert!(summary.view.result.is_some());
                assert_eq!(summary.view.last_seq, 3);
            }
            other => panic!("the stored summary, no replay: {other:?}"),
        }
        assert_eq!(hub.loaded(), 0, "listing loaded nothing");
        // A handle from before the eviction reaches the game loaded anew.
        let seq = old.read(|s, _| s.last_seq()).await.expect("read");
        assert_eq!(seq, 3);
        assert_eq!(hub.loaded(), 1);
    }

    /// 5,000 finished games are listed from their summary rows: no session is loaded,
    /// so memory does not grow with the games listed.
    #[tokio::test]
    async fn listing_5000_finished_games_loads_none() {
        let hub = hub(HubConfig {
            evict_after: Duration::ZERO,
            ..HubConfig::default()
        });
        for i in 0..5000 {
            finished(&hub, &format!("g{i}")).await;
        }
        until_empty(&hub).await;
        let before = resident_kib();
        let listed = hub.listing(&GameFilter::default()).await.expect("list");
        assert_eq!(listed.len(), 5000);
        assert!(listed.iter().all(|l| matches!(l, Listed::Stored(..))));
        assert_eq!(hub.loaded(), 0, "no game was loaded to list it");
        drop(listed);
        let after = resident_kib();
        eprintln!(
            "listing 5000 finished games: RSS {before:?} KiB -> {after:?} KiB, 0 games loaded"
        );
    }

    /// Resident memory from `/proc/self/status` (Linux), for the report.
    fn resident_kib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Past the limit, loading one more game is refused with a clear error, and nothing
    /// is created.
    #[tokio::test]
    async fn the_memory_limit_refuses_one_game_more() {
        let hub = hub(HubConfig {
            max_loaded: 2,
            ..HubConfig::default()
        });
        finished(&hub, "a").await;
        finished(&hub, "b").await;
        let third = hub
            .create(
                GameMeta {
                    id: "c".into(),
                    ..GameMeta::default()
                },
                GameSettings::new(Variant::Russian),
                None,
                Actor::Arbiter("a".into()),
            )
            .await;
        assert!(matches!(third, Err(HubError::Full(2))), "{third:?}");
    }

    /// The finished flag and the summary are written with the events that finish the
    /// game, in the same step.
    #[tokio::test]
    async fn the_row_follows_the_log() {
        let hub = hub(HubConfig::default());
        finished(&hub, "g").await;
        let row = hub.store().get_game("g").await.expect("row").expect("game");
        assert!(row.finished);
        let summary: GameSummary = serde_json::from_str(&row.summary_json).expect("summary");
        assert_eq!(
            summary.view.last_seq,
            hub.store().last_seq("g").await.expect("seq")
        );
    }
}
