//! Fan-out: many `WatchGame` streams over a few HTTP/2 connections, on games that move
//! at a fixed rate (the open loop of [`super::open_loop`]).
//!
//! Publish → receive latency is the watcher's wall clock at receipt minus the event's
//! `monotonic_ms`. The server's timeline is its wall clock at start plus monotonic time
//! since, both in whole milliseconds, and the clients share its machine and clock, so
//! the figure is exact to about 2 ms (biased up: the stamp is truncated). The stamp is
//! taken when the command is decided, so the figure includes the append (memory store
//! here) as well as the fan-out and the stream.
//!
//! The watchers run on a client thread of their own and the movers on another, so the
//! movers' acknowledgements are not delayed by the watchers' client work.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};

use super::harness::{Running, connect, on_client_thread, server_cpu_ns, setup};
use super::open_loop::{self, OpenSample};
use super::stats::percentile_ms_f64;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::store::MemoryStore;

/// The pause between the watchers' leaving and the last phase.
const SETTLE: Duration = Duration::from_secs(2);

/// The sizes of a fan-out run.
pub(super) struct FanoutPlan {
    /// Watchers in all.
    pub watchers: usize,
    /// Games watched (each by `watchers / games` watchers) and moving.
    pub games: usize,
    /// HTTP/2 connections the watchers share.
    pub connections: usize,
    /// Moves a second over all games.
    pub rate: f64,
    /// Length of each phase, seconds.
    pub secs: f64,
    /// What the watchers follow.
    pub mode: FanoutMode,
    /// The server they follow it on.
    pub server: FanoutServer,
}

/// The server of a fan-out run.
pub(super) enum FanoutServer {
    /// The service on the memory store.
    Real,
    /// The fan-out anchor: a bare tonic server that publishes a move captured from the
    /// service's stream of the run's kind ([`capture`]) at each `SubmitMove` to the
    /// streams that follow it ([`super::echo`]).
    Echo {
        reply: Box<pb::SubmitMoveResponse>,
        events: Vec<pb::GameEvent>,
    },
}

/// What a fan-out run measured of its deliveries.
pub(super) struct Delivered {
    /// Publish → receive, ms.
    pub p50: f64,
    pub p99: f64,
    /// The movers' ack p99 with the watchers against without, percent more.
    pub ack_change: f64,
    /// Events received by the watchers, and owed to them.
    pub delivered: usize,
    pub owed: usize,
    /// The server's CPU per move answered while the watchers watched, µs (its threads'
    /// time, [`server_cpu_ns`]: the moves, the fan-out and the streams).
    pub cpu_us: f64,
}

/// What a fan-out run's watchers follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FanoutMode {
    /// Issue 11: `WatchGame`, each watcher one game (watcher `i` on game `i % games`).
    Games,
    /// Issue 14: the whole round, every watcher on `WatchEvent` (all games on one
    /// stream), and `http` relays on `GET /pdn/Bench/1/stream`.
    Round {
        /// HTTP PDN streams beside the WatchEvent ones.
        http: usize,
    },
}

/// What the watchers saw.
#[derive(Default)]
struct Seen {
    /// Publish → receive, ms, per delivered event.
    latencies: Vec<f64>,
    resyncs: usize,
    errors: usize,
    /// First to last delivery.
    span: Duration,
    /// HTTP PDN streams: game records received (after the first answer) and bytes.
    http_records: usize,
    http_bytes: usize,
    /// HTTP PDN streams: first answer to the last byte.
    http_span: Duration,
    /// HTTP PDN streams: each game record after the first answer, as (board, plies in
    /// it, wall clock ms at receipt).
    http_receipts: Vec<(usize, usize, f64)>,
}

/// Issue 11 item 1: the movers alone, then with the watchers, then alone again.
pub(super) async fn run(plan: &FanoutPlan, cycle: &Arc<Vec<String>>) -> Result<Delivered, String> {
    if plan.games == 0 || plan.watchers == 0 || plan.connections == 0 {
        return Err("fanout: games, watchers and connections must be at least 1".into());
    }
    let server = match &plan.server {
        FanoutServer::Real => Running::real(Arc::new(MemoryStore::new())).await?,
        FanoutServer::Echo { reply, events } => {
            Running::echo_fanout(reply.as_ref().clone(), events.clone()).await?
        }
    };
    let result = phases(&server, plan, cycle).await;
    let stopped = server.stop().await;
    let delivered = result?;
    stopped?;
    Ok(delivered)
}

