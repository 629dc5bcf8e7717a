//! Event store: durable append throughput and ack latency through the group-commit writer,
//! with 1, 16 and 256 games appending concurrently, against a raw SQLite baseline.
//!
//! `cargo bench --bench store` prints, per concurrency level, a steady-state report
//! (appends/s, p50/p99 ack latency, the raw baseline and the ratio), then runs the
//! criterion benchmarks (bursts of one append per game; "elem/s" = appends/s).
//!
//! The raw baseline is what group commit can hope for at best: one transaction per batch
//! of N rows (N = the number of games), written directly with rusqlite on the same schema
//! with `synchronous=FULL`, no channel, no threads, no futures. The ratio is store ÷ raw.
//!
//! Under `cargo test` criterion runs each benchmark once and the report is skipped.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use draughts_arbiter::store::{
    EventStore, GameRecord, MemoryStore, SqliteStore, Stream, WAL_SIZE_LIMIT_BYTES,
    WRITER_AUTOCHECKPOINT_PAGES, WRITER_CACHE_KIB,
};
use rusqlite::{Connection, params};
use tokio::runtime::Runtime;
use tokio::task::JoinSet;

const LEVELS: [usize; 3] = [1, 16, 256];
/// The report alternates the store and the raw baseline in short slices, so that a burst
/// of disk activity from elsewhere on a shared machine hits both sides alike.
const REPORT_ROUNDS: u32 = 8;
const REPORT_SLICE: Duration = Duration::from_millis(500);

/// A realistic event: the JSON of a move with clocks, about 200 bytes.
fn payload(game: usize, seq: u64) -> Vec<u8> {
    format!(
        r#"{{"seq":{seq},"server_time_ms":1700000000000,"monotonic_ms":{seq}000,"actor":{{"kind":"player","side":"white","id":"player-{game}"}},"rule":"RU 1.4.6","kind":{{"move_played":{{"notation":"c3-d4","path":[22,18],"captured":[],"white_ms":5400000,"black_ms":5399000}}}}}}"#
    )
    .into_bytes()
}

fn record(game: usize) -> GameRecord {
    GameRecord {
        game_id: format!("g{game}"),
        created_at_ms: 1_700_000_000_000,
        event: "Bench".into(),
        round: "1".into(),
        board: u32::try_from(game + 1).unwrap_or(u32::MAX),
        finished: false,
        metadata_json: "{}".into(),
        summary_json: String::new(),
    }
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn temp_dir() -> tempfile::TempDir {
    // On the target disk, not a tmpfs: fsync must cost what it costs in production.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

async fn store_with_games(store: &dyn EventStore, games: usize) {
    for g in 0..games {
        store.create_game(record(g)).await.expect("create game");
    }
}

/// Acks (or rows) counted over slices of time, with their latencies.
#[derive(Default)]
struct Tally {
    count: usize,
    seconds: f64,
    latencies: Vec<Duration>,
}

impl Tally {
    fn add(&mut self, seconds: f64, latencies: Vec<Duration>, count: usize) {
        self.count += count;
        self.seconds += seconds;
        self.latencies.extend(latencies);
    }

    fn rate(&self) -> f64 {
        self.count as f64 / self.seconds
    }

    fn percentile_ms(&mut self, p: usize) -> f64 {
        self.latencies.sort_unstable();
        let sorted = &self.latencies;
        if sorted.is_empty() {
            return 0.0;
        }
        sorted[(sorted.len() * p / 100).min(sorted.len() - 1)].as_secs_f64() * 1000.0
    }
}

/// Steady state: `games` tasks each append one event, await the ack, repeat, for `run`.
/// Returns (seconds, ack latencies); one latency per append.
async fn steady_state(
    store: Arc<dyn EventStore>,
    games: usize,
    run: Duration,
) -> (f64, Vec<Duration>) {
    let start = Instant::now();
    let stop = start + run;
    let mut tasks = JoinSet::new();
    for g in 0..games {
        let store = Arc::clone(&store);
        tasks.spawn(async move {
            let id = format!("g{g}");
            let mut next = store.last_seq(Stream::Game(&id)).await.expect("last seq") + 1;
            let mut latencies = Vec::new();
            while Instant::now() < stop {
                let sent = Instant::now();
                next = store
                    .append(Stream::Game(&id), next, vec![payload(g, next)], None)
                    .await
                    .expect("append")
                    + 1;
                latencies.push(sent.elapsed());
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.expect("appender"));
    }
    (start.elapsed().as_secs_f64(), latencies)
}

/// The raw baseline: the store's schema and pragmas, one transaction of `batch` rows per
/// commit, for `run`. Returns (seconds, commit latencies, rows).
fn raw_baseline(
    conn: &mut Connection,
    batch: usize,
    seq: &mut u64,
    run: Duration,
) -> (f64, Vec<Duration>, usize) {
    let start = Instant::now();
    let mut latencies = Vec::new();
    let mut rows = 0;
    while start.elapsed() < run {
        *seq += 1;
        let sent = Instant::now();
        raw_batch(conn, batch, *seq);
        latencies.push(sent.elapsed());
        rows += batch;
    }
    (start.elapsed().as_secs_f64(), latencies, rows)
}

fn raw_connection(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("raw open");
    conn.pragma_update(None, "journal_mode", "WAL")
        .expect("wal");
    conn.pragma_update(None, "synchronous", "FULL")
        .expect("full");
    let synchronous: i64 = conn
        .pragma_query_value(None, "synchronous", |r| r.get(0))
        .expect("synchronous");
    assert_eq!(
        synchronous, 2,
        "the baseline fsyncs every commit, like the store"
    );
    // The store writer's checkpoint and cache settings; the baseline checkpoints on its
    // own thread when the WAL reaches that size, the store on its checkpointer thread.
    conn.pragma_update(None, "wal_autocheckpoint", WRITER_AUTOCHECKPOINT_PAGES)
        .expect("wal_autocheckpoint");
    conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
        .expect("cache_size");
    conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT_BYTES)
        .expect("journal_size_limit");
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY, game_id TEXT NOT NULL, seq INTEGER NOT NULL,
            written_at_ms INTEGER NOT NULL, payload BLOB NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX IF NOT EXISTS events_by_game ON events (game_id, seq);",
    )
    .expect("schema");
    conn
}

fn raw_batch(conn: &mut Connection, batch: usize, seq: u64) {
    let tx = conn.transaction().expect("begin");
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO events (game_id, seq, written_at_ms, payload) VALUES (?1, ?2, ?3, ?4)",
            )
            .expect("prepare");
        let seq_sql = i64::try_from(seq).expect("seq fits");
        for g in 0..batch {
            insert
                .execute(params![format!("g{g}"), seq_sql, 0i64, payload(g, seq)])
                .expect("insert");
        }
    }
    tx.commit().expect("commit");
}

