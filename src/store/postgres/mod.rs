//! The PostgreSQL event store: several nodes on one database, one owner per game.
//!
//! The same log as the SQLite store (dense seqs per game, the game rows with their
//! summaries), plus a **lease** per game on its row: `owner_node`, `epoch`,
//! `lease_until` (the database's clock). The guarantees:
//!
//! - **Durable before acknowledged.** Every connection runs with
//!   `synchronous_commit = on`: an append's future resolves only after PostgreSQL has
//!   flushed its commit record. The appends of many games made at once go in one
//!   statement and one commit ([`append`]), and up to two such statements run at once.
//! - **Fenced by the database.** A node appends only under the epoch it acquired; the
//!   append is ONE statement that moves the row's `last_seq` and inserts the events only
//!   where `owner_node`, `epoch` and `last_seq` are still what this node holds and the
//!   lease has not run out. Every acquisition bumps the epoch, so once another node has
//!   taken a game, a node that was paused or cut off can never write to it again: its
//!   statement matches no row and it learns [`StoreError::Fenced`]. No advisory locks
//!   (lost silently with their connection, and no token to check).
//! - **Leases renew in the background**, every third of the lease, all of a node's games
//!   in one statement. A game whose renewal is refused (another node has it), or whose
//!   lease runs out on this node's clock without a successful renewal (the database is
//!   unreachable), is dropped at once and announced on [`EventStore::lease_losses`], so
//!   the hub stops serving it.
//!
//! - **Hints, not data.** Every append and creation also sends `NOTIFY arbiter_events`
//!   (`appended <seq> <id>`, `created 0 <id>`), delivered at commit; a connection of the
//!   store's own `LISTEN`s and passes them on as [`StoreHint`]s, so followers on other
//!   nodes read the new rows at once instead of at their next poll. Notifications are
//!   lost while the listener reconnects (it then says [`StoreHint::Missed`]); readers
//!   always take the rows themselves by seq.
//!
//! Connections come from a deadpool pool; statements are prepared once per connection.
//! TLS to the database is not supported: run it on a private network or a local socket.

mod append;
mod schema;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio::sync::broadcast;
use tokio_postgres::{NoTls, Row};

use super::record::now_ms;
use super::{
    Append, CommitObserver, EventStore, GameFilter, GameRecord, LeaseGap, Leases, Standing,
    StoreError, StoreHint, StoredEvent, Stream, SummaryUpdate, TournamentRecord, sort_games,
};

/// The statement of a group append (for `EXPLAIN`: the test that it locks its rows in id
/// order before it writes reads its plan).
pub use append::APPEND as POSTGRES_GROUP_APPEND;
pub use schema::CURRENT_VERSION as POSTGRES_SCHEMA_VERSION;

/// Who this node is and how it holds games, for [`PostgresStore::connect`].
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// This node's name, unique among the nodes on the database (written as the owner of
    /// the games it holds).
    pub node_id: String,
    /// Where other nodes and clients reach this node's gRPC port (`host:port`), written
    /// beside the owner so a non-owner can say where a game is served.
    pub advertise_addr: String,
    /// How long a lease lasts without renewal: the longest a game waits for a new owner
    /// after its owner died.
    pub lease: Duration,
    /// Connections in the pool at most.
    pub pool_size: usize,
    /// Told how long each append took (the commit histogram of the metrics).
    pub commit_observer: Option<Arc<dyn CommitObserver>>,
}

impl PostgresOptions {
    /// Options for a node with the default lease (5 s) and pool (16 connections).
    #[must_use]
    pub fn node(node_id: impl Into<String>, advertise_addr: impl Into<String>) -> Self {
        PostgresOptions {
            node_id: node_id.into(),
            advertise_addr: advertise_addr.into(),
            lease: Duration::from_secs(5),
            pool_size: 16,
            commit_observer: None,
        }
    }
}

/// A game this node holds: the epoch it acquired and when, on this node's clock, the
/// lease runs out unless renewed (measured from before the statement that set it, so
/// never later than the database's own `lease_until`).
#[derive(Debug, Clone, Copy)]
struct Held {
    epoch: i64,
    valid_until: Instant,
}

/// The event store on PostgreSQL; clones share the pool and the leases.
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    hints: broadcast::Sender<StoreHint>,
    options: PostgresOptions,
    held: Mutex<HashMap<String, Held>>,
    lost: broadcast::Sender<String>,
    closed: AtomicBool,
    /// The queue of the group appends' writer ([`append`]).
    appends: tokio::sync::mpsc::Sender<append::Append>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("PostgresStore")
            .field("node_id", &self.inner.options.node_id)
            .finish_non_exhaustive()
    }
}

