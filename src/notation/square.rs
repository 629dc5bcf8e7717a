//! Square names: algebraic (`c3`) and PDN numbers (`22`).

use std::fmt;

use crate::rules::{Bitboard, Square, Variant};

/// A square name that does not name a square of the variant's board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SquareError {
    /// Not a square name at all.
    Malformed(String),
    /// A number outside 1..=N.
    OutOfRange {
        /// The number read.
        number: u64,
        /// The variant.
        variant: Variant,
    },
    /// A square number in a variant whose board has no numbering (Turkish: PDN
    /// GameType 30 is written with algebraic squares only).
    NotNumbered {
        /// The text read.
        text: String,
        /// The variant.
        variant: Variant,
    },
    /// A light (unplayable) or off-board algebraic square.
    NotPlayable {
        /// The name read.
        name: String,
        /// The variant.
        variant: Variant,
    },
}

impl fmt::Display for SquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SquareError::Malformed(s) => write!(f, "'{s}' is not a square"),
            SquareError::OutOfRange { number, variant } => {
                let n = variant.geometry().len();
                write!(f, "square {number} out of range for {variant} (1-{n})")
            }
            SquareError::NotNumbered { text, variant } => {
                write!(
                    f,
                    "square '{text}': {variant} squares are written a1-h8, not numbered"
                )
            }
            SquareError::NotPlayable { name, variant } => {
                write!(f, "square {name} is not a playable square in {variant}")
            }
        }
    }
}

impl std::error::Error for SquareError {}

/// Reads a square written as a PDN number (`22`) or algebraically (`c3`).
///
/// # Errors
/// [`SquareError`] naming the text and the variant.
pub fn parse_square(text: &str, variant: Variant) -> Result<Square, SquareError> {
    let g = variant.geometry();
    let mirrored = variant.rules().mirrored;
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        if variant.rules().notation == crate::rules::variant::NotationStyle::AlgebraicOnly {
            return Err(SquareError::NotNumbered {
                text: t.to_string(),
                variant,
            });
        }
        let number: u64 = t.parse().map_err(|_| SquareError::OutOfRange {
            number: u64::MAX,
            variant,
        })?;
        return u32::try_from(number)
            .ok()
            .and_then(|n| g.from_number(n, mirrored))
            .ok_or(SquareError::OutOfRange { number, variant });
    }
    let bytes = t.as_bytes();
    if bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1..].iter().all(u8::is_ascii_digit)
    {
        let file = bytes[0].to_ascii_lowercase() - b'a';
        let rank: u32 = t[1..]
            .parse()
            .map_err(|_| SquareError::Malformed(t.to_string()))?;
        if rank == 0 || rank > 255 {
            return Err(SquareError::NotPlayable {
                name: t.to_string(),
                variant,
            });
        }
        return g.from_file_rank(file, (rank - 1) as u8, mirrored).ok_or(
            SquareError::NotPlayable {
                name: t.to_string(),
                variant,
            },
        );
    }
    Err(SquareError::Malformed(t.to_string()))
}

/// The PDN number of a square. A board without PDN numbering (Turkish) numbers its
/// squares like the others, row by row from the top-left as White sees it (a8 = 1,
/// h8 = 8, a1 = 57, h1 = 64): only the API's move lists use these numbers.
pub fn square_number(sq: Square, variant: Variant) -> u32 {
    variant.geometry().number(sq, variant.rules().mirrored)
}

/// The PDN numbers of the squares in `bits`, in increasing order.
pub fn square_numbers(bits: Bitboard, variant: Variant) -> Vec<u32> {
    let mut out: Vec<u32> = variant
        .geometry()
        .order
        .iter()
        .filter(|s| bits & s.bit() != 0)
        .map(|&s| square_number(s, variant))
        .collect();
    out.sort_unstable();
    out
}

/// The algebraic name of a square (`c3`).
pub fn square_name(sq: Square, variant: Variant) -> String {
    let mut out = String::with_capacity(3);
    push_square_name(&mut out, sq, variant);
    out
}

/// Appends [`square_name`] to `out`.
fn push_square_name(out: &mut String, sq: Square, variant: Variant) {
    use std::fmt::Write as _;
    let (file, rank) = variant.geometry().file_rank(sq, variant.rules().mirrored);
    out.push(char::from(b'a' + file));
    // Writing to a String cannot fail.
    let _ = write!(out, "{}", u32::from(rank) + 1);
}

/// A square in the variant's native notation: algebraic for Russian, numbers otherwise.
pub fn write_square(sq: Square, variant: Variant) -> String {
    let mut out = String::with_capacity(3);
    push_square(&mut out, sq, variant);
    out
}

/// Appends a square in the variant's native notation (see [`write_square`]) to `out`, so
/// that a move is written into one string.
pub fn push_square(out: &mut String, sq: Square, variant: Variant) {
    use std::fmt::Write as _;
    match variant.rules().notation {
        crate::rules::variant::NotationStyle::Algebraic
        | crate::rules::variant::NotationStyle::AlgebraicOnly => {
            push_square_name(out, sq, variant);
        }
        crate::rules::variant::NotationStyle::Numeric => {
            // Writing to a String cannot fail.
            let _ = write!(out, "{}", square_number(sq, variant));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ru_1_6_squares_are_letter_and_digit() {
        let v = Variant::Russian;
        let c3 = parse_square("c3", v).expect("c3");
        assert_eq!(square_number(c3, v), 22);
        assert_eq!(parse_square("22", v), Ok(c3));
        assert_eq!(square_name(parse_square("1", v).expect("1"), v), "b8");
        assert_eq!(square_name(parse_square("32", v).expect("32"), v), "g1");
        assert!(matches!(
            parse_square("a2", v),
            Err(SquareError::NotPlayable { .. })
        ));
        assert!(matches!(
            parse_square("33", v),
            Err(SquareError::OutOfRange { number: 33, .. })
        ));
        assert!(matches!(
            parse_square("z", v),
            Err(SquareError::Malformed(_))
        ));
    }

    #[test]
    fn international_square_out_of_range_names_the_variant() {
        let e = parse_square("51", Variant::International).expect_err("51");
        assert_eq!(
            e.to_string(),
            "square 51 out of range for international (1-50)"
        );
    }
}
