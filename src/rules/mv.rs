//! Moves: the whole path and the captured squares in capture order.

use super::Bitboard;
use super::geometry::Square;

/// The most pieces one capture can take on any board of the rule book.
pub const MAX_CAPTURES: usize = 24;

/// One legal move: the start square, every landing square, and the captured squares in
/// the order they were jumped. A quiet move has one landing square and no captures; a
/// jump chain of a hopping game (corners) has several landing squares and no captures,
/// so "several landings" never means "capture": ask [`Move::is_capture`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    pub(crate) from: u8,
    pub(crate) landings: u8,
    pub(crate) captures: u8,
    pub(crate) promotes: bool,
    pub(crate) captured_set: Bitboard,
    pub(crate) path: [u8; MAX_CAPTURES],
    pub(crate) order: [u8; MAX_CAPTURES],
}

impl Move {
    pub(crate) const fn quiet(from: u8, to: u8, promotes: bool) -> Move {
        let mut path = [0; MAX_CAPTURES];
        path[0] = to;
        Move {
            from,
            landings: 1,
            captures: 0,
            promotes,
            captured_set: 0,
            path,
            order: [0; MAX_CAPTURES],
        }
    }

    /// The square the piece starts from.
    #[inline]
    pub fn from(&self) -> Square {
        Square(self.from)
    }

    /// The square the piece ends on.
    #[inline]
    pub fn to(&self) -> Square {
        Square(self.path[self.landings as usize - 1])
    }

    /// Whether the move captures.
    #[inline]
    pub fn is_capture(&self) -> bool {
        self.captures > 0
    }

    /// Whether the moving man is crowned by this move.
    #[inline]
    pub fn promotes(&self) -> bool {
        self.promotes
    }

    /// Every landing square after the start, the last being [`Move::to`].
    pub fn landings(&self) -> impl ExactSizeIterator<Item = Square> + '_ {
        self.path[..self.landings as usize]
            .iter()
            .map(|&s| Square(s))
    }

    /// The start square followed by every landing square.
    pub fn path(&self) -> impl Iterator<Item = Square> + '_ {
        std::iter::once(self.from()).chain(self.landings())
    }

    /// The captured squares in the order they were jumped.
    pub fn captured(&self) -> impl ExactSizeIterator<Item = Square> + '_ {
        self.order[..self.captures as usize]
            .iter()
            .map(|&s| Square(s))
    }

    /// The captured squares as a set.
    #[inline]
    pub fn captured_set(&self) -> Bitboard {
        self.captured_set
    }

    /// Number of pieces captured.
    #[inline]
    pub fn capture_count(&self) -> usize {
        self.captures as usize
    }

    /// Whether two moves are the same move for the arbiter: same start, end and set of
    /// captured squares (different paths to the same result are one move).
    #[inline]
    pub fn same_move(&self, other: &Move) -> bool {
        self.from == other.from
            && self.to() == other.to()
            && self.captured_set == other.captured_set
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path: Vec<u8> = self.path().map(|s| s.0).collect();
        let caps: Vec<u8> = self.captured().map(|s| s.0).collect();
        write!(f, "Move(bits {path:?} x {caps:?})")
    }
}
