//! Errors of the clock module: refused operations, invalid time controls and
//! time-control syntax errors.
//!
//! A refused operation changes nothing: the clock is exactly as it was before.

use std::fmt;

use super::limits::{MAX_MOVES, MAX_PERIODS};
use super::{Flag, FlagCause, Millis, Side};

/// Why a clock operation (or a conversion of a time control) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockError {
    /// The operation needs a started clock.
    NotStarted,
    /// `start` on a clock that has already been started.
    AlreadyStarted,
    /// The clock is paused by the arbiter; only the arbiter's operations are possible.
    Paused,
    /// `resume` on a clock that is not paused.
    NotPaused,
    /// The clock was stopped (game over).
    Stopped,
    /// A flag has fallen (at or before the operation's instant); the clock is frozen.
    FlagFell(Flag),
    /// A press by a side whose clock is not running.
    NotRunning(Side),
    /// The operation's instant is earlier than the last accepted operation.
    TimeWentBack {
        /// The refused instant.
        now: Millis,
        /// The instant of the last accepted operation.
        last: Millis,
    },
    /// An arbiter adjustment of zero milliseconds.
    ZeroAmount,
    /// `set_remaining` to zero: the arbiter ends a game by declaring a result, not by
    /// emptying a clock.
    ZeroRemaining,
    /// A penalty that would take all of a side's remaining time.
    ExhaustsClock {
        /// The penalised side.
        side: Side,
        /// The penalty asked for.
        amount: Millis,
        /// The side's remaining time at the operation's instant.
        remaining: Millis,
    },
    /// A time would not fit in 64 bits of milliseconds.
    Overflow,
    /// A time control that breaks a rule of [`TimeControl::new`](super::TimeControl::new).
    Control(ControlError),
    /// The PDN `TimeControl` tag cannot express this part of a time control.
    Inexpressible(&'static str),
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockError::NotStarted => f.write_str("clock not started"),
            ClockError::AlreadyStarted => f.write_str("clock already started"),
            ClockError::Paused => f.write_str("clock is paused"),
            ClockError::NotPaused => f.write_str("clock is not paused"),
            ClockError::Stopped => f.write_str("clock is stopped"),
            ClockError::FlagFell(flag) => match flag.cause {
                FlagCause::TimeExpired => write!(f, "{}'s flag fell at {} ms", flag.side, flag.at),
                FlagCause::MoveLimit => write!(
                    f,
                    "{} exceeded the move time limit at {} ms",
                    flag.side, flag.at
                ),
            },
            ClockError::NotRunning(side) => write!(f, "{side}'s clock is not running"),
            ClockError::TimeWentBack { now, last } => write!(
                f,
                "instant {now} ms is before the last operation at {last} ms"
            ),
            ClockError::ZeroAmount => f.write_str("amount must be positive"),
            ClockError::ZeroRemaining => f.write_str("remaining time must be positive"),
            ClockError::ExhaustsClock {
                side,
                amount,
                remaining,
            } => write!(
                f,
                "penalty of {amount} ms exhausts {side}'s remaining {remaining} ms"
            ),
            ClockError::Overflow => f.write_str("time overflow"),
            ClockError::Control(e) => e.fmt(f),
            ClockError::Inexpressible(what) => write!(f, "pdn tag cannot express {what}"),
        }
    }
}

impl std::error::Error for ClockError {}

impl From<ControlError> for ClockError {
    fn from(e: ControlError) -> Self {
        ClockError::Control(e)
    }
}

