//! Russian draughts, RU 1.4–1.5, from the rule book and the seed documents' examples.

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::notation::movetext::{parse_move, write_move_full};
use draughts_arbiter::rules::{Color, Position, Variant};

fn pos(fen: &str) -> Position {
    parse_fen(fen, Variant::Russian).expect("test fen")
}

/// The distinct legal moves, full paths, sorted.
fn moves(p: &Position) -> Vec<String> {
    let mut m: Vec<String> = p
        .legal_moves()
        .iter()
        .map(|m| write_move_full(p, m))
        .collect();
    m.sort();
    m
}

fn play(p: &Position, text: &str) -> Position {
    let mv = parse_move(text, p).expect("legal move");
    p.play(&mv).expect("plays")
}

#[test]
fn ru_1_3_start_position_and_white_moves_first() {
    let p = Position::start(Variant::Russian);
    assert_eq!(p.turn(), Color::White);
    assert_eq!(
        moves(&p),
        [
            "a3-b4", "c3-b4", "c3-d4", "e3-d4", "e3-f4", "g3-f4", "g3-h4"
        ]
    );
}

#[test]
fn ru_1_4_3_man_moves_one_square_forward() {
    let p = pos("W:Wc3:Bh8");
    assert_eq!(moves(&p), ["c3-b4", "c3-d4"]);
    let p = pos("B:Wa1:Bd6");
    assert_eq!(moves(&p), ["d6-c5", "d6-e5"]);
}

#[test]
fn ru_1_4_4_man_on_far_rank_becomes_king() {
    let p = play(&pos("W:Wc7:Bh6"), "c7-d8");
    assert_eq!(p.kings_of(Color::White).count_ones(), 1);
}

#[test]
fn ru_1_4_5_king_moves_any_distance_not_over_own_pieces() {
    let p = pos("W:WKc3,e5:Ba7");
    let m = moves(&p);
    assert!(m.contains(&"c3-a5".to_string()));
    assert!(!m.contains(&"c3-h8".to_string()), "own man on e5 blocks");
    assert!(m.contains(&"c3-d4".to_string()));
    assert!(m.contains(&"c3-a1".to_string()));
    assert!(m.contains(&"c3-e1".to_string()));
}

#[test]
fn ru_1_5_1_man_captures_adjacent_piece_and_1_5_3_backwards_too() {
    // A man captures in four directions (seed 000's picture: c1, g1, c5, g5 from e3).
    let p = pos("W:We3:Bd2,f2,d4,f4");
    assert_eq!(moves(&p), ["e3:c1", "e3:c5", "e3:g1", "e3:g5"]);
}

#[test]
fn ru_1_5_3_capture_is_compulsory_from_the_start_sequence() {
    // Seed 000: c3-d4, b6-c5 — now White must capture d4:b6.
    let p = Position::start(Variant::Russian);
    let p = play(&p, "c3-d4");
    let p = play(&p, "b6-c5");
    assert_eq!(moves(&p), ["d4:b6"]);
    let e = parse_move("a3-b4", &p).expect_err("capture is compulsory");
    assert_eq!(e.to_string(), "'a3-b4': a capture is compulsory (RU 1.5.3)");
}

#[test]
fn ru_1_5_5_man_must_continue_capturing() {
    // Seed 000: a man on e3 captures either e3:c5:e7 or e3:g5.
    let p = pos("W:We3:Bd4,d6,f4");
    assert_eq!(moves(&p), ["e3:c5:e7", "e3:g5"]);
    assert!(parse_move("e3:c5", &p).is_err(), "stopping a capture early");
}

#[test]
fn ru_1_5_6_king_lands_where_the_capture_continues() {
    // Seed 000: the king on g1 chooses among g1:e3:c1, g1:d4:g7, g1:d4:h8.
    let p = pos("W:WKg1:Bf2,d2,f6");
    assert_eq!(moves(&p), ["g1:d4:g7", "g1:d4:h8", "g1:e3:c1"]);
}

