//! An independent, deliberately slow corners (ugolki) move generator and referee: a plain
//! 8×8 array, straightforward recursion, no bitboards, nothing from the crate's `rules`
//! module but the types needed to ask it the same questions. It checks the crate three
//! ways:
//!
//! - perft from the start position to depth 5 (deeper under `#[ignore]`, in release):
//!   crate == `tests/data/corners.perft` == this generator (the file's numbers were
//!   produced by this generator and the crate agreeing; its header says so);
//! - seeded random games, where at every position reached the two generators must list
//!   the same moves (start and end square), the crate's written route for each move must
//!   be a real chain of jumps and the canonical one (fewest jumps, then the landing
//!   squares first in reading order from a8), found here by trying every simple route;
//! - in the same games, the result after every move: this file's own reading of the
//!   winning, equal-move and anti-stalling rules against `Game::outcome` / `Game::draws`.
//!
//! The rules written out here (RULES.md, CORN row; seed 000 "Dame - colțuri";
//! allforchildren.ru "Игра в уголки", rules 1-3; the decisions in `src/rules/variant.rs`):
//! nine men each, White a1-c3, Black f6-h8, White first; a man steps to a free
//! orthogonally adjacent square, or jumps a piece of either colour on an orthogonally
//! adjacent square to the free square behind it, and may go on jumping, never landing
//! twice on a square nor back on its start; nothing is captured; a move is its start and
//! end square. The first to fill the other's start squares wins, but when the side that
//! moved first does, the other has one more move and filling its own target with it
//! draws; a side with a man on its own start squares after its 40th move loses; a side
//! with no move loses.

use crate::common;

use std::collections::BTreeSet;

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::notation::movetext::write_move_full;
use draughts_arbiter::notation::square::square_name;
use draughts_arbiter::rules::{
    Color, DrawMode, EndReason, Game, Position, RuleEdition, Variant, perft,
};

use common::{Lcg, start_position_rows};

/// Row 0 is rank 8, column 0 is file a. Values: 0 empty, 1 White man, -1 Black man.
type Board = [[i8; 8]; 8];

#[derive(Clone, Copy, PartialEq, Eq)]
struct Pos {
    board: Board,
    white_to_move: bool,
}

type Sq = (usize, usize);

const ORTHOGONAL: [(i32, i32); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

fn name((r, c): Sq) -> String {
    format!("{}{}", (b'a' + c as u8) as char, 8 - r)
}

fn step((r, c): Sq, (dr, dc): (i32, i32)) -> Option<Sq> {
    let (nr, nc) = (r as i32 + dr, c as i32 + dc);
    ((0..8).contains(&nr) && (0..8).contains(&nc)).then_some((nr as usize, nc as usize))
}

/// White's start squares (a1-c3) or Black's (f6-h8).
fn home(white: bool) -> Vec<Sq> {
    let mut out = Vec::new();
    for r in 0..3 {
        for c in 0..3 {
            out.push(if white { (7 - r, c) } else { (r, 7 - c) });
        }
    }
    out
}

fn start() -> Pos {
    let mut board = [[0i8; 8]; 8];
    for (r, c) in home(true) {
        board[r][c] = 1;
    }
    for (r, c) in home(false) {
        board[r][c] = -1;
    }
    Pos {
        board,
        white_to_move: true,
    }
}

/// Every simple chain of jumps from `at` (the moving man already lifted off `board`),
/// each given as its list of landing squares.
fn chains(board: &Board, from: Sq, at: Sq, route: &mut Vec<Sq>, out: &mut Vec<Vec<Sq>>) {
    for d in ORTHOGONAL {
        let Some(over) = step(at, d) else { continue };
        let Some(land) = step(over, d) else { continue };
        if board[over.0][over.1] == 0 || board[land.0][land.1] != 0 {
            continue;
        }
        if land == from || route.contains(&land) {
            continue;
        }
        route.push(land);
        out.push(route.clone());
        chains(board, from, land, route, out);
        route.pop();
    }
}

/// The legal moves as (start, end), sorted.
fn legal_moves(pos: &Pos) -> Vec<(Sq, Sq)> {
    let own = if pos.white_to_move { 1 } else { -1 };
    let mut out = BTreeSet::new();
    for r in 0..8 {
        for c in 0..8 {
            if pos.board[r][c] != own {
                continue;
            }
            for d in ORTHOGONAL {
                if let Some(to) = step((r, c), d)
                    && pos.board[to.0][to.1] == 0
                {
                    out.insert(((r, c), to));
                }
            }
            let mut board = pos.board;
            board[r][c] = 0;
            let mut all = Vec::new();
            chains(&board, (r, c), (r, c), &mut Vec::new(), &mut all);
            for route in all {
                out.insert(((r, c), *route.last().expect("a landing")));
            }
        }
    }
    out.into_iter().collect()
}

/// The canonical route of a jump move: the fewest jumps, then the landing squares first
/// in reading order (row from the top, then file), found among every simple route.
fn canonical_route(pos: &Pos, from: Sq, to: Sq) -> Vec<Sq> {
    let mut board = pos.board;
    board[from.0][from.1] = 0;
    let mut all = Vec::new();
    chains(&board, from, from, &mut Vec::new(), &mut all);
    all.into_iter()
        .filter(|r| r.last() == Some(&to))
        .min_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
        .expect("a route to a jump move's end")
}

fn play(pos: &Pos, (from, to): (Sq, Sq)) -> Pos {
    let mut next = *pos;
    next.board[to.0][to.1] = next.board[from.0][from.1];
    next.board[from.0][from.1] = 0;
    next.white_to_move = !pos.white_to_move;
    next
}

fn ref_perft(pos: &Pos, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = legal_moves(pos);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|&m| ref_perft(&play(pos, m), depth - 1))
        .sum()
}

