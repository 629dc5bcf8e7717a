//! Russian towers (stolbovye shashki), hand-built rule tests. Rules: RULES.md TOW row;
//! seed 000 "turnuri rusești"; the decisions documented on `TOWERS` in
//! `src/rules/variant.rs` (captured piece to the bottom of the capturing tower; no tower
//! jumped twice, RU 1.5.9; towers counted as one piece in the RU 1.9.1 draw rules).

use draughts_arbiter::game::{
    Actor, BoardInput, Command, GameError, GameEvent, GameSettings, Now, Session,
};
use draughts_arbiter::notation::fen::{FenError, FenStyle, parse_fen, write_fen, write_fen_styled};
use draughts_arbiter::notation::movetext::parse_move;
use draughts_arbiter::notation::pdn::read_games;
use draughts_arbiter::notation::replay::{ReplayFailure, replay_game};
use draughts_arbiter::notation::square::parse_square;
use draughts_arbiter::rules::game::outcome;
use draughts_arbiter::rules::{
    Color, DrawMode, EndReason, Game, Position, PositionError, RuleEdition, Variant,
};

use Color::{Black, White};

const V: Variant = Variant::Towers;

fn pos(fen: &str) -> Position {
    parse_fen(fen, V).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn play(p: &Position, text: &str) -> Position {
    let mv = parse_move(text, p).unwrap_or_else(|e| panic!("{text}: {e}"));
    p.play(&mv).expect("legal")
}

fn alg(p: &Position) -> String {
    write_fen_styled(p, FenStyle::Algebraic)
}

fn beneath(p: &Position, sq: &str) -> Vec<Color> {
    p.beneath(parse_square(sq, V).expect("square"))
}

fn top(p: &Position, sq: &str) -> Option<(Color, bool)> {
    p.piece_at(parse_square(sq, V).expect("square"))
}

#[test]
fn tow_variant_is_named_towers_and_starts_as_russian() {
    assert_eq!("towers".parse::<Variant>(), Ok(V));
    assert_eq!(V.game_type(), None, "no PDN GameType exists");
    assert_eq!(
        write_fen(&Position::start(V)),
        write_fen(&Position::start(Variant::Russian))
    );
    assert_eq!(Position::start(V).towers(), 0);
}

#[test]
fn tow_stacks_keep_the_position_small_and_copy() {
    // The stacks are three words, zero in every other variant (src/rules/position.rs).
    fn copy<T: Copy>() {}
    copy::<Position>();
    assert!(std::mem::size_of::<Position>() <= 48);
    // The API names the variant VARIANT_TOWERS (= 11) both ways.
    use draughts_arbiter::api::{convert, pb};
    assert_eq!(convert::variant(pb::Variant::Towers as i32), Ok(V));
    assert_eq!(convert::variant_pb(V), pb::Variant::Towers);
    assert_eq!(pb::Variant::Towers as i32, 11);
}

#[test]
fn tow_a_captured_piece_goes_under_the_capturing_tower() {
    let p = play(&pos("W:Wc3:Bd4,h8"), "c3:e5");
    assert_eq!(top(&p, "e5"), Some((White, false)));
    assert_eq!(beneath(&p, "e5"), vec![Black]);
    assert_eq!(top(&p, "d4"), None, "a lone piece leaves its square");
    assert_eq!(alg(&p), "B:We5(b):Bh8");
    assert_eq!(p.piece_count(Black), 2);
    assert_eq!(p.piece_count(White), 1);
}

#[test]
fn tow_several_captured_pieces_go_under_in_capture_order_at_the_bottom() {
    // The white tower c3 (a black man beneath) takes d4 (a black king over a white man)
    // and then f6; the pieces taken go beneath its own stack, the first taken first, all
    // as men (the king too).
    let p = play(&pos("W:Wc3(b):BKd4(w),f6,a7"), "c3:e5:g7");
    assert_eq!(top(&p, "g7"), Some((White, false)));
    assert_eq!(beneath(&p, "g7"), vec![Black, Black, Black]);
    // d4 lost only its top; the white man beneath is free again and owns d4.
    assert_eq!(top(&p, "d4"), Some((White, false)));
    assert_eq!(beneath(&p, "d4"), Vec::<Color>::new());
    assert_eq!(top(&p, "f6"), None);
}

#[test]
fn tow_a_captured_tower_loses_only_its_top_and_the_revealed_piece_decides_its_colour() {
    // d4: black on top of white on top of black.
    let p = play(&pos("W:Wc3:Bd4(wb),h8"), "c3:e5");
    assert_eq!(
        top(&p, "d4"),
        Some((White, false)),
        "the white man below takes over"
    );
    assert_eq!(beneath(&p, "d4"), vec![Black]);
    // A tower of one colour stays that colour.
    let p = play(&pos("W:Wc3:Bd4(bb),h8"), "c3:e5");
    assert_eq!(top(&p, "d4"), Some((Black, false)));
    assert_eq!(beneath(&p, "d4"), vec![Black]);
}

#[test]
fn tow_a_king_captured_and_freed_again_is_a_man() {
    // Black takes the white king d4 (it goes under the black man, now on c3) …
    let p = play(&pos("B:WKd4,d2,e1:Be5,h8"), "e5:c3");
    assert_eq!(beneath(&p, "c3"), vec![White]);
    assert_eq!(p.kings(), 0);
    // … and White frees it by taking c3's top: it comes back a man (seed 000).
    let p = play(&p, "d2:b4");
    assert_eq!(top(&p, "c3"), Some((White, false)));
    assert_eq!(p.kings(), 0);
    assert_eq!(top(&p, "b4"), Some((White, false)));
    assert_eq!(beneath(&p, "b4"), vec![Black]);
}

#[test]
fn tow_a_tower_moves_and_is_crowned_by_its_top() {
    // A white man over two black men moves forward as a man, the whole tower with it …
    let p = pos("W:Wc5(bb):Bh8");
    let moves = p.legal_moves();
    assert_eq!(moves.len(), 2, "a man's two forward steps");
    let p = play(&p, "c5-d6");
    assert_eq!(beneath(&p, "d6"), vec![Black, Black]);
    assert_eq!(top(&p, "c5"), None);
    // … is crowned by its top on the last rank; the pieces beneath stay men.
    let p = play(&play(&pos("W:Wc7(bb):Bh4"), "c7-d8"), "h4-g3");
    assert_eq!(top(&p, "d8"), Some((White, true)));
    assert_eq!(beneath(&p, "d8"), vec![Black, Black]);
    // A king tower flies (RU 1.4.x kings): 7 squares along the long diagonal from a1.
    let p = pos("W:WKa1(b):Bh6");
    assert_eq!(p.legal_moves().len(), 7);
    // A black-topped tower over white men moves as a black man: forward for Black.
    let p = pos("B:Wa1:Bd4(ww)");
    let mut to: Vec<String> = p
        .legal_moves()
        .iter()
        .map(|m| draughts_arbiter::notation::square::square_name(m.to(), V))
        .collect();
    to.sort();
    assert_eq!(to, vec!["c3", "e3"]);
}

#[test]
fn tow_ru_1_5_9_a_tower_is_not_jumped_twice_in_one_capture() {
    // The white man d2 runs round the ring c3, c5, e5, e3 (backwards too, RU 1.5.x) and
    // is back on d2 after four jumps. e3 and c3 still hold a black man each, but neither
    // may be jumped again in the same capture: the capture ends there.
    let p = pos("W:Wd2:Bc3(b),e3(b),c5,e5");
    let moves = p.legal_moves();
    assert_eq!(moves.len(), 1, "{moves:?}");
    let m = &moves[0];
    assert_eq!(m.capture_count(), 4);
    assert_eq!(m.to(), m.from());
    assert!(
        p.legal_moves_all_paths()
            .iter()
            .all(|m| m.capture_count() == 4)
    );
    let after = p.play(m).expect("legal");
    assert_eq!(beneath(&after, "d2"), vec![Black; 4]);
    assert_eq!(top(&after, "c3"), Some((Black, false)));
    assert_eq!(top(&after, "e3"), Some((Black, false)));
    assert_eq!(top(&after, "c5"), None);
}

#[test]
fn tow_ru_1_5_15_a_man_crowned_mid_capture_goes_on_as_a_king() {
    // The white tower f6 takes e7 and lands on d8, is crowned there and goes on at once
    // as a flying king over c7, to b6 or a5 (two moves); its top is the king.
    let p = pos("W:Wf6(b):Be7,c7,h2");
    assert_eq!(p.legal_moves().len(), 2);
    let after = play(&p, "f6:d8:b6");
    assert_eq!(alg(&after), "B:WKb6(bbb):Bh2");
}

#[test]
fn tow_ru_1_8_a_side_with_no_tower_on_top_loses() {
    // Black still has a man, but only beneath a white top: no piece of its own to move.
    let p = play(&pos("W:Wc3:Bd4"), "c3:e5");
    let end = outcome(&p).expect("game over");
    assert_eq!(end.winner, White);
    assert_eq!(end.reason, EndReason::NoPieces);
    assert_eq!(end.rule, "TOW: RU 1.8");
    // A black tower that cannot move loses too.
    let end = outcome(&pos("B:Wb2,c1:Ba3(ww)")).expect("blocked");
    assert_eq!((end.winner, end.reason), (White, EndReason::NoMoves));
    // A freed piece of the side to move keeps the game going.
    assert_eq!(outcome(&pos("B:We5(b),d6:Bh8")), None);
}

#[test]
fn tow_fen_stack_extension_reads_writes_and_refuses_clearly() {
    let p = pos("W:WKc3(bw),21:Bf6(w),1-3");
    assert_eq!(beneath(&p, "c3"), vec![Black, White]);
    assert_eq!(beneath(&p, "f6"), vec![White]);
    assert_eq!(write_fen(&p), "W:W21,K22(bw):B1-3,11(w)");
    assert_eq!(alg(&p), "W:Wa3,Kc3(bw):Bb8,d8,f8,f6(w)");
    assert_eq!(parse_fen(&write_fen(&p), V), Ok(p));
    assert_eq!(parse_fen(&alg(&p), V), Ok(p));
    // A plain Russian FEN is a towers FEN with lone pieces.
    assert_eq!(pos("W:W21-32:B1-12"), Position::start(V));
    for bad in [
        "W:Wc3(x):Bh8",
        "W:Wc3(b:Bh8",
        "W:Wc3():Bh8",
        "W:W21-23(b):B1",
    ] {
        let e = parse_fen(bad, V).expect_err(bad);
        assert!(matches!(e, FenError::BadStack(_)), "{bad}: {e}");
        assert!(e.to_string().contains("e.g. c3(bw)"), "{e}");
    }
    assert_eq!(
        parse_fen("W:Wc3(b):Bh8", Variant::Russian),
        Err(FenError::Position(PositionError::StackNotAllowed {
            square: 22
        }))
    );
    let e = parse_fen("W:Wc3(bbbbbbbbbbbb):Bh8", V).expect_err("13 black");
    assert_eq!(
        e,
        FenError::Position(PositionError::TooManyPieces {
            color: Black,
            count: 13
        })
    );
}

#[test]
fn tow_stacks_are_part_of_the_position_and_its_hash() {
    let a = pos("W:WKa1(b):BKh6");
    let b = pos("W:WKa1(w):BKh6");
    let c = pos("W:WKa1:BKh6");
    assert_ne!(a, b);
    assert_ne!(a, c);
    assert_ne!(a.hash(), b.hash());
    assert_ne!(a.hash(), c.hash());
    assert_eq!(a.hash(), pos("W:WKa1(b):BKh6").hash());
    // RU 1.9.2: repetition counts the same tops with the same stacks.
    let mut g = Game::new(a, RuleEdition::Classic);
    for m in [
        "a1-b2", "h6-g5", "b2-a1", "g5-h6", "a1-b2", "h6-g5", "b2-a1", "g5-h6",
    ] {
        let mv = parse_move(m, g.position()).expect("move");
        g.play(&mv).expect("legal");
    }
    assert_eq!(g.repetitions(), 3);
    assert_eq!(
        g.position().beneath(parse_square("a1", V).expect("a1")),
        vec![Black]
    );
}

fn automatic(g: &Game) -> Vec<&'static str> {
    g.draws()
        .into_iter()
        .filter(|d| d.mode == DrawMode::Automatic)
        .map(|d| d.rule)
        .collect()
}