/// The steady-state report, printed before criterion's output.
fn report() {
    let rt = runtime();
    let seconds = REPORT_SLICE.as_secs_f64() * f64::from(REPORT_ROUNDS);
    println!(
        "store report: steady state, 1 event per append, {seconds} s per side in \
         {REPORT_ROUNDS} alternating slices"
    );
    for games in LEVELS {
        let dir = temp_dir();
        let store = SqliteStore::open(dir.path().join("store.db")).expect("open");
        rt.block_on(store_with_games(&store, games));
        let mut conn = raw_connection(&dir.path().join("raw.db"));
        let mut raw_seq = 0;
        let mut sqlite = Tally::default();
        let mut raw = Tally::default();
        for _ in 0..REPORT_ROUNDS {
            let shared: Arc<dyn EventStore> = Arc::new(store.clone());
            let (secs, lat) = rt.block_on(steady_state(shared, games, REPORT_SLICE));
            let acks = lat.len();
            sqlite.add(secs, lat, acks);
            let (secs, lat, rows) = raw_baseline(&mut conn, games, &mut raw_seq, REPORT_SLICE);
            raw.add(secs, lat, rows);
        }
        rt.block_on(store.close()).expect("close");

        let mut memory = Tally::default();
        let (secs, lat) = rt.block_on(async {
            let store = MemoryStore::new();
            store_with_games(&store, games).await;
            steady_state(Arc::new(store), games, REPORT_SLICE).await
        });
        let acks = lat.len();
        memory.add(secs, lat, acks);

        println!(
            "store/{games:<3} sqlite {:>6.0} appends/s  ack p50 {:>6.2} ms  p99 {:>6.2} ms | \
             raw {:>6.0} rows/s  commit p50 {:>6.2} ms  p99 {:>6.2} ms | ratio {:.2} | \
             memory {:>7.0} appends/s  p99 {:.3} ms",
            sqlite.rate(),
            sqlite.percentile_ms(50),
            sqlite.percentile_ms(99),
            raw.rate(),
            raw.percentile_ms(50),
            raw.percentile_ms(99),
            sqlite.rate() / raw.rate(),
            memory.rate(),
            memory.percentile_ms(99),
        );
    }
}

/// Criterion: one burst = one append per game, all in flight at once, until every ack.
fn bench(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("store");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for games in LEVELS {
        group.throughput(Throughput::Elements(games as u64));

        let dir = temp_dir();
        let store = SqliteStore::open(dir.path().join("store.db")).expect("open");
        rt.block_on(store_with_games(&store, games));
        let store = Arc::new(store);
        let mut next = 1u64;
        group.bench_function(format!("sqlite/{games}"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    let seq = next;
                    rt.block_on(async {
                        let mut tasks = JoinSet::new();
                        for g in 0..games {
                            let store = Arc::clone(&store);
                            tasks.spawn(async move {
                                store
                                    .append(
                                        Stream::Game(&format!("g{g}")),
                                        seq,
                                        vec![payload(g, seq)],
                                        None,
                                    )
                                    .await
                                    .expect("append")
                            });
                        }
                        while let Some(done) = tasks.join_next().await {
                            done.expect("appender");
                        }
                    });
                    next += 1;
                }
                start.elapsed()
            });
        });

        let mut conn = raw_connection(&dir.path().join("raw.db"));
        let mut seq = 0u64;
        group.bench_function(format!("raw/{games}"), |b| {
            b.iter(|| {
                seq += 1;
                raw_batch(&mut conn, games, seq);
            });
        });
    }
    group.finish();
}

fn main() {
    // cargo bench passes --bench; cargo test does not (criterion then runs each benchmark
    // once as a smoke test, and the long report is skipped).
    if std::env::args().any(|a| a == "--bench") {
        report();
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
