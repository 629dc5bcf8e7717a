//! `arbiter-tools bench`: the service's figures (issues 6 and 11), measured in one run.
//!
//! - Durable `SubmitMove` throughput and p50/p99 latency: a real server started in-process
//!   on `127.0.0.1:0`, a real tonic client over loopback, N concurrent games, each driven
//!   by its own task on its own connection sending one move after another (the next move
//!   waits for the previous answer, `expected_seq` set as a careful client would). The
//!   server runs on the multi-thread runtime as `serve` does; the clients share one
//!   single-threaded runtime on a thread of their own, as a load generator's event loop
//!   does (on a machine of two cores they take less of the server's CPU that way: their
//!   tasks never wake each other across threads).
//! - The same on the in-memory store: what the service costs without the disk, and the
//!   durability cost as the ratio of the two.
//! - A raw SQLite group-commit baseline in the same run: N tasks each appending one
//!   ~300-byte payload per call straight to [`SqliteStore`], awaited; the service is
//!   reported as a ratio of it.
//! - Resident memory per active game: timed games started (clocks running, timers armed)
//!   in a [`Hub`] over a [`MemoryStore`], `/proc/self/statm` before and after.
//! - Issue 11: the transport anchor ([`echo`]), fan-out to watchers ([`fanout`], beside
//!   its own anchor on the echo), an
//!   open-loop load on SQLite ([`open_loop`]), CPU per move by game length ([`plies`])
//!   and flag precision ([`flags`]); `--only` picks parts.
//! - Issue 13: the restart of the real binary on a log of 20,000 games ([`restart`]).
//! - Issue 15: the service on PostgreSQL beside SQLite, and the failover time of two
//!   nodes ([`postgres`]), where `--database-url` names a database.
//!
//! The games start from a position with two kings a side and shuffle them, so they never
//! end: move-count draws are referred to the arbiter and repetitions need a claim.

mod anchor;
mod echo;
mod fanout;
mod flags;
mod harness;
mod open_loop;
mod plies;
mod postgres;
mod restart;
mod stats;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use tokio::sync::Barrier;

use draughts_arbiter::clock::TimeControl;
use draughts_arbiter::game::{Actor, Command, GameSettings};
use draughts_arbiter::hub::{GameMeta, Hub};
use draughts_arbiter::notation::{parse_fen, write_move};
use draughts_arbiter::rules::{Position, Variant};
use draughts_arbiter::store::{EventStore, GameRecord, MemoryStore, SqliteStore, Stream};
use harness::{Running, closed_loop_run};
use stats::{SHUFFLE_FEN, Sample, Scratch, TIME_CONTROL};

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

