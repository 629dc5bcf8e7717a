//! Checking a PDN game move by move against the rules.

use std::fmt;

use super::fen::parse_fen;
use super::movetext::parse_move;
use super::pdn::{PdnGame, UNKNOWN_MOVE};
use crate::rules::{Game, Position, RuleEdition, Variant};

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
/// # Errors
/// [`ReplayFailure`] naming the ply, the move and the reason.
pub fn replay_game(game: &PdnGame, forced: Option<Variant>) -> Result<Game, ReplayFailure> {
    let variant = game_variant(game, forced)?;
    let mut g = Game::new(start_position(game, variant)?, RuleEdition::Classic);
    for (i, m) in game.moves.iter().enumerate() {
        let illegal = |reason: String| ReplayFailure::Illegal {
            ply: i + 1,
            text: m.text.clone(),
            reason,
            line: m.line,
        };
        if m.text == UNKNOWN_MOVE {
            return Err(illegal("the record does not know this move".into()));
        }
        let mv = parse_move(&m.text, g.position()).map_err(|e| illegal(e.to_string()))?;
        g.play(&mv).map_err(|e| illegal(e.to_string()))?;
    }
    Ok(g)
}
