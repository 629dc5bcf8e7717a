//! The arbiter's round report (issue 41 item 3) over HTTP and gRPC: a scripted round of a
//! 4-player round-robin (2 boards) with a warning, a draw claim and the arbiter's ruling on
//! it, a pause, a clock adjustment, a resume and a result declared by the arbiter.
//! `GET /report/E/1`: no token 401, a viewer 403, another event's arbiter 403, the event's
//! arbiter 200; `?format=json` lists every scripted incident with its rule, actor and
//! time; `?format=csv` parses (RFC 4180) with a row per incident and move; an unknown
//! format 400 naming `format`; an unknown event or round 404. `GetRoundReport` gives the
//! same CSV. A round with a game still playing is reported as it stands, in progress.
//! Then headless Chromium (the browser test's helpers, `super::browser`) loads the HTML
//! report and prints it to PDF: at least one page, a page per board beside the summary
//! (the print stylesheet's page breaks), every incident's words, time and rule in the
//! PDF's text (read back by `common::pdf`) and on the page; the PDF is kept as
//! `target/report/round-report.pdf`.

use std::path::Path;

use base64::Engine as _;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::tournament_service_client::TournamentServiceClient;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic::{Code, Request};

use crate::common::http::{Reply, get};
use crate::common::pdf::{page_count, page_texts};
use crate::common::server::TestServer;

const EVENT: &str = "E";

const CONFIG: &str = "[[tokens]]\ntoken = \"chief\"\nrole = \"arbiter\"\nevent = \"E\"\n\
     [[tokens]]\ntoken = \"other\"\nrole = \"arbiter\"\nevent = \"Other Open\"\n\
     [[tokens]]\ntoken = \"fan\"\nrole = \"viewer\"\n";

fn req<T>(msg: T) -> Request<T> {
    as_token("chief", msg)
}

fn as_token<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

/// The round's report over HTTP with the chief arbiter's token.
async fn report(server: &TestServer, query: &str) -> Reply {
    get(
        server.addr,
        &format!("/report/{EVENT}/1{query}"),
        &[("authorization", "Bearer chief")],
    )
    .await
}

/// RFC 4180: records of fields, quoted fields with doubled quotes and line breaks inside.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => {
                assert!(
                    field.is_empty(),
                    "a quote inside an unquoted field: {field}"
                );
                quoted = true;
            }
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "CRLF line ends");
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "an unterminated quoted field");
    assert!(
        field.is_empty() && row.is_empty(),
        "the last line ends CRLF"
    );
    rows
}

/// The scripted incidents of board 1, in order: (kind, rule).
const SCRIPTED: &[(&str, &str)] = &[
    ("warning", "RU 1.9.4"),
    ("claim", ""),
    ("claim_ruling", "RU 1.9.2"),
    ("pause", "RU 1.6.4"),
    ("clock_adjustment", "RU 1.6.5"),
    ("resume", ""),
    ("result", "RU 1.8.1"),
];

