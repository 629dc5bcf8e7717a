//! HTTP on the API port, beside gRPC: what relay tools and browsers use.
//!
//! - `GET /pdn/<event>`, `GET /pdn/<event>/<round>`: the PDN of every game, as
//!   `ExportPdn` gives it to the caller (`authorization: Bearer <token>` as on gRPC;
//!   without one the public view, behind each game's broadcast delay).
//! - `GET /pdn/<event>/<round>/stream`: every game's PDN, then a game's whole PDN again
//!   each time it changes, until every game of the round has finished (as Lichess's
//!   broadcast round stream does), so a relay can follow a round without gRPC.
//! - `GET /live/<event>`, `GET /live/<event>/<round>`: the live board page (`live`), and
//!   its assets under `/assets/live/`.
//! - `GET /arbiter/<event>`, `GET /arbiter/<event>/<round>`: the arbiter's console (`live`):
//!   the round's boards, alerts and the arbiter's commands, over grpc-web with the token
//!   the arbiter signs in with.
//! - `GET /standings/<event>.json`, `GET /standings/<event>.csv` (`?round=N`): the
//!   standings as `GetStandings` gives them to the caller; `GET /standings/<event>`: the
//!   same as a page for a phone, with every player's rounds (`standings`).
//! - `GET /trf/<event>`: the event as TRF-16, as `ExportTrf` gives it; the event's
//!   arbiter token required (`trf`).
//! - `GET /livechess/<event>/<round>/games.json`, `index.json`, `game-<n>.json`: the round
//!   in the JSON relay sites poll (DGT LiveChess Cloud's files, as lidraughts' relay reads
//!   them), behind each game's broadcast delay for the public as `/pdn` (`livechess`).
//! - `GET /report/<event>/<round>` (`?format=csv|json`; HTML by default): the arbiter's
//!   round report as `GetRoundReport` gives it, for the event's arbiter token only
//!   (`report`).
//!
//! - Any other path: 404 with the refusal as text ([`fallback`]); a gRPC call to a method
//!   that does not exist still gets gRPC's UNIMPLEMENTED.
//!
//! The gRPC services answer grpc-web as well (tonic-web, HTTP/1.1 accepted); CORS is
//! off unless `[web] cors_origins` lists the origins allowed (see `server::run`).

mod live;
mod livechess;
mod pdn;
mod report;
mod standings;
mod trf;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tonic::Code;

use crate::api::Api;
use crate::api::Refusal;

/// The HTTP routes, over the same services as gRPC.
pub fn routes(api: Api) -> axum::Router {
    axum::Router::new()
        .route("/pdn/{event}", axum::routing::get(pdn::event))
        .route("/pdn/{event}/{round}", axum::routing::get(pdn::round))
        .route(
            "/pdn/{event}/{round}/stream",
            axum::routing::get(pdn::stream),
        )
        .route("/standings/{file}", axum::routing::get(standings::file))
        .route("/trf/{event}", axum::routing::get(trf::event))
        .route(
            "/livechess/{event}/{round}/{file}",
            axum::routing::get(livechess::file),
        )
        .route("/report/{event}/{round}", axum::routing::get(report::round))
        .with_state(api)
        .merge(live::routes())
}

/// What answers a request no route takes, merged in after every route (`server::run`).
/// A gRPC call (content-type `application/grpc…`, grpc-web's included) to a method that
/// does not exist gets gRPC's UNIMPLEMENTED, as tonic answers it; anything else is a
/// browser or a relay tool asking for a page that is not there: 404 with the refusal as
/// text, as the pages' own refusals are written ([`refusal`]).
pub async fn fallback(request: axum::extract::Request) -> Response {
    let grpc = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/grpc"));
    if grpc {
        return tonic::Status::from(Refusal::Unimplemented(String::new())).into_http();
    }
    let message = format!(
        "path: no page at {:?}; the pages are /pdn/<event>[/<round>[/stream]], \
         /live/<event>[/<round>], /arbiter/<event>[/<round>], /standings/<event>[.json|.csv], /trf/<event>, \
         /livechess/<event>/<round>/games.json|index.json|game-<n>.json and \
         /report/<event>/<round>",
        request.uri().path()
    );
    // The path is the caller's: quoted, and the answer bounded as every status is.
    refusal(&Refusal::NotFound(crate::api::bounded_message(&message).into_owned()).into())
}

/// The `authorization` header as the token table reads it.
fn authorization(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
}

/// A gRPC refusal as an HTTP answer: the code's HTTP counterpart (as grpc-gateway maps
/// them) and the status message as the plain-text body.
fn refusal(status: &tonic::Status) -> Response {
    let code = match status.code() {
        Code::InvalidArgument | Code::OutOfRange => StatusCode::BAD_REQUEST,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::AlreadyExists | Code::Aborted | Code::FailedPrecondition => StatusCode::CONFLICT,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let mut response = (
        code,
        [(header::CONTENT_TYPE, TEXT)],
        format!(
            "{}: {}\n",
            crate::api::code_name(status.code()),
            status.message()
        ),
    )
        .into_response();
    if code == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// PDN goes out as UTF-8 text.
const TEXT: &str = "text/plain; charset=utf-8";
