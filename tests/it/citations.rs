//! One citation table (issue 11, item 8): the same illegal move cites the same rule
//! whether it was written (`SubmitMove`) or made on an electronic board (lift, release).

use std::sync::Arc;

use draughts_arbiter::api::Api;
use draughts_arbiter::api::auth::Tokens;
use draughts_arbiter::api::convert::event_pb;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_server::GameService;
use draughts_arbiter::game::{
    Actor, BoardInput, Command, EventKind, GameSettings, IrregularityKind, Now, Session,
};
use draughts_arbiter::hub::{Hub, Pending};
use draughts_arbiter::notation::square::{parse_square, square_number};
use draughts_arbiter::rules::{Color, Variant};
use draughts_arbiter::store::MemoryStore;
use tonic::Request;

/// A started, untimed game from `fen`.
fn game(variant: Variant, fen: &str) -> Session {
    let arbiter = Actor::Arbiter("a".into());
    let (mut s, _) = Session::create(
        GameSettings::new(variant),
        Some(fen),
        arbiter.clone(),
        Now::from_mono(0),
    )
    .expect("created");
    s.handle(&arbiter, Command::Start, Now::from_mono(0))
        .expect("started");
    s
}

fn number(variant: Variant, square: &str) -> u32 {
    square_number(parse_square(square, variant).expect("a square"), variant)
}

/// The rule a written `from`-`to` (with `:`/`x` when `capture`) is refused with.
fn written(variant: Variant, fen: &str, from: &str, to: &str, capture: bool) -> String {
    let mut s = game(variant, fen);
    let sep = if capture { "x" } else { "-" };
    // Turkish is written in algebraic squares only; every variant here reads them.
    let text = format!("{from}{sep}{to}");
    let e = s
        .handle(
            &Actor::Player(Color::White),
            Command::SubmitMove {
                side: Color::White,
                notation: text,
                offer_draw: false,
            },
            Now::from_mono(1_000),
        )
        .expect_err("an illegal move");
    e.rule().expect("the refusal cites a rule").to_string()
}

/// The rule the irregularity of the same move on a board cites (an illegal move, or a
/// capture stopped early).
fn on_board(variant: Variant, fen: &str, from: &str, to: &str) -> String {
    let mut s = game(variant, fen);
    let board = Actor::Board("b1".into());
    let at = Now::from_mono(1_000);
    s.handle(
        &board,
        Command::Board(BoardInput::Lift(number(variant, from))),
        at,
    )
    .expect("lifted");
    let ev = s
        .handle(
            &board,
            Command::Board(BoardInput::Release(number(variant, to))),
            at,
        )
        .expect("released");
    let irregularity = ev
        .iter()
        .find(|e| {
            matches!(
                e.kind,
                EventKind::Irregularity {
                    kind: IrregularityKind::IllegalMove | IrregularityKind::CaptureIncomplete,
                    ..
                }
            )
        })
        .expect("an illegal-move or incomplete-capture irregularity");
    irregularity.rule.clone().expect("it cites a rule")
}

fn same_both_ways(variant: Variant, fen: &str, from: &str, to: &str, capture: bool) -> String {
    let text = written(variant, fen, from, to, capture);
    let board = on_board(variant, fen, from, to);
    assert_eq!(text, board, "{variant} {from}-{to}: written vs board");
    board
}

#[test]
fn ru_1_5_5_an_unfinished_capture_cites_the_same_rule_both_ways() {
    // c3:e5 takes d4 and must go on over f6 to g7.
    let fen = "W:Wc3,g1:Bd4,f6,a7";
    assert_eq!(
        same_both_ways(Variant::Russian, fen, "c3", "e5", true),
        "RU 1.5.5"
    );
}

#[test]
fn ru_1_5_3_a_quiet_move_instead_of_a_capture_cites_the_same_rule_both_ways() {
    let fen = "W:Wc3,g1:Bd4,f6,a7";
    assert_eq!(
        same_both_ways(Variant::Russian, fen, "g1", "h2", false),
        "RU 1.5.3"
    );
}

#[test]
fn it_fid_5_8_an_unfinished_capture_cites_the_italian_rule_both_ways() {
    // f3xh5 takes g4 and must go on over g6 to f7 (the most pieces).
    let fen = "W:Wb3,f3:Bc4,g4,g6";
    assert_eq!(
        same_both_ways(Variant::Italian, fen, "f3", "h5", true),
        "IT: FID rules 5-8"
    );
}

#[test]
fn it_fid_3_4_a_quiet_move_instead_of_a_capture_cites_the_italian_rule_both_ways() {
    let fen = "W:Wb3,f3:Bc4,g4,g6";
    assert_eq!(
        same_both_ways(Variant::Italian, fen, "f3", "e4", false),
        "IT: FID rules 3-4"
    );
}

