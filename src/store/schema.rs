//! The SQLite schema and its versions (`PRAGMA user_version`).
//!
//! Each entry of [`MIGRATIONS`] takes the schema from version `i` to `i + 1`; a database
//! is brought up to date in one transaction when it is opened. Never edit a released
//! migration: add a new one.

use rusqlite::{Connection, TransactionBehavior};

use super::{AliveMark, BootStamp, StoreError};

/// Migration `i` upgrades version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: games and events.
    "
    CREATE TABLE games (
        game_id       TEXT    NOT NULL PRIMARY KEY,
        created_at_ms INTEGER NOT NULL,
        event         TEXT    NOT NULL,
        round         TEXT    NOT NULL,
        board         INTEGER NOT NULL,
        finished      INTEGER NOT NULL DEFAULT 0,
        metadata_json TEXT    NOT NULL
    ) STRICT;
    CREATE INDEX games_by_event ON games (event, round, board);

    -- WITHOUT ROWID clusters a game's events together in seq order: loading a game
    -- is one range scan, and MAX(seq) one index seek.
    CREATE TABLE events (
        game_id       TEXT    NOT NULL REFERENCES games (game_id),
        seq           INTEGER NOT NULL CHECK (seq >= 1),
        written_at_ms INTEGER NOT NULL,
        payload       BLOB    NOT NULL,
        PRIMARY KEY (game_id, seq)
    ) STRICT, WITHOUT ROWID;
    ",
    // 1 -> 2: the hub's summary of each game, replaced with every append, so listings
    // never replay a game.
    "
    ALTER TABLE games ADD COLUMN summary_json TEXT NOT NULL DEFAULT '';
    ",
    // 2 -> 3: the events in the order they were written (a rowid table), found by game
    // through a unique index of (game_id, seq). Clustered by game (versions 1 and 2),
    // every move of a different game rewrote a page of whole events, and the pages
    // split every few moves, each split rewriting its neighbours (of other games) too:
    // with 256 games appending together the writer made 6.8 `pwrite`s a move (two per
    // WAL frame of 4 KiB). Now the events of a group commit fill the table's last pages
    // together and each game rewrites only its page of the index (small entries, rare
    // splits): 3.1 `pwrite`s a move. A game still loads with one index range scan.
    "
    CREATE TABLE events_v3 (
        id            INTEGER PRIMARY KEY,
        game_id       TEXT    NOT NULL REFERENCES games (game_id),
        seq           INTEGER NOT NULL CHECK (seq >= 1),
        written_at_ms INTEGER NOT NULL,
        payload       BLOB    NOT NULL
    ) STRICT;
    INSERT INTO events_v3 (game_id, seq, written_at_ms, payload)
        SELECT game_id, seq, written_at_ms, payload FROM events ORDER BY game_id, seq;
    DROP TABLE events;
    ALTER TABLE events_v3 RENAME TO events;
    CREATE UNIQUE INDEX events_by_game ON events (game_id, seq);
    ",
    // 3 -> 4: when the service last served the games (the server's timeline, ms; one
    // row), marked every second and at shutdown: a game running at the next start was
    // down from then, not from its last event.
    "
    CREATE TABLE service (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        alive_at_ms INTEGER NOT NULL
    ) STRICT;
    ",
    // 4 -> 5: the host's boot and its boot-time clock at the alive mark: a restart on
    // the same boot measures its outage on that clock, whatever the wall clock did.
    "
    ALTER TABLE service ADD COLUMN boot_id TEXT;
    ALTER TABLE service ADD COLUMN boot_ms INTEGER;
    ",
    // 5 -> 6: tournaments, each with a log of its own (issue 40), kept as the games'.
    "
    CREATE TABLE tournaments (
        key           TEXT    NOT NULL PRIMARY KEY,
        name          TEXT    NOT NULL,
        created_at_ms INTEGER NOT NULL,
        finished      INTEGER NOT NULL DEFAULT 0,
        summary_json  TEXT    NOT NULL DEFAULT ''
    ) STRICT;
    CREATE TABLE tournament_events (
        id            INTEGER PRIMARY KEY,
        key           TEXT    NOT NULL REFERENCES tournaments (key),
        seq           INTEGER NOT NULL CHECK (seq >= 1),
        written_at_ms INTEGER NOT NULL,
        payload       BLOB    NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX tournament_events_by_key ON tournament_events (key, seq);
    ",
];

