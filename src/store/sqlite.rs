//! The embedded SQLite event store.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row};
use tokio::sync::{mpsc, oneshot};

use super::checkpoint::Checkpointer;
use super::writer::{self, Op, Reply, Request, from_sql_seq, to_sql_seq};
use super::{
    AliveMark, Append, EventStore, GameFilter, GameRecord, StoreError, StoredEvent, Stream,
    TournamentRecord, schema, sort_games,
};

/// Tuning for [`SqliteStore`].
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// The most requests the writer puts in one transaction; bounds the latency a batch
    /// adds to its last member.
    pub max_batch: usize,
    /// How many requests may wait for the writer before `append` itself waits
    /// (backpressure instead of unbounded memory).
    pub queue_capacity: usize,
    /// How many read connections at most: a read beyond waits for one to be free.
    /// They are kept open once opened, never closed and reopened (see `ReaderPool`).
    pub max_readers: usize,
    /// Told how long each commit took (the fsync histogram of the metrics).
    pub commit_observer: Option<Arc<dyn super::CommitObserver>>,
    /// The least time between two checkpoints of the WAL into the database file, done
    /// by a thread of their own (see the `checkpoint` module).
    pub checkpoint_interval: std::time::Duration,
    /// Start an empty log even where one was before: the database file is missing or
    /// empty while its WAL, shared-memory index or marker is there (`serve --init`).
    /// Without it such a store is refused ([`StoreError::Damaged`]); with it those files
    /// are set aside (renamed, never deleted) and a new log begins.
    pub init: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            max_batch: 1024,
            queue_capacity: 4096,
            max_readers: 8,
            commit_observer: None,
            checkpoint_interval: std::time::Duration::from_millis(200),
            init: false,
        }
    }
}

/// The embedded event store: one SQLite file in WAL mode with `synchronous=FULL`.
///
/// All writes go through one writer thread doing group commit (see the `writer` module);
/// reads use a small pool of separate connections on the blocking thread pool, which WAL
/// lets run while the writer commits. Clones share the same writer and pool.
///
/// Reads need a tokio runtime (they run on its blocking pool); writes only need the
/// writer thread, which [`SqliteStore::open`] starts.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    tx: mpsc::Sender<Request>,
    readers: Arc<ReaderPool>,
    /// The `service` row as the file was opened: when the previous run last served.
    alive_mark: Option<AliveMark>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (or creates) the store at `path` with default options. Blocks briefly: it
    /// opens the file, migrates the schema and starts the writer thread.
    ///
    /// # Errors
    /// [`StoreError::Io`] if the directory cannot be created, [`StoreError::Schema`] if
    /// the file is from a newer version, [`StoreError::Database`] otherwise.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// Opens (or creates) the store at `path` with the given options.
    ///
    /// # Errors
    /// As [`SqliteStore::open`].
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        lost_log(&path, options.init)?;
        let mut conn = Connection::open(&path)?;
        schema::prepare_writer(&mut conn)?;
        mark_created(&path)?;
        // An impossible mark (a damaged row) is ignored, as if there were none.
        let alive_mark = match checked_alive_mark(&path, &conn)? {
            Some(schema::MarkVerdict::Impossible(_)) => None,
            _ => schema::alive_mark(&conn)?,
        };

        let (tx, rx) = mpsc::channel(options.queue_capacity.max(1));
        let max_batch = options.max_batch.max(1);
        let observer = options.commit_observer;
        let checkpointer = Checkpointer::start(&path, options.checkpoint_interval)?;
        std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || writer::run(conn, rx, max_batch, observer, checkpointer))?;

        let readers = Arc::new(ReaderPool {
            path: path.clone(),
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(tokio::sync::Semaphore::new(options.max_readers.max(1))),
        });
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                tx,
                readers,
                alive_mark,
            }),
        })
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Commits everything queued, checkpoints the WAL into the database file and stops
    /// the writer; later writes fail with [`StoreError::Closed`]. Every acknowledged
    /// append is already durable, so closing is about a tidy file, not about safety.
    ///
    /// # Errors
    /// [`StoreError::Closed`] if already closed; a failed checkpoint.
    pub async fn close(&self) -> Result<(), StoreError> {
        let (reply, rx) = oneshot::channel();
        self.submit(Op::Close, Reply::Unit(reply)).await?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    async fn submit(&self, op: Op, reply: Reply) -> Result<(), StoreError> {
        self.inner
            .tx
            .send(Request { op, reply })
            .await
            .map_err(|_| StoreError::Closed)
    }

    /// Queues a write answered with a seq for the writer's next batch.
    async fn write_seq(&self, op: Op) -> Result<u64, StoreError> {
        let (reply, rx) = oneshot::channel();
        self.submit(op, Reply::Seq(reply)).await?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    async fn write_unit(&self, op: Op) -> Result<(), StoreError> {
        let (reply, rx) = oneshot::channel();
        self.submit(op, Reply::Unit(reply)).await?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = Arc::clone(&self.inner.readers);
        // A permit per connection: at most `max_readers` reads (and blocking threads)
        // at once, however many requests come together.
        let permit = Arc::clone(&pool.permits)
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Closed)?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            pool.with(f)
        })
        .await
        .map_err(StoreError::database)?
    }
}

