//! The single SQLite writer: group commit on a dedicated thread.
//!
//! Appends from every game queue on one channel. The writer takes everything queued (up
//! to a batch limit), applies them all in ONE transaction, commits (one fsync for the
//! whole batch) and only then answers each caller. A refused request (seq conflict,
//! unknown game) is refused before it writes, so it never spoils its neighbours. While it
//! waits for the disk, new requests queue up and form the next batch, so the number of
//! fsyncs per second stays constant while throughput grows with concurrency.
//!
//! Why a thread and not a tokio task: rusqlite calls block, and an fsync can take
//! milliseconds; a dedicated thread never stalls the runtime's workers.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use tokio::sync::{mpsc, oneshot};

use super::checkpoint::Checkpointer;
use super::record::now_ms;
use super::schema;
use super::schema::StreamSql;
use super::{
    AliveMark, CommitObserver, GameRecord, StoreError, Stream, StreamKind, SummaryUpdate,
    TournamentRecord,
};

/// A caller waiting for its answer.
pub enum Reply {
    /// `append`: the last seq written.
    Seq(oneshot::Sender<Result<u64, StoreError>>),
    /// Everything else.
    Unit(oneshot::Sender<Result<(), StoreError>>),
}

impl Reply {
    fn send(self, result: Result<u64, StoreError>) {
        // A caller that gave up (its future was dropped) no longer needs the answer; the
        // write itself stands either way.
        match self {
            Reply::Seq(tx) => {
                let _ = tx.send(result);
            }
            Reply::Unit(tx) => {
                let _ = tx.send(result.map(|_| ()));
            }
        }
    }
}

/// A write request.
pub enum Op {
    /// Append events to a stream's log.
    Append {
        /// Whose log: a game's or a tournament's.
        kind: StreamKind,
        /// The game (or tournament).
        game_id: String,
        /// The seq the first payload takes.
        expected_next_seq: u64,
        /// The events, never empty (checked before queueing).
        payloads: Vec<Vec<u8>>,
        /// The row's finished flag and summary, written in the same transaction.
        summary: Option<SummaryUpdate>,
    },
    /// Insert a tournament's row and the first events of its log, in one transaction.
    CreateTournament {
        /// The tournament's row.
        record: TournamentRecord,
        /// Its first events (seqs 1, 2, ...), never empty (checked before queueing).
        payloads: Vec<Vec<u8>>,
    },
    /// Insert a game row.
    CreateGame(GameRecord),
    /// Insert a game row and the first events of its log, in the same transaction.
    CreateGameWithEvents {
        /// The game's row.
        record: GameRecord,
        /// Its first events (seqs 1, 2, ...), never empty (checked before queueing).
        payloads: Vec<Vec<u8>>,
    },
    /// Update a game row.
    UpdateGame {
        /// The game.
        game_id: String,
        /// The new finished flag.
        finished: bool,
        /// New metadata, if any.
        metadata_json: Option<String>,
    },
    /// Mark the service alive at this instant (the server's timeline, and the boot
    /// clock).
    MarkAlive(AliveMark),
    /// Commit what is queued, checkpoint the WAL and stop.
    Close,
}

/// A request with the caller to answer.
pub struct Request {
    /// What to do.
    pub op: Op,
    /// Who to tell.
    pub reply: Reply,
}

/// Runs the writer until every sender is dropped or a `Close` arrives; kicks the
/// checkpointer after every batch and stops it before returning.
pub fn run(
    mut conn: Connection,
    mut rx: mpsc::Receiver<Request>,
    max_batch: usize,
    observer: Option<Arc<dyn CommitObserver>>,
    checkpointer: Checkpointer,
) {
    let observer = observer.as_deref();
    let mut known = KnownSeqs::default();
    let mut batch = Vec::with_capacity(max_batch);
    // No waiting for stragglers: whatever queued while the last commit waited for the
    // disk is the next batch. (A writer that spun briefly for the callers of the last
    // batch to come back raised the raw-append baseline but cost the service about 12%
    // of its moves/s on two cores: the spinning thread took the CPU those callers needed
    // to send their requests.)
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        drain(&mut rx, &mut batch, max_batch);
        let close = batch.iter().position(|r| matches!(r.op, Op::Close));
        match close {
            None => {
                write_batch(&mut conn, batch.drain(..), observer, &mut known);
                checkpointer.committed();
            }
            Some(i) => {
                // Requests queued after the Close are refused like those that come later.
                let rest: Vec<Request> = batch.drain(i + 1..).collect();
                let Some(close) = batch.pop() else { break };
                write_batch(&mut conn, batch.drain(..), observer, &mut known);
                rx.close();
                // The final checkpoint below must not run beside the thread's own.
                checkpointer.stop();
                for request in rest {
                    request.reply.send(Err(StoreError::Closed));
                }
                while let Ok(request) = rx.try_recv() {
                    request.reply.send(Err(StoreError::Closed));
                }
                // Fold the WAL back into the main file so the next open starts clean.
                let checkpoint = conn
                    .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                    .map_err(StoreError::from);
                close.reply.send(checkpoint.map(|()| 0));
                return;
            }
        }
    }
    checkpointer.stop();
}

