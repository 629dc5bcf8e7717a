//! Errors of the clock module: refused operations, invalid time controls and
//! time-control syntax errors.
//!
//! A refused operation changes nothing: the clock is exactly as it was before.

use std::fmt;

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
            ControlError::ZeroMoveLimit => f.write_str("move limit must be positive"),
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
    /// A number was expected here.
    ExpectedNumber,
    /// A move count was expected after `/`.
    ExpectedMoveCount,
    /// In a compound duration, a number without its unit (`1h30`).
    ExpectedUnit,
    /// A number does not fit (or its milliseconds do not fit in 64 bits).
    NumberTooLarge,
    /// In a compound duration the units must decrease (`1h30m`, not `30m1h`).
    UnitsOutOfOrder,
    /// A character that cannot appear here.
    Unexpected(char),
    /// The input ends where more was expected.
    UnexpectedEnd,
    /// An option after `;` that is not `inc-at-start`, `dgt` or `move-limit`.
    UnknownOption,
    /// The same option twice.
    DuplicateOption,
    /// A unit in a PDN tag, which counts plain seconds.
    UnitInPdn,
    /// A PDN sandclock field (`*60`), which the clock does not implement.
    Sandclock,
    /// The syntax is fine but the time control breaks a rule.
    Control(ControlError),
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Empty => f.write_str("empty time control"),
            ParseErrorKind::ExpectedNumber => f.write_str("expected a number"),
            ParseErrorKind::ExpectedMoveCount => f.write_str("expected a move count"),
            ParseErrorKind::ExpectedUnit => f.write_str("expected a unit (h, m, s or ms)"),
            ParseErrorKind::NumberTooLarge => f.write_str("number too large"),
            ParseErrorKind::UnitsOutOfOrder => {
                f.write_str("units must go down from h to m to s to ms")
            }
            ParseErrorKind::Unexpected(c) => write!(f, "unexpected {c:?}"),
            ParseErrorKind::UnexpectedEnd => f.write_str("unexpected end"),
            ParseErrorKind::UnknownOption => {
                f.write_str("unknown option (expected inc-at-start, dgt or move-limit)")
            }
            ParseErrorKind::DuplicateOption => f.write_str("option given twice"),
            ParseErrorKind::UnitInPdn => f.write_str("pdn tag counts plain seconds, no unit"),
            ParseErrorKind::Sandclock => f.write_str("sandclock (*) is not supported"),
            ParseErrorKind::Control(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.position)
    }
}

impl std::error::Error for ParseError {}
