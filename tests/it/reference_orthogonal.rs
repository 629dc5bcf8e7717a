//! An independent, deliberately slow Turkish draughts move generator: a plain 8×8 array,
//! straightforward recursion, no bitboards, nothing from the crate's `rules` module but
//! the types needed to ask it the same question. It checks the crate twice:
//!
//! - perft from the start position to depth 5: crate == `tests/data/turkish.perft` ==
//!   this generator (the file's numbers were produced by this generator and the crate
//!   agreeing; its header says so);
//! - seeded random games, where at every position reached the two generators must list
//!   the same moves (start, end, set of captured squares) — this reaches kings, long
//!   captures, promotion during a capture and the 180° rule, which depth 5 does not.
//!
//! The rules written out here (RULES.md, TR row, and the decisions in
//! `src/rules/variant.rs`): men step or capture one square forward or sideways, never
//! back; kings fly orthogonally; a captured piece leaves the board as soon as it is
//! jumped; no 180° turn between two jumps; the capture that takes the most pieces is
//! compulsory (a king counts one); a man landing on the last rank during a capture is
//! crowned and goes on capturing as a king.

use crate::common;

use std::collections::BTreeSet;

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::rules::{Position, Variant, perft};

use common::{Lcg, describe_crate, describe_crate_move, start_position_rows};

/// Row 0 is rank 8 (Black's back rank), column 0 is file a. Values: 0 empty, ±1 man,
/// ±2 king; positive is White.
type Board = [[i8; 8]; 8];

#[derive(Clone, Copy)]
struct Pos {
    board: Board,
    white_to_move: bool,
}

/// One move: start, end, captured squares (as a sorted set), whether the piece ends a king.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RefMove {
    from: (usize, usize),
    to: (usize, usize),
    captured: Vec<(usize, usize)>,
    crowned: bool,
}

const ORTHOGONAL: [(i32, i32); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

fn on_board(r: i32, c: i32) -> bool {
    (0..8).contains(&r) && (0..8).contains(&c)
}

fn name(r: usize, c: usize) -> String {
    format!("{}{}", (b'a' + c as u8) as char, 8 - r)
}

fn start() -> Pos {
    let mut board = [[0i8; 8]; 8];
    board[1] = [-1; 8];
    board[2] = [-1; 8];
    board[5] = [1; 8];
    board[6] = [1; 8];
    Pos {
        board,
        white_to_move: true,
    }
}

/// The directions a man of this side may go: forward and sideways.
fn man_dirs(white: bool) -> [(i32, i32); 3] {
    let forward = if white { -1 } else { 1 };
    [(forward, 0), (0, -1), (0, 1)]
}

fn last_row(white: bool) -> usize {
    if white { 0 } else { 7 }
}

struct CaptureWalk<'a> {
    white: bool,
    from: (usize, usize),
    out: &'a mut Vec<RefMove>,
}

impl CaptureWalk<'_> {
    /// Continues a capture from (r, c) on `board` (captured pieces already removed, the
    /// capturing piece lifted off the board); `last` is the previous jump's direction.
    fn walk(
        &mut self,
        board: &mut Board,
        (r, c): (usize, usize),
        king: bool,
        last: Option<(i32, i32)>,
        captured: &mut Vec<(usize, usize)>,
    ) {
        let white = self.white;
        let enemy = move |v: i8| if white { v < 0 } else { v > 0 };
        let dirs: Vec<(i32, i32)> = if king {
            ORTHOGONAL.to_vec()
        } else {
            man_dirs(self.white).to_vec()
        };
        let mut extended = false;
        for (dr, dc) in dirs {
            if last == Some((-dr, -dc)) {
                continue; // no 180° turn
            }
            // Find the piece to jump: adjacent for a man, the first piece on the line for
            // a king.
            let (mut vr, mut vc) = (r as i32 + dr, c as i32 + dc);
            if king {
                while on_board(vr, vc) && board[vr as usize][vc as usize] == 0 {
                    vr += dr;
                    vc += dc;
                }
            }
            if !on_board(vr, vc) || !enemy(board[vr as usize][vc as usize]) {
                continue;
            }
            let victim = (vr as usize, vc as usize);
            // The landing squares: the next one for a man, every empty one beyond for a king.
            let mut landings = Vec::new();
            let (mut lr, mut lc) = (vr + dr, vc + dc);
            while on_board(lr, lc) && board[lr as usize][lc as usize] == 0 {
                landings.push((lr as usize, lc as usize));
                if !king {
                    break;
                }
                lr += dr;
                lc += dc;
            }
            if landings.is_empty() {
                continue;
            }
            extended = true;
            let taken = board[victim.0][victim.1];
            board[victim.0][victim.1] = 0; // removed at once
            captured.push(victim);
            for land in landings {
                let now_king = king || land.0 == last_row(self.white);
                self.walk(board, land, now_king, Some((dr, dc)), captured);
            }
            captured.pop();
            board[victim.0][victim.1] = taken;
        }
        if !extended && !captured.is_empty() {
            let mut set = captured.clone();
            set.sort();
            self.out.push(RefMove {
                from: self.from,
                to: (r, c),
                captured: set,
                crowned: king,
            });
        }
    }
}

