//! The clock state machine.
//!
//! The state only changes through [`Clock::apply`] (or its shorthands). The passing of
//! time is computed, not stored: every query and every operation first brings a copy of
//! the state up to its `now` — a "Time!" call, a DGT period, a flag, in the order of their
//! instants — and an operation keeps that copy only if it succeeds.

use serde::{Deserialize, Serialize};

use super::control::{Bonus, TimeControl};
use super::error::ClockError;
use super::flag::{Flag, FlagCause};
use super::op::{ClockEvent, ClockOp};
use super::{Millis, Side};
use crate::history::History;

/// Where the clock is, as seen at some instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// Not started yet; times can be adjusted.
    NotStarted,
    /// This side's clock is running.
    Running(Side),
    /// Paused by the arbiter; this side's clock will run on resume.
    Paused(Side),
    /// A flag fell; both clocks are frozen.
    Flagged(Flag),
    /// Stopped (game over) at this instant; both clocks are frozen.
    Stopped {
        /// The instant.
        at: Millis,
    },
}

/// [`Clock::apply`]'s outcome before it is kept: the state, the events, the completed
/// move's running time.
type Applied = (Core, Vec<ClockEvent>, Option<(Side, Millis)>);

/// A clock read at one instant: see [`Clock::reading`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Where the clock is.
    pub phase: Phase,
    /// Remaining time, White's then Black's (`Side::index`).
    pub remaining: [Millis; 2],
    /// The period each side is in (1 for the first), White's then Black's.
    pub periods: [u32; 2],
}

impl Reading {
    /// `side`'s remaining time.
    #[must_use]
    pub fn remaining(&self, side: Side) -> Millis {
        self.remaining[side.index()]
    }

    /// The period `side` is in.
    #[must_use]
    pub fn period(&self, side: Side) -> u32 {
        self.periods[side.index()]
    }
}

/// Where each millisecond of one side's clock came from and went.
///
/// **Conservation.** At every instant `now`, for each side,
///
/// ```text
/// remaining(side, now) = initial + periods + increments + refunds + added - removed - charged
/// ```
///
/// exactly (integer milliseconds, no rounding; [`Ledger::balance`]), and summed over both
/// sides, `charged + exempt` equals the clock's running time: the total length of the
/// spans from `start` or `resume` to `pause`, `stop`, the flag, or `now`. Time is only
/// created by the first four terms (the control) and `added` (the arbiter), and only
/// destroyed by `removed` (the arbiter) and `charged` (running).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ledger {
    /// The first period's time.
    pub initial: Millis,
    /// Time of later periods, added on reaching them.
    pub periods: Millis,
    /// Fischer increments (including one at start if the control says so).
    pub increments: Millis,
    /// Bronstein delay given back after moves.
    pub refunds: Millis,
    /// Arbiter bonuses (`add_time`, and `set_remaining` upwards).
    pub added: Millis,
    /// Arbiter penalties (`subtract_time`, and `set_remaining` downwards).
    pub removed: Millis,
    /// Time taken off the clock while it ran.
    pub charged: Millis,
    /// Running time not taken off because of a simple (US) delay.
    pub exempt: Millis,
}

