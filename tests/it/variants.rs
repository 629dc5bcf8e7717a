//! Hand-built rule tests for the variants beyond Russian, International and English: each
//! test is named after the rule it checks and asserts the exact list of legal moves (full
//! paths, sorted) or the exact verdict.
//!
//! Square names in the FENs are algebraic as each variant's own board shows them: on the
//! Italian board a1 is light (squares 1–32 from the dark corner at the top left, FID Art.
//! 2.4), on 80-square draughts the files run a–j.

use std::process::Command;

use draughts_arbiter::notation::fen::{FenStyle, parse_fen, write_fen, write_fen_styled};
use draughts_arbiter::notation::movetext::{parse_move, write_move_full};
use draughts_arbiter::rules::{
    Color, DrawMode, EndReason, Game, Position, RuleEdition, Variant, game::outcome,
};

fn position(fen: &str, variant: Variant) -> Position {
    parse_fen(fen, variant).expect("test fen")
}

/// The legal moves with every landing square, sorted.
fn moves(fen: &str, variant: Variant) -> Vec<String> {
    let pos = position(fen, variant);
    let mut out: Vec<String> = pos
        .legal_moves()
        .iter()
        .map(|m| write_move_full(&pos, m))
        .collect();
    out.sort();
    out
}

/// Plays written moves, each of which must be legal.
fn play(game: &mut Game, moves: &[&str]) {
    for text in moves {
        let mv = parse_move(text, game.position())
            .unwrap_or_else(|e| panic!("{text} in {:?}: {e}", game.position()));
        game.play(&mv).expect("parsed moves are legal");
    }
}

/// The automatic draw rules that apply now.
fn automatic_draws(game: &Game) -> Vec<&'static str> {
    game.draws()
        .into_iter()
        .filter(|d| d.mode == DrawMode::Automatic)
        .map(|d| d.rule)
        .collect()
}

fn is_king_on(pos: &Position, square: &str) -> bool {
    let sq =
        draughts_arbiter::notation::square::parse_square(square, pos.variant()).expect("square");
    pos.kings() & sq.bit() != 0
}

// --- Italian -------------------------------------------------------------------------

#[test]
fn it_white_moves_first_on_the_mirrored_board() {
    let start = Position::start(Variant::Italian);
    assert_eq!(start.turn(), Color::White);
    assert_eq!(write_fen(&start), "W:W21-32:B1-12");
    // Square 1 is the dark corner at the top left, a8; 32 is h1 (FID Art. 2.3-2.4).
    let a8 = draughts_arbiter::notation::square::parse_square("a8", Variant::Italian);
    assert_eq!(
        a8.map(|s| draughts_arbiter::notation::square::square_number(s, Variant::Italian)),
        Ok(1)
    );
    assert_eq!(
        moves("W:W21-32:B1-12", Variant::Italian),
        [
            "21-17", "21-18", "22-18", "22-19", "23-19", "23-20", "24-20"
        ]
    );
}

#[test]
fn it_men_may_not_capture_kings() {
    // The man on 22 (d3) may take the man on 19 (e4) but not the king on 18 (c4).
    assert_eq!(moves("W:Wd3:BKc4,e4", Variant::Italian), ["22x15"]);
    // With only the king there, there is no capture at all.
    assert_eq!(moves("W:Wd3:BKc4", Variant::Italian), ["22-19"]);
    // Under Russian rules the same men would take either.
    assert_eq!(moves("W:Wd4:BKc5,e5", Variant::Russian), ["d4:b6", "d4:f6"]);
}

#[test]
fn it_men_capture_forward_only() {
    // A black man behind the white man on 22 (d3), with the square beyond free.
    assert_eq!(moves("W:Wd3:Bc2", Variant::Italian), ["22-18", "22-19"]);
}

#[test]
fn it_kings_move_and_capture_one_square() {
    // The black man on 15 (f5) is two squares away on the diagonal: no capture.
    assert_eq!(
        moves("W:WKd3:Bf5", Variant::Italian),
        ["22-18", "22-19", "22-26", "22-27"]
    );
}

#[test]
fn it_precedence_most_pieces() {
    // 21x14 would take one piece, 23x16x7 takes two.
    assert_eq!(moves("W:Wb3,f3:Bc4,g4,g6", Variant::Italian), ["23x16x7"]);
}

