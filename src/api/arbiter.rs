//! `ArbiterService`: the arbiter's rulings and clock powers. What the arbiter gives
//! (reason, rule) is recorded as given: in the events, GetGame and the PDN annotations.
//! Each request is parsed in [`super::request`] and sent by [`Api::game_request`].

use tonic::{Request, Response, Status};

use super::pb;
use super::service::Api;

#[tonic::async_trait]
impl pb::arbiter_service_server::ArbiterService for Api {
    async fn pause_clocks(
        &self,
        req: Request<pb::PauseClocksRequest>,
    ) -> Result<Response<pb::PauseClocksResponse>, Status> {
        reply!(PauseClocksResponse, self.game_request(req).await?)
    }

    async fn resume_clocks(
        &self,
        req: Request<pb::ResumeClocksRequest>,
    ) -> Result<Response<pb::ResumeClocksResponse>, Status> {
        reply!(ResumeClocksResponse, self.game_request(req).await?)
    }

    async fn adjust_clock(
        &self,
        req: Request<pb::AdjustClockRequest>,
    ) -> Result<Response<pb::AdjustClockResponse>, Status> {
        reply!(AdjustClockResponse, self.game_request(req).await?)
    }

    async fn declare_result(
        &self,
        req: Request<pb::DeclareResultRequest>,
    ) -> Result<Response<pb::DeclareResultResponse>, Status> {
        let game_id = req.get_ref().game_id.clone();
        let pair = self.game_request(req).await?;
        // A tournament's game: the tournament takes the result (or the correction) in
        // now, so what follows from it (the standings on its streams) follows at once
        // rather than at its next read. Not a tournament's game, or a failure to read it
        // (taken in at the next read): nothing more.
        if !pair.0.event.is_empty() {
            let key = crate::tournament::event_key(pair.0.event.trim());
            if let Err(e) = self.tournaments().get(&key).await {
                tracing::debug!(game = %game_id, error = %e, "declared result: no tournament read");
            }
        }
        reply!(DeclareResultResponse, pair)
    }

    async fn rule_on_claim(
        &self,
        req: Request<pb::RuleOnClaimRequest>,
    ) -> Result<Response<pb::RuleOnClaimResponse>, Status> {
        reply!(RuleOnClaimResponse, self.game_request(req).await?)
    }

    async fn rule_on_irregularity(
        &self,
        req: Request<pb::RuleOnIrregularityRequest>,
    ) -> Result<Response<pb::RuleOnIrregularityResponse>, Status> {
        reply!(RuleOnIrregularityResponse, self.game_request(req).await?)
    }

    async fn issue_warning(
        &self,
        req: Request<pb::IssueWarningRequest>,
    ) -> Result<Response<pb::IssueWarningResponse>, Status> {
        reply!(IssueWarningResponse, self.game_request(req).await?)
    }

    async fn start_forty_move_count(
        &self,
        req: Request<pb::StartFortyMoveCountRequest>,
    ) -> Result<Response<pb::StartFortyMoveCountResponse>, Status> {
        reply!(StartFortyMoveCountResponse, self.game_request(req).await?)
    }

    async fn set_position(
        &self,
        req: Request<pb::SetPositionRequest>,
    ) -> Result<Response<pb::SetPositionResponse>, Status> {
        reply!(SetPositionResponse, self.game_request(req).await?)
    }
}
