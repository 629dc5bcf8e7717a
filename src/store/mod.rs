//! The event log: every game's and every tournament's events, durably recorded before
//! anyone is told about them.
//!
//! A game's state is the fold of its events, and a tournament's the fold of its own, so
//! the log is the only thing that must survive a crash. The store keeps events as opaque
//! payloads (the serde JSON of the domain events) under a dense sequence number per
//! [`Stream`] (a game or a tournament), plus one row per stream so the server can list
//! games and tournaments and find the unfinished ones at start without replaying. Both
//! kinds of stream have the one contract: [`EventStore::append`] with the seq expected
//! and, in the same atomic step, the row's summary; [`EventStore::load`] from a seq.
//!
//! - [`SqliteStore`]: the embedded default. WAL, `synchronous=FULL`, one writer thread
//!   doing group commit: an append is fsynced before its future resolves.
//! - [`PostgresStore`]: several nodes on one PostgreSQL database, each game appended
//!   to only by the node holding its lease (fenced by the database).
//! - [`MemoryStore`]: the same semantics without durability, for tests.
//!
//! The SQLite and memory stores serve one process: every lease method grants at once.

mod alive;
mod checkpoint;
mod error;
mod memory;
mod postgres;
mod reader;
mod record;
mod schema;
mod sqlite;
mod writer;

use async_trait::async_trait;

pub use alive::{AliveMark, BootStamp, LeaseGap};
pub use error::StoreError;
pub use memory::MemoryStore;
pub use postgres::{
    POSTGRES_GROUP_APPEND, POSTGRES_SCHEMA_VERSION, PostgresOptions, PostgresStore,
};
pub use reader::{Integrity, LogReader};
pub use record::{
    GameFilter, GameRecord, StoredEvent, Stream, StreamKind, SummaryUpdate, TournamentRecord,
    sort_games,
};
pub use schema::{
    LAST_POSSIBLE_MS, MarkVerdict, WAL_SIZE_LIMIT_BYTES, WRITER_AUTOCHECKPOINT_PAGES,
    WRITER_CACHE_KIB, judge_alive_mark,
};
pub use sqlite::{SqliteOptions, SqliteStore, marker_path};

/// A hint that a game changed, maybe on another node (several nodes on PostgreSQL:
/// `LISTEN/NOTIFY`). Hints wake followers early; they are never the data (a hint can be
/// lost, and [`StoreHint::Missed`] says when some may have been): followers read the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreHint {
    /// A game's log grew to `seq`.
    Appended {
        /// The game.
        game_id: String,
        /// Its last seq now.
        seq: u64,
    },
    /// A game was created.
    Created {
        /// The game.
        game_id: String,
    },
    /// Hints may have been lost (the listener reconnected): look at every game.
    Missed,
}

/// Where a game stands in the shared log, as a node that follows it reads it
/// ([`EventStore::survey`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The game.
    pub game_id: String,
    /// The log's last seq.
    pub last_seq: u64,
    /// The node named as its owner (node id, address), if any.
    pub owner: Option<(String, String)>,
    /// No live lease: a node may take the game now.
    pub free: bool,
    /// How long the live lease has left (on the database's clock), if one does.
    pub lease_left: Option<std::time::Duration>,
}

/// Told the duration of every commit of the SQLite writer (the transaction's COMMIT, where
/// `synchronous=FULL` fsyncs the WAL), on the writer thread: keep it to a few atomics.
pub trait CommitObserver: Send + Sync + std::fmt::Debug {
    /// A commit took `took` (failed commits included).
    fn committed(&self, took: std::time::Duration);
}

/// One append as a backend writes it: events of one stream from a seq on (never none),
/// and the stream row's summary with them.
#[derive(Debug)]
pub struct Append<'a> {
    /// The game's or the tournament's log.
    pub stream: Stream<'a>,
    /// The seq the first payload takes: the log's next, or the append is a conflict.
    pub expected_next_seq: u64,
    /// The events, encoded, in seq order.
    pub payloads: Vec<Vec<u8>>,
    /// The stream row's finished flag and summary, written with the events.
    pub summary: Option<SummaryUpdate>,
}

/// A durable, append-only log of game events plus a table of games.
///
/// Every method is atomic: it either does all it says or nothing. Stores are shared
/// (`Arc<dyn EventStore>`) between the RPC handlers, so all methods take `&self`.
#[async_trait]
pub trait EventStore: Send + Sync {
    /// Adds a game's metadata row. Its log starts empty (next seq 1).
    ///
    /// # Errors
    /// [`StoreError::GameExists`] if the id is taken; backend failures.
    async fn create_game(&self, record: GameRecord) -> Result<(), StoreError>;

