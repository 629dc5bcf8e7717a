//! Corners (ugolki), one test per rule, each named after it. Sources (see the `CORNERS`
//! rules in `src/rules/variant.rs`): RULES.md, CORN row, and seed 000 "Dame - colțuri"
//! (`corn_seed_…`); allforchildren.ru "Игра в уголки", rules 1-3 (`corn_1_…`,
//! `corn_2_…`, `corn_3_…`); the federation's rules where those say nothing (RU 1.8 for a
//! side without a move, RU 1.9.1(g) / 1.9.2 for repetition).
//!
//! Squares are algebraic: a1 is White's bottom-left corner, White starts on a1-c3 and
//! Black on f6-h8.

use std::process::Command as Process;

use draughts_arbiter::game::{
    Actor, Command, EndReason as SessionEnd, EventKind, GameSettings, MoveCountDraws, Now, Outcome,
    Session,
};
use draughts_arbiter::notation::fen::{FenStyle, parse_fen, write_fen, write_fen_styled};
use draughts_arbiter::notation::movetext::{MoveError, parse_move, write_move, write_move_full};
use draughts_arbiter::rules::{
    Color, DrawMode, EndReason, Game, Position, RuleEdition, Variant, perft,
};

const V: Variant = Variant::Corners;

fn pos(fen: &str) -> Position {
    parse_fen(fen, V).expect("test fen")
}

/// The legal moves from one square, every landing written, sorted.
fn moves_from(p: &Position, from: &str) -> Vec<String> {
    let mut out: Vec<String> = p
        .legal_moves()
        .iter()
        .map(|m| write_move_full(p, m))
        .filter(|m| m.starts_with(&format!("{from}-")))
        .collect();
    out.sort();
    out
}

fn game(fen: &str) -> Game {
    Game::new(pos(fen), RuleEdition::Classic)
}

fn play(g: &mut Game, text: &str) {
    let mv = parse_move(text, g.position()).expect("legal in the position");
    g.play(&mv).expect("legal in the game");
}

fn final_draw(g: &Game) -> Option<&'static str> {
    g.draws()
        .into_iter()
        .find(|d| d.mode == DrawMode::Final(EndReason::CornerFilled))
        .map(|d| d.rule)
}

#[test]
fn corn_seed_start_nine_men_each_in_opposite_3x3_corners_white_first() {
    let start = Position::start(V);
    assert_eq!(
        write_fen_styled(&start, FenStyle::Algebraic),
        "W:Wa3,b3,c3,a2,b2,c2,a1,b1,c1:Bf8,g8,h8,f7,g7,h7,f6,g6,h6"
    );
    assert_eq!(start.turn(), Color::White);
    assert_eq!(start.kings(), 0);
    assert_eq!(V.name(), "corners");
    assert_eq!("corners".parse::<Variant>(), Ok(V));
    assert_eq!(V.game_type(), None);
    // From the start only the front men move: six steps and six single jumps.
    let mut all: Vec<String> = start
        .legal_moves()
        .iter()
        .map(|m| write_move_full(&start, m))
        .collect();
    all.sort();
    assert_eq!(
        all,
        [
            "a2-a4", "a3-a4", "b1-d1", "b2-b4", "b2-d2", "b3-b4", "b3-d3", "c1-d1", "c2-c4",
            "c2-d2", "c3-c4", "c3-d3"
        ]
    );
}

#[test]
fn corn_seed_steps_go_to_an_orthogonal_neighbour_never_diagonally() {
    let p = pos("W:Wd4:Ba8");
    assert_eq!(moves_from(&p, "d4"), ["d4-c4", "d4-d3", "d4-d5", "d4-e4"]);
    // Backwards and sideways too: Black's man steps every way.
    let p = pos("B:Wa1:Be5");
    assert_eq!(moves_from(&p, "e5"), ["e5-d5", "e5-e4", "e5-e6", "e5-f5"]);
}

#[test]
fn corn_seed_jumps_over_own_and_enemy_pieces_to_the_free_square_behind() {
    // Own man on d5, enemy man on e4.
    let p = pos("W:Wd4,d5:Be4");
    assert_eq!(moves_from(&p, "d4"), ["d4-c4", "d4-d3", "d4-d6", "d4-f4"]);
    // No jump when the square behind is taken, or when the piece is not adjacent.
    let p = pos("W:Wd4,d5:Bd6,f4");
    assert_eq!(moves_from(&p, "d4"), ["d4-c4", "d4-d3", "d4-e4"]);
}