/// Plays the scripted round; the game ids of boards 1 and 2.
async fn script(ch: &Channel) -> (String, String) {
    let mut t = TournamentServiceClient::new(ch.clone());
    t.create_tournament(req(pb::CreateTournamentRequest {
        name: EVENT.into(),
        variant: pb::Variant::Russian as i32,
        system: pb::TournamentSystem::RoundRobin as i32,
        time_control: "15m".into(),
        settings: Some(pb::GameSettings {
            claims_need_arbiter: true,
            ..Default::default()
        }),
        ..Default::default()
    }))
    .await
    .expect("created");
    t.add_players(req(pb::AddPlayersRequest {
        tournament: EVENT.into(),
        players: [
            "Abaturov, Ivan",
            "Borisova, Olga",
            "Chizhov, Alexei",
            "Dyachenko, Pavel",
        ]
        .iter()
        .map(|n| pb::Player {
            name: (*n).into(),
            federation: "RUS".into(),
            ..Default::default()
        })
        .collect(),
    }))
    .await
    .expect("players");
    let paired = t
        .pair_round(req(pb::PairRoundRequest {
            tournament: EVENT.into(),
            round: 1,
            ..Default::default()
        }))
        .await
        .expect("paired")
        .into_inner();
    assert_eq!(paired.pairings.len(), 2, "4 players, 2 boards");
    let ids: Vec<String> = paired
        .pairings
        .iter()
        .map(|p| p.game_ids[0].clone())
        .collect();
    t.start_round(req(pb::StartRoundRequest {
        tournament: EVENT.into(),
        round: 1,
    }))
    .await
    .expect("started");

    let mut games = GameServiceClient::new(ch.clone());
    let mut arbiter = ArbiterServiceClient::new(ch.clone());
    let (b1, b2) = (ids[0].clone(), ids[1].clone());
    for (id, side, mv) in [
        (&b1, pb::Side::White, "c3-d4"),
        (&b1, pb::Side::Black, "f6-g5"),
        (&b2, pb::Side::White, "c3-b4"),
    ] {
        games
            .submit_move(req(pb::SubmitMoveRequest {
                game_id: id.clone(),
                side: side as i32,
                r#move: mv.into(),
                ..Default::default()
            }))
            .await
            .expect("move");
    }
    arbiter
        .issue_warning(req(pb::IssueWarningRequest {
            game_id: b1.clone(),
            side: pb::Side::Black as i32,
            reason: "talking to a spectator".into(),
            rule: "RU 1.9.4".into(),
        }))
        .await
        .expect("warning");
    games
        .claim_draw(req(pb::ClaimDrawRequest {
            game_id: b1.clone(),
            side: pb::Side::White as i32,
            kind: pb::DrawClaimKind::Repetition as i32,
            ..Default::default()
        }))
        .await
        .expect("claim");
    arbiter
        .rule_on_claim(req(pb::RuleOnClaimRequest {
            game_id: b1.clone(),
            ruling: pb::ClaimRuling::Incorrect as i32,
            reason: "no position occurred three times".into(),
            rule: "RU 1.9.2".into(),
            ..Default::default()
        }))
        .await
        .expect("ruling");
    arbiter
        .pause_clocks(req(pb::PauseClocksRequest {
            game_id: b1.clone(),
            reason: "a phone rang in the hall".into(),
            rule: "RU 1.6.4".into(),
        }))
        .await
        .expect("pause");
    arbiter
        .adjust_clock(req(pb::AdjustClockRequest {
            game_id: b1.clone(),
            side: pb::Side::Black as i32,
            change: Some(pb::adjust_clock_request::Change::AddMs(60_000)),
            reason: "disturbed by the phone".into(),
            rule: "RU 1.6.5".into(),
        }))
        .await
        .expect("adjust");
    arbiter
        .resume_clocks(req(pb::ResumeClocksRequest {
            game_id: b1.clone(),
            ..Default::default()
        }))
        .await
        .expect("resume");
    arbiter
        .declare_result(req(pb::DeclareResultRequest {
            game_id: b1.clone(),
            result: pb::GameResult::WhiteWins as i32,
            reason: pb::ResultReason::ArbiterDecision as i32,
            rule: "RU 1.8.1".into(),
            explanation: "black left the hall".into(),
        }))
        .await
        .expect("result");
    (b1, b2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_report_lists_every_incident_and_prints() {
    let server = TestServer::start(CONFIG).await;
    let (b1, b2) = script(&server.channel).await;

    // Who may read it.
    let none = get(server.addr, "/report/E/1", &[]).await;
    assert_eq!(none.status, 401, "{}", none.text());
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    let viewer = get(
        server.addr,
        "/report/E/1",
        &[("authorization", "Bearer fan")],
    )
    .await;
    assert_eq!(viewer.status, 403, "{}", viewer.text());
    let other = get(
        server.addr,
        "/report/E/1",
        &[("authorization", "Bearer other")],
    )
    .await;
    assert_eq!(other.status, 403, "{}", other.text());
    let bad = report(&server, "?format=pdf").await;
    assert_eq!(bad.status, 400);
    assert!(bad.text().contains("format"), "{}", bad.text());
    for path in [
        "/report/Nope/1",
        "/report/E/9",
        "/report/E/0",
        "/report/E/x",
    ] {
        let missing = get(server.addr, path, &[("authorization", "Bearer chief")]).await;
        assert_eq!(missing.status, 404, "{path}: {}", missing.text());
    }

    // Board 2 still plays: the round as it stands.
    let live = report(&server, "?format=json").await;
    assert_eq!(live.status, 200, "{}", live.text());
    assert_eq!(live.header("content-type"), Some("application/json"));
    let j: Value = serde_json::from_slice(&live.body).expect("JSON");
    assert_eq!(j["status"], json!("in_progress"));
    assert_eq!(j["boards"][1]["games"][0]["status"], json!("playing"));
    let html = report(&server, "").await;
    assert_eq!(html.status, 200);
    assert!(html.text().contains("in progress"), "marked in progress");

    // Board 2 ends; the round is finished.
    GameServiceClient::new(server.channel.clone())
        .resign(req(pb::ResignRequest {
            game_id: b2.clone(),
            side: pb::Side::Black as i32,
            ..Default::default()
        }))
        .await
        .expect("resigns");
    let done = report(&server, "?format=json").await;
    let j: Value = serde_json::from_slice(&done.body).expect("JSON");
    assert_eq!(j["event"], json!(EVENT));
    assert_eq!(j["round"], json!(1));
    // The round's status follows the tournament, which takes the result from the game
    // as the hub reports it: wait for it briefly.
    let mut j = j;
    for _ in 0..100 {
        if j["status"] == json!("finished") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        j = serde_json::from_slice(&report(&server, "?format=json").await.body).expect("JSON");
    }
    assert_eq!(j["status"], json!("finished"), "{j}");

    // Board 1: every scripted incident, once, with its rule, actor and time.
    let g1 = &j["boards"][0]["games"][0];
    assert_eq!(g1["game_id"], json!(b1));
    let incidents = g1["incidents"].as_array().expect("incidents");
    let reported: Vec<(&str, &str)> = incidents
        .iter()
        .filter(|i| i["kind"] != json!("start"))
        .map(|i| {
            (
                i["kind"].as_str().unwrap_or(""),
                i["rule"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let scripted: Vec<&str> = SCRIPTED.iter().map(|(k, _)| *k).collect();
    let kinds: Vec<&str> = reported.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, scripted, "{g1}");
    for ((kind, rule), (want_kind, want_rule)) in reported.iter().zip(SCRIPTED) {
        assert_eq!(kind, want_kind);
        if !want_rule.is_empty() {
            assert_eq!(rule, want_rule, "{kind}");
        }
    }
    for i in incidents {
        let time = i["time"].as_str().expect("time");
        chrono::DateTime::parse_from_rfc3339(time).expect("an RFC 3339 time");
        let actor = i["actor"].as_str().expect("actor");
        // Every incident was the arbiter's: the round's start (StartRound starts the
        // games as the arbiter who gave it, issue 42), the claim made with the arbiter's
        // token, every ruling.
        assert_eq!(actor, "arbiter:E", "{i}");
    }
    let warning = incidents
        .iter()
        .find(|i| i["kind"] == json!("warning"))
        .expect("warning");
    assert!(
        warning["text"]
            .as_str()
            .is_some_and(|t| t.contains("talking to a spectator") && t.contains("Black")),
        "{warning}"
    );
    assert_eq!(
        g1["result"]["text"],
        json!("1-0, arbiter's decision (RU 1.8.1)")
    );
    let sheet: Vec<&str> = g1["sheet"]
        .as_array()
        .expect("sheet")
        .iter()
        .map(|m| m["written"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(sheet, ["1. c3-d4", "1... f6-g5"]);
    let g2 = &j["boards"][1]["games"][0];
    assert_eq!(
        g2["result"]["text"]
            .as_str()
            .map(|t| t.starts_with("1-0, resignation")),
        Some(true),
        "{g2}"
    );

    // CSV: a header row, then a row per incident and move, every row 7 fields.
    let csv = report(&server, "?format=csv").await;
    assert_eq!(csv.status, 200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let rows = parse_csv(&csv.text());
    assert_eq!(
        rows[0],
        ["board", "game", "time", "kind", "actor", "rule", "text"]
    );
    assert!(rows.iter().all(|r| r.len() == 7), "{rows:?}");
    for (kind, rule) in SCRIPTED {
        let found: Vec<&Vec<String>> = rows
            .iter()
            .filter(|r| r[0] == "1" && r[1] == b1 && r[3] == *kind)
            .collect();
        assert_eq!(found.len(), 1, "{kind} once on board 1: {found:?}");
        if !rule.is_empty() {
            assert_eq!(found[0][5], *rule);
        }
    }
    let moves = rows.iter().filter(|r| r[3] == "move").count();
    assert_eq!(moves, 3, "two moves on board 1, one on board 2");

    // GetRoundReport gives the same CSV; a viewer is refused.
    let mut t = TournamentServiceClient::new(server.channel.clone());
    let grpc = t
        .get_round_report(req(pb::GetRoundReportRequest {
            tournament: EVENT.into(),
            round: 1,
            format: pb::ReportFormat::Csv as i32,
        }))
        .await
        .expect("report")
        .into_inner();
    assert_eq!(grpc.text, csv.text());
    assert_eq!(grpc.content_type, "text/csv; charset=utf-8");
    let denied = t
        .get_round_report(as_token(
            "fan",
            pb::GetRoundReportRequest {
                tournament: EVENT.into(),
                round: 1,
                format: pb::ReportFormat::Html as i32,
            },
        ))
        .await
        .expect_err("a viewer");
    assert_eq!(denied.code(), Code::PermissionDenied);
    let zero = t
        .get_round_report(req(pb::GetRoundReportRequest {
            tournament: EVENT.into(),
            round: 0,
            format: 0,
        }))
        .await
        .expect_err("round 0");
    assert_eq!(zero.code(), Code::InvalidArgument);
    assert!(zero.message().contains("round"), "{}", zero.message());

    // The printed page.
    let html = report(&server, "").await;
    assert_eq!(html.status, 200);
    assert_eq!(
        html.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let page = html.text();
    assert!(page.contains("@media print") && page.contains("size: A4"));
    assert!(
        !page.contains("<link") && !page.contains("<script"),
        "no external assets"
    );
    print_to_pdf(&page, &j).await;
    server.stop().await;
}

/// Loads the report in Chromium from a file (it needs nothing else: no assets, no
/// token), prints it to PDF and checks the PDF and the page's text.
async fn print_to_pdf(page: &str, report: &Value) {
    if super::browser::skipped() {
        return;
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report");
    std::fs::create_dir_all(&out).expect("target/report");
    let file = out.join("round-report.html");
    std::fs::write(&file, page).expect("write the page");
    let profile = tempfile::tempdir().expect("profile dir");
    let browser = super::browser::Browser::start(profile.path()).await;
    browser.open(&format!("file://{}", file.display())).await;
    let text = browser
        .eval("return document.body.innerText;")
        .await
        .as_str()
        .expect("the page's text")
        .to_string();
    let pdf = browser
        .command(
            "POST",
            "print",
            Some(&json!({
                "page": { "width": 21.0, "height": 29.7 },
                "background": true,
            })),
        )
        .await;
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(pdf.as_str().expect("base64 PDF"))
        .expect("a PDF");
    assert!(pdf.starts_with(b"%PDF-"), "a PDF");
    let kept = out.join("round-report.pdf");
    std::fs::write(&kept, &pdf).expect("keep the PDF");
    let pages = page_count(&pdf);
    let boards = report["boards"].as_array().map_or(0, Vec::len);
    eprintln!(
        "round report PDF: {} ({} bytes, {pages} pages for {boards} boards)",
        kept.display(),
        pdf.len()
    );
    assert!(pages >= 1, "at least a page");
    assert!(
        pages > boards,
        "the summary, then a page break before each board: {pages} pages"
    );
    // Every incident's words, time and rule are in the printed pages' text, read back from
    // the PDF (whitespace aside: the table cells wrap lines), and on the page itself.
    let squeeze = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let printed = squeeze(&page_texts(&pdf).join(" "));
    let shown = squeeze(&text);
    let mut checked = 0;
    for b in report["boards"].as_array().expect("boards") {
        for g in b["games"].as_array().expect("games") {
            for i in g["incidents"].as_array().expect("incidents") {
                let words = squeeze(i["text"].as_str().expect("text"));
                let clock = &i["time"].as_str().expect("time")[11..19];
                let mut wanted = vec![words, clock.to_string()];
                if let Some(rule) = i["rule"].as_str() {
                    wanted.push(squeeze(rule));
                }
                for w in wanted {
                    assert!(
                        printed.contains(&w),
                        "{w:?} not in the PDF's text: {printed}"
                    );
                    assert!(shown.contains(&w), "{w:?} not on the page");
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} incidents found in the PDF's text");
    assert!(checked >= SCRIPTED.len());
}
