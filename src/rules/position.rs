//! `Setup` (unchecked) and `Position` (checked), and playing moves.

use std::collections::BTreeMap;
use std::fmt;

use super::geometry::Square;
use super::mv::Move;
use super::variant::{Removal, Variant};
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
    /// Towers only ([`Removal::UnderCapturer`]): the pieces beneath the top piece of a
    /// square, top down, by colour (a piece beneath the top is always a man, TOW). The top
    /// piece itself is the one in `white` / `black` / `kings`. Empty in every other
    /// variant.
    pub stacks: BTreeMap<Square, Vec<Color>>,
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
            stacks: BTreeMap::new(),
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
            stacks: BTreeMap::new(),
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
    /// Pieces are stacked on a square in a variant without towers.
    StackNotAllowed {
        /// The PDN number of the square.
        square: u32,
    },
    /// Pieces are listed beneath an empty square.
    StackWithoutTop {
        /// The PDN number of the square.
        square: u32,
    },
    /// Towers: more pieces of one colour than the twelve each side has (RU 1.3, TOW).
    TooManyPieces {
        /// The side.
        color: Color,
        /// How many of its pieces are on the board, in all stacks.
        count: u32,
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
            PositionError::StackNotAllowed { square } => {
                write!(f, "square {square} holds a stack, which only towers has")
            }
            PositionError::StackWithoutTop { square } => {
                write!(f, "square {square} has pieces beneath an empty top")
            }
            PositionError::TooManyPieces { color, count } => {
                write!(
                    f,
                    "{count} {color} pieces in the stacks, more than the {MAX_PER_SIDE} a side has (TOW, RU 1.3)"
                )
            }
        }
    }
}

impl std::error::Error for PositionError {}

/// Towers: the most pieces of one colour on the board (each side has twelve, RU 1.3, and
/// a tower only moves pieces around). It also bounds the packed stacks below.
const MAX_PER_SIDE: u32 = 12;

/// A legal arrangement of a variant's pieces with a side to move.
///
/// `pieces`, `kings` and everything the move generator reads describe the *top* piece of
/// each square. Towers (TOW) also keep the pieces beneath the tops, packed in three words
/// that are zero in every other variant: `stacked` marks the squares with pieces beneath
/// their top; `under_colors` and `under_ends` list those pieces as one sequence, square by
/// square in increasing bit order and top down within a square (bit `i` of `under_colors`
/// set: the `i`-th piece is Black; bit `i` of `under_ends` set: it is the bottom piece of
/// its square). A piece beneath the top is always a man (seed 000: a freed king is a man),
/// so its colour is all there is to keep. At most 23 pieces can be beneath tops (24
/// pieces, [`MAX_PER_SIDE`] each), so 32 bits suffice.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) variant: Variant,
    pub(crate) turn: Color,
    pub(crate) pieces: [Bitboard; 2],
    pub(crate) kings: Bitboard,
    pub(crate) stacked: Bitboard,
    pub(crate) under_colors: u32,
    pub(crate) under_ends: u32,
}

/// The pieces beneath one top, as stored in a [`Position`]: `len` colours, bit `i` of
/// `colors` set when the `i`-th piece from the top (0 = just beneath it) is Black.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) len: u32,
    pub(crate) colors: u32,
}

