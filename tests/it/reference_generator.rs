//! An independent, deliberately plain move generator used as a second opinion on perft.
//!
//! It shares nothing with the crate's generator: the board is a 2-D array of squares
//! indexed by (file, rank) as the players see it (rank 0 = White's back rank, file 0 =
//! `a`), moves are found by straightforward recursion over that array, and the rules are
//! restated here from RULES.md and the variant sources, not read from `rules::Rules`.
//! Italian is played on its real board (a1 light, squares numbered from the dark corner at
//! the top left), not on the crate's mirrored layout.
//!
//! What it proves:
//! - on the start positions of russian, brazilian, pool, italian (and international,
//!   english) it reproduces the published counts of `tests/data/perft/`;
//! - for russian80 and diagonal, which have no published perft, the crate's perft, the
//!   counts in `tests/data/russian80.perft` / `tests/data/diagonal.perft` and this
//!   generator all agree.

use crate::common;

use std::collections::HashSet;

use draughts_arbiter::notation::fen::{parse_fen, write_fen};
use draughts_arbiter::rules::{Position, Variant, perft};

use common::{data, read_suites};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Side {
    White,
    Black,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Piece {
    side: Side,
    king: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    /// Any capture.
    Free,
    /// The most pieces.
    Maximum,
    /// Most pieces, then with a king, then most kings, then a king met first.
    Italian,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crowning {
    /// A man reaching the far rank mid-capture goes on as a king.
    ContinueAsKing,
    /// It goes on as a man, crowned only if it stops there.
    ContinueAsMan,
    /// Crowning ends the capture.
    EndsMove,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Game {
    width: i32,
    height: i32,
    /// Whether a1 is a playable (dark) square (false for Italian).
    a1_dark: bool,
    men_capture_backwards: bool,
    men_capture_kings: bool,
    flying_kings: bool,
    choice: Choice,
    crowning: Crowning,
}

/// Russian rules (RU 1.4–1.5) on a board of the given size.
const fn russian_on(width: i32, height: i32) -> Game {
    Game {
        width,
        height,
        a1_dark: true,
        men_capture_backwards: true,
        men_capture_kings: true,
        flying_kings: true,
        choice: Choice::Free,
        crowning: Crowning::ContinueAsKing,
    }
}

/// FMJD rules on a board of the given size.
const fn fmjd_on(width: i32, height: i32) -> Game {
    Game {
        choice: Choice::Maximum,
        crowning: Crowning::ContinueAsMan,
        ..russian_on(width, height)
    }
}

fn game_of(name: &str) -> Game {
    match name {
        "russian" | "giveaway" | "diagonal" => russian_on(8, 8),
        "russian80" => russian_on(10, 8),
        "international" | "antidraughts" => fmjd_on(10, 10),
        "brazilian" => fmjd_on(8, 8),
        "pool" => Game {
            crowning: Crowning::ContinueAsMan,
            ..russian_on(8, 8)
        },
        "english" => Game {
            men_capture_backwards: false,
            flying_kings: false,
            crowning: Crowning::EndsMove,
            ..russian_on(8, 8)
        },
        "italian" => Game {
            a1_dark: false,
            men_capture_backwards: false,
            men_capture_kings: false,
            flying_kings: false,
            choice: Choice::Italian,
            crowning: Crowning::EndsMove,
            ..russian_on(8, 8)
        },
        other => panic!("no reference rules for {other}"),
    }
}

type Sq = (i32, i32);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Board {
    game: Game,
    /// `cells[rank][file]`.
    cells: Vec<Vec<Option<Piece>>>,
    turn: Side,
}

#[derive(Debug, Clone)]
struct Mv {
    from: Sq,
    /// Every square the piece lands on, the last being the destination.
    path: Vec<Sq>,
    /// The captured squares, in capture order.
    taken: Vec<Sq>,
    crowned: bool,
}

/// A capture in progress.
struct Line {
    from: Sq,
    path: Vec<Sq>,
    taken: Vec<Sq>,
}

impl Line {
    fn finish(&self, crowned: bool) -> Mv {
        Mv {
            from: self.from,
            path: self.path.clone(),
            taken: self.taken.clone(),
            crowned,
        }
    }
}

impl Board {
    fn empty(game: Game, turn: Side) -> Board {
        Board {
            game,
            cells: vec![vec![None; game.width as usize]; game.height as usize],
            turn,
        }
    }

    fn dark(&self, (f, r): Sq) -> bool {
        ((f + r) % 2 == 0) == self.game.a1_dark
    }

    fn on_board(&self, (f, r): Sq) -> bool {
        f >= 0 && r >= 0 && f < self.game.width && r < self.game.height
    }

    fn at(&self, (f, r): Sq) -> Option<Piece> {
        self.cells[r as usize][f as usize]
    }

    fn put(&mut self, (f, r): Sq, p: Option<Piece>) {
        self.cells[r as usize][f as usize] = p;
    }

    /// The dark squares in PDN order: rows from the top, each left to right.
    fn numbered(&self) -> Vec<Sq> {
        let mut out = Vec::new();
        for r in (0..self.game.height).rev() {
            for f in 0..self.game.width {
                if self.dark((f, r)) {
                    out.push((f, r));
                }
            }
        }
        out
    }

    /// Reads a numeric PDN FEN (`W:W21-32:B1-12`, `B:WK4,18:B1`).
    fn from_fen(game: Game, fen: &str) -> Board {
        let mut fields = fen.trim().trim_end_matches('.').split(':');
        let turn = match fields.next() {
            Some("W") => Side::White,
            Some("B") => Side::Black,
            other => panic!("turn {other:?}"),
        };
        let mut b = Board::empty(game, turn);
        let squares = b.numbered();
        for field in fields {
            let side = match field.chars().next() {
                Some('W') => Side::White,
                Some('B') => Side::Black,
                _ => continue,
            };
            for item in field[1..].split(',').filter(|s| !s.is_empty()) {
                let (king, body) = match item.strip_prefix('K') {
                    Some(rest) => (true, rest),
                    None => (false, item),
                };
                let (lo, hi) = match body.split_once('-') {
                    Some((a, b)) => (a.parse::<usize>(), b.parse::<usize>()),
                    None => (body.parse(), body.parse()),
                };
                for n in lo.expect("number")..=hi.expect("number") {
                    b.put(squares[n - 1], Some(Piece { side, king }));
                }
            }
        }
        b
    }

    fn far_rank(&self, side: Side) -> i32 {
        match side {
            Side::White => self.game.height - 1,
            Side::Black => 0,
        }
    }

    fn forward(side: Side) -> i32 {
        match side {
            Side::White => 1,
            Side::Black => -1,
        }
    }

    /// The jumps available from `cur` for the piece that started on `from`: (victim,
    /// landing squares). Captured pieces stay on the board until the move ends (RU 1.5.7):
    /// they block and cannot be jumped again; the start square is empty.
    fn jumps(&self, from: Sq, cur: Sq, king: bool, taken: &[Sq]) -> Vec<(Sq, Vec<Sq>)> {
        let side = self.turn;
        let occupied = |s: Sq| s != from && self.at(s).is_some();
        let fwd = Board::forward(side);
        let dirs: Vec<Sq> = if king || self.game.men_capture_backwards {
            vec![(-1, 1), (1, 1), (-1, -1), (1, -1)]
        } else {
            vec![(-1, fwd), (1, fwd)]
        };
        let flying = king && self.game.flying_kings;
        let mut out = Vec::new();
        for (df, dr) in dirs {
            let mut s = (cur.0 + df, cur.1 + dr);
            if flying {
                while self.on_board(s) && !occupied(s) {
                    s = (s.0 + df, s.1 + dr);
                }
            }
            if !self.on_board(s) || !occupied(s) || taken.contains(&s) {
                continue;
            }
            let victim = self.at(s).expect("occupied");
            if victim.side == side || (!king && victim.king && !self.game.men_capture_kings) {
                continue;
            }
            let mut landings = Vec::new();
            let mut t = (s.0 + df, s.1 + dr);
            while self.on_board(t) && !occupied(t) {
                landings.push(t);
                if !flying {
                    break;
                }
                t = (t.0 + df, t.1 + dr);
            }
            if !landings.is_empty() {
                out.push((s, landings));
            }
        }
        out
    }

    /// Extends the capture in `line` from `cur`; finished captures go to `out`.
    fn search(&self, line: &mut Line, cur: Sq, king: bool, crowned: bool, out: &mut Vec<Mv>) {
        let from = line.from;
        let jumps = self.jumps(from, cur, king, &line.taken);
        if jumps.is_empty() {
            if !line.taken.is_empty() {
                let reached = !king && cur.1 == self.far_rank(self.turn);
                out.push(line.finish(crowned || reached));
            }
            return;
        }
        for (victim, landings) in jumps {
            line.taken.push(victim);
            // RU 1.5.6: where the capture can go on from some landing squares, the piece
            // must land on one of those.
            let goes_on: Vec<bool> = landings
                .iter()
                .map(|&l| !self.jumps(from, l, king, &line.taken).is_empty())
                .collect();
            let any = goes_on.iter().any(|&g| g);
            for (i, &land) in landings.iter().enumerate() {
                if any && !goes_on[i] {
                    continue;
                }
                line.path.push(land);
                if !king && land.1 == self.far_rank(self.turn) {
                    match self.game.crowning {
                        Crowning::ContinueAsKing => self.search(line, land, true, true, out),
                        Crowning::ContinueAsMan => self.search(line, land, false, crowned, out),
                        Crowning::EndsMove => out.push(line.finish(true)),
                    }
                } else {
                    self.search(line, land, king, crowned, out);
                }
                line.path.pop();
            }
            line.taken.pop();
        }
    }

    fn own_pieces(&self) -> Vec<(Sq, Piece)> {
        let mut out = Vec::new();
        for r in 0..self.game.height {
            for f in 0..self.game.width {
                if let Some(p) = self.at((f, r))
                    && p.side == self.turn
                {
                    out.push(((f, r), p));
                }
            }
        }
        out
    }

    /// The Italian precedence key of a capture, from this (the before-move) board.
    fn italian_key(&self, m: &Mv) -> (usize, bool, usize, Vec<bool>) {
        let is_king = |s: &Sq| self.at(*s).is_some_and(|p| p.king);
        let with_king = is_king(&m.from);
        let kings: Vec<bool> = m.taken.iter().map(is_king).collect();
        let count = kings.iter().filter(|&&k| k).count();
        (m.taken.len(), with_king, count, kings)
    }

    /// The legal moves; `distinct` merges moves with the same start, end and captured set.
    fn legal(&self, distinct: bool) -> Vec<Mv> {
        let mut caps = Vec::new();
        for (sq, p) in self.own_pieces() {
            let mut line = Line {
                from: sq,
                path: Vec::new(),
                taken: Vec::new(),
            };
            self.search(&mut line, sq, p.king, false, &mut caps);
        }
        let mut moves = if caps.is_empty() {
            self.quiet()
        } else {
            match self.game.choice {
                Choice::Free => caps,
                Choice::Maximum => {
                    let best = caps.iter().map(|m| m.taken.len()).max().expect("some");
                    caps.into_iter().filter(|m| m.taken.len() == best).collect()
                }
                Choice::Italian => {
                    let best = caps
                        .iter()
                        .map(|m| self.italian_key(m))
                        .max()
                        .expect("some");
                    caps.into_iter()
                        .filter(|m| self.italian_key(m) == best)
                        .collect()
                }
            }
        };
        let mut seen = HashSet::new();
        moves.retain(|m| {
            let to = *m.path.last().expect("a landing");
            if distinct {
                let mut set = m.taken.clone();
                set.sort();
                seen.insert((m.from, to, set, Vec::new()))
            } else {
                seen.insert((m.from, to, m.taken.clone(), m.path.clone()))
            }
        });
        moves
    }

    fn quiet(&self) -> Vec<Mv> {
        let mut out = Vec::new();
        let fwd = Board::forward(self.turn);
        for (sq, p) in self.own_pieces() {
            let dirs: Vec<Sq> = if p.king {
                vec![(-1, 1), (1, 1), (-1, -1), (1, -1)]
            } else {
                vec![(-1, fwd), (1, fwd)]
            };
            for (df, dr) in dirs {
                let mut t = (sq.0 + df, sq.1 + dr);
                while self.on_board(t) && self.at(t).is_none() {
                    out.push(Mv {
                        from: sq,
                        path: vec![t],
                        taken: Vec::new(),
                        crowned: !p.king && t.1 == self.far_rank(self.turn),
                    });
                    if !p.king || !self.game.flying_kings {
                        break;
                    }
                    t = (t.0 + df, t.1 + dr);
                }
            }
        }
        out
    }

    fn play(&self, m: &Mv) -> Board {
        let mut b = self.clone();
        let piece = b.at(m.from).expect("a piece to move");
        b.put(m.from, None);
        for &s in &m.taken {
            b.put(s, None);
        }
        let to = *m.path.last().expect("a landing");
        b.put(
            to,
            Some(Piece {
                side: piece.side,
                king: piece.king || m.crowned,
            }),
        );
        b.turn = match b.turn {
            Side::White => Side::Black,
            Side::Black => Side::White,
        };
        b
    }
}

fn reference_perft(b: &Board, depth: u32, distinct: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = b.legal(distinct);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|m| reference_perft(&b.play(m), depth - 1, distinct))
        .sum()
}

/// Published start-position counts reproduced by the reference generator, both columns,
/// for the given depths.
fn check_published(file: &str, depths: std::ops::RangeInclusive<u32>) {
    let suites = read_suites(&data(&format!("perft/{file}.perft")));
    let (variant, fen, rows) = suites.first().expect("a suite");
    let board = Board::from_fen(game_of(variant), fen);
    let mut checked = 0;
    for &(depth, drop, keep) in rows.iter().filter(|r| depths.contains(&r.0)) {
        assert_eq!(
            reference_perft(&board, depth, true),
            drop,
            "{file} depth {depth} drop"
        );
        if let Some(keep) = keep {
            assert_eq!(
                reference_perft(&board, depth, false),
                keep,
                "{file} depth {depth} keep"
            );
        }
        checked += 1;
    }
    assert_eq!(
        checked,
        depths.count(),
        "{file}: a published row for each depth"
    );
}

#[test]
fn reference_generator_matches_published_russian() {
    check_published("russian", 1..=5);
}

#[test]
fn reference_generator_matches_published_brazilian() {
    check_published("brazilian", 1..=5);
}

#[test]
fn reference_generator_matches_published_pool() {
    check_published("pool", 1..=5);
}

#[test]
fn reference_generator_matches_published_italian() {
    check_published("italian", 1..=5);
}

#[test]
fn reference_generator_matches_published_english_and_international() {
    check_published("english", 1..=5);
    check_published("international", 1..=4);
}

#[test]
#[ignore = "deep rows: run in release (`cargo test --release --test reference_generator -- --ignored`)"]
fn reference_generator_matches_published_deep() {
    // Depth 8 is where the first duplicate capture paths appear on 8×8 (drop != keep).
    for file in ["russian", "brazilian", "pool", "italian", "english"] {
        check_published(file, 6..=8);
    }
    check_published("international", 5..=6);
}

/// The start position of russian80 and diagonal, restated from their rules.
fn reference_start(variant: &str) -> Board {
    let game = game_of(variant);
    let mut b = Board::empty(game, Side::White);
    match variant {
        // RU 1.1–1.3 on the 10×8 board: each side fills the dark squares of its three
        // nearest rows.
        "russian80" => {
            for r in 0..game.height {
                for f in 0..game.width {
                    let side = match r {
                        0..=2 => Side::White,
                        5..=7 => Side::Black,
                        _ => continue,
                    };
                    if b.dark((f, r)) {
                        b.put((f, r), Some(Piece { side, king: false }));
                    }
                }
            }
        }
        // Two triangles of 12 men on either side of the main road a1–h8: White below it
        // (file > rank), Black above it (file < rank), the road itself empty.
        "diagonal" => {
            for r in 0..8 {
                for f in 0..8 {
                    if !b.dark((f, r)) || f == r {
                        continue;
                    }
                    let side = if f > r { Side::White } else { Side::Black };
                    b.put((f, r), Some(Piece { side, king: false }));
                }
            }
        }
        other => panic!("no reference start for {other}"),
    }
    b
}

/// Rows with more leaves than this run only in the deep (release) test.
const QUICK_LEAVES: u64 = 300_000;

/// crate perft == the file == the reference generator, from the start position, for the
/// rows whose drop count lies in `leaves`.
fn check_own_file(name: &str, variant: Variant, leaves: std::ops::RangeInclusive<u64>) {
    let suites = read_suites(&data(&format!("{name}.perft")));
    assert_eq!(suites.len(), 1, "{name}: one position");
    let (file_variant, fen, rows) = &suites[0];
    assert_eq!(file_variant, name);
    let pos = parse_fen(fen, variant).expect("the file's fen");
    assert_eq!(
        pos,
        Position::start(variant),
        "{name}: the file starts at the start"
    );
    assert_eq!(&write_fen(&Position::start(variant)), fen);
    let board = Board::from_fen(game_of(name), fen);
    assert_eq!(board, reference_start(name), "{name}: the reference start");
    assert!(
        rows.iter().any(|r| r.0 == 5) && rows.iter().filter(|r| r.1 <= QUICK_LEAVES).count() >= 5,
        "{name}: depth 5 at least, in the quick test"
    );
    for &(depth, drop, keep) in rows.iter().filter(|r| leaves.contains(&r.1)) {
        let keep = keep.expect("a keep column");
        assert_eq!(perft(&pos, depth, true), drop, "{name} {depth} crate drop");
        assert_eq!(perft(&pos, depth, false), keep, "{name} {depth} crate keep");
        assert_eq!(
            reference_perft(&board, depth, true),
            drop,
            "{name} {depth} reference drop"
        );
        assert_eq!(
            reference_perft(&board, depth, false),
            keep,
            "{name} {depth} reference keep"
        );
    }
}

#[test]
fn russian80_perft_crate_file_and_reference_agree() {
    check_own_file("russian80", Variant::Russian80, 0..=QUICK_LEAVES);
}

#[test]
fn diagonal_perft_crate_file_and_reference_agree() {
    check_own_file("diagonal", Variant::Diagonal, 0..=QUICK_LEAVES);
}

#[test]
#[ignore = "deep rows: run in release (`cargo test --release --test reference_generator -- --ignored`)"]
fn own_perft_files_deep_rows() {
    check_own_file("russian80", Variant::Russian80, QUICK_LEAVES + 1..=u64::MAX);
    check_own_file("diagonal", Variant::Diagonal, QUICK_LEAVES + 1..=u64::MAX);
}
