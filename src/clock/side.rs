//! The two sides of the clock.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A side of the clock: the player of the white or of the black pieces.
///
/// Local to the clock until the crate has a shared colour type
/// (`crate::rules::Color`); it is `Copy` and carries nothing else so the two
/// can be unified with a `From` conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Side {
    /// The player of the white (light) pieces.
    White,
    /// The player of the black (dark) pieces.
    Black,
}

impl Side {
    /// Both sides, white first.
    pub const BOTH: [Side; 2] = [Side::White, Side::Black];

    /// The other side.
    #[must_use]
    pub const fn opposite(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// Index into per-side arrays: white 0, black 1.
    pub(crate) const fn index(self) -> usize {
        match self {
            Side::White => 0,
            Side::Black => 1,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::White => "white",
            Side::Black => "black",
        })
    }
}
