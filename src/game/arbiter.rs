//! Arbiter actions: clocks, warnings, results, rulings, positions.

use super::command::{
    ArbiterAction, Declared, Given, MAX_REASON_BYTES, MAX_RULE_BYTES, Outcome, Ruling,
};
use super::draws::decide_claim;
use super::error::GameError;
use super::event::{EndReason, EventKind, FollowCause, IrregularityKind};
use super::session::Outstanding;
use super::tx::{Tx, not_over, running};
use crate::clock::{ClockOp, MAX_PERIOD_TIME};
use crate::notation::fen::{parse_fen, write_fen};
use crate::rules::variant::DrawRules;

pub(super) fn arbiter(tx: &mut Tx, action: ArbiterAction, given: Given) -> Result<(), GameError> {
    let given = checked(given)?;
    let now = tx.now.mono_ms;
    // The arbiter's rule, where they cited one; else the judge's own citation.
    let rule = given.rule.clone();
    let cite = move |default: Option<&'static str>| -> Option<String> {
        rule.clone().or(default.map(str::to_string))
    };
    let reason = given.reason.clone();
    let clock_op = |tx: &mut Tx, op: ClockOp| -> Result<(), GameError> {
        let mut probe =
            tx.s.clock
                .clone()
                .ok_or_else(|| GameError::not_allowed("the game is untimed", "RU 1.8"))?;
        probe.apply(op)?;
        // An arbiter's change leaves at most a period's longest time on the clock.
        if let ClockOp::SetRemaining { side, now, .. } | ClockOp::AddTime { side, now, .. } = op
            && probe.remaining(side, now) > MAX_PERIOD_TIME
        {
            // The request's field that carried the change (AdjustClockRequest.change).
            let field = match op {
                ClockOp::SetRemaining { .. } => "set_remaining_ms",
                _ => "add_ms",
            };
            return Err(GameError::Invalid(format!(
                "{field}: the change would leave {side} more than {} h on the clock",
                MAX_PERIOD_TIME / 3_600_000
            )));
        }
        tx.emit(
            EventKind::ClockChanged {
                op,
                reason: reason.clone(),
            },
            cite(None).as_deref(),
        )
    };
    let required = |what: &str| -> Result<String, GameError> {
        given
            .reason
            .clone()
            .ok_or_else(|| GameError::Invalid(format!("reason: {what} needs a reason")))
    };
    match action {
        ArbiterAction::PauseClocks => {
            running(&tx.s)?;
            clock_op(tx, ClockOp::Pause { now })
        }
        ArbiterAction::ResumeClocks => {
            running(&tx.s)?;
            clock_op(tx, ClockOp::Resume { now })
        }
        ArbiterAction::SetTime { side, remaining_ms } => {
            not_over(&tx.s)?;
            clock_op(
                tx,
                ClockOp::SetRemaining {
                    side,
                    remaining: remaining_ms,
                    now,
                },
            )
        }
        ArbiterAction::AddTime { side, amount_ms } => {
            not_over(&tx.s)?;
            clock_op(
                tx,
                ClockOp::AddTime {
                    side,
                    amount: amount_ms,
                    now,
                },
            )
        }
        ArbiterAction::Penalty { side, amount_ms } => {
            running(&tx.s)?;
            required("a time penalty")?;
            clock_op(
                tx,
                ClockOp::SubtractTime {
                    side,
                    amount: amount_ms,
                    now,
                },
            )
        }
        ArbiterAction::Warn { side } => {
            let reason = required("a warning")?;
            tx.emit(EventKind::Warning { side, reason }, cite(None).as_deref())
        }
        ArbiterAction::DeclareResult { outcome, kind } => {
            let reason = required("a result")?;
            let kind = match kind {
                Declared::Decision => EndReason::ArbiterDecision,
                Declared::Penalty if given.rule.is_none() => {
                    return Err(GameError::Invalid(
                        "rule: a result by penalty names the rule broken (e.g. RU 1.9.4)".into(),
                    ));
                }
                Declared::Penalty => EndReason::Penalty,
                Declared::Forfeit if matches!(outcome, Outcome::Draw | Outcome::Annulled) => {
                    return Err(GameError::Invalid(
                        "result: a forfeit is a win or a loss for both (0-0), not a draw or \
                         an annulment (T 6)"
                            .into(),
                    ));
                }
                Declared::Forfeit => EndReason::Forfeit,
            };
            let default = match kind {
                EndReason::Forfeit => Some("T 6"),
                _ => Some("RU 1.9.1(b)").filter(|_| outcome == Outcome::Draw),
            };
            tx.end(outcome, kind, cite(default).as_deref(), Some(reason))
        }
        ArbiterAction::RuleOnClaim { upheld, claim_seq } => {
            running(&tx.s)?;
            if let (Some(quoted), Some(pending)) = (claim_seq, tx.s.claim.as_ref())
                && quoted != pending.seq
            {
                return Err(GameError::not_allowed(
                    format!(
                        "claim_seq {quoted} is not the pending claim: that is seq {}",
                        pending.seq
                    ),
                    "RU 1.9.2",
                ));
            }
            decide_claim(tx, upheld, given.reason.clone(), cite(Some("RU 1.9.2")))
        }
        ArbiterAction::RuleOnIrregularity {
            ruling,
            irregularity_seq,
        } => {
            running(&tx.s)?;
            let out = outstanding(&tx.s, irregularity_seq)?;
            let fen = match ruling {
                Ruling::Stands if out.kind.on_board() => {
                    // What the board shows, a piece still in hand back where it came
                    // from, captured pieces still on it taken off (they were captured;
                    // the fold keeps them on the board, still to be lifted).
                    let mut setup = tx.s.physical.clone();
                    let captured = tx.s.pending_removal.iter().fold(0u64, |b, s| b | s.bit());
                    setup.white &= !captured;
                    setup.black &= !captured;
                    setup.kings &= !captured;
                    if let Some(h) = &tx.s.hand {
                        *setup.pieces_mut(h.color) |= h.from.bit();
                        if h.king {
                            setup.kings |= h.from.bit();
                        }
                    }
                    // The offender's move when it moved on its turn: the turn passes.
                    // Out of turn, or a wrong copy, the side to move stays.
                    setup.turn = if out.kind == IrregularityKind::WrongCopy {
                        tx.s.position().turn()
                    } else {
                        !out.side
                    };
                    let pos = crate::rules::Position::from_setup(&setup).map_err(|e| {
                        GameError::not_allowed(
                            format!("the board's position cannot stand: {e}"),
                            "FMJD 5.4",
                        )
                    })?;
                    write_fen(&pos)
                }
                // Corrected, or an irregularity of the clock: the official position stays.
                _ => write_fen(tx.s.position()),
            };
            let before = tx.s.physical.clone();
            tx.emit(
                EventKind::IrregularityResolved {
                    ruling: Some(ruling),
                    irregularity_seq: Some(out.seq),
                    fen,
                    reason: given.reason.clone(),
                },
                cite(Some("FMJD 5.4")).as_deref(),
            )?;
            // Corrected on the board: the board is put back to the last legal position.
            // (RU: the piece moved wrongly is then retaken if it can move.)
            if ruling == Ruling::Corrected && out.kind.on_board() {
                tx.board_follows(FollowCause::Corrected, &before)?;
            }
            Ok(())
        }
        ArbiterAction::SetPosition { fen } => {
            not_over(&tx.s)?;
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
            if pos.pieces(crate::rules::Color::White) | pos.pieces(crate::rules::Color::Black) == 0
            {
                return Err(GameError::Invalid("fen: no piece on the board".into()));
            }
            let before = tx.s.physical.clone();
            tx.emit(
                EventKind::PositionSet {
                    fen: write_fen(&pos),
                    reason: given.reason.clone(),
                },
                cite(None).as_deref(),
            )?;
            tx.board_follows(FollowCause::PositionSet, &before)?;
            // A position the side to move cannot play on ends the game at once (RU 1.8);
            // before the start it is refused: a game cannot start from it.
            if let Some(o) = tx.s.game.outcome() {
                if !tx.s.started {
                    return Err(GameError::Invalid(format!(
                        "fen: {}; a game cannot start from it ({})",
                        o.describe(pos.turn()),
                        o.rule
                    )));
                }
                return tx.end(
                    super::command::Outcome::win_for(o.winner),
                    super::tx::board_end_reason(o.reason),
                    Some(o.rule),
                    None,
                );
            }
            Ok(())
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
                cite(Some("EN 40-move rule")).as_deref(),
            )
        }
        ArbiterAction::MarkAbsent { side } => {
            not_over(&tx.s)?;
            if tx.s.marked_absent(side) {
                return Err(GameError::not_allowed(
                    format!("{side} is already marked absent"),
                    "T 5",
                ));
            }
            if tx.s.has_acted(side) {
                return Err(GameError::not_allowed(
                    format!("{side} has acted in this game since its start: not absent"),
                    "T 5",
                ));
            }
            tx.emit(
                EventKind::MarkedAbsent { side },
                cite(Some("T 5")).as_deref(),
            )
        }
    }
}

