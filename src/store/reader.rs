//! Reading an SQLite event log offline (`draughts-arbiter check` and `export`): one
//! connection, no writer thread, no migration, and no file created where there is none.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::writer::from_sql_seq;
use super::{GameRecord, StoreError, StoredEvent, schema};

/// One problem SQLite's integrity check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integrity {
    /// SQLite's words, with the b-tree or the game it concerns when known.
    pub message: String,
    /// The game whose row it concerns, when SQLite names a row.
    pub game: Option<String>,
}

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
        if version == 0 {
            // Another program's tables, or none at all: either way no event log.
            schema::foreign(&conn)?;
            return Err(StoreError::damaged(
                "an empty database (no tables): not an event log",
            ));
        }
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

    /// SQLite's `PRAGMA integrity_check` (every page, every index row against its table),
    /// each problem with the game it concerns when SQLite names a row of one; empty when
    /// the file is sound. Reads the whole file.
    ///
    /// # Errors
    /// SQLite cannot run the check at all (a damaged header or schema).
    pub fn integrity(&self) -> Result<Vec<Integrity>, StoreError> {
        let lines: Vec<String> = self
            .conn
            .prepare("PRAGMA integrity_check(1000)")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let trees: Vec<(i64, String)> = self
            .conn
            .prepare("SELECT rootpage, name FROM sqlite_master WHERE rootpage > 0")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(lines
            .into_iter()
            .filter(|l| l != "ok")
            .map(|message| self.annotate(message, &trees))
            .collect())
    }

    /// Names the b-tree of a "Tree N page ..." problem and the game of a "row N missing
    /// from index ..." one.
    fn annotate(&self, message: String, trees: &[(i64, String)]) -> Integrity {
        let mut note = None;
        let mut game = None;
        if let Some(rest) = message.strip_prefix("Tree ") {
            let root: Option<i64> = rest.split(' ').next().and_then(|n| n.parse().ok());
            if let Some((_, name)) = trees.iter().find(|(r, _)| Some(*r) == root) {
                note = Some(format!("b-tree of {name}"));
            }
        }
        if let Some(rest) = message.strip_prefix("row ") {
            let mut words = rest.split(' ');
            let rowid: Option<i64> = words.next().and_then(|n| n.parse().ok());
            let index = rest.rsplit(' ').next().unwrap_or_default();
            if let Some(rowid) = rowid {
                let table = if index.starts_with("events") {
                    "events"
                } else {
                    "games"
                };
                let found: Option<(String, Option<i64>)> = if table == "events" {
                    self.conn
                        .query_row(
                            "SELECT game_id, seq FROM events WHERE id = ?1",
                            [rowid],
                            |r| Ok((r.get(0)?, Some(r.get(1)?))),
                        )
                        .ok()
                } else {
                    self.conn
                        .query_row("SELECT game_id FROM games WHERE rowid = ?1", [rowid], |r| {
                            Ok((r.get(0)?, None))
                        })
                        .ok()
                };
                if let Some((id, seq)) = found {
                    note = Some(match seq {
                        Some(seq) => format!("game {id}, seq {seq}"),
                        None => format!("game {id}"),
                    });
                    game = Some(id);
                }
            }
        }
        Integrity {
            message: match note {
                Some(note) => format!("{message} ({note})"),
                None => message,
            },
            game,
        }
    }

    /// The ids of the games that have events, read from the `(game_id, seq)` index alone:
    /// what `check` can still name when the games table cannot be read.
    ///
    /// # Errors
    /// SQLite failing.
    pub fn game_ids_of_events(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .conn
            .prepare("SELECT DISTINCT game_id FROM events ORDER BY game_id")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?)
    }

    /// The alive mark as stored (`None`: never marked), unchecked.
    ///
    /// # Errors
    /// SQLite failing.
    pub fn alive_mark(&self) -> Result<Option<i64>, StoreError> {
        schema::raw_alive_mark(&self.conn)
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