/// A part of the bench, for `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchPart {
    /// Resident memory per running game.
    Memory,
    /// Closed-loop SubmitMove at each `--games` on `--store`, the SQLite baseline and the
    /// durability cost (SQLite / memory).
    Submit,
    /// The transport anchor: the service (memory) against a bare echo server.
    Anchor,
    /// Watchers: deliveries/s, publish-to-receive latency, ack latency with and without;
    /// then the same on a bare tonic server publishing the same bytes (the anchor).
    Fanout,
    /// Broadcast: the fan-out with every watcher on the whole round (WatchEvent) and
    /// relays on the HTTP PDN stream; then WatchEvent alone on the bare tonic anchor and
    /// on the service.
    Broadcast,
    /// Open-loop SubmitMove on SQLite at a fixed rate.
    Open,
    /// Server CPU per SubmitMove on short and long games.
    Plies,
    /// Flag precision with many flags due together.
    Flags,
    /// Recovery time: the real binary restarted on a log of many games, to SERVING.
    Restart,
    /// PostgreSQL (`--database-url`): the service beside SQLite at each `--games`, and
    /// the failover time of two nodes.
    Postgres,
}

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Concurrent games, one run each (comma-separated); also the sizes of the anchor.
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    pub games: Vec<usize>,
    /// Moves each game plays in a closed-loop run.
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
    /// Only these parts (comma-separated) [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<BenchPart>,
    /// Durability: pairs of service runs, SQLite and memory in alternating order, pooled
    /// into the sqlite/memory ratio (the first pair is the two lines printed above it).
    #[arg(long, default_value_t = 3)]
    pub durability_rounds: usize,
    /// Anchor: alternating echo/service pairs per number of games.
    #[arg(long, default_value_t = 3)]
    pub anchor_rounds: usize,
    /// Anchor: moves a side per number of games, in as many pairs of runs as it takes
    /// (each game plays at most `--moves`).
    #[arg(long, default_value_t = 6400)]
    pub anchor_moves: usize,
    /// Fan-out: WatchGame streams in all.
    #[arg(long, default_value_t = 10_000)]
    pub watchers: usize,
    /// Fan-out: games watched and moving.
    #[arg(long, default_value_t = 100)]
    pub watched_games: usize,
    /// Fan-out: HTTP/2 connections the watchers share.
    #[arg(long, default_value_t = 40)]
    pub watch_connections: usize,
    /// Fan-out: moves per second over all watched games.
    #[arg(long, default_value_t = 200.0)]
    pub fanout_rate: f64,
    /// Fan-out: seconds of each phase (without, with, without watchers).
    #[arg(long, default_value_t = 5.0)]
    pub fanout_secs: f64,
    /// Broadcast: WatchEvent streams, each on the whole round of `--watched-games`.
    #[arg(long, default_value_t = 10_000)]
    pub round_watchers: usize,
    /// Broadcast: HTTP PDN streams of the round.
    #[arg(long, default_value_t = 1_000)]
    pub pdn_streams: usize,
    /// Broadcast: moves per second over the round (a round of 100 boards at one move a
    /// board every 30 s or so: 3).
    #[arg(long, default_value_t = 3.0)]
    pub broadcast_rate: f64,
    /// Open loop: moves per second.
    #[arg(long, default_value_t = 1000.0)]
    pub open_rate: f64,
    /// Open loop: games the moves are spread over.
    #[arg(long, default_value_t = 500)]
    pub open_games: usize,
    /// Open loop: seconds.
    #[arg(long, default_value_t = 8.0)]
    pub open_secs: f64,
    /// Game length: games per set (short and long).
    #[arg(long, default_value_t = 64)]
    pub ply_games: usize,
    /// Flags: running games whose flags fall together.
    #[arg(long, default_value_t = 10_000)]
    pub flag_games: usize,
    /// Flags: seconds over which the flags are due.
    #[arg(long, default_value_t = 5.0)]
    pub flag_window_secs: f64,
    /// Restart: games in the log (most finished).
    #[arg(long, default_value_t = 20_000)]
    pub restart_games: usize,
    /// Restart: of them, games left running (clocks running).
    #[arg(long, default_value_t = 1_000)]
    pub restart_unfinished: usize,
    /// Restart: of the running ones, games whose flags must fall after the restart.
    #[arg(long, default_value_t = 50)]
    pub restart_flags: usize,
    /// Restart: the server's binary to start on the log [default: draughts-arbiter beside
    /// this one] (an older build, to compare).
    #[arg(long)]
    pub restart_exe: Option<PathBuf>,
    /// PostgreSQL: the database the `postgres` part runs on (a schema of its own, dropped
    /// after) [default: none: the part is skipped, saying so].
    #[arg(long, env = "ARBITER_BENCH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// PostgreSQL: kill-and-take-over runs of two nodes.
    #[arg(long, default_value_t = 10)]
    pub failovers: usize,
    /// PostgreSQL: the nodes' lease in the failover runs, ms.
    #[arg(long, default_value_t = 500)]
    pub lease_ms: u64,
}

impl BenchArgs {
    fn wants(&self, part: BenchPart) -> bool {
        self.only.is_empty() || self.only.contains(&part)
    }
}

pub(super) fn run(args: &BenchArgs) -> ExitCode {
    draughts_arbiter::cli::run_on(true, bench(args))
}

