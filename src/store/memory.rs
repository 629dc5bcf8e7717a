//! An in-memory event store for tests: the semantics of [`SqliteStore`](super::SqliteStore)
//! (dense seqs, conflicts, ordering) without the disk.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::record::now_ms;
use super::{
    AliveMark, Append, EventStore, GameFilter, GameRecord, StoreError, StoredEvent, Stream,
    TournamentRecord, sort_games,
};

/// An event store held in memory; clones share the same data. Nothing survives the
/// process.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    games: HashMap<String, GameRecord>,
    logs: HashMap<String, Vec<StoredEvent>>,
    tournaments: HashMap<String, TournamentRecord>,
    tournament_logs: HashMap<String, Vec<StoredEvent>>,
    /// The last [`EventStore::mark_alive`]: what a later hub on the same store (a
    /// restart within one process, as in tests) is told by `served_until`.
    alive: Option<AliveMark>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock, and every update is applied in
        // full or not at all, so a poisoned lock still guards consistent data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn log(&self, stream: Stream<'_>) -> Result<&Vec<StoredEvent>, StoreError> {
        match stream {
            Stream::Game(id) => self
                .logs
                .get(id)
                .ok_or_else(|| StoreError::GameNotFound(id.to_string())),
            Stream::Tournament(key) => self
                .tournament_logs
                .get(key)
                .ok_or_else(|| StoreError::TournamentNotFound(key.to_string())),
        }
    }

    fn log_mut(&mut self, stream: Stream<'_>) -> Result<&mut Vec<StoredEvent>, StoreError> {
        match stream {
            Stream::Game(id) => self
                .logs
                .get_mut(id)
                .ok_or_else(|| StoreError::GameNotFound(id.to_string())),
            Stream::Tournament(key) => self
                .tournament_logs
                .get_mut(key)
                .ok_or_else(|| StoreError::TournamentNotFound(key.to_string())),
        }
    }
}

/// The first events of a new log, seqs 1, 2, ...
fn first_events(id: &str, payloads: Vec<Vec<u8>>) -> Vec<StoredEvent> {
    let written_at_ms = now_ms();
    (1..)
        .zip(payloads)
        .map(|(seq, payload)| StoredEvent {
            game_id: id.to_string(),
            seq,
            payload,
            written_at_ms,
        })
        .collect()
}

#[async_trait]
impl EventStore for MemoryStore {
    fn alive_mark(&self) -> Option<AliveMark> {
        self.lock().alive.clone()
    }

    async fn mark_alive(&self, mark: &AliveMark) -> Result<(), StoreError> {
        self.lock().alive = Some(mark.clone());
        Ok(())
    }

    async fn create_game(&self, record: GameRecord) -> Result<(), StoreError> {
        let mut state = self.lock();
        if state.games.contains_key(&record.game_id) {
            return Err(StoreError::GameExists(record.game_id));
        }
        state.logs.insert(record.game_id.clone(), Vec::new());
        state.games.insert(record.game_id.clone(), record);
        Ok(())
    }

    async fn create_game_with_events(
        &self,
        record: GameRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        let mut state = self.lock();
        if state.games.contains_key(&record.game_id) {
            return Err(StoreError::GameExists(record.game_id));
        }
        let log = first_events(&record.game_id, payloads);
        let last = log.len() as u64;
        state.logs.insert(record.game_id.clone(), log);
        state.games.insert(record.game_id.clone(), record);
        Ok(last)
    }

    async fn update_game(
        &self,
        game_id: &str,
        finished: bool,
        metadata_json: Option<String>,
    ) -> Result<(), StoreError> {
        let mut state = self.lock();
        let game = state
            .games
            .get_mut(game_id)
            .ok_or_else(|| StoreError::GameNotFound(game_id.to_string()))?;
        game.finished = finished;
        if let Some(metadata) = metadata_json {
            game.metadata_json = metadata;
        }
        Ok(())
    }

    async fn get_game(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        Ok(self.lock().games.get(game_id).cloned())
    }

    async fn write(&self, batch: Append<'_>) -> Result<u64, StoreError> {
        let stream = batch.stream;
        let mut state = self.lock();
        let log = state.log_mut(stream)?;
        let next = log.len() as u64 + 1;
        if batch.expected_next_seq != next {
            return Err(StoreError::Conflict {
                expected: batch.expected_next_seq,
                actual: next,
            });
        }
        let written_at_ms = now_ms();
        for (seq, payload) in (next..).zip(batch.payloads) {
            log.push(StoredEvent {
                game_id: stream.id().to_string(),
                seq,
                payload,
                written_at_ms,
            });
        }
        let last = log.len() as u64;
        if let Some(s) = batch.summary {
            match stream {
                Stream::Game(id) => {
                    if let Some(game) = state.games.get_mut(id) {
                        game.finished = s.finished;
                        game.summary_json = s.summary_json;
                    }
                }
                Stream::Tournament(key) => {
                    if let Some(t) = state.tournaments.get_mut(key) {
                        t.finished = s.finished;
                        t.summary_json = s.summary_json;
                    }
                }
            }
        }
        Ok(last)
    }

    async fn load(
        &self,
        stream: Stream<'_>,
        from_seq: u64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let state = self.lock();
        let log = state.log(stream)?;
        // Seqs are dense from 1, so seq s sits at index s - 1.
        let start = usize::try_from(from_seq.saturating_sub(1)).unwrap_or(usize::MAX);
        Ok(log.get(start..).unwrap_or_default().to_vec())
    }

    async fn last_seq(&self, stream: Stream<'_>) -> Result<u64, StoreError> {
        Ok(self.lock().log(stream)?.len() as u64)
    }

    async fn create_tournament(
        &self,
        record: TournamentRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        let mut state = self.lock();
        if state.tournaments.contains_key(&record.key) {
            return Err(StoreError::TournamentExists(record.key));
        }
        let log = first_events(&record.key, payloads);
        let last = log.len() as u64;
        state.tournament_logs.insert(record.key.clone(), log);
        state.tournaments.insert(record.key.clone(), record);
        Ok(last)
    }

    async fn get_tournament(&self, key: &str) -> Result<Option<TournamentRecord>, StoreError> {
        Ok(self.lock().tournaments.get(key).cloned())
    }

    async fn list_tournaments(&self) -> Result<Vec<TournamentRecord>, StoreError> {
        let mut all: Vec<TournamentRecord> = self.lock().tournaments.values().cloned().collect();
        all.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(all)
    }

    async fn list_games(&self, filter: &GameFilter) -> Result<Vec<GameRecord>, StoreError> {
        let mut games: Vec<GameRecord> = self
            .lock()
            .games
            .values()
            .filter(|g| filter.matches(g))
            .cloned()
            .collect();
        sort_games(&mut games);
        Ok(games)
    }
}
