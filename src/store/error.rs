//! What can go wrong in the event store.

use std::fmt;
use std::sync::Arc;

/// An event store failure.
///
/// Cloneable because one failed group commit answers every caller in its batch with the
/// same error.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StoreError {
    /// `append` was called with a stale or future sequence number; nothing was written.
    Conflict {
        /// The next seq the caller expected the log to take.
        expected: u64,
        /// The next seq the log actually takes (its last seq + 1).
        actual: u64,
    },
    /// No game with this id.
    GameNotFound(String),
    /// A game with this id already exists.
    GameExists(String),
    /// No tournament with this key.
    TournamentNotFound(String),
    /// A tournament with this key already exists.
    TournamentExists(String),
    /// `append` was given no events.
    EmptyAppend,
    /// The store was closed (or its writer stopped); nothing was written.
    Closed,
    /// The database was written by a newer version of this program.
    Schema {
        /// The schema version found in the file.
        found: i64,
        /// The newest schema version this program knows.
        supported: i64,
    },
    /// This node does not hold the game's lease (another node took it over, or it ran
    /// out): nothing was written, and the node must stop serving the game. `owner` is the
    /// node holding a live lease now and the address it advertises, if any.
    Fenced {
        /// The game.
        game_id: String,
        /// The live owner (node id, advertised address), if there is one.
        owner: Option<(String, String)>,
    },
    /// The store's settings are unusable (a bad database URL, an empty node id...).
    Config(String),
    /// A stored row breaks an invariant (a negative seq, a board number out of range...).
    Corrupt(String),
    /// The database file itself is damaged or is not an event log: SQLite reports a
    /// malformed page (`SQLITE_CORRUPT`) or a file that is not a database
    /// (`SQLITE_NOTADB`), or the file is empty or missing where a log was. Retrying
    /// cannot help: the hub quarantines the game it was reading (DATA_LOSS), and a store
    /// that cannot be opened or listed is refused at start, naming the file.
    Damaged {
        /// What is damaged, as SQLite or the check says it.
        what: String,
        /// The first seq of the game that could not be read, when reading a game's log
        /// (the rows before it were read).
        from_seq: Option<u64>,
    },
    /// The database engine failed (I/O error, disk full, locked...).
    Database(Arc<dyn std::error::Error + Send + Sync>),
    /// A file-system operation failed (creating the data directory).
    Io(Arc<std::io::Error>),
}

impl StoreError {
    /// Wraps a database engine error.
    pub fn database(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Database(Arc::new(error))
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Conflict { expected, actual } => {
                write!(
                    f,
                    "seq conflict: expected next seq {expected}, actual next seq {actual}"
                )
            }
            StoreError::GameNotFound(id) => write!(f, "game '{id}' not found"),
            StoreError::GameExists(id) => write!(f, "game '{id}' already exists"),
            StoreError::TournamentNotFound(key) => write!(f, "tournament '{key}' not found"),
            StoreError::TournamentExists(key) => write!(f, "tournament '{key}' already exists"),
            StoreError::EmptyAppend => f.write_str("no events to append"),
            StoreError::Closed => f.write_str("store is closed"),
            StoreError::Schema { found, supported } => write!(
                f,
                "database schema version {found} is newer than this program's {supported}"
            ),
            StoreError::Fenced { game_id, owner } => match owner {
                Some((node, addr)) => write!(
                    f,
                    "game '{game_id}' is served by node '{node}' ({addr}), not this one"
                ),
                None => write!(f, "this node does not hold the lease of game '{game_id}'"),
            },
            StoreError::Config(what) => write!(f, "store settings: {what}"),
            StoreError::Corrupt(what) => write!(f, "corrupt store: {what}"),
            StoreError::Damaged { what, .. } => write!(f, "damaged event log: {what}"),
            StoreError::Database(e) => write!(f, "database: {e}"),
            StoreError::Io(e) => write!(f, "io: {e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Database(e) => Some(e.as_ref()),
            StoreError::Io(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl StoreError {
    /// A damaged store (see [`StoreError::Damaged`]).
    pub fn damaged(what: impl Into<String>) -> Self {
        StoreError::Damaged {
            what: what.into(),
            from_seq: None,
        }
    }

    /// Whether this is [`StoreError::Damaged`].
    #[must_use]
    pub fn is_damaged(&self) -> bool {
        matches!(self, StoreError::Damaged { .. })
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            // A malformed page or a file that is not a database: the same answer on
            // every retry, so not the retryable `Database`.
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                StoreError::damaged(e.to_string())
            }
            _ => StoreError::database(e),
        }
    }
}

impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        StoreError::Io(Arc::new(e))
    }
}
