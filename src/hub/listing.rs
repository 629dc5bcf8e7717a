//! The games a listing shows: from the store's rows, with the public's view of a game
//! that finished within its broadcast delay, quarantined games left out.

use std::sync::Arc;

use super::error::HubError;
use super::registry::{Hub, Listed};
use crate::game::{GameMeta, GameSummary};
use crate::store::{GameFilter, GameRecord};

impl Hub {
    /// The games matching a filter, with their metadata.
    ///
    /// # Errors
    /// The store failing.
    /// Quarantined games are left out.
    pub async fn list(&self, filter: &GameFilter) -> Result<Vec<GameMeta>, HubError> {
        let records = self.store.list_games(filter).await?;
        Ok(self.serving(&records))
    }

    /// The metadata of the records that are not quarantined, in their order.
    fn serving(&self, records: &[GameRecord]) -> Vec<GameMeta> {
        let quarantined = self.quarantined();
        records
            .iter()
            .filter(|r| !quarantined.contains_key(&r.game_id))
            .map(GameMeta::of_record)
            .collect()
    }

    /// The games matching a filter in the order they were created (`created_at_ms`,
    /// then id): a round stream's order, to which later games are only appended.
    /// Quarantined games are left out.
    ///
    /// # Errors
    /// The store failing.
    pub async fn list_by_creation(&self, filter: &GameFilter) -> Result<Vec<GameMeta>, HubError> {
        let mut records = self.store.list_games(filter).await?;
        records.sort_by(|a, b| (a.created_at_ms, &a.game_id).cmp(&(b.created_at_ms, &b.game_id)));
        Ok(self.serving(&records))
    }

    /// What a listing shows of the games matching a filter: the live task of a game in
    /// memory; the stored summary of a finished game that is not (no replay) and whose
    /// public delay has passed; an unfinished game not in memory, one that finished
    /// within its delay, or one stored before summaries existed, is loaded;
    /// a quarantined game as such (callers decide who sees it).
    ///
    /// # Errors
    /// The store failing, the memory limit.
    pub async fn listing(self: &Arc<Self>, filter: &GameFilter) -> Result<Vec<Listed>, HubError> {
        let records = self.store.list_games(filter).await?;
        let now = self.now().wall;
        let mut out = Vec::with_capacity(records.len());
        for record in records {
            if let Some(h) = self.games().get(&record.game_id) {
                out.push(Listed::Live(h.clone()));
                continue;
            }
            let stored = record
                .finished
                .then(|| serde_json::from_str::<GameSummary>(&record.summary_json).ok())
                .flatten()
                .map(Box::new);
            let meta = || Arc::new(GameMeta::of_record(&record));
            if let Some(q) = self.quarantine_of(&record.game_id) {
                out.push(Listed::Quarantined(meta(), q, stored));
                continue;
            }
            // A game that finished within its public delay (before a restart: it would
            // not have left memory) is loaded, so the public sees it as it was then.
            match stored.filter(|s| !within_delay(s, now)) {
                Some(summary) => out.push(Listed::Stored(meta(), summary)),
                None => match self.game(&record.game_id).await {
                    Ok(h) => out.push(Listed::Live(h)),
                    Err(HubError::Quarantined { quarantine, .. }) => {
                        out.push(Listed::Quarantined(meta(), quarantine, None));
                    }
                    // Its row without events: a creation that never completed.
                    Err(HubError::NotFound(_)) => {}
                    Err(e) => return Err(e),
                },
            }
        }
        Ok(out)
    }
}

/// Whether the public still sees a finished game as unfinished at `now`: it finished
/// less than its broadcast delay ago.
fn within_delay(summary: &GameSummary, now: chrono::DateTime<chrono::Utc>) -> bool {
    let delay = i64::try_from(summary.settings.broadcast_delay_ms).unwrap_or(i64::MAX);
    delay > 0
        && summary
            .stamps
            .finished
            .is_some_and(|finished| (now - finished).num_milliseconds() < delay)
}