#[test]
fn corn_seed_a_jump_captures_nothing() {
    let p = pos("W:Wd4:Be4");
    let mv = parse_move("d4-f4", &p).expect("jump");
    assert!(!mv.is_capture());
    assert_eq!(mv.captured().count(), 0);
    let after = p.play(&mv).expect("legal");
    assert_eq!(write_fen_styled(&after, FenStyle::Algebraic), "B:Wf4:Be4");
    // Jumps are not compulsory: the steps stay legal beside them.
    assert!(moves_from(&p, "d4").contains(&"d4-d5".to_string()));
    assert!(!p.has_capture());
}

#[test]
fn corn_1_chains_of_jumps_turn_in_any_direction() {
    // d4 over d5 to d6, over e6 to f6, over f5 down to f4 ... and over c6 to b6.
    let p = pos("W:Wd4,d5,e6,c6:Bf5");
    assert_eq!(
        moves_from(&p, "d4"),
        [
            "d4-c4",
            "d4-d3",
            "d4-d6",
            "d4-d6-b6",
            "d4-d6-f6",
            "d4-d6-f6-f4",
            "d4-e4"
        ]
    );
    // The chain may stop anywhere: each landing is a move of its own.
    let mv = parse_move("d4-d6-f6-f4", &p).expect("the whole chain");
    assert_eq!(mv.landings().count(), 3);
    assert!(!mv.is_capture());
}

#[test]
fn corn_1_a_chain_never_revisits_a_square_nor_returns_to_its_start() {
    // A ring: d4 -> d6 (over d5) -> f6 (over e6) -> f4 (over f5) -> d4 (over e4).
    let p = pos("W:Wd4,d5,e6,f5,e4:Ba8");
    let from_d4 = moves_from(&p, "d4");
    // One move per end square, the start square is never an end, f6 is reached two ways
    // (via d6 and via f4) and listed once with the canonical route: fewest jumps, then
    // the landing nearer rank 8 first (d6 before f4).
    assert_eq!(from_d4, ["d4-c4", "d4-d3", "d4-d6", "d4-d6-f6", "d4-f4"]);
    // Either route may be written; both name the same move; a route through a square
    // twice, or one that is no chain of jumps, is refused.
    let canonical = parse_move("d4-d6-f6", &p).expect("canonical route");
    assert_eq!(parse_move("d4-f4-f6", &p), Ok(canonical));
    assert_eq!(parse_move("d4-f6", &p), Ok(canonical));
    let e = parse_move("d4-f4-f6-d6-f6", &p).expect_err("revisits f6");
    assert!(e.to_string().contains("(CORN moves)"), "{e}");
    let e = parse_move("d4-d5-f6", &p).expect_err("d5 is not a landing");
    assert!(matches!(e, MoveError::Illegal { .. }), "{e}");
    assert!(parse_move("d4-d4", &p).is_err());
    // Perft counts each end once (drop == keep).
    assert_eq!(perft(&p, 1, true), perft(&p, 1, false));
}

#[test]
fn corn_movetext_round_trips_and_refuses_capture_marks() {
    let p = pos("W:Wd4,d5,e6,c6:Bf5");
    for mv in p.legal_moves() {
        let short = write_move(&p, &mv);
        assert_eq!(short.matches('-').count(), 1, "{short}");
        assert_eq!(parse_move(&short, &p), Ok(mv), "{short}");
        let full = write_move_full(&p, &mv);
        assert_eq!(parse_move(&full, &p), Ok(mv), "{full}");
    }
    let e = parse_move("d4:d6", &p).expect_err("nothing is captured");
    assert_eq!(
        e.to_string(),
        "'d4:d6': nothing is captured: write the move with '-' (CORN moves)"
    );
    let e = parse_move("d4-e5", &p).expect_err("diagonal");
    assert_eq!(
        e.to_string(),
        "'d4-e5': not a legal move in this position (CORN moves)"
    );
    // Squares are algebraic only.
    assert!(parse_move("28-36", &p).is_err());
}

