//! Clock operations (the log that rebuilds a clock) and the events they report.

use serde::{Deserialize, Serialize};

use super::{Flag, Millis, Side};

/// One operation on a [`Clock`](super::Clock), with its instant.
///
/// Record the operations that were accepted; [`Clock::replay`](super::Clock::replay) of
/// that log gives a clock equal (`==`) to the live one. Refused operations change
/// nothing, so they need not be recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockOp {
    /// Start the game: `side`'s clock begins to run.
    Start {
        /// The side to move first.
        side: Side,
        /// The instant.
        now: Millis,
    },
    /// `side` completes a move and presses: its clock stops, the opponent's runs.
    Press {
        /// The side pressing (its clock must be running).
        side: Side,
        /// The instant.
        now: Millis,
    },
    /// Arbiter: stop the running clock without switching.
    Pause {
        /// The instant.
        now: Millis,
    },
    /// Arbiter: restart the clock that was paused.
    Resume {
        /// The instant.
        now: Millis,
    },
    /// Arbiter: set `side`'s remaining time.
    SetRemaining {
        /// The side.
        side: Side,
        /// Its new remaining time (positive).
        remaining: Millis,
        /// The instant.
        now: Millis,
    },
    /// Arbiter: give `side` extra time (bonus, or compensation for a penalty on the other).
    AddTime {
        /// The side.
        side: Side,
        /// The time to add (positive).
        amount: Millis,
        /// The instant.
        now: Millis,
    },
    /// Arbiter: take time from `side` (penalty); it must leave some time.
    SubtractTime {
        /// The side.
        side: Side,
        /// The time to take (positive, less than the remaining time).
        amount: Millis,
        /// The instant.
        now: Millis,
    },
    /// Record what the passing of time has done up to `now` (a "Time!" call, a DGT period,
    /// a flag). The server applies it when the timer armed at
    /// [`Clock::next_deadline`](super::Clock::next_deadline) fires.
    Settle {
        /// The instant.
        now: Millis,
    },
    /// The game is over: freeze both clocks.
    Stop {
        /// The instant.
        now: Millis,
    },
}

impl ClockOp {
    /// The operation's instant.
    #[must_use]
    pub const fn now(&self) -> Millis {
        match *self {
            ClockOp::Start { now, .. }
            | ClockOp::Press { now, .. }
            | ClockOp::Pause { now }
            | ClockOp::Resume { now }
            | ClockOp::SetRemaining { now, .. }
            | ClockOp::AddTime { now, .. }
            | ClockOp::SubtractTime { now, .. }
            | ClockOp::Settle { now }
            | ClockOp::Stop { now } => now,
        }
    }
}

/// Something the clock did on its own, reported by the operation that brought the clock
/// past its instant. Increments and delay refunds are not events: they are part of every
/// press (see [`Clock::ledger`](super::Clock::ledger)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockEvent {
    /// `side` completed the move count of its period: the next period's time was added
    /// at the press.
    PeriodReached {
        /// The side.
        side: Side,
        /// The number of the period now in force (2 for the second period, and so on;
        /// a repeating last period keeps counting).
        period: u32,
        /// The time added.
        added: Millis,
        /// The instant (of the press).
        at: Millis,
    },
    /// DGT mode: the time of a non-final period ran out and the next period's time was
    /// added. If `moves < required` the player had not made the period's moves in time
    /// and the arbiter should rule the game lost on time.
    PeriodOnFlag {
        /// The side.
        side: Side,
        /// The number of the period now in force.
        period: u32,
        /// The time added.
        added: Millis,
        /// The instant the previous period's time ran out.
        at: Millis,
        /// Moves `side` had completed.
        moves: u32,
        /// Moves `side` had to complete by the end of the expired period(s).
        required: u32,
    },
    /// English "Time!" rule: `side` has used the per-move limit on this move and is warned.
    TimeCalled {
        /// The side.
        side: Side,
        /// The instant "Time!" is called.
        at: Millis,
        /// The instant the move is forfeit unless `side` has pressed before it (later if
        /// the arbiter pauses the clock in between: pauses do not count).
        deadline: Millis,
    },
    /// A flag fell; the clock is frozen.
    Flagged(Flag),
}