/// The longest a new connection to the database may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a request waits for a free connection of the pool.
const POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many lease losses a listener may fall behind before it must ask
/// [`EventStore::holds`] about each of its games.
const LOSSES_QUEUE: usize = 1024;

impl PostgresStore {
    /// Connects to the database at `url` (a `postgres://` URL or a `key=value` string),
    /// brings its schema up to date and starts renewing this node's leases. Needs a
    /// tokio runtime.
    ///
    /// # Errors
    /// A bad URL or options, the database unreachable, a schema newer than this program.
    pub async fn connect(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        if options.node_id.is_empty() {
            return Err(StoreError::Config("node_id must not be empty".into()));
        }
        if options.lease < Duration::from_millis(30) {
            return Err(StoreError::Config(format!(
                "lease of {} ms is too short (at least 30 ms)",
                options.lease.as_millis()
            )));
        }
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Config(format!("database_url: {e}")))?;
        // Durable before acknowledged, whatever the server's or the role's default.
        let session = match config.get_options() {
            Some(given) => format!("{given} -c synchronous_commit=on"),
            None => "-c synchronous_commit=on".to_string(),
        };
        config.options(session);
        config.connect_timeout(CONNECT_TIMEOUT);
        if config.get_application_name().is_none() {
            config.application_name(format!("draughts-arbiter {}", options.node_id));
        }
        let listener_config = config.clone();
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(2))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(CONNECT_TIMEOUT))
            .wait_timeout(Some(POOL_WAIT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Config(format!("connection pool: {e}")))?;
        let mut client = pool.get().await.map_err(pool_error)?;
        schema::migrate(&mut client).await?;
        drop(client);

        let (lost, _) = broadcast::channel(LOSSES_QUEUE);
        let (hints, _) = broadcast::channel(HINTS_QUEUE);
        let inner = Arc::new_cyclic(|weak| Inner {
            pool,
            hints: hints.clone(),
            options,
            held: Mutex::new(HashMap::new()),
            lost,
            closed: AtomicBool::new(false),
            appends: append::start(weak.clone()),
        });
        tokio::spawn(renew_forever(Arc::downgrade(&inner)));
        tokio::spawn(listen_forever(
            listener_config,
            hints,
            Arc::downgrade(&inner),
        ));
        Ok(PostgresStore { inner })
    }

    /// This node's name.
    #[must_use]
    pub fn node_id(&self) -> &str {
        &self.inner.options.node_id
    }

    /// The epoch under which this node holds a game, if it does.
    #[must_use]
    pub fn epoch_of(&self, game_id: &str) -> Option<u64> {
        self.inner
            .held_now(game_id)
            .and_then(|h| u64::try_from(h.epoch).ok())
    }

    /// Renews every lease this node holds now, once (the background task does this
    /// every third of the lease); returns the games it lost.
    ///
    /// # Errors
    /// The database failing (the leases then run out on their own clock).
    pub async fn renew_now(&self) -> Result<Vec<String>, StoreError> {
        self.inner.renew().await
    }

    /// Forgets a game's lease on this node only, as a node that stopped without
    /// releasing would (for tests of takeover): the row still names this node until the
    /// lease runs out.
    pub fn forget(&self, game_id: &str) {
        self.inner.drop_lease(game_id, None);
    }

    async fn client(&self) -> Result<Object, StoreError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        self.inner.pool.get().await.map_err(pool_error)
    }

    /// Inserts a game row held by this node (epoch 1) with its first events (maybe
    /// none), in one statement.
    async fn create(&self, record: GameRecord, payloads: Vec<Vec<u8>>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let n = i64::try_from(payloads.len())
            .map_err(|_| StoreError::Corrupt("too many events in one append".into()))?;
        let started = Instant::now();
        // One statement: the row (with this node's lease, epoch 1) and its first events
        // commit together or not at all.
        let statement = client
            .prepare_cached(
                "WITH g AS (
                     INSERT INTO games (game_id, created_at_ms, event, round, board, finished,
                                        metadata_json, summary_json, last_seq, owner_node,
                                        owner_addr, epoch, lease_until, appended_at,
                                        alive_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1,
                             now() + $12::bigint * interval '1 millisecond', now(), now())
                     ON CONFLICT (game_id) DO NOTHING
                     RETURNING game_id
                 ), e AS (
                     INSERT INTO events (game_id, seq, written_at_ms, payload)
                     SELECT g.game_id, t.i, $13, t.p
                     FROM g, unnest($14::bytea[]) WITH ORDINALITY AS t(p, i)
                 )
                 SELECT pg_notify('arbiter_events', 'created 0 ' || g.game_id) FROM g",
            )
            .await
            .map_err(StoreError::database)?;
        // Held from before the statement: the creation's own NOTIFY may reach this node's
        // listener before the statement returns, and the hub must see the game as its own
        // then (not acquire it again, which would fence this very creation).
        let provisional = {
            let mut held = self.inner.held();
            match held.entry(record.game_id.clone()) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(Held {
                        epoch: 1,
                        valid_until: started + self.inner.options.lease,
                    });
                    true
                }
                std::collections::hash_map::Entry::Occupied(_) => false,
            }
        };
        let created = client
            .query(
                &statement,
                &[
                    &record.game_id,
                    &record.created_at_ms,
                    &record.event,
                    &record.round,
                    &i64::from(record.board),
                    &record.finished,
                    &record.metadata_json,
                    &record.summary_json,
                    &n,
                    &self.inner.options.node_id,
                    &self.inner.options.advertise_addr,
                    &self.inner.lease_ms(),
                    &now_ms(),
                    &payloads,
                ],
            )
            .await
            .map_err(StoreError::database);
        if let Some(observer) = &self.inner.options.commit_observer {
            observer.committed(started.elapsed());
        }
        let refused = match &created {
            Ok(rows) if rows.is_empty() => Some(StoreError::GameExists(record.game_id.clone())),
            Ok(_) => None,
            Err(e) => Some(e.clone()),
        };
        if let Some(e) = refused {
            if provisional {
                let mut held = self.inner.held();
                if held.get(&record.game_id).is_some_and(|h| h.epoch == 1) {
                    held.remove(&record.game_id);
                }
            }
            return Err(e);
        }
        Ok(payloads.len() as u64)
    }

    /// Appends to a tournament's log: one statement moves the row's `last_seq` from the
    /// seq the caller read (under the row's lock) and inserts the events, or does nothing.
    async fn append_tournament(
        &self,
        key: &str,
        expected_next_seq: u64,
        payloads: Vec<Vec<u8>>,
        summary: Option<SummaryUpdate>,
    ) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let last = seq_to_sql(expected_next_seq)? - 1;
        let n = i64::try_from(payloads.len())
            .map_err(|_| StoreError::Corrupt("too many events in one append".into()))?;
        let (finished, summary_json) = match summary {
            Some(s) => (Some(s.finished), Some(s.summary_json)),
            None => (None, None),
        };
        let statement = client
            .prepare_cached(
                "WITH t AS (
                     UPDATE tournaments
                     SET last_seq = last_seq + $3, finished = COALESCE($4, finished),
                         summary_json = COALESCE($5, summary_json)
                     WHERE key = $1 AND last_seq = $2
                     RETURNING key
                 ), e AS (
                     INSERT INTO tournament_events (key, seq, written_at_ms, payload)
                     SELECT t.key, $2 + t2.i, $6, t2.p
                     FROM t, unnest($7::bytea[]) WITH ORDINALITY AS t2(p, i)
                 )
                 SELECT key FROM t",
            )
            .await
            .map_err(StoreError::database)?;
        let written = client
            .query(
                &statement,
                &[
                    &key,
                    &last,
                    &n,
                    &finished,
                    &summary_json,
                    &now_ms(),
                    &payloads,
                ],
            )
            .await
            .map_err(StoreError::database)?;
        if !written.is_empty() {
            return Ok(expected_next_seq + payloads.len() as u64 - 1);
        }
        let row = client
            .query_opt("SELECT last_seq FROM tournaments WHERE key = $1", &[&key])
            .await
            .map_err(StoreError::database)?
            .ok_or_else(|| StoreError::TournamentNotFound(key.to_string()))?;
        Err(StoreError::Conflict {
            expected: expected_next_seq,
            actual: seq_from_sql(row.get(0))? + 1,
        })
    }

    async fn append_op(
        &self,
        game_id: &str,
        expected_next_seq: u64,
        payloads: Vec<Vec<u8>>,
        summary: Option<SummaryUpdate>,
    ) -> Result<u64, StoreError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let Some(held) = self.inner.held_now(game_id) else {
            let client = self.client().await?;
            return Err(self
                .refusal(&client, game_id, expected_next_seq, None)
                .await);
        };
        let last = seq_to_sql(expected_next_seq)? - 1;
        let (finished, summary_json) = match summary {
            Some(s) => (Some(s.finished), Some(s.summary_json)),
            None => (None, None),
        };
        let count = payloads.len() as u64;
        // One statement with whatever other games append meanwhile (see `append`).
        let (reply, written) = tokio::sync::oneshot::channel();
        self.inner
            .appends
            .send(append::Append {
                game_id: game_id.to_string(),
                epoch: held.epoch,
                last,
                payloads,
                finished,
                summary_json,
                reply,
            })
            .await
            .map_err(|_| StoreError::Closed)?;
        match written.await.map_err(|_| StoreError::Closed)?? {
            true => Ok(expected_next_seq + count - 1),
            false => {
                let client = self.client().await?;
                Err(self
                    .refusal(&client, game_id, expected_next_seq, Some(held.epoch))
                    .await)
            }
        }
    }

    /// Why an append wrote nothing: no game, another node's lease (this node's is then
    /// dropped and announced), or a seq conflict.
    async fn refusal(
        &self,
        client: &Object,
        game_id: &str,
        expected_next_seq: u64,
        epoch: Option<i64>,
    ) -> StoreError {
        let row = client
            .query_opt(
                "SELECT last_seq, owner_node, owner_addr, epoch, lease_until > now()
                 FROM games WHERE game_id = $1",
                &[&game_id],
            )
            .await;
        let row = match row {
            Ok(Some(row)) => row,
            Ok(None) => return StoreError::GameNotFound(game_id.to_string()),
            Err(e) => return StoreError::database(e),
        };
        let last: i64 = row.get(0);
        let owner: Option<String> = row.get(1);
        let live: Option<bool> = row.get(4);
        let mine = owner.as_deref() == Some(self.inner.options.node_id.as_str())
            && epoch == Some(row.get::<_, i64>(3))
            && live == Some(true);
        if !mine {
            if epoch.is_some() {
                self.inner.drop_lease(game_id, epoch);
            }
            return StoreError::Fenced {
                game_id: game_id.to_string(),
                owner: owner
                    .filter(|_| live == Some(true))
                    .map(|node| (node, row.get(2))),
            };
        }
        StoreError::Conflict {
            expected: expected_next_seq,
            actual: u64::try_from(last).unwrap_or(0) + 1,
        }
    }
}

