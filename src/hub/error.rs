//! Why the hub refuses, and the encoding of events and summaries for the store.

use crate::game::{GameError, GameEvent, Session};
use crate::store::{StoreError, StoredEvent, SummaryUpdate};

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
    /// The server is shutting down: nothing was recorded.
    ShuttingDown,
    /// As many games are in memory as the server allows ([`HubConfig::max_loaded`]).
    Full(usize),
    /// The hub broke one of its own invariants (a bug); nothing was recorded.
    Internal(String),
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
            HubError::ShuttingDown => f.write_str("server shutting down"),
            HubError::Full(n) => write!(
                f,
                "{n} games are in memory, the server's limit (max_loaded_games): \
                 finished games leave memory once idle; try again shortly"
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
pub(crate) fn encode(events: &[GameEvent]) -> Result<Vec<Vec<u8>>, HubError> {
    events
        .iter()
        .map(|e| serde_json::to_vec(e).map_err(|e| HubError::Internal(format!("event: {e}"))))
        .collect()
}

/// The events of stored rows.
///
/// # Errors
/// [`HubError::Corrupt`] naming the row that does not decode.
pub(crate) fn decode(id: &str, rows: &[StoredEvent]) -> Result<Vec<GameEvent>, HubError> {
    rows.iter()
        .map(|r| {
            serde_json::from_slice(&r.payload)
                .map_err(|e| HubError::Corrupt(format!("{id}: event {}: {e}", r.seq)))
        })
        .collect()
}
