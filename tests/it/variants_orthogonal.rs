//! Hand-built positions for the rules of Turkish (`tr_…`) and Frisian (`fr_…`) draughts,
//! each named after the rule it checks, with the exact list of legal moves expected.
//!
//! Turkish squares are algebraic (a1 = White's bottom-left, White moves up the board);
//! Frisian squares are the international numbers 1–50 (1–5 on Black's back rank).

use draughts_arbiter::notation::fen::{parse_fen, write_fen};
use draughts_arbiter::notation::movetext::{parse_move, write_move_full};
use draughts_arbiter::notation::square::{SquareError, parse_square};
use draughts_arbiter::rules::{Color, DrawMode, Game, Position, RuleEdition, Square, Variant};

fn pos(variant: Variant, fen: &str) -> Position {
    parse_fen(fen, variant).expect("test fen")
}

/// The legal moves, every landing square written, sorted.
fn moves(p: &Position) -> Vec<String> {
    let mut out: Vec<String> = p
        .legal_moves()
        .iter()
        .map(|m| write_move_full(p, m))
        .collect();
    out.sort();
    out
}

fn game_moves(g: &Game) -> Vec<String> {
    let mut out: Vec<String> = g
        .legal_moves()
        .iter()
        .map(|m| write_move_full(g.position(), m))
        .collect();
    out.sort();
    out
}

fn play(g: &mut Game, text: &str) {
    let mv = parse_move(text, g.position()).expect("legal in the position");
    g.play(&mv).expect("legal in the game");
}

// ---------------------------------------------------------------------------------------
// Turkish

#[test]
fn tr_start_position_and_algebraic_fen() {
    let start = Position::start(Variant::Turkish);
    assert_eq!(
        write_fen(&start),
        "W:Wa3,b3,c3,d3,e3,f3,g3,h3,a2,b2,c2,d2,e2,f2,g2,h2:\
         Ba7,b7,c7,d7,e7,f7,g7,h7,a6,b6,c6,d6,e6,f6,g6,h6"
    );
    assert_eq!(
        moves(&start),
        [
            "a3-a4", "b3-b4", "c3-c4", "d3-d4", "e3-e4", "f3-f4", "g3-g4", "h3-h4"
        ]
    );
    // GameType 30 has no square numbers: a number is refused, not guessed.
    assert!(matches!(
        parse_square("12", Variant::Turkish),
        Err(SquareError::NotNumbered { .. })
    ));
    assert!(parse_fen("W:W9,10:B50", Variant::Turkish).is_err());
}

#[test]
fn tr_jumped_piece_leaves_at_once() {
    // The king takes b3, d5, e4 and then c3, landing on b3 or a3: b3 is free again because
    // the man jumped there left the board at once. Were it removed only after the move, it
    // would block, c3 could not be taken and the capture would stop at three pieces.
    let p = pos(Variant::Turkish, "W:WKb1:Bb3,c3,e4,d5");
    assert_eq!(moves(&p), ["b1xb5xe5xe3xa3", "b1xb5xe5xe3xb3"]);
    let mv = parse_move("b1xb3", &p).expect("start and end name the move");
    let after = p.play(&mv).expect("legal");
    assert_eq!(write_fen(&after), "B:WKb3:B");
}

#[test]
fn tr_no_180_turn_in_capture() {
    // After taking d6 upwards the king may not come straight back down over d2 (the way
    // is clear, since d6 has already left the board): one piece is the most it can take.
    let p = pos(Variant::Turkish, "W:WKd4:Bd6,d2");
    assert_eq!(moves(&p), ["d4xd1", "d4xd7", "d4xd8"]);
}

#[test]
fn tr_maximum_capture() {
    // b4 can take a king, f4 can take two men: the two men must be taken; a king counts
    // as one piece, no more.
    let p = pos(Variant::Turkish, "W:Wb4,f4:BKb5,f5,e6");
    assert_eq!(moves(&p), ["f4xf6xd6"]);
    let e = parse_move("b4xb6", &p).expect_err("fewer pieces");
    assert_eq!(
        e.to_string(),
        "'b4xb6': the capture must take the most pieces (2) (TR maximum pieces)"
    );
}

#[test]
fn tr_men_never_move_back() {
    // White's man on d4 steps forward or sideways, and does not take the man behind it.
    let white = pos(Variant::Turkish, "W:Wd4:Bd3");
    assert_eq!(moves(&white), ["d4-c4", "d4-d5", "d4-e4"]);
    // Black's forward is down: the same men, Black to move.
    let black = pos(Variant::Turkish, "B:Wd4:Bd3");
    assert_eq!(moves(&black), ["d3-c3", "d3-d2", "d3-e3"]);
}

