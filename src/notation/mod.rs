//! Notation: squares, moves, FEN and PDN, read and written. Pure, like [`crate::rules`].

pub mod pdn;
