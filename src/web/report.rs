//! `GET /report/<event>/<round>`: the arbiter's round report (issue 41) as a page to print
//! (HTML, the default), `?format=csv` or `?format=json`, as `GetRoundReport` gives it.
//! The event's arbiter token is required (`authorization: Bearer <token>`): none, 401;
//! another role, 403; an unknown event or a round not paired, 404; a format other than
//! `html`, `csv` or `json`, 400 naming `format`.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{authorization, refusal};
use crate::api::Api;
use crate::api::Refusal;
use crate::api::pb;
use crate::api::validate::Check;
use crate::tournament::report_text::Format;

/// `GET /report/<event>/<round>[?format=html|csv|json]`.
pub(super) async fn round(
    State(api): State<Api>,
    Path((event, round)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let role = match api.report_role(authorization(&headers)) {
        Ok(role) => role,
        Err(e) => return refusal(&e),
    };
    let Some(round) = round.parse::<u32>().ok().filter(|&r| r > 0) else {
        return refusal(
            &Refusal::NotFound(format!(
                "round: not a round number (from 1): {:?}",
                crate::api::bounded_message(&round)
            ))
            .into(),
        );
    };
    // The one parameter: `format=html|csv|json` (none needs decoding).
    let mut format = Format::Html;
    for kv in query.as_deref().unwrap_or_default().split('&') {
        if let Some(v) = kv.strip_prefix("format=") {
            match Format::parse(v) {
                Some(f) => format = f,
                None => {
                    return refusal(
                        &Refusal::Field(format!(
                            "format: html, csv or json, not {:?}",
                            crate::api::bounded_message(v)
                        ))
                        .into(),
                    );
                }
            }
        }
    }
    let r = pb::GetRoundReportRequest {
        tournament: event,
        round,
        format: pb::ReportFormat::Html as i32,
    };
    if let Err(e) = r.check() {
        // A name no event can have: no such report.
        return refusal(&Refusal::NotFound(e.0).into());
    }
    match api.round_report(&role, &r.tournament, round, format).await {
        Ok(body) => (
            StatusCode::OK,
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(format.content_type()),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            body,
        )
            .into_response(),
        Err(e) => refusal(&e),
    }
}