#[test]
fn tr_king_flies_orthogonally() {
    let p = pos(Variant::Turkish, "W:WKd4:Ba8");
    assert_eq!(
        moves(&p),
        [
            "d4-a4", "d4-b4", "d4-c4", "d4-d1", "d4-d2", "d4-d3", "d4-d5", "d4-d6", "d4-d7",
            "d4-d8", "d4-e4", "d4-f4", "d4-g4", "d4-h4"
        ]
    );
    // It takes from a distance and lands on any free square beyond.
    let p = pos(Variant::Turkish, "W:WKd1:Bd5");
    assert_eq!(moves(&p), ["d1xd6", "d1xd7", "d1xd8"]);
}

#[test]
fn tr_man_crowned_during_capture_goes_on_as_king() {
    // b6 takes b7 and lands on b8, is crowned, and goes on along the back rank as a king
    // (it may not turn back down the b-file: that would be a 180° turn).
    let p = pos(Variant::Turkish, "W:Wb6:Bb7,e8");
    assert_eq!(moves(&p), ["b6xb8xf8", "b6xb8xg8", "b6xb8xh8"]);
    let after = p.play(&p.legal_moves()[0]).expect("legal");
    assert_eq!(after.kings().count_ones(), 1);
}

#[test]
fn tr_rules_md_man_reaching_last_row_during_capture_is_crowned_and_captures_on_as_king() {
    // RULES.md, variant table, TR: "a man reaching the last row during a capture is crowned
    // and goes on capturing as a king (decision: sources differ)". b6 takes b7 and reaches
    // b8; as a flying king it takes d8 from a distance, must land on f8 (the only square
    // from which the capture goes on: maximum pieces), and takes f6 down the f-file. A man
    // could take neither d8 (not adjacent) nor f6 (behind it): three pieces is only
    // possible as a king.
    let p = pos(Variant::Turkish, "W:Wb6:Bb7,d8,f6");
    assert_eq!(
        moves(&p),
        [
            "b6xb8xf8xf1",
            "b6xb8xf8xf2",
            "b6xb8xf8xf3",
            "b6xb8xf8xf4",
            "b6xb8xf8xf5"
        ]
    );
    for mv in p.legal_moves() {
        assert_eq!(mv.capture_count(), 3);
        assert!(mv.promotes(), "{mv:?} crowns the man");
        let after = p.play(&mv).expect("legal");
        assert_eq!(after.kings_of(Color::White), mv.to().bit());
        assert_eq!(after.pieces(Color::Black), 0);
    }
}

#[test]
fn tr_one_piece_each_is_drawn() {
    let g = Game::new(pos(Variant::Turkish, "W:WKd4:Be7"), RuleEdition::Classic);
    let draws = g.draws();
    assert_eq!(draws.len(), 1);
    assert_eq!(draws[0].rule, "TR 19(b) one piece each");
    assert_eq!(draws[0].mode, DrawMode::Automatic);
    let g = Game::new(pos(Variant::Turkish, "W:WKd4,a2:Be7"), RuleEdition::Classic);
    assert!(g.draws().is_empty());
    // Not while the side to move can take the last piece.
    let g = Game::new(pos(Variant::Turkish, "W:WKd4:Bd6"), RuleEdition::Classic);
    assert!(g.draws().is_empty());
}

// ---------------------------------------------------------------------------------------
// Frisian

#[test]
fn fr_start_position_matches_international() {
    let p = Position::start(Variant::Frisian);
    assert_eq!(write_fen(&p), "W:W31-50:B1-20");
    assert_eq!(
        moves(&p),
        [
            "31-26", "31-27", "32-27", "32-28", "33-28", "33-29", "34-29", "34-30", "35-30"
        ]
    );
}

#[test]
fn fr_orthogonal_capture() {
    // A man takes sideways (29, two columns to the right, landing on 30) and straight up
    // (18, two rows up, landing on 8): both are single captures of a man, so both legal.
    let p = pos(Variant::Frisian, "W:W28:B18,29");
    assert_eq!(moves(&p), ["28x30", "28x8"]);
    // A king takes orthogonally from a distance: 46 up the left edge over 16 to 6.
    let p = pos(Variant::Frisian, "W:WK46:B16");
    assert_eq!(moves(&p), ["46x6"]);
}