#[test]
fn it_precedence_capture_with_king() {
    // The man on 21 and the king on 28 can each take one piece: the king must.
    assert_eq!(moves("W:Wb3,Kg2:Bc4,f3", Variant::Italian), ["28x19"]);
}

#[test]
fn it_precedence_more_kings() {
    // The king on 22 can take the king on 18 or the man on 19: it must take the king.
    assert_eq!(moves("W:WKd3:BKc4,e4", Variant::Italian), ["22x13"]);
}

#[test]
fn it_precedence_king_earlier() {
    // Two captures of two pieces, each with one king: 22x13x6 meets the king first
    // (king on 18, then man on 10), 22x15x8 second (man on 19, then king on 12).
    assert_eq!(
        moves("W:WKd3:BKc4,c6,e4,Kg6", Variant::Italian),
        ["22x13x6"]
    );
}

#[test]
fn it_capture_rules_cite_the_italian_precedence() {
    let pos = position("W:Wb3,f3:Bc4,g4,g6", Variant::Italian);
    let err = parse_move("21x14", &pos).expect_err("fewer pieces");
    assert!(err.to_string().contains("IT: FID rules 5-8"), "{err}");
    let err = parse_move("23-19", &pos).expect_err("must capture");
    assert!(err.to_string().contains("IT: FID rules 3-4"), "{err}");
}

/// The first four games of `reference/games/Campionato_Assoluto_2005.pdn` (69th Italian
/// absolute championship, round 1), movetext copied verbatim; every move must be legal.
const CAMPIONATO_2005: [&str; 4] = [
    "1. 21-17 12-15 2. 23-19 11-14 3. 19x12  8x15 4. 28-23 14-18 5. 22x13  9x18 \
     6. 23-20 10-14 7. 20x11  6x15 8. 17-13  3-6 9. 13-9  5-10 10. 32-28  1-5 \
     11. 26-21  7-12 12. 21-17 12-16 13. 30-26  6-11 14. 26-21  4-7 15. 29-26 \
     14-19 16. 21x14 11x18 17. 26-21 16-20 18. 21x14 19-22 19. 27x18 10x19 \
     20. 31-27 19-22 21. 28-23 22x31 22. 23x16 31-27 23. 18-14 27-23 24. 25-21 \
     23-20 25. 17-13 15-19 26. 21-18 19-22 27. 13-10 22-26 28. 10x1 26-30 \
     29.  1-5 30-27 30.  5-10 27-22 31. 10-13 22-19 32. 14-10 19-15 33. 10-5 \
     20-23 34.  5-1 23-20 35.  1-5  7-11 36.  5-10 15-12 37. 10-6 11-15 \
     38.  6-11 {Bianco Vince} 1-0",
    "1. 21-17 12-15 2. 23-19 10-14 3. 19x12  8x15 4. 28-23  5-10 5. 23-20  1-5 \
     6. 32-28 14-18 7. 22x13  9x18 8. 26-22  5-9 9. 22x13  9x18 10. 28-23 10-14 \
     11. 20-16  6-10 12. 27-22 18x27 13. 31x22  2-5 14. 23-20 14-19 15. 30-27 \
     19x26 16. 29x22 10-14 17. 17-13  5-10 18. 13x6  3x10 19. 22-18 14x21 \
     20. 25x18 15-19 21. 20-15 11x20 22. 24x15 19-23 23. 27x20  4-8 24. 18-13 \
     10x17 25. 15-11  7x14 26. 20-15 17-21 27. 16-12 21-26 28. 12-7 26-30 \
     29.  7-3 30-27 30.  3-7 27-23 31.  7-12 23-20 32. 15-11 20-16 33. 11-7 \
     14-18 34.  7-3 16x7 35.  3x12 {Pari} 1/2-1/2",
    "1. 21-17 12-15 2. 23-19  8-12 3. 28-23 11-14 4. 25-21  9-13 5. 23-20 14x23 \
     6. 20x11  7x14 7. 27x20 13-18 8. 22x13  5-9 9. 20-15  9x25 10. 15x8 14-19 \
     11. 31-27 10-14 12. 32-28  6-10 13. 17-13 10x17 14. 27-22  2-6 15. 22x15 \
     3-7 16. 26-22  7-12 17. 30-26 12x19 18. 22x15  1-5 {Pari} 1/2-1/2",
    "1. 21-17 12-15 2. 23-19  8-12 3. 28-23 11-14 4. 26-21  6-11 5. 23-20 14x23 \
     6. 20-16  2-6 7. 27x20  4-8 8. 31-27 15-19 9. 22x15 12x19 10. 27-22 19x26 \
     11. 29x22 10-14 12. 32-28 14-18 13. 21x14 11x27 14. 30x23  9-13 15. 17x10 \
     5x14 16. 25-21  6-11 17. 21-18 14x21 18. 23-19  1-5 {Nero Vince} 0-1",
];