async fn bench(args: &BenchArgs) -> Result<(), String> {
    if args.moves == 0 || args.games.contains(&0) {
        return Err("--moves and every --games value must be at least 1".into());
    }
    let began = Instant::now();
    let cycle = Arc::new(shuffle_cycle()?);
    let sqlite = matches!(args.store, BenchStore::Sqlite | BenchStore::Both);
    let memory = matches!(args.store, BenchStore::Memory | BenchStore::Both);
    let scratch = Scratch::new(args.data_dir.as_deref())?;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "bench: Russian, {SHUFFLE_FEN} king shuffle ({}), {TIME_CONTROL}, {} moves per game, \
         one connection per game; {cpus} CPUs; load average {}",
        cycle.join(" "),
        args.moves,
        load_average()
    );
    if sqlite && (args.wants(BenchPart::Submit) || args.wants(BenchPart::Open)) {
        println!(
            "bench: SQLite files in {} (WAL, synchronous=FULL)",
            scratch.0.display()
        );
    }

    // First, before the other runs grow the heap.
    if args.memory_games > 0 && args.wants(BenchPart::Memory) {
        println!("{}", memory_per_game(args.memory_games).await?);
    }

    if args.wants(BenchPart::Submit) {
        submit(args, sqlite, memory, &scratch, &cycle).await?;
    }
    if args.wants(BenchPart::Anchor) {
        let canned = anchor::capture(&cycle).await?;
        anchor::anchor(
            &canned,
            &args.games,
            (args.anchor_moves, args.moves, args.anchor_rounds.max(1)),
            &cycle,
        )
        .await?;
    }
    if args.wants(BenchPart::Fanout) {
        let plan = fanout::FanoutPlan {
            watchers: args.watchers,
            games: args.watched_games,
            connections: args.watch_connections,
            rate: args.fanout_rate,
            secs: args.fanout_secs,
            mode: fanout::FanoutMode::Games,
            server: fanout::FanoutServer::Real,
        };
        let service = fanout::run(&plan, &cycle).await?;
        let (reply, events) =
            fanout::capture(args.watched_games, fanout::FanoutMode::Games, &cycle).await?;
        let size: usize = events.iter().map(prost::Message::encoded_len).sum();
        let anchor = fanout::run(
            &fanout::FanoutPlan {
                server: fanout::FanoutServer::Echo {
                    reply: Box::new(reply),
                    events,
                },
                ..plan
            },
            &cycle,
        )
        .await?;
        print_anchor(
            "fanout",
            "WatchGame",
            args.watchers,
            size,
            &service,
            &anchor,
        );
    }
    if args.wants(BenchPart::Broadcast) {
        broadcast(args, &cycle).await?;
    }
    if args.wants(BenchPart::Open) {
        open_loop::sqlite_run(
            args.open_games,
            args.open_rate,
            args.open_secs,
            &scratch,
            &cycle,
        )
        .await?;
    }
    if args.wants(BenchPart::Plies) {
        let plan = plies::PliesPlan {
            games: args.ply_games.max(1),
            short: 10,
            long: 300,
            batch: 10,
            rounds: 21,
        };
        plies::run(&plan, &cycle).await?;
    }
    if args.wants(BenchPart::Flags) {
        let plan = flags::FlagPlan {
            games: args.flag_games,
            base_ms: 2_000,
            window_ms: (args.flag_window_secs * 1000.0) as u64,
        };
        flags::run(&plan).await?;
    }
    if args.wants(BenchPart::Postgres) {
        match &args.database_url {
            Some(url) => {
                let plan = postgres::PostgresPlan {
                    url,
                    games: &args.games,
                    moves: args.moves,
                    failovers: args.failovers,
                    lease_ms: args.lease_ms,
                    scratch: &scratch.0,
                };
                postgres::postgres(&plan, &cycle).await?;
            }
            None if args.only.contains(&BenchPart::Postgres) => {
                return Err(
                    "--only postgres needs --database-url (ARBITER_BENCH_DATABASE_URL)".into(),
                );
            }
            None => println!("postgres: SKIPPED: no --database-url (ARBITER_BENCH_DATABASE_URL)"),
        }
    }
    if args.wants(BenchPart::Restart) {
        let plan = restart::RestartPlan {
            games: args.restart_games.max(1),
            unfinished: args.restart_unfinished,
            flagging: args.restart_flags,
            exe: args.restart_exe.clone(),
        };
        restart::run(&plan, &scratch.0).await?;
    }
    println!(
        "bench: done in {:.1} s; load average {}",
        began.elapsed().as_secs_f64(),
        load_average()
    );
    Ok(())
}

