//! A command on a game as it arrives, parsed once at the edge (issue 39 item 3): each
//! `GameService` / `ArbiterService` request that acts on a game turns into a
//! [`GameRequest`] — the game, the optimistic `expected_seq` and what is wanted, in the
//! domain's types — and one path ([`super::service::Api::game_request`]) checks the
//! caller's right and sends it to the game. The handlers keep no logic of their own.

use tonic::Status;

use super::convert;
use super::error::Refusal;
use super::error::bad;
use super::pb;
use super::validate::Check;
use crate::game::{ArbiterAction, Command, Declared, Given, Play, Ruling};
use crate::rules::Color;

/// A command on one game, parsed.
#[derive(Debug)]
pub(super) struct GameRequest {
    /// The game's id.
    pub game_id: String,
    /// Optimistic concurrency: 0 none, else the game's last seq it must be.
    pub expected_seq: u64,
    /// What is wanted.
    pub wants: Wants,
}

/// What a request wants of its game.
#[derive(Debug)]
pub(super) enum Wants {
    /// A player's command: for `side` when the request named one; unnamed, a player's
    /// token acts for its own side and an arbiter's for the side to move (decided by the
    /// game's task).
    Play {
        /// The side the request named.
        side: Option<Color>,
        /// The command, without its side.
        play: Play,
    },
    /// An arbiter's command (a start, a ruling, a clock power, a result).
    Arbitrate(Command),
}

/// A request that acts on one game: its fields checked ([`Check`]), then parsed.
pub(super) trait ParseGameRequest: Check {
    /// The request in the domain's types.
    ///
    /// # Errors
    /// INVALID_ARGUMENT naming the field.
    fn parse(self) -> Result<GameRequest, Status>;
}

/// A side field: 0 is none; anything else must be a side.
fn named_side(field: i32) -> Result<Option<Color>, Status> {
    if field == 0 {
        Ok(None)
    } else {
        convert::side(field, "side").map(Some).map_err(bad)
    }
}

/// A side field that is required.
fn side(field: i32) -> Result<Color, Status> {
    convert::side(field, "side").map_err(bad)
}

/// A quoted seq: 0 is none.
fn quoted(seq: u64) -> Option<u64> {
    (seq != 0).then_some(seq)
}

fn play(game_id: String, expected_seq: u64, side: i32, play: Play) -> Result<GameRequest, Status> {
    Ok(GameRequest {
        game_id,
        expected_seq,
        wants: Wants::Play {
            side: named_side(side)?,
            play,
        },
    })
}

/// An arbiter's `action` on a game, with the request's reason and rule as given (the
/// judge trims them, takes blank as none and checks their limits).
fn arbitrate(
    game_id: String,
    (reason, rule): (String, String),
    action: ArbiterAction,
) -> Result<GameRequest, Status> {
    let given = Given {
        reason: Some(reason),
        rule: Some(rule),
    };
    Ok(GameRequest {
        game_id,
        expected_seq: 0,
        wants: Wants::Arbitrate(Command::Arbiter(action, given)),
    })
}

impl ParseGameRequest for pb::StartGameRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        Ok(GameRequest {
            game_id: self.game_id,
            expected_seq: self.expected_seq,
            wants: Wants::Arbitrate(Command::Start),
        })
    }
}

impl ParseGameRequest for pb::SubmitMoveRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let mv = Play::Move {
            notation: self.r#move,
            offer_draw: self.offer_draw,
        };
        play(self.game_id, self.expected_seq, self.side, mv)
    }
}

impl ParseGameRequest for pb::PressClockRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        play(self.game_id, self.expected_seq, self.side, Play::Press)
    }
}

impl ParseGameRequest for pb::OfferDrawRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        play(self.game_id, self.expected_seq, self.side, Play::Offer)
    }
}

impl ParseGameRequest for pb::RespondToDrawOfferRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let side = named_side(self.side)?;
        let response = convert::response(self.response).map_err(bad)?;
        Ok(GameRequest {
            game_id: self.game_id,
            expected_seq: self.expected_seq,
            wants: Wants::Play {
                side,
                play: Play::Respond(response),
            },
        })
    }
}

impl ParseGameRequest for pb::ClaimDrawRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let claim = Play::Claim {
            kind: convert::claim_kind(self.kind),
            written_move: (!self.written_move.trim().is_empty()).then_some(self.written_move),
        };
        play(self.game_id, self.expected_seq, self.side, claim)
    }
}