impl Inner {
    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        // Every update is a single insert or remove: a poisoned lock guards sound data.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lease on a game if this node holds it and it has not run out on this clock.
    fn held_now(&self, game_id: &str) -> Option<Held> {
        let held = self.held().get(game_id).copied()?;
        if held.valid_until > Instant::now() {
            return Some(held);
        }
        self.drop_lease(game_id, Some(held.epoch));
        None
    }

    /// Forgets a lease (only the one of `epoch`, if given) and announces the loss.
    fn drop_lease(&self, game_id: &str, epoch: Option<i64>) {
        let removed = {
            let mut held = self.held();
            match held.get(game_id) {
                Some(h) if epoch.is_none_or(|e| e == h.epoch) => held.remove(game_id).is_some(),
                _ => false,
            }
        };
        if removed {
            tracing::warn!(game = game_id, node = %self.options.node_id, "lease lost: no longer serving the game");
            let _ = self.lost.send(game_id.to_string());
        }
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.options.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// One renewal of every held lease; returns the games lost.
    async fn renew(&self) -> Result<Vec<String>, StoreError> {
        let (ids, epochs): (Vec<String>, Vec<i64>) = self
            .held()
            .iter()
            .map(|(id, h)| (id.clone(), h.epoch))
            .unzip();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let started = Instant::now();
        let mut client = self.pool.get().await.map_err(pool_error)?;
        let tx = client.transaction().await.map_err(StoreError::database)?;
        // The rows in id order first, as every statement that locks several does.
        tx.execute(append::LOCK_IN_ORDER, &[&ids])
            .await
            .map_err(StoreError::database)?;
        let rows = tx
            .query(
                "UPDATE games AS g
                 SET lease_until = now() + $2::bigint * interval '1 millisecond',
                     alive_at = now()
                 FROM unnest($3::text[], $4::bigint[]) AS h(game_id, epoch)
                 WHERE g.game_id = h.game_id AND g.epoch = h.epoch AND g.owner_node = $1
                 RETURNING g.game_id, g.epoch",
                &[&self.options.node_id, &self.lease_ms(), &ids, &epochs],
            )
            .await
            .map_err(StoreError::database)?;
        tx.commit().await.map_err(StoreError::database)?;
        let renewed: HashMap<String, i64> = rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
            .collect();
        let valid_until = started + self.options.lease;
        let mut lost = Vec::new();
        {
            let mut held = self.held();
            for (id, epoch) in ids.into_iter().zip(epochs) {
                if renewed.get(&id) == Some(&epoch) {
                    if let Some(h) = held.get_mut(&id).filter(|h| h.epoch == epoch) {
                        h.valid_until = valid_until;
                    }
                } else {
                    lost.push((id, epoch));
                }
            }
        }
        for (id, epoch) in &lost {
            self.drop_lease(id, Some(*epoch));
        }
        let lost = lost.into_iter().map(|(id, _)| id).collect();
        Ok(lost)
    }

    /// Drops every lease that ran out on this node's clock.
    fn expire(&self) {
        let now = Instant::now();
        let expired: Vec<(String, i64)> = self
            .held()
            .iter()
            .filter(|(_, h)| h.valid_until <= now)
            .map(|(id, h)| (id.clone(), h.epoch))
            .collect();
        for (id, epoch) in expired {
            self.drop_lease(&id, Some(epoch));
        }
    }
}

/// How many hints a listener may fall behind before it is told [`StoreHint::Missed`]
/// (as a lagging receiver).
const HINTS_QUEUE: usize = 4096;

/// The channel every node's appends and creations are announced on.
const HINTS_CHANNEL: &str = "arbiter_events";

/// Listens for the hints of every node on a connection of its own (not the pool's),
/// reconnecting after a failure; after a reconnection says [`StoreHint::Missed`].
async fn listen_forever(
    config: tokio_postgres::Config,
    hints: broadcast::Sender<StoreHint>,
    alive: Weak<Inner>,
) {
    use futures_util::StreamExt;
    let mut connected_before = false;
    loop {
        if alive
            .upgrade()
            .is_none_or(|i| i.closed.load(Ordering::Acquire))
        {
            return;
        }
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let driver = tokio::spawn(async move {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(message) = messages.next().await {
                        match message {
                            Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                                if tx.send(n).is_err() {
                                    break;
                                }
                            }
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!(error = %e, "hint listener: connection lost");
                                break;
                            }
                        }
                    }
                });
                match client
                    .batch_execute(&format!("LISTEN {HINTS_CHANNEL}"))
                    .await
                {
                    Ok(()) => {
                        if connected_before {
                            let _ = hints.send(StoreHint::Missed);
                        }
                        connected_before = true;
                        loop {
                            match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
                                Ok(Some(n)) => {
                                    if let Some(hint) = parse_hint(n.payload()) {
                                        let _ = hints.send(hint);
                                    }
                                }
                                Ok(None) => break,
                                Err(_) => {
                                    if alive
                                        .upgrade()
                                        .is_none_or(|i| i.closed.load(Ordering::Acquire))
                                    {
                                        driver.abort();
                                        return;
                                    }
                                }
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "hint listener: LISTEN failed"),
                }
                drop(client);
                driver.abort();
            }
            Err(e) => tracing::warn!(error = %e, "hint listener: cannot connect"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `appended <seq> <game id>` or `created 0 <game id>` (the id last: it may hold spaces).
fn parse_hint(payload: &str) -> Option<StoreHint> {
    let mut parts = payload.splitn(3, ' ');
    let (kind, seq, game_id) = (parts.next()?, parts.next()?, parts.next()?.to_string());
    match kind {
        "appended" => Some(StoreHint::Appended {
            game_id,
            seq: seq.parse().ok()?,
        }),
        "created" => Some(StoreHint::Created { game_id }),
        _ => None,
    }
}

/// Renews the node's leases every third of the lease until the store is dropped or
/// closed.
async fn renew_forever(inner: Weak<Inner>) {
    let period = match inner.upgrade() {
        Some(inner) => inner.options.lease / 3,
        None => return,
    };
    loop {
        tokio::time::sleep(period).await;
        let Some(inner) = inner.upgrade() else { return };
        if inner.closed.load(Ordering::Acquire) {
            return;
        }
        if let Err(e) = inner.renew().await {
            tracing::warn!(error = %e, "lease renewal failed");
        }
        inner.expire();
    }
}

/// Releases the leases `ids` (at `epochs`) of `node`, the rows locked in id order first.
async fn release_all(
    client: &mut Object,
    node: &str,
    ids: &[String],
    epochs: &[i64],
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute(append::LOCK_IN_ORDER, &[&ids]).await?;
    tx.execute(
        "UPDATE games AS g SET owner_node = NULL, owner_addr = '', lease_until = NULL,
             alive_at = now()
         FROM unnest($2::text[], $3::bigint[]) AS h(game_id, epoch)
         WHERE g.game_id = h.game_id AND g.epoch = h.epoch AND g.owner_node = $1",
        &[&node, &ids, &epochs],
    )
    .await?;
    tx.commit().await
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::database(e)
}

fn seq_to_sql(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("seq {seq} out of range")))
}

