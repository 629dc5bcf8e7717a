//! `ArbiterService`: the arbiter's rulings and clock powers.

use tonic::{Request, Response, Status};

use super::convert;
use super::error::bad;
use super::pb;
use super::service::Api;
use crate::game::{ArbiterAction, Ruling};

#[tonic::async_trait]
impl pb::arbiter_service_server::ArbiterService for Api {
    async fn pause_clocks(
        &self,
        req: Request<pb::PauseClocksRequest>,
    ) -> Result<Response<pb::PauseClocksResponse>, Status> {
        let role = self.role(&req)?;
        let pair = self
            .arbitrate(role, &req.get_ref().game_id, ArbiterAction::PauseClocks)
            .await?;
        reply!(PauseClocksResponse, pair)
    }

    async fn resume_clocks(
        &self,
        req: Request<pb::ResumeClocksRequest>,
    ) -> Result<Response<pb::ResumeClocksResponse>, Status> {
        let role = self.role(&req)?;
        let pair = self
            .arbitrate(role, &req.get_ref().game_id, ArbiterAction::ResumeClocks)
            .await?;
        reply!(ResumeClocksResponse, pair)
    }

    async fn adjust_clock(
        &self,
        req: Request<pb::AdjustClockRequest>,
    ) -> Result<Response<pb::AdjustClockResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let side = convert::side(r.side, "side").map_err(bad)?;
        let action = match r.change {
            Some(pb::adjust_clock_request::Change::SetRemainingMs(ms)) if ms > 0 => {
                ArbiterAction::SetTime {
                    side,
                    remaining_ms: ms as u64,
                }
            }
            Some(pb::adjust_clock_request::Change::AddMs(ms)) if ms > 0 => ArbiterAction::AddTime {
                side,
                amount_ms: ms as u64,
            },
            Some(pb::adjust_clock_request::Change::AddMs(ms)) if ms < 0 => ArbiterAction::Penalty {
                side,
                amount_ms: ms.unsigned_abs(),
                reason: r.reason.clone(),
            },
            _ => {
                return Err(Status::invalid_argument(
                    "change: set_remaining_ms > 0 or a non-zero add_ms required",
                ));
            }
        };
        let pair = self.arbitrate(role, &r.game_id, action).await?;
        reply!(AdjustClockResponse, pair)
    }

    async fn declare_result(
        &self,
        req: Request<pb::DeclareResultRequest>,
    ) -> Result<Response<pb::DeclareResultResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let outcome = convert::outcome(r.result).map_err(bad)?;
        let reason = if r.explanation.trim().is_empty() {
            "arbiter's decision".to_string()
        } else {
            r.explanation
        };
        let pair = self
            .arbitrate(
                role,
                &r.game_id,
                ArbiterAction::DeclareResult { outcome, reason },
            )
            .await?;
        reply!(DeclareResultResponse, pair)
    }

    async fn rule_on_claim(
        &self,
        req: Request<pb::RuleOnClaimRequest>,
    ) -> Result<Response<pb::RuleOnClaimResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let upheld = match pb::ClaimRuling::try_from(r.ruling) {
            Ok(pb::ClaimRuling::Correct) => true,
            Ok(pb::ClaimRuling::Incorrect) => false,
            _ => {
                return Err(Status::invalid_argument(
                    "ruling: CORRECT or INCORRECT required",
                ));
            }
        };
        let pair = self
            .arbitrate(role, &r.game_id, ArbiterAction::RuleOnClaim { upheld })
            .await?;
        reply!(RuleOnClaimResponse, pair)
    }

    async fn rule_on_irregularity(
        &self,
        req: Request<pb::RuleOnIrregularityRequest>,
    ) -> Result<Response<pb::RuleOnIrregularityResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let ruling = match pb::IrregularityRuling::try_from(r.ruling) {
            Ok(pb::IrregularityRuling::Stands) => Ruling::Stands,
            Ok(pb::IrregularityRuling::Corrected) => Ruling::Corrected,
            _ => {
                return Err(Status::invalid_argument(
                    "ruling: STANDS or CORRECTED required",
                ));
            }
        };
        let pair = self
            .arbitrate(
                role,
                &r.game_id,
                ArbiterAction::RuleOnIrregularity { ruling },
            )
            .await?;
        reply!(RuleOnIrregularityResponse, pair)
    }

    async fn issue_warning(
        &self,
        req: Request<pb::IssueWarningRequest>,
    ) -> Result<Response<pb::IssueWarningResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let side = convert::side(r.side, "side").map_err(bad)?;
        let pair = self
            .arbitrate(
                role,
                &r.game_id,
                ArbiterAction::Warn {
                    side,
                    reason: r.reason,
                },
            )
            .await?;
        reply!(IssueWarningResponse, pair)
    }

    async fn set_position(
        &self,
        req: Request<pb::SetPositionRequest>,
    ) -> Result<Response<pb::SetPositionResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let pair = self
            .arbitrate(role, &r.game_id, ArbiterAction::SetPosition { fen: r.fen })
            .await?;
        reply!(SetPositionResponse, pair)
    }
}
