//! Draw bookkeeping: RU 1.9.1 (c)–(g), the 2013 edition 7.2.x, FMJD and English rules.
//! "N moves" = N by each side; "its 15th / 5th move" = the stronger side's (RULES.md).

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::notation::movetext::parse_move;
use draughts_arbiter::rules::{Color, DrawMode, Game, RuleEdition, Variant};

fn game(fen: &str, variant: Variant, edition: RuleEdition) -> Game {
    Game::new(parse_fen(fen, variant).expect("test fen"), edition)
}

fn play(g: &mut Game, text: &str) {
    let mv = parse_move(text, g.position()).expect("legal move");
    g.play(&mv).expect("legal");
}

fn automatic(g: &Game) -> Vec<&'static str> {
    g.draws()
        .into_iter()
        .filter(|d| d.mode == DrawMode::Automatic)
        .map(|d| d.rule)
        .collect()
}

/// Plays `cycle` over and over until `plies` plies are made, checking after each ply that
/// no automatic draw fired before `fires_at` and that `rule` fires from then on.
fn shuffle(g: &mut Game, cycle: &[&str], plies: usize, rule: &str, fires_at: usize) {
    for ply in 1..=plies {
        play(g, cycle[(ply - 1) % cycle.len()]);
        let rules = automatic(g);
        if ply < fires_at {
            assert!(!rules.contains(&rule), "{rule} fired early at ply {ply}");
        } else {
            assert!(
                rules.contains(&rule),
                "{rule} not fired at ply {ply}: {rules:?}"
            );
        }
    }
}

#[test]
fn ru_1_9_1_c_three_kings_against_a_lone_king_15_moves() {
    // The lone king stays off the main road, so (e) does not apply.
    let mut g = game(
        "W:WKc1,Ke1,Kg1:BKa7",
        Variant::Russian,
        RuleEdition::Classic,
    );
    let cycle = ["c1-d2", "a7-b8", "d2-c1", "b8-a7"];
    // White's 15th move is ply 29.
    shuffle(&mut g, &cycle, 30, "RU 1.9.1(c)", 29);
}

#[test]
fn ru_1_9_1_d_both_sides_have_kings_2_3_pieces_5_moves() {
    let mut g = game("W:WKc1,h2:BKa7", Variant::Russian, RuleEdition::Classic);
    let cycle = ["c1-d2", "a7-b8", "d2-c1", "b8-a7"];
    // 5 moves by each side: ply 10.
    shuffle(&mut g, &cycle, 12, "RU 1.9.1(d)", 10);
}

#[test]
fn ru_1_9_1_d_man_moves_count_captures_restart() {
    // Moving a man does not change the balance of forces: the count goes on.
    let mut g = game("W:WKc1,a3:BKa7", Variant::Russian, RuleEdition::Classic);
    for m in [
        "c1-d2", "a7-b8", "d2-c1", "b8-a7", "c1-d2", "a7-b8", "d2-c1", "b8-a7",
    ] {
        play(&mut g, m);
    }
    play(&mut g, "a3-b4");
    assert!(!automatic(&g).contains(&"RU 1.9.1(d)"));
    play(&mut g, "a7-b8");
    assert_eq!(g.counters().moves_since_change, [5, 5]);
    assert!(automatic(&g).contains(&"RU 1.9.1(d)"));
    // A capture changes the balance and every count starts again.
    let mut g = game("W:WKc1,e3:BKh8,g5", Variant::Russian, RuleEdition::Classic);
    for m in ["c1-d2", "h8-g7", "d2-c1", "g5-f4"] {
        play(&mut g, m);
    }
    assert_eq!(g.counters().moves_since_change, [2, 2]);
    play(&mut g, "e3:g5");
    assert_eq!(g.counters().moves_since_change, [0, 0]);
}