#[test]
fn corn_fen_men_only_and_round_trip() {
    for p in [Position::start(V), pos("B:Wd4,h8:Ba1,e5")] {
        for style in [FenStyle::Algebraic, FenStyle::Numeric] {
            let fen = write_fen_styled(&p, style);
            assert_eq!(parse_fen(&fen, V), Ok(p), "{fen}");
        }
        assert_eq!(parse_fen(&write_fen(&p), V), Ok(p));
    }
    // Men may stand on the far rank (nobody is crowned); kings do not exist.
    assert!(parse_fen("W:Wd8:Ba1", V).is_ok());
    let e = parse_fen("W:WKd4:Ba8", V).expect_err("no kings in corners");
    assert!(e.to_string().contains("no kings"), "{e}");
}

/// White (first): eight men in Black's corner, the ninth on f5 next to the empty f6.
/// Black: eight men in White's corner, the ninth on c4 next to the empty c3.
const BOTH_ONE_AWAY: &str = "W:Wg6,h6,f7,g7,h7,f8,g8,h8,f5:Ba1,b1,c1,a2,b2,c2,a3,b3,c4";

#[test]
fn corn_1_first_to_fill_the_opponents_corner_wins_second_player_at_once() {
    let mut g = game(BOTH_ONE_AWAY);
    play(&mut g, "f5-e5"); // White does not fill
    assert_eq!(g.outcome(), None);
    play(&mut g, "c4-c3"); // Black fills with as many moves as White made
    let end = g.outcome().expect("decided");
    assert_eq!(end.winner, Color::Black);
    assert_eq!(end.reason, EndReason::CornerFilled);
    assert_eq!(end.rule, "CORN 1: first to fill the opponent's corner");
}

#[test]
fn corn_1_equal_moves_second_player_gets_one_more_move_and_filling_draws() {
    let mut g = game(BOTH_ONE_AWAY);
    play(&mut g, "f5-f6"); // White fills first
    assert!(g.corner_filled(Color::White));
    assert_eq!(g.outcome(), None, "Black still has its move");
    assert_eq!(final_draw(&g), None);
    play(&mut g, "c4-c3"); // Black fills with the same number of moves
    assert_eq!(g.outcome(), None);
    assert_eq!(
        final_draw(&g),
        Some("CORN 1: both corners filled with equal moves")
    );
}

#[test]
fn corn_1_equal_moves_first_player_wins_when_the_second_does_not_fill() {
    let mut g = game(BOTH_ONE_AWAY);
    play(&mut g, "f5-f6");
    play(&mut g, "c4-d4");
    let end = g.outcome().expect("decided");
    assert_eq!(
        (end.winner, end.reason, end.rule),
        (
            Color::White,
            EndReason::CornerFilled,
            "CORN 1: first to fill the opponent's corner, equal moves"
        )
    );
    assert_eq!(final_draw(&g), None);
}

/// Plays `n` moves each: White d4-d5 / d5-d4, Black h1-h2 / h2-h1.
fn shuffle(g: &mut Game, n: u32) {
    for i in 0..n {
        play(g, if i % 2 == 0 { "d4-d5" } else { "d5-d4" });
        assert_eq!(g.outcome(), None, "after White's move {}", i + 1);
        play(g, if i % 2 == 0 { "h1-h2" } else { "h2-h1" });
        assert_eq!(g.outcome(), None, "after Black's move {}", i + 1);
    }
}

#[test]
fn corn_2_a_man_still_on_its_own_start_squares_after_40_moves_loses() {
    // White's a1 never leaves home; 40 moves each are allowed.
    let mut g = game("W:Wa1,d4:Bh1");
    shuffle(&mut g, 40);
    assert_eq!(g.moves_made(), [40, 40]);
    play(&mut g, "d4-d5"); // White's 41st move, a1 still at home
    let end = g.outcome().expect("decided");
    assert_eq!(
        (end.winner, end.reason, end.rule),
        (
            Color::Black,
            EndReason::HomeNotLeft,
            "CORN 2-3: a piece on its own start squares after 40 moves"
        )
    );
}

