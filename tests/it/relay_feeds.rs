//! Issue 41, items 4 and 5, over HTTP as a federation's tool and a relay site call them:
//! `GET /trf/<event>` for the event's arbiter only, the same text as ExportTrf; a
//! tournament's `site` and `time_zone` in its games' PDN (`Site`, `Date` the day in the
//! venue's zone); and `GET /livechess/<event>/<round>/games.json`, `index.json` and
//! `game-<n>.json` read by a reader that keeps lidraughts' rules (`RelayFetch.scala`,
//! object `DgtJson`: its field names, which of them are required, its numbering of the
//! games), a finished game's result in them, and a game behind its broadcast delay that
//! the public does not see until the delay has passed.

use std::time::{Duration, Instant};

use chrono::{DateTime, FixedOffset, Utc};
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::tournament_service_client::TournamentServiceClient;
use draughts_arbiter::notation::pdn::{PdnGame, read_games};
use serde_json::Value;
use tonic::transport::Channel;
use tonic::{Code, Request};

use crate::common::http::{self, Reply};
use crate::common::server::TestServer;

const EVENT: &str = "Relay Cup 2026";
const PATH: &str = "Relay%20Cup%202026";

const CONFIG: &str = "[[tokens]]\ntoken = \"chief\"\nrole = \"arbiter\"\nevent = \"Relay Cup 2026\"\n\
     [[tokens]]\ntoken = \"other\"\nrole = \"arbiter\"\nevent = \"Other Open\"\n\
     [[tokens]]\ntoken = \"fan\"\nrole = \"viewer\"\n";

fn req<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn tournaments(ch: &Channel) -> TournamentServiceClient<Channel> {
    TournamentServiceClient::new(ch.clone())
}

fn games(ch: &Channel) -> GameServiceClient<Channel> {
    GameServiceClient::new(ch.clone())
}

/// A 4-player round-robin in Moscow, its games' broadcast delay `delay_ms`, round 1
/// paired (and started when `start`): the game ids by board.
async fn moscow_event(ch: &Channel, delay_ms: u64, start: bool) -> Vec<String> {
    let mut t = tournaments(ch);
    t.create_tournament(req(
        "chief",
        pb::CreateTournamentRequest {
            name: EVENT.into(),
            variant: pb::Variant::Russian as i32,
            system: pb::TournamentSystem::RoundRobin as i32,
            time_control: "10m+5s".into(),
            settings: Some(pb::GameSettings {
                broadcast_delay_ms: Some(delay_ms),
                ..Default::default()
            }),
            site: "Moscow, Russia".into(),
            time_zone: "Europe/Moscow".into(),
            ..Default::default()
        },
    ))
    .await
    .expect("created");
    let players = [
        "Abaturov, Ivan",
        "Borisov, Pyotr",
        "Chizhov, Alexei",
        "Dolgov, Oleg",
    ]
    .iter()
    .map(|n| pb::Player {
        name: (*n).into(),
        rating: 2300,
        federation: "RUS".into(),
        ..Default::default()
    })
    .collect();
    t.add_players(req(
        "chief",
        pb::AddPlayersRequest {
            tournament: EVENT.into(),
            players,
        },
    ))
    .await
    .expect("players");
    let paired = t
        .pair_round(req(
            "chief",
            pb::PairRoundRequest {
                tournament: EVENT.into(),
                round: 1,
                ..Default::default()
            },
        ))
        .await
        .expect("paired")
        .into_inner();
    if start {
        t.start_round(req(
            "chief",
            pb::StartRoundRequest {
                tournament: EVENT.into(),
                round: 1,
            },
        ))
        .await
        .expect("started");
    }
    paired
        .pairings
        .iter()
        .map(|p| p.game_ids[0].clone())
        .collect()
}

async fn get(s: &TestServer, path: &str, token: Option<&str>) -> Reply {
    match token {
        Some(t) => http::get(s.addr, path, &[("authorization", &bearer(t))]).await,
        None => http::get(s.addr, path, &[]).await,
    }
}