/// The irregularity a ruling names: `seq` when given, else the only one outstanding.
fn outstanding(s: &super::Session, seq: Option<u64>) -> Result<Outstanding, GameError> {
    let list = s.irregularities();
    let seqs = || {
        list.iter()
            .map(|i| i.seq.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (seq, list) {
        (_, []) => Err(GameError::not_allowed(
            "there is no irregularity to rule on",
            "FMJD 5.4",
        )),
        (None, [only]) => Ok(only.clone()),
        (None, _) => Err(GameError::Invalid(format!(
            "irregularity_seq: required: {} irregularities are outstanding (seq {})",
            list.len(),
            seqs()
        ))),
        (Some(q), _) => list.iter().find(|i| i.seq == q).cloned().ok_or_else(|| {
            GameError::not_allowed(
                format!(
                    "irregularity_seq {q} is not an outstanding irregularity: outstanding are seq {}",
                    seqs()
                ),
                "FMJD 5.4",
            )
        }),
    }
}

/// The arbiter's words and rule, trimmed (blank is none), within their limits.
fn checked(given: Given) -> Result<Given, GameError> {
    let field =
        |name: &str, text: Option<String>, max: usize| -> Result<Option<String>, GameError> {
            let Some(text) = text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) else {
                return Ok(None);
            };
            if text.len() > max {
                return Err(GameError::Invalid(format!(
                    "{name}: at most {max} bytes, got {}",
                    text.len()
                )));
            }
            if text.chars().any(|c| c.is_control() && c != '\n') {
                return Err(GameError::Invalid(format!(
                    "{name}: no control characters but line breaks"
                )));
            }
            Ok(Some(text))
        };
    Ok(Given {
        reason: field("reason", given.reason, MAX_REASON_BYTES)?,
        rule: field("rule", given.rule, MAX_RULE_BYTES)?,
    })
}