#[async_trait]
impl EventStore for SqliteStore {
    fn alive_mark(&self) -> Option<AliveMark> {
        self.inner.alive_mark.clone()
    }

    async fn mark_alive(&self, mark: &AliveMark) -> Result<(), StoreError> {
        self.write_unit(Op::MarkAlive(mark.clone())).await
    }

    async fn create_game(&self, record: GameRecord) -> Result<(), StoreError> {
        self.write_unit(Op::CreateGame(record)).await
    }

    async fn create_game_with_events(
        &self,
        record: GameRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        self.write_seq(Op::CreateGameWithEvents { record, payloads })
            .await
    }

    async fn update_game(
        &self,
        game_id: &str,
        finished: bool,
        metadata_json: Option<String>,
    ) -> Result<(), StoreError> {
        self.write_unit(Op::UpdateGame {
            game_id: game_id.to_string(),
            finished,
            metadata_json,
        })
        .await
    }

    async fn get_game(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        let game_id = game_id.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!("{SELECT_GAMES} WHERE game_id = ?1"))?
                .query_row([game_id], game_row)
                .optional()?
                .transpose()
        })
        .await
    }

    async fn write(&self, batch: Append<'_>) -> Result<u64, StoreError> {
        self.write_seq(Op::Append {
            kind: batch.stream.kind(),
            game_id: batch.stream.id().to_string(),
            expected_next_seq: batch.expected_next_seq,
            payloads: batch.payloads,
            summary: batch.summary,
        })
        .await
    }

    async fn load(
        &self,
        stream: Stream<'_>,
        from_seq: u64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let (kind, id) = (stream.kind(), stream.id().to_string());
        self.read(move |conn| {
            let stream = Stream::new(kind, &id);
            // Past i64::MAX there is nothing to load: an empty range, not an error.
            let from = to_sql_seq(from_seq).unwrap_or(i64::MAX);
            let mut stmt = conn.prepare_cached(writer::sql(stream).events_from)?;
            let rows = stmt.query_map(rusqlite::params![id, from], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })?;
            let mut events: Vec<StoredEvent> = Vec::new();
            for row in rows {
                // A damaged page names the first seq not read (the rows before it were).
                let (seq, written_at_ms, payload) = row.map_err(|e| match e.into() {
                    StoreError::Damaged { what, .. } => StoreError::Damaged {
                        what,
                        from_seq: Some(events.last().map_or(from_seq.max(1), |e| e.seq + 1)),
                    },
                    other => other,
                })?;
                events.push(StoredEvent {
                    game_id: id.clone(),
                    seq: from_sql_seq(seq)?,
                    payload,
                    written_at_ms,
                });
            }
            if events.is_empty() && !writer::row_exists(conn, stream)? {
                return Err(stream.not_found());
            }
            Ok(events)
        })
        .await
    }

    async fn last_seq(&self, stream: Stream<'_>) -> Result<u64, StoreError> {
        let (kind, id) = (stream.kind(), stream.id().to_string());
        self.read(move |conn| writer::last_seq(conn, Stream::new(kind, &id)))
            .await
    }

    async fn create_tournament(
        &self,
        record: TournamentRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        self.write_seq(Op::CreateTournament { record, payloads })
            .await
    }

    async fn get_tournament(&self, key: &str) -> Result<Option<TournamentRecord>, StoreError> {
        let key = key.to_string();
        self.read(move |conn| {
            Ok(conn
                .prepare_cached(&format!("{SELECT_TOURNAMENTS} WHERE key = ?1"))?
                .query_row([key], tournament_row)
                .optional()?)
        })
        .await
    }

    async fn list_tournaments(&self) -> Result<Vec<TournamentRecord>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!("{SELECT_TOURNAMENTS} ORDER BY key"))?;
            let rows = stmt.query_map([], tournament_row)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    async fn close(&self) -> Result<(), StoreError> {
        SqliteStore::close(self).await
    }

    async fn list_games(&self, filter: &GameFilter) -> Result<Vec<GameRecord>, StoreError> {
        let filter = filter.clone();
        self.read(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "{SELECT_GAMES}
                 WHERE (?1 IS NULL OR event = ?1) AND (?2 IS NULL OR round = ?2)
                   AND (?3 = 0 OR finished = 0)"
            ))?;
            let rows = stmt.query_map(
                rusqlite::params![filter.event, filter.round, filter.unfinished_only],
                game_row,
            )?;
            let mut games = Vec::new();
            for row in rows {
                games.push(row??);
            }
            // Sorted in Rust with the same function as MemoryStore, so both list alike
            // (SQL cannot order "3.10" after "3.2").
            sort_games(&mut games);
            Ok(games)
        })
        .await
    }
}

