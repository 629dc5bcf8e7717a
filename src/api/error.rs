//! The one table from domain errors to gRPC status codes.

use tonic::Status;

use super::auth::AuthError;
use super::convert::BadField;
use crate::game::ErrorClass;
use crate::hub::{HubError, TournamentsError};
use crate::store::StoreError;
use crate::tournament::Class;

/// The metadata key of an UNAVAILABLE answer naming the node that serves the game.
pub const OWNER_NODE: &str = "arbiter-owner-node";

/// The metadata key of an UNAVAILABLE answer with the address (`host:port`) of the node
/// that serves the game: send the request there.
pub const OWNER_ADDR: &str = "arbiter-owner-addr";

/// The one table from domain errors to gRPC status codes. Internal errors (the judge or
/// the hub breaking an invariant of its own) are logged here.
pub fn status(e: &HubError) -> Status {
    match e {
        HubError::NotFound(_) => Status::not_found(e.to_string()),
        HubError::Game(g) => match g.class() {
            ErrorClass::InvalidArgument => Status::invalid_argument(g.to_string()),
            ErrorClass::FailedPrecondition => Status::failed_precondition(g.to_string()),
            ErrorClass::Internal => {
                tracing::error!(error = %g, "internal error");
                Status::internal(g.to_string())
            }
        },
        HubError::Stale { .. } | HubError::Store(StoreError::Conflict { .. }) => {
            Status::aborted(e.to_string())
        }
        HubError::Store(StoreError::GameExists(_)) => Status::already_exists(e.to_string()),
        HubError::Store(StoreError::GameNotFound(_)) => Status::not_found(e.to_string()),
        HubError::Store(StoreError::Fenced { owner, .. }) => {
            // Several nodes: another one serves the game. The client sends the request
            // there (the CLI does so by itself).
            let mut status = Status::unavailable(e.to_string());
            if let Some((node, addr)) = owner {
                let md = status.metadata_mut();
                if let Ok(v) = node.parse() {
                    md.insert(OWNER_NODE, v);
                }
                if let Ok(v) = addr.parse() {
                    md.insert(OWNER_ADDR, v);
                }
            }
            status
        }
        // A damaged page or file answers the same on every retry: not UNAVAILABLE.
        HubError::Store(StoreError::Damaged { .. }) => Status::data_loss(e.to_string()),
        HubError::Store(_) | HubError::ShuttingDown => Status::unavailable(e.to_string()),
        HubError::Full(_) | HubError::TooManyWatchers(_) => {
            Status::resource_exhausted(e.to_string())
        }
        HubError::Corrupt(_) | HubError::Quarantined { .. } => Status::data_loss(e.to_string()),
        HubError::Internal(_) => {
            tracing::error!(error = %e, "internal error");
            Status::internal(e.to_string())
        }
    }
}

/// A tournament's refusal or failure: the class the tournament gave a refusal (its
/// message names the field or the state, and the rule); the hub's table otherwise.
pub fn tournament_status(e: &TournamentsError) -> Status {
    match e {
        TournamentsError::Refused(r) => {
            let message = r.to_string();
            match r.class {
                Class::InvalidArgument => Status::invalid_argument(message),
                Class::FailedPrecondition => Status::failed_precondition(message),
                Class::NotFound => Status::not_found(message),
                Class::AlreadyExists => Status::already_exists(message),
            }
        }
        TournamentsError::Hub(h) => status(h),
    }
}

pub(super) fn auth_status(e: AuthError) -> Status {
    match e {
        AuthError::Unauthenticated(m) => Refusal::Unauthenticated(m.into()),
        AuthError::Denied(m) => Refusal::Denied(m),
    }
    .into()
}

pub(super) fn bad(e: BadField) -> Status {
    Refusal::Field(e.0).into()
}

