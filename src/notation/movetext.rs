//! Moves as text: `c3-d4`, `c3:e5`, `e3:c5:e7`, `22-18`, `22x15x6`, `x` or `:` alike.
//!
//! A written move is resolved against the legal moves of a position: the first square
//! is the start, the last the end, and any squares in between must be landing squares of
//! the capture, in order (RU 1.6: the squares where the direction changes, or every one).

use std::fmt;

use super::square::{SquareError, parse_square, push_square};
use crate::rules::variant::{CaptureChoice, DrawRules, NotationStyle};
use crate::rules::{Move, Position, Square, Variant};

/// Why a written move is not a legal move of the position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveError {
    /// Not a move at all.
    Malformed(String),
    /// A square in it is wrong.
    Square(SquareError),
    /// The start square holds no piece of the side to move.
    NoPiece {
        /// The move as written.
        text: String,
    },
    /// Legal in form, but not in this position; `rule` cites the rule broken.
    Illegal {
        /// The move as written.
        text: String,
        /// Why, in a few words.
        reason: String,
        /// The rule, as RULES.md numbers it.
        rule: &'static str,
    },
    /// Several different legal moves fit the text.
    Ambiguous {
        /// The move as written.
        text: String,
        /// The moves it could be, each with its full path.
        candidates: Vec<String>,
    },
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Malformed(t) => write!(f, "'{t}' is not a move"),
            MoveError::Square(e) => write!(f, "{e}"),
            MoveError::NoPiece { text } => {
                write!(
                    f,
                    "'{text}': no piece of the side to move on its start square (RU 1.4.1: \
                     players alternate, each moving a piece of their own)"
                )
            }
            MoveError::Illegal { text, reason, rule } => write!(f, "'{text}': {reason} ({rule})"),
            MoveError::Ambiguous { text, candidates } => {
                write!(f, "'{text}' is ambiguous: {}", candidates.join(", "))
            }
        }
    }
}

impl std::error::Error for MoveError {}

/// Why a move that no legal move matches is refused. One table ([`Refusal::rule`]) for
/// every way a move comes in, a written move or a move on an electronic board, so the
/// same illegal move cites the same rule whichever way it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// A capture was possible and the move was made as a quiet move (RU 1.5.3).
    Compulsory,
    /// A capture, but not one the variant's capture choice allows: fewer pieces than the
    /// most, or below the Italian / Frisian precedence.
    Maximum,
    /// A capture that is not a complete one of the position (RU 1.5.5).
    Unfinished,
    /// No capture was possible, and this is not a move of the position.
    Movement,
}

impl Refusal {
    /// The refusal of a move made as a capture (`capture`: written with `:` or `x`, or,
    /// on a board, the piece did not go along a line of free squares) or as a quiet
    /// move, in `pos` whose legal moves are `legal` (either list, merged or not).
    pub fn of(pos: &Position, legal: &[Move], capture: bool) -> Refusal {
        let any_capture = legal.first().is_some_and(Move::is_capture);
        if !any_capture {
            return Refusal::Movement;
        }
        if !capture {
            return Refusal::Compulsory;
        }
        match pos.variant().rules().capture_choice {
            CaptureChoice::MaximumPieces | CaptureChoice::Italian | CaptureChoice::Frisian => {
                Refusal::Maximum
            }
            CaptureChoice::Free => Refusal::Unfinished,
        }
    }

    /// Why, in a few words (`legal` as for [`Refusal::of`]).
    pub fn reason(self, pos: &Position, legal: &[Move]) -> String {
        match (self, pos.variant().rules().capture_choice) {
            (Refusal::Compulsory, _) => "a capture is compulsory".to_string(),
            (Refusal::Maximum, CaptureChoice::Italian) => {
                "not a complete capture with precedence (most pieces, then with a king, then \
                 most kings, then a king first)"
                    .to_string()
            }
            (Refusal::Maximum, CaptureChoice::Frisian) => {
                "the capture must take the most value (a king counts almost two men), with a \
                 king if a king can"
                    .to_string()
            }
            (Refusal::Maximum, _) => {
                let best = legal.iter().map(Move::capture_count).max().unwrap_or(0);
                format!("the capture must take the most pieces ({best})")
            }
            (Refusal::Unfinished, _) => "not a complete capture of this position".to_string(),
            (Refusal::Movement, _) => "not a legal move in this position".to_string(),
        }
    }

