//! `GET /standings/<event>.json` and `GET /standings/<event>.csv`: GetStandings for
//! spreadsheets, rating officers and displays (issue 41), behind the broadcast delay
//! without an arbiter's token, as every path is. `?round=N`: after round N (default:
//! every encounter over so far).

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{authorization, refusal};
use crate::api::Api;
use crate::api::pb;
use crate::api::validate::Check;

/// `GET /standings/<event>.json|.csv[?round=N]`.
pub(super) async fn file(
    State(api): State<Api>,
    Path(file): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (event, csv) = if let Some(e) = file.strip_suffix(".json") {
        (e, false)
    } else if let Some(e) = file.strip_suffix(".csv") {
        (e, true)
    } else {
        return refusal(&tonic::Status::not_found(format!(
            "path: the standings are /standings/<event>.json and /standings/<event>.csv \
             (no page yet), not {:?}",
            crate::api::bounded_message(&file)
        )));
    };
    // The one parameter: `round=N` (digits need no decoding).
    let round = query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .find_map(|kv| kv.strip_prefix("round="));
    let round = match round.map(str::parse::<u32>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return refusal(&tonic::Status::invalid_argument(
                "round: a round number (0: every encounter over so far)",
            ));
        }
    };
    let role = match api.role_of(authorization(&headers)) {
        Ok(role) => role,
        Err(e) => return refusal(&e),
    };
    let r = pb::GetStandingsRequest {
        tournament: event.to_string(),
        round,
    };
    if let Err(e) = r.check() {
        return refusal(&tonic::Status::invalid_argument(e.0));
    }
    let s = match api.standings_for(&role, &r).await {
        Ok(s) => s,
        Err(e) => return refusal(&e),
    };
    let (kind, body) = if csv {
        ("text/csv; charset=utf-8", to_csv(&s))
    } else {
        ("application/json", to_json(event, &s))
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

fn to_json(event: &str, s: &pb::GetStandingsResponse) -> String {
    let rows: Vec<serde_json::Value> = s
        .rows
        .iter()
        .map(|r| {
            let p = r.player.clone().unwrap_or_default();
            json!({
                "rank": r.rank,
                "pairing_number": p.pairing_number,
                "player_id": p.player_id,
                "name": p.name,
                "title": p.title,
                "federation": p.federation,
                "fmjd_id": p.fmjd_id,
                "rating": p.rating,
                "points": r.points,
                "games": r.games,
                "wins": r.wins,
                "draws": r.draws,
                "losses": r.losses,
                "forfeits": r.forfeits,
                "tiebreaks": r.tiebreaks,
            })
        })
        .collect();
    json!({
        "event": event,
        "round": s.round,
        "tiebreak_names": s.tiebreak_names,
        "rows": rows,
    })
    .to_string()
}

/// RFC 4180: a header line, then a line a player; a field with a comma, a quote or a
/// line break quoted, its quotes doubled.
fn to_csv(s: &pb::GetStandingsResponse) -> String {
    fn field(v: &str) -> String {
        if v.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", v.replace('"', "\"\""))
        } else {
            v.to_string()
        }
    }
    let mut head: Vec<String> = [
        "rank",
        "number",
        "name",
        "title",
        "federation",
        "rating",
        "points",
        "games",
        "wins",
        "draws",
        "losses",
        "forfeits",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    head.extend(s.tiebreak_names.iter().map(|n| field(n)));
    let mut out = head.join(",") + "\r\n";
    for r in &s.rows {
        let p = r.player.clone().unwrap_or_default();
        let mut line = vec![
            r.rank.to_string(),
            p.pairing_number.to_string(),
            field(&p.name),
            field(&p.title),
            field(&p.federation),
            p.rating.to_string(),
            r.points.to_string(),
            r.games.to_string(),
            r.wins.to_string(),
            r.draws.to_string(),
            r.losses.to_string(),
            r.forfeits.to_string(),
        ];
        line.extend(r.tiebreaks.iter().map(ToString::to_string));
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    out
}