/// Issue 14's fan-out: the round to `--round-watchers` WatchEvent streams and
/// `--pdn-streams` HTTP PDN streams; then its anchor, the WatchEvent streams alone on a
/// bare tonic server publishing a captured move ([`echo`]) against the same on the
/// service.
async fn broadcast(args: &BenchArgs, cycle: &Arc<Vec<String>>) -> Result<(), String> {
    let plan = |mode, server| fanout::FanoutPlan {
        watchers: args.round_watchers,
        games: args.watched_games,
        connections: args.watch_connections,
        rate: args.broadcast_rate,
        secs: args.fanout_secs,
        mode,
        server,
    };
    let http = args.pdn_streams;
    let real = || fanout::FanoutServer::Real;
    fanout::run(&plan(fanout::FanoutMode::Round { http }, real()), cycle).await?;
    let only = fanout::FanoutMode::Round { http: 0 };
    let (reply, events) = fanout::capture(args.watched_games, only, cycle).await?;
    let size: usize = events.iter().map(prost::Message::encoded_len).sum();
    let anchor = fanout::run(
        &plan(
            only,
            fanout::FanoutServer::Echo {
                reply: Box::new(reply),
                events,
            },
        ),
        cycle,
    )
    .await?;
    let service = fanout::run(&plan(only, real()), cycle).await?;
    print_anchor(
        "broadcast",
        "WatchEvent",
        args.round_watchers,
        size,
        &service,
        &anchor,
    );
    Ok(())
}

/// A fan-out run on the service beside the same on the bare tonic echo.
fn print_anchor(
    part: &str,
    rpc: &str,
    watchers: usize,
    size: usize,
    service: &fanout::Delivered,
    anchor: &fanout::Delivered,
) {
    println!(
        "{part} anchor: {watchers} {rpc} streams, a move = {size} bytes of events: publish->receive \
         p50 {:.2} / p99 {:.2} ms and ack p99 {:+.0}% on the service; p50 {:.2} / p99 {:.2} ms and \
         ack p99 {:+.0}% on a bare tonic server publishing the same bytes ({} of {} and {} of {} \
         events delivered); service p99 / bare p99 = {:.2} (target <= 1.1); server CPU per move \
         {:.0} us on the service, {:.0} us bare = {:+.0}% (target <= +10%)",
        service.p50,
        service.p99,
        service.ack_change,
        anchor.p50,
        anchor.p99,
        anchor.ack_change,
        service.delivered,
        service.owed,
        anchor.delivered,
        anchor.owed,
        service.p99 / anchor.p99.max(1e-9),
        service.cpu_us,
        anchor.cpu_us,
        (service.cpu_us / anchor.cpu_us.max(1e-9) - 1.0) * 100.0,
    );
}

/// The closed-loop lines of issue 6 and the durability cost of issue 11 (item 3).
async fn submit(
    args: &BenchArgs,
    sqlite: bool,
    memory: bool,
    scratch: &Scratch,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    for &n in &args.games {
        let mut baseline = None;
        if sqlite {
            let sample = baseline_run(n, args.moves, &scratch.0).await?;
            println!("{}", sample.line("sqlite baseline", n, "appends"));
            baseline = Some(sample.per_second());
        }
        let mut durable = None;
        if sqlite {
            let sample = service_run(n, args.moves, cycle, Some((&scratch.0, 0))).await?;
            let ratio = baseline.map_or(String::new(), |b| {
                format!(
                    "  = {:.2}x baseline (target >= 0.8x)",
                    sample.per_second() / b.max(1e-9)
                )
            });
            println!("{}{ratio}", sample.line("service sqlite", n, "moves"));
            durable = Some(sample);
        }
        if memory {
            let sample = service_run(n, args.moves, cycle, None).await?;
            println!("{}", sample.line("service memory", n, "moves"));
            if let Some(first) = durable {
                let pairs = args.durability_rounds.max(1);
                durability(n, (args.moves, pairs), cycle, &scratch.0, (first, sample)).await?;
            }
        }
    }
    Ok(())
}