#[test]
fn ru_1_5_7_captured_pieces_stay_until_the_move_ends_turkish_strike() {
    // Seed 000: after 1. b2-c3 the black king must capture a5:e1:g3:e5 and cannot go on
    // to take d4, because the captured c3 still stands behind it.
    let p = pos("W:Wb2,d4,f2,f4:BKa5,e7,c7");
    let p = play(&p, "b2-c3");
    let m = moves(&p);
    assert!(m.contains(&"a5:e1:g3:e5".to_string()), "{m:?}");
    for mv in p.legal_moves() {
        let caps: Vec<String> = mv
            .captured()
            .map(|s| draughts_arbiter::notation::square_name(s, Variant::Russian))
            .collect();
        assert!(
            !(caps.contains(&"c3".to_string()) && caps.contains(&"d4".to_string())),
            "c3 and d4 both captured: {caps:?}"
        );
    }
}

#[test]
fn ru_1_5_9_e1_king_may_not_capture_d2_twice() {
    // Seed 000: e1:c3:a5, e1:c3:e5:g3:e1, e1:g3:e5:c3:e1, e1:g3:e5:c3:a5 — never
    // e1:c3:e5:g3:e1:a5, which would take d2 twice. (The black man on a3 stands where the
    // seed's diagram has a piece that stops the king at d6 going on over b4.)
    let p = pos("W:WKe1:Ba3,b4,d2,d4,f2,f4");
    let all: Vec<String> = {
        let mut v: Vec<String> = p
            .legal_moves_all_paths()
            .iter()
            .map(|m| write_move_full(&p, m))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        all,
        [
            "e1:c3:a5",
            "e1:c3:e5:g3:e1",
            "e1:g3:e5:c3:a5",
            "e1:g3:e5:c3:e1"
        ]
    );
    // The two round trips take the same pieces: one move for the arbiter.
    assert_eq!(p.legal_moves().len(), 3);
    assert!(p.legal_moves().iter().all(|m| m.capture_count() <= 4));
}

#[test]
fn ru_1_5_14_free_choice_regardless_of_count() {
    // A one-piece capture may be chosen over a two-piece one.
    let p = pos("W:Wa3,e3:Bb4,f4,f6");
    assert_eq!(moves(&p), ["a3:c5", "e3:g5:e7"]);
}

#[test]
fn ru_1_5_15_man_promotes_mid_capture_and_continues_as_king() {
    // Seed 000: the b6 man takes c7, is crowned on d8, and goes on as a king to f6, g5 or h4.
    let p = pos("W:Wb6:Bc7,e7");
    assert_eq!(moves(&p), ["b6:d8:f6", "b6:d8:g5", "b6:d8:h4"]);
    for mv in p.legal_moves() {
        assert!(mv.promotes());
        let next = p.play(&mv).expect("legal");
        assert_eq!(next.kings_of(Color::White).count_ones(), 1);
    }
}

#[test]
fn ru_1_5_16_quiet_promotion_captures_as_king_only_next_move() {
    // The man crowned on d8 by a quiet move; the move ends and Black is to move.
    let p = play(&pos("W:Wc7:Bf6,h6"), "c7-d8");
    assert_eq!(p.turn(), Color::Black);
}

#[test]
fn ru_black_chooses_between_two_captures() {
    // Seed 000: Black must choose between a7:c5 and c7:a5.
    let p = pos("B:Wb6,h2:Ba7,c7");
    assert_eq!(moves(&p), ["a7:c5", "c7:a5"]);
}

#[test]
fn ru_1_5_8_capture_cannot_pass_own_pieces() {
    let p = pos("W:WKa1,c3:Bd4,f6");
    let m = moves(&p);
    assert!(m.iter().all(|s| !s.starts_with("a1:")), "{m:?}");
}

#[test]
fn ru_play_refuses_an_illegal_move_and_returns_the_position() {
    let p = Position::start(Variant::Russian);
    let q = pos("W:Wc3,g3:Bd4,f4,f6,b6");
    let foreign = q.legal_moves()[0];
    let err = p.play(&foreign).expect_err("not legal at the start");
    assert_eq!(err.position, p);
}