/// Takes whatever is queued, up to `max_batch`.
fn drain(rx: &mut mpsc::Receiver<Request>, batch: &mut Vec<Request>, max_batch: usize) {
    while batch.len() < max_batch {
        match rx.try_recv() {
            Ok(request) => batch.push(request),
            Err(_) => break,
        }
    }
}

/// The last seq the writer has committed for each game it wrote, so that an append
/// continuing it skips the two index lookups of [`continues_log`] (about a quarter of
/// the writer's instructions a move under `bench`: callgrind, 16 games, 14k of 61k).
///
/// The log stays the judge: the unique `(game_id, seq)` index refuses a seq that is
/// already there (written by another process on the same file, say). That refusal backs
/// out only the statement that failed, the first row of the append, so the append is
/// then checked against the log and refused as a conflict, writing nothing, and the game
/// is forgotten here. Only committed writes are remembered (a batch rolled back forgets
/// what it staged), and the service never deletes events, so a remembered seq is never
/// ahead of the log.
#[derive(Debug, Default)]
pub struct KnownSeqs {
    last: HashMap<String, u64>,
}

/// Games remembered at most; past it the writer starts over (each game is then checked
/// against the log once more).
const KNOWN_GAMES_MAX: usize = 100_000;

impl KnownSeqs {
    fn get(&self, game_id: &str) -> Option<u64> {
        self.last.get(game_id).copied()
    }

    fn remember(&mut self, game_id: &str, last: u64) {
        if let Some(seq) = self.last.get_mut(game_id) {
            *seq = last;
            return;
        }
        if self.last.len() >= KNOWN_GAMES_MAX {
            self.last.clear();
        }
        self.last.insert(game_id.to_owned(), last);
    }

    fn forget(&mut self, game_id: &str) {
        self.last.remove(game_id);
    }
}

/// What one attempt at a batch learned of the games' last seqs; kept only if it commits.
/// A request later in the batch sees what an earlier one staged.
#[derive(Default)]
struct Staged<'a> {
    last: HashMap<&'a str, Option<u64>>,
}

impl<'a> Staged<'a> {
    fn last(&self, known: &KnownSeqs, game_id: &str) -> Option<u64> {
        match self.last.get(game_id) {
            Some(staged) => *staged,
            None => known.get(game_id),
        }
    }

    fn commit(self, known: &mut KnownSeqs) {
        for (game_id, last) in self.last {
            match last {
                Some(last) => known.remember(game_id, last),
                None => known.forget(game_id),
            }
        }
    }
}

/// Applies a batch in one transaction and answers every caller after the commit.
///
/// Every request checks its preconditions (seq, existence) before it writes, so a refused
/// request writes nothing and its neighbours in the batch are unaffected, without paying
/// for a savepoint per request. A request that fails *while* writing (an engine error
/// after some of its rows went in) is the rare case: the transaction is rolled back and
/// the batch replayed without that request.
fn write_batch(
    conn: &mut Connection,
    batch: impl Iterator<Item = Request>,
    observer: Option<&dyn CommitObserver>,
    known: &mut KnownSeqs,
) {
    let mut requests: Vec<Request> = batch.collect();
    let written_at_ms = now_ms();
    loop {
        match try_batch(conn, &requests, written_at_ms, observer, known) {
            Attempt::Committed(results) => {
                for (request, result) in requests.into_iter().zip(results) {
                    request.reply.send(result);
                }
                return;
            }
            Attempt::RequestFailed { index, error } => {
                requests.remove(index).reply.send(Err(error));
            }
            Attempt::BatchFailed(error) => {
                // Nothing of the batch is on disk.
                for request in requests {
                    request.reply.send(Err(error.clone()));
                }
                return;
            }
        }
    }
}

/// How one attempt at a batch ended.
enum Attempt {
    /// Committed (durable); one result per request, refusals included.
    Committed(Vec<Result<u64, StoreError>>),
    /// Request `index` failed in the engine; the transaction was rolled back.
    RequestFailed {
        /// Which request.
        index: usize,
        /// Why.
        error: StoreError,
    },
    /// BEGIN or COMMIT failed; nothing was written.
    BatchFailed(StoreError),
}

