//! The transport anchor's runs: a response captured from the real service, then pairs of
//! closed-loop runs on the echo (`echo.rs`) and on the real service (memory store).

use std::sync::Arc;
use std::time::{Duration, Instant};

use prost::Message;

use super::harness::{Running, closed_loop_run, on_client_thread, setup};
use super::stats::range;
use crate::api::pb;
use crate::store::MemoryStore;

/// A real `SubmitMoveResponse`: the fifth move of a game on the real service (memory
/// store), past the first cycle so its seq and clocks have their usual width.
pub(super) async fn capture(cycle: &Arc<Vec<String>>) -> Result<pb::SubmitMoveResponse, String> {
    let server = Running::real(Arc::new(MemoryStore::new())).await?;
    let url = server.url().to_string();
    let cycle = cycle.clone();
    let captured = on_client_thread("bench-capture", move || async move {
        let mut game = setup(&url, 1, true)
            .await?
            .pop()
            .ok_or("no game to capture from")?;
        for _ in 0..4 {
            game.play(&cycle).await?;
        }
        game.submit(&cycle).await
    })
    .await;
    let stopped = server.stop().await;
    let captured = captured?;
    stopped?;
    Ok(captured)
}

/// Moves per game before each anchor run is measured (connections and windows warm).
const ANCHOR_WARMUP: usize = 4;

/// One figure per number of games: pairs of runs, echo then service (memory), each on
/// a fresh server, together about `total` moves a side (at least `rounds` pairs). A game
/// plays at most `moves` moves, as in the closed-loop lines: a session's copy grows
/// with its length, so longer games would measure the game's length, not the transport.
/// Prints the pooled ratio (all service moves over their time, against the echo's) and
/// the range of the pairs' ratios.
pub(super) async fn anchor(
    canned: &pb::SubmitMoveResponse,
    games: &[usize],
    plan: (usize, usize, usize),
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    let (total, moves, rounds) = plan;
    println!(
        "anchor: echo server answers SubmitMove with a canned {}-byte response (captured from the service); \
         alternating pairs, at least {rounds} and about {total} moves a side per size, at most {moves} moves per game after {ANCHOR_WARMUP} not measured",
        canned.encoded_len()
    );
    for &n in games {
        let per_game = moves.min(total.div_ceil(n)).max(1);
        let pairs = rounds.max(total.div_ceil(n * per_game));
        let sizes = (n, per_game, ANCHOR_WARMUP);
        let began = Instant::now();
        let mut ratios = Vec::with_capacity(pairs);
        let (mut echo_time, mut service_time) = (Duration::ZERO, Duration::ZERO);
        let (mut echo_moves, mut service_moves) = (0, 0);
        for _ in 0..pairs {
            let echo =
                closed_loop_run(Running::echo(canned.clone()).await?, sizes, cycle, false).await?;
            let service = closed_loop_run(
                Running::real(Arc::new(MemoryStore::new())).await?,
                sizes,
                cycle,
                true,
            )
            .await?;
            ratios.push(service.per_second() / echo.per_second().max(1e-9));
            echo_time += echo.elapsed;
            echo_moves += echo.latencies.len();
            service_time += service.elapsed;
            service_moves += service.latencies.len();
        }
        let rate = |moves: usize, time: Duration| moves as f64 / time.as_secs_f64().max(1e-9);
        let (echo_rate, service_rate) = (
            rate(echo_moves, echo_time),
            rate(service_moves, service_time),
        );
        println!(
            "games={n:<4} anchor memory/echo  {:.2} (pairs {}; echo {echo_rate:.0} moves/s, memory {service_rate:.0} moves/s; \
             {pairs} pairs of {per_game} moves per game in {:.1} s)  (target >= 0.8)",
            service_rate / echo_rate.max(1e-9),
            range(&ratios, 2),
            began.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
