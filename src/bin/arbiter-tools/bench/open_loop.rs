//! Open-loop load: moves sent at a fixed rate by a timer, whatever the answers do, and
//! each latency measured from the move's *scheduled* send time, so a slow answer is
//! charged to every move it held up (no coordinated omission).
//!
//! The schedule runs on a plain thread of its own that sleeps to each instant
//! (`std::thread::sleep`, tens of microseconds late; tokio's timer would round every
//! send up to the next millisecond) and hands the move to its game's task on the client
//! runtime. A game plays its moves in order: one whose previous move is not answered
//! yet sends the next as soon as it is, and the wait counts in the latency.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::harness::{Game, Running, on_client_thread, setup};
use super::raw_game;
use super::stats::{Scratch, percentile_ms};
use draughts_arbiter::store::{EventStore, SqliteStore, Stream};

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
    let cycle = cycle.clone();
    let (sample, games) = scheduled(games, rate, secs, move |mut game: Game| {
        let cycle = cycle.clone();
        async move {
            let events = game.play(&cycle).await?;
            Ok((game, events))
        }
    })
    .await?;
    Ok((sample, games))
}

/// The events of one move as the service writes them, in bytes: a `MovePlayed` and its
/// `ClockPressed` in the bench's games (269 and 218 in the log of such a game).
const MOVE_PAYLOADS: [usize; 2] = [270, 220];

/// The same schedule straight on the store, without the service: `rate` appends a second
/// of one move's two events, round-robin over `games` games of their own. What the
/// service's open-loop latency cannot go below on this disk.
async fn raw_run(
    store: &Arc<SqliteStore>,
    games: usize,
    rate: f64,
    secs: f64,
) -> Result<OpenSample, String> {
    let mut logs = Vec::with_capacity(games);
    for i in 0..games {
        let game_id = format!("open-raw-{i}");
        store
            .create_game(raw_game(game_id.clone(), i))
            .await
            .map_err(|e| format!("open loop raw: {e}"))?;
        logs.push((game_id, 1_u64));
    }
    let store = store.clone();
    let (sample, _) = scheduled(logs, rate, secs, move |(game_id, next): (String, u64)| {
        let store = store.clone();
        async move {
            let payloads = MOVE_PAYLOADS.iter().map(|&n| vec![b'x'; n]).collect();
            let last = store
                .append(Stream::Game(&game_id), next, payloads, None)
                .await
                .map_err(|e| format!("open loop raw {game_id}: {e}"))?;
            Ok(((game_id, last + 1), MOVE_PAYLOADS.len()))
        }
    })
    .await?;
    Ok(sample)
}

/// Sends `rate` moves a second for `secs` seconds, round-robin over `players`, each
/// playing its moves in order with `play` (which gives the player back with the events
/// the move recorded); gives the players back.
async fn scheduled<P, F, Fut>(
    players: Vec<P>,
    rate: f64,
    secs: f64,
    play: F,
) -> Result<(OpenSample, Vec<P>), String>
where
    P: Send + 'static,
    F: Fn(P) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<(P, usize), String>> + Send,
{
    if players.is_empty() || rate <= 0.0 {
        return Err("open loop: no games or no rate".into());
    }
    let total = (rate * secs).round().max(1.0) as usize;
    let period = Duration::from_secs_f64(1.0 / rate);
    let mut senders = Vec::with_capacity(players.len());
    let mut tasks = Vec::with_capacity(players.len());
    for player in players {
        let (tx, mut rx) = mpsc::unbounded_channel::<Instant>();
        senders.push(tx);
        let play = play.clone();
        tasks.push(tokio::spawn(async move {
            let mut player = player;
            let mut latencies = Vec::new();
            let mut lags = Vec::new();
            let mut events = 0;
            while let Some(scheduled) = rx.recv().await {
                lags.push(Instant::now().saturating_duration_since(scheduled));
                let (back, recorded) = play(player).await?;
                player = back;
                events += recorded;
                latencies.push(Instant::now().saturating_duration_since(scheduled));
            }
            Ok::<_, String>((latencies, lags, events, player))
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
    let mut players = Vec::with_capacity(tasks.len());
    let mut failed = None;
    for task in tasks {
        match task.await.map_err(|e| format!("task: {e}")).and_then(|r| r) {
            Ok((latencies, lags, events, player)) => {
                sample.latencies.extend(latencies);
                sample.lags.extend(lags);
                sample.events += events;
                players.push(player);
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
        None => Ok((sample, players)),
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
    let path = scratch.0.join(format!("open-raw-{games}.sqlite"));
    let raw = Arc::new(SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?);
    let store_alone = raw_run(&raw, games, rate, secs).await;
    raw.close()
        .await
        .map_err(|e| format!("open loop raw: {e}"))?;
    println!(
        "open loop raw sqlite (the store alone, same schedule, no service): {}",
        store_alone?.summary()
    );
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