#[test]
fn tow_ru_1_9_1_c_a_tower_counts_as_one_piece() {
    // Three king towers against one king tower of three pieces: RU 1.9.1(c) counts the
    // towers (the units that move and fight), so this is three kings against a lone king
    // and White has 15 moves to take it.
    let mut g = Game::new(pos("W:WKc1(ww),Ke1,Kg1(b):BKa7(bb)"), RuleEdition::Classic);
    let cycle = ["c1-d2", "a7-b8", "d2-c1", "b8-a7"];
    for ply in 1..=30 {
        let mv = parse_move(cycle[(ply - 1) % 4], g.position()).expect("move");
        g.play(&mv).expect("legal");
        let fired = automatic(&g).contains(&"RU 1.9.1(c)");
        // White's 15th move is ply 29.
        assert_eq!(fired, ply >= 29, "ply {ply}");
    }
}

#[test]
fn tow_ru_1_9_1_d_counts_towers_not_the_pieces_in_them() {
    // Both sides have kings; two towers against one (2-3 pieces by RU 1.9.1(d)) though
    // the towers hold seven pieces: the 5-move limit applies.
    let mut g = Game::new(pos("W:WKc1(bb),h2(w):BKa7(ww)"), RuleEdition::Classic);
    let cycle = ["c1-d2", "a7-b8", "d2-c1", "b8-a7"];
    for ply in 1..=10 {
        let mv = parse_move(cycle[(ply - 1) % 4], g.position()).expect("move");
        g.play(&mv).expect("legal");
    }
    assert!(
        automatic(&g).contains(&"RU 1.9.1(d)"),
        "{:?}",
        automatic(&g)
    );
}

