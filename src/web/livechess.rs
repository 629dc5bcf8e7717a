//! `GET /livechess/<event>/<round>/...`: a round in the JSON that relay sites poll, as
//! DGT LiveChess Cloud publishes a round and as lidraughts' relay reads it (its
//! `RelayFetch.scala`, object `DgtJson`):
//!
//! - `games.json`: `{"games": [{"pdn": ..., "result": ...}, ...]}`, one entry a game in
//!   board order: lidraughts' `GamesJson` / `GameJson`, the one JSON document its
//!   `RelayFormat.guessFormat` accepts at a relay's URL besides a PDN file.
//! - `index.json`: `{"pairings": [{"white": {"fname", "lname", ...}, "black": {...},
//!   "result": "...", "live": ...}, ...]}`: DGT's round index, lidraughts' `RoundJson`
//!   (a pairing's `result` is required there, a player's names are optional).
//! - `game-<n>.json`: the game of the index's n-th pairing (1-based, as lidraughts
//!   numbers them, `zipWithIndex` plus one): lidraughts' `GameJson` (`pdn`, `result`)
//!   and, for DGT's readers, `live` and `moves` (each "move h:mm:ss", the mover's clock
//!   after it).
//!
//! Every document shows each game as the caller may see it, through [`Api::relay_game`]
//! (the same visibility as `/pdn/<event>/<round>`: the public sees a game behind its
//! broadcast delay). The PDN is the game's as `/pdn` serves it; `result` is its `Result`
//! tag, so a result travels in the tag and the field lidraughts keeps even though it
//! drops every comment.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{authorization, refusal};
use crate::api::Api;
use crate::api::Refusal;
use crate::api::auth::Role;
use crate::api::pb;
use crate::api::validate::Check;
use crate::hub::GameMeta;
use crate::notation::pdn::read_games;

/// The three documents of a round.
enum Doc {
    Games,
    Index,
    /// The pairing's position in the index, from 1.
    Game(usize),
}

impl Doc {
    fn parse(file: &str) -> Option<Doc> {
        match file {
            "games.json" => Some(Doc::Games),
            "index.json" => Some(Doc::Index),
            _ => {
                let n = file.strip_prefix("game-")?.strip_suffix(".json")?;
                // Digits only: "+1" and "01" are not DGT's names.
                if n.is_empty() || n.starts_with('0') || !n.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                n.parse().ok().map(Doc::Game)
            }
        }
    }
}

