//! The working copy a command is decided on: events recorded and applied as they are
//! emitted, and the steps every procedure shares (a move with its press, the end of the
//! game, the rule each variant cites).

use super::command::{Actor, OfferResponse, Outcome};
use super::error::GameError;
use super::event::{EndReason, EventKind, FollowCause, GameEvent, MoveSource, Now};
use super::note::{self, EventNote};
use super::session::Session;
use super::settings::{MoveCountDraws, RepetitionMode};
use crate::clock::ClockOp;
use crate::notation::fen::write_fen;
use crate::notation::movetext::write_move_full;
use crate::notation::square::{square_number, square_numbers};
use crate::rules::variant::DrawRules;
use crate::rules::{Color, DrawMode, Move, Setup};

/// The rule numbers the judge cites: FMJD's for the international family, the English
/// practice for English, and the Russian rule book's for every other variant (RULES.md:
/// "each must work, same arbiter procedures").
pub(super) fn cite(
    s: &Session,
    ru: &'static str,
    fmjd: &'static str,
    en: &'static str,
) -> &'static str {
    match s.variant().rules().draws {
        DrawRules::Fmjd | DrawRules::Antidraughts | DrawRules::Frisian => fmjd,
        DrawRules::English => en,
        DrawRules::Russian
        | DrawRules::Italian
        | DrawRules::Pool
        | DrawRules::Giveaway
        | DrawRules::Turkish
        | DrawRules::Corners => ru,
    }
}

/// A command being decided on a working copy of the session.
pub(super) struct Tx<'a> {
    pub s: Session,
    pub events: Vec<GameEvent>,
    pub notes: Vec<EventNote>,
    pub now: Now,
    pub actor: &'a Actor,
    /// The board's own timestamp of the message being decided, recorded in each event.
    pub board_ms: Option<i64>,
}

/// A decided command (or what time did): the session after it, its events and the note
/// of each event. Nothing is recorded yet: the caller appends the events durably, then
/// takes the session.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The session after the events.
    pub session: Session,
    /// The events, in order.
    pub events: Vec<GameEvent>,
    /// What the judge knew right after each event (same order).
    pub notes: Vec<EventNote>,
}

impl<'a> Tx<'a> {
    pub(super) fn new(s: &Session, now: Now, actor: &'a Actor) -> Tx<'a> {
        // The copy does not grow with the game: the score sheet, the positions, the moves
        // and the clock's move times are `History`s, whose copies share their chunks.
        Tx {
            s: s.clone(),
            events: Vec::new(),
            notes: Vec::new(),
            now,
            actor,
            board_ms: None,
        }
    }

    pub(super) fn decided(self) -> Decided {
        Decided {
            session: self.s,
            events: self.events,
            notes: self.notes,
        }
    }
}

impl Tx<'_> {
    /// Records an event and applies it to the working copy.
    pub fn emit(&mut self, kind: EventKind, rule: Option<&str>) -> Result<(), GameError> {
        let event = GameEvent {
            seq: self.s.seq + 1,
            at: self.now,
            actor: self.actor.clone(),
            rule: rule.map(str::to_string),
            kind,
            board_ms: self.board_ms,
        };
        let note = self
            .s
            .apply_noted(&event)
            .map_err(|e| GameError::Internal(e.to_string()))?;
        note::push(&mut self.notes, &self.events, &event, note);
        self.events.push(event);
        Ok(())
    }

    pub fn end(
        &mut self,
        outcome: Outcome,
        reason: EndReason,
        rule: Option<&str>,
        note: Option<String>,
    ) -> Result<(), GameError> {
        self.emit(
            EventKind::GameEnded {
                outcome,
                reason,
                note,
            },
            rule,
        )
    }

    /// Plays a legal move on the official position, with its press when it is due.
    pub fn play(&mut self, mv: &Move, source: MoveSource, press: bool) -> Result<(), GameError> {
        let side = self.s.position().turn();
        let pos = *self.s.position();
        let v = self.s.variant();
        let after = self
            .s
            .game
            .after(mv)
            .map_err(|e| GameError::Internal(format!("a legal move does not play: {e}")))?;
        // A move by the side that was offered a draw declines it (RU 1.9.3).
        if let Some(o) = self.s.offer
            && o.by != side
        {
            let rule = cite(&self.s, "RU 1.9.3", "FMJD draw offer", "EN draw offer");
            self.emit(
                EventKind::DrawOfferAnswered {
                    side,
                    response: OfferResponse::Decline,
                    by_move: true,
                },
                Some(rule),
            )?;
        }
        let rule = if mv.is_capture() {
            cite(&self.s, "RU 1.5.11", "FMJD 4.4", "EN capture")
        } else {
            cite(&self.s, "RU 1.4.6", "FMJD move", "EN move")
        };
        let prior = self.s.physical.clone();
        self.emit(
            EventKind::MovePlayed {
                side,
                notation: write_move_full(&pos, mv),
                path: mv.path().map(|s| square_number(s, v)).collect(),
                captured: mv.captured().map(|s| square_number(s, v)).collect(),
                source,
                fen_after: write_fen(&after),
            },
            Some(rule),
        )?;
        if !matches!(source, MoveSource::Board | MoveSource::Snapshot) {
            self.board_follows(FollowCause::MoveElsewhere, &prior)?;
        }
        if press {
            self.press(side, true)?;
        }
        self.after_move()
    }

