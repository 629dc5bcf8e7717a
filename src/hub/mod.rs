//! The games the server judges: one [`Session`] per game behind a lock, its durable log,
//! its live fan-out to watchers, and its timer.
//!
//! Every command on a game runs under that game's lock: the session decides on a copy,
//! the events are appended to the store (durable when the append returns), and only then
//! does the copy become the game's state and are the events broadcast. A failed append
//! leaves the game as it was, so nothing unacknowledged is ever half-applied.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{Mutex, Notify, RwLock, broadcast};

pub mod metrics;

use crate::game::{Actor, Command, EventKind, GameError, GameEvent, GameSettings, Now, Session};
use crate::store::{EventStore, GameFilter, GameRecord, StoreError};
use metrics::Metrics;

/// A player as the game record names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInfo {
    /// Name as on the scoresheet.
    pub name: String,
    /// FMJD id, if any.
    pub fmjd_id: String,
    /// Federation code.
    pub federation: String,
    /// Rating.
    pub rating: u32,
}

/// What the server knows of a game besides its log (kept in the store's metadata row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameMeta {
    /// The game's id.
    pub id: String,
    /// Tournament name.
    pub event: String,
    /// Round.
    pub round: String,
    /// Board number in the round.
    pub board: u32,
    /// White.
    pub white: PlayerInfo,
    /// Black.
    pub black: PlayerInfo,
}

/// Why the registry refused.
#[derive(Debug)]
pub enum RegistryError {
    /// No such game.
    NotFound(String),
    /// The game refused the command.
    Game(GameError),
    /// The caller's `expected_seq` is stale.
    Stale {
        /// What the caller expected.
        expected: u64,
        /// The game's last seq.
        actual: u64,
    },
    /// The event log failed; nothing was applied.
    Store(StoreError),
    /// A stored log does not replay.
    Corrupt(String),
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegistryError::NotFound(id) => write!(f, "game '{id}' not found"),
            RegistryError::Game(e) => write!(f, "{e}"),
            RegistryError::Stale { expected, actual } => write!(
                f,
                "expected_seq {expected} is stale: the game's last event is {actual}"
            ),
            RegistryError::Store(e) => write!(f, "event log: {e}"),
            RegistryError::Corrupt(e) => write!(f, "stored game does not replay: {e}"),
        }
    }
}

impl std::error::Error for RegistryError {}

impl From<StoreError> for RegistryError {
    fn from(e: StoreError) -> RegistryError {
        RegistryError::Store(e)
    }
}

/// One game in memory.
pub struct GameHandle {
    /// Its metadata.
    pub meta: GameMeta,
    state: Mutex<Session>,
    events: broadcast::Sender<Arc<GameEvent>>,
    wake: Notify,
}

impl GameHandle {
    /// A copy of the session now.
    pub async fn session(&self) -> Session {
        self.state.lock().await.clone()
    }

    /// Reads the session in place, under the game's lock (no copy of the whole game).
    pub async fn with<R>(&self, f: impl FnOnce(&Session) -> R) -> R {
        f(&*self.state.lock().await)
    }

    /// Subscribes to the events recorded from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<GameEvent>> {
        self.events.subscribe()
    }

    /// How many watchers are subscribed.
    pub fn watchers(&self) -> usize {
        self.events.receiver_count()
    }
}

/// A monotonic millisecond timeline that continues across restarts: wall-clock
/// milliseconds at start-up plus the monotonic time elapsed since.
#[derive(Debug, Clone, Copy)]
pub struct Timeline {
    wall_ms: u64,
    anchor: Instant,
}

impl Timeline {
    /// Starts the timeline now.
    pub fn start() -> Timeline {
        Timeline {
            wall_ms: u64::try_from(Utc::now().timestamp_millis()).unwrap_or(0),
            anchor: Instant::now(),
        }
    }

    /// The current instant, never before `not_before`.
    pub fn now(&self, not_before: u64) -> Now {
        let mono = self.wall_ms + self.anchor.elapsed().as_millis() as u64;
        let mono = mono.max(not_before);
        Now {
            mono_ms: mono,
            wall: DateTime::<Utc>::from_timestamp_millis(mono as i64).unwrap_or_default(),
        }
    }

    /// The tokio instant of a timeline millisecond.
    fn instant(&self, ms: u64) -> tokio::time::Instant {
        let offset = Duration::from_millis(ms.saturating_sub(self.wall_ms));
        tokio::time::Instant::from_std(self.anchor + offset)
    }
}