/// The moves of a PDN movetext: move numbers, comments and the result left out.
fn movetext_moves(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_comment = false;
    for word in text.split_whitespace() {
        if word.starts_with('{') {
            in_comment = true;
        }
        if in_comment {
            in_comment = !word.ends_with('}');
            continue;
        }
        let is_number =
            word.ends_with('.') && word[..word.len() - 1].bytes().all(|b| b.is_ascii_digit());
        if is_number || ["1-0", "0-1", "1/2-1/2", "*"].contains(&word) {
            continue;
        }
        out.push(word);
    }
    out
}

#[test]
fn it_campionato_assoluto_2005_first_games_replay() {
    let expected_plies = [75, 69, 36, 36];
    for (text, plies) in CAMPIONATO_2005.iter().zip(expected_plies) {
        let list = movetext_moves(text);
        assert_eq!(list.len(), plies);
        let mut game = Game::new(Position::start(Variant::Italian), RuleEdition::Classic);
        play(&mut game, &list);
        assert_eq!(game.moves().len(), plies);
    }
}

#[test]
fn it_draw_after_40_king_moves_each() {
    let start = position("W:WK32:BK1", Variant::Italian);
    let mut game = Game::new(start, RuleEdition::Classic);
    let cycle = ["32-28", "1-5", "28-32", "5-1"];
    for _ in 0..19 {
        play(&mut game, &cycle);
    }
    play(&mut game, &["32-28", "1-5", "28-32"]);
    // 79 plies: not yet.
    assert_eq!(automatic_draws(&game), Vec::<&str>::new());
    play(&mut game, &["5-1"]);
    assert_eq!(automatic_draws(&game), ["IT 40 king moves (FID)"]);
    let claim = game
        .draws()
        .into_iter()
        .find(|d| d.mode == DrawMode::Claimable)
        .expect("repetition");
    assert_eq!(claim.rule, "IT threefold repetition (FID)");
}

// --- Brazilian -----------------------------------------------------------------------

#[test]
fn br_maximum_capture() {
    // c3xe5 takes one man, g1xe3xc5 two: only the latter (FMJD 4.13).
    assert_eq!(moves("W:Wc3,g1:Bd4,f2", Variant::Brazilian), ["32x23x14"]);
}

#[test]
fn br_no_promotion_in_passing() {
    // The man jumps to d8 (square 2) and goes on as a man, back over c7 to b6; it is not
    // crowned. Under Russian rules it would be crowned on d8 and fly on as a king.
    let fen = "W:Wf6:Be7,c7";
    assert_eq!(moves(fen, Variant::Brazilian), ["11x2x9"]);
    let pos = position(fen, Variant::Brazilian);
    let mv = parse_move("11x9", &pos).expect("the capture");
    let next = pos.play(&mv).expect("legal");
    assert_eq!(next.kings(), 0);
    assert_eq!(moves(fen, Variant::Russian), ["f6:d8:a5", "f6:d8:b6"]);
}

#[test]
fn br_crowned_when_the_capture_ends_on_the_far_rank() {
    let pos = position("W:Wf6:Be7", Variant::Brazilian);
    let mv = parse_move("11x2", &pos).expect("capture");
    let next = pos.play(&mv).expect("legal");
    assert!(is_king_on(&next, "d8"));
}

