//! An in-memory event store for tests: the semantics of [`SqliteStore`](super::SqliteStore)
//! (dense seqs, conflicts, ordering) without the disk.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::record::now_ms;
use super::{
    AliveMark, EventStore, GameFilter, GameRecord, StoreError, StoredEvent, SummaryUpdate,
    sort_games,
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

impl MemoryStore {
    /// One append under one lock: the events and, if given, the row's flag and summary.
    fn append_inner(
        &self,
        game_id: &str,
        expected_next_seq: u64,
        payloads: Vec<Vec<u8>>,
        summary: Option<SummaryUpdate>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        let mut state = self.lock();
        let log = state
            .logs
            .get_mut(game_id)
            .ok_or_else(|| StoreError::GameNotFound(game_id.to_string()))?;
        let next = log.len() as u64 + 1;
        if expected_next_seq != next {
            return Err(StoreError::Conflict {
                expected: expected_next_seq,
                actual: next,
            });
        }
        let written_at_ms = now_ms();
        for (seq, payload) in (next..).zip(payloads) {
            log.push(StoredEvent {
                game_id: game_id.to_string(),
                seq,
                payload,
                written_at_ms,
            });
        }
        let last = log.len() as u64;
        if let (Some(s), Some(game)) = (summary, state.games.get_mut(game_id)) {
            game.finished = s.finished;
            game.summary_json = s.summary_json;
        }
        Ok(last)
    }
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
        let written_at_ms = now_ms();
        let log: Vec<StoredEvent> = (1..)
            .zip(payloads)
            .map(|(seq, payload)| StoredEvent {
                game_id: record.game_id.clone(),
                seq,
                payload,
                written_at_ms,
            })
            .collect();
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

    async fn append(
        &self,
        game_id: &str,
        expected_next_seq: u64,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        self.append_inner(game_id, expected_next_seq, payloads, None)
    }

    async fn append_with_summary(
        &self,
        game_id: &str,
        expected_next_seq: u64,
        payloads: Vec<Vec<u8>>,
        summary: SummaryUpdate,
    ) -> Result<u64, StoreError> {
        self.append_inner(game_id, expected_next_seq, payloads, Some(summary))
    }

    async fn load(&self, game_id: &str, from_seq: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let state = self.lock();
        let log = state
            .logs
            .get(game_id)
            .ok_or_else(|| StoreError::GameNotFound(game_id.to_string()))?;
        // Seqs are dense from 1, so seq s sits at index s - 1.
        let start = usize::try_from(from_seq.saturating_sub(1)).unwrap_or(usize::MAX);
        Ok(log.get(start..).unwrap_or_default().to_vec())
    }

    async fn last_seq(&self, game_id: &str) -> Result<u64, StoreError> {
        let state = self.lock();
        let log = state
            .logs
            .get(game_id)
            .ok_or_else(|| StoreError::GameNotFound(game_id.to_string()))?;
        Ok(log.len() as u64)
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