    /// The rule a refusal cites in `variant`, as RULES.md numbers it: the variant's own
    /// rule where the rule book has one (Turkish, Frisian, corners, English, Italian),
    /// else by capture choice (free choice RU, maximum capture FMJD).
    pub fn rule(self, variant: Variant) -> &'static str {
        match (variant.rules().draws, self) {
            (DrawRules::Turkish, Refusal::Compulsory) => return "TR captures compulsory",
            (DrawRules::Turkish, Refusal::Maximum | Refusal::Unfinished) => {
                return "TR maximum pieces";
            }
            (DrawRules::Turkish, Refusal::Movement) => return "TR moves",
            (DrawRules::Frisian, Refusal::Compulsory) => return "FR captures compulsory",
            (DrawRules::Frisian, Refusal::Maximum | Refusal::Unfinished) => {
                return "FR capture precedence";
            }
            (DrawRules::Frisian, Refusal::Movement) => return "FR moves",
            // English practice: a capture must be taken and a started one finished.
            (DrawRules::English, Refusal::Compulsory | Refusal::Unfinished) => {
                return "EN capture";
            }
            // Corners captures nothing: every refusal is about the moves themselves.
            (DrawRules::Corners, _) => return "CORN moves",
            _ => {}
        }
        match (self, variant.rules().capture_choice) {
            (Refusal::Compulsory, CaptureChoice::Free) => "RU 1.5.3",
            (Refusal::Compulsory, CaptureChoice::MaximumPieces | CaptureChoice::Frisian) => {
                "FMJD 4.2"
            }
            (Refusal::Compulsory, CaptureChoice::Italian) => "IT: FID rules 3-4",
            (Refusal::Maximum, CaptureChoice::Italian) => "IT: FID rules 5-8",
            (Refusal::Maximum, _) => "FMJD 4.13",
            (Refusal::Unfinished, CaptureChoice::Free) => "RU 1.5.5",
            (Refusal::Unfinished, CaptureChoice::MaximumPieces | CaptureChoice::Frisian) => {
                "FMJD 4.5"
            }
            (Refusal::Unfinished, CaptureChoice::Italian) => "IT: FID rules 3-4",
            (Refusal::Movement, _) => "RU 1.4",
        }
    }
}

/// Splits a written move into its squares.
fn split(text: &str, variant: Variant) -> Result<(Vec<Square>, bool), MoveError> {
    let t = text
        .trim()
        .trim_end_matches(['!', '?', '+', '#', '*', '.'])
        .trim();
    if t.is_empty() {
        return Err(MoveError::Malformed(text.to_string()));
    }
    let capture = t.contains([':', 'x', 'X', '×']);
    let parts: Vec<&str> = t.split(['-', ':', 'x', 'X', '×']).map(str::trim).collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(MoveError::Malformed(text.to_string()));
    }
    let squares = parts
        .iter()
        .map(|p| parse_square(p, variant))
        .collect::<Result<Vec<_>, _>>()
        .map_err(MoveError::Square)?;
    Ok((squares, capture))
}

/// Whether `inner` appears in `landings` in order (not necessarily adjacent).
fn subsequence(inner: &[Square], landings: &[Square]) -> bool {
    let mut it = landings.iter();
    inner.iter().all(|s| it.any(|l| l == s))
}

/// Resolves a written move against the legal moves of `pos`.
///
/// # Errors
/// [`MoveError`]: malformed text, a bad square, no piece, an illegal or ambiguous move.
pub fn parse_move(text: &str, pos: &Position) -> Result<Move, MoveError> {
    parse_move_among(text, pos, &pos.legal_moves_all_paths())
}

/// [`parse_move`] with the legal moves of `pos` already generated: `all_paths` must be
/// [`Position::legal_moves_all_paths`] of `pos` (a game keeps them, see
/// [`crate::rules::Game::position_moves_all_paths`]).
///
/// # Errors
/// As [`parse_move`].
pub fn parse_move_among(text: &str, pos: &Position, all_paths: &[Move]) -> Result<Move, MoveError> {
    let mut found = matching_moves_among(text, pos, all_paths)?;
    if found.len() == 1 {
        return Ok(found.remove(0));
    }
    Err(MoveError::Ambiguous {
        text: text.trim().to_string(),
        candidates: found.iter().map(|m| write_move_full(pos, m)).collect(),
    })
}

