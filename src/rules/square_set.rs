//! Sets of squares given by PDN numbers.

use super::{Bitboard, Variant};

/// The bitboard of the given PDN square numbers of `variant` (unknown numbers ignored).
pub fn squares_of(variant: Variant, numbers: &[u32]) -> Bitboard {
    let g = variant.geometry();
    let mirrored = variant.rules().mirrored;
    numbers
        .iter()
        .filter_map(|&n| g.from_number(n, mirrored))
        .fold(0, |bits, sq| bits | sq.bit())
}