    /// After the official position changed without the board (`prior` is the physical
    /// board before): where a board has spoken in the game, it is told what to change
    /// (`BoardOutOfStep`), and its lifts and releases follow until it shows the position
    /// (`BoardInStep`). A board that already shows it is in step at once.
    pub fn board_follows(&mut self, cause: FollowCause, prior: &Setup) -> Result<(), GameError> {
        if !self.s.tracked {
            return Ok(());
        }
        let p = *self.s.position();
        if prior.white == p.pieces(Color::White) && prior.black == p.pieces(Color::Black) {
            if self.s.behind {
                return self.emit(EventKind::BoardInStep, None);
            }
            return Ok(());
        }
        let v = self.s.variant();
        let (to_clear, to_fill) = self.s.to_reach_official(prior);
        self.emit(
            EventKind::BoardOutOfStep {
                cause,
                white: square_numbers(prior.white, v),
                black: square_numbers(prior.black, v),
                kings: square_numbers(prior.kings, v),
                to_clear,
                to_fill,
            },
            None,
        )
    }

    /// Presses `side`'s clock; `with_move` when the press completes a move of the same
    /// command (see [`EventKind::ClockPressed`]).
    pub fn press(&mut self, side: Color, with_move: bool) -> Result<(), GameError> {
        let Some(clock) = self.s.clock.as_ref() else {
            return Ok(());
        };
        let now = self.now.mono_ms;
        let [w, b] = clock.reading_after(ClockOp::Press { side, now })?.remaining;
        self.emit(
            EventKind::ClockPressed {
                side,
                white_ms: w,
                black_ms: b,
                with_move,
            },
            None,
        )
    }

    /// After a move: the board's own result (RU 1.8), automatic repetition, move-count
    /// draws (automatic or referred).
    fn after_move(&mut self) -> Result<(), GameError> {
        if let Some(o) = self.s.game.outcome() {
            let reason = board_end_reason(o.reason);
            return self.end(Outcome::win_for(o.winner), reason, Some(o.rule), None);
        }
        for verdict in self.s.game.draws() {
            match verdict.mode {
                DrawMode::Final(reason) => {
                    return self.end(
                        Outcome::Draw,
                        board_end_reason(reason),
                        Some(verdict.rule),
                        None,
                    );
                }
                DrawMode::Claimable => {
                    if self.s.settings.repetition == RepetitionMode::Automatic {
                        return self.end(
                            Outcome::Draw,
                            EndReason::Repetition,
                            Some(verdict.rule),
                            None,
                        );
                    }
                }
                DrawMode::Automatic => match self.s.settings.move_count_draws {
                    MoveCountDraws::Automatic => {
                        return self.end(
                            Outcome::Draw,
                            EndReason::MoveCount,
                            Some(verdict.rule),
                            None,
                        );
                    }
                    MoveCountDraws::Referred => {
                        if !self.s.referred.iter().any(|r| r == verdict.rule) {
                            self.emit(EventKind::DrawConditionReached, Some(verdict.rule))?;
                        }
                    }
                },
            }
        }
        Ok(())
    }
}

/// The event's reason for a game the position itself ended (RU 1.8, corners).
pub(super) fn board_end_reason(reason: crate::rules::EndReason) -> EndReason {
    match reason {
        crate::rules::EndReason::NoPieces => EndReason::NoPieces,
        crate::rules::EndReason::NoMoves => EndReason::NoMoves,
        crate::rules::EndReason::CornerFilled => EndReason::CornerFilled,
        crate::rules::EndReason::HomeNotLeft => EndReason::HomeNotLeft,
    }
}

/// Refuses anything but an arbiter's correction once the game has a result, citing the
/// rule that ended it.
pub(super) fn not_over(s: &Session) -> Result<(), GameError> {
    match &s.result {
        Some(r) => Err(r.refusal()),
        None => Ok(()),
    }
}

pub(super) fn running(s: &Session) -> Result<(), GameError> {
    not_over(s)?;
    if !s.started {
        return Err(GameError::NotStarted);
    }
    Ok(())
}

/// Move rules that depend on the game's history, not only on the position (the Frisian
/// limit on moving the same king).
pub(super) fn check_history_rules(s: &Session, mv: &Move) -> Result<(), GameError> {
    if s.game.blocked_king() == Some(mv.from()) && !mv.is_capture() {
        return Err(GameError::not_allowed(
            "this king may not make a fourth move in a row while its side has men",
            "FR same-king move limit",
        ));
    }
    Ok(())
}