#[test]
fn ru_1_9_1_e_three_pieces_against_a_lone_king_on_the_main_road() {
    // The lone black king stays on the main road (a1-h8): drawn after White's 5th move.
    let fen = "W:WKc1,Ke1,a3:BKd4";
    let mut g = game(fen, Variant::Russian, RuleEdition::Classic);
    let cycle = ["c1-d2", "d4-e5", "d2-c1", "e5-d4"];
    shuffle(&mut g, &cycle, 10, "RU 1.9.1(e)", 9);
    // Decision: once the lone king is off the road, (e) no longer applies to this balance.
    let mut g = game(fen, Variant::Russian, RuleEdition::Classic);
    play(&mut g, "c1-d2");
    play(&mut g, "d4-c5");
    assert!(g.counters().left_main_road);
    for m in [
        "d2-c1", "c5-d4", "c1-d2", "d4-e5", "d2-c1", "e5-d4", "c1-d2", "d4-e5",
    ] {
        play(&mut g, m);
    }
    assert!(!automatic(&g).contains(&"RU 1.9.1(e)"));
}

#[test]
fn ru_1_9_1_f_fifteen_moves_with_kings_only() {
    // Nine pieces: (d) does not apply; only kings move, so (f) fires after 15 moves each.
    let mut g = game(
        "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7",
        Variant::Russian,
        RuleEdition::Classic,
    );
    let cycle = ["c1-d2", "h8-g7", "d2-c1", "g7-h8"];
    shuffle(&mut g, &cycle, 31, "RU 1.9.1(f)", 30);
}

#[test]
fn ru_1_9_1_g_threefold_repetition_is_claimable_not_automatic() {
    let mut g = game(
        "W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7",
        Variant::Russian,
        RuleEdition::Classic,
    );
    for m in [
        "c1-d2", "h8-g7", "d2-c1", "g7-h8", "c1-d2", "h8-g7", "d2-c1",
    ] {
        play(&mut g, m);
        assert!(g.draws().is_empty());
    }
    play(&mut g, "g7-h8");
    assert_eq!(g.repetitions(), 3);
    assert!(g.repeated(3) && !g.repeated(4));
    let d = g.draws();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].rule, "RU 1.9.1(g)");
    assert_eq!(d[0].mode, DrawMode::Claimable);
}

#[test]
fn ru_2013_7_2_8_two_pieces_against_a_lone_king_5_moves() {
    let mut g = game("W:WKc1,h2:BKa7", Variant::Russian, RuleEdition::Edition2013);
    let cycle = ["c1-d2", "a7-b8", "d2-c1", "b8-a7"];
    // White's 5th move is ply 9; the classic 5-move bracket (d) is gone in 2013.
    shuffle(&mut g, &cycle, 10, "RU-2013 7.2.8", 9);
    assert!(!automatic(&g).contains(&"RU 1.9.1(d)"));
    assert!(g.ru2013_not_played_out());
}

#[test]
fn ru_2013_7_2_6_keeps_only_the_30_and_60_move_brackets() {
    let mut g = game(
        "W:WKc1,Ke1,h2:BKa7,h6",
        Variant::Russian,
        RuleEdition::Edition2013,
    );
    let cycle = ["c1-d2", "a7-b8", "d2-c1", "b8-a7"];
    shuffle(&mut g, &cycle, 60, "RU-2013 7.2.6", 60);
}

#[test]
fn fmjd_25_king_moves_each() {
    let mut g = game(
        "W:WK47,45:BK1,10",
        Variant::International,
        RuleEdition::Classic,
    );
    let cycle = ["47-42", "1-6", "42-47", "6-1"];
    shuffle(&mut g, &cycle, 51, "FMJD 25 king moves", 50);
}

#[test]
fn fmjd_three_pieces_against_a_lone_king_16_moves() {
    let mut g = game(
        "W:WK47,K48,K49:BK1",
        Variant::International,
        RuleEdition::Classic,
    );
    let cycle = ["47-42", "1-6", "42-47", "6-1"];
    shuffle(&mut g, &cycle, 33, "FMJD 16 moves", 32);
}

#[test]
fn fmjd_two_pieces_against_a_lone_king_5_moves() {
    let mut g = game(
        "W:WK47,K48:BK1",
        Variant::International,
        RuleEdition::Classic,
    );
    let cycle = ["47-42", "1-6", "42-47", "6-1"];
    shuffle(&mut g, &cycle, 11, "FMJD 5 moves", 10);
}

/// Plays `moves` in order and returns the 1-based ply after which `rule` first fires
/// automatically, if it does.
fn first_firing(g: &mut Game, moves: &[&str], rule: &str) -> Option<usize> {
    for (i, m) in moves.iter().enumerate() {
        play(g, m);
        if automatic(g).contains(&rule) {
            return Some(i + 1);
        }
    }
    None
}

