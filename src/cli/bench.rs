//! `draughts-arbiter bench`: the service's figures (issue 6), measured in one run.
//!
//! - Durable `SubmitMove` throughput and p50/p99 latency: a real server started in-process
//!   on `127.0.0.1:0`, a real tonic client over loopback, N concurrent games, each driven
//!   by its own task on its own connection sending one move after another (the next move
//!   waits for the previous answer, `expected_seq` set as a careful client would). The
//!   server runs on the multi-thread runtime as `serve` does; the clients share one
//!   single-threaded runtime on a thread of their own, as a load generator's event loop
//!   does (on a machine of two cores they take less of the server's CPU that way: their
//!   tasks never wake each other across threads).
//! - The same on the in-memory store: what the service costs without the disk.
//! - A raw SQLite group-commit baseline in the same run: N tasks each appending one
//!   ~300-byte payload per call straight to [`SqliteStore`], awaited; the service is
//!   reported as a ratio of it.
//! - Resident memory per active game: timed games started (clocks running, timers armed)
//!   in a [`Hub`] over a [`MemoryStore`], `/proc/self/statm` before and after.
//!
//! The games start from a position with two kings a side and shuffle them, so they never
//! end: move-count draws are referred to the arbiter and repetitions need a claim.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use tokio::sync::{Barrier, oneshot};
use tonic::transport::{Channel, Endpoint};

use crate::api::pb;
use crate::api::pb::game_service_client::GameServiceClient;
use crate::clock::TimeControl;
use crate::game::{Actor, Command, GameSettings};
use crate::hub::{GameMeta, Hub};
use crate::notation::{parse_fen, write_move};
use crate::rules::{Position, Variant};
use crate::server::config::{Config, LogFormat};
use crate::server::run::run as serve;
use crate::store::{EventStore, GameRecord, MemoryStore, SqliteStore};

/// Two kings a side, far enough apart that no capture is ever possible in the shuffle.
const SHUFFLE_FEN: &str = "W:WK29,K32:BK1,K4";
/// The benchmark games' time control (the clocks run; nobody's flag falls).
const TIME_CONTROL: &str = "90m+30s";
/// Size of one baseline append, about one recorded move event.
const PAYLOAD_BYTES: usize = 300;

/// Which store the service runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchStore {
    /// The embedded SQLite log (with the raw SQLite baseline).
    Sqlite,
    /// The in-memory store.
    Memory,
    /// Both, one after the other.
    Both,
}

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Concurrent games, one run each (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    pub games: Vec<usize>,
    /// Moves each game plays in a run.
    #[arg(long, default_value_t = 200)]
    pub moves: usize,
    /// The store the service runs on.
    #[arg(long, value_enum, default_value_t = BenchStore::Both)]
    pub store: BenchStore,
    /// Where the SQLite files go: put it on the disk whose fsync you want to measure
    /// [default: the system temp directory]. A fresh subdirectory is used and removed.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Timed games for the memory measurement; 0 skips it.
    #[arg(long, default_value_t = 10_000)]
    pub memory_games: usize,
}

/// Latencies of one run and how long it took.
struct Sample {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Sample {
    fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Nearest-rank percentile, in milliseconds.
    fn percentile_ms(&self, q: f64) -> f64 {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
        sorted
            .get(rank - 1)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }

