//! An independent, deliberately slow Russian towers (stolbovye shashki) move generator: a
//! plain 8×8 array of stacks, straightforward recursion, no bitboards, nothing from the
//! crate's `rules` module but the types needed to ask it the same question. It checks the
//! crate twice:
//!
//! - perft from the start position: crate == `tests/data/towers.perft` == this generator
//!   (the file's numbers were produced by this generator and the crate agreeing; its
//!   header says so), to depth 5 here and deeper under `#[ignore]` in release;
//! - seeded random games, where at every position reached the two generators must list
//!   the same moves (start, end, set of captured squares) and, after each move, reach the
//!   same position, stacks included (compared through the towers FEN). From the start the
//!   first tower is captured only late, so these games are what exercise the stacks:
//!   captured tops going under, revealed pieces changing a tower's colour, freed kings
//!   coming back as men, towers crowned by their top.
//!
//! The rules written out here (RULES.md, TOW row; seed 000 "turnuri rusești"; the
//! decisions in `src/rules/variant.rs`, `TOWERS`): Russian moves and captures (RU 1.5.x:
//! capture compulsory, free choice, men capture backwards, flying kings, a man reaching
//! the last rank mid-capture goes on as a king, RU 1.5.6 a king must land where it can go
//! on capturing, RU 1.5.9 no tower jumped twice, nothing changes hands before the capture
//! is over); a tower moves as one piece by the rules of its top; a jumped tower loses only
//! its top, which goes to the bottom of the capturing tower in capture order; the piece
//! revealed is a man of its own colour.

use crate::common;

use std::collections::BTreeSet;

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::rules::{Position, Variant, perft};

use common::{Lcg, describe_crate, describe_crate_move, start_position_rows};

/// One piece: its colour and whether it is a king.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Piece {
    white: bool,
    king: bool,
}

/// Row 0 is rank 8 (Black's back rank), column 0 is file a; each cell is a stack, index
/// 0 the top.
type Board = Vec<Vec<Vec<Piece>>>;

#[derive(Clone)]
struct Pos {
    board: Board,
    white_to_move: bool,
}

/// One move: start, end, captured squares in capture order, whether the top ends a king.
#[derive(Clone, Debug)]
struct RefMove {
    from: (usize, usize),
    to: (usize, usize),
    captured: Vec<(usize, usize)>,
    crowned: bool,
}

/// A square as (row, column).
type Sq = (usize, usize);

impl RefMove {
    fn key(&self) -> (Sq, Sq, Vec<Sq>) {
        let mut set = self.captured.clone();
        set.sort();
        (self.from, self.to, set)
    }
}

const DIAGONALS: [(i32, i32); 4] = [(-1, -1), (-1, 1), (1, -1), (1, 1)];

fn on_board(r: i32, c: i32) -> bool {
    (0..8).contains(&r) && (0..8).contains(&c)
}

fn name(r: usize, c: usize) -> String {
    format!("{}{}", (b'a' + c as u8) as char, 8 - r)
}

fn start() -> Pos {
    let mut board: Board = vec![vec![Vec::new(); 8]; 8];
    for (r, row) in board.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            if (r + c) % 2 == 1 && r != 3 && r != 4 {
                cell.push(Piece {
                    white: r >= 5,
                    king: false,
                });
            }
        }
    }
    Pos {
        board,
        white_to_move: true,
    }
}

fn last_row(white: bool) -> usize {
    if white { 0 } else { 7 }
}

/// One jump: its direction, the victim and the landing squares.
type Jump = ((i32, i32), Sq, Vec<Sq>);

struct CaptureWalk<'a> {
    white: bool,
    from: (usize, usize),
    out: &'a mut Vec<RefMove>,
}

