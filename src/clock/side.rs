//! The two sides of the clock: the crate's shared colour type.

/// A side of the clock: the player of the white or of the black pieces.
pub use crate::rules::Color as Side;