fn legal_moves(pos: &Pos) -> Vec<RefMove> {
    let white = pos.white_to_move;
    let own = |v: i8| if white { v > 0 } else { v < 0 };
    let mut captures = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            let v = pos.board[r][c];
            if !own(v) {
                continue;
            }
            let mut board = pos.board;
            board[r][c] = 0;
            let mut walk = CaptureWalk {
                white,
                from: (r, c),
                out: &mut captures,
            };
            walk.walk(&mut board, (r, c), v.abs() == 2, None, &mut Vec::new());
        }
    }
    if !captures.is_empty() {
        let best = captures.iter().map(|m| m.captured.len()).max().unwrap_or(0);
        let distinct: BTreeSet<RefMove> = captures
            .into_iter()
            .filter(|m| m.captured.len() == best)
            .collect();
        return distinct.into_iter().collect();
    }
    let mut quiet = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            let v = pos.board[r][c];
            if !own(v) {
                continue;
            }
            let king = v.abs() == 2;
            let dirs: Vec<(i32, i32)> = if king {
                ORTHOGONAL.to_vec()
            } else {
                man_dirs(white).to_vec()
            };
            for (dr, dc) in dirs {
                let (mut tr, mut tc) = (r as i32 + dr, c as i32 + dc);
                while on_board(tr, tc) && pos.board[tr as usize][tc as usize] == 0 {
                    let to = (tr as usize, tc as usize);
                    quiet.push(RefMove {
                        from: (r, c),
                        to,
                        captured: Vec::new(),
                        crowned: king || to.0 == last_row(white),
                    });
                    if !king {
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
    let mut next = *pos;
    let v = next.board[m.from.0][m.from.1];
    next.board[m.from.0][m.from.1] = 0;
    for &(r, c) in &m.captured {
        next.board[r][c] = 0;
    }
    next.board[m.to.0][m.to.1] = if m.crowned { 2 * v.signum() } else { v };
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

fn fen(pos: &Pos) -> String {
    let mut out = String::from(if pos.white_to_move { "W" } else { "B" });
    for (letter, sign) in [('W', 1i8), ('B', -1i8)] {
        let mut items = Vec::new();
        for r in 0..8 {
            for c in 0..8 {
                let v = pos.board[r][c];
                if v.signum() == sign {
                    let k = if v.abs() == 2 { "K" } else { "" };
                    items.push(format!("{k}{}", name(r, c)));
                }
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

#[test]
fn turkish_perft_crate_equals_file_equals_reference() {
    let rows = start_position_rows("turkish", Variant::Turkish);
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    let crate_start = Position::start(Variant::Turkish);
    let ref_start = start();
    assert_eq!(
        parse_fen(&fen(&ref_start), Variant::Turkish).expect("fen"),
        crate_start
    );
    for (depth, expected, _) in rows {
        let ours = perft(&crate_start, depth, true);
        let theirs = ref_perft(&ref_start, depth);
        assert_eq!(ours, expected, "crate perft {depth}");
        assert_eq!(theirs, expected, "reference perft {depth}");
    }
}

#[test]
fn turkish_random_games_agree_move_for_move() {
    let mut rng = Lcg(0x5eed_7a11);
    let mut positions = 0;
    let mut kings_seen = 0;
    let mut long_captures = 0;
    for _game in 0..150 {
        let mut pos = start();
        for _ply in 0..200 {
            let f = fen(&pos);
            let crate_pos = parse_fen(&f, Variant::Turkish).expect("reference fen parses");
            let mut theirs: Vec<String> = legal_moves(&pos).iter().map(describe_ref).collect();
            theirs.sort();
            let ours = describe_crate(&crate_pos);
            assert_eq!(ours, theirs, "moves differ in {f}");
            positions += 1;
            if pos.board.iter().flatten().any(|&v| v.abs() == 2) {
                kings_seen += 1;
            }
            let moves = legal_moves(&pos);
            if moves.is_empty() {
                break;
            }
            if moves[0].captured.len() >= 3 {
                long_captures += 1;
            }
            let chosen = &moves[rng.next(moves.len())];
            pos = play(&pos, chosen);
            // The crate plays the same move and must reach the same position.
            let wanted = describe_ref(chosen);
            let crate_move = crate_pos
                .legal_moves()
                .into_iter()
                .find(|m| describe_crate_move(&crate_pos, m) == wanted)
                .expect("the crate has the move");
            let crate_next = crate_pos.play(&crate_move).expect("legal");
            assert_eq!(
                crate_next,
                parse_fen(&fen(&pos), Variant::Turkish).expect("fen"),
                "after {wanted} in {f}"
            );
        }
    }
    assert!(positions > 5_000, "{positions} positions");
    assert!(kings_seen > 500, "{kings_seen} positions with kings");
    assert!(
        long_captures > 20,
        "{long_captures} positions with 3+ captures"
    );
}