/// The TRF over HTTP: 401 without a token, 403 for a viewer and another event's
/// arbiter, and for the event's arbiter exactly ExportTrf's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trf_is_the_arbiters_and_export_trfs_text() {
    let s = TestServer::start(CONFIG).await;
    moscow_event(&s.channel, 0, false).await;
    let path = format!("/trf/{PATH}");

    let none = get(&s, &path, None).await;
    assert_eq!(none.status, 401, "{}", none.text());
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert!(none.text().contains("authorization"), "{}", none.text());
    for token in ["fan", "other"] {
        let r = get(&s, &path, Some(token)).await;
        assert_eq!(r.status, 403, "{token}: {}", r.text());
        assert!(r.text().starts_with("PERMISSION_DENIED"), "{}", r.text());
    }
    let unknown = get(&s, "/trf/Nope", Some("chief")).await;
    assert_eq!(unknown.status, 404, "{}", unknown.text());

    let got = get(&s, &path, Some("chief")).await;
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(
        got.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let trf = tournaments(&s.channel)
        .export_trf(req(
            "chief",
            pb::ExportTrfRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("trf")
        .into_inner()
        .trf;
    assert!(trf.contains("Abaturov, Ivan"), "{trf}");
    assert_eq!(got.text(), trf, "the same text as ExportTrf");
    s.stop().await;
}

/// A tournament's site and zone: kept and shown, in its games, refused when the zone is
/// not one; the PDN's `Site`, and its `Date` the day the game started in Moscow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn site_and_time_zone_reach_the_games_pdn() {
    let s = TestServer::start(CONFIG).await;
    let mut t = tournaments(&s.channel);
    let bad = t
        .create_tournament(req(
            "chief",
            pb::CreateTournamentRequest {
                name: "Mars Open".into(),
                variant: pb::Variant::Russian as i32,
                system: pb::TournamentSystem::RoundRobin as i32,
                time_zone: "Mars/Olympus".into(),
                ..Default::default()
            },
        ))
        .await
        .expect_err("no such zone");
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
    assert!(
        bad.message().starts_with("time_zone:") && bad.message().contains("Mars/Olympus"),
        "{}",
        bad.message()
    );
    let bad_game = games(&s.channel)
        .create_game(req(
            "chief",
            pb::CreateGameRequest {
                variant: pb::Variant::Russian as i32,
                event: EVENT.into(),
                time_zone: "Europe/Atlantis".into(),
                ..Default::default()
            },
        ))
        .await
        .expect_err("no such zone");
    assert_eq!(bad_game.code(), Code::InvalidArgument, "{bad_game:?}");
    assert!(bad_game.message().starts_with("time_zone:"), "{bad_game:?}");

    let ids = moscow_event(&s.channel, 0, true).await;
    let shown = t
        .get_tournament(req(
            "fan",
            pb::GetTournamentRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("tournament")
        .into_inner()
        .tournament
        .expect("tournament");
    assert_eq!(
        (shown.site.as_str(), shown.time_zone.as_str()),
        ("Moscow, Russia", "Europe/Moscow")
    );
    let game = games(&s.channel)
        .get_game(req(
            "chief",
            pb::GetGameRequest {
                game_id: ids[0].clone(),
            },
        ))
        .await
        .expect("game")
        .into_inner();
    assert_eq!(
        (game.site.as_str(), game.time_zone.as_str()),
        ("Moscow, Russia", "Europe/Moscow")
    );
    // Moscow keeps UTC+3 all year (since 2014): the day there, computed here on its own.
    let started = game.started_at.expect("started");
    let started = DateTime::<Utc>::from_timestamp(started.seconds, started.nanos as u32)
        .expect("a time")
        .with_timezone(&FixedOffset::east_opt(3 * 3600).expect("+3"));
    let day = started.format("%Y.%m.%d").to_string();
    let pdn = get(&s, &format!("/pdn/{PATH}/1"), Some("chief"))
        .await
        .text();
    let records = records(&pdn);
    assert_eq!(records.len(), 2, "{pdn}");
    for g in &records {
        assert_eq!(g.tag("Site"), Some("Moscow, Russia"), "{pdn}");
        assert_eq!(g.tag("Date"), Some(day.as_str()), "{pdn}");
    }
    s.stop().await;
}

fn records(pdn: &str) -> Vec<PdnGame> {
    read_games(pdn)
        .into_iter()
        .map(|g| g.unwrap_or_else(|e| panic!("unreadable: {e}\n{pdn}")))
        .collect()
}

/// What lidraughts' relay makes of the documents: `DgtJson` read with play-json's
/// `Json.reads` rules (a field of a non-`Option` type is required, an `Option` field may
/// be missing or null, a present field must have its type), then the PDN each game
/// gives (`GamesJson.toPdns`: "[Empty]" is empty, `\n` and `\"` unescaped), each of
/// which must be one game that reads (`multiPdnToGames`: an empty PDN fails the sync).
mod lidraughts {
    use super::*;

    fn object<'a>(v: &'a Value, at: &str) -> &'a serde_json::Map<String, Value> {
        v.as_object()
            .unwrap_or_else(|| panic!("{at}: an object, got {v}"))
    }

    fn array<'a>(v: &'a Value, field: &str) -> &'a Vec<Value> {
        object(v, field)
            .get(field)
            .unwrap_or_else(|| panic!("{field}: required in {v}"))
            .as_array()
            .unwrap_or_else(|| panic!("{field}: an array in {v}"))
    }

    /// An `Option[String]` field.
    fn opt_string(v: &Value, field: &str) -> Option<String> {
        match object(v, field).get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => panic!("{field}: a string, got {other}"),
        }
    }

    /// A `String` field.
    fn string(v: &Value, field: &str) -> String {
        opt_string(v, field).unwrap_or_else(|| panic!("{field}: required in {v}"))
    }

    /// `GameJson(pdn: Option[String], result: Option[String])`.
    pub struct GameJson {
        pub pdn: Option<String>,
        pub result: Option<String>,
    }

    pub fn game(v: &Value) -> GameJson {
        GameJson {
            pdn: opt_string(v, "pdn"),
            result: opt_string(v, "result"),
        }
    }

    /// `GamesJson(games: List[GameJson])` and its `toPdns`.
    pub fn games(v: &Value) -> (Vec<GameJson>, Vec<String>) {
        let games: Vec<GameJson> = array(v, "games").iter().map(game).collect();
        let pdns = games
            .iter()
            .filter_map(|g| g.pdn.as_deref())
            .map(|p| {
                let p = if p == "[Empty]" { "" } else { p };
                p.replace("\\n", "\n").replace("\\\"", "\"")
            })
            .collect();
        (games, pdns)
    }

    /// `RoundJsonPairing(white: PairingPlayer, black: PairingPlayer, result: String)`
    /// with `PairingPlayer(fname, mname, lname, title: Option[String])` and its
    /// `fullName`; the n-th pairing's game is `game-<n>.json`, n from 1.
    pub struct Pairing {
        pub white: Option<String>,
        pub black: Option<String>,
        pub result: String,
    }

    fn full_name(v: &Value) -> Option<String> {
        object(v, "player");
        let _ = opt_string(v, "title");
        let name = ["fname", "mname", "lname"]
            .iter()
            .filter_map(|f| opt_string(v, f))
            .collect::<Vec<_>>()
            .join(" ");
        (!name.is_empty()).then_some(name)
    }

    pub fn round(v: &Value) -> Vec<Pairing> {
        array(v, "pairings")
            .iter()
            .map(|p| {
                let side = |s: &str| {
                    full_name(
                        object(p, "pairing")
                            .get(s)
                            .unwrap_or_else(|| panic!("{s}: required in {p}")),
                    )
                };
                Pairing {
                    white: side("white"),
                    black: side("black"),
                    result: string(p, "result"),
                }
            })
            .collect()
    }

    /// Every PDN is one game that reads, with moves or not.
    pub fn imported(pdn: &str) -> PdnGame {
        assert!(!pdn.trim().is_empty(), "an empty PDN fails the sync");
        let mut records = records(pdn);
        assert!(!records.is_empty(), "{pdn}");
        records.pop().expect("a record")
    }
}

