//! Why the hub refuses, and how a game goes to the store and back: the encoding of
//! events and summaries, and the append of decided events.

use super::quarantine::Quarantine;
use crate::game::{GameError, GameEvent, Session};
use crate::store::{EventStore, StoreError, StoredEvent, Stream, SummaryUpdate};

/// Why the hub refused.
#[derive(Debug)]
pub enum HubError {
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
    /// The game is quarantined: its stored log does not replay at `seq` (found when it
    /// was loaded); every other game serves.
    Quarantined {
        /// The game.
        id: String,
        /// Where and why its log does not replay.
        quarantine: Quarantine,
    },
    /// The server is shutting down: nothing was recorded.
    ShuttingDown,
    /// As many games are in memory as the server allows ([`HubConfig::max_loaded`]).
    Full(usize),
    /// A watcher more than the server allows; nothing was registered.
    TooManyWatchers(WatcherLimit),
    /// The hub broke one of its own invariants (a bug); nothing was recorded.
    Internal(String),
}

/// Which watcher limit was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatcherLimit {
    /// The game's (`max_watchers_per_game`).
    Game {
        /// The game.
        game: String,
        /// Its limit.
        max: usize,
    },
    /// The server's, all games together (`max_watchers`).
    Total {
        /// The limit.
        max: usize,
    },
}

impl std::fmt::Display for HubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HubError::NotFound(id) => write!(f, "game '{id}' not found"),
            HubError::Game(e) => write!(f, "{e}"),
            HubError::Stale { expected, actual } => write!(
                f,
                "expected_seq {expected} is stale: the game's last event is {actual}"
            ),
            HubError::Store(e) => write!(f, "event log: {e}"),
            HubError::Corrupt(e) => write!(f, "stored game does not replay: {e}"),
            HubError::Quarantined { id, quarantine } => write!(
                f,
                "game '{id}' is quarantined: its event log does not replay at seq {}: {} \
                 (draughts-arbiter check / export for repair)",
                quarantine.seq, quarantine.reason
            ),
            HubError::ShuttingDown => f.write_str("server shutting down"),
            HubError::Full(n) => write!(
                f,
                "{n} games are in memory, the server's limit (max_loaded_games): \
                 finished games leave memory once idle; try again shortly"
            ),
            HubError::TooManyWatchers(WatcherLimit::Game { game, max }) => write!(
                f,
                "game '{game}' has {max} watch streams open, the server's limit \
                 (max_watchers_per_game): try again later"
            ),
            HubError::TooManyWatchers(WatcherLimit::Total { max }) => write!(
                f,
                "{max} watch streams are open, the server's limit (max_watchers): \
                 try again later"
            ),
            HubError::Internal(e) => write!(f, "internal error: {e}"),
        }
    }
}

impl std::error::Error for HubError {}

impl From<StoreError> for HubError {
    fn from(e: StoreError) -> HubError {
        HubError::Store(e)
    }
}

/// Appends `events` after `before`'s last seq, decided into `after`. The game's row
/// (finished flag and summary) changes in the same transaction when the game is or was
/// finished; while it runs the row is left as it is: a running game is always in memory
/// (the hub loads every unfinished game at start), so only a finished game is ever listed
/// from its row, and a move costs no summary.
pub(crate) async fn append_decided(
    store: &dyn EventStore,
    id: &str,
    before: &Session,
    after: &Session,
    events: &[GameEvent],
) -> Result<u64, HubError> {
    let payloads = encode(events)?;
    let next = before.last_seq() + 1;
    let summary = if before.result().is_some() || after.result().is_some() {
        Some(summary_of(after)?)
    } else {
        None
    };
    Ok(store
        .append(Stream::Game(id), next, payloads, summary)
        .await?)
}

/// The summary row of a session, as the store keeps it.
pub(crate) fn summary_of(session: &Session) -> Result<SummaryUpdate, HubError> {
    let summary = session.summarize(session.last_ms());
    Ok(SummaryUpdate {
        finished: session.result().is_some(),
        summary_json: serde_json::to_string(&summary)
            .map_err(|e| HubError::Internal(format!("summary: {e}")))?,
    })
}

/// The serde JSON of events, as the store keeps them.
pub(crate) fn encode<E: serde::Serialize>(events: &[E]) -> Result<Vec<Vec<u8>>, HubError> {
    events
        .iter()
        .map(|e| {
            // Room for a move's event at once: `to_vec` grew from nothing, reallocating
            // about six times an event (a move's two events are 150-300 bytes each).
            let mut json = Vec::with_capacity(EVENT_JSON_CAPACITY);
            serde_json::to_writer(&mut json, e)
                .map_err(|e| HubError::Internal(format!("event: {e}")))?;
            Ok(json)
        })
        .collect()
}

/// The buffer an event's JSON starts in (bytes).
const EVENT_JSON_CAPACITY: usize = 384;

/// The events of stored rows.
///
/// # Errors
/// [`HubError::Corrupt`] naming the row that does not decode.
pub(crate) fn decode<E: serde::de::DeserializeOwned>(
    id: &str,
    rows: &[StoredEvent],
) -> Result<Vec<E>, HubError> {
    rows.iter()
        .map(|r| {
            serde_json::from_slice(&r.payload)
                .map_err(|e| HubError::Corrupt(format!("{id}: event {}: {e}", r.seq)))
        })
        .collect()
}
