//! `ArbiterService`: the arbiter's rulings and clock powers. What the arbiter gives
//! (reason, rule) is recorded as given: in the events, GetGame and the PDN annotations.

use tonic::{Request, Response, Status};

use super::convert;
use super::error::bad;
use super::pb;
use super::service::Api;
use super::validate::checked;
use crate::game::{ArbiterAction, Declared, Given, Ruling};

/// The reason and rule of a request, as given (the judge trims them, takes blank as
/// none and checks their limits).
fn given(reason: String, rule: String) -> Given {
    Given {
        reason: Some(reason),
        rule: Some(rule),
    }
}

/// A quoted seq: 0 is none.
fn quoted(seq: u64) -> Option<u64> {
    (seq != 0).then_some(seq)
}

#[tonic::async_trait]
impl pb::arbiter_service_server::ArbiterService for Api {
    async fn pause_clocks(
        &self,
        req: Request<pb::PauseClocksRequest>,
    ) -> Result<Response<pb::PauseClocksResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let pair = self
            .arbitrate(
                caller,
                &r.game_id,
                ArbiterAction::PauseClocks,
                given(r.reason, r.rule),
            )
            .await?;
        reply!(PauseClocksResponse, pair)
    }

    async fn resume_clocks(
        &self,
        req: Request<pb::ResumeClocksRequest>,
    ) -> Result<Response<pb::ResumeClocksResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let pair = self
            .arbitrate(
                caller,
                &r.game_id,
                ArbiterAction::ResumeClocks,
                given(r.reason, r.rule),
            )
            .await?;
        reply!(ResumeClocksResponse, pair)
    }

    async fn adjust_clock(
        &self,
        req: Request<pb::AdjustClockRequest>,
    ) -> Result<Response<pb::AdjustClockResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
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
            },
            _ => {
                return Err(Status::invalid_argument(
                    "change: set_remaining_ms > 0 or a non-zero add_ms required",
                ));
            }
        };
        let pair = self
            .arbitrate(caller, &r.game_id, action, given(r.reason, r.rule))
            .await?;
        reply!(AdjustClockResponse, pair)
    }

    async fn declare_result(
        &self,
        req: Request<pb::DeclareResultRequest>,
    ) -> Result<Response<pb::DeclareResultResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let outcome = convert::outcome(r.result).map_err(bad)?;
        let kind = match pb::ResultReason::try_from(r.reason) {
            Ok(pb::ResultReason::Unspecified | pb::ResultReason::ArbiterDecision) => {
                Declared::Decision
            }
            Ok(pb::ResultReason::Penalty) => Declared::Penalty,
            Ok(pb::ResultReason::Forfeit) => Declared::Forfeit,
            _ => {
                return Err(Status::invalid_argument(format!(
                    "reason: RESULT_REASON_ARBITER_DECISION, RESULT_REASON_PENALTY or \
                     RESULT_REASON_FORFEIT, got {}",
                    pb::ResultReason::try_from(r.reason)
                        .map_or_else(|_| r.reason.to_string(), |k| k.as_str_name().to_string())
                )));
            }
        };
        let pair = self
            .arbitrate(
                caller,
                &r.game_id,
                ArbiterAction::DeclareResult { outcome, kind },
                given(r.explanation, r.rule),
            )
            .await?;
        // A tournament's game: the tournament takes the result (or the correction) in
        // now, so what follows from it (the standings on its streams) follows at once
        // rather than at its next read. Not a tournament's game, or a failure to read it
        // (taken in at the next read): nothing more.
        if !pair.0.event.is_empty() {
            let key = crate::tournament::event_key(pair.0.event.trim());
            if let Err(e) = self.tournaments().get(&key).await {
                tracing::debug!(game = %r.game_id, error = %e, "declared result: no tournament read");
            }
        }
        reply!(DeclareResultResponse, pair)
    }

    async fn rule_on_claim(
        &self,
        req: Request<pb::RuleOnClaimRequest>,
    ) -> Result<Response<pb::RuleOnClaimResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let upheld = match pb::ClaimRuling::try_from(r.ruling) {
            Ok(pb::ClaimRuling::Correct) => true,
            Ok(pb::ClaimRuling::Incorrect) => false,
            _ => {
                return Err(Status::invalid_argument(
                    "ruling: CORRECT or INCORRECT required",
                ));
            }
        };
        let action = ArbiterAction::RuleOnClaim {
            upheld,
            claim_seq: quoted(r.claim_seq),
        };
        let pair = self
            .arbitrate(caller, &r.game_id, action, given(r.reason, r.rule))
            .await?;
        reply!(RuleOnClaimResponse, pair)
    }

    async fn rule_on_irregularity(
        &self,
        req: Request<pb::RuleOnIrregularityRequest>,
    ) -> Result<Response<pb::RuleOnIrregularityResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let ruling = match pb::IrregularityRuling::try_from(r.ruling) {
            Ok(pb::IrregularityRuling::Stands) => Ruling::Stands,
            Ok(pb::IrregularityRuling::Corrected) => Ruling::Corrected,
            _ => {
                return Err(Status::invalid_argument(
                    "ruling: STANDS or CORRECTED required",
                ));
            }
        };
        let action = ArbiterAction::RuleOnIrregularity {
            ruling,
            irregularity_seq: quoted(r.irregularity_seq),
        };
        let pair = self
            .arbitrate(caller, &r.game_id, action, given(r.reason, r.rule))
            .await?;
        reply!(RuleOnIrregularityResponse, pair)
    }

    async fn issue_warning(
        &self,
        req: Request<pb::IssueWarningRequest>,
    ) -> Result<Response<pb::IssueWarningResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let side = convert::side(r.side, "side").map_err(bad)?;
        let pair = self
            .arbitrate(
                caller,
                &r.game_id,
                ArbiterAction::Warn { side },
                given(r.reason, r.rule),
            )
            .await?;
        reply!(IssueWarningResponse, pair)
    }

    async fn start_forty_move_count(
        &self,
        req: Request<pb::StartFortyMoveCountRequest>,
    ) -> Result<Response<pb::StartFortyMoveCountResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let side = convert::side(r.side, "side").map_err(bad)?;
        let pair = self
            .arbitrate(
                caller,
                &r.game_id,
                ArbiterAction::StartFortyMoveCount { side },
                given(r.reason, r.rule),
            )
            .await?;
        reply!(StartFortyMoveCountResponse, pair)
    }

    async fn set_position(
        &self,
        req: Request<pb::SetPositionRequest>,
    ) -> Result<Response<pb::SetPositionResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let pair = self
            .arbitrate(
                caller,
                &r.game_id,
                ArbiterAction::SetPosition { fen: r.fen },
                given(r.reason, r.rule),
            )
            .await?;
        reply!(SetPositionResponse, pair)
    }
}