/// Marks the service alive at `?1` (the one row of `service`), on the boot `?2` at `?3`
/// ms of its boot clock (both NULL where the host tells neither).
pub const MARK_ALIVE: &str = "INSERT INTO service (id, alive_at_ms, boot_id, boot_ms)
     VALUES (1, ?1, ?2, ?3)
     ON CONFLICT (id) DO UPDATE SET alive_at_ms = excluded.alive_at_ms,
         boot_id = excluded.boot_id, boot_ms = excluded.boot_ms";

/// When the service last served the games, as the file says (`None`: never marked).
///
/// # Errors
/// The read fails; a negative mark.
pub fn alive_mark(conn: &Connection) -> Result<Option<AliveMark>, StoreError> {
    use rusqlite::OptionalExtension;
    let row: Option<(i64, Option<String>, Option<i64>)> = conn
        .query_row(
            "SELECT alive_at_ms, boot_id, boot_ms FROM service WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    row.map(|(ms, boot_id, boot_ms)| {
        let at_ms = u64::try_from(ms)
            .map_err(|_| StoreError::Corrupt(format!("negative alive mark {ms}")))?;
        // A boot stamp that does not read back whole is no stamp: the outage is then
        // bounded by the wall clock, as across a reboot.
        let boot = match (boot_id, boot_ms.and_then(|b| u64::try_from(b).ok())) {
            (Some(id), Some(ms)) if !id.is_empty() => Some(BootStamp { id, ms }),
            _ => None,
        };
        Ok(AliveMark { at_ms, boot })
    })
    .transpose()
}

/// The last instant an alive mark can name: 9999-12-31T23:59:59.999Z (ms), the end of
/// the range of RFC 3339 and of protobuf's `Timestamp`, in which every instant the
/// service records is given.
pub const LAST_POSSIBLE_MS: i64 = 253_402_300_799_999;

/// How far ahead of this host's wall clock an alive mark may be before it is called
/// implausible (a wall clock stepped back since the mark, or a wrong mark).
pub const MARK_AHEAD_TOLERANCE_MS: i64 = 60_000;

/// What an alive mark says about itself ([`judge_alive_mark`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkVerdict {
    /// A mark that can be true.
    Fine,
    /// Possible but suspicious (ahead of this host's clock): worth a warning, never a
    /// refusal (the wall clock may have stepped back since).
    Implausible(String),
    /// A mark no run of the service can have written (negative, past year 9999): the
    /// file is damaged there.
    Impossible(String),
}