#[test]
fn fr_king_moves_only_diagonally() {
    // Official Rules (2011) art. 9: a king's simple move follows the diagonals only.
    let p = pos(Variant::Frisian, "W:WK46:B4");
    assert_eq!(
        moves(&p),
        [
            "46-10", "46-14", "46-19", "46-23", "46-28", "46-32", "46-37", "46-41", "46-5"
        ]
    );
}

#[test]
fn fr_king_worth_more() {
    // A king taken is worth more than a man taken: 33x24 (the king on 29) beats 36x27.
    let p = pos(Variant::Frisian, "W:W33,36:B31,K29");
    assert_eq!(moves(&p), ["33x24"]);
    let e = parse_move("36x27", &p).expect_err("less value");
    assert!(e.to_string().ends_with("(FR capture precedence)"), "{e}");
    // ... but worth less than two men: 36x27x18 (31 and 22) beats 33x24 (the king).
    let p = pos(Variant::Frisian, "W:W33,36:B22,31,K29");
    assert_eq!(moves(&p), ["36x27x18"]);
    // Equal value: the king must make the capture (46 takes 26, not 13 takes 12).
    let p = pos(Variant::Frisian, "W:W13,K46:B12,26");
    assert_eq!(moves(&p), ["46x16", "46x6"]);
}

#[test]
fn fr_king_move_limit_three_moves_with_the_same_king() {
    let start = pos(Variant::Frisian, "W:W35,K46:B3,4");
    let mut g = Game::new(start, RuleEdition::Classic);
    for (w, b) in [("46-41", "3-8"), ("41-37", "8-12"), ("37-41", "4-9")] {
        assert_eq!(g.blocked_king(), None);
        play(&mut g, w);
        play(&mut g, b);
    }
    // Three moves in a row with the king now on 41, and White still has a man: the king
    // may not move again; the position alone would allow it.
    assert_eq!(g.king_move_run(Color::White).moves, 3);
    let k41 = parse_square("41", Variant::Frisian).expect("41");
    assert_eq!(g.blocked_king(), Some(k41));
    assert_eq!(game_moves(&g), ["35-30"]);
    assert!(moves(g.position()).contains(&"41-46".to_string()));
    let blocked = parse_move("41-46", g.position()).expect("a move of the position");
    assert!(
        g.play(&blocked).is_err(),
        "the game refuses the fourth king move"
    );
    // Another piece moves: the king is free again.
    play(&mut g, "35-30");
    play(&mut g, "9-13");
    assert_eq!(g.blocked_king(), None);
    assert!(game_moves(&g).contains(&"41-46".to_string()));
}

#[test]
fn fr_king_move_limit_does_not_stop_a_capture() {
    let start = pos(Variant::Frisian, "W:W35,K46:B4,19,23");
    let mut g = Game::new(start, RuleEdition::Classic);
    for (w, b) in [("46-41", "4-10"), ("41-37", "10-15"), ("37-41", "23-28")] {
        play(&mut g, w);
        play(&mut g, b);
    }
    let k41: Square = parse_square("41", Variant::Frisian).expect("41");
    assert_eq!(g.blocked_king(), Some(k41));
    let legal = g.legal_moves();
    assert!(!legal.is_empty());
    assert!(legal.iter().all(|m| m.is_capture() && m.from() == k41));
    assert_eq!(game_moves(&g), moves(g.position()));
}

#[test]
fn fr_king_move_limit_not_with_kings_only() {
    let start = pos(Variant::Frisian, "W:WK46,K50:B3,4");
    let mut g = Game::new(start, RuleEdition::Classic);
    for (w, b) in [("46-41", "3-8"), ("41-37", "8-12"), ("37-41", "4-9")] {
        play(&mut g, w);
        play(&mut g, b);
    }
    assert_eq!(g.blocked_king(), None);
    assert!(game_moves(&g).contains(&"41-46".to_string()));
}

#[test]
fn fr_king_against_king_drawn_after_two_moves_each_and_no_repetition_rule() {
    let start = pos(Variant::Frisian, "W:WK46:BK4");
    let mut g = Game::new(start, RuleEdition::Classic);
    for (w, b) in [("46-41", "4-9"), ("41-46", "9-4")] {
        assert!(g.draws().is_empty());
        play(&mut g, w);
        play(&mut g, b);
    }
    let rules: Vec<&str> = g.draws().iter().map(|d| d.rule).collect();
    assert_eq!(rules, ["FR king against king, 2 moves"]);
}
