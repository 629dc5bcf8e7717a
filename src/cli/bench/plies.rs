//! Game length: the server's CPU per `SubmitMove` on short games (ply about 10) and long
//! ones (ply about 300), memory store, so that a cost growing with the game's length
//! (a scan of its history, a copy of its move list) shows.
//!
//! The server's CPU is the process's minus the client thread's, both read from
//! `/proc/self/task/*/schedstat` (nanoseconds on the CPU per thread) before and after a
//! batch. Only the client thread runs besides the server meanwhile, so the difference is
//! the server's runtime, its timers and what else it spawned.

use std::sync::Arc;
use std::time::Duration;

use super::harness::{Game, Running, on_client_thread, play, setup};
use super::stats::range;
use crate::store::MemoryStore;

/// The sizes of a game-length run.
pub(super) struct PliesPlan {
    /// Games per set (short and long).
    pub games: usize,
    /// Plies the short games have played when measured.
    pub short: usize,
    /// Plies the long games have played when measured.
    pub long: usize,
    /// Moves each game plays per measured batch.
    pub batch: usize,
    /// Batches per set, alternating short and long.
    pub rounds: usize,
}

/// Nanoseconds on the CPU of every thread of the process, and of the calling thread.
fn cpu_ns() -> Result<(u64, u64), String> {
    let read = |path: &std::path::Path| -> Option<u64> {
        std::fs::read_to_string(path)
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let mine = read(std::path::Path::new("/proc/thread-self/schedstat"))
        .ok_or("no /proc/thread-self/schedstat")?;
    let mut all = 0;
    for entry in
        std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?
    {
        let entry = entry.map_err(|e| format!("/proc/self/task: {e}"))?;
        // A thread that ended meanwhile is skipped.
        all += read(&entry.path().join("schedstat")).unwrap_or(0);
    }
    Ok((all, mine))
}

/// Plays one batch and returns the server's CPU per move and the moves per second.
async fn batch(
    games: Vec<Game>,
    moves: usize,
    cycle: &Arc<Vec<String>>,
) -> Result<(Duration, f64, Vec<Game>), String> {
    let n = games.len() * moves;
    let (all0, mine0) = cpu_ns()?;
    let (sample, games) = play(games, moves, cycle).await?;
    let (all1, mine1) = cpu_ns()?;
    let server = (all1.saturating_sub(all0)).saturating_sub(mine1.saturating_sub(mine0));
    Ok((
        Duration::from_nanos(server / n.max(1) as u64),
        sample.per_second(),
        games,
    ))
}

/// Issue 11 item 5.
pub(super) async fn run(plan: &PliesPlan, cycle: &Arc<Vec<String>>) -> Result<(), String> {
    let server = Running::real(Arc::new(MemoryStore::new())).await?;
    let url = server.url().to_string();
    let cycle = cycle.clone();
    let (games, short, long, moves, rounds) =
        (plan.games, plan.short, plan.long, plan.batch, plan.rounds);
    let measured = on_client_thread("bench-clients", move || async move {
        let (_, mut shorts) = play(setup(&url, games, true).await?, short, &cycle).await?;
        let (_, mut longs) = play(setup(&url, games, true).await?, long, &cycle).await?;
        let mut per_move = (Vec::new(), Vec::new());
        let mut rates = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (cpu, rate, g) = batch(shorts, moves, &cycle).await?;
            shorts = g;
            per_move.0.push(cpu.as_secs_f64() * 1e6);
            rates.0.push(rate);
            let (cpu, rate, g) = batch(longs, moves, &cycle).await?;
            longs = g;
            per_move.1.push(cpu.as_secs_f64() * 1e6);
            rates.1.push(rate);
        }
        let plies = (
            shorts.first().map_or(0, |g| g.ply),
            longs.first().map_or(0, |g| g.ply),
        );
        Ok((per_move, rates, plies))
    })
    .await;
    let stopped = server.stop().await;
    let ((short_cpu, long_cpu), (short_rate, long_rate), (short_end, long_end)) = measured?;
    stopped?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "plies: {games} games per set, {rounds} alternating batches of {moves} moves per game (memory store); \
         short games at plies {short}-{short_end}, long ones at {long}-{long_end}"
    );
    println!(
        "plies: server CPU per SubmitMove: ply ~{short}: {} us ({} moves/s), ply ~{long}: {} us ({} moves/s); \
         long/short {:.2}  (target within 10%)",
        range(&short_cpu, 1),
        range(&short_rate, 0),
        range(&long_cpu, 1),
        range(&long_rate, 0),
        mean(&long_cpu) / mean(&short_cpu).max(1e-9)
    );
    Ok(())
}