/// The alive mark as stored, unchecked (`None`: never marked), for [`judge_alive_mark`].
///
/// # Errors
/// The read fails.
pub fn raw_alive_mark(conn: &Connection) -> Result<Option<i64>, StoreError> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .query_row("SELECT alive_at_ms FROM service WHERE id = 1", [], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Judges an alive mark (ms on the server's timeline) against this host's wall clock
/// (`now_ms`): impossible if negative or past [`LAST_POSSIBLE_MS`], implausible if more
/// than [`MARK_AHEAD_TOLERANCE_MS`] ahead of `now_ms`.
#[must_use]
pub fn judge_alive_mark(mark_ms: i64, now_ms: i64) -> MarkVerdict {
    if mark_ms < 0 {
        return MarkVerdict::Impossible(format!("alive mark {mark_ms} is negative"));
    }
    if mark_ms > LAST_POSSIBLE_MS {
        return MarkVerdict::Impossible(format!(
            "alive mark {mark_ms} is past the year 9999 ({LAST_POSSIBLE_MS})"
        ));
    }
    let ahead = mark_ms.saturating_sub(now_ms);
    if ahead > MARK_AHEAD_TOLERANCE_MS {
        return MarkVerdict::Implausible(format!(
            "alive mark {mark_ms} is {:.1} s ahead of this host's clock: the clock stepped \
             back since the service last ran, or the mark is wrong",
            ahead as f64 / 1000.0
        ));
    }
    MarkVerdict::Fine
}

/// A game's events from a seq on, in seq order (`?1` the game, `?2` the first seq): one
/// range scan of the `events_by_game` index.
pub const SELECT_EVENTS_FROM: &str = "SELECT seq, written_at_ms, payload FROM events
     WHERE game_id = ?1 AND seq >= ?2 ORDER BY seq";

/// Whether a game's log holds a seq (`?1` the game, `?2` the seq): one lookup of the
/// whole key of `events_by_game`.
pub const SELECT_SEQ_PRESENT: &str = "SELECT 1 FROM events WHERE game_id = ?1 AND seq = ?2";

/// The statements of one kind of stream (games, tournaments): the two kinds keep their
/// rows and events in tables of their own, read and written alike.
#[derive(Debug)]
pub struct StreamSql {
    /// Inserts an event (`?1` the stream, `?2` seq, `?3` written at, `?4` payload).
    pub insert_event: &'static str,
    /// Whether the log holds a seq (`?1`, `?2`).
    pub seq_present: &'static str,
    /// The log's last seq (`?1`).
    pub max_seq: &'static str,
    /// Whether the stream's row exists (`?1`).
    pub row_exists: &'static str,
    /// Sets the row's finished flag (`?2`) and summary (`?3`).
    pub set_summary: &'static str,
    /// The events from a seq on (`?1`, `?2`), in seq order.
    pub events_from: &'static str,
}

/// A game's statements.
pub const GAME_SQL: StreamSql = StreamSql {
    insert_event: "INSERT INTO events (game_id, seq, written_at_ms, payload)
                   VALUES (?1, ?2, ?3, ?4)",
    seq_present: SELECT_SEQ_PRESENT,
    max_seq: "SELECT MAX(seq) FROM events WHERE game_id = ?1",
    row_exists: "SELECT 1 FROM games WHERE game_id = ?1",
    set_summary: "UPDATE games SET finished = ?2, summary_json = ?3 WHERE game_id = ?1",
    events_from: SELECT_EVENTS_FROM,
};

/// A tournament's statements.
pub const TOURNAMENT_SQL: StreamSql = StreamSql {
    insert_event: "INSERT INTO tournament_events (key, seq, written_at_ms, payload)
                   VALUES (?1, ?2, ?3, ?4)",
    seq_present: "SELECT 1 FROM tournament_events WHERE key = ?1 AND seq = ?2",
    max_seq: "SELECT MAX(seq) FROM tournament_events WHERE key = ?1",
    row_exists: "SELECT 1 FROM tournaments WHERE key = ?1",
    set_summary: "UPDATE tournaments SET finished = ?2, summary_json = ?3 WHERE key = ?1",
    events_from: "SELECT seq, written_at_ms, payload FROM tournament_events
                  WHERE key = ?1 AND seq >= ?2 ORDER BY seq",
};

/// The schema version this program writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// The writer's own automatic checkpoint, in WAL pages (about 32 MiB of 4 KiB pages):
/// a safety valve only; the checkpointer thread (the `checkpoint` module) does the
/// regular work off the commit path. SQLite's default of 1,000 pages made the writer
/// itself checkpoint every few group commits once many games interleave.
pub const WRITER_AUTOCHECKPOINT_PAGES: i64 = 8192;

/// The writer's page cache, in KiB (`cache_size` takes a negative number for KiB): the
/// leaf pages that every game's next event goes to stay in memory instead of being read
/// back from the WAL at each commit (SQLite's default is 2 MiB).
pub const WRITER_CACHE_KIB: i64 = 16 * 1024;

/// After a checkpoint lets the WAL start over, SQLite truncates the file to this size
/// (bytes), so one burst does not keep a large WAL file around.
pub const WAL_SIZE_LIMIT_BYTES: i64 = 64 * 1024 * 1024;

/// Sets the connection options every connection uses.
pub fn configure(conn: &Connection) -> Result<(), StoreError> {
    // A reader may briefly wait for the writer's checkpoint; the writer for a reader in
    // another process. Five seconds is far beyond any legitimate wait.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "foreign_keys", true)?;
    Ok(())
}

/// Puts the writer connection in WAL mode with full fsync and migrates the schema.
pub fn prepare_writer(conn: &mut Connection) -> Result<(), StoreError> {
    configure(conn)?;
    // Before anything is written to it (the journal mode is in the file's header).
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version == 0 {
        foreign(conn)?;
    }
    // WAL: readers never block the writer and vice versa; a commit is one sequential
    // append to the WAL file.
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Corrupt(format!(
            "journal mode is '{mode}', wal refused"
        )));
    }
    // FULL: the WAL is synced at every commit, so an acknowledged append survives a
    // power cut, not just a process crash (NORMAL would only sync at checkpoints). The
    // sync is fdatasync(2) on Linux (.cargo/config.toml: `LIBSQLITE3_FLAGS`).
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "wal_autocheckpoint", WRITER_AUTOCHECKPOINT_PAGES)?;
    conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
    conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT_BYTES)?;
    migrate(conn)
}

