//! The rows the store keeps: events, game and tournament metadata.

use std::cmp::Ordering;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// Which log an append or a read is about: a game's or a tournament's. The two kinds are
/// kept apart (their own rows and events), so a game id and a tournament key never meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream<'a> {
    /// A game's log, by game id.
    Game(&'a str),
    /// A tournament's log, by its key (`tournament::event_key` of its name).
    Tournament(&'a str),
}

/// The kind of a [`Stream`], without its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// Games.
    Game,
    /// Tournaments.
    Tournament,
}

impl<'a> Stream<'a> {
    /// The stream of this kind and id.
    #[must_use]
    pub fn new(kind: StreamKind, id: &'a str) -> Self {
        match kind {
            StreamKind::Game => Stream::Game(id),
            StreamKind::Tournament => Stream::Tournament(id),
        }
    }

    /// Its kind.
    #[must_use]
    pub fn kind(self) -> StreamKind {
        match self {
            Stream::Game(_) => StreamKind::Game,
            Stream::Tournament(_) => StreamKind::Tournament,
        }
    }

    /// The refusal of a stream that does not exist.
    #[must_use]
    pub fn not_found(self) -> super::StoreError {
        match self {
            Stream::Game(id) => super::StoreError::GameNotFound(id.to_string()),
            Stream::Tournament(key) => super::StoreError::TournamentNotFound(key.to_string()),
        }
    }

    /// The game id or tournament key.
    #[must_use]
    pub fn id(self) -> &'a str {
        match self {
            Stream::Game(id) | Stream::Tournament(id) => id,
        }
    }
}

impl fmt::Display for Stream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stream::Game(id) => write!(f, "game '{id}'"),
            Stream::Tournament(key) => write!(f, "tournament '{key}'"),
        }
    }
}

/// One recorded event of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The game (or tournament) it belongs to.
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
    /// [`EventStore::append`](super::EventStore::append) with a summary;
    /// empty for rows written before summaries existed. The store never looks inside.
    /// The hub writes it when a game is created and with every append that finds or
    /// leaves the game finished: it is current for finished games, the only ones listed
    /// from their row (a running game is always in memory).
    pub summary_json: String,
}

/// A tournament's row: what the server needs to list tournaments without replaying them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TournamentRecord {
    /// Its key (unique; derived from the name).
    pub key: String,
    /// Its name (the games' PDN Event).
    pub name: String,
    /// When it was created (UTC wall time, ms since the Unix epoch).
    pub created_at_ms: i64,
    /// Whether it has ended.
    pub finished: bool,
    /// The server's summary of it (JSON), replaced with appends that carry one. The store
    /// never looks inside.
    pub summary_json: String,
}

/// What [`EventStore::append`](super::EventStore::append) writes to the stream's row
/// together with the events, when given.
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
