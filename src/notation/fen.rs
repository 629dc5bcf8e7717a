//! FEN as PDN 3.0 writes it: `W:W21-32:B1-12`, `B:WK4,18:B1-3`, `W:Wc3,d4:Bb6`.
//!
//! The reader takes numbers or algebraic squares, `K` before a king, numeric ranges
//! (`21-32`, also `K1-3`), a trailing dot, spaces, lidraughts' `:H`/`:F` counters (ignored)
//! and a side with no pieces written as a bare `:W` or `:B` (or left out).
//!
//! Towers FEN (README "Towers FEN"): a square may be followed by the pieces beneath its top,
//! top down, as `w` / `b` letters in parentheses: `W:Wc3(bw),Kd4:Bf6` is a white man on c3
//! over a black man over a white man. Pieces beneath a top are always men (TOW), so a
//! colour is all they need. A square without parentheses is a lone piece, so every plain
//! FEN is a valid towers FEN.

use std::fmt;

use super::square::{SquareError, parse_square, square_name, square_number};
use crate::rules::variant::NotationStyle;
use crate::rules::{Color, Position, PositionError, Setup, Square, Variant};

/// What is wrong with a FEN string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenError {
    /// Empty input.
    Empty,
    /// The side to move is not `W` or `B`.
    BadTurn(String),
    /// A field does not start with `W`, `B`, `H` or `F`.
    BadField(String),
    /// A square in a piece list is wrong.
    Square {
        /// The side's list it was in.
        color: Color,
        /// What was wrong.
        error: SquareError,
    },
    /// A range `a-b` is wrong.
    BadRange(String),
    /// A square is listed twice.
    Duplicate(String),
    /// A side is listed twice.
    DuplicateSide(Color),
    /// A towers stack suffix `(…)` is wrong.
    BadStack(String),
    /// The pieces do not make a legal position.
    Position(PositionError),
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fen: ")?;
        match self {
            FenError::Empty => f.write_str("empty"),
            FenError::BadTurn(t) => write!(f, "side to move '{t}' is not W or B"),
            FenError::BadField(t) => write!(f, "field '{t}' does not start with W, B, H or F"),
            FenError::Square { color, error } => write!(f, "{color} pieces: {error}"),
            FenError::BadRange(t) => write!(f, "bad range '{t}'"),
            FenError::Duplicate(t) => write!(f, "square {t} listed twice"),
            FenError::DuplicateSide(c) => write!(f, "{c} pieces listed twice"),
            FenError::BadStack(t) => write!(
                f,
                "bad stack '{t}': the pieces beneath a top are w/b letters in parentheses \
                 after one square, top down, e.g. c3(bw)"
            ),
            FenError::Position(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FenError {}

/// Reads a FEN into an unchecked setup.
///
/// # Errors
/// [`FenError`] saying what is wrong and where.
pub fn parse_setup(fen: &str, variant: Variant) -> Result<Setup, FenError> {
    let text = fen.trim().trim_matches('"').trim();
    let text = text.strip_suffix('.').unwrap_or(text).trim();
    if text.is_empty() {
        return Err(FenError::Empty);
    }
    let mut fields = text.split(':');
    let turn_text = fields.next().unwrap_or_default().trim();
    let turn = match turn_text {
        "W" | "w" => Color::White,
        "B" | "b" => Color::Black,
        other => return Err(FenError::BadTurn(other.to_string())),
    };
    let mut setup = Setup::empty(variant, turn);
    let mut seen = [false; 2];
    for field in fields {
        let field = field.trim();
        let mut chars = field.chars();
        let color = match chars.next() {
            Some('W' | 'w') => Color::White,
            Some('B' | 'b') => Color::Black,
            Some('H' | 'h' | 'F' | 'f') => continue,
            None => continue,
            Some(_) => return Err(FenError::BadField(field.to_string())),
        };
        if std::mem::replace(&mut seen[color.index()], true) {
            return Err(FenError::DuplicateSide(color));
        }
        for item in chars.as_str().split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (king, body) = match item.strip_prefix(['K', 'k']) {
                Some(rest) => (true, rest.trim()),
                None => (false, item),
            };
            let (body, beneath) = match body.split_once('(') {
                Some((sq, rest)) => {
                    let bad = || FenError::BadStack(item.to_string());
                    let letters = rest.trim().strip_suffix(')').ok_or_else(bad)?;
                    let colors = letters
                        .trim()
                        .chars()
                        .map(|c| match c {
                            'w' | 'W' => Ok(Color::White),
                            'b' | 'B' => Ok(Color::Black),
                            _ => Err(bad()),
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    if colors.is_empty() || sq.contains('-') {
                        return Err(bad());
                    }
                    (sq.trim(), colors)
                }
                None => (body, Vec::new()),
            };
            let square = |t: &str| {
                parse_square(t, variant).map_err(|error| FenError::Square { color, error })
            };
            let squares: Vec<Square> = match body.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (a.trim(), b.trim());
                    let numeric = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
                    if !numeric(a) || !numeric(b) {
                        return Err(FenError::BadRange(item.to_string()));
                    }
                    let (sa, sb) = (square(a)?, square(b)?);
                    let (na, nb) = (square_number(sa, variant), square_number(sb, variant));
                    if na > nb {
                        return Err(FenError::BadRange(item.to_string()));
                    }
                    (na..=nb)
                        .map(|n| square(&n.to_string()))
                        .collect::<Result<_, _>>()?
                }
                None => vec![square(body)?],
            };
            for sq in squares {
                if (setup.white | setup.black) & sq.bit() != 0 {
                    return Err(FenError::Duplicate(square_number(sq, variant).to_string()));
                }
                *setup.pieces_mut(color) |= sq.bit();
                if king {
                    setup.kings |= sq.bit();
                }
                if !beneath.is_empty() {
                    setup.stacks.insert(sq, beneath.clone());
                }
            }
        }
    }
    Ok(setup)
}

/// Reads a FEN into a checked position.
///
/// # Errors
/// [`FenError`] for bad syntax or an illegal arrangement.
///
/// # Examples
/// ```
/// use draughts_arbiter::notation::fen::{parse_fen, write_fen};
/// use draughts_arbiter::rules::{Position, Variant};
/// let pos = parse_fen("W:W21-32:B1-12", Variant::Russian).unwrap();
/// assert_eq!(pos, Position::start(Variant::Russian));
/// assert_eq!(write_fen(&pos), "W:W21-32:B1-12");
/// ```
pub fn parse_fen(fen: &str, variant: Variant) -> Result<Position, FenError> {
    Position::from_setup(&parse_setup(fen, variant)?).map_err(FenError::Position)
}

/// How squares are written in a FEN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenStyle {
    /// PDN numbers with ranges for runs of men (`W21-32`), the PDN 3.0 default.
    Numeric,
    /// Algebraic squares (`Wa1,a3,Kc3`), as Russian records write positions (RU 1.6.2).
    Algebraic,
}