fn json(r: &Reply) -> Value {
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("cache-control"), Some("no-store"));
    serde_json::from_str(&r.text()).unwrap_or_else(|e| panic!("{e}: {}", r.text()))
}

/// The three documents as one caller sees them: (games.json's results and move lists,
/// index.json's pairings, each game-<n>.json's result and move list).
struct Feeds {
    games: Vec<(Option<String>, Vec<String>)>,
    pairings: Vec<lidraughts::Pairing>,
    each: Vec<(Option<String>, Vec<String>, Value)>,
}

async fn feeds(s: &TestServer, token: Option<&str>) -> Feeds {
    let base = format!("/livechess/{PATH}/1");
    let doc = json(&get(s, &format!("{base}/games.json"), token).await);
    let (entries, pdns) = lidraughts::games(&doc);
    assert_eq!(entries.len(), pdns.len(), "every game has its PDN");
    let games = entries
        .iter()
        .zip(&pdns)
        .map(|(g, pdn)| {
            let record = lidraughts::imported(pdn);
            assert_eq!(
                g.result.as_deref(),
                record.tag("Result"),
                "the result field is the PDN's Result tag"
            );
            (
                g.result.clone(),
                record.moves.iter().map(|m| m.text.clone()).collect(),
            )
        })
        .collect();
    let pairings = lidraughts::round(&json(&get(s, &format!("{base}/index.json"), token).await));
    let mut each = Vec::new();
    for n in 1..=pairings.len() {
        let doc = json(&get(s, &format!("{base}/game-{n}.json"), token).await);
        let g = lidraughts::game(&doc);
        let record = lidraughts::imported(g.pdn.as_deref().expect("a PDN"));
        assert_eq!(g.result.as_deref(), record.tag("Result"));
        each.push((
            g.result,
            record.moves.iter().map(|m| m.text.clone()).collect(),
            doc,
        ));
    }
    Feeds {
        games,
        pairings,
        each,
    }
}