fn seq_from_sql(seq: i64) -> Result<u64, StoreError> {
    u64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("negative seq {seq}")))
}

/// The condition that a game is one a node may take now: nobody's, or its lease ran out
/// (on the database's clock), or (given the parameter naming this node, `$n`) already
/// this node's.
fn free(node: Option<&str>) -> String {
    let own = node.map_or(String::new(), |n| format!("OR owner_node = {n} "));
    format!("(owner_node IS NULL {own}OR lease_until IS NULL OR lease_until <= now())")
}

const SELECT_GAMES: &str =
    "SELECT game_id, created_at_ms, event, round, board, finished, metadata_json, summary_json
     FROM games";

const SELECT_TOURNAMENTS: &str =
    "SELECT key, name, created_at_ms, finished, summary_json FROM tournaments";

/// Reads a `tournaments` row.
fn tournament_row(r: &Row) -> TournamentRecord {
    TournamentRecord {
        key: r.get(0),
        name: r.get(1),
        created_at_ms: r.get(2),
        finished: r.get(3),
        summary_json: r.get(4),
    }
}

fn game_row(r: &Row) -> Result<GameRecord, StoreError> {
    let game_id: String = r.get(0);
    let board: i64 = r.get(4);
    let Ok(board) = u32::try_from(board) else {
        return Err(StoreError::Corrupt(format!(
            "game '{game_id}' has board {board}"
        )));
    };
    Ok(GameRecord {
        game_id,
        created_at_ms: r.get(1),
        event: r.get(2),
        round: r.get(3),
        board,
        finished: r.get(5),
        metadata_json: r.get(6),
        summary_json: r.get(7),
    })
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn create_game(&self, record: GameRecord) -> Result<(), StoreError> {
        self.create(record, Vec::new()).await.map(|_| ())
    }

    async fn create_game_with_events(
        &self,
        record: GameRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        self.create(record, payloads).await
    }

    async fn update_game(
        &self,
        game_id: &str,
        finished: bool,
        metadata_json: Option<String>,
    ) -> Result<(), StoreError> {
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE games SET finished = $2, metadata_json = COALESCE($3, metadata_json)
                 WHERE game_id = $1",
                &[&game_id, &finished, &metadata_json],
            )
            .await
            .map_err(StoreError::database)?;
        if changed == 0 {
            return Err(StoreError::GameNotFound(game_id.to_string()));
        }
        Ok(())
    }

    async fn get_game(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!("{SELECT_GAMES} WHERE game_id = $1"))
            .await
            .map_err(StoreError::database)?;
        client
            .query_opt(&statement, &[&game_id])
            .await
            .map_err(StoreError::database)?
            .map(|r| game_row(&r))
            .transpose()
    }

    async fn write(&self, batch: Append<'_>) -> Result<u64, StoreError> {
        match batch.stream {
            Stream::Game(id) => {
                self.append_op(id, batch.expected_next_seq, batch.payloads, batch.summary)
                    .await
            }
            Stream::Tournament(key) => {
                self.append_tournament(key, batch.expected_next_seq, batch.payloads, batch.summary)
                    .await
            }
        }
    }

    async fn load(
        &self,
        stream: Stream<'_>,
        from_seq: u64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let client = self.client().await?;
        let from = seq_to_sql(from_seq).unwrap_or(i64::MAX);
        let (events, rows_of) = match stream {
            Stream::Game(_) => (
                "SELECT seq, written_at_ms, payload FROM events
                 WHERE game_id = $1 AND seq >= $2 ORDER BY seq",
                "SELECT 1 FROM games WHERE game_id = $1",
            ),
            Stream::Tournament(_) => (
                "SELECT seq, written_at_ms, payload FROM tournament_events
                 WHERE key = $1 AND seq >= $2 ORDER BY seq",
                "SELECT 1 FROM tournaments WHERE key = $1",
            ),
        };
        let id = stream.id();
        let statement = client
            .prepare_cached(events)
            .await
            .map_err(StoreError::database)?;
        let rows = client
            .query(&statement, &[&id, &from])
            .await
            .map_err(StoreError::database)?;
        if rows.is_empty() {
            let exists = client
                .query_opt(rows_of, &[&id])
                .await
                .map_err(StoreError::database)?;
            if exists.is_none() {
                return Err(stream.not_found());
            }
        }
        rows.iter()
            .map(|r| {
                Ok(StoredEvent {
                    game_id: id.to_string(),
                    seq: seq_from_sql(r.get(0))?,
                    written_at_ms: r.get(1),
                    payload: r.get(2),
                })
            })
            .collect()
    }

    async fn last_seq(&self, stream: Stream<'_>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let sql = match stream {
            Stream::Game(_) => "SELECT last_seq FROM games WHERE game_id = $1",
            Stream::Tournament(_) => "SELECT last_seq FROM tournaments WHERE key = $1",
        };
        let row = client
            .query_opt(sql, &[&stream.id()])
            .await
            .map_err(StoreError::database)?
            .ok_or_else(|| stream.not_found())?;
        seq_from_sql(row.get(0))
    }

    async fn create_tournament(
        &self,
        record: TournamentRecord,
        payloads: Vec<Vec<u8>>,
    ) -> Result<u64, StoreError> {
        if payloads.is_empty() {
            return Err(StoreError::EmptyAppend);
        }
        let client = self.client().await?;
        let n = i64::try_from(payloads.len())
            .map_err(|_| StoreError::Corrupt("too many events in one append".into()))?;
        let statement = client
            .prepare_cached(
                "WITH t AS (
                     INSERT INTO tournaments (key, name, created_at_ms, finished, summary_json,
                                              last_seq)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (key) DO NOTHING
                     RETURNING key
                 ), e AS (
                     INSERT INTO tournament_events (key, seq, written_at_ms, payload)
                     SELECT t.key, t2.i, $7, t2.p
                     FROM t, unnest($8::bytea[]) WITH ORDINALITY AS t2(p, i)
                 )
                 SELECT key FROM t",
            )
            .await
            .map_err(StoreError::database)?;
        let created = client
            .query(
                &statement,
                &[
                    &record.key,
                    &record.name,
                    &record.created_at_ms,
                    &record.finished,
                    &record.summary_json,
                    &n,
                    &now_ms(),
                    &payloads,
                ],
            )
            .await
            .map_err(StoreError::database)?;
        if created.is_empty() {
            return Err(StoreError::TournamentExists(record.key));
        }
        Ok(payloads.len() as u64)
    }

    async fn get_tournament(&self, key: &str) -> Result<Option<TournamentRecord>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(&format!("{SELECT_TOURNAMENTS} WHERE key = $1"), &[&key])
            .await
            .map_err(StoreError::database)?;
        Ok(row.map(|r| tournament_row(&r)))
    }

    async fn list_tournaments(&self) -> Result<Vec<TournamentRecord>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(&format!("{SELECT_TOURNAMENTS} ORDER BY key"), &[])
            .await
            .map_err(StoreError::database)?;
        Ok(rows.iter().map(tournament_row).collect())
    }

    async fn list_games(&self, filter: &GameFilter) -> Result<Vec<GameRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "{SELECT_GAMES}
                 WHERE ($1::text IS NULL OR event = $1) AND ($2::text IS NULL OR round = $2)
                   AND (NOT $3 OR NOT finished)"
            ))
            .await
            .map_err(StoreError::database)?;
        let rows = client
            .query(
                &statement,
                &[&filter.event, &filter.round, &filter.unfinished_only],
            )
            .await
            .map_err(StoreError::database)?;
        let mut games = rows.iter().map(game_row).collect::<Result<Vec<_>, _>>()?;
        // The same order as the other stores (SQL cannot order "3.10" after "3.2").
        sort_games(&mut games);
        Ok(games)
    }

    /// Releases every lease this node holds (so another node may take its games at once)
    /// and closes the pool; later calls fail with [`StoreError::Closed`].
    async fn close(&self) -> Result<(), StoreError> {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return Err(StoreError::Closed);
        }
        let (ids, epochs): (Vec<String>, Vec<i64>) = self
            .inner
            .held()
            .drain()
            .map(|(id, h)| (id, h.epoch))
            .unzip();
        let released = match self.inner.pool.get().await {
            Ok(mut client) if !ids.is_empty() => {
                release_all(&mut client, &self.inner.options.node_id, &ids, &epochs)
                    .await
                    .map_err(StoreError::database)
            }
            Ok(_) => Ok(()),
            Err(e) => Err(pool_error(e)),
        };
        self.inner.pool.close();
        released
    }

    fn leases(&self) -> Option<&dyn Leases> {
        Some(self)
    }
}