#[test]
fn fmjd_5_move_count_not_restarted_by_capture_inside_class() {
    // RULES.md, FMJD draws, "Counting": a king and a man against a lone king becoming king
    // against king (15x42 takes the man on 38) stays in the 5-move count, which began with
    // the record: 5 moves each at ply 10, not 5 moves each after the capture (ply 17).
    let mut g = game(
        "W:WK47:BK5,27",
        Variant::International,
        RuleEdition::Classic,
    );
    let moves = [
        "47-33", "27-32", "33-42", "5-14", "42-15", "32-38", "15x42", "14-9", "42-26", "9-4",
    ];
    assert_eq!(first_firing(&mut g, &moves, "FMJD 5 moves"), Some(10));
    assert_eq!(g.counters().class_moves, [5, 5]);
    // A count restarted by the capture would stand at one move and two.
    assert_eq!(g.counters().moves_since_change, [1, 2]);
}

#[test]
fn fmjd_5_move_count_not_restarted_by_promotion_inside_class() {
    // RULES.md, FMJD draws, "Counting": a king and a man against a lone king becoming two
    // kings against a lone king (9-3 crowns the man) stays in the 5-move count.
    let mut g = game(
        "W:WK46,9:BK45",
        Variant::International,
        RuleEdition::Classic,
    );
    let moves = [
        "46-41", "45-50", "9-3", "50-45", "41-46", "45-50", "46-41", "50-45", "41-46", "45-50",
        "46-41",
    ];
    assert_eq!(first_firing(&mut g, &moves, "FMJD 5 moves"), Some(10));
}

#[test]
fn fmjd_capture_from_16_move_class_into_5_move_class_starts_5_move_count() {
    // RULES.md, FMJD draws, "Counting": two kings and a man against a lone king (16-move
    // class); the lone king takes the man (10x37, ply 2) and the 5-move count starts with
    // that capture: 5 moves each after it, ply 12.
    let mut g = game(
        "W:WK49,K50,28:BK10",
        Variant::International,
        RuleEdition::Classic,
    );
    let moves = [
        "50-45", "10x37", "45-50", "37-41", "50-45", "41-37", "45-50", "37-41", "50-45", "41-37",
        "45-50", "37-41", "50-45",
    ];
    assert_eq!(first_firing(&mut g, &moves, "FMJD 5 moves"), Some(12));
    assert_eq!(g.counters().class_moves, [5, 5]);
}

#[test]
fn fmjd_16_move_count_starts_with_the_move_into_its_class() {
    // RULES.md, FMJD draws, "Counting": three men against a lone king is no class; the
    // move 8-2 that crowns a man brings the game into the 16-move class, and the count
    // starts there (the three moves each made before it do not count): 16 moves each
    // after it.
    let mut g = game(
        "W:W13,14,15:BK50",
        Variant::International,
        RuleEdition::Classic,
    );
    for m in ["13-8", "50-45", "14-9", "45-50", "15-10", "50-45", "8-2"] {
        play(&mut g, m);
        assert!(automatic(&g).is_empty());
    }
    assert_eq!(g.counters().class_moves, [0, 0]);
    let cycle = ["45-50", "2-8", "50-45", "8-2"];
    shuffle(&mut g, &cycle, 33, "FMJD 16 moves", 32);
}

#[test]
fn draw_history_gives_the_first_ply_of_each_rule() {
    // The FMJD 5-move count of the repro (ply 10), then the position after ply 8 (kings on
    // 42 and 9, White to move) a third time at ply 16: FMJD threefold repetition.
    let mut g = game(
        "W:WK47:BK5,27",
        Variant::International,
        RuleEdition::Classic,
    );
    for m in [
        "47-33", "27-32", "33-42", "5-14", "42-15", "32-38", "15x42", "14-9", "42-26", "9-4",
        "26-42", "4-9", "42-26", "9-4", "26-42", "4-9",
    ] {
        play(&mut g, m);
    }
    let history: Vec<(usize, &str, DrawMode)> = g
        .draw_history()
        .into_iter()
        .map(|a| (a.ply, a.verdict.rule, a.verdict.mode))
        .collect();
    assert_eq!(
        history,
        [
            (10, "FMJD 5 moves", DrawMode::Automatic),
            (16, "FMJD threefold repetition", DrawMode::Claimable),
        ]
    );
    // A start position already drawn by its rule shows at ply 0.
    let g = game("W:WKd4:Be7", Variant::Turkish, RuleEdition::Classic);
    let history = g.draw_history();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].ply, history[0].verdict.rule),
        (0, "TR 19(b) one piece each")
    );
}