/// Every distinct legal move of `pos` that a written move fits, in PDN order (by the
/// square numbers of the path, start first): one for a move that names a single move,
/// several for an ambiguous one (`3x26` when two captures of equal precedence join 3 and
/// 26). A text that spells out one capture's every landing square names that capture
/// alone, even when another capture has the same ends.
///
/// # Errors
/// [`MoveError`] when no legal move fits: malformed text, a bad square, no piece, an
/// illegal move. Never [`MoveError::Ambiguous`].
pub fn matching_moves(text: &str, pos: &Position) -> Result<Vec<Move>, MoveError> {
    matching_moves_among(text, pos, &pos.legal_moves_all_paths())
}

/// [`matching_moves`] with the legal moves of `pos` already generated (`all_paths`, as
/// for [`parse_move_among`]).
///
/// # Errors
/// As [`matching_moves`].
pub fn matching_moves_among(
    text: &str,
    pos: &Position,
    all_paths: &[Move],
) -> Result<Vec<Move>, MoveError> {
    let variant = pos.variant();
    let (squares, capture_written) = split(text, variant)?;
    let (from, to) = (squares[0], squares[squares.len() - 1]);
    let inner = &squares[1..squares.len() - 1];
    if !variant.rules().hops.is_empty() {
        return parse_hop(text, pos, all_paths, &squares, capture_written).map(|m| vec![m]);
    }
    let all = all_paths;
    let mut found: Vec<Move> = Vec::new();
    for m in all {
        if m.from() != from || m.to() != to {
            continue;
        }
        let landings: Vec<Square> = m.landings().collect();
        if !subsequence(inner, &landings[..landings.len() - 1]) {
            continue;
        }
        if !found.iter().any(|f| f.same_move(m)) {
            found.push(*m);
        }
    }
    if found.len() > 1 {
        // A text that spells out one capture's every landing square names that capture,
        // even when another capture has the same ends (`c3:a5` is the single jump, the
        // long way round is written in full).
        let exact: Vec<Move> = all
            .iter()
            .filter(|m| m.from() == from && m.landings().eq(squares[1..].iter().copied()))
            .copied()
            .collect();
        if let [only] = exact.as_slice() {
            return Ok(vec![*only]);
        }
    }
    if found.is_empty() {
        return Err(diagnose(text, pos, from, capture_written, all));
    }
    let key = |m: &Move| -> Vec<u32> {
        m.path()
            .chain(m.captured())
            .map(|s| super::square::square_number(s, variant))
            .collect()
    };
    found.sort_by_cached_key(key);
    Ok(found)
}

/// A move of a hopping game (corners): `a1-a2`, `a1-a3-c3` with every landing square of a
/// jump chain, or `a1-c3` from start to end alone. A written chain must be a route the
/// piece can take ([`Position::is_hop_route`]); the move played is the (start, end) pair
/// with its canonical route, since the route does not change the position.
fn parse_hop(
    text: &str,
    pos: &Position,
    all_paths: &[Move],
    squares: &[Square],
    capture_written: bool,
) -> Result<Move, MoveError> {
    let variant = pos.variant();
    let illegal = |reason: &str| MoveError::Illegal {
        text: text.trim().to_string(),
        reason: reason.to_string(),
        rule: Refusal::Movement.rule(variant),
    };
    if capture_written {
        return Err(illegal("nothing is captured: write the move with '-'"));
    }
    let (from, to) = (squares[0], squares[squares.len() - 1]);
    // The first path found is the move `Position::legal_moves` keeps.
    let Some(mv) = all_paths.iter().find(|m| m.from() == from && m.to() == to) else {
        return Err(diagnose(text, pos, from, false, all_paths));
    };
    if squares.len() > 2 && !pos.is_hop_route(from, &squares[1..]) {
        return Err(illegal(
            "the squares between start and end are not a chain of jumps (write every landing \
             square, or the start and end alone)",
        ));
    }
    Ok(*mv)
}

fn diagnose(text: &str, pos: &Position, from: Square, capture: bool, all: &[Move]) -> MoveError {
    let text = text.trim().to_string();
    if pos.pieces(pos.turn()) & from.bit() == 0 {
        return MoveError::NoPiece { text };
    }
    let refusal = Refusal::of(pos, all, capture);
    MoveError::Illegal {
        text,
        reason: refusal.reason(pos, all),
        rule: refusal.rule(pos.variant()),
    }
}

