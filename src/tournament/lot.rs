//! Drawing by lot (RULES.md T 2): a seed whose hash is published before the draw and
//! which is revealed with the draw's result, so anyone can check the result, and the
//! tournament's log replays it.
//!
//! The procedure, written so that it can be redone with any SHA-256 and ChaCha20:
//! 1. The service picks a 32-byte seed and publishes `commitment = SHA-256(seed)` (hex).
//! 2. Each draw made with the seed has a label (`pairing-numbers`, `round-3 board-2
//!    opening`, …). Its generator is ChaCha20 (20 rounds, the RNG of the `chacha20`
//!    crate: 64-bit block counter and stream id both 0) keyed with
//!    `SHA-256(seed ‖ label)`; it yields 64-bit words (two 32-bit words of the key
//!    stream, little-endian, low word first).
//! 3. A number below `n` takes words until one is below `2^64 - (2^64 mod n)` and
//!    answers it `mod n` (no bias).
//! 4. A shuffle of `n` items is Fisher–Yates from the end: for `i` from `n - 1` down to
//!    1, swap item `i` with item `below(i + 1)`.
//!
//! A tournament holds one sealed seed at a time: each command that draws reveals it
//! with the results and seals the next one (the service supplies the fresh seed). The
//! seed is kept in the service's store from the moment its hash is published; the
//! commitment proves that the service did not change it after the fact, not that the
//! store's operator could not read it.

use chacha20::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A seed: 32 bytes, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Seed(pub [u8; 32]);

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Seed({})", hex(&self.0))
    }
}

impl From<Seed> for String {
    fn from(s: Seed) -> String {
        hex(&s.0)
    }
}

impl TryFrom<String> for Seed {
    type Error = String;
    fn try_from(s: String) -> Result<Seed, String> {
        Seed::parse(&s)
    }
}

impl Seed {
    /// The commitment published before the draw: SHA-256 of the seed, hex.
    pub fn commitment(&self) -> String {
        hex(&Sha256::digest(self.0))
    }

    /// A seed from its 64 hex digits.
    ///
    /// # Errors
    /// A message saying what is wrong with the text.
    pub fn parse(text: &str) -> Result<Seed, String> {
        let b = text.as_bytes();
        if b.len() != 64 {
            return Err(format!(
                "a seed is 64 hex digits, got {} characters",
                text.len()
            ));
        }
        let mut out = [0u8; 32];
        for (i, pair) in b.chunks(2).enumerate() {
            let digit = |c: u8| (c as char).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(h), Some(l)) => out[i] = (h * 16 + l) as u8,
                _ => return Err(format!("not a hex digit at byte {}", 2 * i)),
            }
        }
        Ok(Seed(out))
    }

    /// The generator of the draw labelled `label`.
    pub fn draw(&self, label: &str) -> Lot {
        let mut h = Sha256::new();
        h.update(self.0);
        h.update(label.as_bytes());
        let key: [u8; 32] = h.finalize().into();
        Lot(ChaCha20Rng::from_seed(key))
    }
}

/// The generator of one draw.
pub struct Lot(ChaCha20Rng);

impl Lot {
    /// A number in `0..n` (`n` ≥ 1), without bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "a draw among nothing");
        let zone = u64::MAX - (u64::MAX % n + 1) % n;
        loop {
            let x = self.0.next_u64();
            if x <= zone {
                return x % n;
            }
        }
    }

    /// `0..n` in the order the lot gives them (Fisher–Yates from the end).
    pub fn shuffle(&mut self, n: usize) -> Vec<usize> {
        let mut items: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
        items
    }
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commitment is SHA-256 of the seed: the FIPS 180-2 value for 32 zero bytes.
    #[test]
    fn t_2_commitment_is_sha256_of_the_seed() {
        assert_eq!(
            Seed([0; 32]).commitment(),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        let s = Seed::parse(&"ab".repeat(32)).expect("hex");
        assert_eq!(String::from(s), "ab".repeat(32));
        assert!(Seed::parse("abc").is_err() && Seed::parse(&"zz".repeat(32)).is_err());
    }

    /// A draw replays from its seed and label, and another label draws otherwise.
    #[test]
    fn t_2_a_draw_replays_from_seed_and_label() {
        let seed = Seed([7; 32]);
        let a = seed.draw("pairing-numbers").shuffle(16);
        assert_eq!(a, seed.draw("pairing-numbers").shuffle(16));
        assert_ne!(a, seed.draw("round-1").shuffle(16));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
    }

    /// Every number comes up about as often as the others (no modulo bias to speak of).
    #[test]
    fn t_2_below_is_uniform() {
        let mut lot = Seed([1; 32]).draw("uniform");
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[lot.below(7) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_400..10_600).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(Seed([1; 32]).draw("one").below(1), 0);
    }
}
