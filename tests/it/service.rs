//! The real server on 127.0.0.1:0 with a real tonic client: a full game, a repetition
//! claim, the draw-offer rules, refusals that change nothing, the role matrix, and watch
//! streams with concurrent moves.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::auth::{Place, Role, TokenConfig};
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::rules_service_client::RulesServiceClient;
use draughts_arbiter::rules::Color;
use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::store::MemoryStore;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request};

struct Server {
    channel: Channel,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start(tokens: Vec<TokenConfig>) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let file = FileConfig {
        tokens,
        ..FileConfig::default()
    };
    let config = Config::resolve(file, Some(addr), None, true, None, None, false).expect("config");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let store = Arc::new(MemoryStore::new());
        run(&config, store, listener, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    let endpoint = Endpoint::from_shared(format!("http://{addr}")).expect("url");
    for _ in 0..100 {
        if let Ok(channel) = endpoint.connect().await {
            return Server {
                channel,
                _stop: stop,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("server did not come up");
}

fn req<T>(token: Option<&str>, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token {
        r.metadata_mut().insert(
            "authorization",
            format!("Bearer {t}").parse().expect("header"),
        );
    }
    r
}

fn create(fen: &str, tc: &str, event: &str, id: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: pb::Variant::Russian as i32,
        time_control: tc.into(),
        white: Some(pb::Player {
            name: "Ann".into(),
            ..Default::default()
        }),
        black: Some(pb::Player {
            name: "Bob".into(),
            ..Default::default()
        }),
        event: event.into(),
        round: "1".into(),
        board: 1,
        start_fen: fen.into(),
        settings: None,
        game_id: id.into(),
        site: String::new(),
        time_zone: String::new(),
    }
}

fn side(c: Color) -> i32 {
    match c {
        Color::White => pb::Side::White as i32,
        Color::Black => pb::Side::Black as i32,
    }
}

async fn new_game(s: &Server, fen: &str) -> String {
    let mut games = GameServiceClient::new(s.channel.clone());
    let g = games
        .create_game(create(fen, "10m+5s", "Open", ""))
        .await
        .expect("create")
        .into_inner();
    games
        .start_game(pb::StartGameRequest {
            game_id: g.id.clone(),
            expected_seq: 0,
        })
        .await
        .expect("start");
    g.id
}

async fn play(
    s: &Server,
    id: &str,
    c: Color,
    mv: &str,
) -> Result<pb::SubmitMoveResponse, tonic::Status> {
    GameServiceClient::new(s.channel.clone())
        .submit_move(pb::SubmitMoveRequest {
            game_id: id.into(),
            r#move: mv.into(),
            expected_seq: 0,
            side: side(c),
            offer_draw: false,
        })
        .await
        .map(|r| r.into_inner())
}

#[tokio::test]
async fn a_full_game_to_a_result() {
    let s = start(vec![]).await;
    let id = new_game(&s, "").await;
    for (c, m) in [
        (Color::White, "c3-d4"),
        (Color::Black, "b6-c5"),
        (Color::White, "d4:b6"),
        (Color::Black, "a7:c5"),
        (Color::White, "g3-f4"),
    ] {
        play(&s, &id, c, m).await.expect("legal move");
    }
    let r = GameServiceClient::new(s.channel.clone())
        .resign(pb::ResignRequest {
            game_id: id.clone(),
            side: side(Color::Black),
            expected_seq: 0,
        })
        .await
        .expect("resign")
        .into_inner();
    let g = r.game.expect("game");
    assert_eq!(g.status, pb::GameStatus::Finished as i32);
    assert_eq!(g.result, pb::GameResult::WhiteWins as i32);
    assert_eq!(g.result_reason, pb::ResultReason::Resignation as i32);
    assert_eq!(g.rule, "RU 1.8");
    assert_eq!(g.move_count, 5);
    assert!(
        g.moves.is_empty(),
        "command replies leave the score sheet out"
    );
    // The stamps of creation, start and end, in that order.
    let secs = |t: &Option<prost_types::Timestamp>| {
        let t = t.as_ref().expect("timestamp set");
        t.seconds * 1000 + i64::from(t.nanos / 1_000_000)
    };
    let (created, started, finished) = (
        secs(&g.created_at),
        secs(&g.started_at),
        secs(&g.finished_at),
    );
    assert!(
        created > 1_700_000_000_000,
        "created_at is wall time: {created}"
    );
    assert!(created <= started && started <= finished);
    // GetGame has the whole score sheet.
    let full = GameServiceClient::new(s.channel.clone())
        .get_game(pb::GetGameRequest {
            game_id: id.clone(),
        })
        .await
        .expect("get")
        .into_inner();
    let sheet: Vec<&str> = full
        .moves
        .iter()
        .filter_map(|m| m.r#move.as_ref())
        .map(|m| m.notation.as_str())
        .collect();
    assert_eq!(sheet, ["c3-d4", "b6-c5", "d4:b6", "a7:c5", "g3-f4"]);
    assert_eq!(full.move_count, 5);
    let after = play(&s, &id, Color::Black, "b6-a5")
        .await
        .expect_err("game over");
    assert_eq!(after.code(), Code::FailedPrecondition);
    let pdn = BroadcastServiceClient::new(s.channel.clone())
        .export_pdn(pb::ExportPdnRequest {
            game_id: id,
            ..Default::default()
        })
        .await
        .expect("pdn")
        .into_inner()
        .pdn;
    // The export replays, with a clock comment after each move.
    common::pdn::replays(&pdn, draughts_arbiter::rules::Variant::Russian);
    let records = draughts_arbiter::notation::pdn::read_games(&pdn);
    let record = records[0].as_ref().expect("reads");
    let written: Vec<&str> = record.moves.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        written,
        ["c3-d4", "b6-c5", "d4:b6", "a7:c5", "g3-f4"],
        "{pdn}"
    );
    assert!(
        record.moves.iter().all(|m| m
            .comments
            .first()
            .is_some_and(|c| c.starts_with("[%clock "))),
        "{pdn}"
    );
    assert!(pdn.contains("[TimeControl \"600+5\"]"), "{pdn}");
    assert!(pdn.ends_with(" 1-0\n"), "{pdn}");
}

#[tokio::test]
async fn a_game_ends_when_a_side_has_no_pieces() {
    let s = start(vec![]).await;
    let id = new_game(&s, "W:Wc3:Bd4").await;
    let r = play(&s, &id, Color::White, "c3:e5").await.expect("capture");
    let g = r.game.expect("game");
    assert_eq!(g.result, pb::GameResult::WhiteWins as i32);
    assert_eq!(g.result_reason, pb::ResultReason::NoPieces as i32);
}

#[tokio::test]
async fn ru_1_9_2_repetition_claim_over_the_network() {
    let s = start(vec![]).await;
    let id = new_game(&s, "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7").await;
    for _ in 0..2 {
        for (c, m) in [
            (Color::White, "c1-d2"),
            (Color::Black, "h8-g7"),
            (Color::White, "d2-c1"),
            (Color::Black, "g7-h8"),
        ] {
            play(&s, &id, c, m).await.expect("legal");
        }
    }
    let r = GameServiceClient::new(s.channel.clone())
        .claim_draw(pb::ClaimDrawRequest {
            game_id: id,
            side: side(Color::White),
            written_move: String::new(),
            kind: pb::DrawClaimKind::Repetition as i32,
            expected_seq: 0,
        })
        .await
        .expect("claim")
        .into_inner();
    let g = r.game.expect("game");
    assert_eq!(g.result, pb::GameResult::Draw as i32);
    assert_eq!(g.result_reason, pb::ResultReason::Repetition as i32);
    assert_eq!(g.rule, "RU 1.9.2");
}

/// The arbiter's inputs reach the wire as given (issue #12 items 3-4): a result by
/// penalty with its rule and explanation; a pause with its reason; a warning with its
/// rule; a ruling quoting the wrong claim is FAILED_PRECONDITION naming the pending one.
#[tokio::test]
async fn arbiter_inputs_are_recorded_as_given_over_the_network() {
    let s = start(vec![]).await;
    let mut arbiter = ArbiterServiceClient::new(s.channel.clone());
    let id = new_game(&s, "").await;
    let paused = arbiter
        .pause_clocks(pb::PauseClocksRequest {
            game_id: id.clone(),
            reason: "the light failed".into(),
            rule: "Open 2026 regulations 4.2".into(),
        })
        .await
        .expect("pause")
        .into_inner();
    let e = &paused.events[0];
    assert_eq!(e.rule, "Open 2026 regulations 4.2");
    assert!(
        matches!(&e.kind, Some(pb::game_event::Kind::ClocksPaused(p)) if p.reason == "the light failed")
    );
    let resumed = arbiter
        .resume_clocks(pb::ResumeClocksRequest {
            game_id: id.clone(),
            reason: "light back".into(),
            rule: String::new(),
        })
        .await
        .expect("resume")
        .into_inner();
    assert!(
        matches!(&resumed.events[0].kind, Some(pb::game_event::Kind::ClocksResumed(r)) if r.reason == "light back" && r.clock.is_some())
    );
    let warned = arbiter
        .issue_warning(pb::IssueWarningRequest {
            game_id: id.clone(),
            side: side(Color::Black),
            reason: "noise".into(),
            rule: "RU 1.9.4".into(),
        })
        .await
        .expect("warn")
        .into_inner();
    assert_eq!(warned.events[0].rule, "RU 1.9.4");
    assert_eq!(warned.game.expect("game").warnings[0].rule, "RU 1.9.4");
    let too_long = arbiter
        .issue_warning(pb::IssueWarningRequest {
            game_id: id.clone(),
            side: side(Color::Black),
            reason: "x".repeat(1001),
            rule: String::new(),
        })
        .await
        .expect_err("too long");
    assert_eq!(too_long.code(), Code::InvalidArgument);
    assert_eq!(too_long.message(), "reason: at most 1000 bytes, got 1001");
    let declared = arbiter
        .declare_result(pb::DeclareResultRequest {
            game_id: id.clone(),
            result: pb::GameResult::WhiteWins as i32,
            reason: pb::ResultReason::Penalty as i32,
            rule: "RU 1.9.4".into(),
            explanation: "third warning".into(),
        })
        .await
        .expect("declare")
        .into_inner();
    let e = &declared.events[0];
    assert_eq!(e.rule, "RU 1.9.4");
    assert!(
        matches!(&e.kind, Some(pb::game_event::Kind::GameFinished(f))
        if f.reason == pb::ResultReason::Penalty as i32 && f.explanation == "third warning")
    );
    let g = declared.game.expect("game");
    assert_eq!(g.result_reason, pb::ResultReason::Penalty as i32);
    assert_eq!(g.rule, "RU 1.9.4");
    let refused = arbiter
        .declare_result(pb::DeclareResultRequest {
            game_id: id,
            result: pb::GameResult::Draw as i32,
            reason: pb::ResultReason::Repetition as i32,
            rule: String::new(),
            explanation: "x".into(),
        })
        .await
        .expect_err("not the arbiter's kind");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert_eq!(
        refused.message(),
        "reason: RESULT_REASON_ARBITER_DECISION, RESULT_REASON_PENALTY or RESULT_REASON_FORFEIT, got RESULT_REASON_REPETITION"
    );

    // A claim waiting for the arbiter: the wrong seq is refused, the right one rules.
    let mut games = GameServiceClient::new(s.channel.clone());
    let mut request = create("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7", "10m+5s", "Open", "");
    request.settings = Some(pb::GameSettings {
        claims_need_arbiter: true,
        ..Default::default()
    });
    let g = games
        .create_game(request)
        .await
        .expect("create")
        .into_inner();
    games
        .start_game(pb::StartGameRequest {
            game_id: g.id.clone(),
            expected_seq: 0,
        })
        .await
        .expect("start");
    for _ in 0..2 {
        for (c, m) in [
            (Color::White, "c1-d2"),
            (Color::Black, "h8-g7"),
            (Color::White, "d2-c1"),
            (Color::Black, "g7-h8"),
        ] {
            play(&s, &g.id, c, m).await.expect("legal");
        }
    }
    let claimed = games
        .claim_draw(pb::ClaimDrawRequest {
            game_id: g.id.clone(),
            side: side(Color::White),
            written_move: String::new(),
            kind: pb::DrawClaimKind::Repetition as i32,
            expected_seq: 0,
        })
        .await
        .expect("claim")
        .into_inner();
    let pending = claimed
        .game
        .expect("game")
        .pending_claim
        .expect("pending")
        .seq;
    assert_ne!(pending, 0);
    let rule = |seq| pb::RuleOnClaimRequest {
        game_id: g.id.clone(),
        claim_seq: seq,
        ruling: pb::ClaimRuling::Correct as i32,
        reason: "scoresheets checked".into(),
        rule: String::new(),
    };
    let wrong = arbiter
        .rule_on_claim(rule(pending + 3))
        .await
        .expect_err("wrong seq");
    assert_eq!(wrong.code(), Code::FailedPrecondition);
    assert_eq!(
        wrong.message(),
        format!(
            "claim_seq {} is not the pending claim: that is seq {pending} (RU 1.9.2)",
            pending + 3
        )
    );
    let ruled = arbiter
        .rule_on_claim(rule(pending))
        .await
        .expect("ruled")
        .into_inner();
    assert!(
        matches!(&ruled.events[0].kind, Some(pb::game_event::Kind::ClaimDecided(d))
        if d.claim_seq == pending && d.reason == "scoresheets checked" && d.side == side(Color::White))
    );
}

#[tokio::test]
async fn ru_1_9_6_draw_offer_rules_over_the_network() {
    let s = start(vec![]).await;
    let id = new_game(&s, "").await;
    let mut games = GameServiceClient::new(s.channel.clone());
    play(&s, &id, Color::White, "c3-d4").await.expect("move");
    // White offers while Black's clock runs: valid, and White is warned (RU 1.9.4).
    let r = games
        .offer_draw(pb::OfferDrawRequest {
            game_id: id.clone(),
            side: side(Color::White),
            expected_seq: 0,
        })
        .await
        .expect("offer")
        .into_inner();
    assert!(r.events.iter().any(|e| e.rule == "RU 1.9.4"));
    games
        .respond_to_draw_offer(pb::RespondToDrawOfferRequest {
            game_id: id.clone(),
            side: side(Color::Black),
            response: pb::DrawResponse::Decline as i32,
            expected_seq: 0,
        })
        .await
        .expect("decline");
    let again = games
        .offer_draw(pb::OfferDrawRequest {
            game_id: id.clone(),
            side: side(Color::White),
            expected_seq: 0,
        })
        .await
        .expect_err("RU 1.9.6");
    assert_eq!(again.code(), Code::FailedPrecondition);
    assert!(again.message().contains("RU 1.9.6"), "{}", again.message());
}

#[tokio::test]
async fn refusals_name_the_rule_or_field_and_change_nothing() {
    let s = start(vec![]).await;
    let id = new_game(&s, "").await;
    let mut games = GameServiceClient::new(s.channel.clone());
    let before = games
        .get_game(pb::GetGameRequest {
            game_id: id.clone(),
        })
        .await
        .expect("get")
        .into_inner();
    let wrong_turn = play(&s, &id, Color::Black, "b6-a5")
        .await
        .expect_err("wrong turn");
    assert_eq!(wrong_turn.code(), Code::FailedPrecondition);
    assert!(
        wrong_turn.message().contains("RU 1.4.1"),
        "{}",
        wrong_turn.message()
    );
    let illegal = play(&s, &id, Color::White, "c3-e5")
        .await
        .expect_err("illegal");
    assert_eq!(illegal.code(), Code::FailedPrecondition);
    assert!(
        illegal.message().contains("RU 1.4"),
        "{}",
        illegal.message()
    );
    let malformed = play(&s, &id, Color::White, "z9-q1")
        .await
        .expect_err("malformed");
    assert_eq!(malformed.code(), Code::InvalidArgument);
    let empty = play(&s, &id, Color::White, "").await.expect_err("empty");
    assert_eq!(empty.code(), Code::InvalidArgument);
    assert!(empty.message().contains("move"));
    let stale = games
        .submit_move(pb::SubmitMoveRequest {
            game_id: id.clone(),
            r#move: "c3-d4".into(),
            expected_seq: 1,
            side: side(Color::White),
            offer_draw: false,
        })
        .await
        .expect_err("stale");
    assert_eq!(stale.code(), Code::Aborted);
    let missing = play(&s, "no-such-game", Color::White, "c3-d4")
        .await
        .expect_err("missing");
    assert_eq!(missing.code(), Code::NotFound);
    let bad_fen = games
        .create_game(create("W:W99:B1", "", "Open", ""))
        .await
        .expect_err("fen");
    assert_eq!(bad_fen.code(), Code::InvalidArgument);
    assert!(
        bad_fen.message().contains("start_fen"),
        "{}",
        bad_fen.message()
    );
    let after = games
        .get_game(pb::GetGameRequest { game_id: id })
        .await
        .expect("get")
        .into_inner();
    assert_eq!(after.last_seq, before.last_seq);
    assert_eq!(after.fen, before.fen);
}

#[tokio::test]
async fn legal_moves_are_sorted_with_paths() {
    let s = start(vec![]).await;
    let r = RulesServiceClient::new(s.channel.clone())
        .legal_moves(pb::LegalMovesRequest {
            variant: pb::Variant::Russian as i32,
            fen: "W:WKe1:Ba3,b4,d2,d4,f2,f4".into(),
        })
        .await
        .expect("moves")
        .into_inner();
    let n: Vec<&str> = r.moves.iter().map(|m| m.notation.as_str()).collect();
    assert_eq!(n, ["e1:c3:a5", "e1:c3:e5:g3:e1", "e1:g3:e5:c3:a5"]);
    assert_eq!(r.moves[0].path, [31, 22, 13]);
    assert_eq!(r.moves[0].captured, [26, 17]);
    let e = RulesServiceClient::new(s.channel.clone())
        .legal_moves(pb::LegalMovesRequest {
            variant: 0,
            fen: String::new(),
        })
        .await
        .expect_err("variant required");
    assert_eq!(e.code(), Code::InvalidArgument);
}

/// Every RPC × every role: `true` = allowed (the call may still fail on game rules, but
/// never with UNAUTHENTICATED / PERMISSION_DENIED).
#[tokio::test]
async fn role_matrix() {
    let tokens = vec![
        TokenConfig {
            token: "arb".into(),
            name: None,
            role: Role::Arbiter {
                event: Some("Open".into()),
            },
        },
        TokenConfig {
            token: "cup".into(),
            name: None,
            role: Role::Arbiter {
                event: Some("Cup".into()),
            },
        },
        TokenConfig {
            token: "brd".into(),
            name: None,
            role: Role::Board {
                event: "Open".into(),
                place: Place::Game("g1".into()),
            },
        },
        TokenConfig {
            token: "wht".into(),
            name: None,
            role: Role::Player {
                event: "Open".into(),
                place: Place::Game("g1".into()),
                side: Color::White,
            },
        },
        TokenConfig {
            token: "blk".into(),
            name: None,
            role: Role::Player {
                event: "Open".into(),
                place: Place::Game("g1".into()),
                side: Color::Black,
            },
        },
        TokenConfig {
            token: "vw".into(),
            name: None,
            role: Role::Viewer,
        },
    ];
    let s = start(tokens).await;
    let mut g = GameServiceClient::new(s.channel.clone());
    g.create_game(req(Some("arb"), create("", "10m", "Open", "g1")))
        .await
        .expect("arbiter creates");
    g.start_game(req(
        Some("arb"),
        pb::StartGameRequest {
            game_id: "g1".into(),
            expected_seq: 0,
        },
    ))
    .await
    .expect("arbiter starts");
    let roles = ["arb", "cup", "brd", "wht", "blk", "vw", "none"];
    type Rpc = &'static str;
    let rpcs: [Rpc; 11] = [
        "LegalMoves",
        "GetGame",
        "ListGames",
        "CreateGame",
        "StartGame",
        "SubmitMove(white)",
        "SubmitMove(black)",
        "OfferDraw(black)",
        "PauseClocks",
        "IssueWarning",
        "WatchGame",
    ];
    let expected = |role: &str, rpc: &str| -> bool {
        match (role, rpc) {
            // Broadcasts are public (the default `[web] public_broadcast`).
            ("none", "WatchGame") => true,
            ("none", _) => false,
            (_, "LegalMoves" | "GetGame" | "ListGames" | "WatchGame") => true,
            ("arb", _) => true,
            ("wht", "SubmitMove(white)") => true,
            ("blk", "SubmitMove(black)" | "OfferDraw(black)") => true,
            _ => false,
        }
    };
    let mut table = String::from("role\\rpc");
    for r in &rpcs {
        table.push_str(&format!(" | {r}"));
    }
    for role in roles {
        let token = (role != "none").then_some(role);
        table.push_str(&format!("\n{role}"));
        for rpc in rpcs {
            let mut g = GameServiceClient::new(s.channel.clone());
            let mut a = ArbiterServiceClient::new(s.channel.clone());
            let result: Result<(), tonic::Status> = match rpc {
                "LegalMoves" => RulesServiceClient::new(s.channel.clone())
                    .legal_moves(req(
                        token,
                        pb::LegalMovesRequest {
                            variant: 1,
                            fen: String::new(),
                        },
                    ))
                    .await
                    .map(|_| ()),
                "GetGame" => g
                    .get_game(req(
                        token,
                        pb::GetGameRequest {
                            game_id: "g1".into(),
                        },
                    ))
                    .await
                    .map(|_| ()),
                "ListGames" => g
                    .list_games(req(token, pb::ListGamesRequest::default()))
                    .await
                    .map(|_| ()),
                "CreateGame" => g
                    .create_game(req(token, create("", "", "Open", &format!("x-{role}"))))
                    .await
                    .map(|_| ()),
                "StartGame" => g
                    .start_game(req(
                        token,
                        pb::StartGameRequest {
                            game_id: "g1".into(),
                            expected_seq: 0,
                        },
                    ))
                    .await
                    .map(|_| ()),
                "SubmitMove(white)" => g
                    .submit_move(req(
                        token,
                        pb::SubmitMoveRequest {
                            game_id: "g1".into(),
                            r#move: "z9".into(),
                            expected_seq: 0,
                            side: side(Color::White),
                            offer_draw: false,
                        },
                    ))
                    .await
                    .map(|_| ()),
                "SubmitMove(black)" => g
                    .submit_move(req(
                        token,
                        pb::SubmitMoveRequest {
                            game_id: "g1".into(),
                            r#move: "z9".into(),
                            expected_seq: 0,
                            side: side(Color::Black),
                            offer_draw: false,
                        },
                    ))
                    .await
                    .map(|_| ()),
                "OfferDraw(black)" => g
                    .offer_draw(req(
                        token,
                        pb::OfferDrawRequest {
                            game_id: "g1".into(),
                            side: side(Color::Black),
                            expected_seq: 1,
                        },
                    ))
                    .await
                    .map(|_| ()),
                "PauseClocks" => a
                    .pause_clocks(req(
                        token,
                        pb::PauseClocksRequest {
                            game_id: "g1".into(),
                            ..Default::default()
                        },
                    ))
                    .await
                    .map(|_| ()),
                "IssueWarning" => a
                    .issue_warning(req(
                        token,
                        pb::IssueWarningRequest {
                            game_id: "g1".into(),
                            side: side(Color::White),
                            reason: String::new(),
                            rule: String::new(),
                        },
                    ))
                    .await
                    .map(|_| ()),
                "WatchGame" => BroadcastServiceClient::new(s.channel.clone())
                    .watch_game(req(
                        token,
                        pb::WatchGameRequest {
                            game_id: "g1".into(),
                            from_seq: 0,
                        },
                    ))
                    .await
                    .map(|_| ()),
                _ => unreachable!(),
            };
            let allowed = !matches!(
                result.as_ref().map_err(|e| e.code()),
                Err(Code::Unauthenticated | Code::PermissionDenied)
            );
            if role == "none" && rpc != "WatchGame" {
                assert_eq!(
                    result.as_ref().map_err(|e| e.code()).err(),
                    Some(Code::Unauthenticated),
                    "{rpc}"
                );
            }
            assert_eq!(
                allowed,
                expected(role, rpc),
                "role {role}, {rpc}: {result:?}"
            );
            table.push_str(if allowed { " | allowed" } else { " | denied" });
        }
    }
    eprintln!("{table}");
}

#[tokio::test]
async fn watch_from_zero_and_from_the_middle_while_moves_arrive() {
    let s = start(vec![]).await;
    let id = new_game(&s, "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7").await;
    let cycle = [
        (Color::White, "c1-d2"),
        (Color::Black, "h8-g7"),
        (Color::White, "d2-c1"),
        (Color::Black, "g7-h8"),
    ];
    // Three moves first, so "the middle" exists.
    for (c, m) in &cycle[..3] {
        play(&s, &id, *c, m).await.expect("legal");
    }
    let mut b = BroadcastServiceClient::new(s.channel.clone());
    let from_zero = b
        .watch_game(pb::WatchGameRequest {
            game_id: id.clone(),
            from_seq: 0,
        })
        .await
        .expect("watch")
        .into_inner();
    let from_five = b
        .watch_game(pb::WatchGameRequest {
            game_id: id.clone(),
            from_seq: 5,
        })
        .await
        .expect("watch")
        .into_inner();
    // Keep moving concurrently: 20 more moves (the repetition is only claimable).
    let mover = {
        let s_channel = s.channel.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let mut games = GameServiceClient::new(s_channel);
            for i in 3..23 {
                let (c, m) = cycle[i % 4];
                games
                    .submit_move(pb::SubmitMoveRequest {
                        game_id: id.clone(),
                        r#move: m.into(),
                        expected_seq: 0,
                        side: side(c),
                        offer_draw: false,
                    })
                    .await
                    .expect("legal");
            }
        })
    };
    mover.await.expect("mover");
    let last = GameServiceClient::new(s.channel.clone())
        .get_game(pb::GetGameRequest { game_id: id })
        .await
        .expect("get")
        .into_inner()
        .last_seq;
    for (stream, from) in [(from_zero, 0u64), (from_five, 5)] {
        let seqs: Vec<u64> = stream
            .take((last - from) as usize)
            .map(|e| e.expect("event").seq)
            .collect()
            .await;
        let want: Vec<u64> = (from + 1..=last).collect();
        assert_eq!(seqs, want, "from {from}: no gap, no duplicate");
    }
}

/// Named arbiters (issue 42): a token's `name` is recorded with each ruling made with it,
/// in the event's actor, and the PDN comments name the arbiter by it; a token without one
/// reads as before (`arbiter:<event>`).
#[tokio::test]
async fn rulings_carry_the_arbiters_label() {
    let tokens = vec![
        TokenConfig {
            token: "chief".into(),
            name: Some("Chief arbiter I. Petrov".into()),
            role: Role::Arbiter {
                event: Some("Open".into()),
            },
        },
        TokenConfig {
            token: "deputy".into(),
            name: None,
            role: Role::Arbiter {
                event: Some("Open".into()),
            },
        },
    ];
    let s = start(tokens).await;
    let mut g = GameServiceClient::new(s.channel.clone());
    let mut a = ArbiterServiceClient::new(s.channel.clone());
    g.create_game(req(Some("deputy"), create("", "10m", "Open", "n1")))
        .await
        .expect("create");
    let started = g
        .start_game(req(
            Some("chief"),
            pb::StartGameRequest {
                game_id: "n1".into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start")
        .into_inner();
    let warned = a
        .issue_warning(req(
            Some("chief"),
            pb::IssueWarningRequest {
                game_id: "n1".into(),
                side: side(Color::Black),
                reason: "talking".into(),
                rule: "RU 1.10.2".into(),
            },
        ))
        .await
        .expect("warn")
        .into_inner();
    let paused = a
        .pause_clocks(req(
            Some("deputy"),
            pb::PauseClocksRequest {
                game_id: "n1".into(),
                reason: "lights".into(),
                rule: String::new(),
            },
        ))
        .await
        .expect("pause")
        .into_inner();
    let actor = |events: &[pb::GameEvent]| {
        events
            .last()
            .and_then(|e| e.actor.clone())
            .expect("an actor")
    };
    let chief = actor(&warned.events);
    assert_eq!(chief.kind, pb::ActorKind::Arbiter as i32);
    assert_eq!(chief.id, "arbiter:Open");
    assert_eq!(chief.name, "Chief arbiter I. Petrov");
    assert_eq!(actor(&started.events).name, "Chief arbiter I. Petrov");
    let deputy = actor(&paused.events);
    assert_eq!(
        (deputy.id.as_str(), deputy.name.as_str()),
        ("arbiter:Open", "")
    );
    // Read back from the log: the watch from the start and the PDN.
    let mut watch = BroadcastServiceClient::new(s.channel.clone())
        .watch_game(req(
            Some("chief"),
            pb::WatchGameRequest {
                game_id: "n1".into(),
                from_seq: 0,
            },
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut names = Vec::new();
    while let Ok(Some(Ok(e))) = tokio::time::timeout(Duration::from_secs(2), watch.next()).await {
        names.push(e.actor.map(|a| a.name).unwrap_or_default());
        if names.len() == 4 {
            break;
        }
    }
    assert_eq!(
        names,
        ["", "Chief arbiter I. Petrov", "Chief arbiter I. Petrov", ""]
    );
    let pdn = BroadcastServiceClient::new(s.channel.clone())
        .export_pdn(req(
            Some("chief"),
            pb::ExportPdnRequest {
                game_id: "n1".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("pdn")
        .into_inner()
        .pdn;
    assert!(
        pdn.contains("Warning by Chief arbiter I. Petrov to Black: talking"),
        "{pdn}"
    );
    assert!(!pdn.contains("by arbiter Chief"), "{pdn}");
}

/// Issue 42 item 3: a board or player token scoped to a board number of an event
/// (`board = 2`) serves every round: the board binds with no game id to the game in play
/// on its board, the player acts for its side in each round's game on that board, and
/// neither reaches another board's game.
#[tokio::test]
async fn tokens_scoped_to_a_board_number_serve_every_round() {
    let token = |token: &str, role| TokenConfig {
        token: token.into(),
        name: None,
        role,
    };
    let s = start(vec![
        token(
            "arb",
            Role::Arbiter {
                event: Some("Open".into()),
            },
        ),
        token(
            "table2",
            Role::Board {
                event: "Open".into(),
                place: Place::Board(2),
            },
        ),
        token(
            "tablet2b",
            Role::Player {
                event: "Open".into(),
                place: Place::Board(2),
                side: Color::Black,
            },
        ),
    ])
    .await;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let mut feed =
        draughts_arbiter::api::pb::board_service_client::BoardServiceClient::new(s.channel.clone())
            .connect(req(
                Some("table2"),
                tokio_stream::wrappers::ReceiverStream::new(rx),
            ))
            .await
            .expect("board stream")
            .into_inner();
    let mut message_id = 0;
    // Binds with `game_id` (empty: the token's board); the bound game's id, or the
    // refusal's code and message.
    let mut bind = async |game_id: &str| -> Result<String, (String, String)> {
        use pb::board_feedback::Kind as Fb;
        message_id += 1;
        tx.send(pb::BoardMessage {
            message_id,
            board_time_ms: 0,
            kind: Some(pb::board_message::Kind::Bind(pb::BindBoard {
                game_id: game_id.into(),
                board_id: "dgt-t2".into(),
                resume_from_seq: 0,
            })),
        })
        .await
        .expect("send");
        loop {
            let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
                .await
                .expect("an answer within 5 s")
                .expect("stream open")
                .expect("feedback");
            match f.kind {
                Some(Fb::Bound(g)) if f.message_id == message_id => return Ok(g.id),
                Some(Fb::Rejected(r)) if f.message_id == message_id => {
                    return Err((r.code, r.message));
                }
                _ => continue,
            }
        }
    };
    let mut games = GameServiceClient::new(s.channel.clone());
    let mut paired = async |round: &str, board: u32| {
        let id = format!("open-r{round}-b{board}");
        let mut c = create("", "10m", "Open", &id);
        c.round = round.into();
        c.board = board;
        games
            .create_game(req(Some("arb"), c))
            .await
            .expect("arbiter pairs");
        games
            .start_game(req(
                Some("arb"),
                pb::StartGameRequest {
                    game_id: id.clone(),
                    expected_seq: 0,
                },
            ))
            .await
            .expect("arbiter starts");
        id
    };

    // Before the round is paired there is nothing to bind to.
    let (code, message) = bind("").await.expect_err("no game yet");
    assert_eq!(code, "NOT_FOUND");
    assert!(
        message.contains("no game on board 2 of event 'Open' yet"),
        "{message}"
    );
    let r1b1 = paired("1", 1).await;
    let r1b2 = paired("1", 2).await;
    assert_eq!(bind("").await, Ok(r1b2.clone()), "the game on board 2");
    // Another board's game, named, is refused.
    let (code, message) = bind(&r1b1).await.expect_err("board 1's game");
    assert_eq!(code, "PERMISSION_DENIED");
    assert!(
        message.contains("the board of board 2 of event 'Open' may not drive the board of game open-r1-b1 (board 1 of event 'Open')"),
        "{message}"
    );

    // The black player's tablet at table 2 plays for black in board 2's game only.
    let mut g = GameServiceClient::new(s.channel.clone());
    let submit = |game: &str, mv: &str, token: &str| {
        req(
            Some(token),
            pb::SubmitMoveRequest {
                game_id: game.into(),
                r#move: mv.into(),
                side: 0,
                ..Default::default()
            },
        )
    };
    let mut white = submit(&r1b2, "c3-d4", "arb");
    white.get_mut().side = side(Color::White);
    g.submit_move(white)
        .await
        .expect("white's move, by the arbiter");
    g.submit_move(submit(&r1b2, "f6-g5", "tablet2b"))
        .await
        .expect("black's tablet moves on board 2");
    let mut other = submit(&r1b1, "c3-d4", "arb");
    other.get_mut().side = side(Color::White);
    g.submit_move(other).await.expect("white on board 1");
    let refused = g
        .submit_move(submit(&r1b1, "f6-g5", "tablet2b"))
        .await
        .expect_err("not its board");
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(
        refused.message().contains(
            "the black player of board 2 of event 'Open' may not act for black in game open-r1-b1"
        ),
        "{}",
        refused.message()
    );
    g.resign(req(
        Some("tablet2b"),
        pb::ResignRequest {
            game_id: r1b2.clone(),
            side: 0,
            expected_seq: 0,
        },
    ))
    .await
    .expect("black resigns on board 2");

    // The round is over on board 2: a board back binds to the finished game and hears
    // its end; once round 2 is paired it binds to round 2's game.
    assert_eq!(bind("").await, Ok(r1b2.clone()), "the last game on board 2");
    let r2b2 = paired("2", 2).await;
    assert_eq!(
        bind("").await,
        Ok(r2b2.clone()),
        "round 2's game on board 2"
    );
    let mut white = submit(&r2b2, "c3-d4", "arb");
    white.get_mut().side = side(Color::White);
    g.submit_move(white).await.expect("white, round 2");
    g.submit_move(submit(&r2b2, "f6-g5", "tablet2b"))
        .await
        .expect("the same tablet plays round 2");

    // Two unfinished games on board 2 (round 2's still in play when round 3 is paired):
    // the bind must name one.
    let r3b2 = paired("3", 2).await;
    let (code, message) = bind("").await.expect_err("two games in play");
    assert_eq!(code, "FAILED_PRECONDITION");
    assert!(
        message.contains(&format!(
            "board 2 of event 'Open' has 2 unfinished games ({r2b2}, {r3b2})"
        )),
        "{message}"
    );
    assert_eq!(bind(&r3b2).await, Ok(r3b2.clone()), "named, it binds");
}