fn try_batch(
    conn: &mut Connection,
    requests: &[Request],
    written_at_ms: i64,
    observer: Option<&dyn CommitObserver>,
    known: &mut KnownSeqs,
) -> Attempt {
    let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => return Attempt::BatchFailed(e.into()),
    };
    let mut staged = Staged::default();
    let mut results = Vec::with_capacity(requests.len());
    for (index, request) in requests.iter().enumerate() {
        match apply(&tx, &request.op, written_at_ms, known, &mut staged) {
            Ok(last) => results.push(Ok(last)),
            // Refused before writing anything: the batch goes on.
            Err(
                error @ (StoreError::Conflict { .. }
                | StoreError::GameNotFound(_)
                | StoreError::GameExists(_)),
            ) => results.push(Err(error)),
            // May have written part of its rows: dropping `tx` rolls everything back.
            Err(error) => return Attempt::RequestFailed { index, error },
        }
    }
    // The commit is where synchronous=FULL fsyncs the WAL: that is what the observer times.
    let started = Instant::now();
    let committed = tx.commit();
    if let Some(observer) = observer {
        observer.committed(started.elapsed());
    }
    match committed {
        Ok(()) => {
            staged.commit(known);
            Attempt::Committed(results)
        }
        Err(e) => Attempt::BatchFailed(e.into()),
    }
}

/// Does one request's writes; returns the last seq for appends, 0 otherwise. What it
/// learns of a game's last seq goes to `staged`.
fn apply<'a>(
    conn: &Connection,
    op: &'a Op,
    written_at_ms: i64,
    known: &KnownSeqs,
    staged: &mut Staged<'a>,
) -> Result<u64, StoreError> {
    match op {
        Op::Append {
            kind: StreamKind::Game,
            game_id,
            expected_next_seq,
            payloads,
            summary,
        } => {
            let next = *expected_next_seq;
            let stream = Stream::Game(game_id);
            // The seq this writer committed (or staged) last for the game is `next - 1`.
            let continues = next > 0 && staged.last(known, game_id) == Some(next - 1);
            let seq = if continues {
                match insert_events(conn, stream, next - 1, payloads, written_at_ms) {
                    // Someone else wrote this seq: nothing of this append went in.
                    Err(refused @ StoreError::Conflict { .. }) => {
                        staged.last.insert(game_id, None);
                        return Err(refused);
                    }
                    inserted => inserted?,
                }
            } else {
                if !continues_log(conn, stream, next)? {
                    staged.last.insert(game_id, None);
                    return Err(conflict(conn, stream, next)?);
                }
                insert_events(conn, stream, next - 1, payloads, written_at_ms)?
            };
            staged.last.insert(game_id, Some(seq));
            if let Some(s) = summary {
                set_summary(conn, stream, s)?;
            }
            Ok(seq)
        }
        // A tournament's appends are few (an arbiter's commands, a game's result): they
        // check the seq in the database every time.
        Op::Append {
            kind: StreamKind::Tournament,
            game_id: key,
            expected_next_seq,
            payloads,
            summary,
        } => {
            let next = *expected_next_seq;
            let stream = Stream::Tournament(key);
            if !continues_log(conn, stream, next)? {
                return Err(conflict(conn, stream, next)?);
            }
            let seq = insert_events(conn, stream, next - 1, payloads, written_at_ms)?;
            if let Some(s) = summary {
                set_summary(conn, stream, s)?;
            }
            Ok(seq)
        }
        Op::CreateTournament { record, payloads } => {
            let stream = Stream::Tournament(&record.key);
            if row_exists(conn, stream)? {
                return Err(StoreError::TournamentExists(record.key.clone()));
            }
            conn.prepare_cached(
                "INSERT INTO tournaments (key, name, created_at_ms, finished, summary_json)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                record.key,
                record.name,
                record.created_at_ms,
                record.finished,
                record.summary_json
            ])?;
            insert_events(conn, stream, 0, payloads, written_at_ms).map_err(|e| match e {
                StoreError::Conflict { .. } => StoreError::Corrupt(format!(
                    "{}: events of a tournament just created",
                    record.key
                )),
                e => e,
            })
        }
        Op::CreateGame(game) => {
            insert_game(conn, game)?;
            staged.last.insert(&game.game_id, Some(0));
            Ok(0)
        }
        Op::CreateGameWithEvents { record, payloads } => {
            // GameExists is refused before anything is written; a failure after the row
            // went in is an engine error, and the batch is replayed without this request.
            insert_game(conn, record)?;
            // The row went in: no refusal may pass for "nothing written" now.
            let seq = insert_events(
                conn,
                Stream::Game(&record.game_id),
                0,
                payloads,
                written_at_ms,
            )
            .map_err(|e| match e {
                StoreError::Conflict { .. } => StoreError::Corrupt(format!(
                    "{}: events of a game just created",
                    record.game_id
                )),
                e => e,
            })?;
            staged.last.insert(&record.game_id, Some(seq));
            Ok(seq)
        }
        Op::UpdateGame {
            game_id,
            finished,
            metadata_json,
        } => {
            let changed = conn
                .prepare_cached(
                    "UPDATE games SET finished = ?2, metadata_json = COALESCE(?3, metadata_json)
                     WHERE game_id = ?1",
                )?
                .execute(params![game_id, finished, metadata_json])?;
            if changed == 0 {
                return Err(StoreError::GameNotFound(game_id.clone()));
            }
            Ok(0)
        }
        Op::MarkAlive(mark) => {
            let at = i64::try_from(mark.at_ms).map_err(|_| {
                StoreError::Corrupt(format!("alive mark {} out of range", mark.at_ms))
            })?;
            let boot_id = mark.boot.as_ref().map(|b| b.id.as_str());
            let boot_ms = mark.boot.as_ref().and_then(|b| i64::try_from(b.ms).ok());
            conn.prepare_cached(schema::MARK_ALIVE)?
                .execute(params![at, boot_id, boot_ms])?;
            Ok(0)
        }
        // Handled by `run` before a batch is written.
        Op::Close => Ok(0),
    }
}

