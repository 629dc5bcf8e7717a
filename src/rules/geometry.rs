//! Board geometry: which squares exist, how they are numbered inside the engine, and
//! who neighbours whom in each direction.
//!
//! Diagonal boards (8×8, 10×10, 10 wide × 8 high) use only the dark squares, laid out
//! row by row from the top-left with one unused "ghost" bit after every pair of rows, so
//! that a diagonal step is always the same distance in bits (`n` or `n + 1`, where `n` is
//! the number of dark squares in a row) and a whole side's men can be stepped at once with
//! a shift. Orthogonal boards (Turkish, corners) use all 64 squares, `row * 8 + col`.
//!
//! Rows and columns here are *canonical*: row 0 is the top (Black's back rank), column 0
//! the left edge seen from White, and the top-left corner is a light square. A variant
//! whose board is the mirror image (Italian: a1 is light) mirrors only its names and
//! numbers; the engine's geometry is the same.

use std::sync::LazyLock;

use super::Bitboard;

/// A square: an index into the engine's bit layout for one geometry (not a PDN number;
/// see [`Geometry::number`] for that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Square {
    /// The square's bit in a [`Bitboard`].
    #[inline]
    pub const fn bit(self) -> Bitboard {
        1u64 << self.0
    }
}

/// The kind of board a variant is played on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoardKind {
    /// 8×8, 32 dark squares (Russian, English, Brazilian, pool, Italian, …).
    Diagonal8x8,
    /// 10×10, 50 dark squares (International, Frisian).
    Diagonal10x10,
    /// 10 files wide, 8 ranks high, 40 dark squares (80-square draughts).
    Diagonal10x8,
    /// 8×8, all 64 squares (Turkish, corners).
    Orthogonal8x8,
}

/// A direction of movement. The first four are diagonal, the last four orthogonal; "up"
/// is towards row 0, Black's side, which is forward for White.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// Up and left.
    UpLeft = 0,
    /// Up and right.
    UpRight = 1,
    /// Down and left.
    DownLeft = 2,
    /// Down and right.
    DownRight = 3,
    /// Straight up (on diagonal boards: two rows up, same column).
    Up = 4,
    /// Straight down (on diagonal boards: two rows down, same column).
    Down = 5,
    /// Left (on diagonal boards: two columns left, same row).
    Left = 6,
    /// Right (on diagonal boards: two columns right, same row).
    Right = 7,
}

impl Direction {
    /// All eight directions in index order.
    pub const ALL: [Direction; 8] = [
        Direction::UpLeft,
        Direction::UpRight,
        Direction::DownLeft,
        Direction::DownRight,
        Direction::Up,
        Direction::Down,
        Direction::Left,
        Direction::Right,
    ];

    /// The direction's index, 0..8.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The opposite direction.
    pub const fn opposite(self) -> Direction {
        match self {
            Direction::UpLeft => Direction::DownRight,
            Direction::UpRight => Direction::DownLeft,
            Direction::DownLeft => Direction::UpRight,
            Direction::DownRight => Direction::UpLeft,
            Direction::Up => Direction::Down,
            Direction::Down => Direction::Up,
            Direction::Left => Direction::Right,
            Direction::Right => Direction::Left,
        }
    }

    /// (row step, column step) on the full grid of the board.
    const fn step(self, diagonal_board: bool) -> (i32, i32) {
        let k = if diagonal_board { 2 } else { 1 };
        match self {
            Direction::UpLeft => (-1, -1),
            Direction::UpRight => (-1, 1),
            Direction::DownLeft => (1, -1),
            Direction::DownRight => (1, 1),
            Direction::Up => (-k, 0),
            Direction::Down => (k, 0),
            Direction::Left => (0, -k),
            Direction::Right => (0, k),
        }
    }
}

/// No neighbour in that direction.
pub const NONE: u8 = u8::MAX;