impl CaptureWalk<'_> {
    /// The jumps possible from (r, c): (direction, victim, landing squares). Captured
    /// towers stay on the board (they block) and may not be jumped again; the capturing
    /// tower has left its start square.
    fn jumps(&self, board: &Board, (r, c): Sq, king: bool, captured: &[Sq]) -> Vec<Jump> {
        let empty = |r: i32, c: i32| {
            on_board(r, c)
                && ((r as usize, c as usize) == self.from
                    || board[r as usize][c as usize].is_empty())
        };
        let mut out = Vec::new();
        for (dr, dc) in DIAGONALS {
            let (mut vr, mut vc) = (r as i32 + dr, c as i32 + dc);
            if king {
                while empty(vr, vc) {
                    vr += dr;
                    vc += dc;
                }
            }
            if !on_board(vr, vc) {
                continue;
            }
            let victim = (vr as usize, vc as usize);
            let top = board[victim.0][victim.1].first();
            if victim == self.from
                || top.is_none_or(|p| p.white == self.white)
                || captured.contains(&victim)
            {
                continue;
            }
            let mut landings = Vec::new();
            let (mut lr, mut lc) = (vr + dr, vc + dc);
            while empty(lr, lc) {
                landings.push((lr as usize, lc as usize));
                if !king {
                    break;
                }
                lr += dr;
                lc += dc;
            }
            if !landings.is_empty() {
                out.push(((dr, dc), victim, landings));
            }
        }
        out
    }

    fn walk(
        &mut self,
        board: &Board,
        at: (usize, usize),
        king: bool,
        captured: &mut Vec<(usize, usize)>,
    ) {
        let jumps = self.jumps(board, at, king, captured);
        if jumps.is_empty() {
            if !captured.is_empty() {
                self.out.push(RefMove {
                    from: self.from,
                    to: at,
                    captured: captured.clone(),
                    crowned: king,
                });
            }
            return;
        }
        for (_dir, victim, landings) in jumps {
            captured.push(victim);
            // RU 1.5.6: where the capture can go on from some landing squares, it must
            // land on one of them.
            let far = last_row(self.white);
            let crowned_at = move |land: (usize, usize)| king || land.0 == far;
            let goes_on: Vec<bool> = landings
                .iter()
                .map(|&l| !self.jumps(board, l, crowned_at(l), captured).is_empty())
                .collect();
            let any = goes_on.iter().any(|&g| g);
            for (i, &land) in landings.iter().enumerate() {
                if any && !goes_on[i] {
                    continue;
                }
                self.walk(board, land, crowned_at(land), captured);
            }
            captured.pop();
        }
    }
}

fn legal_moves(pos: &Pos) -> Vec<RefMove> {
    let white = pos.white_to_move;
    let mut captures = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            let Some(top) = pos.board[r][c].first().copied() else {
                continue;
            };
            if top.white != white {
                continue;
            }
            let mut walk = CaptureWalk {
                white,
                from: (r, c),
                out: &mut captures,
            };
            walk.walk(&pos.board, (r, c), top.king, &mut Vec::new());
        }
    }
    if !captures.is_empty() {
        // Free choice (RU 1.5.14); different paths to the same start, end and captured
        // set are one move.
        let mut seen = BTreeSet::new();
        captures.retain(|m| seen.insert(m.key()));
        return captures;
    }
    let mut quiet = Vec::new();
    let forward = if white { -1 } else { 1 };
    for r in 0..8 {
        for c in 0..8 {
            let Some(top) = pos.board[r][c].first().copied() else {
                continue;
            };
            if top.white != white {
                continue;
            }
            let dirs: Vec<(i32, i32)> = if top.king {
                DIAGONALS.to_vec()
            } else {
                vec![(forward, -1), (forward, 1)]
            };
            for (dr, dc) in dirs {
                let (mut tr, mut tc) = (r as i32 + dr, c as i32 + dc);
                while on_board(tr, tc) && pos.board[tr as usize][tc as usize].is_empty() {
                    let to = (tr as usize, tc as usize);
                    quiet.push(RefMove {
                        from: (r, c),
                        to,
                        captured: Vec::new(),
                        crowned: top.king || to.0 == last_row(white),
                    });
                    if !top.king {
                        break;
                    }
                    tr += dr;
                    tc += dc;
                }
            }
        }
    }
    quiet
}

fn play(pos: &Pos, m: &RefMove) -> Pos {
    let mut next = pos.clone();
    let mut tower = std::mem::take(&mut next.board[m.from.0][m.from.1]);
    for &(r, c) in &m.captured {
        // Only the top is taken; it goes to the bottom of the capturing tower as a man.
        let taken = next.board[r][c].remove(0);
        tower.push(Piece {
            white: taken.white,
            king: false,
        });
        // The piece revealed (if any) is a man of its own colour: beneath a top every
        // piece is a man already.
    }
    tower[0].king = m.crowned;
    next.board[m.to.0][m.to.1] = tower;
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
        .map(|m| ref_perft(&play(pos, m), depth - 1))
        .sum()
}

/// The position as a towers FEN (algebraic; pieces beneath a top in parentheses, top
/// down), written here independently of the crate's writer.
fn fen(pos: &Pos) -> String {
    let mut out = String::from(if pos.white_to_move { "W" } else { "B" });
    for (letter, white) in [('W', true), ('B', false)] {
        let mut items = Vec::new();
        for r in 0..8 {
            for c in 0..8 {
                let stack = &pos.board[r][c];
                let Some(top) = stack.first() else {
                    continue;
                };
                if top.white != white {
                    continue;
                }
                let k = if top.king { "K" } else { "" };
                let mut item = format!("{k}{}", name(r, c));
                if stack.len() > 1 {
                    item.push('(');
                    for p in &stack[1..] {
                        assert!(!p.king, "a piece beneath a top is a man");
                        item.push(if p.white { 'w' } else { 'b' });
                    }
                    item.push(')');
                }
                items.push(item);
            }
        }
        out.push(':');
        out.push(letter);
        out.push_str(&items.join(","));
    }
    out
}