/// A move of the bench's round as a stream of `mode` carries it, and the `SubmitMove`
/// answer that made it: on the service (memory store), `games` games of the round, each
/// a few moves in (seqs and clocks of their usual width), then one more move of the
/// first game while a stream follows the round (`WatchEvent`) or that game
/// (`WatchGame`).
pub(super) async fn capture(
    games: usize,
    mode: FanoutMode,
    cycle: &Arc<Vec<String>>,
) -> Result<(pb::SubmitMoveResponse, Vec<pb::GameEvent>), String> {
    let server = Running::real(Arc::new(MemoryStore::new())).await?;
    let url = server.url().to_string();
    let cycle = cycle.clone();
    let captured = on_client_thread("bench-capture", move || async move {
        let mut round = setup(&url, games.max(1), true).await?;
        for game in &mut round {
            for _ in 0..4 {
                game.play(&cycle).await?;
            }
        }
        let mut client = BroadcastServiceClient::new(connect(&url).await?);
        let stream = match mode {
            FanoutMode::Round { .. } => {
                let resume_from = round.iter().map(|g| (g.id.clone(), g.seq)).collect();
                client
                    .watch_event(pb::WatchEventRequest {
                        event: "Bench".into(),
                        round: "1".into(),
                        resume_from,
                        ..Default::default()
                    })
                    .await
            }
            FanoutMode::Games => {
                client
                    .watch_game(pb::WatchGameRequest {
                        game_id: round[0].id.clone(),
                        from_seq: round[0].seq,
                    })
                    .await
            }
        };
        let mut stream = stream
            .map_err(|s| format!("capture: watch: {}", s.message()))?
            .into_inner();
        let reply = round[0].submit(&cycle).await?;
        let mut events = Vec::with_capacity(reply.events.len());
        while events.len() < reply.events.len() {
            match tokio::time::timeout(Duration::from_secs(5), stream.message()).await {
                Ok(Ok(Some(e))) => events.push(e),
                Ok(Ok(None)) => return Err("capture: the round stream ended".into()),
                Ok(Err(s)) => return Err(format!("capture: the round stream: {}", s.message())),
                Err(_) => return Err("capture: the move did not reach the round stream".into()),
            }
        }
        Ok((reply, events))
    })
    .await;
    let stopped = server.stop().await;
    let captured = captured?;
    stopped?;
    Ok(captured)
}