/// The file beside the database that says a log was created here (see [`lost_log`]).
#[must_use]
pub fn marker_path(db: &Path) -> PathBuf {
    with_suffix(db, "-created")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Refuses to start an empty log where one was: the database file missing or empty
/// (0 bytes) while its WAL, its shared-memory index or the marker
/// ([`marker_path`]) is there. A new directory (none of them) starts a log silently.
/// With `init`, those files are set aside (renamed with a suffix) and a log begins.
fn lost_log(db: &Path, init: bool) -> Result<(), StoreError> {
    let len = match std::fs::metadata(db) {
        Ok(m) => Some(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    if len.is_some_and(|n| n > 0) {
        return Ok(());
    }
    let traces: Vec<PathBuf> = [
        marker_path(db),
        with_suffix(db, "-wal"),
        with_suffix(db, "-shm"),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .collect();
    if traces.is_empty() {
        return Ok(());
    }
    let state = if len.is_some() {
        "is empty (0 bytes)"
    } else {
        "is missing"
    };
    let names: Vec<String> = traces.iter().map(|p| p.display().to_string()).collect();
    if !init {
        return Err(StoreError::damaged(format!(
            "{} {state} but a log was there (found: {}): it was lost or truncated; restore \
             it from a backup, or start with --init (ARBITER_INIT=1) to begin an empty log \
             (the files found are then set aside, not deleted)",
            db.display(),
            names.join(", ")
        )));
    }
    let suffix = format!(".set-aside-{}", super::record::now_ms());
    for file in traces
        .iter()
        .map(PathBuf::as_path)
        .chain(len.is_some().then_some(db))
    {
        let aside = with_suffix(file, &suffix);
        std::fs::rename(file, &aside)?;
        tracing::warn!(
            file = %file.display(),
            now = %aside.display(),
            "--init: the log {state}; a file of the old log is set aside and an empty log begins"
        );
    }
    Ok(())
}

/// Writes the marker ([`marker_path`]) once the log's schema is in place, if it is not.
fn mark_created(db: &Path) -> Result<(), StoreError> {
    let marker = marker_path(db);
    if marker.exists() {
        return Ok(());
    }
    let text = format!(
        "draughts-arbiter: an event log was created here at {} ms (UTC, Unix epoch).\n\
         {} beside this file holds every game: if it is missing or empty, the log was lost;\n\
         the server then refuses to start unless told --init.\n",
        super::record::now_ms(),
        db.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    std::fs::write(&marker, text)?;
    Ok(())
}

/// The stored alive mark, judged against this host's clock: an impossible one is logged
/// as an error naming the file and is not used (the outage of a running game then counts
/// from its last event, as before marks existed); an implausible one is logged as a
/// warning.
fn checked_alive_mark(
    path: &Path,
    conn: &Connection,
) -> Result<Option<schema::MarkVerdict>, StoreError> {
    let Some(mark) = schema::raw_alive_mark(conn)? else {
        return Ok(None);
    };
    let verdict = schema::judge_alive_mark(mark, super::record::now_ms());
    match &verdict {
        schema::MarkVerdict::Impossible(why) => tracing::error!(
            path = %path.display(),
            "{why}: the file is damaged there; the mark is ignored (a running game's outage \
             counts from its last event) and the next mark replaces it"
        ),
        schema::MarkVerdict::Implausible(why) => {
            tracing::warn!(path = %path.display(), "{why}");
        }
        schema::MarkVerdict::Fine => {}
    }
    Ok(Some(verdict))
}

const SELECT_GAMES: &str =
    "SELECT game_id, created_at_ms, event, round, board, finished, metadata_json, summary_json
     FROM games";

const SELECT_TOURNAMENTS: &str =
    "SELECT key, name, created_at_ms, finished, summary_json FROM tournaments";

/// Reads a `tournaments` row.
fn tournament_row(r: &Row<'_>) -> rusqlite::Result<TournamentRecord> {
    Ok(TournamentRecord {
        key: r.get(0)?,
        name: r.get(1)?,
        created_at_ms: r.get(2)?,
        finished: r.get(3)?,
        summary_json: r.get(4)?,
    })
}

/// Reads a `games` row; the inner result reports an out-of-range board.
fn game_row(r: &Row<'_>) -> rusqlite::Result<Result<GameRecord, StoreError>> {
    let game_id: String = r.get(0)?;
    let board: i64 = r.get(4)?;
    let Ok(board) = u32::try_from(board) else {
        return Ok(Err(StoreError::Corrupt(format!(
            "game '{game_id}' has board {board}"
        ))));
    };
    Ok(Ok(GameRecord {
        game_id,
        created_at_ms: r.get(1)?,
        event: r.get(2)?,
        round: r.get(3)?,
        board,
        finished: r.get(5)?,
        metadata_json: r.get(6)?,
        summary_json: r.get(7)?,
    }))
}

/// Read-only connections, reused between reads: at most as many as `permits` has (a read
/// holds one while it runs), each kept open once opened.
///
/// Bounded and never closed because a closed connection does not give back its file
/// descriptors: SQLite's unix VFS keeps the descriptor of a file closed while another
/// connection of the process holds a lock on it (closing it would drop that lock, POSIX
/// locks being per process), and the writer holds one as long as it runs (WAL mode).
/// The pool used to open a connection per concurrent read (up to one per blocking
/// thread) and close those above 4 idle: issue 37 found 284 descriptors of
/// `arbiter.sqlite` still open 60 s after 10,000 `WatchEvent` streams (517 at the top),
/// and `tests/it/limits.rs` 194 after 30 s.
struct ReaderPool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    permits: Arc<tokio::sync::Semaphore>,
}

impl ReaderPool {
    /// Runs `f` on an idle connection (or a new one) and keeps the connection for later.
    /// The caller holds a permit, so there are never more connections than permits.
    fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.open()?,
        };
        let result = f(&conn);
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(conn);
        result
    }

    fn open(&self) -> Result<Connection, StoreError> {
        // Read-write flags (not READ_ONLY) because a WAL reader may need to create the
        // shared-memory index; `query_only` makes writes through it impossible instead.
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        schema::configure(&conn)?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(conn)
    }
}