/// The precomputed tables of one board kind.
#[derive(Debug)]
pub struct Geometry {
    /// The board kind.
    pub kind: BoardKind,
    /// Files (columns) of the full grid.
    pub width: u8,
    /// Ranks (rows) of the full grid.
    pub height: u8,
    /// Every playable square's bit.
    pub valid: Bitboard,
    /// Playable squares in canonical order (row-major from the top-left).
    pub order: Vec<Square>,
    /// Row (0 = top) of each bit index; meaningless for ghost bits.
    row: [u8; 64],
    /// Column (0 = left) of each bit index.
    col: [u8; 64],
    /// Position of each bit index in `order`.
    ordinal: [u8; 64],
    /// Bit index of each (row, column) cell, or [`NONE`] for unplayable cells.
    cell: [[u8; 10]; 10],
    /// Neighbour of each square in each direction.
    neighbour: [[u8; 64]; 8],
    /// Squares that have a neighbour in each direction.
    has_neighbour: [Bitboard; 8],
    /// Bit distance of a step in each direction, where it is the same for every square.
    shift: [Option<i8>; 8],
    /// All squares beyond each square in each direction, nearest first as a bitboard.
    ray: [[Bitboard; 64]; 8],
}

impl Geometry {
    fn build(kind: BoardKind) -> Geometry {
        let (width, height, diagonal) = match kind {
            BoardKind::Diagonal8x8 => (8u8, 8u8, true),
            BoardKind::Diagonal10x10 => (10, 10, true),
            BoardKind::Diagonal10x8 => (10, 8, true),
            BoardKind::Orthogonal8x8 => (8, 8, false),
        };
        let mut cell = [[NONE; 10]; 10];
        let mut row = [NONE; 64];
        let mut col = [NONE; 64];
        let mut ordinal = [NONE; 64];
        let mut order = Vec::new();
        let mut valid = 0u64;
        let per_row = if diagonal { width / 2 } else { width };
        for r in 0..height {
            for c in 0..width {
                let index = if diagonal {
                    // Top-left is light: dark cells have (r + c) odd.
                    if (r + c) % 2 == 0 {
                        continue;
                    }
                    r * per_row + r / 2 + c / 2
                } else {
                    r * width + c
                };
                cell[r as usize][c as usize] = index;
                row[index as usize] = r;
                col[index as usize] = c;
                ordinal[index as usize] = order.len() as u8;
                order.push(Square(index));
                valid |= 1u64 << index;
            }
        }
        let mut neighbour = [[NONE; 64]; 8];
        let mut has_neighbour = [0u64; 8];
        let mut shift = [None; 8];
        for dir in Direction::ALL {
            let (dr, dc) = dir.step(diagonal);
            let mut delta: Option<Option<i32>> = None;
            for &sq in &order {
                let (r, c) = (row[sq.0 as usize] as i32, col[sq.0 as usize] as i32);
                let (nr, nc) = (r + dr, c + dc);
                if nr < 0 || nc < 0 || nr >= height as i32 || nc >= width as i32 {
                    continue;
                }
                let n = cell[nr as usize][nc as usize];
                if n == NONE {
                    continue;
                }
                neighbour[dir.index()][sq.0 as usize] = n;
                has_neighbour[dir.index()] |= sq.bit();
                let d = n as i32 - sq.0 as i32;
                delta = match delta {
                    None => Some(Some(d)),
                    Some(Some(prev)) if prev == d => Some(Some(d)),
                    _ => Some(None),
                };
            }
            shift[dir.index()] = delta.flatten().map(|d| d as i8);
        }
        let mut ray = [[0u64; 64]; 8];
        for dir in Direction::ALL {
            for &sq in &order {
                let mut bits = 0;
                let mut s = neighbour[dir.index()][sq.0 as usize];
                while s != NONE {
                    bits |= 1u64 << s;
                    s = neighbour[dir.index()][s as usize];
                }
                ray[dir.index()][sq.0 as usize] = bits;
            }
        }
        Geometry {
            kind,
            width,
            height,
            valid,
            order,
            row,
            col,
            ordinal,
            cell,
            neighbour,
            has_neighbour,
            shift,
            ray,
        }
    }