fn fen(pos: &Pos) -> String {
    let mut out = String::from(if pos.white_to_move { "W" } else { "B" });
    for (letter, sign) in [('W', 1i8), ('B', -1i8)] {
        let mut items = Vec::new();
        for r in 0..8 {
            for c in 0..8 {
                if pos.board[r][c] == sign {
                    items.push(name((r, c)));
                }
            }
        }
        out.push(':');
        out.push(letter);
        out.push_str(&items.join(","));
    }
    out
}

fn describe_crate(pos: &Position) -> Vec<String> {
    let v = pos.variant();
    let mut out: Vec<String> = pos
        .legal_moves()
        .iter()
        .map(|m| format!("{}-{}", square_name(m.from(), v), square_name(m.to(), v)))
        .collect();
    out.sort();
    out
}

fn check_perft(max_depth: u32, min_depth: u32) {
    let crate_start = Position::start(Variant::Corners);
    let ref_start = start();
    assert_eq!(
        parse_fen(&fen(&ref_start), Variant::Corners).expect("fen"),
        crate_start
    );
    let rows = start_position_rows("corners", Variant::Corners);
    let mut checked = 0;
    for (depth, drop, keep) in rows {
        if depth < min_depth || depth > max_depth {
            continue;
        }
        // One route per (start, end): "keep" cannot differ from "drop".
        let keep = keep.expect("a keep column");
        assert_eq!(keep, drop, "file row {depth}");
        assert_eq!(
            perft(&crate_start, depth, true),
            drop,
            "crate perft {depth}"
        );
        assert_eq!(
            perft(&crate_start, depth, false),
            keep,
            "crate keep {depth}"
        );
        assert_eq!(
            ref_perft(&ref_start, depth),
            drop,
            "reference perft {depth}"
        );
        checked += 1;
    }
    assert!(checked > 0, "rows {min_depth}..={max_depth} in the file");
}