    fn line(&self, label: &str, games: usize, unit: &str) -> String {
        format!(
            "games={games:<4} {label:<16} {:>8.0} {unit}/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ({} {unit} in {:.2} s)",
            self.per_second(),
            self.percentile_ms(0.50),
            self.percentile_ms(0.99),
            self.latencies.len(),
            self.elapsed.as_secs_f64()
        )
    }
}

pub(super) fn run(args: &BenchArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bench(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A fresh directory for the SQLite files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(base: Option<&Path>) -> Result<Scratch, String> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let dir = base.join(format!(
            "draughts-arbiter-bench-{}-{stamp}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn bench(args: &BenchArgs) -> Result<(), String> {
    if args.moves == 0 || args.games.contains(&0) {
        return Err("--moves and every --games value must be at least 1".into());
    }
    let cycle = Arc::new(shuffle_cycle()?);
    let sqlite = matches!(args.store, BenchStore::Sqlite | BenchStore::Both);
    let memory = matches!(args.store, BenchStore::Memory | BenchStore::Both);
    let scratch = Scratch::new(args.data_dir.as_deref())?;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "bench: Russian, {SHUFFLE_FEN} king shuffle ({}), {TIME_CONTROL}, {} moves per game, \
         one connection per game; {cpus} CPUs",
        cycle.join(" "),
        args.moves
    );
    if sqlite {
        println!(
            "bench: SQLite files in {} (WAL, synchronous=FULL)",
            scratch.0.display()
        );
    }

    // First, before the other runs grow the heap.
    if args.memory_games > 0 {
        println!("{}", memory_per_game(args.memory_games).await?);
    }

    for &n in &args.games {
        let mut baseline = None;
        if sqlite {
            let sample = baseline_run(n, args.moves, &scratch.0).await?;
            println!("{}", sample.line("sqlite baseline", n, "appends"));
            baseline = Some(sample.per_second());
        }
        if sqlite {
            let path = scratch.0.join(format!("service-{n}.sqlite"));
            let store = SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let sample = service_run(Arc::new(store), n, args.moves, &cycle).await?;
            let ratio = baseline.map_or(String::new(), |b| {
                format!(
                    "  = {:.2}x baseline (target >= 0.8x)",
                    sample.per_second() / b.max(1e-9)
                )
            });
            println!("{}{ratio}", sample.line("service sqlite", n, "moves"));
        }
        if memory {
            let sample = service_run(Arc::new(MemoryStore::new()), n, args.moves, &cycle).await?;
            println!("{}", sample.line("service memory", n, "moves"));
        }
    }
    Ok(())
}

/// Four quiet king moves from [`SHUFFLE_FEN`] that lead back to it: white goes, black
/// goes, white returns, black returns.
fn shuffle_cycle() -> Result<Vec<String>, String> {
    let start = parse_fen(SHUFFLE_FEN, Variant::Russian).map_err(|e| e.to_string())?;
    let quiet = |p: &Position| -> Vec<_> {
        p.legal_moves()
            .into_iter()
            .filter(|m| !m.is_capture())
            .collect()
    };
    let back = |p: &Position, from, to| {
        quiet(p)
            .into_iter()
            .find(|m| m.from() == from && m.to() == to)
    };
    for m1 in quiet(&start) {
        let Ok(p1) = start.play(&m1) else { continue };
        for m2 in quiet(&p1) {
            let Ok(p2) = p1.play(&m2) else { continue };
            let Some(b1) = back(&p2, m1.to(), m1.from()) else {
                continue;
            };
            let Ok(p3) = p2.play(&b1) else { continue };
            let Some(b2) = back(&p3, m2.to(), m2.from()) else {
                continue;
            };
            if p3.play(&b2).is_ok_and(|p4| p4 == start)
                && [&p1, &p2, &p3]
                    .iter()
                    .all(|p| p.legal_moves().iter().all(|m| !m.is_capture()))
            {
                return Ok(vec![
                    write_move(&start, &m1),
                    write_move(&p1, &m2),
                    write_move(&p2, &b1),
                    write_move(&p3, &b2),
                ]);
            }
        }
    }
    Err(format!("no quiet four-move cycle from {SHUFFLE_FEN}"))
}

/// Raw SQLite: `games` tasks, each appending one payload per call to its own game.
async fn baseline_run(games: usize, moves: usize, dir: &Path) -> Result<Sample, String> {
    let path = dir.join(format!("baseline-{games}.sqlite"));
    let store = SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    for i in 0..games {
        store
            .create_game(GameRecord {
                game_id: format!("b{i}"),
                created_at_ms: 0,
                event: "Bench".into(),
                round: "1".into(),
                board: i as u32 + 1,
                finished: false,
                metadata_json: "{}".into(),
                summary_json: String::new(),
            })
            .await
            .map_err(|e| format!("baseline: {e}"))?;
    }
    let barrier = Arc::new(Barrier::new(games + 1));
    let mut tasks = Vec::with_capacity(games);
    for i in 0..games {
        let store = store.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("b{i}");
            let mut latencies = Vec::with_capacity(moves);
            barrier.wait().await;
            for seq in 1..=moves as u64 {
                let payload = vec![b'x'; PAYLOAD_BYTES];
                let t = Instant::now();
                store
                    .append(&id, seq, vec![payload])
                    .await
                    .map_err(|e| format!("baseline {id}: {e}"))?;
                latencies.push(t.elapsed());
            }
            Ok::<_, String>(latencies)
        }));
    }
    let sample = collect(barrier, tasks).await?;
    store.close().await.map_err(|e| format!("baseline: {e}"))?;
    Ok(sample)
}