/// Replaces a stream's row's finished flag and summary.
fn set_summary(
    conn: &Connection,
    stream: Stream<'_>,
    summary: &SummaryUpdate,
) -> Result<(), StoreError> {
    conn.prepare_cached(sql(stream).set_summary)?
        .execute(params![stream.id(), summary.finished, summary.summary_json])?;
    Ok(())
}

/// The statements of a stream's kind.
pub fn sql(stream: Stream<'_>) -> &'static StreamSql {
    match stream.kind() {
        StreamKind::Game => &schema::GAME_SQL,
        StreamKind::Tournament => &schema::TOURNAMENT_SQL,
    }
}

/// Inserts a game row, refusing a taken id before writing.
fn insert_game(conn: &Connection, game: &GameRecord) -> Result<(), StoreError> {
    if game_exists(conn, &game.game_id)? {
        return Err(StoreError::GameExists(game.game_id.clone()));
    }
    conn.prepare_cached(
        "INSERT INTO games (game_id, created_at_ms, event, round, board, finished, metadata_json,
                            summary_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        game.game_id,
        game.created_at_ms,
        game.event,
        game.round,
        game.board,
        game.finished,
        game.metadata_json,
        game.summary_json
    ])?;
    Ok(())
}

/// The refusal of an append whose `next` is not the seq its stream's log takes next.
fn conflict(conn: &Connection, stream: Stream<'_>, next: u64) -> Result<StoreError, StoreError> {
    Ok(StoreError::Conflict {
        expected: next,
        actual: last_seq(conn, stream)? + 1,
    })
}