fn describe_ref(m: &RefMove) -> String {
    let mut caps: Vec<String> = m.captured.iter().map(|&(r, c)| name(r, c)).collect();
    caps.sort();
    format!(
        "{}-{} x[{}]",
        name(m.from.0, m.from.1),
        name(m.to.0, m.to.1),
        caps.join(",")
    )
}

/// Rows with more nodes than this run only in the deep (release) test.
const QUICK_NODES: u64 = 10_000;

fn check_file(nodes: std::ops::RangeInclusive<u64>) -> usize {
    let rows = start_position_rows("towers", Variant::Towers);
    let crate_start = Position::start(Variant::Towers);
    let ref_start = start();
    assert_eq!(
        parse_fen(&fen(&ref_start), Variant::Towers).expect("fen"),
        crate_start
    );
    let mut checked = 0;
    for (depth, expected, _) in rows.into_iter().filter(|r| nodes.contains(&r.1)) {
        assert_eq!(
            perft(&crate_start, depth, true),
            expected,
            "crate perft {depth}"
        );
        assert_eq!(
            ref_perft(&ref_start, depth),
            expected,
            "reference perft {depth}"
        );
        checked += 1;
    }
    checked
}

/// TOW perft from the start: crate == file == reference, depths 1–5.
#[test]
fn towers_perft_crate_equals_file_equals_reference() {
    let depths: Vec<u32> = start_position_rows("towers", Variant::Towers)
        .iter()
        .filter(|r| r.1 <= QUICK_NODES)
        .map(|r| r.0)
        .collect();
    assert_eq!(depths, vec![1, 2, 3, 4, 5]);
    assert_eq!(check_file(0..=QUICK_NODES), 5);
}

/// TOW perft from the start, the deeper rows of the file.
#[test]
#[ignore = "deep rows: run in release (`cargo test --release --test reference_towers -- --ignored`)"]
fn towers_perft_deep_rows() {
    assert!(check_file(QUICK_NODES + 1..=u64::MAX) >= 2);
}

/// TOW, RU 1.5.x: seeded random games, move lists and positions (stacks included) agree
/// at every ply.
#[test]
fn towers_random_games_agree_move_for_move() {
    let mut rng = Lcg(0x70e3_5eed);
    let mut positions = 0;
    let mut tall = 0;
    let mut tower_captures = 0;
    let mut revealed_colour_changes = 0;
    let mut king_towers = 0;
    for _game in 0..120 {
        let mut pos = start();
        for _ply in 0..160 {
            let f = fen(&pos);
            let crate_pos = parse_fen(&f, Variant::Towers).expect("reference fen parses");
            let moves = legal_moves(&pos);
            let mut theirs: Vec<String> = moves.iter().map(describe_ref).collect();
            theirs.sort();
            let ours = describe_crate(&crate_pos);
            assert_eq!(ours, theirs, "moves differ in {f}");
            positions += 1;
            let cells = pos.board.iter().flatten();
            if cells.clone().any(|s| s.len() >= 3) {
                tall += 1;
            }
            if cells.clone().any(|s| s.len() >= 2 && s[0].king) {
                king_towers += 1;
            }
            if moves.is_empty() {
                break;
            }
            let chosen = &moves[rng.next(moves.len())];
            for &(r, c) in &chosen.captured {
                let stack = &pos.board[r][c];
                if stack.len() >= 2 {
                    tower_captures += 1;
                    if stack[1].white != stack[0].white {
                        revealed_colour_changes += 1;
                    }
                }
            }
            let next = play(&pos, chosen);
            // The crate plays the same move and must reach the same position.
            let wanted = describe_ref(chosen);
            let crate_move = crate_pos
                .legal_moves()
                .into_iter()
                .find(|m| describe_crate_move(&crate_pos, m) == wanted)
                .expect("the crate has the move");
            let crate_next = crate_pos.play(&crate_move).expect("legal");
            let next_fen = fen(&next);
            assert_eq!(
                crate_next,
                parse_fen(&next_fen, Variant::Towers).expect("fen"),
                "after {wanted} in {f}"
            );
            assert_eq!(
                crate_next.hash(),
                parse_fen(&next_fen, Variant::Towers).expect("fen").hash()
            );
            pos = next;
        }
    }
    eprintln!(
        "{positions} positions, {tall} with a tower of 3+, {tower_captures} towers jumped, \
         {revealed_colour_changes} changed colour, {king_towers} with a king tower"
    );
    assert!(positions > 5_000, "{positions} positions");
    assert!(tall > 500, "{tall} positions with a tower of 3+");
    assert!(tower_captures > 200, "{tower_captures} towers jumped");
    assert!(
        revealed_colour_changes > 100,
        "{revealed_colour_changes} towers changed colour"
    );
    assert!(
        king_towers > 100,
        "{king_towers} positions with a king tower"
    );
}