/// All games, their store and their timers.
pub struct Registry {
    store: Arc<dyn EventStore>,
    games: RwLock<HashMap<String, Arc<GameHandle>>>,
    timeline: Timeline,
    charge_outage: bool,
    next_id: std::sync::atomic::AtomicU64,
    metrics: Arc<Metrics>,
}

impl Registry {
    /// A registry over a store.
    pub fn new(store: Arc<dyn EventStore>, charge_outage: bool) -> Arc<Registry> {
        Self::with_metrics(store, charge_outage, Arc::new(Metrics::new()))
    }

    /// A registry over a store, counting into `metrics`.
    pub fn with_metrics(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
    ) -> Arc<Registry> {
        Arc::new(Registry {
            store,
            games: RwLock::new(HashMap::new()),
            timeline: Timeline::start(),
            charge_outage,
            next_id: std::sync::atomic::AtomicU64::new(0),
            metrics,
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

    fn encode(events: &[GameEvent]) -> Vec<Vec<u8>> {
        events
            .iter()
            .map(|e| serde_json::to_vec(e).expect("events serialise"))
            .collect()
    }

    fn new_id(&self) -> String {
        let n = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = self.timeline.now(0).mono_ms;
        format!("g{t:x}{n:04x}")
    }

    /// Creates a game: its metadata row and its first event, durably.
    ///
    /// # Errors
    /// A bad start position, or the store failing.
    pub async fn create(
        self: &Arc<Self>,
        mut meta: GameMeta,
        settings: GameSettings,
        start_fen: Option<&str>,
        actor: Actor,
    ) -> Result<Arc<GameHandle>, RegistryError> {
        if meta.id.is_empty() {
            meta.id = self.new_id();
        }
        let now = self.timeline.now(0);
        let (session, first) =
            Session::create(settings, start_fen, actor, now).map_err(RegistryError::Game)?;
        let record = GameRecord {
            game_id: meta.id.clone(),
            created_at_ms: now.mono_ms as i64,
            event: meta.event.clone(),
            round: meta.round.clone(),
            board: meta.board,
            finished: false,
            metadata_json: serde_json::to_string(&meta).expect("metadata serialises"),
        };
        // One atomic write: a crash between a bare game row and its first event would
        // leave a log that does not replay, and recovery would refuse to start.
        self.store
            .create_game_with_events(record, Self::encode(std::slice::from_ref(&first)))
            .await?;
        self.metrics.events_appended(1);
        let handle = self.insert(meta, session).await;
        Ok(handle)
    }

    /// Puts a game in memory and arms its timer; if another request loaded the same game
    /// meanwhile, keeps that one.
    async fn insert(self: &Arc<Self>, meta: GameMeta, session: Session) -> Arc<GameHandle> {
        let mut games = self.games.write().await;
        if let Some(existing) = games.get(&meta.id) {
            return existing.clone();
        }
        if session.result().is_none() {
            self.metrics.game_started();
        }
        let (tx, _) = broadcast::channel(1024);
        let handle = Arc::new(GameHandle {
            meta,
            state: Mutex::new(session),
            events: tx,
            wake: Notify::new(),
        });
        games.insert(handle.meta.id.clone(), handle.clone());
        drop(games);
        self.spawn_timer(handle.clone());
        handle
    }

    /// The current instant on the server's timeline.
    pub fn now(&self) -> Now {
        self.timeline.now(0)
    }

    /// A game by id, loaded from the store if it is not in memory.
    ///
    /// # Errors
    /// Not found, or its log does not replay.
    pub async fn game(self: &Arc<Self>, id: &str) -> Result<Arc<GameHandle>, RegistryError> {
        if let Some(h) = self.games.read().await.get(id) {
            return Ok(h.clone());
        }
        let record = self
            .store
            .get_game(id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(id.to_string()))?;
        let session = self
            .load_session(id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(id.to_string()))?;
        Ok(self.insert(meta_of(&record), session).await)
    }

    /// Rebuilds a game from its log; `None` for a game row without events, left by a
    /// creation that never completed (older versions wrote the row and the first event
    /// separately): it was never acknowledged, so it does not exist.
    async fn load_session(&self, id: &str) -> Result<Option<Session>, RegistryError> {
        let stored = self.store.load(id, 1).await?;
        if stored.is_empty() {
            return Ok(None);
        }
        let events: Vec<GameEvent> = stored
            .iter()
            .map(|e| serde_json::from_slice(&e.payload))
            .collect::<Result<_, _>>()
            .map_err(|e| RegistryError::Corrupt(format!("{id}: {e}")))?;
        Session::replay(&events)
            .map(Some)
            .map_err(|e| RegistryError::Corrupt(format!("{id}: {e}")))
    }

    /// The games matching a filter, with their metadata.
    ///
    /// # Errors
    /// The store failing.
    pub async fn list(&self, filter: &GameFilter) -> Result<Vec<GameMeta>, RegistryError> {
        Ok(self
            .store
            .list_games(filter)
            .await?
            .iter()
            .map(meta_of)
            .collect())
    }

    /// Runs a command on a game: records time's own events first (flags, "Time!"), then
    /// the command's. Everything returned is durable.
    ///
    /// # Errors
    /// The game refuses (nothing changed), `expected_seq` is stale, or the store fails
    /// (nothing changed).
    pub async fn command(
        self: &Arc<Self>,
        id: &str,
        actor: &Actor,
        cmd: Command,
        expected_seq: Option<u64>,
    ) -> Result<Vec<Arc<GameEvent>>, RegistryError> {
        let received = Instant::now();
        let handle = self.game(id).await?;
        let mut state = handle.state.lock().await;
        if let Some(expected) = expected_seq
            && expected != 0
            && expected != state.last_seq()
        {
            return Err(RegistryError::Stale {
                expected,
                actual: state.last_seq(),
            });
        }
        let now = self.timeline.now(0);
        let now = Now {
            mono_ms: now.mono_ms.max(state.last_ms()),
            ..now
        };
        // Time's own events first (flags, "Time!"); usually there are none and nothing
        // is copied. The command then works on one copy of the session, which becomes
        // the game's state only once its events are durable.
        let ticked = state.ticked(now);
        let base = ticked.as_ref().map_or(&*state, |(s, _)| s);
        match base.handled(actor, cmd, now) {
            Ok((next, ev)) => {
                let mut events = ticked.map(|(_, e)| e).unwrap_or_default();
                events.extend(ev);
                let acked = self.commit(&handle, &mut state, next, events).await;
                if acked.is_ok() {
                    self.metrics.acknowledged(received.elapsed());
                }
                acked
            }
            Err(e) => {
                if let Some((ticked, events)) = ticked {
                    self.commit(&handle, &mut state, ticked, events).await?;
                }
                Err(RegistryError::Game(e))
            }
        }
    }

    /// Appends `events` (already applied to `next`) durably, then makes `next` the game's
    /// state and tells the watchers.
    async fn commit(
        &self,
        handle: &GameHandle,
        state: &mut Session,
        next: Session,
        events: Vec<GameEvent>,
    ) -> Result<Vec<Arc<GameEvent>>, RegistryError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let was_finished = state.result().is_some();
        self.store
            .append(&handle.meta.id, state.last_seq() + 1, Self::encode(&events))
            .await?;
        self.metrics.events_appended(events.len());
        for e in &events {
            if matches!(e.kind, EventKind::MovePlayed { .. }) {
                self.metrics.move_accepted(next.variant());
            }
        }
        *state = next;
        if !was_finished && state.result().is_some() {
            self.metrics.game_finished();
            self.store.update_game(&handle.meta.id, true, None).await?;
        }
        let events: Vec<Arc<GameEvent>> = events.into_iter().map(Arc::new).collect();
        for e in &events {
            // No receiver is fine: nobody is watching.
            let _ = handle.events.send(e.clone());
        }
        handle.wake.notify_one();
        Ok(events)
    }

    /// Records what time has done in a game (the timer's job).
    async fn tick(&self, handle: &GameHandle) -> Result<(), RegistryError> {
        let mut state = handle.state.lock().await;
        let now = self.timeline.now(state.last_ms());
        if let Some((next, events)) = state.ticked(now) {
            self.commit(handle, &mut state, next, events).await?;
        }
        Ok(())
    }

    /// One task per game sleeps until the session's next deadline (a flag, a "Time!"
    /// call) and records it, so a flag falls with nobody sending anything. A command
    /// wakes it to re-read the deadline.
    fn spawn_timer(self: &Arc<Self>, handle: Arc<GameHandle>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let deadline = handle.state.lock().await.next_deadline();
                let at = match (deadline, weak.upgrade()) {
                    (_, None) => return,
                    (None, Some(_)) => None,
                    (Some(ms), Some(registry)) => Some(registry.timeline.instant(ms)),
                };
                match at {
                    None => handle.wake.notified().await,
                    Some(at) => {
                        tokio::select! {
                            () = tokio::time::sleep_until(at) => {
                                let Some(registry) = weak.upgrade() else { return };
                                if let Err(e) = registry.tick(&handle).await {
                                    tracing::warn!(game = %handle.meta.id, error = %e, "timer");
                                    tokio::time::sleep(Duration::from_millis(200)).await;
                                }
                            }
                            () = handle.wake.notified() => {}
                        }
                    }
                }
            }
        });
    }

    /// Loads every unfinished game, records the outage since its last event (by default
    /// not charged to the side on move; charged if the server's or the game's settings
    /// say so) and re-arms its timer. Returns how many games.
    ///
    /// # Errors
    /// The store failing or a log that does not replay.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, RegistryError> {
        let records = self.store.unfinished_games().await?;
        let mut n = 0;
        for record in records {
            let Some(session) = self.load_session(&record.game_id).await? else {
                tracing::warn!(game = %record.game_id, "game without events skipped: its creation never completed");
                continue;
            };
            if session.result().is_some() {
                // Finished in its log, but the crash came between the last append and
                // the finished flag: set the flag now so it is listed as finished.
                self.store.update_game(&record.game_id, true, None).await?;
                continue;
            }
            n += 1;
            let handle = self.insert(meta_of(&record), session).await;
            let mut state = handle.state.lock().await;
            let now = self.timeline.now(state.last_ms());
            let mut next = state.clone();
            // The server's setting, or the game's own (GameSettings.charge_outage).
            let charged = self.charge_outage || next.settings().charge_outage;
            let mut events = next.record_outage(now, charged);
            events.extend(next.tick(now));
            self.commit(&handle, &mut state, next, events).await?;
        }
        Ok(n)
    }

    /// How many games are in memory.
    pub async fn loaded(&self) -> usize {
        self.games.read().await.len()
    }
}

