//! Group appends: the appends of many games in one statement (one implicit transaction,
//! one WAL flush).
//!
//! Each append used to be a transaction of its own on a pool connection: at 256 games
//! moving at once the pool's 16 connections queued them and every commit waited for its
//! own flush (0.24× the SQLite store's moves/s, which groups its appends the same way).
//! Now a game's append joins a queue; a writer takes everything queued (up to
//! [`MAX_BATCH`] appends of different games) and sends it as one statement, while up to
//! [`WRITERS`] such statements run at once so the next batch forms while one commits.
//!
//! The fencing is unchanged, per game: the statement moves a game's `last_seq` and
//! inserts its events only where the row's owner, epoch, lease and `last_seq` are what
//! that append holds; the games it did not write are each asked why (a seq conflict, a
//! lost lease, no such game), as before. One append's refusal does not touch the others.
//! A statement that fails as a whole (the database unreachable) fails every append in it.
//!
//! A batch locks its rows in the order of their ids before it writes, as the lease
//! renewal and the release at close do: statements that lock several rows in different
//! orders deadlock (PostgreSQL then aborts one after a second), and a renewal aborted
//! again and again lets every lease run out. The lock is part of the statement (one round
//! trip and one implicit transaction, not begin, lock, write and commit): see [`APPEND`].

use std::sync::{Arc, Weak};
use std::time::Instant;

use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_postgres::types::ToSql;

use super::{Inner, StoreError, now_ms};

/// Appends in one statement at most.
const MAX_BATCH: usize = 256;
/// Statements in flight at once. Fewer make larger batches (one flush for more games),
/// more make shorter waits: with the bench's closed loop, 2 gave 16 games 15-20% more
/// moves/s than 4 and 256 games 5% more; 1 gained a little more at 16 but lost at 256
/// and would leave every game waiting behind one slow statement.
const WRITERS: usize = 2;
/// Appends waiting for a writer at most (then an append waits to join the queue).
const QUEUE: usize = 4096;

/// Locks the rows of the games `$1` in the order of their ids (the lease renewal and the
/// release at close, in their transactions; [`APPEND`] does the same inside itself).
pub(super) const LOCK_IN_ORDER: &str =
    "SELECT 1 FROM games WHERE game_id = ANY($1::text[]) ORDER BY game_id FOR UPDATE";

/// One game's append, as queued.
pub(super) struct Append {
    pub game_id: String,
    pub epoch: i64,
    /// The game's last seq before the append.
    pub last: i64,
    pub payloads: Vec<Vec<u8>>,
    pub finished: Option<bool>,
    pub summary_json: Option<String>,
    /// Whether the statement wrote it (`false`: the row did not match; ask why).
    pub reply: oneshot::Sender<Result<bool, StoreError>>,
}

/// The queue's sending side and its writer task.
pub(super) fn start(inner: Weak<Inner>) -> mpsc::Sender<Append> {
    let (tx, rx) = mpsc::channel(QUEUE);
    tokio::spawn(write_forever(inner, rx));
    tx
}

/// Takes what is queued, at most [`MAX_BATCH`] appends and each game once (a second
/// append of a game waits for the next statement: it must see the first's `last_seq`).
fn fill(batch: &mut Vec<Append>, rx: &mut mpsc::Receiver<Append>, carry: &mut Vec<Append>) {
    while batch.len() < MAX_BATCH {
        let Ok(a) = rx.try_recv() else {
            break;
        };
        if batch.iter().any(|b| b.game_id == a.game_id) {
            carry.push(a);
        } else {
            batch.push(a);
        }
    }
}

async fn write_forever(inner: Weak<Inner>, mut rx: mpsc::Receiver<Append>) {
    let writers = Arc::new(Semaphore::new(WRITERS));
    let mut carry: Vec<Append> = Vec::new();
    loop {
        let mut batch = Vec::new();
        // What waited for a statement of its own goes first, one per game.
        for a in std::mem::take(&mut carry) {
            if batch.iter().any(|b: &Append| b.game_id == a.game_id) {
                carry.push(a);
            } else {
                batch.push(a);
            }
        }
        if batch.is_empty() {
            match rx.recv().await {
                Some(a) => batch.push(a),
                // The store is gone.
                None => return,
            }
        }
        let Ok(permit) = writers.clone().acquire_owned().await else {
            return;
        };
        // More may have come while every writer was busy: they share this statement.
        fill(&mut batch, &mut rx, &mut carry);
        let Some(inner) = inner.upgrade() else {
            for a in batch {
                let _ = a.reply.send(Err(StoreError::Closed));
            }
            return;
        };
        tokio::spawn(async move {
            let _permit = permit;
            write(&inner, batch).await;
        });
    }
}

