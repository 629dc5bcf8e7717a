//! Zobrist hashing of (pieces, stacks, side to move), for repetition detection.

use super::Color;
use super::position::Position;

/// SplitMix64's output function: 64 well-mixed bits of `x` (the Zobrist keys; also the
/// seeds of `arbiter-tools board-sim`'s noise, so a seed replays the same irregularities).
pub const fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Keys for [white man, black man, white king, black king] × 64 bits.
const KEYS: [[u64; 64]; 4] = {
    let mut keys = [[0u64; 64]; 4];
    let mut k = 0;
    while k < 4 {
        let mut s = 0;
        while s < 64 {
            keys[k][s] = splitmix(
                ((k * 64 + s) as u64)
                    .wrapping_mul(0x1000_0000_0000_0001)
                    .wrapping_add(7),
            );
            s += 1;
        }
        k += 1;
    }
    keys
};

const BLACK_TO_MOVE: u64 = splitmix(0xD1A6_0000_0000_0001);

fn fold(mut bits: u64, keys: &[u64; 64]) -> u64 {
    let mut h = 0;
    while bits != 0 {
        let s = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        h ^= keys[s];
    }
    h
}

impl Position {
    /// The Zobrist hash of the pieces (the stacks too) and the side to move (for
    /// repetition).
    pub fn hash(&self) -> u64 {
        hash(self)
    }
}

/// The hash of a position.
fn hash(pos: &Position) -> u64 {
    let mut h = 0;
    for color in Color::ALL {
        let c = color.index();
        h ^= fold(pos.men(color), &KEYS[c]);
        h ^= fold(pos.kings_of(color), &KEYS[2 + c]);
    }
    if pos.turn() == Color::Black {
        h ^= BLACK_TO_MOVE;
    }
    let mut towers = pos.towers();
    while towers != 0 {
        let s = towers.trailing_zeros() as u8;
        towers &= towers - 1;
        // One key per (square, pieces beneath): the colours and the height together.
        let run = pos.run(s);
        h ^= splitmix(
            STACK_SEED ^ u64::from(s) ^ (u64::from(run.len) << 8) ^ (u64::from(run.colors) << 16),
        );
    }
    h
}

const STACK_SEED: u64 = 0x70E3_5000_0000_0000;