#[test]
fn br_numeric_notation_and_start() {
    let start = Position::start(Variant::Brazilian);
    assert_eq!(write_fen(&start), "W:W21-32:B1-12");
    assert_eq!(
        moves("W:W21-32:B1-12", Variant::Brazilian),
        [
            "21-17", "22-17", "22-18", "23-18", "23-19", "24-19", "24-20"
        ]
    );
}

#[test]
fn br_draws_follow_fmjd() {
    // Two kings against a lone king: drawn after 5 moves each (FMJD).
    let mut game = Game::new(
        position("W:WKa1,Kc1:BKa7", Variant::Brazilian),
        RuleEdition::Classic,
    );
    let cycle = ["c1-b2", "a7-b8", "b2-c1", "b8-a7"];
    play(&mut game, &cycle);
    play(&mut game, &cycle);
    play(&mut game, &["c1-b2"]);
    assert_eq!(automatic_draws(&game), Vec::<&str>::new());
    play(&mut game, &["a7-b8"]);
    assert_eq!(automatic_draws(&game), ["FMJD 5 moves"]);
}

// --- Pool ----------------------------------------------------------------------------

#[test]
fn pool_black_moves_first() {
    let start = Position::start(Variant::Pool);
    assert_eq!(start.turn(), Color::Black);
    assert_eq!(write_fen(&start), "B:W21-32:B1-12");
    assert_eq!(
        moves("B:W21-32:B1-12", Variant::Pool),
        ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    );
}

#[test]
fn pool_man_continues_as_man_past_far_rank() {
    // Through d8 (2) and back over c7 to b6 (9), still a man.
    let fen = "W:Wf6:Be7,c7";
    assert_eq!(moves(fen, Variant::Pool), ["11x2x9"]);
    let pos = position(fen, Variant::Pool);
    let next = pos
        .play(&parse_move("11x9", &pos).expect("capture"))
        .expect("legal");
    assert_eq!(next.kings(), 0);
}

#[test]
fn pool_crowned_only_if_the_capture_ends_there() {
    let pos = position("W:Wf6:Be7", Variant::Pool);
    let next = pos
        .play(&parse_move("11x2", &pos).expect("capture"))
        .expect("legal");
    assert!(is_king_on(&next, "d8"));
}

#[test]
fn pool_free_capture_choice() {
    // One piece or two: either (unlike Brazilian, see br_maximum_capture).
    assert_eq!(
        moves("W:Wc3,g1:Bd4,f2", Variant::Pool),
        ["22x15", "32x23x14"]
    );
}

#[test]
fn pool_men_capture_backwards_and_kings_fly() {
    assert_eq!(moves("W:Wd4:Bc3", Variant::Pool), ["18x25"]);
    assert_eq!(moves("W:WKa1:Bf6", Variant::Pool), ["29x4", "29x8"]);
}

#[test]
fn pool_13_count_three_kings_against_one() {
    let mut game = Game::new(
        position("W:WKa1,Kc1,Kh6:BKa7", Variant::Pool),
        RuleEdition::Classic,
    );
    let cycle = ["12-8", "5-1", "8-12", "1-5"];
    for _ in 0..6 {
        play(&mut game, &cycle);
    }
    // 12 moves each: the 13-count has not run out.
    assert_eq!(automatic_draws(&game), Vec::<&str>::new());
    play(&mut game, &["12-8"]);
    assert_eq!(automatic_draws(&game), ["POOL 13-count (APCA)"]);
}

// --- Giveaway ------------------------------------------------------------------------

#[test]
fn give_no_pieces_wins() {
    let pos = position("W:W:Bc3", Variant::Giveaway);
    let end = outcome(&pos).expect("over");
    assert_eq!(end.winner, Color::White);
    assert_eq!(end.reason, EndReason::NoPieces);
    assert_eq!(end.rule, "GIVE: no pieces or no moves wins");
}

#[test]
fn give_blocked_side_wins() {
    // The man on a1 cannot move or capture (c3 is taken).
    let fen = "W:Wa1:Bb2,c3";
    let end = outcome(&position(fen, Variant::Giveaway)).expect("over");
    assert_eq!((end.winner, end.reason), (Color::White, EndReason::NoMoves));
    // The same position is lost under the normal goal (RU 1.8).
    let end = outcome(&position(fen, Variant::Russian)).expect("over");
    assert_eq!((end.winner, end.rule), (Color::Black, "RU 1.8"));
}