#[test]
fn en_40_move_rule_counts_from_the_arbiters_request() {
    let mut g = game("B:WK29,K30:BK1", Variant::English, RuleEdition::Classic);
    play(&mut g, "1-6");
    assert!(automatic(&g).is_empty());
    g.start_forty_move_count(Color::White);
    let cycle = ["29-25", "6-1", "25-29", "1-6"];
    // White's 40th move after the request is ply 79.
    shuffle(&mut g, &cycle, 80, "EN 40-move rule", 79);
}

#[test]
fn outcome_no_pieces_and_no_moves_lose_ru_1_8() {
    let g = game("W:W:BKa7", Variant::Russian, RuleEdition::Classic);
    let o = g.outcome().expect("no white pieces");
    assert_eq!(o.winner, Color::Black);
    assert_eq!(o.rule, "RU 1.8");
    // White man on a7 blocked by b8 (a black man on b8 cannot move either, but it is
    // White to move).
    let g = game("W:Wh2:Bg3,f4", Variant::Russian, RuleEdition::Classic);
    let o = g.outcome().expect("blocked");
    assert_eq!(o.winner, Color::Black);
}

/// A small deterministic generator (Knuth's MMIX LCG) for the random playouts below.
struct Lcg(u64);

impl Lcg {
    fn pick(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// RU 1.9.1(g): "the same position (same pieces on the same squares, same side to move)".
/// The game finds repetitions by Zobrist hash, only since the last capture or promotion,
/// and keeps the current position's legal moves from when it arose; random playouts in
/// every variant family (towers: captures keep the pieces on the board; Turkish: men
/// move sideways; corners: nothing is ever captured) check both against the plain
/// definitions at every ply.
#[test]
fn ru_1_9_1_g_repetitions_by_hash_equal_the_plain_count() {
    let variants = [
        Variant::Russian,
        Variant::International,
        Variant::English,
        Variant::Italian,
        Variant::Turkish,
        Variant::Frisian,
        Variant::Towers,
        Variant::Corners,
    ];
    let mut repeated = 0;
    for (seed, variant) in variants.into_iter().enumerate() {
        let mut rng = Lcg(seed as u64 + 1);
        let mut g = Game::new(
            draughts_arbiter::rules::Position::start(variant),
            RuleEdition::Classic,
        );
        for _ in 0..400 {
            let now = *g.position();
            assert_eq!(g.position_moves_all_paths(), now.legal_moves_all_paths());
            assert_eq!(g.position_moves(), now.legal_moves());
            let plain = g.positions().iter().filter(|p| **p == now).count();
            assert_eq!(g.repetitions(), plain, "{variant}");
            for times in 1..=plain + 1 {
                assert_eq!(g.repeated(times), plain >= times, "{variant} {times}");
            }
            assert_eq!(g.occurrences(&now), plain, "{variant}");
            let start = *g.start();
            let at_start = g.positions().iter().filter(|p| **p == start).count();
            assert_eq!(g.occurrences(&start), at_start, "{variant}");
            if plain > 1 {
                repeated += 1;
            }
            let moves = g.legal_moves();
            if moves.is_empty() || g.outcome().is_some() {
                break;
            }
            // Half the time, go back to a position seen before when a move does.
            let back: Vec<_> = moves
                .iter()
                .filter(|m| {
                    let after = g.after(m).expect("a legal move");
                    g.positions().iter().any(|p| *p == after)
                })
                .copied()
                .collect();
            let mv = if !back.is_empty() && rng.pick(2) == 0 {
                back[rng.pick(back.len())]
            } else {
                moves[rng.pick(moves.len())]
            };
            let after = g.after(&mv).expect("a legal move");
            let expected = g.positions().iter().filter(|p| **p == after).count();
            assert_eq!(g.occurrences(&after), expected, "{variant}");
            g.play(&mv).expect("a legal move plays");
            assert_eq!(*g.position(), after);
        }
    }
    // The playouts do reach repeated positions, so the hash path is exercised.
    assert!(repeated > 0, "no position repeated in any playout");
}
