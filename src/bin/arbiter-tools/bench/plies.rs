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
use super::stats::{percentile_ms_f64, range};
use draughts_arbiter::store::MemoryStore;

/// The sizes of a game-length run.
pub(super) struct PliesPlan {
    /// Games per set (short and long).
    pub games: usize,
    /// Plies the short games have played when measured (a fresh set each round).
    pub short: usize,
    /// Plies the long games have played when first measured.
    pub long: usize,
    /// Moves each game plays per measured batch.
    pub batch: usize,
    /// Pairs of batches (a short one and a long one, in alternating order).
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
///
/// Each round plays a batch on a fresh set of short games (so that they stay at ply
/// ~`short` however many rounds run) and one on the long games, the short batch first in
/// even rounds and the long one first in odd ones, so that neither side always follows the
/// other. The ratio is taken per round, of two batches a few hundred milliseconds apart, so
/// that a slow spell of the machine weighs on one ratio rather than on one side: the
/// median of the rounds' ratios is the figure, their range beside it.
pub(super) async fn run(plan: &PliesPlan, cycle: &Arc<Vec<String>>) -> Result<(), String> {
    let server = Running::real(Arc::new(MemoryStore::new())).await?;
    let url = server.url().to_string();
    let cycle = cycle.clone();
    let (games, short, long, moves, rounds) =
        (plan.games, plan.short, plan.long, plan.batch, plan.rounds);
    let measured = on_client_thread("bench-clients", move || async move {
        let (_, mut longs) = play(setup(&url, games, true).await?, long, &cycle).await?;
        let mut per_move = (Vec::new(), Vec::new());
        let mut rates = (Vec::new(), Vec::new());
        let mut short_end = 0;
        for round in 0..rounds {
            let (_, shorts) = play(setup(&url, games, true).await?, short, &cycle).await?;
            let long_first = round % 2 == 1;
            if long_first {
                let (cpu, rate, g) = batch(longs, moves, &cycle).await?;
                longs = g;
                per_move.1.push(cpu.as_secs_f64() * 1e6);
                rates.1.push(rate);
            }
            let (cpu, rate, shorts) = batch(shorts, moves, &cycle).await?;
            short_end = shorts.first().map_or(0, |g| g.ply);
            per_move.0.push(cpu.as_secs_f64() * 1e6);
            rates.0.push(rate);
            if !long_first {
                let (cpu, rate, g) = batch(longs, moves, &cycle).await?;
                longs = g;
                per_move.1.push(cpu.as_secs_f64() * 1e6);
                rates.1.push(rate);
            }
        }
        let long_end = longs.first().map_or(0, |g| g.ply);
        Ok((per_move, rates, (short_end, long_end)))
    })
    .await;
    let stopped = server.stop().await;
    let ((short_cpu, long_cpu), (short_rate, long_rate), (short_end, long_end)) = measured?;
    stopped?;
    let ratios: Vec<f64> = long_cpu
        .iter()
        .zip(&short_cpu)
        .map(|(l, s)| l / s.max(1e-9))
        .collect();
    println!(
        "plies: {games} games per set, {rounds} rounds of {moves} moves per game on a fresh set of short games \
         (plies {short}-{short_end}) and on the long games (plies {long}-{long_end}), in alternating order (memory store)"
    );
    println!(
        "plies: server CPU per SubmitMove: ply ~{short}: {} us ({} moves/s), ply ~{long}: {} us ({} moves/s); \
         long/short {:.2} (median of the rounds; rounds {})  (target within 10%)",
        range(&short_cpu, 1),
        range(&short_rate, 0),
        range(&long_cpu, 1),
        range(&long_rate, 0),
        percentile_ms_f64(&ratios, 0.5),
        range(&ratios, 2),
    );
    Ok(())
}
