//! What the arbiter, the hub and the pairing engine ask of a tournament.

use super::event::{Bye, Config, Entrant, Outcome, PairingSource};
use super::lot::Seed;

/// Pairings made elsewhere (a Swiss engine, the arbiter, an imported TRF) for a round:
/// player ids, White first, boards in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenPairings {
    /// `(white, black)` player ids, board 1 first.
    pub boards: Vec<(u32, u32)>,
    /// Players without a game.
    pub byes: Vec<Bye>,
    /// Where they come from.
    pub source: PairingSource,
}

/// A command to a tournament. Each is decided against the state and either refused,
/// changing nothing, or answered with the events to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Create the event with its settings; `seed` is sealed for the first draw (T 2).
    Create {
        /// The settings.
        config: Config,
        /// The first sealed seed (fresh randomness from the service).
        seed: Seed,
    },
    /// Enter players.
    AddPlayers {
        /// Who, in order.
        players: Vec<Entrant>,
    },
    /// A player withdraws (T 6).
    Withdraw {
        /// The player's id.
        player: u32,
        /// The arbiter's reason.
        reason: String,
    },
    /// Give the pairing numbers (T 2): `hall` as drawn in the hall (player ids by
    /// pairing number), else by the system's rule (the lot for a round-robin, rating
    /// for a Swiss). `next_seed` is sealed if the lot is drawn.
    NumberPlayers {
        /// Numbers drawn in the hall, if so.
        hall: Option<Vec<u32>>,
        /// The seed to seal after a draw.
        next_seed: Seed,
    },
    /// Pair a round (T 1) and draw its openings (T 3): from the Berger tables for a
    /// round-robin, from `given` otherwise.
    PairRound {
        /// The round, from 1.
        round: u32,
        /// The pairings of a Swiss or manual round.
        given: Option<GivenPairings>,
        /// The seed to seal after the round's draws.
        next_seed: Seed,
    },
    /// Start a round: its games start and the default time runs (T 5).
    StartRound {
        /// The round.
        round: u32,
    },
    /// Mark a player absent for a round (T 5).
    MarkAbsent {
        /// The round.
        round: u32,
        /// The player's id.
        player: u32,
    },
    /// A player forfeits their game(s) of a round (a no-show the arbiter enters).
    RecordForfeit {
        /// The round.
        round: u32,
        /// The player's id.
        player: u32,
    },
    /// A game's result: reported by the hub when the game ends or is corrected, or
    /// entered by the arbiter.
    GameFinished {
        /// The game's id.
        game_id: String,
        /// The outcome.
        outcome: Outcome,
        /// The rule, when the tournament's own rules decided it (`T 5`).
        rule: Option<String>,
        /// When the game's result was decided (wall ms), if not at the command's time.
        decided_at_ms: Option<i64>,
    },
    /// The arbiter annuls a game's default (T 5: a documented delay) and has the board
    /// play it again.
    AnnulDefault {
        /// The game lost by default.
        game_id: String,
        /// The arbiter's reason.
        reason: String,
    },
}