    /// The shared tables of a board kind.
    pub fn of(kind: BoardKind) -> &'static Geometry {
        static D8: LazyLock<Geometry> = LazyLock::new(|| Geometry::build(BoardKind::Diagonal8x8));
        static D10: LazyLock<Geometry> =
            LazyLock::new(|| Geometry::build(BoardKind::Diagonal10x10));
        static D108: LazyLock<Geometry> =
            LazyLock::new(|| Geometry::build(BoardKind::Diagonal10x8));
        static O8: LazyLock<Geometry> = LazyLock::new(|| Geometry::build(BoardKind::Orthogonal8x8));
        match kind {
            BoardKind::Diagonal8x8 => &D8,
            BoardKind::Diagonal10x10 => &D10,
            BoardKind::Diagonal10x8 => &D108,
            BoardKind::Orthogonal8x8 => &O8,
        }
    }

    /// Whether the board uses only dark squares.
    pub fn is_diagonal(&self) -> bool {
        self.kind != BoardKind::Orthogonal8x8
    }

    /// Number of playable squares.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Always false: every board has squares. Present for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Canonical row of a square (0 = top, Black's back rank).
    #[inline]
    pub fn row(&self, sq: Square) -> u8 {
        self.row[sq.0 as usize]
    }

    /// Canonical column of a square (0 = left as White sees it).
    #[inline]
    pub fn col(&self, sq: Square) -> u8 {
        self.col[sq.0 as usize]
    }

    /// The square at a canonical (row, column), if it is playable.
    pub fn at(&self, row: u8, col: u8) -> Option<Square> {
        if row >= self.height || col >= self.width {
            return None;
        }
        let i = self.cell[row as usize][col as usize];
        (i != NONE).then_some(Square(i))
    }

    /// Whether a bit index is a playable square of this board.
    #[inline]
    pub fn contains(&self, sq: Square) -> bool {
        sq.0 < 64 && self.valid & sq.bit() != 0
    }

    /// The neighbour of `sq` in `dir`.
    #[inline]
    pub fn neighbour(&self, sq: Square, dir: Direction) -> Option<Square> {
        let n = self.neighbour[dir.index()][sq.0 as usize];
        (n != NONE).then_some(Square(n))
    }

    /// The raw neighbour index ([`NONE`] when off the board); the hot-path form.
    #[inline]
    pub fn neighbour_raw(&self, sq: u8, dir: usize) -> u8 {
        self.neighbour[dir][sq as usize]
    }

    /// Every square beyond `sq` in `dir`.
    #[inline]
    pub fn ray(&self, sq: u8, dir: usize) -> Bitboard {
        self.ray[dir][sq as usize]
    }

    /// Every square's ray in every direction ([`Geometry::ray`]), indexed by direction
    /// and square.
    #[inline]
    pub(crate) fn rays(&self) -> &[[Bitboard; 64]; 8] {
        &self.ray
    }

    /// The squares one step in `dir` from each square of `from` (those that exist).
    #[inline]
    pub fn step_all(&self, from: Bitboard, dir: usize) -> Bitboard {
        let from = from & self.has_neighbour[dir];
        match self.shift[dir] {
            Some(d) if d >= 0 => from << d,
            Some(d) => from >> (-d),
            None => {
                let mut out = 0;
                let mut bits = from;
                while bits != 0 {
                    let s = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    out |= 1u64 << self.neighbour[dir][s];
                }
                out
            }
        }
    }

    /// The 1-based PDN square number of `sq`. Numbering runs row by row from the top,
    /// left to right (right to left on a mirrored board such as Italian).
    pub fn number(&self, sq: Square, mirrored: bool) -> u32 {
        if !mirrored {
            return self.ordinal[sq.0 as usize] as u32 + 1;
        }
        let per_row = self.len() / self.height as usize;
        let ord = self.ordinal[sq.0 as usize] as usize;
        let (r, k) = (ord / per_row, ord % per_row);
        (r * per_row + (per_row - 1 - k) + 1) as u32
    }

    /// The square with PDN number `n` (1-based), if it exists.
    pub fn from_number(&self, n: u32, mirrored: bool) -> Option<Square> {
        if n == 0 || n as usize > self.len() {
            return None;
        }
        let i = (n - 1) as usize;
        let ord = if mirrored {
            let per_row = self.len() / self.height as usize;
            let (r, k) = (i / per_row, i % per_row);
            r * per_row + (per_row - 1 - k)
        } else {
            i
        };
        Some(self.order[ord])
    }

    /// The algebraic (file, rank) of a square, 0-based: file 0 = `a`, rank 0 = `1`.
    pub fn file_rank(&self, sq: Square, mirrored: bool) -> (u8, u8) {
        let c = self.col(sq);
        let file = if mirrored { self.width - 1 - c } else { c };
        (file, self.height - 1 - self.row(sq))
    }

    /// The square at an algebraic (file, rank), 0-based, if it is playable.
    pub fn from_file_rank(&self, file: u8, rank: u8, mirrored: bool) -> Option<Square> {
        if file >= self.width || rank >= self.height {
            return None;
        }
        let c = if mirrored {
            self.width - 1 - file
        } else {
            file
        };
        self.at(self.height - 1 - rank, c)
    }

    /// The squares of the given rows (0 = top).
    pub fn rows(&self, rows: impl IntoIterator<Item = u8>) -> Bitboard {
        let mut bits = 0;
        for r in rows {
            for &sq in &self.order {
                if self.row(sq) == r {
                    bits |= sq.bit();
                }
            }
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonal_steps_are_constant_shifts() {
        for kind in [
            BoardKind::Diagonal8x8,
            BoardKind::Diagonal10x10,
            BoardKind::Diagonal10x8,
        ] {
            let g = Geometry::of(kind);
            for d in 0..4 {
                assert!(g.shift[d].is_some(), "{kind:?} direction {d}");
            }
        }
        let g = Geometry::of(BoardKind::Orthogonal8x8);
        for d in 4..8 {
            assert!(g.shift[d].is_some());
        }
    }

    #[test]
    fn pdn_numbering_8x8() {
        let g = Geometry::of(BoardKind::Diagonal8x8);
        // Square 1 = b8, 4 = h8, 29 = a1, 32 = g1.
        assert_eq!(
            g.file_rank(g.from_number(1, false).expect("1"), false),
            (1, 7)
        );
        assert_eq!(
            g.file_rank(g.from_number(4, false).expect("4"), false),
            (7, 7)
        );
        assert_eq!(
            g.file_rank(g.from_number(29, false).expect("29"), false),
            (0, 0)
        );
        assert_eq!(
            g.file_rank(g.from_number(32, false).expect("32"), false),
            (6, 0)
        );
        for n in 1..=32 {
            let sq = g.from_number(n, true).expect("square");
            assert_eq!(g.number(sq, true), n);
            let (f, r) = g.file_rank(sq, true);
            assert_eq!(g.from_file_rank(f, r, true), Some(sq));
        }
        assert_eq!(g.from_number(33, false), None);
        assert_eq!(g.from_number(0, false), None);
    }

    #[test]
    fn pdn_numbering_10x10() {
        let g = Geometry::of(BoardKind::Diagonal10x10);
        assert_eq!(g.len(), 50);
        assert_eq!(
            g.file_rank(g.from_number(1, false).expect("1"), false),
            (1, 9)
        );
        assert_eq!(
            g.file_rank(g.from_number(46, false).expect("46"), false),
            (0, 0)
        );
        assert_eq!(
            g.file_rank(g.from_number(50, false).expect("50"), false),
            (8, 0)
        );
    }
}