#[async_trait]
impl Leases for PostgresStore {
    async fn survey(&self, ids: &[String]) -> Result<Vec<Standing>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT game_id, last_seq, owner_node, owner_addr, {},
                        (EXTRACT(EPOCH FROM lease_until - now()) * 1000000)::bigint
                 FROM games WHERE game_id = ANY($1)",
                free(Some("$2"))
            ))
            .await
            .map_err(StoreError::database)?;
        let rows = client
            .query(&statement, &[&ids, &self.inner.options.node_id])
            .await
            .map_err(StoreError::database)?;
        rows.iter()
            .map(|r| {
                Ok(Standing {
                    game_id: r.get(0),
                    last_seq: seq_from_sql(r.get(1))?,
                    owner: r.get::<_, Option<String>>(2).map(|node| (node, r.get(3))),
                    free: r.get(4),
                    lease_left: r
                        .get::<_, Option<i64>>(5)
                        .and_then(|us| u64::try_from(us).ok())
                        .map(Duration::from_micros),
                })
            })
            .collect()
    }

    async fn unserved_games(&self) -> Result<Vec<GameRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "{SELECT_GAMES} WHERE NOT finished AND {}",
                free(None)
            ))
            .await
            .map_err(StoreError::database)?;
        let rows = client
            .query(&statement, &[])
            .await
            .map_err(StoreError::database)?;
        let mut games = rows.iter().map(game_row).collect::<Result<Vec<_>, _>>()?;
        sort_games(&mut games);
        Ok(games)
    }

    async fn acquire(&self, game_id: &str) -> Result<Option<LeaseGap>, StoreError> {
        if self.inner.held_now(game_id).is_some() {
            return Ok(None);
        }
        let client = self.client().await?;
        let started = Instant::now();
        // `old` is the row as the previous owner left it (the statement's snapshot): its
        // last append and last sign of life, on the database's clock, give the gap.
        let statement = client
            .prepare_cached(&format!(
                "WITH old AS (
                     SELECT appended_at, greatest(appended_at, alive_at) AS alive_at
                     FROM games WHERE game_id = $1
                 )
                 UPDATE games
                 SET owner_node = $2, owner_addr = $3, epoch = epoch + 1,
                     lease_until = now() + $4::bigint * interval '1 millisecond',
                     alive_at = now()
                 FROM old
                 WHERE game_id = $1 AND {}
                 RETURNING epoch,
                     floor(extract(epoch FROM old.alive_at - old.appended_at) * 1000)::bigint,
                     floor(extract(epoch FROM now() - old.alive_at) * 1000)::bigint",
                free(Some("$2"))
            ))
            .await
            .map_err(StoreError::database)?;
        let row = client
            .query_opt(
                &statement,
                &[
                    &game_id,
                    &self.inner.options.node_id,
                    &self.inner.options.advertise_addr,
                    &self.inner.lease_ms(),
                ],
            )
            .await
            .map_err(StoreError::database)?;
        if let Some(row) = row {
            self.inner.held().insert(
                game_id.to_string(),
                Held {
                    epoch: row.get(0),
                    valid_until: started + self.inner.options.lease,
                },
            );
            // Rows written before the columns existed have no gap to tell.
            let span = |i| {
                row.get::<_, Option<i64>>(i)
                    .map(|ms| u64::try_from(ms).unwrap_or(0))
            };
            return Ok(match (span(1), span(2)) {
                (Some(alive_after_last_event_ms), Some(unserved_ms)) => Some(LeaseGap {
                    alive_after_last_event_ms,
                    unserved_ms,
                }),
                _ => None,
            });
        }
        let owner = client
            .query_opt(
                "SELECT owner_node, owner_addr FROM games WHERE game_id = $1",
                &[&game_id],
            )
            .await
            .map_err(StoreError::database)?
            .ok_or_else(|| StoreError::GameNotFound(game_id.to_string()))?;
        Err(StoreError::Fenced {
            game_id: game_id.to_string(),
            owner: owner
                .get::<_, Option<String>>(0)
                .map(|node| (node, owner.get(1))),
        })
    }

    async fn release(&self, game_id: &str) -> Result<(), StoreError> {
        let Some(held) = self.inner.held().remove(game_id) else {
            return Ok(());
        };
        let client = self.client().await?;
        client
            .execute(
                "UPDATE games SET owner_node = NULL, owner_addr = '', lease_until = NULL,
                     alive_at = now()
                 WHERE game_id = $1 AND epoch = $2 AND owner_node = $3",
                &[&game_id, &held.epoch, &self.inner.options.node_id],
            )
            .await
            .map_err(StoreError::database)?;
        Ok(())
    }

    fn holds(&self, game_id: &str) -> bool {
        self.inner.held_now(game_id).is_some()
    }

    fn lease_losses(&self) -> broadcast::Receiver<String> {
        self.inner.lost.subscribe()
    }

    fn hints(&self) -> broadcast::Receiver<StoreHint> {
        self.inner.hints.subscribe()
    }
}