#[test]
fn tr_maximum_pieces_an_unfinished_capture_cites_the_turkish_rule_both_ways() {
    // f4xf6 takes f5 and must go on over e6 to d6 (two men, more than b4xb6's king).
    let fen = "W:Wb4,f4:BKb5,f5,e6";
    assert_eq!(
        same_both_ways(Variant::Turkish, fen, "f4", "f6", true),
        "TR maximum pieces"
    );
}

#[test]
fn tr_captures_compulsory_a_quiet_move_instead_of_a_capture_cites_the_turkish_rule_both_ways() {
    let fen = "W:Wb4,f4:BKb5,f5,e6";
    assert_eq!(
        same_both_ways(Variant::Turkish, fen, "b4", "a4", false),
        "TR captures compulsory"
    );
}

/// The irregularity a board's lift and release of `from` to `to` flags in a started,
/// untimed game of `variant` from `fen`, as the API sends it (`IrregularityFlagged`).
async fn flagged_on_the_wire(
    variant: pb::Variant,
    fen: &str,
    from: u32,
    to: u32,
) -> (pb::IrregularityFlagged, String) {
    let hub = Hub::new(Arc::new(MemoryStore::new()), false);
    let api = Api::new(hub.clone(), Arc::new(Tokens::new(&[])));
    let id = api
        .create_game(Request::new(pb::CreateGameRequest {
            game_id: "g".into(),
            variant: variant as i32,
            start_fen: fen.into(),
            ..Default::default()
        }))
        .await
        .expect("created")
        .into_inner()
        .id;
    api.start_game(Request::new(pb::StartGameRequest {
        game_id: id.clone(),
        expected_seq: 0,
    }))
    .await
    .expect("started");
    let h = hub.game(&id).await.expect("the game");
    let mut events = Vec::new();
    for (input, board_ms) in [
        (BoardInput::Lift(from), 5_001),
        (BoardInput::Release(to), 5_002),
    ] {
        let (published, ()) = h
            .send_command(
                Actor::Board("b1".into()),
                Pending::Ready(Command::Board(input)),
                None,
                Some(board_ms),
                |_, _| (),
            )
            .await
            .expect("recorded");
        events.extend(published.iter().map(|p| event_pb(p, h.meta())));
    }
    events
        .into_iter()
        .find_map(|e| match e.kind {
            Some(pb::game_event::Kind::IrregularityFlagged(i)) => Some((i, e.rule)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{variant:?} {fen} {from}-{to}: no irregularity"))
}

/// A multi-capture stopped on one of its landing squares ("stopping a capture early",
/// RULES.md: FMJD's list of irregularities; RU 1.5.5 and each variant's own rule) is
/// flagged as `IRREGULARITY_KIND_CAPTURE_INCOMPLETE`, citing the same rule as the written
/// move; a complete capture of too few pieces stays `IRREGULARITY_KIND_ILLEGAL_MOVE`.
#[tokio::test]
async fn an_incomplete_capture_on_the_board_is_flagged_capture_incomplete() {
    let incomplete = pb::IrregularityKind::CaptureIncomplete as i32;
    let illegal = pb::IrregularityKind::IllegalMove as i32;
    // (variant, fen, from, to, the kind, the written move's refusal)
    let cases = [
        // c3:e5 takes d4 and must go on over f6 to g7 (RU 1.5.5).
        (Variant::Russian, "W:Wc3,g3:Bd4,f6", "c3", "e5", incomplete),
        (
            Variant::Russian,
            "W:Wc3,g1:Bd4,f6,a7",
            "c3",
            "e5",
            incomplete,
        ),
        // 22x13 must go on over 10 (IT: FID rules 5-8).
        (Variant::Italian, "W:W22:B10,18", "22", "13", incomplete),
        (
            Variant::Italian,
            "W:Wb3,f3:Bc4,g4,g6",
            "f3",
            "h5",
            incomplete,
        ),
        // d3xd5 takes d4 and must go on over d6 to d7 (TR maximum pieces).
        (Variant::Turkish, "W:Wd3:Bd4,d6,h8", "d3", "d5", incomplete),
        (
            Variant::Turkish,
            "W:Wb4,f4:BKb5,f5,e6",
            "f4",
            "f6",
            incomplete,
        ),
        // A whole capture, of one piece where two can be taken: too few, not unfinished.
        (Variant::Turkish, "W:Wb4,f4:BKb5,f5,e6", "b4", "b6", illegal),
    ];
    for (variant, fen, from, to, kind) in cases {
        let wire = match variant {
            Variant::Russian => pb::Variant::Russian,
            Variant::Italian => pb::Variant::Italian,
            _ => pb::Variant::Turkish,
        };
        let (flagged, rule) =
            flagged_on_the_wire(wire, fen, number(variant, from), number(variant, to)).await;
        assert_eq!(
            flagged.kind, kind,
            "{variant} {fen} {from}-{to}: {flagged:?}"
        );
        assert_eq!(
            rule,
            written(variant, fen, from, to, true),
            "{variant} {fen} {from}-{to}: the rule of the written move"
        );
        assert_eq!(flagged.side, pb::Side::White as i32);
    }
}
