//! Why a command was refused. A refused command changes nothing.

use std::fmt;

use crate::clock::ClockError;
use crate::notation::{FenError, MoveError};
use crate::rules::Color;

/// How a refusal maps to the API's status codes (one table, in `api/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Malformed input.
    InvalidArgument,
    /// Not allowed in the game's state.
    FailedPrecondition,
    /// The judge broke one of its own invariants (a bug, never the caller's fault).
    Internal,
}

/// A refused command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameError {
    /// The game has not started.
    NotStarted,
    /// The game has already started.
    AlreadyStarted,
    /// The game is over; only an arbiter may correct the result. Names the rule that
    /// ended it (the result's: `RU 1.8` for a Russian win, `FMJD 5 moves` for an
    /// International draw…), if one did.
    GameOver {
        /// The result's rule.
        rule: Option<String>,
    },
    /// Time has passed that must be recorded first (`Session::tick`).
    TickFirst,
    /// Not this side's turn.
    NotYourTurn {
        /// The side that tried.
        side: Color,
    },
    /// The move is not legal.
    IllegalMove(MoveError),
    /// A rule forbids this now; `rule` cites it.
    NotAllowed {
        /// Why.
        reason: String,
        /// The rule.
        rule: &'static str,
    },
    /// The clock refused.
    Clock(ClockError),
    /// A bad FEN.
    Fen(FenError),
    /// Malformed input (a square off the board, an empty field…).
    Invalid(String),
    /// The judge broke one of its own invariants: an event it decided does not apply.
    /// Nothing was recorded. A bug, reported as INTERNAL and logged.
    Internal(String),
}

impl GameError {
    /// Which status code class the error belongs to.
    pub fn class(&self) -> ErrorClass {
        match self {
            GameError::Invalid(_) | GameError::Fen(_) => ErrorClass::InvalidArgument,
            GameError::Internal(_) => ErrorClass::Internal,
            GameError::IllegalMove(MoveError::Malformed(_) | MoveError::Square(_)) => {
                ErrorClass::InvalidArgument
            }
            _ => ErrorClass::FailedPrecondition,
        }
    }

    /// The rule behind the refusal, if one is.
    pub fn rule(&self) -> Option<&str> {
        match self {
            GameError::NotYourTurn { .. } => Some("RU 1.4.1"),
            GameError::GameOver { rule } => rule.as_deref(),
            GameError::NotAllowed { rule, .. } => Some(rule),
            GameError::IllegalMove(MoveError::Illegal { rule, .. }) => Some(rule),
            GameError::IllegalMove(MoveError::NoPiece { .. }) => Some("RU 1.4.1"),
            _ => None,
        }
    }

    pub(crate) fn not_allowed(reason: impl Into<String>, rule: &'static str) -> GameError {
        GameError::NotAllowed {
            reason: reason.into(),
            rule,
        }
    }
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::NotStarted => f.write_str("the game has not started"),
            GameError::AlreadyStarted => f.write_str("the game has already started"),
            GameError::GameOver { rule: Some(rule) } => {
                write!(f, "the game is over (ended under {rule})")
            }
            GameError::GameOver { rule: None } => f.write_str("the game is over"),
            GameError::TickFirst => f.write_str("time-driven events are due: tick first"),
            GameError::NotYourTurn { side } => write!(f, "not {side}'s turn (RU 1.4.1)"),
            GameError::IllegalMove(e) => write!(f, "illegal move: {e}"),
            GameError::NotAllowed { reason, rule } => write!(f, "{reason} ({rule})"),
            GameError::Clock(e) => write!(f, "clock: {e}"),
            GameError::Fen(e) => write!(f, "{e}"),
            GameError::Invalid(e) => f.write_str(e),
            GameError::Internal(e) => write!(f, "internal error: {e}"),
        }
    }
}

impl std::error::Error for GameError {}

impl From<ClockError> for GameError {
    fn from(e: ClockError) -> GameError {
        GameError::Clock(e)
    }
}

/// A recorded log that does not replay (corrupt or from an incompatible version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    /// The event that failed.
    pub seq: u64,
    /// Why.
    pub message: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event {} does not replay: {}", self.seq, self.message)
    }
}

impl std::error::Error for ReplayError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::movetext::parse_move;
    use crate::rules::{Position, Variant};

    /// RU 1.4.1: a move from a square without a piece of the side to move cites the rule
    /// in the refusal's `rule`, as an out-of-turn move on a board does.
    #[test]
    fn ru_1_4_1_a_move_without_a_piece_of_the_side_to_move_names_the_rule() {
        let p = Position::start(Variant::Russian);
        let refused = parse_move("c5-d6", &p).expect_err("no piece there");
        assert_eq!(GameError::IllegalMove(refused).rule(), Some("RU 1.4.1"));
    }
}