/// The service's closed loop at `games` on a fresh store: SQLite (a new file in `dir`,
/// numbered `round`) or, with `None`, memory.
async fn service_run(
    games: usize,
    moves: usize,
    cycle: &Arc<Vec<String>>,
    sqlite: Option<(&Path, usize)>,
) -> Result<Sample, String> {
    let store: Arc<dyn EventStore> = match sqlite {
        Some((dir, round)) => {
            let path = dir.join(format!("service-{games}-{round}.sqlite"));
            Arc::new(SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        None => Arc::new(MemoryStore::new()),
    };
    let server = Running::real(store).await?;
    closed_loop_run(server, (games, moves, 0), cycle, true).await
}

/// The durability cost: the `first` pair (SQLite, then memory) and `pairs - 1` more,
/// memory first in every other one, pooled (each store's moves over its time) into one
/// ratio, with the range of the pairs' ratios: one pair alone moves with the machine.
async fn durability(
    n: usize,
    (moves, pairs): (usize, usize),
    cycle: &Arc<Vec<String>>,
    dir: &Path,
    first: (Sample, Sample),
) -> Result<(), String> {
    let mut samples = vec![first];
    for round in 1..pairs {
        let pair = if round % 2 == 1 {
            let memory = service_run(n, moves, cycle, None).await?;
            (
                service_run(n, moves, cycle, Some((dir, round))).await?,
                memory,
            )
        } else {
            let sqlite = service_run(n, moves, cycle, Some((dir, round))).await?;
            (sqlite, service_run(n, moves, cycle, None).await?)
        };
        samples.push(pair);
    }
    let ratios: Vec<f64> = samples
        .iter()
        .map(|(d, m)| d.per_second() / m.per_second().max(1e-9))
        .collect();
    let pooled = |side: fn(&(Sample, Sample)) -> &Sample| {
        let moves: usize = samples.iter().map(|p| side(p).latencies.len()).sum();
        let time: Duration = samples.iter().map(|p| side(p).elapsed).sum();
        moves as f64 / time.as_secs_f64().max(1e-9)
    };
    let (sqlite_rate, memory_rate) = (pooled(|p| &p.0), pooled(|p| &p.1));
    println!(
        "games={n:<4} durability       sqlite/memory = {:.2} (pairs {}; sqlite {sqlite_rate:.0} moves/s, memory {memory_rate:.0} moves/s; \
         {pairs} alternating pairs)  (target >= 0.85 at 256 games)",
        sqlite_rate / memory_rate.max(1e-9),
        stats::range(&ratios, 2),
    );
    Ok(())
}

/// The 1, 5 and 15 minute load averages, as `uptime` prints them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".into(),
        |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
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

/// The row of game `i` of a run straight on the store (no service, no events yet).
fn raw_game(game_id: String, i: usize) -> GameRecord {
    GameRecord {
        game_id,
        created_at_ms: 0,
        event: "Bench".into(),
        round: "1".into(),
        board: u32::try_from(i + 1).unwrap_or(u32::MAX),
        finished: false,
        metadata_json: "{}".into(),
        summary_json: String::new(),
    }
}

/// Raw SQLite: `games` tasks, each appending one payload per call to its own game.
async fn baseline_run(games: usize, moves: usize, dir: &Path) -> Result<Sample, String> {
    let path = dir.join(format!("baseline-{games}.sqlite"));
    let store = SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    for i in 0..games {
        store
            .create_game(raw_game(format!("b{i}"), i))
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
                    .append(Stream::Game(&id), seq, vec![payload], None)
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