/// Inserts events after seq `last`; returns the last seq written.
///
/// # Errors
/// [`StoreError::Conflict`] if seq `last + 1` is already in the log: the unique index
/// refused it and SQLite backed out that statement alone, so nothing was written.
fn insert_events(
    conn: &Connection,
    stream: Stream<'_>,
    last: u64,
    payloads: &[Vec<u8>],
    written_at_ms: i64,
) -> Result<u64, StoreError> {
    let mut insert = conn.prepare_cached(sql(stream).insert_event)?;
    let mut seq = last;
    for payload in payloads {
        seq += 1;
        match insert.execute(params![
            stream.id(),
            to_sql_seq(seq)?,
            written_at_ms,
            payload
        ]) {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(e, _))
                if seq == last + 1
                    && e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
            {
                return Err(conflict(conn, stream, seq)?);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(seq)
}

/// Whether `next` is the seq a stream's log takes next: seq `next - 1` is there (or the
/// stream exists and `next` is 1) and `next` is not. Seqs are dense, so this is
/// `last_seq + 1 == next`, asked with two lookups of the whole `(game_id, seq)` key.
///
/// Why not `MAX(seq)`: a lookup on a prefix of the key is planned with the bundled
/// SQLite's STAT4 (`SQLITE_ENABLE_STAT4`), which marks the statement to be compiled again
/// whenever its parameter changes, i.e. at every append: it cost about a sixth of the
/// writer thread's time under `bench`. A lookup of the whole key is planned once.
/// [`last_seq`] is only asked when this says no, to name the seq expected.
///
/// # Errors
/// [`StoreError::GameNotFound`] (or `TournamentNotFound`) if `next` is 1 and the stream
/// does not exist.
fn continues_log(conn: &Connection, stream: Stream<'_>, next: u64) -> Result<bool, StoreError> {
    let Some(previous) = next.checked_sub(1) else {
        return Ok(false);
    };
    let mut has = conn.prepare_cached(sql(stream).seq_present)?;
    let mut has_event = |seq: u64| -> Result<bool, StoreError> {
        Ok(has
            .query_row(params![stream.id(), to_sql_seq(seq)?], |_| Ok(()))
            .optional()?
            .is_some())
    };
    if has_event(next)? {
        return Ok(false);
    }
    if previous == 0 {
        if row_exists(conn, stream)? {
            return Ok(true);
        }
        return Err(stream.not_found());
    }
    has_event(previous)
}

/// The last seq of a stream's log (0 if empty).
///
/// # Errors
/// [`StoreError::GameNotFound`] (or `TournamentNotFound`) if the stream does not exist.
pub fn last_seq(conn: &Connection, stream: Stream<'_>) -> Result<u64, StoreError> {
    let last: Option<i64> = conn
        .prepare_cached(sql(stream).max_seq)?
        .query_row([stream.id()], |r| r.get(0))?;
    match last {
        Some(seq) => from_sql_seq(seq),
        // An empty log: the stream may still exist (created, no event yet).
        None if row_exists(conn, stream)? => Ok(0),
        None => Err(stream.not_found()),
    }
}

/// Whether a game row exists.
pub fn game_exists(conn: &Connection, game_id: &str) -> Result<bool, StoreError> {
    row_exists(conn, Stream::Game(game_id))
}

/// Whether a stream's row exists.
pub fn row_exists(conn: &Connection, stream: Stream<'_>) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached(sql(stream).row_exists)?
        .query_row([stream.id()], |_| Ok(()))
        .optional()?
        .is_some())
}

/// A seq as SQLite stores it (INTEGER is i64).
pub fn to_sql_seq(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("seq {seq} out of range")))
}