async fn phases(
    server: &Running,
    plan: &FanoutPlan,
    cycle: &Arc<Vec<String>>,
) -> Result<Delivered, String> {
    let url = server.url().to_string();
    let real = matches!(plan.server, FanoutServer::Real);
    let (games, rate, secs) = (plan.games, plan.rate, plan.secs);
    let what = match plan.mode {
        FanoutMode::Games => "WatchGame, one game each".to_string(),
        FanoutMode::Round { http: 0 } => "WatchEvent, the whole round each".to_string(),
        FanoutMode::Round { http } => {
            format!("WatchEvent, the whole round each; and {http} GET /pdn/Bench/1/stream")
        }
    };
    let on = match plan.server {
        FanoutServer::Real => "the service, memory store",
        FanoutServer::Echo { .. } => "the fan-out echo: bare tonic, a captured move",
    };
    println!(
        "fanout: {} watchers ({what}) over {} connections on {games} games moving {rate:.1} moves/s \
         ({on}); {secs:.0} s without, with, without (after a {:.0} s pause)",
        plan.watchers,
        plan.connections,
        SETTLE.as_secs_f64()
    );
    // One movers thread for the three phases: a channel lives on the runtime it was
    // made on.
    let (phase_tx, mut phases) = mpsc::unbounded_channel();
    let (go_tx, mut go) = mpsc::unbounded_channel::<()>();
    let movers = {
        let (url, cycle) = (url.clone(), cycle.clone());
        on_client_thread("bench-movers", move || async move {
            let mut games = setup(&url, games, real).await?;
            for phase in 0..3 {
                if phase > 0 && go.recv().await.is_none() {
                    break;
                }
                let (sample, g) = open_loop::run(games, rate, secs, &cycle).await?;
                games = g;
                let targets: Vec<(String, u64)> =
                    games.iter().map(|g| (g.id.clone(), g.seq)).collect();
                // Game `i` is board `i + 1` (`create_request`).
                let stamps: Vec<Vec<i64>> = games.iter().map(|g| g.stamps.clone()).collect();
                if phase_tx.send((sample, targets, stamps)).is_err() {
                    break;
                }
            }
            Ok(())
        })
    };
    let Some((before, targets, _)) = phases.recv().await else {
        return early(movers.await);
    };
    println!("fanout: without watchers: {}", before.summary());

    let (ready_tx, ready) = oneshot::channel();
    let (stop, stopped) = watch::channel(false);
    let opening = Instant::now();
    let watchers = {
        let (url, watchers, connections, mode) =
            (url.clone(), plan.watchers, plan.connections, plan.mode);
        let addr = server.addr();
        on_client_thread("bench-watchers", move || {
            watch_all(
                url,
                addr,
                targets,
                (watchers, connections, mode),
                ready_tx,
                stopped,
            )
        })
    };
    let opened = match ready.await {
        Ok(r) => r?,
        // The thread ended before it was ready: its result says why.
        Err(_) => return early(watchers.await.map(|_| ())),
    };
    println!(
        "fanout: {opened} streams open in {:.2} s",
        opening.elapsed().as_secs_f64()
    );
    let cpu_from = server_cpu_ns()?;
    let _ = go_tx.send(());
    let Some((with, _, stamps)) = phases.recv().await else {
        let _ = stop.send(true);
        return early(movers.await);
    };
    // Let the last deliveries arrive.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cpu_ns = server_cpu_ns()?.saturating_sub(cpu_from);
    let _ = stop.send(true);
    let seen = watchers.await?;
    println!("fanout: with watchers:    {}", with.summary());
    // The server drops thousands of streams once the watchers have gone; the third phase
    // measures the movers alone, not that.
    tokio::time::sleep(SETTLE).await;

    let _ = go_tx.send(());
    let Some((after, _, _)) = phases.recv().await else {
        return early(movers.await);
    };
    movers.await?;
    println!("fanout: without again:    {}", after.summary());

    let mut delivered = report(plan, &before, &with, &after, &seen, &stamps);
    delivered.cpu_us = cpu_ns as f64 / 1_000.0 / with.latencies.len().max(1) as f64;
    println!(
        "fanout: server CPU with watchers: {:.0} us per move ({} moves, {:.2} s of CPU)",
        delivered.cpu_us,
        with.latencies.len(),
        cpu_ns as f64 / 1e9
    );
    Ok(delivered)
}

/// A run that ended before its report: the error that ended it.
fn early(ended: Result<(), String>) -> Result<Delivered, String> {
    ended.and(Err("fanout: a client thread stopped early".into()))
}