/// Releases the tasks together and gathers their latencies.
async fn collect(
    barrier: Arc<Barrier>,
    tasks: Vec<tokio::task::JoinHandle<Result<Vec<Duration>, String>>>,
) -> Result<Sample, String> {
    barrier.wait().await;
    let began = Instant::now();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| format!("task: {e}"))??);
    }
    Ok(Sample {
        latencies,
        elapsed: began.elapsed(),
    })
}

async fn connect(url: &str) -> Result<Channel, String> {
    let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| format!("{url}: {e}"))?;
    let mut last = String::new();
    for _ in 0..50 {
        match endpoint.connect().await {
            Ok(channel) => return Ok(channel),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(format!("cannot reach {url}: {last}"))
}

/// The service on `store`: `games` tasks, each with its own connection and game.
async fn service_run(
    store: Arc<dyn EventStore>,
    games: usize,
    moves: usize,
    cycle: &Arc<Vec<String>>,
) -> Result<Sample, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("listen: {e}"))?;
    let addr = listener.local_addr().map_err(|e| format!("listen: {e}"))?;
    let config = Config {
        listen: addr,
        data_dir: None,
        metrics_listen: None,
        log_format: LogFormat::Text,
        insecure: false,
        charge_outage: false,
        max_loaded_games: 100_000,
        evict_after: Duration::from_secs(60),
        tls: None,
        tokens: Vec::new(),
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        serve(&config, store, listener, async {
            let _ = stopped.await;
        })
        .await
    });
    let url = format!("http://{addr}");
    let cycle = cycle.clone();
    let (done, finished) = oneshot::channel();
    let clients = std::thread::Builder::new()
        .name("bench-clients".into())
        .spawn(move || {
            let sample = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("client runtime: {e}"))
                .and_then(|rt| rt.block_on(drive(&url, games, moves, &cycle)));
            let _ = done.send(sample);
        })
        .map_err(|e| format!("client thread: {e}"));
    let sample = match clients {
        Ok(_) => finished
            .await
            .unwrap_or_else(|_| Err("the client thread ended without a result".into())),
        Err(e) => Err(e),
    };
    let _ = stop.send(());
    match tokio::time::timeout(Duration::from_secs(10), server).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => return Err(format!("server: {e}")),
        Ok(Err(e)) => return Err(format!("server task: {e}")),
        Err(_) => return Err("server did not shut down within 10 s".into()),
    }
    sample
}