// ---- Session, board input, PDN replay ------------------------------------------------

/// The opening 1. c3-d4 f6-e5 2. d4:f6 g7:e5: White's man takes e5 and stands on f6 over
/// it; Black takes that tower's top, so f6 is Black's again (the freed man) and e5 is a
/// black man over a white one.
const OPENING: [(Color, &str); 4] = [
    (White, "c3-d4"),
    (Black, "f6-e5"),
    (White, "d4:f6"),
    (Black, "g7:e5"),
];

fn create(variant: Variant) -> (Session, Vec<GameEvent>) {
    let settings = GameSettings::new(variant);
    let arb = Actor::Arbiter("a".into());
    let (mut s, first) =
        Session::create(settings, None, arb.clone(), Now::from_mono(0)).expect("create");
    let mut log = vec![first];
    log.extend(
        s.handle(&arb, Command::Start, Now::from_mono(0))
            .expect("start"),
    );
    (s, log)
}

#[test]
fn tow_session_plays_a_tower_capture_and_replays_from_its_events() {
    let (mut s, mut log) = create(V);
    for (i, (side, text)) in OPENING.iter().enumerate() {
        let ev = s
            .handle(
                &Actor::Player(*side),
                Command::SubmitMove {
                    side: *side,
                    notation: (*text).into(),
                    offer_draw: false,
                },
                Now::from_mono(1000 * (i as u64 + 1)),
            )
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        log.extend(ev);
    }
    let p = *s.position();
    assert_eq!(top(&p, "f6"), Some((Black, false)));
    assert_eq!(beneath(&p, "e5"), vec![White]);
    assert!(s.view(4000).fen.contains("(w)"), "{}", s.view(4000).fen);
    let rebuilt = Session::replay(&log).expect("replays");
    assert_eq!(rebuilt, s);
}