/// A seq read back from SQLite.
pub fn from_sql_seq(seq: i64) -> Result<u64, StoreError> {
    u64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("negative seq {seq}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request(op: Op) -> (Request, oneshot::Receiver<Result<u64, StoreError>>) {
        let (tx, rx) = oneshot::channel();
        (
            Request {
                op,
                reply: Reply::Seq(tx),
            },
            rx,
        )
    }

    fn append(game: &str, next: u64, n: usize) -> Op {
        Op::Append {
            kind: StreamKind::Game,
            game_id: game.into(),
            expected_next_seq: next,
            payloads: (0..n).map(|i| format!("{game}-{i}").into_bytes()).collect(),
            summary: None,
        }
    }

    fn create(game: &str) -> Op {
        Op::CreateGame(GameRecord {
            game_id: game.into(),
            created_at_ms: 0,
            event: "Open".into(),
            round: "1".into(),
            board: 1,
            finished: false,
            metadata_json: "{}".into(),
            summary_json: String::new(),
        })
    }

    fn answer(mut rx: oneshot::Receiver<Result<u64, StoreError>>) -> Result<u64, StoreError> {
        rx.try_recv().expect("answered once the batch is committed")
    }

    /// A fresh log's writer connection (keep the directory alive) and a writer's memory
    /// of seqs, as `run` starts with.
    fn writer() -> (tempfile::TempDir, Connection, KnownSeqs) {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = Connection::open(dir.path().join("w.db")).expect("open");
        schema::prepare_writer(&mut conn).expect("schema");
        (dir, conn, KnownSeqs::default())
    }

    /// [`writer`], with the engine refusing any event whose payload is `bad`.
    fn writer_refusing_bad() -> (tempfile::TempDir, Connection, KnownSeqs) {
        let (dir, conn, known) = writer();
        conn.execute_batch(
            "CREATE TRIGGER refuse_bad BEFORE INSERT ON events WHEN NEW.payload = X'626164'
             BEGIN SELECT RAISE(ABORT, 'bad payload'); END;",
        )
        .expect("trigger");
        (dir, conn, known)
    }

    /// The seqs a refusal as a conflict names (expected, actual), if it is one.
    fn conflict_seqs(answer: Result<u64, StoreError>) -> Option<(u64, u64)> {
        match answer {
            Err(StoreError::Conflict { expected, actual }) => Some((expected, actual)),
            _ => None,
        }
    }

    #[derive(Debug, Default)]
    struct Commits(std::sync::Mutex<Vec<Duration>>);

    impl CommitObserver for Commits {
        fn committed(&self, took: Duration) {
            self.0.lock().expect("lock").push(took);
        }
    }

    /// The observer (the metrics' fsync histogram) hears of every commit once: a batch of
    /// three is one commit, a refused request inside it does not add one.
    #[test]
    fn every_commit_is_timed_once() {
        let (_dir, mut conn, mut known) = writer();
        let commits = Commits::default();
        let (r1, a1) = request(create("a"));
        let (r2, _) = request(create("a"));
        let (r3, a3) = request(append("a", 1, 2));
        write_batch(
            &mut conn,
            vec![r1, r2, r3].into_iter(),
            Some(&commits),
            &mut known,
        );
        answer(a1).expect("created");
        assert_eq!(answer(a3).expect("appended"), 2);
        assert_eq!(commits.0.lock().expect("lock").len(), 1);
        let (r, a) = request(append("a", 3, 1));
        write_batch(&mut conn, std::iter::once(r), Some(&commits), &mut known);
        answer(a).expect("appended");
        let times = commits.0.lock().expect("lock");
        assert_eq!(times.len(), 2);
        assert!(times.iter().all(|t| *t > Duration::ZERO), "{times:?}");
    }

    /// One batch mixing good and bad requests: the bad ones fail alone, the good ones
    /// (including one that builds on an earlier request of the same batch) commit.
    #[test]
    fn a_failed_request_does_not_poison_its_batch() {
        let (_dir, mut conn, mut known) = writer();

        let (r1, a1) = request(create("a"));
        let (r2, a2) = request(create("b"));
        let (r3, a3) = request(create("a"));
        write_batch(&mut conn, vec![r1, r2, r3].into_iter(), None, &mut known);
        assert_eq!(answer(a1).expect("a created"), 0);
        assert_eq!(answer(a2).expect("b created"), 0);
        assert!(matches!(answer(a3), Err(StoreError::GameExists(id)) if id == "a"));

        let (r1, a1) = request(append("a", 1, 2));
        let (r2, a2) = request(append("b", 5, 1));
        let (r3, a3) = request(append("a", 3, 1));
        let (r4, a4) = request(append("nobody", 1, 1));
        let (r5, a5) = request(append("b", 1, 3));
        write_batch(
            &mut conn,
            vec![r1, r2, r3, r4, r5].into_iter(),
            None,
            &mut known,
        );
        assert_eq!(answer(a1).expect("a 1..=2"), 2);
        assert_eq!(conflict_seqs(answer(a2)), Some((5, 1)));
        assert_eq!(answer(a3).expect("a 3 after a 1..=2 in the same batch"), 3);
        assert!(matches!(answer(a4), Err(StoreError::GameNotFound(_))));
        assert_eq!(answer(a5).expect("b 1..=3"), 3);

        assert_eq!(last_seq(&conn, Stream::Game("a")).expect("a"), 3);
        assert_eq!(last_seq(&conn, Stream::Game("b")).expect("b"), 3);
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
            .expect("count");
        assert_eq!(rows, 6, "the conflicting request wrote nothing");
    }

    /// An engine failure halfway through one request's rows: that request fails alone,
    /// its partial rows are gone, and the rest of the batch commits.
    #[test]
    fn an_engine_failure_mid_request_is_replayed_without_it() {
        let (_dir, mut conn, mut known) = writer_refusing_bad();
        let (r1, a1) = request(create("a"));
        let (r2, a2) = request(create("b"));
        write_batch(&mut conn, vec![r1, r2].into_iter(), None, &mut known);
        answer(a1).expect("a");
        answer(a2).expect("b");

        let (r1, a1) = request(append("a", 1, 1));
        let (r2, a2) = request(Op::Append {
            kind: StreamKind::Game,
            game_id: "b".into(),
            expected_next_seq: 1,
            payloads: vec![b"good".to_vec(), b"good".to_vec(), b"bad".to_vec()],
            summary: None,
        });
        let (r3, a3) = request(append("a", 2, 1));
        write_batch(&mut conn, vec![r1, r2, r3].into_iter(), None, &mut known);
        assert_eq!(answer(a1).expect("a 1"), 1);
        assert!(matches!(answer(a2), Err(StoreError::Database(_))));
        assert_eq!(answer(a3).expect("a 2"), 2);
        assert_eq!(
            last_seq(&conn, Stream::Game("b")).expect("b"),
            0,
            "b's partial rows rolled back"
        );
        assert_eq!(last_seq(&conn, Stream::Game("a")).expect("a"), 2);
    }

    /// The durability promise rests on these two settings of the writer's connection.
    #[test]
    fn the_writer_connection_is_wal_with_full_fsync() {
        let (_dir, conn, _) = writer();
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .expect("journal_mode");
        assert_eq!(mode, "wal");
        let synchronous: i64 = conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .expect("synchronous");
        assert_eq!(
            synchronous, 2,
            "2 = FULL: the WAL is fsynced at every commit"
        );
        // Checkpoints are the checkpointer thread's job; the writer's own is a far valve.
        let autocheckpoint: i64 = conn
            .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
            .expect("wal_autocheckpoint");
        assert_eq!(autocheckpoint, schema::WRITER_AUTOCHECKPOINT_PAGES);
        let limit: i64 = conn
            .pragma_query_value(None, "journal_size_limit", |r| r.get(0))
            .expect("journal_size_limit");
        assert_eq!(limit, schema::WAL_SIZE_LIMIT_BYTES);
    }

    /// A game and its first events are created together: when an event cannot be
    /// written, the game row goes too, and a taken id writes nothing.
    #[test]
    fn a_game_is_created_with_its_first_events_or_not_at_all() {
        let (_dir, mut conn, mut known) = writer_refusing_bad();
        let with_events = |game: &str, payloads: Vec<Vec<u8>>| {
            let Op::CreateGame(record) = create(game) else {
                unreachable!("create builds a CreateGame")
            };
            Op::CreateGameWithEvents { record, payloads }
        };
        let (r1, a1) = request(with_events("a", vec![b"one".to_vec(), b"two".to_vec()]));
        let (r2, a2) = request(with_events("b", vec![b"good".to_vec(), b"bad".to_vec()]));
        let (r3, a3) = request(with_events("a", vec![b"again".to_vec()]));
        write_batch(&mut conn, vec![r1, r2, r3].into_iter(), None, &mut known);
        assert_eq!(answer(a1).expect("a with 2 events"), 2);
        assert!(matches!(answer(a2), Err(StoreError::Database(_))));
        assert!(matches!(answer(a3), Err(StoreError::GameExists(id)) if id == "a"));
        assert_eq!(last_seq(&conn, Stream::Game("a")).expect("a"), 2);
        assert!(
            !game_exists(&conn, "b").expect("query"),
            "b's row rolled back with its events"
        );
    }

    #[test]
    fn update_of_a_missing_game_is_not_found() {
        let (_dir, mut conn, mut known) = writer();
        let (r, a) = request(Op::UpdateGame {
            game_id: "x".into(),
            finished: true,
            metadata_json: None,
        });
        write_batch(&mut conn, std::iter::once(r), None, &mut known);
        assert!(matches!(answer(a), Err(StoreError::GameNotFound(id)) if id == "x"));
    }

    /// The seq check of an append is planned once, not at every append (see
    /// `continues_log`): `MAX(seq)` over a key prefix was compiled again each time. Each
    /// batch here comes to a writer that knows no seq (as after a start), so every
    /// append is checked against the log.
    #[test]
    fn the_seq_check_of_an_append_is_compiled_once() {
        let (_dir, mut conn, mut known) = writer();
        let games = ["a", "b", "c"];
        let creates = games.iter().map(|g| request(create(g)).0);
        write_batch(
            &mut conn,
            creates.collect::<Vec<_>>().into_iter(),
            None,
            &mut known,
        );
        for next in 1..=20 {
            let batch: Vec<_> = games.iter().map(|g| request(append(g, next, 1))).collect();
            let (requests, answers): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
            let mut known = KnownSeqs::default();
            write_batch(&mut conn, requests.into_iter(), None, &mut known);
            for a in answers {
                assert_eq!(answer(a).expect("appended"), next);
            }
        }
        let sql = schema::SELECT_SEQ_PRESENT;
        let statement = conn.prepare_cached(sql).expect("cached");
        let runs = statement.get_status(rusqlite::StatementStatus::Run);
        let recompiled = statement.get_status(rusqlite::StatementStatus::RePrepare);
        assert!(runs >= 60, "{sql}: run {runs} times");
        assert_eq!(recompiled, 0, "{sql}: compiled again in {runs} runs");
        drop(statement);
        // A wrong seq is still refused naming the one expected.
        let (r, a) = request(append("a", 7, 1));
        write_batch(&mut conn, std::iter::once(r), None, &mut known);
        assert_eq!(conflict_seqs(answer(a)), Some((7, 21)));
    }

    /// How many times the seq check's statement has run on this connection.
    fn seq_checks(conn: &Connection) -> i32 {
        conn.prepare_cached(schema::SELECT_SEQ_PRESENT)
            .expect("cached")
            .get_status(rusqlite::StatementStatus::Run)
    }

    /// Appends that continue what this writer committed are not looked up in the log
    /// first, including one that builds on an earlier append of the same batch; a
    /// writer that knows nothing of a game checks it as before.
    #[test]
    fn appends_continuing_what_the_writer_wrote_skip_the_seq_check() {
        let (_dir, mut conn, mut known) = writer();
        let (r1, a1) = request(create("a"));
        let (r2, a2) = request(append("a", 1, 2));
        let (r3, a3) = request(append("a", 3, 1));
        write_batch(&mut conn, vec![r1, r2, r3].into_iter(), None, &mut known);
        answer(a1).expect("created");
        assert_eq!(answer(a2).expect("a 1..=2"), 2);
        assert_eq!(answer(a3).expect("a 3"), 3);
        for next in 4..=20 {
            let (r, a) = request(append("a", next, 1));
            write_batch(&mut conn, std::iter::once(r), None, &mut known);
            assert_eq!(answer(a).expect("appended"), next);
        }
        assert_eq!(seq_checks(&conn), 0, "every append continued a known seq");
        // A wrong seq is still refused, and nothing is written.
        let (r, a) = request(append("a", 7, 1));
        write_batch(&mut conn, std::iter::once(r), None, &mut known);
        assert_eq!(conflict_seqs(answer(a)), Some((7, 21)));
        assert_eq!(last_seq(&conn, Stream::Game("a")).expect("a"), 20);
        // A writer that starts over (a restart) checks against the log.
        let mut fresh = KnownSeqs::default();
        let (r, a) = request(append("a", 21, 1));
        write_batch(&mut conn, std::iter::once(r), None, &mut fresh);
        assert_eq!(answer(a).expect("a 21"), 21);
        assert!(seq_checks(&conn) > 0, "checked against the log");
    }

    /// A seq written behind the writer's back (another process on the same file): the
    /// unique index refuses the append that thought it continued the log, it is refused
    /// as a conflict naming the seq the log takes next, nothing of it is written, and its
    /// batch commits the rest. The next append is checked against the log again.
    #[test]
    fn a_seq_written_behind_the_writers_back_is_a_conflict_that_writes_nothing() {
        let (_dir, mut conn, mut known) = writer();
        let (r1, a1) = request(create("a"));
        let (r2, a2) = request(create("b"));
        let (r3, a3) = request(append("a", 1, 2));
        write_batch(&mut conn, vec![r1, r2, r3].into_iter(), None, &mut known);
        answer(a1).expect("a");
        answer(a2).expect("b");
        assert_eq!(answer(a3).expect("a 1..=2"), 2);
        conn.execute(
            "INSERT INTO events (game_id, seq, written_at_ms, payload) VALUES ('a', 3, 0, X'00')",
            [],
        )
        .expect("another writer's row");

        let (r1, a1) = request(append("a", 3, 2));
        let (r2, a2) = request(append("b", 1, 1));
        write_batch(&mut conn, vec![r1, r2].into_iter(), None, &mut known);
        assert_eq!(conflict_seqs(answer(a1)), Some((3, 4)));
        assert_eq!(answer(a2).expect("b 1 commits beside it"), 1);
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM events WHERE game_id = 'a'", [], |r| {
                r.get(0)
            })
            .expect("count");
        assert_eq!(rows, 3, "the refused append wrote nothing");

        let before = seq_checks(&conn);
        let (r, a) = request(append("a", 4, 1));
        write_batch(&mut conn, std::iter::once(r), None, &mut known);
        assert_eq!(answer(a).expect("a 4"), 4);
        assert!(seq_checks(&conn) > before, "the forgotten game was checked");
    }

    /// What a batch staged is remembered only if it commits: here the commit fails
    /// (a foreign key checked at commit: the game's row was deleted behind the writer's
    /// back), and the seq the failed append staged is not kept.
    #[test]
    fn what_a_batch_that_did_not_commit_staged_is_not_remembered() {
        let (_dir, mut conn, mut known) = writer();
        let (r, a) = request(create("a"));
        write_batch(&mut conn, std::iter::once(r), None, &mut known);
        answer(a).expect("a");
        assert_eq!(known.get("a"), Some(0));
        conn.execute_batch(
            "DELETE FROM games WHERE game_id = 'a'; PRAGMA defer_foreign_keys = ON;",
        )
        .expect("behind the writer's back");
        let (r, a) = request(append("a", 1, 2));
        write_batch(&mut conn, std::iter::once(r), None, &mut known);
        assert!(matches!(answer(a), Err(StoreError::Database(_))));
        assert_eq!(
            known.get("a"),
            Some(0),
            "the failed commit's seq is not kept"
        );
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
            .expect("count");
        assert_eq!(rows, 0);
    }
}