#[test]
fn corn_2_black_is_counted_by_its_own_moves() {
    // Black's h8 is still at home after Black's 40th move (allowed), and after its 41st.
    let mut g = game("W:Wd4:Bh8,h1");
    shuffle(&mut g, 39);
    play(&mut g, "d5-d4");
    play(&mut g, "h8-h7"); // Black's 40th move, still on its start squares
    assert_eq!(g.moves_made(), [40, 40]);
    assert_eq!(g.outcome(), None);
    play(&mut g, "d4-d5");
    assert_eq!(g.outcome(), None, "White has no man at home");
    play(&mut g, "h7-g7"); // Black's 41st move, g7 is home too
    let end = g.outcome().expect("decided");
    assert_eq!(
        (end.winner, end.reason),
        (Color::White, EndReason::HomeNotLeft)
    );
}

#[test]
fn corn_3_bringing_a_man_back_home_after_40_moves_loses() {
    let mut g = game("W:Wb4,d4:Bh1");
    // Going home early is allowed.
    play(&mut g, "b4-b3");
    play(&mut g, "h1-h2");
    play(&mut g, "b3-b4");
    play(&mut g, "h2-h1");
    shuffle(&mut g, 39);
    assert_eq!(g.moves_made(), [41, 41]);
    play(&mut g, "b4-b3"); // White's 42nd move goes home
    let end = g.outcome().expect("decided");
    assert_eq!(
        (end.winner, end.reason),
        (Color::Black, EndReason::HomeNotLeft)
    );
}

#[test]
fn corn_ru_1_8_a_side_without_a_legal_move_loses() {
    // a1 cannot step (a2, b1 taken) nor jump (a3, c1 taken).
    let g = game("W:Wa1:Ba2,b1,a3,c1");
    assert!(g.legal_moves().is_empty());
    let end = g.outcome().expect("decided");
    assert_eq!(
        (end.winner, end.reason, end.rule),
        (
            Color::Black,
            EndReason::NoMoves,
            "CORN: no legal move loses (RU 1.8)"
        )
    );
}

#[test]
fn corn_ru_1_9_1_g_threefold_repetition_is_claimable() {
    let mut g = game("W:Wd4:Bh1,h8");
    for _ in 0..2 {
        play(&mut g, "d4-d5");
        play(&mut g, "h1-h2");
        play(&mut g, "d5-d4");
        play(&mut g, "h2-h1");
    }
    assert_eq!(g.repetitions(), 3);
    let d = g.draws();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].mode, DrawMode::Claimable);
    assert_eq!(d[0].rule, "CORN threefold repetition (RU 1.9.1(g))");
}

fn session(fen: &str, f: impl FnOnce(&mut GameSettings)) -> Session {
    let mut settings = GameSettings::new(V);
    f(&mut settings);
    let (mut s, _created) = Session::create(
        settings,
        Some(fen),
        Actor::Arbiter("a".into()),
        Now::from_mono(0),
    )
    .expect("create");
    s.handle(
        &Actor::Arbiter("a".into()),
        Command::Start,
        Now::from_mono(0),
    )
    .expect("start");
    s
}

fn submit(
    s: &mut Session,
    side: Color,
    text: &str,
    t: u64,
) -> Vec<draughts_arbiter::game::GameEvent> {
    s.handle(
        &Actor::Player(side),
        Command::SubmitMove {
            side,
            notation: text.into(),
            offer_draw: false,
        },
        Now::from_mono(t),
    )
    .unwrap_or_else(|e| panic!("{text} refused: {e}"))
}

#[test]
fn corn_1_session_reports_the_win_with_its_rule() {
    let mut s = session(BOTH_ONE_AWAY, |_| {});
    submit(&mut s, Color::White, "f5-f6", 1_000);
    assert!(s.result().is_none(), "Black still has its move");
    // A jump chain is written with every landing and recorded without captures.
    let events = submit(&mut s, Color::Black, "c4-d4", 2_000);
    assert!(!events.is_empty());
    let r = s.result().expect("decided");
    assert_eq!(r.outcome, Outcome::WhiteWins);
    assert_eq!(r.reason, SessionEnd::CornerFilled);
    assert_eq!(
        r.rule.as_deref(),
        Some("CORN 1: first to fill the opponent's corner, equal moves")
    );
    // Further moves are refused.
    assert!(
        s.handle(
            &Actor::Player(Color::White),
            Command::SubmitMove {
                side: Color::White,
                notation: "f6-f5".into(),
                offer_draw: false
            },
            Now::from_mono(3_000)
        )
        .is_err()
    );
}