/// Writes a position as a numeric PDN FEN (algebraic for a board without numbering,
/// Turkish).
pub fn write_fen(pos: &Position) -> String {
    write_fen_styled(pos, FenStyle::Numeric)
}

/// Writes a position as a FEN in the given style; a board without PDN numbering
/// (Turkish) is always written algebraically: `W:Wa2,b2,…:Ba7,…`.
pub fn write_fen_styled(pos: &Position, style: FenStyle) -> String {
    use std::fmt::Write as _;
    let variant = pos.variant();
    let style = if variant.rules().notation == NotationStyle::AlgebraicOnly {
        FenStyle::Algebraic
    } else {
        style
    };
    // Written into one buffer: the judge writes a FEN with every move.
    let mut out = String::with_capacity(64);
    out.push(pos.turn().letter());
    let mut numbered: Vec<(u32, Square)> = Vec::with_capacity(32);
    for color in [Color::White, Color::Black] {
        out.push(':');
        out.push(color.letter());
        numbered.clear();
        numbered.extend(
            variant
                .geometry()
                .order
                .iter()
                .filter(|s| pos.pieces(color) & s.bit() != 0)
                .map(|&s| (square_number(s, variant), s)),
        );
        numbered.sort_unstable();
        let is_king = |s: Square| pos.kings() & s.bit() != 0;
        // Written one by one: kings, and towers with their pieces beneath.
        let single = |s: Square| (pos.kings() | pos.towers()) & s.bit() != 0;
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        let mut i = 0;
        while i < numbered.len() {
            let (n, sq) = numbered[i];
            if single(sq) || style == FenStyle::Algebraic {
                sep(&mut out);
                if is_king(sq) {
                    out.push('K');
                }
                match style {
                    FenStyle::Numeric => {
                        let _ = write!(out, "{n}");
                    }
                    FenStyle::Algebraic => out.push_str(&square_name(sq, variant)),
                }
                let beneath = pos.beneath(sq);
                if !beneath.is_empty() {
                    out.push('(');
                    out.extend(beneath.iter().map(|c| match c {
                        Color::White => 'w',
                        Color::Black => 'b',
                    }));
                    out.push(')');
                }
                i += 1;
                continue;
            }
            let mut j = i;
            while j + 1 < numbered.len()
                && numbered[j + 1].0 == numbered[j].0 + 1
                && !single(numbered[j + 1].1)
            {
                j += 1;
            }
            if j - i >= 2 {
                sep(&mut out);
                let _ = write!(out, "{}-{}", n, numbered[j].0);
            } else {
                for (m, _) in &numbered[i..=j] {
                    sep(&mut out);
                    let _ = write!(out, "{m}");
                }
            }
            i = j + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kings_ranges_algebraic_and_tolerated_extras() {
        let v = Variant::Russian;
        let p = parse_fen("B:WK4,c3,23-24:Bb8,K5.", v).expect("fen");
        assert_eq!(p.turn(), Color::Black);
        assert_eq!(p.kings().count_ones(), 2);
        assert_eq!(p.pieces(Color::White).count_ones(), 4);
        assert_eq!(write_fen(&p), "B:WK4,22-24:B1,K5");
        let lidraughts = parse_fen("W:W21-32:B1-12:H0:F1", v).expect("lidraughts");
        assert_eq!(lidraughts, Position::start(v));
        let bare = parse_fen("W:W21:B", v).expect("bare B");
        assert_eq!(bare.pieces(Color::Black), 0);
        assert_eq!(write_fen(&bare), "W:W21:B");
    }

    #[test]
    fn errors_say_what_and_where() {
        let v = Variant::International;
        let e = parse_fen("W:W51:B1", v).expect_err("51");
        assert_eq!(
            e.to_string(),
            "fen: white pieces: square 51 out of range for international (1-50)"
        );
        assert!(matches!(parse_fen("X:W1", v), Err(FenError::BadTurn(_))));
        assert!(matches!(
            parse_fen("W:W1,1", v),
            Err(FenError::Duplicate(_))
        ));
        assert!(matches!(
            parse_fen("W:W1:B1", v),
            Err(FenError::Duplicate(_))
        ));
        assert!(matches!(parse_fen("W:W9-3", v), Err(FenError::BadRange(_))));
        assert!(matches!(parse_fen("W:Q1", v), Err(FenError::BadField(_))));
        assert!(matches!(parse_fen("", v), Err(FenError::Empty)));
        // A white man on square 1 would already be a king.
        assert!(matches!(
            parse_fen("W:W1:B30", v),
            Err(FenError::Position(PositionError::ManOnCrowningRank { .. }))
        ));
    }
}
