//! `GET /pdn/...`: PDN for relays, snapshots and a round's live stream.

use std::collections::{BTreeSet, HashMap};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use async_stream::stream;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio_stream::{Stream, StreamExt};

use super::{TEXT, authorization, refusal};
use crate::api::Api;
use crate::api::Refusal;
use crate::api::auth::Role;
use crate::api::frame::EventFrame;
use crate::api::pb;
use crate::api::validate::Check;
use crate::hub::metrics::WatchKind;

/// `GET /pdn/<event>`: every game of the event, in round and board order.
pub(super) async fn event(
    State(api): State<Api>,
    Path(event): Path<String>,
    headers: HeaderMap,
) -> Response {
    snapshot(&api, &headers, event, String::new()).await
}

/// `GET /pdn/<event>/<round>`: every game of the round, in board order.
pub(super) async fn round(
    State(api): State<Api>,
    Path((event, round)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    snapshot(&api, &headers, event, round).await
}

async fn snapshot(api: &Api, headers: &HeaderMap, event: String, round: String) -> Response {
    let r = pb::ExportPdnRequest {
        game_id: String::new(),
        event,
        round,
    };
    let role = match api.role_of(authorization(headers)) {
        Ok(role) => role,
        Err(e) => return refusal(&e),
    };
    if let Err(e) = r.check() {
        return refusal(&Refusal::Field(e.0).into());
    }
    match api.export(&role, &r).await {
        Ok(pdn) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(TEXT)),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            pdn,
        )
            .into_response(),
        Err(e) => refusal(&e),
    }
}

/// `GET /pdn/<event>/<round>/stream`: every game's PDN at once, then a game's whole PDN
/// again each time what the caller may see of it changes (each followed by a blank
/// line); the response ends when every game of the round has finished, or at shutdown.
/// A game created in the round meanwhile is sent when it appears.
pub(super) async fn stream(
    State(api): State<Api>,
    Path((event, round)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let role = match api.role_of(authorization(&headers)) {
        Ok(role) => role,
        Err(e) => return refusal(&e),
    };
    let watch = pb::WatchEventRequest {
        event,
        round,
        ..Default::default()
    };
    if let Err(e) = watch.check() {
        return refusal(&Refusal::Field(e.0).into());
    }
    let filter = crate::store::GameFilter {
        event: Some(watch.event.clone()),
        round: Some(watch.round.clone()),
        unfinished_only: false,
    };
    // Every game's PDN now, and where each stands; the round stream then resumes after
    // exactly that, so no change is missed between the two.
    let metas = match api.hub().list(&filter).await {
        Ok(m) => m,
        Err(e) => return refusal(&crate::api::status(&e)),
    };
    let mut first = String::new();
    let mut sent = HashMap::new();
    let mut resume_from = HashMap::new();
    for m in metas {
        match api.pdn_of(&role, &m.id).await {
            Ok((last, pdn)) => {
                first.push_str(&pdn);
                first.push_str("\n\n");
                resume_from.insert(m.id.clone(), last);
                sent.insert(m.id, pdn);
            }
            // Quarantined since it was listed: left out, as on WatchEvent.
            Err(e) if e.code() == tonic::Code::DataLoss => {}
            Err(e) => return refusal(&e),
        }
    }
    let events = match api
        .watch_round(
            role.clone(),
            pb::WatchEventRequest {
                resume_from,
                ..watch
            },
            WatchKind::PdnStream,
        )
        .await
    {
        Ok(s) => s,
        Err(e) => return refusal(&e),
    };
    // A token revoked by a reload (SIGHUP) cuts the body off, as a failure does.
    let revoked = api.revocation_of(authorization(&headers).map(str::to_string));
    let events = crate::api::token_table::until_revoked(Box::pin(events), revoked);
    let body = follow(api, role, first, sent, events);
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(TEXT)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            // nginx and other proxies: pass each game on as it comes.
            (
                header::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// The stream's body: `first`, then the PDN of each game that changed, once per burst
/// of its events (all the events ready at once are one change), and only when its text
/// differs from what was sent of it last. It ends cleanly (the chunked body's last
/// chunk) when the round is over; when the round's stream fails or the server shuts
/// down, what changed is sent and the body is then cut off without its last chunk, so a
/// relay can tell the two apart (curl: exit 18, "transfer closed").
fn follow(
    api: Api,
    role: Role,
    first: String,
    mut sent: HashMap<String, Arc<str>>,
    events: impl Stream<Item = Result<EventFrame, tonic::Status>> + Send + 'static,
) -> impl Stream<Item = Result<String, std::io::Error>> + Send + 'static {
    stream! {
        let metrics = api.hub().metrics().clone();
        if !first.is_empty() {
            metrics.delivered(WatchKind::PdnStream);
            yield Ok(first);
        }
        let mut events = pin!(events);
        while let Some(item) = events.next().await {
            let mut changed = BTreeSet::new();
            let mut item = Some(item);
            let mut failed = None;
            // Everything ready now, without waiting.
            while let Some(i) = item.take() {
                match i {
                    // A message of no game (the standings) changes no game's PDN.
                    Ok(e) if e.message().game_id.is_empty() => {}
                    Ok(e) => {
                        changed.insert(e.message().game_id.clone());
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "pdn stream ends");
                        failed = Some(e);
                        break;
                    }
                }
                item = std::future::poll_fn(|cx| match events.as_mut().poll_next(cx) {
                    Poll::Ready(Some(i)) => Poll::Ready(Some(i)),
                    Poll::Ready(None) | Poll::Pending => Poll::Ready(None),
                })
                .await;
            }
            let mut out = String::new();
            for id in changed {
                match api.pdn_of(&role, &id).await {
                    Ok((_, pdn)) => {
                        if sent.get(&id) != Some(&pdn) {
                            out.push_str(&pdn);
                            out.push_str("\n\n");
                            sent.insert(id, pdn);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(game = %id, error = %e, "pdn stream: game not exported");
                    }
                }
            }
            if !out.is_empty() {
                metrics.delivered(WatchKind::PdnStream);
                yield Ok(out);
            }
            if let Some(e) = failed {
                yield Err(std::io::Error::other(format!("{:?}: {}", e.code(), e.message())));
                break;
            }
        }
    }
}