#[test]
fn corners_perft_crate_equals_file_equals_reference() {
    let rows = start_position_rows("corners", Variant::Corners);
    assert_eq!(
        rows.iter().map(|r| r.0).take(5).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    check_perft(5, 1);
}

/// The deeper rows of `tests/data/corners.perft` (CI runs this in release).
#[test]
#[ignore = "seconds in release; run with --release -- --ignored"]
fn corners_perft_deep_rows() {
    check_perft(u32::MAX, 6);
}

/// This file's reading of the result after a move (`None`: the game goes on). `made` is
/// the number of moves each side has made (White, Black); `mover` just moved.
#[derive(Debug, PartialEq, Eq)]
enum RefResult {
    Win(bool, &'static str),
    Draw,
}

fn ref_result(pos: &Pos, made: [u32; 2], mover_white: bool) -> Option<RefResult> {
    let filled = |white: bool| {
        let sign = if white { 1 } else { -1 };
        home(!white).iter().all(|&(r, c)| pos.board[r][c] == sign)
    };
    let (w, b) = (filled(true), filled(false));
    // White moved first in every game here.
    if w && b {
        return Some(RefResult::Draw);
    }
    if b {
        return Some(RefResult::Win(false, "corner"));
    }
    if w && made[1] == made[0] {
        return Some(RefResult::Win(true, "corner"));
    }
    let mover_made = made[usize::from(!mover_white)];
    let sign = if mover_white { 1 } else { -1 };
    if mover_made > 40
        && home(mover_white)
            .iter()
            .any(|&(r, c)| pos.board[r][c] == sign)
    {
        return Some(RefResult::Win(!mover_white, "home"));
    }
    if legal_moves(pos).is_empty() {
        return Some(RefResult::Win(!pos.white_to_move, "no move"));
    }
    None
}

fn crate_result(g: &Game) -> Option<RefResult> {
    if let Some(o) = g.outcome() {
        let why = match o.reason {
            EndReason::CornerFilled => "corner",
            EndReason::HomeNotLeft => "home",
            EndReason::NoMoves => "no move",
            EndReason::NoPieces => "no pieces",
        };
        return Some(RefResult::Win(o.winner == Color::White, why));
    }
    g.draws()
        .iter()
        .any(|d| d.mode == DrawMode::Final(EndReason::CornerFilled))
        .then_some(RefResult::Draw)
}

/// How far a move takes a man towards the other corner (rows up for White plus files to
/// the right; the mirror for Black).
fn progress(pos: &Pos, (from, to): (Sq, Sq)) -> i32 {
    let gain = (from.0 as i32 - to.0 as i32) + (to.1 as i32 - from.1 as i32);
    if pos.white_to_move { gain } else { -gain }
}

#[test]
fn corners_random_games_agree_move_for_move_and_on_the_result() {
    let mut rng = Lcg(0xc0_4e45);
    let mut positions = 0;
    let mut chains_checked = 0;
    let mut long_chains = 0;
    let mut endings = std::collections::BTreeMap::<String, u32>::new();
    for game in 0..120 {
        let mut pos = start();
        let mut g = Game::new(Position::start(Variant::Corners), RuleEdition::Classic);
        let mut made = [0u32; 2];
        // Half the games play towards the goal most of the time, half at random.
        let greedy = game % 2 == 0;
        for _ply in 0..400 {
            let f = fen(&pos);
            let crate_pos = *g.position();
            assert_eq!(
                crate_pos,
                parse_fen(&f, Variant::Corners).expect("fen"),
                "{f}"
            );
            let moves = legal_moves(&pos);
            let mut theirs: Vec<String> = moves
                .iter()
                .map(|&(a, b)| format!("{}-{}", name(a), name(b)))
                .collect();
            theirs.sort();
            assert_eq!(describe_crate(&crate_pos), theirs, "moves differ in {f}");
            positions += 1;
            for m in crate_pos.legal_moves() {
                let v = Variant::Corners;
                let (from, to) = (m.from(), m.to());
                let sq = |s| {
                    let n = square_name(s, v);
                    let b = n.as_bytes();
                    (8 - usize::from(b[1] - b'0'), usize::from(b[0] - b'a'))
                };
                let (a, b) = (sq(from), sq(to));
                let adjacent = a.0.abs_diff(b.0) + a.1.abs_diff(b.1) == 1;
                let route: Vec<Sq> = m.landings().map(sq).collect();
                if adjacent && pos.board[b.0][b.1] == 0 && route.len() == 1 {
                    continue;
                }
                let want = canonical_route(&pos, a, b);
                assert_eq!(
                    route,
                    want,
                    "route of {} in {f}",
                    write_move_full(&crate_pos, &m)
                );
                chains_checked += 1;
                if route.len() >= 3 {
                    long_chains += 1;
                }
            }
            let expected = ref_result(&pos, made, !pos.white_to_move);
            let got = if made == [0, 0] {
                None
            } else {
                crate_result(&g)
            };
            if made != [0, 0] {
                assert_eq!(got, expected, "result after {f}");
            }
            if let Some(r) = got {
                *endings.entry(format!("{r:?}")).or_default() += 1;
                break;
            }
            if moves.is_empty() {
                break;
            }
            let chosen = if greedy && rng.next(10) < 8 {
                let best = moves.iter().map(|&m| progress(&pos, m)).max().unwrap_or(0);
                let top: Vec<_> = moves
                    .iter()
                    .filter(|&&m| progress(&pos, m) == best)
                    .collect();
                *top[rng.next(top.len())]
            } else {
                moves[rng.next(moves.len())]
            };
            made[usize::from(!pos.white_to_move)] += 1;
            pos = play(&pos, chosen);
            let text = format!("{}-{}", name(chosen.0), name(chosen.1));
            let mv = draughts_arbiter::notation::movetext::parse_move(&text, g.position())
                .expect("the crate reads the move");
            g.play(&mv).expect("legal in the game");
        }
    }
    assert!(positions > 5_000, "{positions} positions");
    assert!(chains_checked > 5_000, "{chains_checked} jump routes");
    assert!(long_chains > 200, "{long_chains} routes of 3+ jumps");
    let ends = format!("{endings:?}");
    assert!(ends.contains("home"), "anti-stalling endings: {ends}");
    assert!(ends.contains("corner"), "corner endings: {ends}");
    println!("{positions} positions, {chains_checked} routes ({long_chains} of 3+), {ends}");
}
