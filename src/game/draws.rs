//! Draw offers (RU 1.9.3–1.9.6) and claims (RU 1.9.2).

use super::command::{ClaimKind, OfferResponse, Outcome};
use super::error::GameError;
use super::event::{EndReason, EventKind, MoveSource, OfferTiming};
use super::session::Session;
use super::tx::{Tx, check_history_rules, cite, running};
use crate::notation::movetext::write_move_full;
use crate::rules::{Color, DrawMode};

pub(super) fn check_offer_allowed(s: &Session, side: Color) -> Result<(), GameError> {
    running(s)?;
    if s.offer.is_some() {
        return Err(GameError::not_allowed(
            "a draw offer is already pending",
            "RU 1.9.3",
        ));
    }
    if s.offer_barred == Some(side) {
        return Err(GameError::not_allowed(
            format!("{side}'s offer was declined; {} must offer first", !side),
            "RU 1.9.6",
        ));
    }
    let move_number = s.game.moves().len() as u32 / 2 + 1;
    if move_number < s.settings.min_move_for_offer {
        return Err(GameError::not_allowed(
            format!(
                "no draw offers before move {}",
                s.settings.min_move_for_offer
            ),
            "event rule",
        ));
    }
    Ok(())
}

pub(super) fn offer_draw(tx: &mut Tx, side: Color) -> Result<(), GameError> {
    check_offer_allowed(&tx.s, side)?;
    let timing = if tx.s.awaiting_press == Some(side) {
        OfferTiming::AfterOwnMove
    } else if tx.s.position().turn() == side {
        OfferTiming::BeforeOwnMove
    } else {
        OfferTiming::DuringOpponentsTurn
    };
    let rule = match timing {
        OfferTiming::AfterOwnMove => "RU 1.9.3",
        OfferTiming::DuringOpponentsTurn => "RU 1.9.4",
        OfferTiming::BeforeOwnMove => "RU 1.9.5",
    };
    tx.emit(EventKind::DrawOffered { side, timing }, Some(rule))?;
    if timing == OfferTiming::DuringOpponentsTurn {
        tx.emit(
            EventKind::Warning {
                side,
                reason: "draw offered while the opponent's clock runs".into(),
            },
            Some("RU 1.9.4"),
        )?;
    }
    Ok(())
}

pub(super) fn respond(tx: &mut Tx, side: Color, response: OfferResponse) -> Result<(), GameError> {
    running(&tx.s)?;
    let offer = tx
        .s
        .offer
        .ok_or_else(|| GameError::not_allowed("there is no draw offer to answer", "RU 1.9.3"))?;
    if offer.by == side {
        return Err(GameError::not_allowed(
            "a player cannot answer their own offer",
            "RU 1.9.3",
        ));
    }
    match response {
        OfferResponse::Accept => {
            tx.emit(
                EventKind::DrawOfferAnswered {
                    side,
                    response,
                    by_move: false,
                },
                Some("RU 1.9.3"),
            )?;
            let rule = cite(&tx.s, "RU 1.9.1(a)", "FMJD agreement", "EN agreement");
            tx.end(Outcome::Draw, EndReason::Agreement, Some(rule), None)
        }
        OfferResponse::Decline => tx.emit(
            EventKind::DrawOfferAnswered {
                side,
                response,
                by_move: false,
            },
            Some("RU 1.9.6"),
        ),
        OfferResponse::Postpone => {
            // Only an offer made before the offerer's own move, not yet followed by it.
            let before_move = offer.timing == OfferTiming::BeforeOwnMove
                && tx.s.game.moves().len() == offer.ply
                && !offer.postponed;
            if !before_move {
                return Err(GameError::not_allowed(
                    "only an offer made before the offerer's move may be postponed, once",
                    "RU 1.9.5",
                ));
            }
            tx.emit(
                EventKind::DrawOfferAnswered {
                    side,
                    response,
                    by_move: false,
                },
                Some("RU 1.9.5"),
            )
        }
    }
}

pub(super) fn claim(
    tx: &mut Tx,
    side: Color,
    kind: ClaimKind,
    written: Option<&str>,
) -> Result<(), GameError> {
    running(&tx.s)?;
    if tx.s.claim.is_some() {
        return Err(GameError::not_allowed(
            "a claim is already being decided",
            "RU 1.9.2",
        ));
    }
    if tx.s.awaiting_press == Some(side) {
        return Err(GameError::not_allowed(
            "the move was played on the board: the right to claim this repetition is lost",
            "RU 1.9.2",
        ));
    }
    if tx.s.position().turn() != side {
        return Err(GameError::not_allowed(
            "a draw is claimed by the side to move, before its move",
            "RU 1.9.2",
        ));
    }
    let (correct, written_mv, rule) = match kind {
        ClaimKind::Repetition => {
            let rule = cite(
                &tx.s,
                "RU 1.9.2",
                "FMJD threefold repetition",
                "EN threefold repetition",
            );
            match written {
                Some(text) => {
                    let mv = tx.s.parse_move("written_move", text)?;
                    check_history_rules(&tx.s, &mv)?;
                    let after = tx.s.game.after(&mv).map_err(|_| {
                        GameError::Internal("a legal written move does not parse".into())
                    })?;
                    (tx.s.game.occurrences(&after) + 1 >= 3, Some(mv), rule)
                }
                None => (tx.s.game.repeated(3), None, rule),
            }
        }
        ClaimKind::MoveCount => {
            if written.is_some() {
                return Err(GameError::Invalid(
                    "written_move: only a repetition claim has one".into(),
                ));
            }
            let found =
                tx.s.game
                    .draws()
                    .into_iter()
                    .find(|d| d.mode == DrawMode::Automatic);
            (found.is_some(), None, found.map_or("RU 1.9.1", |d| d.rule))
        }
    };
    let written_text = written_mv.map(|m| write_move_full(tx.s.position(), &m));
    tx.emit(
        EventKind::ClaimMade {
            side,
            kind,
            written_move: written_text,
            correct,
        },
        Some(rule),
    )?;
    if tx.s.settings.claims_need_arbiter {
        // The claimant's clock keeps running until the arbiter rules (RU 1.9.2).
        return Ok(());
    }
    decide_claim(tx, correct, None, None)
}

/// Ends the pending claim: a draw if upheld; otherwise the written move is played and
/// the game goes on (RU 1.9.2).
pub(super) fn decide_claim(
    tx: &mut Tx,
    upheld: bool,
    reason: Option<String>,
    rule: Option<String>,
) -> Result<(), GameError> {
    let claim =
        tx.s.claim
            .clone()
            .ok_or_else(|| GameError::not_allowed("there is no pending claim", "RU 1.9.2"))?;
    tx.emit(
        EventKind::ClaimDecided { upheld, reason },
        Some(rule.as_deref().unwrap_or("RU 1.9.2")),
    )?;
    if upheld {
        let reason = match claim.kind {
            ClaimKind::Repetition => EndReason::Repetition,
            ClaimKind::MoveCount => EndReason::MoveCount,
        };
        return tx.end(Outcome::Draw, reason, Some("RU 1.9.2"), None);
    }
    if let Some(text) = claim.written_move {
        let mv = tx.s.parse_move("written_move", &text)?;
        let press = tx.s.clock.is_some();
        tx.play(&mv, MoveSource::WrittenClaim, press)?;
    }
    Ok(())
}