fn separator(variant: Variant, capture: bool) -> char {
    match (capture, variant.rules().notation) {
        (false, _) => '-',
        (true, NotationStyle::Algebraic) => ':',
        (true, NotationStyle::Numeric | NotationStyle::AlgebraicOnly) => 'x',
    }
}

/// Writes a move with every landing square (`e3:c5:e7`, `22x15x6`).
pub fn write_move_full(pos: &Position, mv: &Move) -> String {
    let variant = pos.variant();
    let sep = separator(variant, mv.is_capture());
    let mut out = String::with_capacity(16);
    for (i, s) in mv.path().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        push_square(&mut out, s, variant);
    }
    out
}

/// Writes a move in the variant's native form: start and end only, unless another legal
/// move shares them, then the full path.
pub fn write_move(pos: &Position, mv: &Move) -> String {
    let variant = pos.variant();
    let clash = mv.is_capture()
        && pos
            .legal_moves()
            .iter()
            .any(|m| m.from() == mv.from() && m.to() == mv.to() && !m.same_move(mv));
    if clash {
        return write_move_full(pos, mv);
    }
    let mut out = String::with_capacity(8);
    push_square(&mut out, mv.from(), variant);
    out.push(separator(variant, mv.is_capture()));
    push_square(&mut out, mv.to(), variant);
    out
}

/// One legal move as the API and the JSON output show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MoveRecord {
    /// Native notation with the full path.
    pub notation: String,
    /// PDN squares from start to end.
    pub path: Vec<u32>,
    /// PDN squares captured, in capture order.
    pub captured: Vec<u32>,
}

/// The distinct legal moves of `pos`, sorted by notation.
pub fn move_records(pos: &Position) -> Vec<MoveRecord> {
    let v = pos.variant();
    let mut out: Vec<MoveRecord> = pos
        .legal_moves()
        .iter()
        .map(|m| MoveRecord {
            notation: write_move_full(pos, m),
            path: m
                .path()
                .map(|s| super::square::square_number(s, v))
                .collect(),
            captured: m
                .captured()
                .map(|s| super::square::square_number(s, v))
                .collect(),
        })
        .collect();
    out.sort_by(|a, b| a.notation.cmp(&b.notation));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::fen::parse_fen;

    #[test]
    fn reads_every_written_form() {
        let p = Position::start(Variant::Russian);
        let m = parse_move("c3-d4", &p).expect("c3-d4");
        assert_eq!(parse_move("22-18", &p), Ok(m));
        assert_eq!(parse_move(" c3-d4! ", &p), Ok(m));
        assert_eq!(write_move(&p, &m), "c3-d4");
        assert!(matches!(parse_move("c3-c4", &p), Err(MoveError::Square(_))));
        assert!(matches!(
            parse_move("c5-d6", &p),
            Err(MoveError::NoPiece { .. })
        ));
        assert!(matches!(
            parse_move("c3-e5", &p),
            Err(MoveError::Illegal { .. })
        ));
        assert!(matches!(parse_move("c3", &p), Err(MoveError::Malformed(_))));
    }

    /// RU 1.4.1: players alternate, each moving a piece of their own. A written move from
    /// a square without a piece of the side to move cites it, as the board path does.
    #[test]
    fn ru_1_4_1_a_move_from_a_square_without_a_piece_of_the_side_to_move_cites_it() {
        let p = Position::start(Variant::Russian);
        let out_of_turn = parse_move("c5-d6", &p).expect_err("refused");
        assert!(matches!(out_of_turn, MoveError::NoPiece { .. }));
        assert!(
            out_of_turn.to_string().contains("(RU 1.4.1"),
            "the refusal cites the rule"
        );
    }

    #[test]
    fn ru_1_5_3_capture_is_compulsory() {
        let p = parse_fen("W:Wc3,h2:Bd4", Variant::Russian).expect("fen");
        let e = parse_move("h2-g3", &p).expect_err("must capture");
        assert_eq!(e.to_string(), "'h2-g3': a capture is compulsory (RU 1.5.3)");
        let m = parse_move("c3xe5", &p).expect("capture");
        assert_eq!(write_move(&p, &m), "c3:e5");
    }
}
