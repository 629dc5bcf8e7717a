//! `Setup` (unchecked) and `Position` (checked), and playing moves.

use std::fmt;

use super::geometry::Square;
use super::mv::Move;
use super::variant::Variant;
use super::zobrist;
use super::{Bitboard, Color};

/// An unchecked arrangement of pieces; turn it into a [`Position`] with
/// [`Position::from_setup`]. Bitboards use the engine's bit layout of the variant's
/// geometry ([`Square::bit`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Setup {
    /// The game being played.
    pub variant: Variant,
    /// White's pieces (men and kings).
    pub white: Bitboard,
    /// Black's pieces (men and kings).
    pub black: Bitboard,
    /// Which of the pieces are kings.
    pub kings: Bitboard,
    /// The side to move.
    pub turn: Color,
}

impl Setup {
    /// An empty board of `variant` with `turn` to move.
    pub fn empty(variant: Variant, turn: Color) -> Setup {
        Setup {
            variant,
            white: 0,
            black: 0,
            kings: 0,
            turn,
        }
    }

    /// The start position of `variant`.
    pub fn start(variant: Variant) -> Setup {
        let rules = variant.rules();
        Setup {
            variant,
            white: rules.start_men(Color::White),
            black: rules.start_men(Color::Black),
            kings: 0,
            turn: rules.first_to_move,
        }
    }

    /// The pieces of one side.
    pub fn pieces_mut(&mut self, color: Color) -> &mut Bitboard {
        match color {
            Color::White => &mut self.white,
            Color::Black => &mut self.black,
        }
    }
}

/// Why a [`Setup`] is not a position of its variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PositionError {
    /// A piece stands on a square the board does not have.
    OffBoard {
        /// The bit index.
        bit: u8,
    },
    /// A square holds a piece of both colours.
    BothColors {
        /// The PDN number of the square.
        square: u32,
    },
    /// A square is marked as a king but holds no piece.
    KingWithoutPiece {
        /// The PDN number of the square.
        square: u32,
    },
    /// A king in a variant without kings (corners: men are never crowned).
    KingInVariantWithoutKings {
        /// The PDN number of the square.
        square: u32,
    },
    /// A man stands on the rank where it would already have been crowned.
    ManOnCrowningRank {
        /// The side of the man.
        color: Color,
        /// The PDN number of the square.
        square: u32,
    },
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::OffBoard { bit } => {
                write!(f, "piece on bit {bit}, which is off the board")
            }
            PositionError::BothColors { square } => {
                write!(f, "square {square} holds a white and a black piece")
            }
            PositionError::KingWithoutPiece { square } => {
                write!(f, "square {square} is marked as a king but is empty")
            }
            PositionError::KingInVariantWithoutKings { square } => {
                write!(
                    f,
                    "square {square} holds a king, but this game has no kings"
                )
            }
            PositionError::ManOnCrowningRank { color, square } => {
                write!(
                    f,
                    "{color} man on square {square} stands on its crowning rank"
                )
            }
        }
    }
}

impl std::error::Error for PositionError {}

/// A legal arrangement of a variant's pieces with a side to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) variant: Variant,
    pub(crate) pieces: [Bitboard; 2],
    pub(crate) kings: Bitboard,
    pub(crate) turn: Color,
}

impl Position {
    /// The start position of `variant`.
    pub fn start(variant: Variant) -> Position {
        Position::from_setup(&Setup::start(variant)).expect("start positions are legal")
    }