#[inline]
fn low(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
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
        let mut pos = Position {
            variant: setup.variant,
            turn: setup.turn,
            pieces: [setup.white, setup.black],
            kings: setup.kings,
            stacked: 0,
            under_colors: 0,
            under_ends: 0,
        };
        let towers = rules.removal == Removal::UnderCapturer;
        if !towers && setup.stacks.values().all(Vec::is_empty) {
            return Ok(pos);
        }
        for (&sq, under) in &setup.stacks {
            if under.is_empty() {
                continue;
            }
            if g.valid & sq.bit() == 0 {
                return Err(PositionError::OffBoard { bit: sq.0 });
            }
            if !towers {
                return Err(PositionError::StackNotAllowed {
                    square: number(sq.bit()),
                });
            }
            if (setup.white | setup.black) & sq.bit() == 0 {
                return Err(PositionError::StackWithoutTop {
                    square: number(sq.bit()),
                });
            }
        }
        for color in Color::ALL {
            let beneath: usize = setup
                .stacks
                .values()
                .map(|u| u.iter().filter(|&&c| c == color).count())
                .sum();
            let count = pos.pieces[color.index()].count_ones() + beneath as u32;
            if count > MAX_PER_SIDE {
                return Err(PositionError::TooManyPieces { color, count });
            }
        }
        for (&sq, under) in &setup.stacks {
            if under.is_empty() {
                continue;
            }
            let colors = under.iter().enumerate().fold(0u32, |acc, (i, &c)| {
                acc | (u32::from(c == Color::Black) << i)
            });
            pos.insert_run(
                sq.0,
                Run {
                    len: under.len() as u32,
                    colors,
                },
            );
        }
        Ok(pos)
    }

    /// Back to an unchecked setup.
    pub fn to_setup(&self) -> Setup {
        let mut stacks = BTreeMap::new();
        let mut bits = self.stacked;
        while bits != 0 {
            let sq = Square(bits.trailing_zeros() as u8);
            bits &= bits - 1;
            stacks.insert(sq, self.beneath(sq));
        }
        Setup {
            variant: self.variant,
            white: self.pieces[0],
            black: self.pieces[1],
            kings: self.kings,
            turn: self.turn,
            stacks,
        }
    }

    /// Towers: the squares whose top has pieces beneath it (always empty in other
    /// variants).
    #[inline]
    pub fn towers(&self) -> Bitboard {
        self.stacked
    }

    /// Towers: the colours of the pieces beneath the top of `sq`, top down (each is a
    /// man). Empty for a lone piece, an empty square, and in other variants.
    pub fn beneath(&self, sq: Square) -> Vec<Color> {
        let run = self.run(sq.0);
        (0..run.len)
            .map(|i| {
                if run.colors >> i & 1 == 1 {
                    Color::Black
                } else {
                    Color::White
                }
            })
            .collect()
    }

    /// Every piece of one colour on the board: the tops and, in towers, the pieces
    /// beneath them.
    pub fn piece_count(&self, color: Color) -> u32 {
        // Every piece beneath a top lies below the highest bottom mark.
        let total = 32 - self.under_ends.leading_zeros();
        let black = (self.under_colors as u64 & low(total)).count_ones();
        let beneath = match color {
            Color::White => total - black,
            Color::Black => black,
        };
        self.pieces[color.index()].count_ones() + beneath
    }

    /// Where the run of `sq`'s pieces starts in the packed sequence: after the runs of
    /// the stacked squares with lower bits.
    #[inline]
    fn run_start(&self, sq: u8) -> u32 {
        let k = (self.stacked & low(u32::from(sq))).count_ones();
        let mut ends = self.under_ends;
        for _ in 1..k {
            ends &= ends - 1;
        }
        if k == 0 { 0 } else { ends.trailing_zeros() + 1 }
    }

    /// The pieces beneath the top of `sq` (length 0 if none).
    #[inline]
    pub(crate) fn run(&self, sq: u8) -> Run {
        if self.stacked & (1u64 << sq) == 0 {
            return Run { len: 0, colors: 0 };
        }
        let start = self.run_start(sq);
        let len = (self.under_ends >> start).trailing_zeros() + 1;
        Run {
            len,
            colors: ((u64::from(self.under_colors) >> start) & low(len)) as u32,
        }
    }

    /// Takes the run of `sq` out of the sequence (the square must be stacked).
    fn take_run(&mut self, sq: u8) -> Run {
        let run = self.run(sq);
        if run.len == 0 {
            return run;
        }
        let start = self.run_start(sq);
        let cut = |x: u32| -> u32 {
            let x = u64::from(x);
            ((x & low(start)) | ((x >> (start + run.len)) << start)) as u32
        };
        self.under_colors = cut(self.under_colors);
        self.under_ends = cut(self.under_ends);
        self.stacked &= !(1u64 << sq);
        run
    }

    /// Puts a run beneath the top of `sq`, which must not be stacked yet.
    fn insert_run(&mut self, sq: u8, run: Run) {
        if run.len == 0 {
            return;
        }
        let start = self.run_start(sq);
        let splice = |x: u32, mid: u64| -> u32 {
            let x = u64::from(x);
            ((x & low(start)) | (mid << start) | ((x >> start) << (start + run.len))) as u32
        };
        self.under_colors = splice(self.under_colors, u64::from(run.colors) & low(run.len));
        self.under_ends = splice(self.under_ends, 1u64 << (run.len - 1));
        self.stacked |= 1u64 << sq;
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

    /// Plays a move that the generator produced for this position; no checks.
    #[inline]
    pub(crate) fn apply(&mut self, mv: &Move) {
        if self.stacked != 0
            || (mv.captures != 0 && self.variant.rules().removal == Removal::UnderCapturer)
        {
            return self.apply_towers(mv);
        }
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

    /// [`Position::apply`] for towers (TOW; seed 000 "turnuri rusești"): the whole tower
    /// moves by its top piece and only its top is crowned; each jumped tower loses its
    /// top piece, which goes under the capturing tower, one after another in capture
    /// order (the first taken lies just beneath the capturer's own stack, the last at the
    /// bottom); the piece revealed on a jumped square, now its top, is a man of its own
    /// colour, whatever it was when it was captured. Nothing changes hands until the
    /// capture is over (RU 1.5.7, 1.5.9).
    #[inline(never)]
    fn apply_towers(&mut self, mv: &Move) {
        let us = self.turn.index();
        let from = 1u64 << mv.from;
        let to_sq = mv.path[mv.landings as usize - 1];
        let to = 1u64 << to_sq;
        let was_king = self.kings & from != 0;
        let mut own = self.take_run(mv.from);
        self.pieces[us] &= !from;
        self.kings &= !from;
        let them = 1 - us;
        for &victim in &mv.order[..mv.captures as usize] {
            let bit = 1u64 << victim;
            self.pieces[them] &= !bit;
            self.kings &= !bit;
            let rest = self.take_run(victim);
            if rest.len > 0 {
                // The piece just beneath comes to the top, a man of its own colour.
                self.pieces[(rest.colors & 1) as usize] |= bit;
                self.insert_run(
                    victim,
                    Run {
                        len: rest.len - 1,
                        colors: rest.colors >> 1,
                    },
                );
            }
            own.colors |= (them as u32) << own.len;
            own.len += 1;
        }
        self.pieces[us] |= to;
        if was_king || mv.promotes {
            self.kings |= to;
        }
        self.insert_run(to_sq, own);
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
            "Position({} {:?} W{:#x} B{:#x} K{:#x}",
            self.variant, self.turn, self.pieces[0], self.pieces[1], self.kings
        )?;
        if self.stacked != 0 {
            write!(
                f,
                " S{:#x} C{:#x} E{:#x}",
                self.stacked, self.under_colors, self.under_ends
            )?;
        }
        f.write_str(")")
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