impl Ledger {
    /// `initial + periods + increments + refunds + added - removed - charged`, or `None`
    /// if that would leave `0..=u64::MAX` (it never does for a ledger from a clock).
    #[must_use]
    pub fn balance(&self) -> Option<Millis> {
        let credit = u128::from(self.initial)
            + u128::from(self.periods)
            + u128::from(self.increments)
            + u128::from(self.refunds)
            + u128::from(self.added);
        let debit = u128::from(self.removed) + u128::from(self.charged);
        credit
            .checked_sub(debit)
            .and_then(|b| Millis::try_from(b).ok())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum Run {
    NotStarted,
    Running,
    Paused,
    Flagged(Flag),
    Stopped(Millis),
}

/// Everything but the per-move lists: small and `Copy`, so an operation works on a copy
/// and commits it only on success.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Core {
    run: Run,
    /// The side whose move it is (whose clock runs, or would).
    to_move: Side,
    /// When the current running span began (meaningful while running).
    since: Millis,
    /// The instant of the last accepted operation.
    last: Millis,
    /// Running time of the current move before `since` (spans before pauses); once the
    /// clock is frozen, the whole running time of the interrupted move.
    elapsed: Millis,
    /// Bonus in force for the current move (of the mover's period when it began).
    bonus: Bonus,
    /// When "Time!" was called on the current move.
    called: Option<Millis>,
    /// Remaining time per side; for the side to move, at the start of its move (plus
    /// later additions): the move's charge is taken off on the fly.
    base: [Millis; 2],
    /// Completed moves per side.
    moves: [u32; 2],
    /// Periods reached per side (1 = first period).
    periods: [u32; 2],
    /// Moves completed in the current period per side.
    period_moves: [u32; 2],
    /// Ledger per side, without the current move's charge.
    ledger: [Ledger; 2],
}

/// What comes due while a move runs, ordered for equal instants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Call,
    Period,
    Flag,
    Forfeit,
}

/// A tournament clock for one game.
///
/// Pure: time is the `now` argument (a monotonic instant in ms) of every operation and
/// query. Operations return the [`ClockEvent`]s they caused, or a [`ClockError`] and
/// change nothing. Queries at an instant before the last operation see the clock as at
/// that operation.
///
/// # Examples
///
/// ```
/// use draughts_arbiter::clock::{Clock, Side, TimeControl};
///
/// let mut clock = Clock::new("3m+2s".parse::<TimeControl>().expect("valid"));
/// clock.start(Side::White, 0).expect("starts");
/// clock.press(Side::White, 10_000).expect("white's clock runs");
/// assert_eq!(clock.remaining(Side::White, 10_000), 172_000); // 180 s - 10 s + 2 s
/// assert_eq!(clock.flag_time(10_000), Some(190_000)); // black has 180 s from 10 s
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Clock {
    control: TimeControl,
    core: Core,
    /// Running time of each completed move, per side.
    used: [History<Millis>; 2],
}

impl Clock {
    /// A clock not yet started, both sides with the first period's time.
    #[must_use]
    pub fn new(control: TimeControl) -> Clock {
        let initial = control.initial();
        let ledger = Ledger {
            initial,
            ..Ledger::default()
        };
        Clock {
            core: Core {
                run: Run::NotStarted,
                to_move: Side::White,
                since: 0,
                last: 0,
                elapsed: 0,
                bonus: Bonus::None,
                called: None,
                base: [initial; 2],
                moves: [0; 2],
                periods: [1; 2],
                period_moves: [0; 2],
                ledger: [ledger; 2],
            },
            control,
            used: [History::new(), History::new()],
        }
    }

    /// Rebuilds a clock from the log of its accepted operations.
    ///
    /// # Errors
    ///
    /// The first operation that is refused (a log of accepted operations has none).
    pub fn replay(
        control: TimeControl,
        ops: impl IntoIterator<Item = ClockOp>,
    ) -> Result<Clock, ClockError> {
        let mut clock = Clock::new(control);
        for op in ops {
            clock.apply(op)?;
        }
        Ok(clock)
    }

    /// The time control.
    #[must_use]
    pub fn control(&self) -> &TimeControl {
        &self.control
    }

