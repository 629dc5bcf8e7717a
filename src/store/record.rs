//! The rows the store keeps: events and game metadata.

use std::cmp::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

/// One recorded event of a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The game it belongs to.
    pub game_id: String,
    /// Its sequence number: dense from 1 within the game.
    pub seq: u64,
    /// The serialised domain event (serde JSON). The store never looks inside.
    pub payload: Vec<u8>,
    /// When the store wrote it (UTC wall time, ms since the Unix epoch). For audits only:
    /// the domain event carries its own timestamps, and replay never reads this one.
    pub written_at_ms: i64,
}

/// A game's metadata row: what the server needs to find games without replaying them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// The game's id (unique).
    pub game_id: String,
    /// When it was created (UTC wall time, ms since the Unix epoch).
    pub created_at_ms: i64,
    /// The tournament's name (PDN Event).
    pub event: String,
    /// The round (PDN Round: "3", "3.2"...).
    pub round: String,
    /// The board number within the round.
    pub board: u32,
    /// Whether the game has a result. Unfinished games are rebuilt at start.
    pub finished: bool,
    /// Anything else the server wants to list without replaying (players, variant...),
    /// as JSON. The store never looks inside.
    pub metadata_json: String,
    /// The server's summary of the game (status, result, move count, last seq,
    /// position...), as JSON, replaced in the same transaction as each append made with
    /// [`EventStore::append_with_summary`](super::EventStore::append_with_summary);
    /// empty for rows written before summaries existed. The store never looks inside.
    /// The hub writes it when a game is created and with every append that finds or
    /// leaves the game finished: it is current for finished games, the only ones listed
    /// from their row (a running game is always in memory).
    pub summary_json: String,
}

/// What [`EventStore::append_with_summary`](super::EventStore::append_with_summary)
/// writes to the game's row together with the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryUpdate {
    /// The finished flag after the events.
    pub finished: bool,
    /// The new summary (see [`GameRecord::summary_json`]).
    pub summary_json: String,
}

/// Which games [`EventStore::list_games`](super::EventStore::list_games) returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameFilter {
    /// Only this tournament.
    pub event: Option<String>,
    /// Only this round.
    pub round: Option<String>,
    /// Only games not finished.
    pub unfinished_only: bool,
}

impl GameFilter {
    /// Whether a game passes the filter.
    #[must_use]
    pub fn matches(&self, game: &GameRecord) -> bool {
        self.event.as_ref().is_none_or(|e| *e == game.event)
            && self.round.as_ref().is_none_or(|r| *r == game.round)
            && !(self.unfinished_only && game.finished)
    }
}

/// Sorts games for listing: by event, then round in natural order ("2" before "10",
/// "3.2" before "3.10"), then board, then id. Both stores sort with this one function so
/// they list identically.
pub fn sort_games(games: &mut [GameRecord]) {
    games.sort_by(|a, b| {
        a.event
            .cmp(&b.event)
            .then_with(|| natural_cmp(&a.round, &b.round))
            .then_with(|| a.board.cmp(&b.board))
            .then_with(|| a.game_id.cmp(&b.game_id))
    });
}

/// Compares dotted round names part by part, numerically where both parts are numbers.
fn natural_cmp(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    // Numbered rounds before named ones ("final").
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// The wall clock in ms since the Unix epoch (0 if the clock is before 1970).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_sort_naturally() {
        let mut rounds = vec!["10", "2", "3.10", "3.2", "final", "1"];
        rounds.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(rounds, ["1", "2", "3.2", "3.10", "10", "final"]);
    }

    #[test]
    fn filter_matches_event_round_and_finished() {
        let game = GameRecord {
            game_id: "g".into(),
            created_at_ms: 0,
            event: "Open".into(),
            round: "1".into(),
            board: 1,
            finished: true,
            metadata_json: "{}".into(),
            summary_json: String::new(),
        };
        assert!(GameFilter::default().matches(&game));
        let by_event = GameFilter {
            event: Some("Open".into()),
            ..GameFilter::default()
        };
        assert!(by_event.matches(&game));
        let other_round = GameFilter {
            round: Some("2".into()),
            ..GameFilter::default()
        };
        assert!(!other_round.matches(&game));
        let unfinished = GameFilter {
            unfinished_only: true,
            ..GameFilter::default()
        };
        assert!(!unfinished.matches(&game));
    }
}