fn report(
    plan: &FanoutPlan,
    before: &OpenSample,
    with: &OpenSample,
    after: &OpenSample,
    seen: &Seen,
    stamps: &[Vec<i64>],
) -> Delivered {
    // Exact when the watchers divide evenly over the games, as by default.
    let owed = match plan.mode {
        FanoutMode::Games => with.events * plan.watchers / plan.games,
        FanoutMode::Round { .. } => with.events * plan.watchers,
    };
    let delivered = seen.latencies.len();
    let figures = Delivered {
        p50: percentile_ms_f64(&seen.latencies, 0.50),
        p99: percentile_ms_f64(&seen.latencies, 0.99),
        ack_change: 0.0,
        delivered,
        owed,
        cpu_us: 0.0,
    };
    println!(
        "fanout: {delivered} deliveries of {owed} owed ({} resyncs, {} stream errors) in {:.2} s = {:.0} deliveries/s; \
         publish->receive p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  (target p99 <= 50 ms)",
        seen.resyncs,
        seen.errors,
        seen.span.as_secs_f64(),
        delivered as f64 / seen.span.as_secs_f64().max(1e-9),
        figures.p50,
        figures.p99,
        percentile_ms_f64(&seen.latencies, 1.0),
    );
    if let FanoutMode::Round { http } = plan.mode
        && http > 0
    {
        println!(
            "fanout: HTTP PDN streams: {} game records ({} bytes) after the first answer over {http} streams in {:.2} s = {:.0} records/s",
            seen.http_records,
            seen.http_bytes,
            seen.http_span.as_secs_f64(),
            seen.http_records as f64 / seen.http_span.as_secs_f64().max(1e-9),
        );
        // A record of `plies` moves was sent for its last move (or a later event of it).
        let mut latencies = Vec::with_capacity(seen.http_receipts.len());
        let mut unmatched = 0;
        for &(board, plies, at) in &seen.http_receipts {
            match plies
                .checked_sub(1)
                .and_then(|p| stamps.get(board.wrapping_sub(1))?.get(p))
            {
                Some(&published) => latencies.push(at - published as f64),
                None => unmatched += 1,
            }
        }
        println!(
            "fanout: HTTP PDN streams: publish->receive (a game's last move -> its record) p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms over {} records ({unmatched} not matched to a move)",
            percentile_ms_f64(&latencies, 0.50),
            percentile_ms_f64(&latencies, 0.99),
            percentile_ms_f64(&latencies, 1.0),
            latencies.len(),
        );
    }
    let p99 = |s: &OpenSample| super::stats::percentile_ms(&s.latencies, 0.99);
    let without = (p99(before) + p99(after)) / 2.0;
    println!(
        "fanout: SubmitMove ack p99 {:.2} ms with watchers vs {:.2} ms without (mean of {:.2} and {:.2}) = {:+.0}%  (target within 20%)",
        p99(with),
        without,
        p99(before),
        p99(after),
        (p99(with) / without.max(1e-9) - 1.0) * 100.0
    );
    Delivered {
        ack_change: (p99(with) / without.max(1e-9) - 1.0) * 100.0,
        ..figures
    }
}

fn wall_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Opens `watchers` streams (watcher `i` on game `i % games`, from its current seq) over
/// `connections` connections, says how many once all are open, then reads until `stop`.
async fn watch_all(
    url: String,
    addr: std::net::SocketAddr,
    targets: Vec<(String, u64)>,
    (watchers, connections, mode): (usize, usize, FanoutMode),
    ready: oneshot::Sender<Result<usize, String>>,
    stop: watch::Receiver<bool>,
) -> Result<Seen, String> {
    let opened = async {
        let grpc = open(&url, &targets, watchers, connections, mode).await?;
        let http = match mode {
            FanoutMode::Round { http } => http_open(addr, http).await?,
            FanoutMode::Games => Vec::new(),
        };
        Ok::<_, String>((grpc, http))
    }
    .await;
    let (streams, http) = match opened {
        Ok((s, h)) => {
            let _ = ready.send(Ok(s.len() + h.len()));
            (s, h)
        }
        Err(e) => {
            let _ = ready.send(Err(e.clone()));
            return Err(e);
        }
    };
    let relays: Vec<_> = http
        .into_iter()
        .map(|conn| tokio::spawn(http_read(conn, targets.len(), stop.clone())))
        .collect();
    let mut tasks = Vec::with_capacity(streams.len());
    for mut stream in streams {
        let mut stop = stop.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let (mut resyncs, mut errors) = (0, 0);
            let (mut first, mut last) = (None, None);
            loop {
                let message = tokio::select! {
                    biased;
                    _ = stop.wait_for(|s| *s) => break,
                    m = stream.message() => m,
                };
                match message {
                    Ok(Some(event)) => {
                        let now = Instant::now();
                        first.get_or_insert(now);
                        last = Some(now);
                        if event.resync.is_some() {
                            resyncs += 1;
                        } else {
                            latencies.push(wall_ms() - event.monotonic_ms as f64);
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        errors += 1;
                        break;
                    }
                }
            }
            (latencies, resyncs, errors, first, last)
        }));
    }
    let mut seen = Seen::default();
    let (mut http_first, mut http_last): (Option<Instant>, Option<Instant>) = (None, None);
    for relay in relays {
        let (records, bytes, f, l, receipts) = relay.await.map_err(|e| format!("relay: {e}"))?;
        seen.http_records += records;
        seen.http_bytes += bytes;
        seen.http_receipts.extend(receipts);
        http_first = match (http_first, f) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        http_last = http_last.max(l);
    }
    if let (Some(f), Some(l)) = (http_first, http_last) {
        seen.http_span = l - f;
    }
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    for task in tasks {
        let (l, r, e, f, la) = task.await.map_err(|e| format!("watcher: {e}"))?;
        seen.latencies.extend(l);
        seen.resyncs += r;
        seen.errors += e;
        first = match (first, f) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        last = last.max(la);
    }
    if let (Some(f), Some(l)) = (first, last) {
        seen.span = l - f;
    }
    Ok(seen)
}