    /// Applies one operation at its instant.
    ///
    /// First everything due at or before `now` happens, in order of instants: a "Time!"
    /// call, a DGT period, a flag. **A deadline belongs to the deadline**: an operation
    /// at exactly the instant a flag falls comes too late (remaining time reached zero at
    /// that instant), so a press at the flag instant is refused with
    /// [`ClockError::FlagFell`]; the same holds for the "Time!" forfeit. (A DGT period
    /// due at `now` is added before the operation.)
    ///
    /// # Errors
    ///
    /// - [`ClockError::TimeWentBack`] if `now` is before the last accepted operation;
    /// - [`ClockError::FlagFell`] / [`ClockError::Stopped`] once the clock is frozen (only
    ///   [`ClockOp::Settle`] is always accepted);
    /// - `Start`: [`ClockError::AlreadyStarted`];
    /// - `Press`: [`ClockError::NotStarted`], [`ClockError::Paused`],
    ///   [`ClockError::NotRunning`] if the side's clock is not the running one;
    /// - `Pause`: [`ClockError::NotStarted`], [`ClockError::Paused`];
    ///   `Resume`: [`ClockError::NotStarted`], [`ClockError::NotPaused`];
    /// - adjustments: [`ClockError::ZeroAmount`], [`ClockError::ZeroRemaining`],
    ///   [`ClockError::ExhaustsClock`];
    /// - [`ClockError::Overflow`] if a time would pass `u64::MAX` ms.
    ///
    /// An error changes nothing.
    pub fn apply(&mut self, op: ClockOp) -> Result<Vec<ClockEvent>, ClockError> {
        let (core, events, used) = self.applied(op)?;
        if let Some((side, e)) = used {
            self.used[side.index()].push(e);
        }
        self.core = core;
        Ok(events)
    }

    /// What [`Clock::apply`] would make of `op`: the state after it, the events, and the
    /// completed move's running time to record; `self` is unchanged.
    fn applied(&self, op: ClockOp) -> Result<Applied, ClockError> {
        let now = op.now();
        if now < self.core.last {
            return Err(ClockError::TimeWentBack {
                now,
                last: self.core.last,
            });
        }
        let mut events = Vec::new();
        let mut core = self.core;
        core.advance(&self.control, now, &mut |e| events.push(e));
        let used = core.apply(&self.control, op, &mut events)?;
        core.last = now;
        Ok((core, events, used))
    }

