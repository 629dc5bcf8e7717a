//! The transport anchor: a bare tonic `GameService` that answers every `SubmitMove` with
//! one canned response captured from the real service (same encoded size), decides
//! nothing and records nothing. Driven by the same client code, alternating with the
//! real service on the memory store, it says how much of a move's cost is gRPC, HTTP/2
//! and loopback TCP alone.

use std::sync::Arc;
use std::time::Instant;

use prost::Message;
use tonic::{Request, Response, Status};

use super::harness::{Running, closed_loop_run, on_client_thread, setup};
use super::{Sample, range};
use crate::api::pb;
use crate::store::MemoryStore;

/// The echo service: only `SubmitMove` answers.
pub(super) struct Echo {
    canned: pb::SubmitMoveResponse,
}

impl Echo {
    pub(super) fn new(canned: pb::SubmitMoveResponse) -> Echo {
        Echo { canned }
    }
}

fn only_submit() -> Status {
    Status::unimplemented("the echo server answers SubmitMove only")
}

#[tonic::async_trait]
impl pb::game_service_server::GameService for Echo {
    async fn create_game(
        &self,
        _: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        Err(only_submit())
    }

    async fn get_game(&self, _: Request<pb::GetGameRequest>) -> Result<Response<pb::Game>, Status> {
        Err(only_submit())
    }

    async fn list_games(
        &self,
        _: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        Err(only_submit())
    }

    async fn start_game(
        &self,
        _: Request<pb::StartGameRequest>,
    ) -> Result<Response<pb::StartGameResponse>, Status> {
        Err(only_submit())
    }

    async fn submit_move(
        &self,
        _: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        Ok(Response::new(self.canned.clone()))
    }

    async fn press_clock(
        &self,
        _: Request<pb::PressClockRequest>,
    ) -> Result<Response<pb::PressClockResponse>, Status> {
        Err(only_submit())
    }

    async fn offer_draw(
        &self,
        _: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        Err(only_submit())
    }

    async fn respond_to_draw_offer(
        &self,
        _: Request<pb::RespondToDrawOfferRequest>,
    ) -> Result<Response<pb::RespondToDrawOfferResponse>, Status> {
        Err(only_submit())
    }

    async fn claim_draw(
        &self,
        _: Request<pb::ClaimDrawRequest>,
    ) -> Result<Response<pb::ClaimDrawResponse>, Status> {
        Err(only_submit())
    }

    async fn resign(
        &self,
        _: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        Err(only_submit())
    }
}

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
        let request = pb::SubmitMoveRequest {
            game_id: game.id.clone(),
            r#move: cycle[game.ply % cycle.len()].clone(),
            expected_seq: game.seq,
            side: 0,
        };
        game.client
            .submit_move(request)
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| format!("capture: {:?}: {}", s.code(), s.message()))
    })
    .await;
    let stopped = server.stop().await;
    let captured = captured?;
    stopped?;
    Ok(captured)
}

/// Moves per run at least, over all its games.
const ANCHOR_MIN_MOVES: usize = 2000;

/// One figure per number of games: `rounds` pairs of runs, echo then service (memory),
/// each on a fresh server; the ratio of each pair's throughputs.
pub(super) async fn anchor(
    canned: &pb::SubmitMoveResponse,
    games: &[usize],
    moves: usize,
    rounds: usize,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    println!(
        "anchor: echo server answers SubmitMove with a canned {}-byte response (captured from the service); \
         {rounds} alternating pairs per size, {moves} moves per game (at least {ANCHOR_MIN_MOVES} per run)",
        canned.encoded_len()
    );
    for &n in games {
        // Short runs are all noise: one game plays enough moves to last a while.
        let moves = moves.max(ANCHOR_MIN_MOVES.div_ceil(n));
        let began = Instant::now();
        let mut ratios = Vec::with_capacity(rounds);
        let mut echo_rates = Vec::with_capacity(rounds);
        let mut service_rates = Vec::with_capacity(rounds);
        let mut last: Option<(Sample, Sample)> = None;
        for _ in 0..rounds {
            let echo =
                closed_loop_run(Running::echo(canned.clone()).await?, n, moves, cycle, false)
                    .await?;
            let service = closed_loop_run(
                Running::real(Arc::new(MemoryStore::new())).await?,
                n,
                moves,
                cycle,
                true,
            )
            .await?;
            ratios.push(service.per_second() / echo.per_second().max(1e-9));
            echo_rates.push(echo.per_second());
            service_rates.push(service.per_second());
            last = Some((echo, service));
        }
        if let Some((echo, service)) = last {
            println!("{}", echo.line("echo (last)", n, "moves"));
            println!("{}", service.line("memory (last)", n, "moves"));
        }
        println!(
            "games={n:<4} anchor memory/echo  {} (echo {} moves/s, memory {} moves/s; {:.1} s)  (target >= 0.8)",
            range(&ratios, 2),
            range(&echo_rates, 0),
            range(&service_rates, 0),
            began.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
