//! Pure rules of every variant: boards, pieces, move generation, outcomes and draw counters.
//!
//! No I/O, no async, no clock reads: everything here is a pure function of its arguments.

mod color;
pub mod game;
pub mod geometry;
mod movegen;
mod mv;
mod position;
mod square_set;
pub mod variant;
mod zobrist;

pub use color::Color;
pub use game::{
    DrawArising, DrawMode, DrawVerdict, EndReason, Game, Outcome, RuleEdition, outcome,
};
pub use geometry::{BoardKind, Direction, Geometry, Square};
pub use movegen::perft;
pub use mv::{MAX_CAPTURES, Move};
pub use position::{PlayError, Position, PositionError, Setup};
pub use variant::{Rules, UnknownVariant, Variant};
pub use zobrist::splitmix;

/// A set of squares, one bit per square in the variant geometry's layout.
pub type Bitboard = u64;