    /// Checks a setup.
    ///
    /// # Errors
    /// [`PositionError`] when a piece is off the board, a square holds both colours, a king
    /// flag marks an empty square, or a man stands on its own crowning rank.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        let rules = setup.variant.rules();
        let g = rules.geometry();
        let mirrored = rules.mirrored;
        let all = setup.white | setup.black | setup.kings;
        if all & !g.valid != 0 {
            let bit = (all & !g.valid).trailing_zeros() as u8;
            return Err(PositionError::OffBoard { bit });
        }
        let number = |bits: Bitboard| g.number(Square(bits.trailing_zeros() as u8), mirrored);
        if setup.white & setup.black != 0 {
            return Err(PositionError::BothColors {
                square: number(setup.white & setup.black),
            });
        }
        let stray = setup.kings & !(setup.white | setup.black);
        if stray != 0 {
            return Err(PositionError::KingWithoutPiece {
                square: number(stray),
            });
        }
        if !rules.crowning && setup.kings != 0 {
            return Err(PositionError::KingInVariantWithoutKings {
                square: number(setup.kings),
            });
        }
        for color in Color::ALL {
            let men = match color {
                Color::White => setup.white,
                Color::Black => setup.black,
            } & !setup.kings;
            let bad = men & rules.promotion_rank(color);
            if bad != 0 {
                return Err(PositionError::ManOnCrowningRank {
                    color,
                    square: number(bad),
                });
            }
        }
        Ok(Position {
            variant: setup.variant,
            pieces: [setup.white, setup.black],
            kings: setup.kings,
            turn: setup.turn,
        })
    }

    /// Back to an unchecked setup.
    pub fn to_setup(&self) -> Setup {
        Setup {
            variant: self.variant,
            white: self.pieces[0],
            black: self.pieces[1],
            kings: self.kings,
            turn: self.turn,
        }
    }

    /// The variant.
    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The side to move.
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// All pieces of one side.
    #[inline]
    pub fn pieces(&self, color: Color) -> Bitboard {
        self.pieces[color.index()]
    }

    /// All kings of both sides.
    #[inline]
    pub fn kings(&self) -> Bitboard {
        self.kings
    }

    /// The men of one side.
    #[inline]
    pub fn men(&self, color: Color) -> Bitboard {
        self.pieces[color.index()] & !self.kings
    }

    /// The kings of one side.
    #[inline]
    pub fn kings_of(&self, color: Color) -> Bitboard {
        self.pieces[color.index()] & self.kings
    }

    /// Every occupied square.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.pieces[0] | self.pieces[1]
    }

    /// What stands on a square: its colour and whether it is a king.
    pub fn piece_at(&self, sq: Square) -> Option<(Color, bool)> {
        let bit = sq.bit();
        let king = self.kings & bit != 0;
        if self.pieces[0] & bit != 0 {
            Some((Color::White, king))
        } else if self.pieces[1] & bit != 0 {
            Some((Color::Black, king))
        } else {
            None
        }
    }

    /// The Zobrist hash of the pieces and the side to move (for repetition).
    pub fn hash(&self) -> u64 {
        zobrist::hash(self)
    }

    /// Plays a move that the generator produced for this position; no checks.
    #[inline]
    pub(crate) fn apply(&mut self, mv: &Move) {
        let us = self.turn.index();
        let from = 1u64 << mv.from;
        let to = 1u64 << mv.path[mv.landings as usize - 1];
        let was_king = self.kings & from != 0;
        // Captured pieces go first: where they leave the board at once (Turkish) the
        // capturing piece may end on a captured piece's square.
        self.pieces[1 - us] &= !mv.captured_set;
        self.kings &= !(from | mv.captured_set);
        self.pieces[us] = (self.pieces[us] & !from) | to;
        if was_king || mv.promotes {
            self.kings |= to;
        }
        self.turn = !self.turn;
    }

    /// The position after `mv`, which must be one of [`Position::legal_moves`].
    ///
    /// # Errors
    /// An illegal move gives back the unchanged position inside [`PlayError`].
    pub fn play(&self, mv: &Move) -> Result<Position, PlayError> {
        if self.legal_moves_all_paths().iter().any(|m| m == mv) {
            let mut next = *self;
            next.apply(mv);
            Ok(next)
        } else {
            Err(PlayError {
                position: *self,
                mv: *mv,
            })
        }
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Position({} {:?} W{:#x} B{:#x} K{:#x})",
            self.variant, self.turn, self.pieces[0], self.pieces[1], self.kings
        )
    }
}

/// An illegal move, with the position it was tried in, unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayError {
    /// The position, unchanged.
    pub position: Position,
    /// The move that was refused.
    pub mv: Move,
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move in this position")
    }
}

impl std::error::Error for PlayError {}
