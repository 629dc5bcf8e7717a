//! Checking a PDN game move by move against the rules.

use std::fmt;

use super::fen::parse_fen;
use super::movetext::{MoveError, parse_move};
use super::pdn::{PdnGame, PdnMove, UNKNOWN_MOVE};
use super::square::parse_square;
use crate::rules::{Game, Move, Position, RuleEdition, Variant};

/// Why a recorded game does not replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayFailure {
    /// Neither the game's `GameType` tag nor the caller names a known variant.
    NoVariant(String),
    /// The `FEN` tag is wrong.
    BadFen(String),
    /// A move is illegal or unreadable.
    Illegal {
        /// 1-based ply.
        ply: usize,
        /// The move as written.
        text: String,
        /// Why.
        reason: String,
        /// 1-based line of the move in the file.
        line: usize,
    },
}

impl fmt::Display for ReplayFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayFailure::NoVariant(why) => write!(f, "{why}"),
            ReplayFailure::BadFen(e) => write!(f, "{e}"),
            ReplayFailure::Illegal {
                ply, text, reason, ..
            } => write!(f, "illegal at ply {ply} '{text}': {reason}"),
        }
    }
}

/// The variant of a game: the caller's choice, else its `GameType` tag.
///
/// # Errors
/// Neither names a known variant.
pub fn game_variant(game: &PdnGame, forced: Option<Variant>) -> Result<Variant, ReplayFailure> {
    if let Some(v) = forced {
        return Ok(v);
    }
    match game.game_type() {
        Some(n) => Variant::from_game_type(n).ok_or_else(|| {
            ReplayFailure::NoVariant(format!("GameType {n} is not a known variant"))
        }),
        None => Err(ReplayFailure::NoVariant(
            "no GameType tag: name the variant (--variant)".into(),
        )),
    }
}

/// The start position of a game: its `FEN` tag, else the variant's start.
///
/// # Errors
/// A bad `FEN` tag.
pub fn start_position(game: &PdnGame, variant: Variant) -> Result<Position, ReplayFailure> {
    match game.fen() {
        Some(fen) => parse_fen(fen, variant).map_err(|e| ReplayFailure::BadFen(e.to_string())),
        None => Ok(Position::start(variant)),
    }
}

/// Plays every move of the main line.
///
/// A capture written start:end that fits several different captures is resolved by the
/// rest of the record: the one after which the remaining moves replay is taken, as a
/// reader of the score sheet would. If none or more than one does, the move is reported
/// as ambiguous.
///
/// # Errors
/// [`ReplayFailure`] naming the ply, the move and the reason.
pub fn replay_game(game: &PdnGame, forced: Option<Variant>) -> Result<Game, ReplayFailure> {
    let variant = game_variant(game, forced)?;
    let g = Game::new(start_position(game, variant)?, RuleEdition::Classic);
    replay_from(g, &game.moves, 0)
}

fn replay_from(mut g: Game, moves: &[PdnMove], first_ply: usize) -> Result<Game, ReplayFailure> {
    for (i, m) in moves.iter().enumerate() {
        let illegal = |reason: String| ReplayFailure::Illegal {
            ply: first_ply + i + 1,
            text: m.text.clone(),
            reason,
            line: m.line,
        };
        if m.text == UNKNOWN_MOVE {
            return Err(illegal("the record does not know this move".into()));
        }
        let mv = match parse_move(&m.text, g.position()) {
            Ok(mv) => mv,
            Err(MoveError::Ambiguous { .. }) => {
                let mut fits = Vec::new();
                for candidate in candidates(&m.text, g.position()) {
                    let mut branch = g.clone();
                    if branch.play(&candidate).is_ok()
                        && let Ok(done) = replay_from(branch, &moves[i + 1..], first_ply + i + 1)
                    {
                        fits.push(done);
                    }
                }
                return match fits.len() {
                    1 => Ok(fits.remove(0)),
                    n => Err(illegal(format!(
                        "ambiguous: {n} of the captures it could be let the rest of the game replay"
                    ))),
                };
            }
            Err(e) => return Err(illegal(e.to_string())),
        };
        g.play(&mv).map_err(|e| illegal(e.to_string()))?;
    }
    Ok(g)
}

/// Every distinct legal move with the written move's start and end squares.
fn candidates(text: &str, pos: &Position) -> Vec<Move> {
    let v = pos.variant();
    let squares: Vec<_> = text
        .split(['-', ':', 'x', 'X'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| parse_square(p, v))
        .collect();
    let (Some(Ok(from)), Some(Ok(to))) = (squares.first(), squares.last()) else {
        return Vec::new();
    };
    pos.legal_moves()
        .into_iter()
        .filter(|m| m.from() == *from && m.to() == *to)
        .collect()
}
