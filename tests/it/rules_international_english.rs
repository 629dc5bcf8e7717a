//! International (FMJD) and English draughts rules, from RULES.md's variant table.

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::notation::movetext::{parse_move, write_move_full};
use draughts_arbiter::rules::{Color, Position, Variant};

fn moves(p: &Position) -> Vec<String> {
    let mut m: Vec<String> = p
        .legal_moves()
        .iter()
        .map(|m| write_move_full(p, m))
        .collect();
    m.sort();
    m
}

fn int(fen: &str) -> Position {
    parse_fen(fen, Variant::International).expect("test fen")
}

fn en(fen: &str) -> Position {
    parse_fen(fen, Variant::English).expect("test fen")
}

#[test]
fn fmjd_start_position_has_nine_moves() {
    let p = Position::start(Variant::International);
    assert_eq!(p.turn(), Color::White);
    assert_eq!(p.legal_moves().len(), 9);
    assert_eq!(p.pieces(Color::White).count_ones(), 20);
}

#[test]
fn fmjd_4_13_maximum_capture_is_compulsory() {
    // 12x1 takes one piece, 12x3x14 two: only the larger is legal.
    let p = int("W:W12:B7,8,9");
    assert_eq!(moves(&p), ["12x3x14"]);
    let e = parse_move("12x1", &p).expect_err("fewer than the maximum");
    assert!(e.to_string().contains("FMJD 4.13"), "{e}");
}

#[test]
fn fmjd_4_10_man_passing_the_far_rank_stays_a_man() {
    let p = int("W:W12:B8,9");
    assert_eq!(moves(&p), ["12x3x14"]);
    let mv = parse_move("12x14", &p).expect("legal");
    assert!(!mv.promotes());
    let next = p.play(&mv).expect("legal");
    assert_eq!(next.kings(), 0);
}

#[test]
fn fmjd_a_man_ending_on_the_far_rank_is_crowned() {
    let p = int("W:W12:B8");
    let mv = parse_move("12x3", &p).expect("legal");
    assert!(mv.promotes());
}

#[test]
fn fmjd_king_counts_as_one_piece_no_priority() {
    // Taking one king (28x..) or two men: the two men must be taken.
    assert_eq!(moves(&int("W:W32:BK27")), ["32x21"]);
    assert_eq!(moves(&int("W:W32,38:BK27,33,23")), ["38x29x18"]);
}

#[test]
fn en_black_moves_first_from_the_start() {
    let p = Position::start(Variant::English);
    assert_eq!(p.turn(), Color::Black);
    assert_eq!(
        moves(&p),
        ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    );
}

#[test]
fn en_men_capture_forward_only() {
    // A white man on 18 with a black man on 22 behind it: no capture backwards.
    let p = en("W:W18:B22,1");
    assert!(p.legal_moves().iter().all(|m| !m.is_capture()));
}

#[test]
fn en_crowning_ends_the_move() {
    // White 11 takes 7 and is crowned on 2; as a king it could go on over 6, but may not.
    let p = en("W:W11:B7,6,20");
    assert_eq!(moves(&p), ["11x2"]);
    assert!(p.legal_moves()[0].promotes());
}

#[test]
fn en_kings_move_one_square_and_capture_both_ways() {
    let p = en("W:WK18:B1");
    assert_eq!(moves(&p), ["18-14", "18-15", "18-22", "18-23"]);
    let p = en("W:WK18:B22,1");
    assert_eq!(moves(&p), ["18x25"]);
}

#[test]
fn en_a_started_capture_must_be_finished() {
    let p = en("W:W27:B23,15,1");
    assert_eq!(moves(&p), ["27x18x11"]);
}