/// A time control that cannot be played. Periods are numbered from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// No period at all.
    NoPeriods,
    /// A period before the last one has no move count, so the next would never start.
    MissingMoveCount {
        /// The period, from 1.
        period: usize,
    },
    /// A period with a move count of zero.
    ZeroMoveCount {
        /// The period, from 1.
        period: usize,
    },
    /// Period-on-flag (DGT) mode with a final period that has a move count (which would
    /// repeat for ever, so the flag could never fall).
    DgtNeedsSuddenDeath,
    /// An English "Time!" rule with a zero per-move limit.
    ZeroMoveLimit,
    /// More periods than [`MAX_PERIODS`](super::MAX_PERIODS).
    TooManyPeriods,
    /// A period whose time is zero and whose bonus gives no time before the flag
    /// could fall.
    ZeroTime {
        /// The period, from 1.
        period: usize,
    },
    /// A period whose time is above [`MAX_PERIOD_TIME`](super::MAX_PERIOD_TIME).
    TimeTooLong {
        /// The period, from 1.
        period: usize,
    },
    /// A period whose move count is above [`MAX_MOVES`](super::MAX_MOVES).
    TooManyMoves {
        /// The period, from 1.
        period: usize,
    },
    /// An increment or delay above [`MAX_BONUS`](super::MAX_BONUS).
    BonusTooLarge {
        /// The period, from 1.
        period: usize,
    },
    /// A "Time!" limit above [`MAX_MOVE_LIMIT`](super::MAX_MOVE_LIMIT).
    MoveLimitTooLong,
    /// A "Time!" allowance above [`MAX_ALLOWANCE`](super::MAX_ALLOWANCE).
    AllowanceTooLong,
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::NoPeriods => f.write_str("time control has no period"),
            ControlError::MissingMoveCount { period } => {
                write!(f, "period {period} needs a move count")
            }
            ControlError::ZeroMoveCount { period } => {
                write!(f, "period {period} has a move count of zero")
            }
            ControlError::DgtNeedsSuddenDeath => {
                f.write_str("dgt mode needs a final period without a move count")
            }
            ControlError::ZeroMoveLimit => {
                f.write_str("the move limit must be more than 0 and at most 24h")
            }
            ControlError::TooManyPeriods => write!(f, "at most {MAX_PERIODS} periods"),
            ControlError::ZeroTime { period } => write!(
                f,
                "period {period} gives no time: a period's time must be more than 0 and at most 168h (7 days), or 0 with a delay (0s d5s), with an increment in a later period (2h/40 then 0s+30s) or with inc-at-start"
            ),
            ControlError::TimeTooLong { period } => write!(
                f,
                "period {period}'s time is too long: at most 168h (7 days)"
            ),
            ControlError::TooManyMoves { period } => write!(
                f,
                "period {period}'s move count is too large: from 1 to {MAX_MOVES} moves"
            ),
            ControlError::BonusTooLarge { period } => write!(
                f,
                "period {period}'s increment or delay is too long: at most 1h"
            ),
            ControlError::MoveLimitTooLong => {
                f.write_str("the move limit is too long: more than 0 and at most 24h")
            }
            ControlError::AllowanceTooLong => {
                f.write_str("the allowance after the move limit is too long: at most 1h")
            }
        }
    }
}

impl std::error::Error for ControlError {}

/// A time-control string that does not parse: what is wrong, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the input where the problem was found.
    pub position: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

/// What is wrong in a time-control string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// Nothing but whitespace.
    Empty,
    /// Something else was expected here: `what` says what (with an example), `found`
    /// is the character found, `None` at the end of the input.
    Expected {
        /// What was expected, e.g. "an increment after '+', e.g. 5m+3s".
        what: &'static str,
        /// What was there instead (`None`: the end).
        found: Option<char>,
    },
    /// In a compound duration the units must decrease (`1h30m`, not `30m1h`).
    UnitsOutOfOrder,
    /// A move count written with a unit (`2h/50m`).
    MoveCountWithUnit,
    /// The same option twice.
    DuplicateOption,
    /// A unit in a PDN tag, which counts plain seconds.
    UnitInPdn,
    /// A PDN sandclock field (`*60`), which the clock does not implement.
    Sandclock,
    /// The syntax is fine but the time control breaks a rule or a limit.
    Control(ControlError),
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Empty => f.write_str(
                "empty time control: expected e.g. 5m+3s, 90m/40+30s then 30m+30s, or 40/7200:3600",
            ),
            ParseErrorKind::Expected { what, found } => match found {
                Some(c) => write!(f, "expected {what}, found {c:?}"),
                None => write!(f, "expected {what}, found the end"),
            },
            ParseErrorKind::UnitsOutOfOrder => {
                f.write_str("units must go down from h to min (m) to s to ms, e.g. 1h30m")
            }
            ParseErrorKind::MoveCountWithUnit => f.write_str(
                "a move count takes no unit: 2h/50 is 2 hours for 50 moves",
            ),
            ParseErrorKind::DuplicateOption => f.write_str("option given twice"),
            ParseErrorKind::UnitInPdn => f.write_str(
                "a pdn tag counts plain seconds: expected a digit, '/', '+', ':' or the end, not a unit",
            ),
            ParseErrorKind::Sandclock => f.write_str("sandclock (*) is not supported"),
            ParseErrorKind::Control(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.position, self.kind)
    }
}

impl std::error::Error for ParseError {}
