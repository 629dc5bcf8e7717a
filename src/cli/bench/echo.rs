//! The transport anchor's server: a bare tonic `GameService` that answers every
//! `SubmitMove` with one canned response captured from the real service (same encoded
//! size), decides nothing and records nothing. Driven by the same client code,
//! alternating with the real service on the memory store (`anchor.rs`), it says how much
//! of a move's cost is gRPC, HTTP/2 and loopback TCP alone.

use tonic::{Request, Response, Status};

use crate::api::pb;

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