#[test]
fn corn_1_session_equal_move_draw_is_final_even_with_referred_move_count_draws() {
    let mut s = session(BOTH_ONE_AWAY, |st| {
        st.move_count_draws = MoveCountDraws::Referred;
    });
    submit(&mut s, Color::White, "f5-f6", 1_000);
    submit(&mut s, Color::Black, "c4-c3", 2_000);
    let r = s.result().expect("decided");
    assert_eq!(r.outcome, Outcome::Draw);
    assert_eq!(r.reason, SessionEnd::CornerFilled);
    assert_eq!(
        r.rule.as_deref(),
        Some("CORN 1: both corners filled with equal moves")
    );
}

#[test]
fn corn_2_session_reports_the_anti_stalling_loss_and_replays_from_its_events() {
    let arbiter = Actor::Arbiter("a".into());
    let (mut s, created) = Session::create(
        GameSettings::new(V),
        Some("W:Wa1,d4:Bh1"),
        arbiter.clone(),
        Now::from_mono(0),
    )
    .expect("create");
    let mut log = vec![created];
    log.extend(
        s.handle(&arbiter, Command::Start, Now::from_mono(0))
            .expect("start"),
    );
    let mut t = 0;
    for i in 0..41 {
        t += 1_000;
        let (w, b) = if i % 2 == 0 {
            ("d4-d5", "h1-h2")
        } else {
            ("d5-d4", "h2-h1")
        };
        log.extend(submit(&mut s, Color::White, w, t));
        if s.result().is_some() {
            break;
        }
        log.extend(submit(&mut s, Color::Black, b, t + 500));
    }
    let r = s.result().expect("decided");
    assert_eq!(s.moves().len(), 81, "White lost with its 41st move");
    assert_eq!(r.outcome, Outcome::BlackWins);
    assert_eq!(r.reason, SessionEnd::HomeNotLeft);
    assert_eq!(
        r.rule.as_deref(),
        Some("CORN 2-3: a piece on its own start squares after 40 moves")
    );
    assert_eq!(Session::replay(&log).expect("replays"), s);
}

#[test]
fn corn_session_records_jump_chains_without_captures() {
    // The ring of `corn_1_a_chain_never_revisits…`: f6 is two jumps away either way.
    let mut s = session("W:Wd4,d5,e6,f5,e4:Bh1", |_| {});
    // Written by the other route: recorded with the canonical one, nothing captured.
    let events = submit(&mut s, Color::White, "d4-f4-f6", 1_000);
    let played = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::MovePlayed {
                notation,
                path,
                captured,
                ..
            } => Some((notation.clone(), path.len(), captured.len())),
            _ => None,
        })
        .expect("a move played");
    assert_eq!(played, ("d4-d6-f6".to_string(), 3, 0));
    assert_eq!(s.moves().last().map(|m| &*m.notation), Some("d4-d6-f6"));
    assert_eq!(s.position().turn(), Color::Black);
    assert!(s.result().is_none());
}

#[test]
fn corn_cli_perft_moves_and_replay() {
    let exe = env!("CARGO_BIN_EXE_draughts-arbiter");
    let out = Process::new(exe)
        .args(["perft", "--variant", "corners", "--depth", "3"])
        .output()
        .expect("run perft");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l == "perft 3 2784"), "{text}");
    let out = Process::new(exe)
        .args([
            "moves",
            "--variant",
            "corners",
            "--fen",
            "W:Wd4,d5,e6,c6:Bf5",
        ])
        .output()
        .expect("run moves");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l == "d4-d6-f6-f4"), "{text}");
    let dir = std::env::temp_dir().join(format!("corners-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("game.pdn");
    std::fs::write(
        &file,
        format!(
            "[Event \"test\"]\n[SetUp \"1\"]\n[FEN \"{BOTH_ONE_AWAY}\"]\n[Result \"1-0\"]\n\n\
             1. f5-f6 c4-d4 1-0\n"
        ),
    )
    .expect("write");
    let out = Process::new(exe)
        .args(["replay", "--variant", "corners"])
        .arg(&file)
        .output()
        .expect("run replay");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("game 1: ok, 2 plies"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