impl ParseGameRequest for pb::ResignRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        play(self.game_id, self.expected_seq, self.side, Play::Resign)
    }
}

impl ParseGameRequest for pb::PauseClocksRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        arbitrate(
            self.game_id,
            (self.reason, self.rule),
            ArbiterAction::PauseClocks,
        )
    }
}

impl ParseGameRequest for pb::ResumeClocksRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        arbitrate(
            self.game_id,
            (self.reason, self.rule),
            ArbiterAction::ResumeClocks,
        )
    }
}

impl ParseGameRequest for pb::AdjustClockRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        use pb::adjust_clock_request::Change;
        let side = side(self.side)?;
        let action = match self.change {
            Some(Change::SetRemainingMs(ms)) if ms > 0 => ArbiterAction::SetTime {
                side,
                remaining_ms: ms.unsigned_abs(),
            },
            Some(Change::AddMs(ms)) if ms > 0 => ArbiterAction::AddTime {
                side,
                amount_ms: ms.unsigned_abs(),
            },
            Some(Change::AddMs(ms)) if ms < 0 => ArbiterAction::Penalty {
                side,
                amount_ms: ms.unsigned_abs(),
            },
            _ => {
                return Err(Refusal::Field(
                    "change: set_remaining_ms > 0 or a non-zero add_ms required".into(),
                )
                .into());
            }
        };
        arbitrate(self.game_id, (self.reason, self.rule), action)
    }
}

impl ParseGameRequest for pb::DeclareResultRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let outcome = convert::outcome(self.result).map_err(bad)?;
        let kind = match pb::ResultReason::try_from(self.reason) {
            Ok(pb::ResultReason::Unspecified | pb::ResultReason::ArbiterDecision) => {
                Declared::Decision
            }
            Ok(pb::ResultReason::Penalty) => Declared::Penalty,
            Ok(pb::ResultReason::Forfeit) => Declared::Forfeit,
            _ => {
                return Err(Refusal::Field(format!(
                    "reason: RESULT_REASON_ARBITER_DECISION, RESULT_REASON_PENALTY or \
                     RESULT_REASON_FORFEIT, got {}",
                    pb::ResultReason::try_from(self.reason)
                        .map_or_else(|_| self.reason.to_string(), |k| k.as_str_name().to_string())
                ))
                .into());
            }
        };
        let action = ArbiterAction::DeclareResult { outcome, kind };
        arbitrate(self.game_id, (self.explanation, self.rule), action)
    }
}

impl ParseGameRequest for pb::RuleOnClaimRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let upheld = match pb::ClaimRuling::try_from(self.ruling) {
            Ok(pb::ClaimRuling::Correct) => true,
            Ok(pb::ClaimRuling::Incorrect) => false,
            _ => {
                return Err(Refusal::Field("ruling: CORRECT or INCORRECT required".into()).into());
            }
        };
        let action = ArbiterAction::RuleOnClaim {
            upheld,
            claim_seq: quoted(self.claim_seq),
        };
        arbitrate(self.game_id, (self.reason, self.rule), action)
    }
}

impl ParseGameRequest for pb::RuleOnIrregularityRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let ruling = match pb::IrregularityRuling::try_from(self.ruling) {
            Ok(pb::IrregularityRuling::Stands) => Ruling::Stands,
            Ok(pb::IrregularityRuling::Corrected) => Ruling::Corrected,
            _ => {
                return Err(Refusal::Field("ruling: STANDS or CORRECTED required".into()).into());
            }
        };
        let action = ArbiterAction::RuleOnIrregularity {
            ruling,
            irregularity_seq: quoted(self.irregularity_seq),
        };
        arbitrate(self.game_id, (self.reason, self.rule), action)
    }
}

impl ParseGameRequest for pb::IssueWarningRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let action = ArbiterAction::Warn {
            side: side(self.side)?,
        };
        arbitrate(self.game_id, (self.reason, self.rule), action)
    }
}

impl ParseGameRequest for pb::StartFortyMoveCountRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let action = ArbiterAction::StartFortyMoveCount {
            side: side(self.side)?,
        };
        arbitrate(self.game_id, (self.reason, self.rule), action)
    }
}

impl ParseGameRequest for pb::SetPositionRequest {
    fn parse(self) -> Result<GameRequest, Status> {
        let action = ArbiterAction::SetPosition { fen: self.fen };
        arbitrate(self.game_id, (self.reason, self.rule), action)
    }
}
