//! The PostgreSQL schema and its versions, embedded in the binary and applied at start.
//!
//! Each entry of [`MIGRATIONS`] takes the schema from version `i` to `i + 1`. A node
//! brings the database up to date in one transaction; concurrent starts of several nodes
//! serialise on a transaction-scoped lock (released by the commit, never held across a
//! connection: the leases themselves use no advisory lock). Never edit a released
//! migration: add a new one.

use tokio_postgres::Client;

use crate::store::StoreError;

/// Migration `i` upgrades version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: games (with the summary, the log's last seq and the game's lease) and events.
    "
    CREATE TABLE games (
        game_id       TEXT        NOT NULL PRIMARY KEY,
        created_at_ms BIGINT      NOT NULL,
        event         TEXT        NOT NULL,
        round         TEXT        NOT NULL,
        board         BIGINT      NOT NULL,
        finished      BOOLEAN     NOT NULL DEFAULT FALSE,
        metadata_json TEXT        NOT NULL,
        summary_json  TEXT        NOT NULL DEFAULT '',
        -- The seq of the log's last event: every append checks and moves it under the
        -- row's lock, so two appends to one game serialise and never interleave.
        last_seq      BIGINT      NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
        -- The lease: which node may append, under which epoch, until when (the
        -- database's clock). Every acquisition bumps the epoch; an append names the
        -- epoch it holds and is refused once another acquisition has bumped it.
        owner_node    TEXT,
        owner_addr    TEXT        NOT NULL DEFAULT '',
        epoch         BIGINT      NOT NULL DEFAULT 0,
        lease_until   TIMESTAMPTZ
    );
    CREATE INDEX games_by_event ON games (event, round, board);
    CREATE INDEX games_unfinished ON games (game_id) WHERE NOT finished;

    CREATE TABLE events (
        game_id       TEXT   NOT NULL REFERENCES games (game_id),
        seq           BIGINT NOT NULL CHECK (seq >= 1),
        written_at_ms BIGINT NOT NULL,
        payload       BYTEA  NOT NULL,
        PRIMARY KEY (game_id, seq)
    );
    ",
    // 1 -> 2: the database's clock at a game's last append and at its owner's last sign
    // of life (an acquisition, a renewal, an append or a release): a node taking the game
    // over charges the time between them as thinking time and records only the rest as
    // the outage, on one clock whatever the nodes' own clocks say.
    "
    ALTER TABLE games ADD COLUMN appended_at TIMESTAMPTZ;
    ALTER TABLE games ADD COLUMN alive_at    TIMESTAMPTZ;
    ",
    // 2 -> 3: tournaments, each with a log of its own (issue 40). No lease: a tournament
    // is appended to by whichever node an arbiter's command or a game's result reaches,
    // each append checking and moving `last_seq` under the row's lock.
    "
    CREATE TABLE tournaments (
        key           TEXT    NOT NULL PRIMARY KEY,
        name          TEXT    NOT NULL,
        created_at_ms BIGINT  NOT NULL,
        finished      BOOLEAN NOT NULL DEFAULT FALSE,
        summary_json  TEXT    NOT NULL DEFAULT '',
        last_seq      BIGINT  NOT NULL DEFAULT 0 CHECK (last_seq >= 0)
    );
    CREATE TABLE tournament_events (
        key           TEXT   NOT NULL REFERENCES tournaments (key),
        seq           BIGINT NOT NULL CHECK (seq >= 1),
        written_at_ms BIGINT NOT NULL,
        payload       BYTEA  NOT NULL,
        PRIMARY KEY (key, seq)
    );
    ",
];

/// The schema version this program writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// A key for `pg_advisory_xact_lock` while migrating: "draughts" in ASCII.
const MIGRATION_LOCK: i64 = 0x6472_6175_6768_7473;

/// Brings the schema (in the connection's `search_path`) up to [`CURRENT_VERSION`].
///
/// # Errors
/// [`StoreError::Schema`] for a database of a newer version; the database failing.
pub async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(StoreError::database)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(StoreError::database)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS arbiter_schema (
             only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
             version  BIGINT  NOT NULL
         );
         INSERT INTO arbiter_schema (version) VALUES (0) ON CONFLICT DO NOTHING;",
    )
    .await
    .map_err(StoreError::database)?;
    let version: i64 = tx
        .query_one("SELECT version FROM arbiter_schema", &[])
        .await
        .map_err(StoreError::database)?
        .get(0);
    if version > CURRENT_VERSION {
        return Err(StoreError::Schema {
            found: version,
            supported: CURRENT_VERSION,
        });
    }
    let from = usize::try_from(version)
        .map_err(|_| StoreError::Corrupt(format!("negative schema version {version}")))?;
    for sql in &MIGRATIONS[from..] {
        tx.batch_execute(sql).await.map_err(StoreError::database)?;
    }
    tx.execute(
        "UPDATE arbiter_schema SET version = $1",
        &[&CURRENT_VERSION],
    )
    .await
    .map_err(StoreError::database)?;
    tx.commit().await.map_err(StoreError::database)
}