async fn open(
    url: &str,
    targets: &[(String, u64)],
    watchers: usize,
    connections: usize,
    mode: FanoutMode,
) -> Result<Vec<tonic::Streaming<Received>>, String> {
    if let FanoutMode::Round { .. } = mode {
        return open_round(url, targets, watchers, connections).await;
    }
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections {
        channels.push(connect(url).await?);
    }
    let mut calls = Vec::with_capacity(watchers);
    for i in 0..watchers {
        let channel = channels[i % connections].clone();
        let (game_id, from_seq) = targets[i % targets.len()].clone();
        calls.push(tokio::spawn(watch(
            channel,
            WATCH_GAME,
            pb::WatchGameRequest { game_id, from_seq },
        )));
    }
    let mut streams = Vec::with_capacity(watchers);
    for call in calls {
        streams.push(call.await.map_err(|e| format!("watch task: {e}"))??);
    }
    Ok(streams)
}

const WATCH_GAME: &str = "/draughts.arbiter.v1.BroadcastService/WatchGame";
const WATCH_EVENT: &str = "/draughts.arbiter.v1.BroadcastService/WatchEvent";

/// What a watcher reads of each message: its seq, its stamp and whether it is a
/// `Resync` (prost skips the other fields). The watchers of a real display each decode
/// their own messages on their own device; here one client thread reads all of them,
/// so it decodes no more than the figures need (a whole `GameEvent` of a round stream
/// costs this thread about a third more).
#[derive(Clone, PartialEq, prost::Message)]
struct Received {
    #[prost(uint64, tag = "1")]
    seq: u64,
    #[prost(int64, tag = "6")]
    monotonic_ms: i64,
    #[prost(message, optional, tag = "41")]
    resync: Option<pb::Resync>,
}

/// Opens a server stream of `path` on `channel`, read as [`Received`].
async fn watch<Req: prost::Message + Send + 'static>(
    channel: tonic::transport::Channel,
    path: &'static str,
    request: Req,
) -> Result<tonic::Streaming<Received>, String> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| format!("{path}: not ready: {e}"))?;
    grpc.server_streaming(
        tonic::Request::new(request),
        tonic::codegen::http::uri::PathAndQuery::from_static(path),
        tonic_prost::ProstCodec::<Req, Received>::default(),
    )
    .await
    .map(tonic::Response::into_inner)
    .map_err(|s| format!("{path}: {:?}: {}", s.code(), s.message()))
}

/// `watchers` WatchEvent streams of the bench's round, each resuming after the games'
/// current seqs.
async fn open_round(
    url: &str,
    targets: &[(String, u64)],
    watchers: usize,
    connections: usize,
) -> Result<Vec<tonic::Streaming<Received>>, String> {
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections {
        channels.push(connect(url).await?);
    }
    let resume_from: std::collections::HashMap<String, u64> = targets.iter().cloned().collect();
    let mut streams = Vec::with_capacity(watchers);
    // A few hundred at a time: each opening registers a watcher with every game.
    for batch in (0..watchers).collect::<Vec<_>>().chunks(256) {
        let mut calls = Vec::with_capacity(batch.len());
        for &i in batch {
            let request = pb::WatchEventRequest {
                event: "Bench".into(),
                round: "1".into(),
                resume_from: resume_from.clone(),
                ..Default::default()
            };
            calls.push(tokio::spawn(watch(
                channels[i % connections].clone(),
                WATCH_EVENT,
                request,
            )));
        }
        for call in calls {
            streams.push(call.await.map_err(|e| format!("watch task: {e}"))??);
        }
    }
    Ok(streams)
}

/// `n` HTTP/1.1 connections, each following the round's PDN stream.
async fn http_open(addr: std::net::SocketAddr, n: usize) -> Result<Vec<TcpStream>, String> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut conn = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("HTTP connect: {e}"))?;
        conn.write_all(
            format!("GET /pdn/Bench/1/stream HTTP/1.1\r\nhost: {addr}\r\n\r\n").as_bytes(),
        )
        .await
        .map_err(|e| format!("HTTP request: {e}"))?;
        out.push(conn);
    }
    Ok(out)
}