fn meta_of(record: &GameRecord) -> GameMeta {
    serde_json::from_str(&record.metadata_json).unwrap_or_else(|_| GameMeta {
        id: record.game_id.clone(),
        event: record.event.clone(),
        round: record.round.clone(),
        board: record.board,
        ..GameMeta::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;
    use crate::store::MemoryStore;

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
        let registry = Registry::new(store.clone(), false);
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
            })
            .await
            .expect("bare row");

        let restarted = Registry::new(store, false);
        assert_eq!(restarted.recover().await.expect("recovery starts"), 1);
        assert!(restarted.game("whole").await.is_ok());
        assert!(matches!(
            restarted.game("bare").await,
            Err(RegistryError::NotFound(_))
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
        let registry = Registry::new(store.clone(), false);
        for (id, charged) in [("free", false), ("charged", true)] {
            let mut settings = GameSettings::new(Variant::Russian);
            settings.time_control = Some("10m+5s".parse().expect("time control"));
            settings.charge_outage = charged;
            registry
                .create(meta(id), settings, None, arbiter())
                .await
                .expect("created");
            registry
                .command(id, &arbiter(), Command::Start, None)
                .await
                .expect("started");
        }
        // The outage must last at least a millisecond to be recorded.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let restarted = Registry::new(store.clone(), false);
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
        let registry = Registry::new(store.clone(), false);
        registry
            .create(
                meta("g"),
                GameSettings::new(Variant::Russian),
                None,
                arbiter(),
            )
            .await
            .expect("created");
        registry
            .command("g", &arbiter(), Command::Start, None)
            .await
            .expect("started");
        registry
            .command(
                "g",
                &arbiter(),
                Command::Resign {
                    side: crate::rules::Color::White,
                },
                None,
            )
            .await
            .expect("resigned");
        let last = store.last_seq("g").await.expect("log");
        store
            .update_game("g", false, None)
            .await
            .expect("flag lost");

        let restarted = Registry::new(store.clone(), false);
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
        let registry = Registry::new(store.clone(), false);
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
            Err(RegistryError::Store(StoreError::GameExists(_)))
        ));
        assert_eq!(store.last_seq("g").await.expect("g"), 1);
    }
}
