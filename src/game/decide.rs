//! Deciding commands: each accepted command becomes events, applied as they are emitted,
//! so the session after `handle` is exactly the fold of what it returned.

use super::command::{Actor, Command, Outcome};
use super::error::GameError;
use super::event::{EndReason, EventKind, GameEvent, MoveSource, Now, OfferTiming, OutageMeasure};
use super::session::Session;
use super::tx::{Decided, Tx, check_history_rules, cite, not_over, running};
use crate::clock::{ClockEvent, ClockOp, FlagCause};
use crate::notation::square::write_square;
use crate::rules::Color;

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

    /// Records that the service was down from `down_since` (when it last served the
    /// game; the last event when that is later or unknown) until `now` (at restart),
    /// its length measured as `measured` says. Unless `charged`, the clock of the side on
    /// move is stopped for that span, so the downtime is not charged (DESIGN.md 5); the
    /// time before it, while the service ran, is charged as usual. Nothing is recorded
    /// for a game that is not running or when no time passed.
    pub fn record_outage(
        &mut self,
        now: Now,
        down_since: Option<u64>,
        charged: bool,
        measured: OutageMeasure,
    ) -> Vec<GameEvent> {
        match self.outage(now, down_since, charged, measured) {
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
    pub fn outage(
        &self,
        now: Now,
        down_since: Option<u64>,
        charged: bool,
        measured: OutageMeasure,
    ) -> Option<Decided> {
        let from_ms = down_since.map_or(self.last_ms, |s| s.max(self.last_ms));
        if !self.started || self.result.is_some() || now.mono_ms <= from_ms {
            return None;
        }
        let mut tx = Tx::new(self, now, &Actor::System);
        let kind = EventKind::Outage {
            from_ms,
            until_ms: now.mono_ms,
            charged,
            measured: Some(measured),
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
            && (self.clock.as_ref().is_some_and(|c| c.settles(now.mono_ms))
                || self.default_deadline().is_some_and(|d| d <= now.mono_ms))
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
        self.handled_from_board(actor, cmd, now, None)
    }

    /// Like [`Session::handled`], recording `board_ms` (an electronic board's own clock
    /// on the message) in every event the command causes.
    ///
    /// # Errors
    /// As [`Session::handle`].
    pub fn handled_from_board(
        &self,
        actor: &Actor,
        cmd: Command,
        now: Now,
        board_ms: Option<i64>,
    ) -> Result<Decided, GameError> {
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
        tx.board_ms = board_ms;
        decide(&mut tx, cmd)?;
        Ok(tx.decided())
    }
}

fn tick_inner(tx: &mut Tx) -> Result<(), GameError> {
    if !tx.s.tick_due(tx.now) {
        return Ok(());
    }
    // T 5 before the clock when the default time came first: nothing on the clock was
    // due at that instant.
    if let Some(at) = tx.s.default_deadline().filter(|&d| d <= tx.now.mono_ms)
        && !tx.s.clock.as_ref().is_some_and(|c| c.settles(at))
    {
        // Recorded at the instant it passed, as a flag's fall is timed by the clock:
        // nothing was recorded after it (a command after it waits for this tick).
        let late = tx.now.mono_ms - at.max(tx.s.last_ms);
        tx.now = Now {
            mono_ms: tx.now.mono_ms - late,
            wall: tx.now.wall
                - i64::try_from(late)
                    .ok()
                    .and_then(chrono::Duration::try_milliseconds)
                    .unwrap_or_default(),
        };
        return default_time(tx);
    }
    settle_clock(tx)?;
    if tx.s.result.is_none() && tx.s.default_deadline().is_some_and(|d| d <= tx.now.mono_ms) {
        return default_time(tx);
    }
    Ok(())
}

/// T 5: the default time has passed and the side to move has not acted: it loses by
/// default; both lose when the other side was marked absent (and has not acted either).
fn default_time(tx: &mut Tx) -> Result<(), GameError> {
    let side = tx.s.clock_side();
    let other = !side;
    let outcome = if tx.s.marked_absent(other) && !tx.s.has_acted(other) {
        Outcome::DoubleForfeit
    } else {
        Outcome::win_for(other)
    };
    tx.end(outcome, EndReason::Default, Some("T 5"), None)
}

fn settle_clock(tx: &mut Tx) -> Result<(), GameError> {
    if !tx
        .s
        .clock
        .as_ref()
        .is_some_and(|c| c.settles(tx.now.mono_ms))
    {
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
                    tx.emit(
                        EventKind::ClaimDecided {
                            upheld,
                            reason: None,
                        },
                        Some("RU 1.9.2"),
                    )?;
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

fn decide(tx: &mut Tx, cmd: Command) -> Result<(), GameError> {
    match cmd {
        Command::Start => {
            not_over(&tx.s)?;
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
        Command::Arbiter(action, given) => super::arbiter::arbiter(tx, action, given),
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
    if s.board_irregular() {
        return Err(GameError::not_allowed(
            "an irregularity on the board must be put right or ruled on first",
            "RU 1.4",
        ));
    }
    Ok(())
}

fn submit_move(tx: &mut Tx, side: Color, notation: &str, offer: bool) -> Result<(), GameError> {
    move_preconditions(&tx.s, side)?;
    let mv = tx.s.parse_move("move", notation)?;
    check_history_rules(&tx.s, &mv)?;
    if let Some(bound) = tx.s.touch.bound
        && bound != mv.from()
    {
        let n = write_square(bound, tx.s.variant());
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