#[test]
fn give_captures_are_compulsory_as_in_russian() {
    assert_eq!(moves("W:Wc3,h2:Bd4", Variant::Giveaway), ["c3:e5"]);
    assert_eq!(
        moves("W:Wc3,h2:Bd4", Variant::Giveaway),
        moves("W:Wc3,h2:Bd4", Variant::Russian)
    );
}

#[test]
fn give_draws_keep_only_the_general_counters() {
    // Three kings against a lone king for 15 moves each: Russian rules draw by (c) and by
    // (f); in giveaway (c) presupposes the normal goal and is left out, (f) stays.
    let fen = "W:WKa1,Kc1,Kh6:BKa7";
    let cycle = ["h6-g7", "a7-b8", "g7-h6", "b8-a7"];
    let mut verdicts = Vec::new();
    for variant in [Variant::Russian, Variant::Giveaway] {
        let mut game = Game::new(position(fen, variant), RuleEdition::Classic);
        for _ in 0..7 {
            play(&mut game, &cycle);
        }
        play(&mut game, &["h6-g7", "a7-b8"]);
        verdicts.push(automatic_draws(&game));
    }
    assert_eq!(verdicts[0], ["RU 1.9.1(c)", "RU 1.9.1(f)"]);
    assert_eq!(verdicts[1], ["RU 1.9.1(f)"]);
}

// --- Antidraughts --------------------------------------------------------------------

#[test]
fn anti_blocked_side_wins() {
    let pos = position("W:Wa1:Bb2,c3", Variant::Antidraughts);
    let end = outcome(&pos).expect("over");
    assert_eq!((end.winner, end.reason), (Color::White, EndReason::NoMoves));
    assert_eq!(end.rule, "GIVE: no pieces or no moves wins");
}

#[test]
fn anti_no_pieces_wins() {
    let end = outcome(&position("B:Wa1:B", Variant::Antidraughts)).expect("over");
    assert_eq!(
        (end.winner, end.reason),
        (Color::Black, EndReason::NoPieces)
    );
}

#[test]
fn anti_maximum_capture_as_in_international() {
    // d4x(e5)x(e7) takes two, d4x(c5) one: only the former (FMJD 4.13).
    let fen = "W:Wd4:Bc5,e5,e7";
    assert_eq!(
        moves(fen, Variant::Antidraughts),
        moves(fen, Variant::International)
    );
    assert_eq!(moves(fen, Variant::Antidraughts), ["32x23x12"]);
}

#[test]
fn anti_draws_by_repetition_only() {
    // King against king for 25 moves each: International draws (5 moves, 25 king moves);
    // antidraughts, as lidraughts plays it, only by repetition.
    let fen = "W:WKa3:BKj8";
    let cycle = ["a3-b2", "j8-i7", "b2-a3", "i7-j8"];
    let mut games = Vec::new();
    for variant in [Variant::International, Variant::Antidraughts] {
        let mut game = Game::new(position(fen, variant), RuleEdition::Classic);
        for _ in 0..12 {
            play(&mut game, &cycle);
        }
        play(&mut game, &["a3-b2", "j8-i7"]);
        games.push(game);
    }
    assert_eq!(
        automatic_draws(&games[0]),
        ["FMJD 5 moves", "FMJD 25 king moves"]
    );
    assert_eq!(automatic_draws(&games[1]), Vec::<&str>::new());
    let rules: Vec<_> = games[1].draws().into_iter().map(|d| d.rule).collect();
    assert_eq!(rules, ["FMJD threefold repetition"]);
}

// --- 80-square -----------------------------------------------------------------------

#[test]
fn r80_start_three_rows_of_five() {
    let start = Position::start(Variant::Russian80);
    assert_eq!(write_fen(&start), "W:W26-40:B1-15");
    assert_eq!(
        write_fen_styled(&start, FenStyle::Algebraic),
        "W:Wa3,c3,e3,g3,i3,b2,d2,f2,h2,j2,a1,c1,e1,g1,i1:\
         Bb8,d8,f8,h8,j8,a7,c7,e7,g7,i7,b6,d6,f6,h6,j6"
    );
    assert_eq!(
        moves("W:W26-40:B1-15", Variant::Russian80),
        [
            "a3-b4", "c3-b4", "c3-d4", "e3-d4", "e3-f4", "g3-f4", "g3-h4", "i3-h4", "i3-j4"
        ]
    );
}

