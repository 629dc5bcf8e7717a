//! Open-loop load: moves sent at a fixed rate by a timer, whatever the answers do, and
//! each latency measured from the move's *scheduled* send time, so a slow answer is
//! charged to every move it held up (no coordinated omission).
//!
//! The schedule runs on a plain thread of its own that sleeps to each instant
//! (`std::thread::sleep`, tens of microseconds late; tokio's timer would round every
//! send up to the next millisecond) and hands the move to its game's task on the client
//! runtime. A game plays its moves in order: one whose previous move is not answered
//! yet sends the next as soon as it is, and the wait counts in the latency.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::harness::{Game, Running, on_client_thread, setup};
use super::stats::{Scratch, percentile_ms};
use crate::store::SqliteStore;

/// What an open-loop run measured.
pub(super) struct OpenSample {
    /// Scheduled send → answer, per move.
    pub latencies: Vec<Duration>,
    /// Scheduled send → the request leaving the client task, per move.
    pub lags: Vec<Duration>,
    /// Events the answers recorded (what watchers are owed).
    pub events: usize,
    /// From the first scheduled send to the last answer.
    pub elapsed: Duration,
}

impl OpenSample {
    /// Moves answered per second.
    pub(super) fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// p50, p99 and p99.9 of the latencies and the p99 of the lags, in ms.
    pub(super) fn summary(&self) -> String {
        format!(
            "{} moves, {:.0}/s answered: p50 {:.2} ms  p99 {:.2} ms  p99.9 {:.2} ms  max {:.2} ms \
             (scheduled send -> answer; send lag p99 {:.2} ms)",
            self.latencies.len(),
            self.per_second(),
            percentile_ms(&self.latencies, 0.50),
            percentile_ms(&self.latencies, 0.99),
            percentile_ms(&self.latencies, 0.999),
            percentile_ms(&self.latencies, 1.0),
            percentile_ms(&self.lags, 0.99),
        )
    }
}

/// Plays `rate` moves a second for `secs` seconds, round-robin over `games`; gives the
/// games back. Runs on the caller's (client) runtime.
pub(super) async fn run(
    games: Vec<Game>,
    rate: f64,
    secs: f64,
    cycle: &Arc<Vec<String>>,
) -> Result<(OpenSample, Vec<Game>), String> {
    if games.is_empty() || rate <= 0.0 {
        return Err("open loop: no games or no rate".into());
    }
    let total = (rate * secs).round().max(1.0) as usize;
    let period = Duration::from_secs_f64(1.0 / rate);
    let mut senders = Vec::with_capacity(games.len());
    let mut tasks = Vec::with_capacity(games.len());
    for mut game in games {
        let (tx, mut rx) = mpsc::unbounded_channel::<Instant>();
        senders.push(tx);
        let cycle = cycle.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut lags = Vec::new();
            let mut events = 0;
            while let Some(scheduled) = rx.recv().await {
                lags.push(Instant::now().saturating_duration_since(scheduled));
                events += game.play(&cycle).await?;
                latencies.push(Instant::now().saturating_duration_since(scheduled));
            }
            Ok::<_, String>((latencies, lags, events, game))
        }));
    }
    // Start a little ahead so the first sends are not late by the thread's start.
    let start = Instant::now() + Duration::from_millis(20);
    let dispatcher = std::thread::Builder::new()
        .name("bench-schedule".into())
        .spawn(move || {
            for k in 0..total {
                let at = start + period.mul_f64(k as f64);
                let wait = at.saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait);
                }
                // A game task that failed has dropped its receiver: its error is reported
                // when it is joined.
                let _ = senders[k % senders.len()].send(at);
            }
        })
        .map_err(|e| format!("schedule thread: {e}"))?;
    let mut sample = OpenSample {
        latencies: Vec::with_capacity(total),
        lags: Vec::with_capacity(total),
        events: 0,
        elapsed: Duration::ZERO,
    };
    let mut games = Vec::with_capacity(tasks.len());
    let mut failed = None;
    for task in tasks {
        match task.await.map_err(|e| format!("task: {e}")).and_then(|r| r) {
            Ok((latencies, lags, events, game)) => {
                sample.latencies.extend(latencies);
                sample.lags.extend(lags);
                sample.events += events;
                games.push(game);
            }
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    sample.elapsed = start.elapsed();
    if dispatcher.join().is_err() {
        return Err("the schedule thread panicked".into());
    }
    match failed {
        Some(e) => Err(e),
        None => Ok((sample, games)),
    }
}

/// Issue 11 item 4: `rate` moves/s over `games` games on the SQLite store for `secs` s.
pub(super) async fn sqlite_run(
    games: usize,
    rate: f64,
    secs: f64,
    scratch: &Scratch,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    let path = scratch.0.join(format!("open-{games}.sqlite"));
    let store = SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let server = Running::real(Arc::new(store)).await?;
    let url = server.url().to_string();
    let cycle = cycle.clone();
    let sample = on_client_thread("bench-clients", move || async move {
        let games = setup(&url, games, true).await?;
        Ok(run(games, rate, secs, &cycle).await?.0)
    })
    .await;
    let stopped = server.stop().await;
    let sample = sample?;
    stopped?;
    println!(
        "open loop sqlite: {rate:.0} moves/s over {games} games for {secs:.0} s: {}  (target p99 <= 2 ms)",
        sample.summary()
    );
    Ok(())
}