/// `GET /livechess/<event>/<round>/<games.json | index.json | game-<n>.json>`.
pub(super) async fn file(
    State(api): State<Api>,
    Path((event, round, file)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Response {
    let Some(doc) = Doc::parse(&file) else {
        return refusal(
            &Refusal::NotFound(format!(
                "path: a round's feeds are /livechess/<event>/<round>/games.json, index.json and \
             game-<n>.json (n from 1), not {:?}",
                crate::api::bounded_message(&file)
            ))
            .into(),
        );
    };
    let role = match api.role_of(authorization(&headers)) {
        Ok(role) => role,
        Err(e) => return refusal(&e),
    };
    // The event and round as ExportPdn checks them.
    let r = pb::ExportPdnRequest {
        game_id: String::new(),
        event,
        round,
    };
    if let Err(e) = r.check() {
        return refusal(&Refusal::Field(e.0).into());
    }
    let games = match round_games(&api, &r.event, &r.round).await {
        Ok(g) => g,
        Err(e) => return refusal(&e),
    };
    let body = match doc {
        Doc::Games => games_json(&api, &role, &games).await,
        Doc::Index => index_json(&api, &role, &games).await,
        Doc::Game(n) => match games.get(n - 1) {
            Some(m) => game_json(&api, &role, m).await,
            None => Err(Refusal::NotFound(format!(
                "game-{n}.json: round {:?} of event {:?} has {} games (game-1.json to \
                 game-{}.json)",
                r.round,
                r.event,
                games.len(),
                games.len()
            ))
            .into()),
        },
    };
    match body {
        Ok(v) => (
            StatusCode::OK,
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            v.to_string(),
        )
            .into_response(),
        Err(e) => refusal(&e),
    }
}

/// The round's games in board order (the store lists them by event, round, board).
async fn round_games(api: &Api, event: &str, round: &str) -> Result<Vec<GameMeta>, tonic::Status> {
    let filter = crate::store::GameFilter {
        event: Some(event.to_string()),
        round: Some(round.to_string()),
        unfinished_only: false,
    };
    let metas = api
        .hub()
        .list(&filter)
        .await
        .map_err(|e| crate::api::status(&e))?;
    if metas.is_empty() {
        return Err(
            Refusal::NotFound(format!("no games of event {event:?}, round {round:?}")).into(),
        );
    }
    Ok(metas)
}

/// A game as the feeds give it: the game, its PDN, and the `Result` tag of its last
/// record (`*` while it is not over as the caller sees it).
struct Seen {
    game: pb::Game,
    pdn: String,
    result: String,
}

async fn seen(api: &Api, role: &Role, id: &str) -> Result<Seen, tonic::Status> {
    let (game, pdn) = api.relay_game(role, id).await?;
    let result = read_games(&pdn)
        .into_iter()
        .rev()
        .find_map(Result::ok)
        .and_then(|g| g.tag("Result").map(str::to_owned))
        .unwrap_or_else(|| "*".to_owned());
    Ok(Seen {
        game,
        pdn: pdn.to_string(),
        result,
    })
}

/// Running or paused as the caller sees it: DGT's `live`.
fn live(g: &pb::Game) -> bool {
    matches!(
        pb::GameStatus::try_from(g.status),
        Ok(pb::GameStatus::Running | pb::GameStatus::Paused)
    )
}

/// `games.json`. A quarantined game (its log does not replay) is left out, as the round
/// stream leaves it out: lidraughts refuses a whole document with an empty PDN in it.
async fn games_json(api: &Api, role: &Role, games: &[GameMeta]) -> Result<Value, tonic::Status> {
    let mut out = Vec::with_capacity(games.len());
    for m in games {
        match seen(api, role, &m.id).await {
            Ok(s) => out.push(json!({ "pdn": s.pdn, "result": s.result })),
            Err(e) if e.code() == tonic::Code::DataLoss => {}
            Err(e) => return Err(e),
        }
    }
    Ok(json!({ "games": out }))
}

/// `index.json`: every game of the round a pairing, so that game-<n>.json is the n-th.
/// A quarantined game keeps its place, its names from the store, `*` and not live.
async fn index_json(api: &Api, role: &Role, games: &[GameMeta]) -> Result<Value, tonic::Status> {
    let mut pairings = Vec::with_capacity(games.len());
    for m in games {
        let (white, black, is_live, result) = match seen(api, role, &m.id).await {
            Ok(s) => (
                s.game
                    .white
                    .as_ref()
                    .map(|p| p.name.clone())
                    .unwrap_or_default(),
                s.game
                    .black
                    .as_ref()
                    .map(|p| p.name.clone())
                    .unwrap_or_default(),
                live(&s.game),
                s.result,
            ),
            Err(e) if e.code() == tonic::Code::DataLoss => (
                m.white.name.clone(),
                m.black.name.clone(),
                false,
                "*".to_owned(),
            ),
            Err(e) => return Err(e),
        };
        pairings.push(json!({
            "white": player(&white, &m.white),
            "black": player(&black, &m.black),
            "result": result,
            "live": is_live,
            "board": m.board,
        }));
    }
    Ok(json!({ "pairings": pairings }))
}

/// DGT's player object: `fname` (given names), `lname` (surname), as lidraughts joins
/// them (`fname mname lname`). Our names are "Surname, Given" as the event lists them: a
/// name without a comma is the surname alone. Empty parts are left out (lidraughts reads
/// every part as optional).
fn player(name: &str, info: &crate::game::PlayerInfo) -> Value {
    let mut p = serde_json::Map::new();
    let name = name.trim();
    let (last, first) = match name.split_once(',') {
        Some((l, f)) => (l.trim(), f.trim()),
        None => (name, ""),
    };
    if !first.is_empty() {
        p.insert("fname".into(), first.into());
    }
    if !last.is_empty() {
        p.insert("lname".into(), last.into());
    }
    if !info.federation.trim().is_empty() {
        p.insert("federation".into(), info.federation.trim().into());
    }
    if info.rating > 0 {
        p.insert("rating".into(), info.rating.into());
    }
    Value::Object(p)
}

/// `game-<n>.json`.
async fn game_json(api: &Api, role: &Role, m: &GameMeta) -> Result<Value, tonic::Status> {
    let s = seen(api, role, &m.id).await?;
    let moves: Vec<String> = s
        .game
        .moves
        .iter()
        .map(|pm| {
            let notation = pm.r#move.as_ref().map_or("", |mv| mv.notation.as_str());
            let clock = if pm.side == pb::Side::White as i32 {
                pm.white_clock_ms
            } else {
                pm.black_clock_ms
            };
            if clock >= 0 {
                format!("{notation} {}", hms(clock))
            } else {
                notation.to_owned()
            }
        })
        .collect();
    Ok(json!({
        "pdn": s.pdn,
        "result": s.result,
        "live": live(&s.game),
        "serialNr": m.id,
        "moves": moves,
    }))
}

/// Milliseconds as DGT writes a clock: `h:mm:ss`, rounded to the second as the PDN's
/// clock comments are.
fn hms(ms: i64) -> String {
    let s = (ms + 500) / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dgts() {
        assert!(matches!(Doc::parse("games.json"), Some(Doc::Games)));
        assert!(matches!(Doc::parse("index.json"), Some(Doc::Index)));
        assert!(matches!(Doc::parse("game-12.json"), Some(Doc::Game(12))));
        for bad in [
            "game-0.json",
            "game-01.json",
            "game-+1.json",
            "game-.json",
            "game-1",
            "round.json",
            "game-99999999999999999999.json",
        ] {
            assert!(Doc::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn players_split_as_dgt_names_them() {
        let info = crate::game::PlayerInfo {
            federation: "RUS".into(),
            ..Default::default()
        };
        assert_eq!(
            player("Ivanov, Pyotr", &info),
            json!({"fname": "Pyotr", "lname": "Ivanov", "federation": "RUS"})
        );
        assert_eq!(
            player("Ivanov", &Default::default()),
            json!({"lname": "Ivanov"})
        );
        assert_eq!(player("", &Default::default()), json!({}));
    }

    #[test]
    fn clocks_are_h_mm_ss() {
        assert_eq!(hms(0), "0:00:00");
        assert_eq!(hms(597_499), "0:09:57");
        assert_eq!(hms(597_500), "0:09:58");
        assert_eq!(hms(36_061_000), "10:01:01");
    }
}
