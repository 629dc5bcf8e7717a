//! `GET /standings/<event>.json` and `GET /standings/<event>.csv`: GetStandings for
//! spreadsheets, rating officers and displays (issue 41), behind the broadcast delay
//! without an arbiter's token, as every path is. `?round=N`: after round N (default:
//! every encounter over so far).
//!
//! `GET /standings/<event>`: the same as a page that reads well on a phone (the table,
//! then every player's rounds as GetCrosstable gives them), written here (no script),
//! refreshed by the browser every 30 seconds.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{authorization, refusal};
use crate::api::Api;
use crate::api::Refusal;
use crate::api::pb;
use crate::api::validate::Check;
use crate::tournament::report_text::esc as escape;

/// `GET /standings/<event>.json|.csv[?round=N]`.
pub(super) async fn file(
    State(api): State<Api>,
    Path(file): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (event, form) = if let Some(e) = file.strip_suffix(".json") {
        (e, Form::Json)
    } else if let Some(e) = file.strip_suffix(".csv") {
        (e, Form::Csv)
    } else {
        (file.as_str(), Form::Page)
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
            return refusal(
                &Refusal::Field("round: a round number (0: every encounter over so far)".into())
                    .into(),
            );
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
        return refusal(&Refusal::Field(e.0).into());
    }
    let s = match api.standings_for(&role, &r).await {
        Ok(s) => s,
        Err(e) => return refusal(&e),
    };
    let (kind, body) = match form {
        Form::Csv => ("text/csv; charset=utf-8", to_csv(&s)),
        Form::Json => ("application/json", to_json(event, &s)),
        Form::Page => {
            let c = pb::GetCrosstableRequest {
                tournament: event.to_string(),
            };
            let crosstable = match api.crosstable_for(&role, &c).await {
                Ok(c) => c,
                Err(e) => return refusal(&e),
            };
            ("text/html; charset=utf-8", to_html(event, &s, &crosstable))
        }
    };
    let mut response = (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response();
    if form == Form::Page {
        let h = response.headers_mut();
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(super::live::CSP),
        );
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
    }
    response
}

/// What `/standings/<file>` answers with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Json,
    Csv,
    Page,
}

/// Points as a wall chart writes them: `3½`, `½`, `4`.
fn points(v: f64) -> String {
    let whole = v.trunc();
    if (v - whole).abs() < 1e-9 {
        format!("{whole}")
    } else if ((v - whole) - 0.5).abs() < 1e-9 {
        if whole == 0.0 {
            "½".to_string()
        } else {
            format!("{whole}½")
        }
    } else {
        format!("{v:.2}")
    }
}

/// The phone page: the standings, then each player's rounds.
fn to_html(event: &str, s: &pb::GetStandingsResponse, c: &pb::GetCrosstableResponse) -> String {
    use std::fmt::Write as _;
    let title = escape(event);
    let after = if s.round == 0 {
        "before the first round".to_string()
    } else {
        format!("after round {}", s.round)
    };
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"refresh\" content=\"30\">\n\
         <title>{title} · standings</title>\n\
         <link rel=\"stylesheet\" href=\"{}/standings.css\">\n</head>\n<body>\n\
         <header><h1>{title}</h1><p class=\"sub\">Standings {after} \
         · <a href=\"/live/{}\">live boards</a></p></header>\n<main>\n",
        super::live::ASSETS,
        escape(&super::live::path_segment(event)),
    );
    h.push_str("<table class=\"standings\">\n<thead><tr><th class=\"rank\">#</th><th class=\"name\">Player</th><th class=\"pts\">Pts</th><th class=\"n\" title=\"games played, won, drawn, lost\">G</th><th class=\"wdl\">+ = −</th>");
    for (i, name) in s.tiebreak_names.iter().enumerate() {
        let short = s
            .tiebreak_abbreviations
            .get(i)
            .map_or(name.as_str(), String::as_str);
        let _ = write!(
            h,
            "<th class=\"tb\" title=\"{}\">{}</th>",
            escape(name),
            escape(short)
        );
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for r in &s.rows {
        let p = r.player.clone().unwrap_or_default();
        let shared = s.rows.iter().filter(|o| o.rank == r.rank).count() > 1;
        let _ = write!(
            h,
            "<tr><td class=\"rank\">{}{}</td><td class=\"name\"><span class=\"pname\">{}</span>{}</td>\
             <td class=\"pts\">{}</td><td class=\"n\">{}</td><td class=\"wdl\">{} {} {}{}</td>",
            r.rank,
            if shared { "=" } else { "" },
            escape(&p.name),
            if p.federation.is_empty() && p.rating == 0 {
                String::new()
            } else {
                format!(
                    "<span class=\"meta\">{}{}</span>",
                    escape(&p.federation),
                    if p.rating > 0 {
                        format!(" {}", p.rating)
                    } else {
                        String::new()
                    }
                )
            },
            points(r.points),
            r.games + r.forfeits,
            r.wins,
            r.draws,
            r.losses,
            if r.forfeits > 0 {
                format!(" <span class=\"meta\">({} unplayed)</span>", r.forfeits)
            } else {
                String::new()
            },
        );
        for v in &r.tiebreaks {
            let _ = write!(h, "<td class=\"tb\">{}</td>", points(*v));
        }
        h.push_str("</tr>\n");
    }
    if s.rows.is_empty() {
        h.push_str("<tr><td colspan=\"5\" class=\"none\">No players yet.</td></tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    // Each player's rounds: opponent's number, colour, result.
    let rounds = c.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    if rounds > 0 {
        h.push_str("<h2>Rounds</h2>\n<table class=\"rounds\">\n<thead><tr><th class=\"no\">No</th><th class=\"name\">Player</th>");
        for n in 1..=rounds {
            let _ = write!(h, "<th>{n}</th>");
        }
        h.push_str("<th class=\"pts\">Pts</th></tr></thead>\n<tbody>\n");
        for r in &c.rows {
            let p = r.player.clone().unwrap_or_default();
            let _ = write!(
                h,
                "<tr><td class=\"no\">{}</td><td class=\"name\">{}</td>",
                p.pairing_number,
                escape(&p.name)
            );
            for cell in &r.cells {
                let colour = match pb::Side::try_from(cell.colour) {
                    Ok(pb::Side::White) => "w",
                    Ok(pb::Side::Black) => "b",
                    _ => "",
                };
                let against = if cell.opponent == 0 {
                    "–".to_string()
                } else {
                    cell.opponent.to_string()
                };
                let _ = write!(
                    h,
                    "<td class=\"cell {colour}\">{against}{colour} <b>{}</b></td>",
                    escape(&cell.result)
                );
            }
            let _ = writeln!(h, "<td class=\"pts\">{}</td></tr>", points(r.points));
        }
        h.push_str("</tbody>\n</table>\n");
    }
    h.push_str(
        "</main>\n<footer>draughts-arbiter · standings per T 7 and T 8 · refreshed every 30 s</footer>\n</body>\n</html>\n",
    );
    h
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
