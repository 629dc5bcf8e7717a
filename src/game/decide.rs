//! Deciding commands: each accepted command becomes events, applied as they are emitted,
//! so the session after `handle` is exactly the fold of what it returned.

use super::command::{Actor, Command, OfferResponse, Outcome};
use super::error::GameError;
use super::event::{EndReason, EventKind, GameEvent, MoveSource, Now, OfferTiming};
use super::note::{self, EventNote};
use super::session::Session;
use super::settings::{MoveCountDraws, RepetitionMode};
use crate::clock::{ClockEvent, ClockOp, FlagCause};
use crate::notation::fen::write_fen;
use crate::notation::movetext::write_move_full;
use crate::notation::square::square_number;
use crate::rules::variant::DrawRules;
use crate::rules::{Color, DrawMode, Move};

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
    fn new(s: &Session, now: Now, actor: &'a Actor) -> Tx<'a> {
        // The copy does not grow with the game: the score sheet, the positions, the moves
        // and the clock's move times are `History`s, whose copies share their chunks.
        Tx {
            s: s.clone(),
            events: Vec::new(),
            notes: Vec::new(),
            now,
            actor,
        }
    }

    fn decided(self) -> Decided {
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
        if press {
            self.press(side, true)?;
        }
        self.after_move()
    }

    /// Presses `side`'s clock; `with_move` when the press completes a move of the same
    /// command (see [`EventKind::ClockPressed`]).
    pub fn press(&mut self, side: Color, with_move: bool) -> Result<(), GameError> {
        let Some(clock) = self.s.clock.as_ref() else {
            return Ok(());
        };
        let mut probe = clock.clone();
        probe.press(side, self.now.mono_ms)?;
        let (w, b) = (
            probe.remaining(Color::White, self.now.mono_ms),
            probe.remaining(Color::Black, self.now.mono_ms),
        );
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
fn board_end_reason(reason: crate::rules::EndReason) -> EndReason {
    match reason {
        crate::rules::EndReason::NoPieces => EndReason::NoPieces,
        crate::rules::EndReason::NoMoves => EndReason::NoMoves,
        crate::rules::EndReason::CornerFilled => EndReason::CornerFilled,
        crate::rules::EndReason::HomeNotLeft => EndReason::HomeNotLeft,
    }
}

impl Session {
    /// Records what time has done by `now`: a "Time!" call, a DGT period, a flag fall and
    /// the result it brings (RU 1.8; RU 1.9.2 when a claim is pending). The server calls it
    /// when the timer armed at [`Session::next_deadline`] fires, and before every command.
    pub fn tick(&mut self, now: Now) -> Vec<GameEvent> {
        match self.ticked(now) {
            Some(d) => {
                *self = d.session;
                d.events
            }
            None => Vec::new(),
        }
    }

    /// Like [`Session::tick`], but leaves `self` as it is: the session after what time
    /// has done and its events, or `None` when nothing is due. For a caller that records
    /// the events durably before it takes the new state; the common case (nothing due)
    /// copies nothing.
    pub fn ticked(&self, now: Now) -> Option<Decided> {
        if !self.tick_due(now) {
            return None;
        }
        let mut tx = Tx::new(self, now, &Actor::System);
        match tick_inner(&mut tx) {
            Ok(()) if !tx.events.is_empty() => Some(tx.decided()),
            _ => None,
        }
    }

    /// Records that the service was down from the last event until `now` (at restart).
    /// Unless `charged`, the clock of the side on move is stopped for that span, so the
    /// downtime is not charged (DESIGN.md 5). Nothing is recorded for a game that is not
    /// running or when no time passed.
    pub fn record_outage(&mut self, now: Now, charged: bool) -> Vec<GameEvent> {
        match self.outage(now, charged) {
            Some(d) => {
                *self = d.session;
                d.events
            }
            None => Vec::new(),
        }
    }

    /// Like [`Session::record_outage`], but leaves `self` as it is: the outage and what
    /// time did meanwhile (a flag that fell during a charged outage), or `None` when
    /// nothing is to be recorded.
    pub fn outage(&self, now: Now, charged: bool) -> Option<Decided> {
        if !self.started || self.result.is_some() || now.mono_ms <= self.last_ms {
            return None;
        }
        let mut tx = Tx::new(self, now, &Actor::System);
        let kind = EventKind::Outage {
            from_ms: self.last_ms,
            until_ms: now.mono_ms,
            charged,
        };
        tx.emit(kind, None).ok()?;
        if tx.s.tick_due(now) {
            tick_inner(&mut tx).ok()?;
        }
        Some(tx.decided())
    }

    /// Whether [`Session::tick`] at `now` would record something.
    pub fn tick_due(&self, now: Now) -> bool {
        self.started
            && self.result.is_none()
            && self.clock.as_ref().is_some_and(|c| {
                let mut probe = c.clone();
                probe
                    .settle(now.mono_ms)
                    .map(|events| !events.is_empty())
                    .unwrap_or(false)
            })
    }

    /// Decides a command at `now`. On success the returned events have been applied; on
    /// error nothing changed.
    ///
    /// # Errors
    /// [`GameError`] saying which rule or field refused it. [`GameError::TickFirst`] when
    /// time-driven events are due: call [`Session::tick`] first.
    pub fn handle(
        &mut self,
        actor: &Actor,
        cmd: Command,
        now: Now,
    ) -> Result<Vec<GameEvent>, GameError> {
        let d = self.handled(actor, cmd, now)?;
        *self = d.session;
        Ok(d.events)
    }

    /// Like [`Session::handle`], but leaves `self` as it is and returns the session after
    /// the command with its events (one working copy): for a caller that records the
    /// events durably before it takes the new state.
    ///
    /// # Errors
    /// As [`Session::handle`].
    pub fn handled(&self, actor: &Actor, cmd: Command, now: Now) -> Result<Decided, GameError> {
        if now.mono_ms < self.last_ms {
            return Err(GameError::Invalid(format!(
                "time went back: {} ms is before the last event at {} ms",
                now.mono_ms, self.last_ms
            )));
        }
        if self.tick_due(now) {
            return Err(GameError::TickFirst);
        }
        let mut tx = Tx::new(self, now, actor);
        decide(&mut tx, cmd)?;
        Ok(tx.decided())
    }
}

fn tick_inner(tx: &mut Tx) -> Result<(), GameError> {
    if !tx.s.tick_due(tx.now) {
        return Ok(());
    }
    let mut probe = tx.s.clock.clone().ok_or(GameError::NotStarted)?;
    let events = probe.settle(tx.now.mono_ms)?;
    tx.emit(
        EventKind::ClockChanged {
            op: ClockOp::Settle {
                now: tx.now.mono_ms,
            },
            reason: None,
        },
        None,
    )?;
    for e in events {
        match e {
            ClockEvent::TimeCalled { .. } => {
                let side = tx.s.clock_side();
                tx.emit(EventKind::TimeCalled { side }, Some("EN Time!"))?;
            }
            ClockEvent::Flagged(flag) => {
                let loser = flag.side;
                if let Some(claim) = tx.s.claim.clone() {
                    // RU 1.9.2: time ran out while the claim was checked.
                    let upheld = claim.correct;
                    tx.emit(EventKind::ClaimDecided { upheld }, Some("RU 1.9.2"))?;
                    return if upheld {
                        tx.end(Outcome::Draw, EndReason::Repetition, Some("RU 1.9.2"), None)
                    } else {
                        tx.end(
                            Outcome::win_for(!loser),
                            EndReason::IncorrectClaimOnTime,
                            Some("RU 1.9.2"),
                            None,
                        )
                    };
                }
                let (reason, rule) = match flag.cause {
                    FlagCause::MoveLimit => (EndReason::MoveLimit, "EN Time!"),
                    FlagCause::TimeExpired => (
                        EndReason::FlagFall,
                        cite(&tx.s, "RU 1.8", "FMJD time", "EN time"),
                    ),
                };
                return tx.end(Outcome::win_for(!loser), reason, Some(rule), None);
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn running(s: &Session) -> Result<(), GameError> {
    if s.result.is_some() {
        return Err(GameError::GameOver);
    }
    if !s.started {
        return Err(GameError::NotStarted);
    }
    Ok(())
}

fn decide(tx: &mut Tx, cmd: Command) -> Result<(), GameError> {
    match cmd {
        Command::Start => {
            if tx.s.result.is_some() {
                return Err(GameError::GameOver);
            }
            if tx.s.started {
                return Err(GameError::AlreadyStarted);
            }
            tx.emit(EventKind::GameStarted, None)
        }
        Command::SubmitMove {
            side,
            notation,
            offer_draw,
        } => submit_move(tx, side, &notation, offer_draw),
        Command::PressClock { side } => press_clock(tx, side),
        Command::OfferDraw { side } => super::draws::offer_draw(tx, side),
        Command::RespondToOffer { side, response } => super::draws::respond(tx, side, response),
        Command::ClaimDraw {
            side,
            kind,
            written_move,
        } => super::draws::claim(tx, side, kind, written_move.as_deref()),
        Command::Resign { side } => {
            running(&tx.s)?;
            let rule = cite(&tx.s, "RU 1.8", "FMJD resignation", "EN resignation");
            tx.end(
                Outcome::win_for(!side),
                EndReason::Resignation,
                Some(rule),
                None,
            )
        }
        Command::Board(input) => super::board::board_input(tx, input),
        Command::Arbiter(action) => super::arbiter::arbiter(tx, action),
    }
}

fn move_preconditions(s: &Session, side: Color) -> Result<(), GameError> {
    running(s)?;
    if s.claim.is_some() {
        return Err(GameError::not_allowed(
            "a draw claim is being decided",
            "RU 1.9.2",
        ));
    }
    match s.awaiting_press {
        Some(mover) if mover == side => {
            return Err(GameError::not_allowed(
                format!("{side} has moved and must press the clock"),
                "RU 1.4.1",
            ));
        }
        Some(mover) => {
            return Err(GameError::not_allowed(
                format!("{mover} has not pressed the clock yet"),
                "RU 1.4.1",
            ));
        }
        None => {}
    }
    if s.position().turn() != side {
        return Err(GameError::NotYourTurn { side });
    }
    if s.irregularity.is_some() {
        return Err(GameError::not_allowed(
            "an irregularity on the board must be put right or ruled on first",
            "RU 1.4",
        ));
    }
    Ok(())
}

fn submit_move(tx: &mut Tx, side: Color, notation: &str, offer: bool) -> Result<(), GameError> {
    move_preconditions(&tx.s, side)?;
    let mv = tx.s.parse_move(notation)?;
    check_history_rules(&tx.s, &mv)?;
    if let Some(bound) = tx.s.touch.bound
        && bound != mv.from()
    {
        let n = square_number(bound, tx.s.variant());
        return Err(GameError::not_allowed(
            format!("the touched piece on {n} must be moved"),
            "RU 1.4.7",
        ));
    }
    if offer {
        super::draws::check_offer_allowed(&tx.s, side)?;
    }
    let press = tx.s.settings.press_on_move && !offer;
    tx.play(&mv, MoveSource::Digital, press)?;
    if offer && tx.s.result.is_none() {
        let rule = cite(&tx.s, "RU 1.9.3", "FMJD draw offer", "EN draw offer");
        tx.emit(
            EventKind::DrawOffered {
                side,
                timing: OfferTiming::AfterOwnMove,
            },
            Some(rule),
        )?;
        if tx.s.settings.press_on_move {
            tx.press(side, true)?;
        }
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

fn press_clock(tx: &mut Tx, side: Color) -> Result<(), GameError> {
    running(&tx.s)?;
    if tx.s.clock.is_none() {
        return Err(GameError::not_allowed("the game is untimed", "RU 1.8"));
    }
    if tx.s.awaiting_press != Some(side) {
        return Err(GameError::not_allowed(
            format!("{side} has no move to complete with a press"),
            "RU 1.4.1",
        ));
    }
    if !tx.s.pending_removal.is_empty() {
        let rule = cite(&tx.s, "RU 1.5.13", "FMJD 4.5", "EN capture");
        return Err(GameError::not_allowed(
            "captured pieces are still on the board",
            rule,
        ));
    }
    tx.press(side, false)
}