#[test]
fn r80_king_flies_across_ten_files() {
    assert_eq!(
        moves("W:WKc1:Bj6", Variant::Russian80),
        [
            "c1-a3", "c1-b2", "c1-d2", "c1-e3", "c1-f4", "c1-g5", "c1-h6", "c1-i7", "c1-j8"
        ]
    );
}

#[test]
fn r80_ru_1_5_15_promotes_and_continues_capturing() {
    // Crowned on f8 mid-capture, the new king flies on over h6 (RU 1.5.15).
    let fen = "W:Wd6:Be7,h6";
    assert_eq!(moves(fen, Variant::Russian80), ["d6:f8:i5", "d6:f8:j4"]);
    let pos = position(fen, Variant::Russian80);
    let next = pos
        .play(&parse_move("d6:j4", &pos).expect("capture"))
        .expect("legal");
    assert!(is_king_on(&next, "j4"));
}

// --- Diagonal ------------------------------------------------------------------------

#[test]
fn diag_start_in_triangles_beside_the_empty_main_road() {
    let start = Position::start(Variant::Diagonal);
    assert_eq!(
        write_fen_styled(&start, FenStyle::Algebraic),
        "W:Wh6,g5,f4,h4,e3,g3,d2,f2,h2,c1,e1,g1:Bb8,d8,f8,a7,c7,e7,b6,d6,a5,c5,b4,a3"
    );
    assert_eq!(
        moves(&write_fen(&start), Variant::Diagonal),
        ["c1-b2", "d2-c3", "e3-d4", "f4-e5", "g5-f6", "h6-g7"]
    );
}

#[test]
fn diag_a_man_stepping_onto_the_main_road_is_taken() {
    let mut game = Game::new(Position::start(Variant::Diagonal), RuleEdition::Classic);
    play(&mut game, &["c1-b2"]);
    let fen = write_fen(game.position());
    // The black man on a3 must jump to the vacated c1 and is crowned there (RU 1.4.4).
    assert_eq!(moves(&fen, Variant::Diagonal), ["a3:c1"]);
    play(&mut game, &["a3:c1"]);
    assert!(is_king_on(game.position(), "c1"));
}

// --- Every new variant ---------------------------------------------------------------

const NEW: [Variant; 7] = [
    Variant::Brazilian,
    Variant::Pool,
    Variant::Italian,
    Variant::Giveaway,
    Variant::Antidraughts,
    Variant::Russian80,
    Variant::Diagonal,
];

#[test]
fn start_fens_round_trip_in_both_styles() {
    for v in NEW {
        let start = Position::start(v);
        for style in [FenStyle::Numeric, FenStyle::Algebraic] {
            let fen = write_fen_styled(&start, style);
            assert_eq!(parse_fen(&fen, v), Ok(start), "{v} {fen}");
        }
    }
}

#[test]
fn pdn_game_types() {
    let types: Vec<Option<u32>> = NEW.iter().map(|v| v.game_type()).collect();
    assert_eq!(
        types,
        [Some(26), Some(23), Some(22), None, None, None, None]
    );
}

#[test]
fn cli_moves_and_perft_accept_every_new_name() {
    let exe = env!("CARGO_BIN_EXE_draughts-arbiter");
    for v in NEW {
        let out = Command::new(exe)
            .args(["moves", "--variant", v.name()])
            .output()
            .expect("run moves");
        assert!(out.status.success(), "moves {v}");
        let listed = String::from_utf8_lossy(&out.stdout).lines().count();
        assert_eq!(listed, Position::start(v).legal_moves().len(), "moves {v}");
        let out = Command::new(exe)
            .args(["perft", "--variant", v.name(), "--depth", "3"])
            .output()
            .expect("run perft");
        assert!(out.status.success(), "perft {v}");
        let text = String::from_utf8_lossy(&out.stdout);
        let expected = format!(
            "perft 3 {}",
            draughts_arbiter::rules::perft(&Position::start(v), 3, true)
        );
        assert!(text.lines().any(|l| l == expected), "perft {v}: {text}");
    }
}