#[test]
fn tow_board_input_is_refused_with_the_reason() {
    let (mut s, _) = create(V);
    let before = s.clone();
    let e = s
        .handle(
            &Actor::Board("b1".into()),
            Command::Board(BoardInput::Touch(22)),
            Now::from_mono(10),
        )
        .expect_err("refused");
    assert!(matches!(e, GameError::NotAllowed { .. }), "{e:?}");
    assert_eq!(e.rule(), Some("TOW"));
    assert!(e.to_string().contains("stacks"), "{e}");
    assert_eq!(s, before);
}

#[test]
fn tow_pdn_game_replays_with_the_variant_named() {
    let text = "[Event \"t\"]\n[Result \"*\"]\n\n1. c3-d4 f6-e5 2. d4:f6 g7:e5 *\n";
    let games = read_games(text);
    let game = games[0].as_ref().expect("pdn");
    let g = replay_game(game, Some(V)).expect("replays as towers");
    assert_eq!(g.moves().len(), 4);
    assert_eq!(beneath(g.position(), "e5"), vec![White]);
    assert_eq!(top(g.position(), "f6"), Some((Black, false)));
    // No GameType exists for towers: without the variant named, replay says so.
    assert!(matches!(
        replay_game(game, None),
        Err(ReplayFailure::NoVariant(_))
    ));
    // The same record is a different game in Russian: there f6 is empty after g7:e5.
    let russian = replay_game(game, Some(Variant::Russian)).expect("russian");
    assert_eq!(
        russian
            .position()
            .piece_at(parse_square("f6", Variant::Russian).expect("f6")),
        None
    );
}