/// Brings the schema up to [`CURRENT_VERSION`].
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    // IMMEDIATE so that two processes opening a fresh file do not both migrate.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > CURRENT_VERSION {
        return Err(StoreError::Schema {
            found: version,
            supported: CURRENT_VERSION,
        });
    }
    let from = usize::try_from(version)
        .map_err(|_| StoreError::Corrupt(format!("negative schema version {version}")))?;

    for sql in &MIGRATIONS[from..] {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", CURRENT_VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Refuses a database of schema version 0 that holds tables: another program's file,
/// in which the migrations must not create ours.
pub(super) fn foreign(conn: &Connection) -> Result<(), StoreError> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if tables.is_empty() {
        return Ok(());
    }
    Err(StoreError::damaged(format!(
        "not an event log of this program: schema version 0 with tables {} (another \
         program's database?)",
        tables.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alive_marks_are_judged_impossible_implausible_or_fine() {
        let now = 1_750_000_000_000;
        assert!(matches!(
            judge_alive_mark(-1, now),
            MarkVerdict::Impossible(_)
        ));
        assert!(matches!(
            judge_alive_mark(LAST_POSSIBLE_MS + 1, now),
            MarkVerdict::Impossible(_)
        ));
        assert!(matches!(
            judge_alive_mark(now + 3_600_000, now),
            MarkVerdict::Implausible(_)
        ));
        assert_eq!(judge_alive_mark(now + 1_000, now), MarkVerdict::Fine);
        assert_eq!(judge_alive_mark(now - 86_400_000, now), MarkVerdict::Fine);
        assert_eq!(judge_alive_mark(0, now), MarkVerdict::Fine);
    }

    #[test]
    fn another_programs_database_is_refused_not_migrated() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = Connection::open(dir.path().join("p.db")).expect("open");
        conn.execute_batch("CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
            .expect("theirs");
        let e = prepare_writer(&mut conn).expect_err("foreign");
        assert!(e.is_damaged() && e.to_string().contains("accounts"), "{e}");
    }

    /// How SQLite plans a statement on a fresh log, one line per step.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("explain");
        let unbound = vec![rusqlite::types::Null; stmt.parameter_count()];
        let steps = stmt
            .query_map(rusqlite::params_from_iter(unbound), |r| {
                r.get::<_, String>(3)
            })
            .expect("plan")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        steps.join("\n")
    }

    /// The events are stored in the order written, so everything that reads one game
    /// must go through the `(game_id, seq)` index: a scan of the table would read every
    /// game's events, and a sort would hold a game's log in memory.
    #[test]
    fn a_games_events_are_read_through_the_index_without_a_scan_or_a_sort() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = Connection::open(dir.path().join("p.db")).expect("open");
        prepare_writer(&mut conn).expect("schema");
        for (sql, index) in [GAME_SQL, TOURNAMENT_SQL].iter().flat_map(|t| {
            let index = if t.max_seq.contains("tournament") {
                "tournament_events_by_key"
            } else {
                "events_by_game"
            };
            [t.events_from, t.seq_present, t.max_seq].map(|sql| (sql, index))
        }) {
            let plan = plan(&conn, sql);
            assert!(
                plan.contains(&format!("USING COVERING INDEX {index}"))
                    || plan.contains(&format!("USING INDEX {index}")),
                "{sql}:\n{plan}"
            );
            assert!(!plan.contains("SCAN"), "{sql}:\n{plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{sql}:\n{plan}");
        }
    }

    /// The bundled SQLite is compiled to sync with fdatasync(2) where the platform has it,
    /// as SQLite's own configure does on Linux: fsync(2) also writes the WAL's
    /// modification time through the file system's journal at every commit, and commits
    /// waited longer while the checkpointer flushed the database file
    /// (.cargo/config.toml has the figures).
    /// A build that lost the setting (the file removed, or `LIBSQLITE3_FLAGS` set to
    /// something else in the environment) fails here.
    #[test]
    fn the_bundled_sqlite_syncs_with_fdatasync() {
        let flags = env!("ARBITER_LIBSQLITE3_FLAGS");
        assert!(
            flags.split_whitespace().any(|f| f == "-DHAVE_FDATASYNC=1"),
            "LIBSQLITE3_FLAGS of this build: {flags:?}"
        );
    }
}