/// The clients of [`service_run`]: `games` tasks, each creating and starting its game on
/// its own connection, then playing `moves` moves of `cycle` once all are ready.
async fn drive(
    url: &str,
    games: usize,
    moves: usize,
    cycle: &Arc<Vec<String>>,
) -> Result<Sample, String> {
    let mut clients = Vec::with_capacity(games);
    for i in 0..games {
        let mut client = GameServiceClient::new(connect(url).await?);
        let created = client
            .create_game(create_request(i))
            .await
            .map_err(|s| format!("CreateGame: {}", s.message()))?
            .into_inner();
        let started = client
            .start_game(pb::StartGameRequest {
                game_id: created.id.clone(),
                expected_seq: created.last_seq,
            })
            .await
            .map_err(|s| format!("StartGame: {}", s.message()))?
            .into_inner();
        let seq = started.game.map_or(0, |g| g.last_seq);
        clients.push((client, created.id, seq));
    }

    let barrier = Arc::new(Barrier::new(games + 1));
    let mut tasks = Vec::with_capacity(games);
    for (mut client, id, mut seq) in clients {
        let barrier = barrier.clone();
        let cycle = cycle.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(moves);
            barrier.wait().await;
            for k in 0..moves {
                let request = pb::SubmitMoveRequest {
                    game_id: id.clone(),
                    r#move: cycle[k % cycle.len()].clone(),
                    expected_seq: seq,
                    side: 0,
                };
                let t = Instant::now();
                let reply = client
                    .submit_move(request)
                    .await
                    .map_err(|s| format!("{id} move {k}: {:?}: {}", s.code(), s.message()))?
                    .into_inner();
                latencies.push(t.elapsed());
                seq = reply.game.map_or(0, |g| g.last_seq);
            }
            Ok::<_, String>(latencies)
        }));
    }
    collect(barrier, tasks).await
}

fn create_request(i: usize) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: pb::Variant::Russian as i32,
        time_control: TIME_CONTROL.into(),
        white: None,
        black: None,
        event: "Bench".into(),
        round: "1".into(),
        board: i as u32 + 1,
        start_fen: SHUFFLE_FEN.into(),
        settings: Some(pb::GameSettings {
            repetition_mode: pb::RepetitionMode::Claim as i32,
            move_count_draws: pb::MoveCountDraws::ReferredToArbiter as i32,
            ..Default::default()
        }),
        game_id: String::new(),
    }
}

/// Resident memory of `games` started timed games in a registry over a memory store.
async fn memory_per_game(games: usize) -> Result<String, String> {
    let Some(before) = resident_bytes() else {
        return Ok("memory: not measured (no /proc/self/statm)".into());
    };
    let mut settings = GameSettings::new(Variant::Russian);
    settings.time_control = Some(
        TIME_CONTROL
            .parse::<TimeControl>()
            .map_err(|e| format!("{TIME_CONTROL}: {e}"))?,
    );
    let actor = Actor::Arbiter("bench".into());
    let hub = Hub::new(Arc::new(MemoryStore::new()), false);
    let began = Instant::now();
    for i in 0..games {
        let meta = GameMeta {
            id: format!("m{i}"),
            event: "Bench".into(),
            round: "1".into(),
            board: i as u32 + 1,
            ..GameMeta::default()
        };
        let handle = hub
            .create(meta, settings.clone(), None, actor.clone())
            .await
            .map_err(|e| format!("memory: create: {e}"))?;
        handle
            .command(actor.clone(), Command::Start, None, |_, _| ())
            .await
            .map_err(|e| format!("memory: start: {e}"))?;
    }
    let elapsed = began.elapsed();
    let after = resident_bytes().unwrap_or(before);
    let running = hub.loaded();
    hub.shutdown().await;
    drop(hub);
    let grown = after.saturating_sub(before);
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    Ok(format!(
        "memory: {running} timed games started (clocks running) in {:.2} s: RSS {:.1} MiB -> {:.1} MiB, \
         +{:.1} MiB = {} bytes per game; {:.1} MiB for 10,000 (target < 1 GiB)",
        elapsed.as_secs_f64(),
        mib(before),
        mib(after),
        mib(grown),
        grown / games as u64,
        mib(grown / games as u64 * 10_000)
    ))
}

/// Resident set size from `/proc/self/statm` (pages) times the page size.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size().unwrap_or(4096))
}

/// The page size from the auxiliary vector (`AT_PAGESZ`), without libc.
fn page_size() -> Option<u64> {
    const AT_PAGESZ: usize = 6;
    let auxv = std::fs::read("/proc/self/auxv").ok()?;
    let word = std::mem::size_of::<usize>();
    auxv.chunks_exact(2 * word).find_map(|pair| {
        let key = usize::from_ne_bytes(pair[..word].try_into().ok()?);
        let value = usize::from_ne_bytes(pair[word..].try_into().ok()?);
        (key == AT_PAGESZ).then_some(value as u64)
    })
}