    /// Adds a game's metadata row together with the first events of its log (seqs 1, 2,
    /// ...) in one atomic step; returns the last seq written. A crash leaves either the
    /// game with its events or no trace of it, never a game whose log is empty (which
    /// would not replay). This is how the server creates games.
    ///
    /// # Errors
    /// [`StoreError::GameExists`] if the id is taken (nothing written),
    /// [`StoreError::EmptyAppend`]; backend failures (nothing written either).
    async fn create_game_with_events(
        &self,
        record: GameRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError>;

    /// Marks a game finished (or not) and, if `metadata_json` is given, replaces its
    /// metadata.
    ///
    /// # Errors
    /// [`StoreError::GameNotFound`]; backend failures.
    async fn update_game(
        &self,
        game_id: &str,
        finished: bool,
        metadata_json: Option<String>,
    ) -> Result<(), StoreError>;

    /// A game's metadata row, if the game exists.
    ///
    /// # Errors
    /// Backend failures.
    async fn get_game(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError>;

    /// Appends events to a stream's log (a game's or a tournament's), giving them the seqs
    /// `expected_next_seq`, `expected_next_seq + 1`, ...; returns the last seq written.
    /// With a `summary`, the stream's row takes its finished flag and summary in the same
    /// atomic step: the row never disagrees with the log, whatever the moment of a crash.
    ///
    /// When this returns `Ok` the events are durable (on disk, fsynced, for durable
    /// stores). The check and the write are one atomic step: if the log's next seq is not
    /// `expected_next_seq` nothing is written and the caller learns the actual next seq.
    /// A game's appends are fenced by its lease where the store keeps leases
    /// ([`EventStore::acquire`]); a tournament's by the seq alone (its writers read the
    /// log, decide, and append what they decided on the seq they read).
    ///
    /// # Errors
    /// [`StoreError::Conflict`] on a seq mismatch, [`StoreError::GameNotFound`] or
    /// [`StoreError::TournamentNotFound`], [`StoreError::EmptyAppend`],
    /// [`StoreError::Closed`]; backend failures (then nothing was written either).
    async fn append(
        &self,
        stream: Stream<'_>,
        expected_next_seq: u64,
        payloads: Vec<Vec<u8>>,
        summary: Option<SummaryUpdate>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        self.write(Append {
            stream,
            expected_next_seq,
            payloads,
            summary,
        })
        .await
    }

    /// The backend's part of [`EventStore::append`], after the request was checked (its
    /// payloads are not empty); callers use `append`.
    ///
    /// # Errors
    /// As [`EventStore::append`].
    async fn write(&self, batch: Append<'_>) -> Result<u64, StoreError>;

    /// A stream's events with `seq >= from_seq`, in seq order. `from_seq` 0 or 1 loads
    /// the whole log; to resume after the last seen seq `s`, pass `s + 1`.
    ///
    /// # Errors
    /// [`StoreError::GameNotFound`] or [`StoreError::TournamentNotFound`]; backend
    /// failures.
    async fn load(&self, stream: Stream<'_>, from_seq: u64)
    -> Result<Vec<StoredEvent>, StoreError>;

    /// The seq of a stream's last event (0 when its log is empty).
    ///
    /// # Errors
    /// [`StoreError::GameNotFound`] or [`StoreError::TournamentNotFound`]; backend
    /// failures.
    async fn last_seq(&self, stream: Stream<'_>) -> Result<u64, StoreError>;

    /// Adds a tournament's row together with the first events of its log (seqs 1, 2,
    /// ...), in one atomic step; returns the last seq written.
    ///
    /// # Errors
    /// [`StoreError::TournamentExists`] if the key is taken (nothing written),
    /// [`StoreError::EmptyAppend`]; backend failures (nothing written either).
    async fn create_tournament(
        &self,
        record: TournamentRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError>;

    /// A tournament's row, if the tournament exists.
    ///
    /// # Errors
    /// Backend failures.
    async fn get_tournament(&self, key: &str) -> Result<Option<TournamentRecord>, StoreError>;

    /// Every tournament's row, by key.
    ///
    /// # Errors
    /// Backend failures.
    async fn list_tournaments(&self) -> Result<Vec<TournamentRecord>, StoreError>;

    /// Games passing `filter`, ordered as [`sort_games`] orders them (by event, round,
    /// board).
    ///
    /// # Errors
    /// Backend failures.
    async fn list_games(&self, filter: &GameFilter) -> Result<Vec<GameRecord>, StoreError>;

    /// Commits what is queued and closes the log tidily (SQLite: checkpoints the WAL
    /// into the database and truncates it); later writes fail with
    /// [`StoreError::Closed`]. The default does nothing.
    ///
    /// # Errors
    /// Already closed; a failed checkpoint.
    async fn close(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Until when this store's games were served before this process opened it: the
    /// previous run's last [`EventStore::mark_alive`], if it left one. A game still
    /// running at a restart was down from then, not from its last event: the time its
    /// side on move spent thinking while the service ran is that side's. `None` for a new
    /// store and for stores that keep no mark (PostgreSQL: its leases say it, see
    /// [`Leases::acquire`]).
    fn alive_mark(&self) -> Option<AliveMark> {
        None
    }

    /// Records that the service serves this store's games at `mark` (the server's
    /// timeline, and the host's boot clock where there is one): once its recovery has
    /// loaded the running games, the hub marks every second and once more when it has
    /// stopped, so the next run knows when this one stopped
    /// ([`EventStore::alive_mark`]). The default keeps nothing.
    ///
    /// # Errors
    /// Backend failures; [`StoreError::Closed`].
    async fn mark_alive(&self, _mark: &AliveMark) -> Result<(), StoreError> {
        Ok(())
    }

    /// The leases, hints and survey of a log shared by several nodes ([`Leases`]):
    /// `None` for stores of one process (this process serves every game, always holds
    /// its lease and made every change itself).
    fn leases(&self) -> Option<&dyn Leases> {
        None
    }

    /// Every game not yet finished: the games to rebuild at start.
    ///
    /// # Errors
    /// Backend failures.
    async fn unfinished_games(&self) -> Result<Vec<GameRecord>, StoreError> {
        self.list_games(&GameFilter {
            unfinished_only: true,
            ..GameFilter::default()
        })
        .await
    }
}

/// What a log shared by several nodes adds to [`EventStore`] (PostgreSQL alone): a lease
/// per game, so one node serves it and the others follow; hints of the changes other
/// nodes made; the survey of the games followed. A store of one process has none of it
/// ([`EventStore::leases`] is `None`): the hub then holds every lease, hears of every
/// change from itself and serves every unfinished game (`impl dyn EventStore` below).
#[async_trait]
pub trait Leases: Send + Sync {
    /// Takes this node's lease on a game before it serves the game (nothing to do if it
    /// holds it already). Returns what the lease shows of the previous owner's last sign of
    /// life ([`LeaseGap`], measured on the database's clock): `None` when this node held
    /// the lease already.
    ///
    /// # Errors
    /// [`StoreError::Fenced`] naming the owner if another node holds a live lease;
    /// [`StoreError::GameNotFound`]; backend failures.
    async fn acquire(&self, game_id: &str) -> Result<Option<LeaseGap>, StoreError>;

    /// Gives a game's lease up, so another node may take it at once (an evicted game).
    ///
    /// # Errors
    /// Backend failures (the lease then runs out on its own).
    async fn release(&self, game_id: &str) -> Result<(), StoreError>;

    /// Whether this node holds the game's lease now.
    fn holds(&self, game_id: &str) -> bool;

    /// The games whose lease this node loses, as it loses them. A receiver that lags must
    /// ask [`Leases::holds`] about each game it serves.
    fn lease_losses(&self) -> tokio::sync::broadcast::Receiver<String>;

    /// Hints of changes made by any node, as they come.
    fn hints(&self) -> tokio::sync::broadcast::Receiver<StoreHint>;

    /// Where the games `ids` stand in the log (last seq, owner, whether the lease ran
    /// out), in one read: what a node following those games asks every so often instead
    /// of reading each game's log and trying each lease. Unknown ids are left out.
    ///
    /// # Errors
    /// Backend failures.
    async fn survey(&self, ids: &[String]) -> Result<Vec<Standing>, StoreError>;

    /// The unfinished games that no node serves now (no live lease, even in this node's
    /// name): the ones a node should take over.
    ///
    /// # Errors
    /// Backend failures.
    async fn unserved_games(&self) -> Result<Vec<GameRecord>, StoreError>;
}

/// The hub's view of leases, whatever the store: a store of one process holds every
/// lease and grants every one at once.
impl dyn EventStore {
    /// [`Leases::acquire`]; `Ok(None)` for a store of one process.
    ///
    /// # Errors
    /// As [`Leases::acquire`].
    pub async fn acquire(&self, game_id: &str) -> Result<Option<LeaseGap>, StoreError> {
        match self.leases() {
            Some(l) => l.acquire(game_id).await,
            None => Ok(None),
        }
    }

    /// [`Leases::release`]; nothing to do for a store of one process.
    ///
    /// # Errors
    /// As [`Leases::release`].
    pub async fn release(&self, game_id: &str) -> Result<(), StoreError> {
        match self.leases() {
            Some(l) => l.release(game_id).await,
            None => Ok(()),
        }
    }

    /// [`Leases::holds`]; always, for a store of one process.
    pub fn holds(&self, game_id: &str) -> bool {
        self.leases().is_none_or(|l| l.holds(game_id))
    }

    /// [`Leases::unserved_games`]; every unfinished game for a store of one process.
    ///
    /// # Errors
    /// Backend failures.
    pub async fn unserved_games(&self) -> Result<Vec<GameRecord>, StoreError> {
        match self.leases() {
            Some(l) => l.unserved_games().await,
            None => self.unfinished_games().await,
        }
    }
}
