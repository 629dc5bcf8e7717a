//! Checking a PDN game move by move against the rules.

use std::fmt;

use super::fen::parse_fen;
use super::movetext::{matching_moves, write_move_full};
use super::pdn::{PdnGame, PdnMove};
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

/// A recorded game that replayed, with what the replay noticed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The game, every recorded move played.
    pub game: Game,
    /// What the record left open and how the replay read it, in ply order.
    pub notes: Vec<ReplayNote>,
}

/// Something a replay noticed that does not stop the game from replaying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayNote {
    /// The record gives only placeholder moves (`1. - - 2. - -`): no move is recorded,
    /// the game is its start position and its result.
    NoMovesRecorded {
        /// How many placeholders the record has.
        placeholders: usize,
    },
    /// A recorded move fits several legal moves (a capture written start:end that two
    /// captures of equal standing join).
    Ambiguous {
        /// 1-based ply.
        ply: usize,
        /// The move as written.
        text: String,
        /// 1-based line of the move in the file.
        line: usize,
        /// Every legal move it fits, full path, in PDN order.
        candidates: Vec<String>,
        /// The one the replay took.
        chosen: String,
        /// Whether later moves decided: only `chosen` lets the rest of the game replay.
        /// Otherwise every candidate does (or the move is the last) and the replay took the
        /// first in PDN order.
        decided_by_later_moves: bool,
    },
}

impl fmt::Display for ReplayNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayNote::NoMovesRecorded { placeholders } => {
                write!(
                    f,
                    "no moves recorded ({placeholders} placeholder moves '-')"
                )
            }
            ReplayNote::Ambiguous {
                ply,
                text,
                candidates,
                chosen,
                decided_by_later_moves,
                ..
            } => {
                write!(
                    f,
                    "ply {ply} '{text}' fits {}; took {chosen}",
                    candidates.join(", ")
                )?;
                f.write_str(if *decided_by_later_moves {
                    " (the only one the later moves fit)"
                } else {
                    " (the first in PDN order; no later move decides)"
                })
            }
        }
    }
}

/// Plays every move of the main line; see [`replay_record`].
///
/// # Errors
/// [`ReplayFailure`] naming the ply, the move and the reason.
pub fn replay_game(game: &PdnGame, forced: Option<Variant>) -> Result<Game, ReplayFailure> {
    replay_record(game, forced).map(|r| r.game)
}

/// Plays every move of the main line and says what the record left open.
///
/// A record of placeholder moves only (`1. - - 2. - -`, [`UNKNOWN_MOVE`](super::pdn::UNKNOWN_MOVE)) is a game with
/// no moves recorded ([`ReplayNote::NoMovesRecorded`]); a placeholder among real moves
/// stops the replay. A written move that fits several legal moves
/// ([`matching_moves`]) is accepted and noted ([`ReplayNote::Ambiguous`]): when later
/// moves replay after only one of them, that one is taken, as a reader of the score sheet
/// would; otherwise the first in PDN order.
///
/// # Errors
/// [`ReplayFailure`] naming the ply, the move and the reason. For an ambiguous move after
/// which no candidate lets the rest replay, the failure met after the first candidate.
pub fn replay_record(game: &PdnGame, forced: Option<Variant>) -> Result<Replay, ReplayFailure> {
    let variant = game_variant(game, forced)?;
    let g = Game::new(start_position(game, variant)?, RuleEdition::Classic);
    if !game.moves.is_empty() && game.moves.iter().all(PdnMove::is_unknown) {
        return Ok(Replay {
            game: g,
            notes: vec![ReplayNote::NoMovesRecorded {
                placeholders: game.moves.len(),
            }],
        });
    }
    replay_from(g, &game.moves, 0)
}

fn replay_from(mut g: Game, moves: &[PdnMove], first_ply: usize) -> Result<Replay, ReplayFailure> {
    let mut notes = Vec::new();
    for (i, m) in moves.iter().enumerate() {
        let ply = first_ply + i + 1;
        let illegal = |reason: String| ReplayFailure::Illegal {
            ply,
            text: m.text.clone(),
            reason,
            line: m.line,
        };
        if m.is_unknown() {
            return Err(illegal("the record does not know this move".into()));
        }
        let mut fits = matching_moves(&m.text, g.position()).map_err(|e| illegal(e.to_string()))?;
        if fits.len() == 1 {
            let mv = fits.remove(0);
            g.play(&mv).map_err(|e| illegal(e.to_string()))?;
            continue;
        }
        let pos = *g.position();
        let candidates: Vec<String> = fits.iter().map(|c| write_move_full(&pos, c)).collect();
        let mut first_failure = None;
        let mut replayed = Vec::new();
        for (k, candidate) in fits.iter().enumerate() {
            let mut branch = g.clone();
            if let Err(e) = branch.play(candidate) {
                first_failure.get_or_insert(illegal(e.to_string()));
                continue;
            }
            match replay_from(branch, &moves[i + 1..], ply) {
                Ok(done) => replayed.push((k, done)),
                Err(e) => {
                    first_failure.get_or_insert(e);
                }
            }
        }
        let decided = replayed.len() == 1 && fits.len() > 1;
        let Some((k, rest)) = replayed.into_iter().next() else {
            return Err(first_failure.unwrap_or_else(|| illegal("no legal move fits".into())));
        };
        notes.push(ReplayNote::Ambiguous {
            ply,
            text: m.text.clone(),
            line: m.line,
            candidates: candidates.clone(),
            chosen: candidates[k].clone(),
            decided_by_later_moves: decided,
        });
        notes.extend(rest.notes);
        return Ok(Replay {
            game: rest.game,
            notes,
        });
    }
    Ok(Replay { game: g, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::pdn::read_games;

    fn one(text: &str) -> PdnGame {
        read_games(text).remove(0).expect("the test game reads")
    }

    #[test]
    fn a_record_of_placeholder_moves_is_a_game_with_no_moves() {
        let game = one("[GameType \"25\"]\n\n1. - - 2. - - 1/2-1/2\n");
        let replay = replay_record(&game, None).expect("no moves recorded");
        assert!(replay.game.moves().is_empty());
        assert_eq!(
            replay.notes,
            [ReplayNote::NoMovesRecorded { placeholders: 4 }]
        );
        assert_eq!(
            replay.notes[0].to_string(),
            "no moves recorded (4 placeholder moves '-')"
        );
    }

    #[test]
    fn a_placeholder_among_recorded_moves_stops_the_replay() {
        let game = one("[GameType \"25\"]\n\n1. c3-d4 - 2. b2-c3 *\n");
        let e = replay_record(&game, None).expect_err("move 2 unknown");
        assert_eq!(
            e.to_string(),
            "illegal at ply 2 '-': the record does not know this move"
        );
    }

    #[test]
    fn an_unambiguous_record_has_no_notes() {
        let game = one("[GameType \"25\"]\n\n1. c3-d4 f6-g5 *\n");
        let replay = replay_record(&game, None).expect("replays");
        assert_eq!(replay.game.moves().len(), 2);
        assert!(replay.notes.is_empty());
    }
}
