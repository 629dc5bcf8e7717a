//! Arbiter actions: clocks, warnings, results, rulings, positions.

use super::command::{ArbiterAction, Outcome, Ruling};
use super::draws::decide_claim;
use super::error::GameError;
use super::event::{EndReason, EventKind};
use super::tx::{Tx, running};
use crate::clock::ClockOp;
use crate::notation::fen::{parse_fen, write_fen};
use crate::rules::variant::DrawRules;

pub(super) fn arbiter(tx: &mut Tx, action: ArbiterAction) -> Result<(), GameError> {
    let now = tx.now.mono_ms;
    let clock_op = |tx: &mut Tx, op: ClockOp, reason: Option<String>| -> Result<(), GameError> {
        let mut probe =
            tx.s.clock
                .clone()
                .ok_or_else(|| GameError::not_allowed("the game is untimed", "RU 1.8"))?;
        probe.apply(op)?;
        tx.emit(EventKind::ClockChanged { op, reason }, None)
    };
    match action {
        ArbiterAction::PauseClocks => {
            running(&tx.s)?;
            clock_op(tx, ClockOp::Pause { now }, None)
        }
        ArbiterAction::ResumeClocks => {
            running(&tx.s)?;
            clock_op(tx, ClockOp::Resume { now }, None)
        }
        ArbiterAction::SetTime { side, remaining_ms } => {
            if tx.s.result.is_some() {
                return Err(GameError::GameOver);
            }
            clock_op(
                tx,
                ClockOp::SetRemaining {
                    side,
                    remaining: remaining_ms,
                    now,
                },
                None,
            )
        }
        ArbiterAction::AddTime { side, amount_ms } => {
            if tx.s.result.is_some() {
                return Err(GameError::GameOver);
            }
            clock_op(
                tx,
                ClockOp::AddTime {
                    side,
                    amount: amount_ms,
                    now,
                },
                None,
            )
        }
        ArbiterAction::Penalty {
            side,
            amount_ms,
            reason,
        } => {
            running(&tx.s)?;
            clock_op(
                tx,
                ClockOp::SubtractTime {
                    side,
                    amount: amount_ms,
                    now,
                },
                Some(reason),
            )
        }
        ArbiterAction::Warn { side, reason } => {
            if reason.trim().is_empty() {
                return Err(GameError::Invalid(
                    "reason: a warning needs a reason".into(),
                ));
            }
            tx.emit(EventKind::Warning { side, reason }, None)
        }
        ArbiterAction::DeclareResult { outcome, reason } => {
            if reason.trim().is_empty() {
                return Err(GameError::Invalid("reason: a result needs a reason".into()));
            }
            tx.end(
                outcome,
                EndReason::ArbiterDecision,
                Some("RU 1.9.1(b)").filter(|_| outcome == Outcome::Draw),
                Some(reason),
            )
        }
        ArbiterAction::RuleOnClaim { upheld } => {
            running(&tx.s)?;
            decide_claim(tx, upheld)
        }
        ArbiterAction::RuleOnIrregularity { ruling } => {
            running(&tx.s)?;
            let Some(out) = tx.s.irregularity else {
                return Err(GameError::not_allowed(
                    "there is no irregularity to rule on",
                    "FMJD 5.4",
                ));
            };
            let fen = match ruling {
                Ruling::Corrected => write_fen(tx.s.position()),
                Ruling::Stands => {
                    let mut setup = tx.s.physical.clone();
                    setup.turn = !out.side;
                    // A piece still in hand goes back where it came from.
                    if let Some(h) = &tx.s.hand {
                        *setup.pieces_mut(h.color) |= h.from.bit();
                        if h.king {
                            setup.kings |= h.from.bit();
                        }
                    }
                    let pos = crate::rules::Position::from_setup(&setup).map_err(|e| {
                        GameError::not_allowed(
                            format!("the board's position cannot stand: {e}"),
                            "FMJD 5.4",
                        )
                    })?;
                    write_fen(&pos)
                }
            };
            tx.emit(
                EventKind::IrregularityResolved {
                    ruling: Some(ruling),
                    fen,
                },
                Some("FMJD 5.4"),
            )?;
            if ruling == Ruling::Stands && tx.s.awaiting_press.is_some() {
                tx.press(out.side, false)?;
            }
            Ok(())
        }
        ArbiterAction::SetPosition { fen } => {
            if tx.s.result.is_some() {
                return Err(GameError::GameOver);
            }
            let pos = parse_fen(&fen, tx.s.variant()).map_err(GameError::Fen)?;
            if tx.s.started && tx.s.clock.is_some() && pos.turn() != tx.s.clock_side() {
                return Err(GameError::not_allowed(
                    format!(
                        "the position's side to move must be {}, whose clock runs",
                        tx.s.clock_side()
                    ),
                    "RU 1.4.1",
                ));
            }
            tx.emit(
                EventKind::PositionSet {
                    fen: write_fen(&pos),
                },
                None,
            )
        }
        ArbiterAction::StartFortyMoveCount { side } => {
            running(&tx.s)?;
            if tx.s.variant().rules().draws != DrawRules::English {
                return Err(GameError::not_allowed(
                    "the 40-move count is an English rule",
                    "EN 40-move rule",
                ));
            }
            tx.emit(
                EventKind::FortyMoveCountStarted { side },
                Some("EN 40-move rule"),
            )
        }
    }
}
