//! The one table from domain errors to gRPC status codes.

use tonic::Status;

use super::auth::AuthError;
use super::convert::BadField;
use crate::game::ErrorClass;
use crate::hub::HubError;
use crate::store::StoreError;

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
        HubError::Store(_) | HubError::ShuttingDown => Status::unavailable(e.to_string()),
        HubError::Full(_) => Status::resource_exhausted(e.to_string()),
        HubError::Corrupt(_) | HubError::Quarantined { .. } => Status::data_loss(e.to_string()),
        HubError::Internal(_) => {
            tracing::error!(error = %e, "internal error");
            Status::internal(e.to_string())
        }
    }
}

pub(super) fn auth_status(e: AuthError) -> Status {
    match e {
        AuthError::Unauthenticated(m) => Status::unauthenticated(m),
        AuthError::Denied(m) => Status::permission_denied(m),
    }
}

pub(super) fn bad(e: BadField) -> Status {
    Status::invalid_argument(e.0)
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
