//! `GET /trf/<event>`: the event as TRF-16 (FIDE's tournament report file, as
//! `TournamentService.ExportTrf` writes it), for the federation and the rating officer
//! (issue 41). The arbiter's token of the event is required (`authorization: Bearer
//! <token>`): without one 401, with another role 403.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{TEXT, authorization, refusal};
use crate::api::Api;
use crate::api::Refusal;
use crate::api::auth::Role;
use crate::api::pb;
use crate::api::validate::Check;

/// `GET /trf/<event>` (the event's name or key).
pub(super) async fn event(
    State(api): State<Api>,
    Path(event): Path<String>,
    headers: HeaderMap,
) -> Response {
    let header = authorization(&headers);
    let role = match api.role_of(header) {
        Ok(role) => role,
        Err(e) => return refusal(&e),
    };
    // Without a token the public (broadcasts public): the file is the arbiter's.
    if header.is_none() && role == Role::Viewer {
        return refusal(
            &Refusal::Unauthenticated(
                "authorization: the TRF export needs the event's arbiter token \
             (authorization: Bearer <token>)"
                    .into(),
            )
            .into(),
        );
    }
    let r = pb::ExportTrfRequest { tournament: event };
    if let Err(e) = r.check() {
        return refusal(&Refusal::Field(e.0).into());
    }
    match api.trf_for(&role, &r.tournament).await {
        Ok(trf) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(TEXT)),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            trf,
        )
            .into_response(),
        Err(e) => refusal(&e),
    }
}
