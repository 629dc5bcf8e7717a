//! Reading an SQLite event log offline (`draughts-arbiter check` and `export`): one
//! connection, no writer thread, no migration, and no file created where there is none.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::writer::from_sql_seq;
use super::{GameRecord, StoreError, StoredEvent, schema};

/// A read-only view of an existing event log.
pub struct LogReader {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for LogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl LogReader {
    /// Opens the log at `path`, which must exist and be of this program's schema
    /// version. The server may be running on it meanwhile (WAL readers do not block it).
    ///
    /// # Errors
    /// [`StoreError::Io`] if there is no file there, [`StoreError::Schema`] for a newer
    /// file, [`StoreError::Corrupt`] for an older one (the server migrates it when it
    /// starts), [`StoreError::Database`] if SQLite cannot read it.
    pub fn open(path: impl AsRef<Path>) -> Result<LogReader, StoreError> {
        let path = path.as_ref().to_path_buf();
        if !path.is_file() {
            return Err(StoreError::Io(std::sync::Arc::new(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no event log at {}", path.display()),
            ))));
        }
        // Read-write flags without CREATE (a WAL reader may need to create the
        // shared-memory index); `query_only` makes writes impossible.
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        schema::configure(&conn)?;
        conn.pragma_update(None, "query_only", true)?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > schema::CURRENT_VERSION {
            return Err(StoreError::Schema {
                found: version,
                supported: schema::CURRENT_VERSION,
            });
        }
        if version < schema::CURRENT_VERSION {
            return Err(StoreError::Corrupt(format!(
                "{}: schema version {version}, this program reads {}: start the server on it \
                 once to bring it up to date",
                path.display(),
                schema::CURRENT_VERSION
            )));
        }
        Ok(LogReader { conn, path })
    }

    /// Every game row, in id order.
    ///
    /// # Errors
    /// SQLite failing, or a row out of range.
    pub fn games(&self) -> Result<Vec<GameRecord>, StoreError> {
        self.select("ORDER BY game_id", None)
    }

    /// One game's row, if it exists.
    ///
    /// # Errors
    /// SQLite failing, or a row out of range.
    pub fn game(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        Ok(self
            .select("WHERE game_id = ?1", Some(game_id))?
            .into_iter()
            .next())
    }

    fn select(&self, tail: &str, id: Option<&str>) -> Result<Vec<GameRecord>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT game_id, created_at_ms, event, round, board, finished, metadata_json,
                    summary_json
             FROM games {tail}"
        ))?;
        let params: Vec<&dyn rusqlite::ToSql> = match &id {
            Some(id) => vec![id],
            None => Vec::new(),
        };
        let rows = stmt.query_map(params.as_slice(), |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, bool>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (game_id, created_at_ms, event, round, board, finished, metadata, summary) = row?;
            let board = u32::try_from(board)
                .map_err(|_| StoreError::Corrupt(format!("game '{game_id}' has board {board}")))?;
            out.push(GameRecord {
                game_id,
                created_at_ms,
                event,
                round,
                board,
                finished,
                metadata_json: metadata,
                summary_json: summary,
            });
        }
        Ok(out)
    }

    /// A game's rows in seq order, as stored (nothing decoded or checked).
    ///
    /// # Errors
    /// SQLite failing.
    pub fn events(&self, game_id: &str) -> Result<Vec<StoredEvent>, StoreError> {
        let mut stmt = self.conn.prepare_cached(schema::SELECT_EVENTS_FROM)?;
        let rows = stmt.query_map(rusqlite::params![game_id, 1], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, written_at_ms, payload) = row?;
            out.push(StoredEvent {
                game_id: game_id.to_string(),
                seq: from_sql_seq(seq)?,
                payload,
                written_at_ms,
            });
        }
        Ok(out)
    }
}
