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

use tokio::sync::{mpsc, oneshot, watch};

use super::harness::{Running, connect, on_client_thread, setup};
use super::open_loop::{self, OpenSample};
use super::stats::percentile_ms_f64;
use crate::api::pb;
use crate::api::pb::broadcast_service_client::BroadcastServiceClient;
use crate::store::MemoryStore;

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
}

/// What the watchers saw.
struct Seen {
    /// Publish → receive, ms, per delivered event.
    latencies: Vec<f64>,
    resyncs: usize,
    errors: usize,
    /// First to last delivery.
    span: Duration,
}

/// Issue 11 item 1: the movers alone, then with the watchers, then alone again.
pub(super) async fn run(plan: &FanoutPlan, cycle: &Arc<Vec<String>>) -> Result<(), String> {
    if plan.games == 0 || plan.watchers == 0 || plan.connections == 0 {
        return Err("fanout: games, watchers and connections must be at least 1".into());
    }
    let server = Running::real(Arc::new(MemoryStore::new())).await?;
    let result = phases(&server, plan, cycle).await;
    let stopped = server.stop().await;
    result?;
    stopped
}

async fn phases(
    server: &Running,
    plan: &FanoutPlan,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    let url = server.url().to_string();
    let (games, rate, secs) = (plan.games, plan.rate, plan.secs);
    println!(
        "fanout: {} watchers over {} connections on {games} games moving {rate:.0} moves/s \
         (memory store); {secs:.0} s without, with, without",
        plan.watchers, plan.connections
    );
    // One movers thread for the three phases: a channel lives on the runtime it was
    // made on.
    let (phase_tx, mut phases) = mpsc::unbounded_channel();
    let (go_tx, mut go) = mpsc::unbounded_channel::<()>();
    let movers = {
        let (url, cycle) = (url.clone(), cycle.clone());
        on_client_thread("bench-movers", move || async move {
            let mut games = setup(&url, games, true).await?;
            for phase in 0..3 {
                if phase > 0 && go.recv().await.is_none() {
                    break;
                }
                let (sample, g) = open_loop::run(games, rate, secs, &cycle).await?;
                games = g;
                let targets: Vec<(String, u64)> =
                    games.iter().map(|g| (g.id.clone(), g.seq)).collect();
                if phase_tx.send((sample, targets)).is_err() {
                    break;
                }
            }
            Ok(())
        })
    };
    let Some((before, targets)) = phases.recv().await else {
        return movers.await;
    };
    println!("fanout: without watchers: {}", before.summary());

    let (ready_tx, ready) = oneshot::channel();
    let (stop, stopped) = watch::channel(false);
    let opening = Instant::now();
    let watchers = {
        let (url, watchers, connections) = (url.clone(), plan.watchers, plan.connections);
        on_client_thread("bench-watchers", move || {
            watch_all(url, targets, watchers, connections, ready_tx, stopped)
        })
    };
    let opened = match ready.await {
        Ok(r) => r?,
        // The thread ended before it was ready: its result says why.
        Err(_) => return watchers.await.map(|_| ()),
    };
    println!(
        "fanout: {opened} WatchGame streams open in {:.2} s",
        opening.elapsed().as_secs_f64()
    );
    let _ = go_tx.send(());
    let Some((with, _)) = phases.recv().await else {
        let _ = stop.send(true);
        return movers.await;
    };
    // Let the last deliveries arrive.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = stop.send(true);
    let seen = watchers.await?;
    println!("fanout: with watchers:    {}", with.summary());

    let _ = go_tx.send(());
    let Some((after, _)) = phases.recv().await else {
        return movers.await;
    };
    movers.await?;
    println!("fanout: without again:    {}", after.summary());

    report(plan, &before, &with, &after, &seen);
    Ok(())
}

fn report(
    plan: &FanoutPlan,
    before: &OpenSample,
    with: &OpenSample,
    after: &OpenSample,
    seen: &Seen,
) {
    // Exact when the watchers divide evenly over the games, as by default.
    let owed = with.events * plan.watchers / plan.games;
    let delivered = seen.latencies.len();
    println!(
        "fanout: {delivered} deliveries of {owed} owed ({} resyncs, {} stream errors) in {:.2} s = {:.0} deliveries/s; \
         publish->receive p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  (target p99 <= 50 ms)",
        seen.resyncs,
        seen.errors,
        seen.span.as_secs_f64(),
        delivered as f64 / seen.span.as_secs_f64().max(1e-9),
        percentile_ms_f64(&seen.latencies, 0.50),
        percentile_ms_f64(&seen.latencies, 0.99),
        percentile_ms_f64(&seen.latencies, 1.0),
    );
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
    targets: Vec<(String, u64)>,
    watchers: usize,
    connections: usize,
    ready: oneshot::Sender<Result<usize, String>>,
    stop: watch::Receiver<bool>,
) -> Result<Seen, String> {
    let opened = open(&url, &targets, watchers, connections).await;
    let streams = match opened {
        Ok(s) => {
            let _ = ready.send(Ok(s.len()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(e.clone()));
            return Err(e);
        }
    };
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
                        if matches!(event.kind, Some(pb::game_event::Kind::Resync(_))) {
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
    let mut seen = Seen {
        latencies: Vec::new(),
        resyncs: 0,
        errors: 0,
        span: Duration::ZERO,
    };
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
) -> Result<Vec<tonic::Streaming<pb::GameEvent>>, String> {
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        clients.push(BroadcastServiceClient::new(connect(url).await?));
    }
    let mut calls = Vec::with_capacity(watchers);
    for i in 0..watchers {
        let mut client = clients[i % connections].clone();
        let (game_id, from_seq) = targets[i % targets.len()].clone();
        calls.push(tokio::spawn(async move {
            client
                .watch_game(pb::WatchGameRequest { game_id, from_seq })
                .await
                .map(tonic::Response::into_inner)
                .map_err(|s| format!("WatchGame: {:?}: {}", s.code(), s.message()))
        }));
    }
    let mut streams = Vec::with_capacity(watchers);
    for call in calls {
        streams.push(call.await.map_err(|e| format!("watch task: {e}"))??);
    }
    Ok(streams)
}