/// What a relay read: game records and bytes after the first answer, the instants of
/// the end of that answer and of the last read, and each later record's receipt.
type RelayRead = (
    usize,
    usize,
    Option<Instant>,
    Option<Instant>,
    Vec<(usize, usize, f64)>,
);

/// Reads a PDN stream until `stop`: the game records (`[Event ` tags) and bytes after
/// its first answer (the `games` records of the whole round), the instants of the end
/// of that answer and of the last read, and for each record after the first answer its
/// board, its plies (one `[%clock` comment a move) and the wall clock ms when its end
/// (the blank lines after the movetext) arrived.
async fn http_read(
    mut conn: TcpStream,
    games: usize,
    mut stop: watch::Receiver<bool>,
) -> RelayRead {
    let mut buf = vec![0u8; 64 * 1024];
    let (mut records, mut bytes) = (0, 0);
    let (mut first, mut last) = (None, None);
    let mut pending: Vec<u8> = Vec::new();
    let mut receipts = Vec::new();
    loop {
        let n = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => break,
            n = conn.read(&mut buf) => n,
        };
        match n {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let now = Instant::now();
                let at = wall_ms();
                records += buf[..n].windows(7).filter(|w| w == b"[Event ").count();
                pending.extend_from_slice(&buf[..n]);
                let complete = whole_records(&mut pending);
                if first.is_none() {
                    if records >= games {
                        first = Some(now);
                    }
                    continue;
                }
                receipts.extend(
                    complete
                        .iter()
                        .filter_map(|r| board_and_plies(r))
                        .map(|(board, plies)| (board, plies, at)),
                );
                last = Some(now);
                bytes += n;
            }
        }
    }
    (records.saturating_sub(games), bytes, first, last, receipts)
}

/// Takes the whole records (each ends with the blank lines after its movetext) off the
/// front of `pending`.
fn whole_records(pending: &mut Vec<u8>) -> Vec<Vec<u8>> {
    const END: &[u8] = b"\n\n\n";
    let mut out = Vec::new();
    while let Some(i) = pending.windows(END.len()).position(|w| w == END) {
        out.push(pending.drain(..i + END.len()).collect());
    }
    out
}

/// A record's `[Board "n"]` and its plies (the bench's games have clocks: one
/// `[%clock` comment a move).
fn board_and_plies(record: &[u8]) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(record).ok()?;
    let board = text
        .split("[Board \"")
        .nth(1)?
        .split('"')
        .next()?
        .parse()
        .ok()?;
    Some((board, text.matches("[%clock").count()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small run of each kind on each server: every event owed reaches every watcher
    /// (the anchor's figures mean something only if it does the same work).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_service_and_its_echo_deliver_every_event_to_every_watcher() {
        let cycle = Arc::new(super::super::shuffle_cycle().expect("the bench's moves"));
        for mode in [FanoutMode::Games, FanoutMode::Round { http: 2 }] {
            let plan = |server| FanoutPlan {
                watchers: 12,
                games: 3,
                connections: 2,
                rate: 30.0,
                secs: 0.3,
                mode,
                server,
            };
            let real = run(&plan(FanoutServer::Real), &cycle)
                .await
                .expect("service");
            let (reply, events) = capture(3, mode, &cycle).await.expect("capture");
            assert!(!events.is_empty() && events.len() == reply.events.len());
            // The echo serves no HTTP: its runs follow the round on WatchEvent alone.
            let echo_mode = match mode {
                FanoutMode::Round { .. } => FanoutMode::Round { http: 0 },
                FanoutMode::Games => FanoutMode::Games,
            };
            let echo = run(
                &FanoutPlan {
                    mode: echo_mode,
                    ..plan(FanoutServer::Echo {
                        reply: Box::new(reply),
                        events,
                    })
                },
                &cycle,
            )
            .await
            .expect("echo");
            for (what, d) in [("service", &real), ("echo", &echo)] {
                assert!(d.owed > 0, "{what} {mode:?}: nothing owed");
                assert_eq!(d.delivered, d.owed, "{what} {mode:?}");
            }
        }
    }
}
