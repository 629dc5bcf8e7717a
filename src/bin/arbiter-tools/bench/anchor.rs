//! The transport anchor's runs: a response captured from the real service, then pairs of
//! closed-loop runs on the echo (`echo.rs`) and on the real service (memory store).

use std::sync::Arc;
use std::time::{Duration, Instant};

use prost::Message;

use super::harness::{Running, closed_loop_run, on_client_thread, setup};
use super::stats::{Sample, range};
use draughts_arbiter::api::pb;
use draughts_arbiter::store::MemoryStore;

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

/// One figure per number of games: rounds of three closed-loop runs, the echo, the echo
/// with a hop and the service (memory), each on a fresh server, together about `total`
/// moves each (at least `rounds` rounds). A game plays at most `moves` moves, as in the
/// closed-loop lines. Prints the pooled ratios (all of one server's moves over their time,
/// against the echo's) and the range of the rounds' ratios: `memory/echo` is the figure,
/// `hop/echo` the floor the hop to a game's task sets under it.
pub(super) async fn anchor(
    canned: &pb::SubmitMoveResponse,
    games: &[usize],
    plan: (usize, usize, usize),
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    let (total, moves, rounds) = plan;
    println!(
        "anchor: echo server answers SubmitMove with a canned {}-byte response (captured from the service), \
         at once or from a task per game (hop); rounds of echo, hop and memory runs, at least {rounds} and about {total} moves each per size, \
         at most {moves} moves per game after {ANCHOR_WARMUP} not measured",
        canned.encoded_len()
    );
    for &n in games {
        let per_game = moves.min(total.div_ceil(n)).max(1);
        let pairs = rounds.max(total.div_ceil(n * per_game));
        let sizes = (n, per_game, ANCHOR_WARMUP);
        let began = Instant::now();
        let (mut ratios, mut hop_ratios) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
        let (mut echo, mut hop, mut service) =
            (Tally::default(), Tally::default(), Tally::default());
        for _ in 0..pairs {
            let e =
                closed_loop_run(Running::echo(canned.clone()).await?, sizes, cycle, false).await?;
            let h = closed_loop_run(
                Running::echo_hop(canned.clone()).await?,
                sizes,
                cycle,
                false,
            )
            .await?;
            let s = closed_loop_run(
                Running::real(Arc::new(MemoryStore::new())).await?,
                sizes,
                cycle,
                true,
            )
            .await?;
            ratios.push(s.per_second() / e.per_second().max(1e-9));
            hop_ratios.push(h.per_second() / e.per_second().max(1e-9));
            echo.add(&e);
            hop.add(&h);
            service.add(&s);
        }
        println!(
            "games={n:<4} anchor memory/echo  {:.2} (rounds {}; echo {:.0} moves/s, memory {:.0} moves/s; \
             {pairs} rounds of {per_game} moves per game in {:.1} s)  (target >= 0.8); hop/echo {:.2} (rounds {}; {:.0} moves/s)",
            service.rate() / echo.rate().max(1e-9),
            range(&ratios, 2),
            echo.rate(),
            service.rate(),
            began.elapsed().as_secs_f64(),
            hop.rate() / echo.rate().max(1e-9),
            range(&hop_ratios, 2),
            hop.rate(),
        );
    }
    Ok(())
}

/// Moves and time of one server's runs, pooled.
#[derive(Default)]
struct Tally {
    moves: usize,
    time: Duration,
}

impl Tally {
    fn add(&mut self, run: &Sample) {
        self.moves += run.latencies.len();
        self.time += run.elapsed;
    }

    fn rate(&self) -> f64 {
        self.moves as f64 / self.time.as_secs_f64().max(1e-9)
    }
}