    /// The [`Clock::reading`] at `op`'s instant of the clock as [`Clock::apply`] would
    /// leave it, without changing the clock or copying its move times (a press's event
    /// records both clocks after it before the press is applied).
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`].
    pub fn reading_after(&self, op: ClockOp) -> Result<Reading, ClockError> {
        let (core, _, _) = self.applied(op)?;
        Ok(self.read(core, op.now()))
    }

    /// Starts the game with `side`'s clock running. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::Start`].
    pub fn start(&mut self, side: Side, now: Millis) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::Start { side, now })
    }

    /// `side` presses after its move. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::Press`].
    pub fn press(&mut self, side: Side, now: Millis) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::Press { side, now })
    }

    /// Arbiter pause. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::Pause`].
    pub fn pause(&mut self, now: Millis) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::Pause { now })
    }

    /// Arbiter resume. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::Resume`].
    pub fn resume(&mut self, now: Millis) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::Resume { now })
    }

    /// Arbiter: set `side`'s remaining time. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::SetRemaining`].
    pub fn set_remaining(
        &mut self,
        side: Side,
        remaining: Millis,
        now: Millis,
    ) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::SetRemaining {
            side,
            remaining,
            now,
        })
    }

    /// Arbiter: add time to `side`. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::AddTime`].
    pub fn add_time(
        &mut self,
        side: Side,
        amount: Millis,
        now: Millis,
    ) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::AddTime { side, amount, now })
    }

    /// Arbiter: take time from `side`. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::SubtractTime`].
    pub fn subtract_time(
        &mut self,
        side: Side,
        amount: Millis,
        now: Millis,
    ) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::SubtractTime { side, amount, now })
    }

    /// Records what time has done up to `now`. See [`ClockOp::Settle`].
    ///
    /// # Errors
    ///
    /// Only [`ClockError::TimeWentBack`].
    pub fn settle(&mut self, now: Millis) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::Settle { now })
    }

    /// Whether [`Clock::settle`] at `now` would record anything ("Time!", a DGT period, a
    /// flag), asked without a copy of the clock's move times (the hub asks before every
    /// command).
    #[must_use]
    pub fn settles(&self, now: Millis) -> bool {
        if now < self.core.last {
            return false;
        }
        let mut core = self.core;
        let mut any = false;
        core.advance(&self.control, now, &mut |_| any = true);
        any
    }

    /// Game over: freezes both clocks. See [`Clock::apply`].
    ///
    /// # Errors
    ///
    /// As [`Clock::apply`] for [`ClockOp::Stop`].
    pub fn stop(&mut self, now: Millis) -> Result<Vec<ClockEvent>, ClockError> {
        self.apply(ClockOp::Stop { now })
    }

    /// The state brought up to `now` (a copy; `self` is unchanged).
    fn at(&self, now: Millis) -> Core {
        self.project(self.core, now)
    }

    /// The state `core` brought up to `now` (not before its last operation).
    fn project(&self, mut core: Core, now: Millis) -> Core {
        core.advance(&self.control, now.max(core.last), &mut |_| {});
        core
    }

    /// Where the clock is at `now`.
    #[must_use]
    pub fn phase(&self, now: Millis) -> Phase {
        self.at(now).phase()
    }

    /// [`Clock::phase`], both sides' [`Clock::remaining`] and both [`Clock::period`]s at
    /// `now`, from one projection of the clock to `now` instead of one each (a reply's
    /// clocks and every recorded press read them together).
    #[must_use]
    pub fn reading(&self, now: Millis) -> Reading {
        self.read(self.core, now)
    }

    /// [`Clock::reading`] of the state `core`.
    fn read(&self, core: Core, now: Millis) -> Reading {
        let now = now.max(core.last);
        let core = self.project(core, now);
        Reading {
            phase: core.phase(),
            remaining: [
                core.remaining(Side::White, now),
                core.remaining(Side::Black, now),
            ],
            periods: core.periods,
        }
    }

    /// `side`'s remaining time at `now`; zero once its time has run out, frozen once the
    /// clock is. With a simple delay it does not go down during the delay.
    #[must_use]
    pub fn remaining(&self, side: Side, now: Millis) -> Millis {
        let now = now.max(self.core.last);
        self.at(now).remaining(side, now)
    }

    /// The instant the running side's flag falls if nobody presses: when its remaining
    /// time reaches zero (after the simple delay, and after any DGT periods still to be
    /// added), or its "Time!" forfeit, whichever is first. `Some` of the past instant once
    /// a flag has fallen; `None` while not running. Arm one timer at
    /// [`Clock::next_deadline`] rather than here if the control has a move limit or DGT
    /// periods, so that the warning and the period are recorded on time.
    #[must_use]
    pub fn flag_time(&self, now: Millis) -> Option<Millis> {
        let mut core = self.at(now);
        match core.run {
            Run::Flagged(flag) => Some(flag.at),
            Run::Running => {
                core.advance_elapsed(&self.control, Millis::MAX, &mut |_| {});
                match core.run {
                    Run::Flagged(flag) => Some(flag.at),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The next instant after `now` at which the clock does something by itself ("Time!"
    /// call, DGT period, flag), or `None` while not running. The server arms one timer
    /// here and applies [`ClockOp::Settle`] when it fires.
    #[must_use]
    pub fn next_deadline(&self, now: Millis) -> Option<Millis> {
        let core = self.at(now);
        match core.run {
            Run::Running => core
                .next_due(&self.control)
                .and_then(|(e, _)| core.instant_of(e)),
            _ => None,
        }
    }

    /// The flag, if one has fallen by `now`.
    #[must_use]
    pub fn flag(&self, now: Millis) -> Option<Flag> {
        match self.at(now).run {
            Run::Flagged(flag) => Some(flag),
            _ => None,
        }
    }

    /// When "Time!" was called on the current move, if it has been by `now`.
    #[must_use]
    pub fn time_called(&self, now: Millis) -> Option<Millis> {
        self.at(now).called
    }

    /// Running time of the move in progress at `now` (pauses excluded).
    #[must_use]
    pub fn move_elapsed(&self, now: Millis) -> Millis {
        let now = now.max(self.core.last);
        self.at(now).elapsed_at(now)
    }

    /// Moves `side` has completed (pressed).
    #[must_use]
    pub fn moves(&self, side: Side) -> u32 {
        self.core.moves[side.index()]
    }

    /// Periods `side` has reached by `now` (1 = still in the first).
    #[must_use]
    pub fn period(&self, side: Side, now: Millis) -> u32 {
        self.at(now).periods[side.index()]
    }

    /// Running time of each of `side`'s completed moves, in order (for the score sheet).
    #[must_use]
    pub fn move_times(&self, side: Side) -> &History<Millis> {
        &self.used[side.index()]
    }

    /// `side`'s [`Ledger`] at `now`, including the move in progress.
    #[must_use]
    pub fn ledger(&self, side: Side, now: Millis) -> Ledger {
        let now = now.max(self.core.last);
        let core = self.at(now);
        let mut l = core.ledger[side.index()];
        if side == core.to_move {
            let e = core.elapsed_at(now);
            let c = core.charge(e);
            l.charged = l.charged.saturating_add(c);
            l.exempt = l.exempt.saturating_add(e - c);
        }
        l
    }
}

/// Time charged for a move of running time `e` under `bonus`.
fn charge(bonus: Bonus, e: Millis) -> Millis {
    match bonus {
        Bonus::Delay(d) => e.saturating_sub(d),
        _ => e,
    }
}

impl Core {
    fn charge(&self, e: Millis) -> Millis {
        charge(self.bonus, e)
    }

    /// Running time of the current move at `now`.
    fn elapsed_at(&self, now: Millis) -> Millis {
        match self.run {
            Run::Running => self.elapsed.saturating_add(now.saturating_sub(self.since)),
            _ => self.elapsed,
        }
    }

    fn phase(&self) -> Phase {
        match self.run {
            Run::NotStarted => Phase::NotStarted,
            Run::Running => Phase::Running(self.to_move),
            Run::Paused => Phase::Paused(self.to_move),
            Run::Flagged(flag) => Phase::Flagged(flag),
            Run::Stopped(at) => Phase::Stopped { at },
        }
    }

    fn remaining(&self, side: Side, now: Millis) -> Millis {
        let base = self.base[side.index()];
        if side == self.to_move {
            base.saturating_sub(self.charge(self.elapsed_at(now)))
        } else {
            base
        }
    }

    /// The instant at which the current move's running time reaches `e` (while running).
    fn instant_of(&self, e: Millis) -> Option<Millis> {
        self.since.checked_add(e.saturating_sub(self.elapsed))
    }

    /// The running time of the current move at which its remaining time is used up.
    fn zero_at(&self) -> Option<Millis> {
        let base = self.base[self.to_move.index()];
        match self.bonus {
            Bonus::Delay(d) => base.checked_add(d),
            _ => Some(base),
        }
    }

    /// The next thing due on the current move, as (running time, kind).
    fn next_due(&self, control: &TimeControl) -> Option<(Millis, Due)> {
        let mut best: Option<(Millis, Due)> = None;
        let mut consider = |e: Option<Millis>, due: Due| {
            if let Some(e) = e.filter(|&e| best.is_none_or(|b| (e, due) < b)) {
                best = Some((e, due));
            }
        };
        if let Some(ml) = control.options().move_limit {
            if self.called.is_none() {
                consider(Some(ml.limit), Due::Call);
            }
            consider(ml.limit.checked_add(ml.allowance), Due::Forfeit);
        }
        let side = self.to_move.index();
        let dgt =
            control.options().period_on_flag && control.next_period(self.periods[side]).is_some();
        consider(self.zero_at(), if dgt { Due::Period } else { Due::Flag });
        best
    }

    /// Lets the running clock run to `now`.
    fn advance(&mut self, control: &TimeControl, now: Millis, sink: &mut dyn FnMut(ClockEvent)) {
        if self.run == Run::Running {
            let e = self.elapsed_at(now);
            self.advance_elapsed(control, e, sink);
        }
    }

    /// Lets the running clock run until the move's running time is `target`: everything
    /// due at or before it happens, in order.
    fn advance_elapsed(
        &mut self,
        control: &TimeControl,
        target: Millis,
        sink: &mut dyn FnMut(ClockEvent),
    ) {
        let side = self.to_move;
        let i = side.index();
        // Each round calls "Time!" (once), adds a DGT period (at most one per period, as
        // the last period of a DGT control has no move count) or ends the run.
        for _ in 0..control.periods().len().saturating_add(2) {
            let Some((e, due)) = self.next_due(control) else {
                return;
            };
            if e > target {
                return;
            }
            // Due after the last representable instant: never.
            let Some(at) = self.instant_of(e) else {
                return;
            };
            match due {
                Due::Call => {
                    self.called = Some(at);
                    let allowance = control.options().move_limit.map_or(0, |m| m.allowance);
                    sink(ClockEvent::TimeCalled {
                        side,
                        at,
                        deadline: at.saturating_add(allowance),
                    });
                }
                Due::Period => {
                    let added = control.next_period(self.periods[i]).map_or(0, |p| p.time);
                    let required = control.moves_required(self.periods[i]);
                    self.base[i] = self.base[i].saturating_add(added);
                    self.ledger[i].periods = self.ledger[i].periods.saturating_add(added);
                    self.periods[i] = self.periods[i].saturating_add(1);
                    self.period_moves[i] = 0;
                    sink(ClockEvent::PeriodOnFlag {
                        side,
                        period: self.periods[i],
                        added,
                        at,
                        moves: self.moves[i],
                        required,
                    });
                }
                Due::Flag | Due::Forfeit => {
                    let flag = Flag {
                        side,
                        at,
                        cause: if due == Due::Flag {
                            FlagCause::TimeExpired
                        } else {
                            FlagCause::MoveLimit
                        },
                    };
                    self.elapsed = e;
                    self.run = Run::Flagged(flag);
                    sink(ClockEvent::Flagged(flag));
                    return;
                }
            }
        }
    }

    /// The error for an operation that needs a live clock, if it is frozen.
    fn frozen(&self) -> Result<(), ClockError> {
        match self.run {
            Run::Flagged(flag) => Err(ClockError::FlagFell(flag)),
            Run::Stopped(_) => Err(ClockError::Stopped),
            _ => Ok(()),
        }
    }

    /// Begins `side`'s move at `now`.
    fn begin_move(&mut self, control: &TimeControl, side: Side, now: Millis) {
        self.to_move = side;
        self.since = now;
        self.elapsed = 0;
        self.called = None;
        self.bonus = control
            .period(self.periods[side.index()])
            .map_or(Bonus::None, |p| p.bonus);
    }

    /// Applies `op` (already advanced to its instant). Returns the completed move's
    /// running time to record, if any.
    fn apply(
        &mut self,
        control: &TimeControl,
        op: ClockOp,
        events: &mut Vec<ClockEvent>,
    ) -> Result<Option<(Side, Millis)>, ClockError> {
        match op {
            ClockOp::Settle { .. } => Ok(None),
            ClockOp::Start { side, now } => {
                self.frozen()?;
                if self.run != Run::NotStarted {
                    return Err(ClockError::AlreadyStarted);
                }
                let at_start = match control.period(1).map(|p| p.bonus) {
                    Some(Bonus::Increment(inc)) if control.options().increment_at_start => {
                        Some(inc)
                    }
                    _ => None,
                };
                if let Some(inc) = at_start {
                    for s in Side::BOTH {
                        let i = s.index();
                        self.base[i] = self.base[i].checked_add(inc).ok_or(ClockError::Overflow)?;
                        self.ledger[i].increments = self.ledger[i].increments.saturating_add(inc);
                    }
                }
                self.begin_move(control, side, now);
                self.run = Run::Running;
                Ok(None)
            }
            ClockOp::Press { side, now } => {
                self.frozen()?;
                match self.run {
                    Run::NotStarted => return Err(ClockError::NotStarted),
                    Run::Paused => return Err(ClockError::Paused),
                    _ => {}
                }
                if side != self.to_move {
                    return Err(ClockError::NotRunning(side));
                }
                let i = side.index();
                let e = self.elapsed_at(now);
                let c = self.charge(e);
                let mut rem = self.base[i].saturating_sub(c);
                let l = &mut self.ledger[i];
                l.charged = l.charged.saturating_add(c);
                l.exempt = l.exempt.saturating_add(e - c);
                match self.bonus {
                    Bonus::Increment(inc) => {
                        rem = rem.checked_add(inc).ok_or(ClockError::Overflow)?;
                        l.increments = l.increments.saturating_add(inc);
                    }
                    Bonus::Bronstein(d) => {
                        let back = d.min(e);
                        rem = rem.checked_add(back).ok_or(ClockError::Overflow)?;
                        l.refunds = l.refunds.saturating_add(back);
                    }
                    Bonus::None | Bonus::Delay(_) => {}
                }
                self.moves[i] = self.moves[i].saturating_add(1);
                self.period_moves[i] = self.period_moves[i].saturating_add(1);
                let count = control.period(self.periods[i]).and_then(|p| p.moves);
                let completed = !control.options().period_on_flag
                    && count.is_some_and(|n| self.period_moves[i] >= n);
                let next = control.next_period(self.periods[i]).filter(|_| completed);
                if let Some(next) = next {
                    rem = rem.checked_add(next.time).ok_or(ClockError::Overflow)?;
                    l.periods = l.periods.saturating_add(next.time);
                    self.periods[i] = self.periods[i].saturating_add(1);
                    self.period_moves[i] = 0;
                    events.push(ClockEvent::PeriodReached {
                        side,
                        period: self.periods[i],
                        added: next.time,
                        at: now,
                    });
                }
                self.base[i] = rem;
                self.begin_move(control, side.opposite(), now);
                Ok(Some((side, e)))
            }
            ClockOp::Pause { now } => {
                self.frozen()?;
                match self.run {
                    Run::NotStarted => Err(ClockError::NotStarted),
                    Run::Paused => Err(ClockError::Paused),
                    _ => {
                        self.elapsed = self.elapsed_at(now);
                        self.run = Run::Paused;
                        Ok(None)
                    }
                }
            }
            ClockOp::Resume { now } => {
                self.frozen()?;
                match self.run {
                    Run::NotStarted => Err(ClockError::NotStarted),
                    Run::Paused => {
                        self.since = now;
                        self.run = Run::Running;
                        Ok(None)
                    }
                    _ => Err(ClockError::NotPaused),
                }
            }
            ClockOp::Stop { now } => {
                self.frozen()?;
                self.elapsed = self.elapsed_at(now);
                self.run = Run::Stopped(now);
                Ok(None)
            }
            ClockOp::SetRemaining {
                side,
                remaining,
                now,
            } => {
                self.frozen()?;
                if remaining == 0 {
                    return Err(ClockError::ZeroRemaining);
                }
                let i = side.index();
                let current = self.remaining(side, now);
                // The running side's base still has the move's charge to come off.
                let pending = if side == self.to_move {
                    self.charge(self.elapsed_at(now))
                } else {
                    0
                };
                self.base[i] = remaining.checked_add(pending).ok_or(ClockError::Overflow)?;
                let l = &mut self.ledger[i];
                if remaining >= current {
                    l.added = l.added.saturating_add(remaining - current);
                } else {
                    l.removed = l.removed.saturating_add(current - remaining);
                }
                Ok(None)
            }
            ClockOp::AddTime {
                side,
                amount,
                now: _,
            } => {
                self.frozen()?;
                if amount == 0 {
                    return Err(ClockError::ZeroAmount);
                }
                let i = side.index();
                self.base[i] = self.base[i]
                    .checked_add(amount)
                    .ok_or(ClockError::Overflow)?;
                self.ledger[i].added = self.ledger[i].added.saturating_add(amount);
                Ok(None)
            }
            ClockOp::SubtractTime { side, amount, now } => {
                self.frozen()?;
                if amount == 0 {
                    return Err(ClockError::ZeroAmount);
                }
                let remaining = self.remaining(side, now);
                if amount >= remaining {
                    return Err(ClockError::ExhaustsClock {
                        side,
                        amount,
                        remaining,
                    });
                }
                let i = side.index();
                // base >= remaining > amount
                self.base[i] = self.base[i].saturating_sub(amount);
                self.ledger[i].removed = self.ledger[i].removed.saturating_add(amount);
                Ok(None)
            }
        }
    }
}
