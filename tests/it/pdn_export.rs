//! ExportPdn, exactly: scripted games through the in-process API (the hub for board
//! input), each exported and replayed with the library function behind
//! `draughts-arbiter replay`, and compared with the expected text where practical: a
//! timed game with lidraughts' clock comments, the `TimeControl` tag read back to the
//! same control, warnings, offers, a claim and its ruling, clock adjustments, an
//! irregular move ruled to stand (a second record from the position it left), a set
//! position, a result by the arbiter's decision, an unfinished game with unknown tags,
//! and a few moves of every variant.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::Api;
use draughts_arbiter::api::auth::Tokens;
use draughts_arbiter::api::frame::BroadcastService;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_server::ArbiterService;
use draughts_arbiter::api::pb::game_service_server::GameService;
use draughts_arbiter::api::pb::rules_service_server::RulesService;
use draughts_arbiter::clock::{PdnTimeControl, TimeControl};
use draughts_arbiter::game::{Actor, BoardInput, Command};
use draughts_arbiter::hub::Hub;
use draughts_arbiter::notation::pdn::read_games;
use draughts_arbiter::rules::Variant;
use draughts_arbiter::store::MemoryStore;
use tokio::time::advance;
use tonic::Request;

use common::pdn::replays;

struct T {
    api: Api,
    hub: Arc<Hub>,
}

fn t() -> T {
    let hub = Hub::new(Arc::new(MemoryStore::new()), false);
    T {
        api: Api::new(hub.clone(), Arc::new(Tokens::new(&[]))),
        hub,
    }
}

fn req<M>(m: M) -> Request<M> {
    Request::new(m)
}

fn player(name: &str) -> Option<pb::Player> {
    Some(pb::Player {
        name: name.into(),
        ..Default::default()
    })
}

/// The side to move's enum for requests.
fn side(white: bool) -> i32 {
    if white {
        pb::Side::White as i32
    } else {
        pb::Side::Black as i32
    }
}