/// A refusal of the edge's own, with nothing of a game's or a tournament's behind it: a
/// field of the request, a name that is not there, the caller's rights, a limit of the
/// server. The sites say what kind of refusal it is; this table gives its code. Every
/// message is bounded ([`bounded_message`]); an internal one is logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A field of the request is wrong or missing (its message names the field).
    Field(String),
    /// What the request names is not there.
    NotFound(String),
    /// No credentials the server takes.
    Unauthenticated(String),
    /// The caller's role may not do this.
    Denied(String),
    /// Not in this state (bind the board first, the round is not over…).
    NotNow(String),
    /// It is there already.
    Exists(String),
    /// A request had to give up part way (the caller may try again).
    Aborted(String),
    /// A limit of the server.
    Limit(String),
    /// A resume point past what there is.
    PastEnd(String),
    /// Something the answer needs is not there now (another node, the pairing engine).
    Unavailable(String),
    /// The path or method is not served.
    Unimplemented(String),
    /// A fault of the server's own.
    Internal(String),
}

impl From<Refusal> for Status {
    fn from(r: Refusal) -> Status {
        use tonic::Code;
        let (code, message) = match r {
            Refusal::Field(m) => (Code::InvalidArgument, m),
            Refusal::NotFound(m) => (Code::NotFound, m),
            Refusal::Unauthenticated(m) => (Code::Unauthenticated, m),
            Refusal::Denied(m) => (Code::PermissionDenied, m),
            Refusal::NotNow(m) => (Code::FailedPrecondition, m),
            Refusal::Exists(m) => (Code::AlreadyExists, m),
            Refusal::Aborted(m) => (Code::Aborted, m),
            Refusal::Limit(m) => (Code::ResourceExhausted, m),
            Refusal::PastEnd(m) => (Code::OutOfRange, m),
            Refusal::Unavailable(m) => (Code::Unavailable, m),
            Refusal::Unimplemented(m) => (Code::Unimplemented, m),
            Refusal::Internal(m) => {
                tracing::error!(error = %m, "internal error");
                (Code::Internal, m)
            }
        };
        Status::new(code, bounded_message(&message))
    }
}

/// The gRPC code's canonical name (`FAILED_PRECONDITION`).
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code as C;
    match code {
        C::Ok => "OK",
        C::Cancelled => "CANCELLED",
        C::Unknown => "UNKNOWN",
        C::InvalidArgument => "INVALID_ARGUMENT",
        C::DeadlineExceeded => "DEADLINE_EXCEEDED",
        C::NotFound => "NOT_FOUND",
        C::AlreadyExists => "ALREADY_EXISTS",
        C::PermissionDenied => "PERMISSION_DENIED",
        C::ResourceExhausted => "RESOURCE_EXHAUSTED",
        C::FailedPrecondition => "FAILED_PRECONDITION",
        C::Aborted => "ABORTED",
        C::OutOfRange => "OUT_OF_RANGE",
        C::Unimplemented => "UNIMPLEMENTED",
        C::Internal => "INTERNAL",
        C::Unavailable => "UNAVAILABLE",
        C::DataLoss => "DATA_LOSS",
        C::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The longest status message the server sends (bytes of UTF-8): longer ones are cut by
/// [`bounded_message`]. A message travels in the `grpc-message` header, and clients cap
/// their headers (gRPC C-core refuses a response whose metadata passes its hard limit,
/// and the caller would see RESOURCE_EXHAUSTED instead of the real code); a message that
/// quoted its whole input would also hand it back to every log on the way.
pub const MAX_STATUS_MESSAGE: usize = 200;

/// `message` cut to at most [`MAX_STATUS_MESSAGE`] bytes, on a character boundary, ending
/// with "…" when cut.
pub fn bounded_message(message: &str) -> std::borrow::Cow<'_, str> {
    if message.len() <= MAX_STATUS_MESSAGE {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut end = MAX_STATUS_MESSAGE - '…'.len_utf8();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}…", &message[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_are_kept_long_ones_cut_on_a_char_boundary() {
        assert_eq!(bounded_message("game 'x' not found"), "game 'x' not found");
        let exact = "a".repeat(MAX_STATUS_MESSAGE);
        assert_eq!(bounded_message(&exact), exact.as_str());
        let long = "é".repeat(1000);
        let cut = bounded_message(&long);
        assert!(cut.len() <= MAX_STATUS_MESSAGE, "{}", cut.len());
        assert!(cut.ends_with('…'));
        assert!(cut.starts_with("éé"));
        assert_eq!(
            cut.trim_end_matches('…')
                .chars()
                .filter(|c| *c != 'é')
                .count(),
            0
        );
    }
}