/// One statement for `batch` (distinct games); each append is told whether it was written.
async fn write(inner: &Inner, batch: Vec<Append>) {
    let started = Instant::now();
    let written = statement(inner, &batch).await;
    if let Some(observer) = &inner.options.commit_observer {
        observer.committed(started.elapsed());
    }
    match written {
        Ok(ids) => {
            for a in batch {
                let ok = ids.contains(&a.game_id);
                let _ = a.reply.send(Ok(ok));
            }
        }
        Err(e) => {
            for a in batch {
                let _ = a.reply.send(Err(e.clone()));
            }
        }
    }
}

/// The group append: per game, the row moved and the events inserted only where the
/// row's owner, epoch, lease and last seq are what the append holds.
///
/// `l` locks the batch's rows in id order before anything else touches them: the
/// update's uncorrelated condition on it is a one-time filter, evaluated (as an init
/// plan: sort, then lock) before the update scans a row, so the update only meets rows
/// this statement holds already. `EXPLAIN` (PostgreSQL 15) shows it: under `Update on
/// games`, an `InitPlan` counting `l` and a `One-Time Filter` on it above the scan of the
/// rows, and `l` as `LockRows` over `Sort Key: games.game_id`.
/// (A count is never negative: the condition only orders the work.)
pub const APPEND: &str = "WITH l AS (
                 SELECT game_id FROM games WHERE game_id = ANY($1::text[])
                 ORDER BY game_id FOR UPDATE
             ), a AS (
                 SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[],
                                      $5::boolean[], $6::text[])
                          AS a(game_id, epoch, last, n, finished, summary_json)
             ), g AS (
                 UPDATE games SET last_seq = games.last_seq + a.n,
                                  appended_at = now(), alive_at = now(),
                                  finished = COALESCE(a.finished, games.finished),
                                  summary_json = COALESCE(a.summary_json, games.summary_json)
                 FROM a
                 WHERE games.game_id = a.game_id AND games.owner_node = $7
                   AND games.epoch = a.epoch AND games.lease_until > now()
                   AND games.last_seq = a.last
                   AND (SELECT count(*) FROM l) >= 0
                 RETURNING games.game_id, games.last_seq
             ), e AS (
                 INSERT INTO events (game_id, seq, written_at_ms, payload)
                 SELECT v.game_id, v.seq, $8, v.p
                 FROM unnest($9::text[], $10::bigint[], $11::bytea[]) AS v(game_id, seq, p)
                 WHERE v.game_id IN (SELECT game_id FROM g)
             )
             SELECT g.game_id,
                    pg_notify('arbiter_events', 'appended ' || g.last_seq || ' ' || g.game_id)
             FROM g";

/// The games of `batch` the statement wrote.
async fn statement(inner: &Inner, batch: &[Append]) -> Result<Vec<String>, StoreError> {
    if inner.closed.load(std::sync::atomic::Ordering::Acquire) {
        return Err(StoreError::Closed);
    }
    let mut ids = Vec::with_capacity(batch.len());
    let mut epochs = Vec::with_capacity(batch.len());
    let mut lasts = Vec::with_capacity(batch.len());
    let mut counts = Vec::with_capacity(batch.len());
    let mut finished = Vec::with_capacity(batch.len());
    let mut summaries = Vec::with_capacity(batch.len());
    let (mut ev_ids, mut ev_seqs, mut ev_payloads) = (Vec::new(), Vec::new(), Vec::new());
    for a in batch {
        let n = i64::try_from(a.payloads.len())
            .map_err(|_| StoreError::Corrupt("too many events in one append".into()))?;
        ids.push(a.game_id.as_str());
        epochs.push(a.epoch);
        lasts.push(a.last);
        counts.push(n);
        finished.push(a.finished);
        summaries.push(a.summary_json.as_deref());
        for (i, p) in (1..).zip(&a.payloads) {
            ev_ids.push(a.game_id.as_str());
            ev_seqs.push(a.last + i);
            ev_payloads.push(p.as_slice());
        }
    }
    let written_at = now_ms();
    let params: [&(dyn ToSql + Sync); 11] = [
        &ids,
        &epochs,
        &lasts,
        &counts,
        &finished,
        &summaries,
        &inner.options.node_id,
        &written_at,
        &ev_ids,
        &ev_seqs,
        &ev_payloads,
    ];
    let client = inner.pool.get().await.map_err(super::pool_error)?;
    let statement = client
        .prepare_cached(APPEND)
        .await
        .map_err(StoreError::database)?;
    let rows = client
        .query(&statement, &params)
        .await
        .map_err(StoreError::database)?;
    Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
}