/// The export with its `Date` value replaced by `DATE` (the wall clock is not paused).
fn without_date(pdn: &str) -> String {
    pdn.lines()
        .map(|l| {
            if l.starts_with("[Date \"") {
                "[Date \"DATE\"]".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

impl T {
    async fn create(&self, r: pb::CreateGameRequest) -> String {
        self.api
            .create_game(req(r))
            .await
            .expect("create")
            .into_inner()
            .id
    }

    async fn start(&self, id: &str) {
        self.api
            .start_game(req(pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            }))
            .await
            .expect("start");
    }

    async fn game(&self, id: &str) -> pb::Game {
        self.api
            .get_game(req(pb::GetGameRequest { game_id: id.into() }))
            .await
            .expect("get")
            .into_inner()
    }

    async fn mv(&self, id: &str, white: bool, m: &str) {
        self.api
            .submit_move(req(pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: m.into(),
                expected_seq: 0,
                side: side(white),
                offer_draw: false,
            }))
            .await
            .unwrap_or_else(|e| panic!("{m}: {e}"));
    }

    async fn board(&self, id: &str, input: BoardInput) {
        self.hub
            .game(id)
            .await
            .expect("game")
            .command(
                Actor::Board("b1".into()),
                Command::Board(input.clone()),
                None,
                |_, _| (),
            )
            .await
            .unwrap_or_else(|e| panic!("{input:?}: {e}"));
    }

    /// The game's export, checked to replay to the game's official position.
    async fn export(&self, id: &str, variant: Variant) -> String {
        let pdn = self
            .api
            .export_pdn(req(pb::ExportPdnRequest {
                game_id: id.into(),
                ..Default::default()
            }))
            .await
            .expect("export")
            .into_inner()
            .pdn;
        let end = replays(&pdn, variant);
        assert_eq!(
            end,
            self.game(id).await.fen,
            "the export ends elsewhere:\n{pdn}"
        );
        pdn
    }
}

fn russian(id: &str, tc: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        game_id: id.into(),
        variant: pb::Variant::Russian as i32,
        time_control: tc.into(),
        white: player("Ann"),
        black: player("Bob"),
        event: "Open".into(),
        round: "3".into(),
        board: 2,
        ..Default::default()
    }
}

/// Clocks after each move in lidraughts' form (capitals: the side to move next), the
/// PDN TimeControl tag, and the seven-tag roster.
#[tokio::test(start_paused = true)]
async fn a_timed_game_has_a_time_control_tag_and_a_clock_comment_per_move() {
    let t = t();
    let id = t.create(russian("g", "10m+5s")).await;
    t.start(&id).await;
    for (secs, white, m) in [
        (3, true, "c3-d4"),
        (2, false, "b6-a5"),
        (61, true, "g3-f4"),
        (0, false, "a5-b4"),
        (1, true, "a3:c5"),
    ] {
        advance(Duration::from_millis(secs * 1000 + 400)).await;
        t.mv(&id, white, m).await;
    }
    let pdn = t.export(&id, Variant::Russian).await;
    assert_eq!(
        without_date(&pdn),
        "[Event \"Open\"]\n[Site \"?\"]\n[Date \"DATE\"]\n[Round \"3\"]\n[White \"Ann\"]\n\
         [Black \"Bob\"]\n[Result \"*\"]\n[Board \"2\"]\n[GameType \"25\"]\n\
         [TimeControl \"600+5\"]\n\n\
         1. c3-d4 {[%clock w0:10:02 B0:10:00]} b6-a5 {[%clock W0:10:02 b0:10:03]}\n\
         2. g3-f4 {[%clock w0:09:05 B0:10:03]} a5-b4 {[%clock W0:09:05 b0:10:07]}\n\
         3. a3:c5 {[%clock w0:09:09 B0:10:07]} *\n",
        "{pdn}"
    );
    // Our own reader takes the tag back to the game's control.
    let games = read_games(&pdn);
    let tag = games[0]
        .as_ref()
        .expect("reads")
        .tag("TimeControl")
        .expect("tag");
    let expected: TimeControl = "10m+5s".parse().expect("control");
    assert_eq!(
        tag.parse::<PdnTimeControl>(),
        Ok(PdnTimeControl::Timed(expected.clone()))
    );
    assert_eq!(TimeControl::from_pdn(tag), Ok(expected));
}

/// The TimeControl tag of single- and multi-period controls with increments reads back
/// (`TimeControl::from_pdn`) to the control the game was created with; an untimed game
/// says `-`, a control the tag cannot express `?` with the control in a comment.
#[tokio::test]
async fn the_time_control_tag_reads_back_to_the_same_control() {
    let t = t();
    for (i, (given, tag)) in [
        ("5m", "300"),
        ("3m+2s", "180+2"),
        ("2h/40,1h", "40/7200:3600"),
        ("2h/50,1h/25,15m+30s", "50/7200:25/3600:900+30"),
        ("90m/40+30s,30m+30s", "40/5400+30:1800+30"),
        ("1h/20+10s", "20/3600+10"),
    ]
    .into_iter()
    .enumerate()
    {
        let id = t.create(russian(&format!("tc{i}"), given)).await;
        let pdn = t.export(&id, Variant::Russian).await;
        assert!(
            pdn.contains(&format!("[TimeControl \"{tag}\"]")),
            "{given}:\n{pdn}"
        );
        let control: TimeControl = given.parse().expect("control");
        assert_eq!(TimeControl::from_pdn(tag), Ok(control), "{given}");
    }
    let id = t.create(russian("untimed", "")).await;
    let pdn = t.export(&id, Variant::Russian).await;
    assert!(pdn.contains("[TimeControl \"-\"]"), "{pdn}");
    let id = t.create(russian("delay", "90m d30s")).await;
    let pdn = t.export(&id, Variant::Russian).await;
    assert!(pdn.contains("[TimeControl \"?\"]"), "{pdn}");
    assert!(
        pdn.contains("{Time control 90m d30s (pdn tag cannot express a delay;"),
        "{pdn}"
    );
}

/// An unfinished game with nothing known about it: `?` tags, result `*`.
#[tokio::test]
async fn an_unfinished_game_has_unknown_tags_and_result_star() {
    let t = t();
    let id = t
        .create(pb::CreateGameRequest {
            game_id: "u".into(),
            variant: pb::Variant::International as i32,
            ..Default::default()
        })
        .await;
    let pdn = t.export(&id, Variant::International).await;
    assert_eq!(
        without_date(&pdn),
        "[Event \"?\"]\n[Site \"?\"]\n[Date \"DATE\"]\n[Round \"?\"]\n[White \"?\"]\n\
         [Black \"?\"]\n[Result \"*\"]\n[GameType \"20\"]\n[TimeControl \"-\"]\n\n*\n"
    );
    t.start(&id).await;
    t.mv(&id, true, "32-28").await;
    t.mv(&id, false, "19-23").await;
    t.mv(&id, true, "28x19").await;
    let pdn = t.export(&id, Variant::International).await;
    assert!(pdn.ends_with("\n1. 32-28 19-23 2. 28x19 *\n"), "{pdn}");
}

/// Warnings, a draw offer and its answer, clock pauses and adjustments, a claim the
/// arbiter rules on, and the result, each a comment where it happened.
#[tokio::test(start_paused = true)]
async fn rulings_are_comments_where_they_happened() {
    let t = t();
    let mut r = russian("r", "10m");
    r.start_fen = "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7".into();
    r.settings = Some(pb::GameSettings {
        claims_need_arbiter: true,
        ..Default::default()
    });
    let id = t.create(r).await;
    t.start(&id).await;
    t.api
        .issue_warning(req(pb::IssueWarningRequest {
            game_id: id.clone(),
            side: side(false),
            reason: "talking to the opponent".into(),
            rule: String::new(),
        }))
        .await
        .expect("warn");
    for (white, m) in [
        (true, "c1-d2"),
        (false, "h8-g7"),
        (true, "d2-c1"),
        (false, "g7-h8"),
    ] {
        advance(Duration::from_secs(1)).await;
        t.mv(&id, white, m).await;
    }
    t.api
        .pause_clocks(req(pb::PauseClocksRequest {
            game_id: id.clone(),
            reason: "a player feels unwell".into(),
            rule: String::new(),
        }))
        .await
        .expect("pause");
    t.api
        .adjust_clock(req(pb::AdjustClockRequest {
            game_id: id.clone(),
            side: side(false),
            change: Some(pb::adjust_clock_request::Change::AddMs(60_000)),
            reason: String::new(),
            rule: String::new(),
        }))
        .await
        .expect("adjust");
    t.api
        .resume_clocks(req(pb::ResumeClocksRequest {
            game_id: id.clone(),
            reason: String::new(),
            rule: String::new(),
        }))
        .await
        .expect("resume");
    t.api
        .offer_draw(req(pb::OfferDrawRequest {
            game_id: id.clone(),
            side: side(true),
            expected_seq: 0,
        }))
        .await
        .expect("offer");
    t.api
        .respond_to_draw_offer(req(pb::RespondToDrawOfferRequest {
            game_id: id.clone(),
            side: side(false),
            response: pb::DrawResponse::Decline as i32,
            expected_seq: 0,
        }))
        .await
        .expect("decline");
    for (white, m) in [
        (true, "c1-d2"),
        (false, "h8-g7"),
        (true, "d2-c1"),
        (false, "g7-h8"),
    ] {
        advance(Duration::from_secs(1)).await;
        t.mv(&id, white, m).await;
    }
    t.api
        .claim_draw(req(pb::ClaimDrawRequest {
            game_id: id.clone(),
            side: side(true),
            kind: pb::DrawClaimKind::Repetition as i32,
            ..Default::default()
        }))
        .await
        .expect("claim");
    let claim_seq = t
        .game(&id)
        .await
        .pending_claim
        .map(|c| c.seq)
        .expect("a pending claim");
    t.api
        .rule_on_claim(req(pb::RuleOnClaimRequest {
            game_id: id.clone(),
            claim_seq,
            ruling: pb::ClaimRuling::Correct as i32,
            reason: String::new(),
            rule: String::new(),
        }))
        .await
        .expect("rule");
    let pdn = t.export(&id, Variant::Russian).await;
    let records = read_games(&pdn);
    assert_eq!(records.len(), 1, "{pdn}");
    let g = records[0].as_ref().expect("reads");
    assert_eq!(g.tag("Result"), Some("1/2-1/2"));
    assert_eq!(g.tag("FEN"), Some("W:W23,24,27,28,K30:BK4,6,9,10"));
    assert!(
        g.game_comment
            .as_deref()
            .is_some_and(|c| c.starts_with("Warning by the arbiter to Black")
                && c.contains(" to Black: talking to the opponent (warning 1 of Black)")),
        "{pdn}"
    );
    let after_fourth: Vec<&str> = g.moves[3].comments.iter().map(String::as_str).collect();
    assert_eq!(after_fourth.len(), 6, "{pdn}");
    assert!(
        after_fourth[0].starts_with("[%clock W0:09:58 b0:09:58]"),
        "{pdn}"
    );
    assert_eq!(
        after_fourth[1],
        "Clocks paused by the arbiter: a player feels unwell"
    );
    assert_eq!(
        after_fourth[2],
        "0:01:00 added to Black's clock by the arbiter"
    );
    assert_eq!(after_fourth[3], "Clocks resumed by the arbiter");
    assert!(after_fourth[4].starts_with("White offers a draw"), "{pdn}");
    assert!(
        after_fourth[5].starts_with("Black declines the draw offer"),
        "{pdn}"
    );
    assert_eq!(g.moves[4].comments[0], "[%clock w0:09:57 B0:10:58]");
    let last: Vec<&str> = g.moves[7].comments.iter().map(String::as_str).collect();
    assert_eq!(last.len(), 4, "{pdn}");
    assert_eq!(
        last[1],
        "White claims a draw by threefold repetition; the judge finds the claim correct (RU 1.9.2)"
    );
    assert!(
        last[2].starts_with("Ruling by the arbiter: White's draw claim upheld"),
        "{pdn}"
    );
    assert!(
        last[3].starts_with("Result by the arbiter: draw, threefold repetition"),
        "{pdn}"
    );
    assert!(pdn.ends_with(" 1/2-1/2\n"), "{pdn}");
}

/// An irregular move the arbiter lets stand (FMJD 5.4): the record of the moves so
/// far ends with the irregularity and the ruling, and a second record with the same
/// tags starts from the position the game went on from; both replay.
#[tokio::test]
async fn an_irregular_move_that_stands_opens_a_record_from_its_position() {
    let t = t();
    let id = t.create(russian("s", "")).await;
    t.start(&id).await;
    t.mv(&id, true, "c3-d4").await;
    t.mv(&id, false, "f6-g5").await;
    // White moves a3 to a5: not a legal move.
    t.board(&id, BoardInput::Lift(21)).await;
    t.board(&id, BoardInput::Release(13)).await;
    let game = t.game(&id).await;
    let irregularity_seq = game.pending_irregularities[0].seq;
    t.api
        .rule_on_irregularity(req(pb::RuleOnIrregularityRequest {
            game_id: id.clone(),
            irregularity_seq,
            ruling: pb::IrregularityRuling::Stands as i32,
            reason: String::new(),
            rule: String::new(),
        }))
        .await
        .expect("rule");
    t.mv(&id, false, "g5-h4").await;
    t.mv(&id, true, "g3-f4").await;
    let pdn = t.export(&id, Variant::Russian).await;
    let records = read_games(&pdn);
    assert_eq!(records.len(), 2, "{pdn}");
    let first = records[0].as_ref().expect("reads");
    let second = records[1].as_ref().expect("reads");
    assert_eq!(first.result_text.as_deref(), Some("*"));
    assert_eq!(first.moves.len(), 2);
    let comments = &first.moves[1].comments;
    assert!(
        comments[0].starts_with("Irregularity by White: illegal move"),
        "{pdn}"
    );
    let stands = t.game(&id).await;
    assert!(
        comments[1].starts_with(
            "Ruling by the arbiter: the irregular move stands (FMJD 5.4): \
             the game goes on in the next record, from B:"
        ),
        "{pdn}"
    );
    assert_eq!(second.tag("White"), Some("Ann"));
    assert_eq!(second.tag("SetUp"), Some("1"));
    let start = second.tag("FEN").expect("FEN");
    assert!(comments[1].ends_with(start), "{pdn}");
    assert!(
        second
            .game_comment
            .as_deref()
            .is_some_and(|c| c.starts_with("Continued from the previous record: Ruling")),
        "{pdn}"
    );
    // Black's second move after White's irregular second move: `2...`.
    assert_eq!(second.moves[0].number, Some(2));
    assert!(second.moves[0].ellipsis);
    assert!(pdn.ends_with(" 2... g5-h4 3. g3-f4 *\n"), "{pdn}");
    assert_eq!(stands.move_count, 4);
}

/// A position the arbiter sets up mid-game also opens a record of its own.
#[tokio::test]
async fn a_position_set_by_the_arbiter_opens_a_record() {
    let t = t();
    let id = t.create(russian("p", "")).await;
    t.start(&id).await;
    t.mv(&id, true, "c3-d4").await;
    t.api
        .set_position(req(pb::SetPositionRequest {
            game_id: id.clone(),
            fen: "B:WKc1,e3:BKh8,b6".into(),
            reason: String::new(),
            rule: String::new(),
        }))
        .await
        .expect("set");
    t.mv(&id, false, "h8-g7").await;
    let pdn = t.export(&id, Variant::Russian).await;
    let records = read_games(&pdn);
    assert_eq!(records.len(), 2, "{pdn}");
    assert!(pdn.contains("[FEN \"B:W23,K30:BK4,9\"]"), "{pdn}");
    assert!(pdn.ends_with(" 1... h8-g7\n*\n"), "{pdn}");
    let first = records[0].as_ref().expect("reads");
    assert!(
        first.moves[0].comments[0].starts_with(
            "Position set up by the arbiter: the game goes on in the next record, from B:"
        ),
        "{pdn}"
    );
}

/// A result the arbiter declares: the marker, the Result tag, the explanation and the
/// rule cited.
#[tokio::test]
async fn a_result_by_arbiter_decision() {
    let t = t();
    let id = t.create(russian("d", "")).await;
    t.start(&id).await;
    t.mv(&id, true, "c3-d4").await;
    t.api
        .declare_result(req(pb::DeclareResultRequest {
            game_id: id.clone(),
            result: pb::GameResult::WhiteWins as i32,
            reason: pb::ResultReason::ArbiterDecision as i32,
            rule: "RU 1.9.4".into(),
            explanation: "Black left the playing hall".into(),
        }))
        .await
        .expect("declare");
    let pdn = t.export(&id, Variant::Russian).await;
    assert!(pdn.contains("[Result \"1-0\"]"), "{pdn}");
    assert!(
        pdn.ends_with(
            "1. c3-d4 {Result by the arbiter: White wins, arbiter's decision: Black left the\n\
             playing hall (RU 1.9.4)} 1-0\n"
        ),
        "{pdn}"
    );
}

/// Every variant, a few moves each: the export replays to the game's position, with
/// the variant's numbering (English and pool: Black moves first and is numbered `1.`).
#[tokio::test]
async fn every_variant_exports_a_record_that_replays() {
    let t = t();
    for v in Variant::ALL {
        let pv = pb::Variant::from_str_name(&format!("VARIANT_{}", v.name().to_ascii_uppercase()))
            .expect("pb variant");
        let id = t
            .create(pb::CreateGameRequest {
                game_id: format!("v-{}", v.name()),
                variant: pv as i32,
                time_control: "5m+3s".into(),
                event: "Variants".into(),
                ..Default::default()
            })
            .await;
        t.start(&id).await;
        let mut notations = Vec::new();
        for _ in 0..6 {
            let g = t.game(&id).await;
            if g.result != pb::GameResult::Unspecified as i32 {
                break;
            }
            let moves = t
                .api
                .legal_moves(req(pb::LegalMovesRequest {
                    variant: pv as i32,
                    fen: g.fen.clone(),
                }))
                .await
                .expect("legal")
                .into_inner()
                .moves;
            let m = moves.last().expect("a move").notation.clone();
            t.mv(&id, g.side_to_move == pb::Side::White as i32, &m)
                .await;
            notations.push(m);
        }
        let pdn = t.export(&id, v).await;
        let records = read_games(&pdn);
        let g = records[0].as_ref().expect("reads");
        let written: Vec<&str> = g.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(written, notations, "{v}:\n{pdn}");
        assert_eq!(g.moves[0].number, Some(1), "{v}:\n{pdn}");
        assert!(
            !g.moves[0].ellipsis,
            "{v}: the first player's move is `1.`:\n{pdn}"
        );
        assert_eq!(g.moves[2].number, Some(2), "{v}:\n{pdn}");
        assert_eq!(g.tag("Event"), Some("Variants"));
    }
}

/// Every game of an event (or a round) in one export, in board order.
#[tokio::test]
async fn a_round_exports_every_game() {
    let t = t();
    for (id, board) in [("r1b2", 2), ("r1b1", 1)] {
        let mut r = russian(id, "");
        r.board = board;
        r.round = "1".into();
        t.create(r).await;
    }
    let pdn = t
        .api
        .export_pdn(req(pb::ExportPdnRequest {
            event: "Open".into(),
            round: "1".into(),
            ..Default::default()
        }))
        .await
        .expect("export")
        .into_inner()
        .pdn;
    replays(&pdn, Variant::Russian);
    let boards: Vec<String> = read_games(&pdn)
        .iter()
        .map(|g| {
            g.as_ref()
                .expect("reads")
                .tag("Board")
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(boards, ["1", "2"], "{pdn}");
    let none = t
        .api
        .export_pdn(req(pb::ExportPdnRequest {
            event: "Nowhere".into(),
            ..Default::default()
        }))
        .await
        .expect_err("no games");
    assert_eq!(none.code(), tonic::Code::NotFound);
    let neither = t
        .api
        .export_pdn(req(pb::ExportPdnRequest::default()))
        .await
        .expect_err("nothing named");
    assert_eq!(neither.code(), tonic::Code::InvalidArgument);
}

/// A flag that falls with nobody sending anything: the comment and the result.
#[tokio::test(start_paused = true)]
async fn a_flag_fall_is_written_with_the_result() {
    let t = t();
    let id = t.create(russian("f", "1m")).await;
    t.start(&id).await;
    advance(Duration::from_secs(10)).await;
    t.mv(&id, true, "c3-d4").await;
    advance(Duration::from_secs(61)).await;
    tokio::task::yield_now().await;
    let g = t.game(&id).await;
    assert_eq!(g.result, pb::GameResult::WhiteWins as i32);
    let pdn = t.export(&id, Variant::Russian).await;
    assert!(
        pdn.ends_with(
            "1. c3-d4 {[%clock w0:00:50 B0:01:00]} {Black's flag fell} {Result: White wins,\n\
             the flag fell (RU 1.8)} 1-0\n"
        ),
        "{pdn}"
    );
}
