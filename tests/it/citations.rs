//! One citation table (issue 11, item 8): the same illegal move cites the same rule
//! whether it was written (`SubmitMove`) or made on an electronic board (lift, release).

use draughts_arbiter::game::{
    Actor, BoardInput, Command, EventKind, GameSettings, IrregularityKind, Now, Session,
};
use draughts_arbiter::notation::square::{parse_square, square_number};
use draughts_arbiter::rules::{Color, Variant};

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

/// The rule the irregularity of the same move on a board cites.
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
                    kind: IrregularityKind::IllegalMove,
                    ..
                }
            )
        })
        .expect("an illegal-move irregularity");
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