/// The feeds of a round as lidraughts reads them: players and results in the index, a
/// finished game's result in every document, the n-th pairing's game at game-<n>.json;
/// the public sees each game behind its broadcast delay (a result and a move only once
/// the delay has passed), the arbiter at once; refusals for what is not there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn livechess_feeds_read_as_lidraughts_reads_them() {
    const DELAY: u64 = 3_000;
    let s = TestServer::start(CONFIG).await;
    let ids = moscow_event(&s.channel, DELAY, true).await;
    assert_eq!(ids.len(), 2);
    let mut g = games(&s.channel);
    // Board 1: White plays, Black resigns: 1-0 (Russian results).
    g.submit_move(req(
        "chief",
        pb::SubmitMoveRequest {
            game_id: ids[0].clone(),
            r#move: "c3-d4".into(),
            ..Default::default()
        },
    ))
    .await
    .expect("move");
    g.resign(req(
        "chief",
        pb::ResignRequest {
            game_id: ids[0].clone(),
            side: pb::Side::Black as i32,
            ..Default::default()
        },
    ))
    .await
    .expect("resign");
    let finished_at = Instant::now();

    // The arbiter sees it at once.
    let arb = feeds(&s, Some("chief")).await;
    assert_eq!(
        arb.games,
        vec![
            (Some("1-0".into()), vec!["c3-d4".to_string()]),
            (Some("*".into()), vec![])
        ]
    );
    let names: Vec<(Option<String>, Option<String>, String)> = arb
        .pairings
        .iter()
        .map(|p| (p.white.clone(), p.black.clone(), p.result.clone()))
        .collect();
    let tournament_players = |i: usize, side: &str| {
        let game = arb.each[i].2["pdn"].as_str().expect("pdn").to_string();
        lidraughts::imported(&game)
            .tag(side)
            .expect("a name")
            .to_string()
    };
    // DGT's names: "Surname, Given" → fname "Given", lname "Surname"; lidraughts joins
    // them "Given Surname".
    let dgt = |pdn_name: String| {
        let (last, first) = pdn_name.split_once(", ").expect("Surname, Given");
        format!("{first} {last}")
    };
    assert_eq!(
        names,
        vec![
            (
                Some(dgt(tournament_players(0, "White"))),
                Some(dgt(tournament_players(0, "Black"))),
                "1-0".into()
            ),
            (
                Some(dgt(tournament_players(1, "White"))),
                Some(dgt(tournament_players(1, "Black"))),
                "*".into()
            ),
        ]
    );
    let index = json(
        &get(
            &s,
            &format!("/livechess/{PATH}/1/index.json"),
            Some("chief"),
        )
        .await,
    );
    assert_eq!(index["pairings"][0]["live"], Value::Bool(false));
    assert_eq!(index["pairings"][1]["live"], Value::Bool(true));
    assert_eq!(index["pairings"][0]["white"]["federation"], "RUS");
    // game-<n>.json: the n-th pairing's game, with DGT's move list (move and the mover's
    // clock after it).
    assert_eq!(arb.each[0].0.as_deref(), Some("1-0"));
    assert_eq!(arb.each[0].1, vec!["c3-d4".to_string()]);
    assert_eq!(arb.each[0].2["serialNr"], ids[0].as_str());
    assert_eq!(arb.each[1].2["serialNr"], ids[1].as_str());
    let dgt_moves = arb.each[0].2["moves"].as_array().expect("moves");
    assert_eq!(dgt_moves.len(), 1);
    let m = dgt_moves[0].as_str().expect("a string");
    assert!(
        m.starts_with("c3-d4 0:1") || m.starts_with("c3-d4 0:09:"),
        "the move and White's clock after it: {m}"
    );
    assert_eq!(arb.each[0].2["live"], Value::Bool(false));
    assert_eq!(arb.each[1].0.as_deref(), Some("*"));

    // The public (no token, or a viewer's) sees neither the move nor the result yet.
    for token in [None, Some("fan")] {
        let public = feeds(&s, token).await;
        assert_eq!(
            public.games,
            vec![(Some("*".into()), vec![]), (Some("*".into()), vec![])],
            "behind the delay"
        );
        assert!(public.pairings.iter().all(|p| p.result == "*"));
        assert!(
            public
                .each
                .iter()
                .all(|e| e.0.as_deref() == Some("*") && e.1.is_empty())
        );
        assert_eq!(public.each[0].2["moves"], Value::Array(vec![]));
    }
    assert!(
        finished_at.elapsed() < Duration::from_millis(DELAY),
        "checked in time"
    );

    // Once the delay has passed the public sees board 1 as the arbiter saw it.
    let deadline = finished_at + Duration::from_millis(DELAY + 5_000);
    let public = loop {
        let f = feeds(&s, None).await;
        if f.games[0].0.as_deref() == Some("1-0") {
            break f;
        }
        assert!(Instant::now() < deadline, "public after the delay");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        finished_at.elapsed() >= Duration::from_millis(DELAY - 50),
        "not before the delay"
    );
    assert_eq!(public.games, arb.games);
    assert_eq!(public.pairings[0].result, "1-0");
    assert_eq!(public.each[0].0.as_deref(), Some("1-0"));

    // Board 2: a move the public does not see until the delay has passed.
    g.submit_move(req(
        "chief",
        pb::SubmitMoveRequest {
            game_id: ids[1].clone(),
            r#move: "c3-d4".into(),
            ..Default::default()
        },
    ))
    .await
    .expect("move");
    let moved = Instant::now();
    assert_eq!(
        feeds(&s, Some("chief")).await.each[1].1,
        vec!["c3-d4".to_string()]
    );
    let early = feeds(&s, None).await;
    assert!(
        moved.elapsed() < Duration::from_millis(DELAY),
        "checked in time"
    );
    assert!(early.each[1].1.is_empty() && early.games[1].1.is_empty());
    loop {
        let f = feeds(&s, None).await;
        if f.each[1].1 == ["c3-d4"] {
            assert_eq!(f.games[1].1, ["c3-d4"]);
            break;
        }
        assert!(moved.elapsed() < Duration::from_millis(DELAY + 5_000));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(moved.elapsed() >= Duration::from_millis(DELAY - 50));

    // What is not there: 404 with the refusal.
    for path in [
        format!("/livechess/{PATH}/1/game-3.json"),
        format!("/livechess/{PATH}/1/game-0.json"),
        format!("/livechess/{PATH}/1/round.json"),
        format!("/livechess/{PATH}/2/games.json"),
        "/livechess/Nope/1/index.json".to_string(),
    ] {
        let r = get(&s, &path, None).await;
        assert_eq!(r.status, 404, "{path}: {}", r.text());
        assert!(r.text().starts_with("NOT_FOUND: "), "{path}: {}", r.text());
    }
    s.stop().await;
}
