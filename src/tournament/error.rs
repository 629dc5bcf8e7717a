//! Why a tournament command was refused. A refused command changes nothing.

use std::fmt;

/// How a refusal maps to the API's status codes (one table, in `api/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Malformed input: the field is named in the message.
    InvalidArgument,
    /// Not allowed in the tournament's state.
    FailedPrecondition,
    /// An unknown player, round or game.
    NotFound,
    /// Already done (a round paired twice…).
    AlreadyExists,
}

/// A refused tournament command: its class, what is wrong, and the rule if one says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TournamentError {
    /// The status it maps to.
    pub class: Class,
    /// What is wrong, naming the field or the state.
    pub message: String,
    /// The rule that refuses it (`T 1`), if one does.
    pub rule: Option<&'static str>,
}

impl TournamentError {
    /// Malformed input.
    pub fn invalid(message: impl Into<String>) -> TournamentError {
        TournamentError {
            class: Class::InvalidArgument,
            message: message.into(),
            rule: None,
        }
    }

    /// Not now, by `rule`.
    pub fn precondition(message: impl Into<String>, rule: Option<&'static str>) -> Self {
        TournamentError {
            class: Class::FailedPrecondition,
            message: message.into(),
            rule,
        }
    }

    /// Unknown.
    pub fn not_found(message: impl Into<String>) -> TournamentError {
        TournamentError {
            class: Class::NotFound,
            message: message.into(),
            rule: None,
        }
    }

    /// Taken already.
    pub fn exists(message: impl Into<String>) -> TournamentError {
        TournamentError {
            class: Class::AlreadyExists,
            message: message.into(),
            rule: None,
        }
    }

    /// With a rule.
    pub fn by(mut self, rule: &'static str) -> TournamentError {
        self.rule = Some(rule);
        self
    }
}

impl fmt::Display for TournamentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(rule) = self.rule {
            write!(f, " ({rule})")?;
        }
        Ok(())
    }
}

impl std::error::Error for TournamentError {}
