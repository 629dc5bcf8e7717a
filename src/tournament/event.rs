//! What a tournament records: its settings, players, pairings, draws and results.

use serde::{Deserialize, Serialize};

use crate::game::GameSettings;

use super::lot::Seed;

/// How rounds are paired (RULES.md T 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum System {
    /// Everyone meets everyone once, by the Berger tables.
    RoundRobin,
    /// Everyone meets everyone twice, colours reversed.
    DoubleRoundRobin,
    /// Paired each round by a Swiss engine from the event's TRF.
    Swiss,
    /// Paired by the arbiter (entered or imported).
    Manual,
}

impl System {
    /// The name used in texts.
    pub fn name(self) -> &'static str {
        match self {
            System::RoundRobin => "round-robin",
            System::DoubleRoundRobin => "double round-robin",
            System::Swiss => "Swiss",
            System::Manual => "manual",
        }
    }
}

/// Points for a win, a draw and a loss (RULES.md T 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// 2 / 1 / 0 (FMJD and most draughts federations; the default).
    #[default]
    TwoOneZero,
    /// 1 / ½ / 0.
    OneHalfZero,
}

/// A tiebreak (RULES.md T 8), applied in the event's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tiebreak {
    /// The number of wins.
    Wins,
    /// The result(s) among the tied players.
    MutualResult,
    /// Sonneborn-Berger.
    SonnebornBerger,
    /// Solkoff (Buchholz).
    Solkoff,
    /// Solkoff without the lowest.
    TruncatedSolkoff,
    /// Solkoff without the highest and the lowest.
    MedianSolkoff,
    /// Games with Black.
    GamesWithBlack,
    /// The opponents' average rating.
    AverageRatingOfOpponents,
}

impl Tiebreak {
    /// T 8's default order for a system.
    pub fn defaults(system: System) -> Vec<Tiebreak> {
        match system {
            System::Swiss => vec![
                Tiebreak::TruncatedSolkoff,
                Tiebreak::Solkoff,
                Tiebreak::SonnebornBerger,
                Tiebreak::Wins,
            ],
            _ => vec![
                Tiebreak::SonnebornBerger,
                Tiebreak::Wins,
                Tiebreak::MutualResult,
            ],
        }
    }
}

/// Whether a ballot opening is drawn for each pairing or once a round for every board
/// (RULES.md T 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BallotPer {
    /// Each pairing draws its own.
    #[default]
    Pairing,
    /// One draw a round, for every board.
    Round,
}

/// The ballot setting of an event (RULES.md T 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ballot {
    /// The table's id (`fmjd-64`).
    pub table: String,
    /// Per pairing or per round.
    #[serde(default)]
    pub per: BallotPer,
}

/// What a bye scores (RULES.md T 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ByeScore {
    /// A win's points.
    Win,
    /// A draw's points.
    Draw,
    /// Nothing.
    Zero,
}

/// The event's settings, fixed when it is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The event's name: the games' `event`, unique among tournaments.
    pub name: String,
    /// How rounds are paired.
    pub system: System,
    /// The number of rounds (Swiss and manual); a round-robin's follows from its
    /// players and is 0 here.
    pub rounds: u32,
    /// The settings every game of the event is created with (variant, time control…).
    pub settings: GameSettings,
    /// Win / draw / loss points.
    #[serde(default)]
    pub scoring: Scoring,
    /// Tiebreaks in order.
    pub tiebreaks: Vec<Tiebreak>,
    /// Ballot openings, if the event draws them.
    #[serde(default)]
    pub ballot: Option<Ballot>,
    /// Games a pairing plays: 1, or an even number for micro-matches (T 4).
    pub games_per_pairing: u32,
    /// The default time in milliseconds (T 5); 0 = none.
    pub default_time_ms: u64,
    /// What a pairing-allocated bye scores (Swiss, T 6).
    pub bye_score: ByeScore,
    /// Whether a round-robin player withdrawn before half their games has their results
    /// annulled (T 6).
    pub annul_before_half: bool,
    /// Where the event is played (its games' PDN `Site`); empty: unknown.
    #[serde(default)]
    pub site: String,
    /// The venue's IANA time zone ("Europe/Moscow"): its games' PDN `Date` is the day
    /// there; empty: UTC.
    #[serde(default)]
    pub time_zone: String,
}

/// T 5's default time when an event does not set one: 30 minutes.
pub const DEFAULT_TIME_MS: u64 = 30 * 60 * 1000;

/// A player as entered.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Entrant {
    /// The name as the event lists it ("Surname, Given").
    pub name: String,
    /// The FMJD identifier, if any.
    #[serde(default)]
    pub fmjd_id: String,
    /// The federation's code.
    #[serde(default)]
    pub federation: String,
    /// The rating; 0 unrated.
    #[serde(default)]
    pub rating: u32,
    /// The title (GMI, MI, MF, …), if any.
    #[serde(default)]
    pub title: String,
}

/// A player of the event: who they are, their numbers and status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    /// The order they were entered in, from 1: the id the tournament's commands use.
    pub id: u32,
    /// Who they are.
    pub entrant: Entrant,
    /// The pairing number (T 2), 0 until drawn or set.
    pub pairing_number: u32,
    /// The round from which they no longer play (withdrawn), if any.
    pub withdrawn_from: Option<u32>,
}

/// Where a pairing came from (T 1: every pairing is recorded with its source).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PairingSource {
    /// The Berger tables.
    Berger,
    /// A Swiss engine: its name and version as it answered.
    Engine {
        /// The engine and its version.
        engine: String,
    },
    /// Entered by the arbiter, or imported from another program's TRF.
    Arbiter {
        /// What the arbiter said of them ("imported from Swiss-Manager").
        note: String,
    },
}

/// How pairing numbers were given (T 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum NumbersSource {
    /// Drawn by the service's lot with the revealed seed.
    Lot,
    /// By rating, then title, then name (Swiss, C.04.2).
    Rating,
    /// As drawn in the hall, entered by the arbiter.
    Hall,
}

/// A ballot opening drawn for a game (T 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawnOpening {
    /// The table's id.
    pub table: String,
    /// The opening's number in the table (1-based).
    pub number: u32,
    /// Its published label.
    pub code: String,
}

/// How a game's result came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    /// Played out (or ended by the arbiter during play).
    Played,
    /// Lost by default (T 5): not at the board when the default time passed.
    Default,
    /// A forfeit the arbiter entered (a no-show before the round, a withdrawal).
    Forfeit,
}

/// A game's result as the tournament counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Score {
    /// White won.
    WhiteWins,
    /// Black won.
    BlackWins,
    /// Drawn.
    Draw,
    /// Both lose (both absent at the default time, T 5; a double forfeit).
    BothLose,
}

/// A game's outcome: the score and how it came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Who scored.
    pub score: Score,
    /// Played, default or forfeit.
    pub kind: ResultKind,
}

/// One game of a pairing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSlot {
    /// The game's id (see [`super::game_id`]).
    pub game_id: String,
    /// White's player id.
    pub white: u32,
    /// Black's player id.
    pub black: u32,
    /// The ballot opening it starts from, if the event draws them.
    pub opening: Option<DrawnOpening>,
    /// Its result, once known.
    pub outcome: Option<Outcome>,
    /// Whether the game is played on a board (false: decided without play, a forfeit
    /// of a withdrawn player).
    pub played: bool,
    /// Every result it was given, the last one `outcome`, each with the instant it was
    /// decided (a correction is a later one): what a viewer behind the games' public
    /// delay sees is the last one decided long enough ago.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<Decision>,
    /// The games this board played before, replaced by `game_id` when the arbiter
    /// annulled a default (T 5), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
}

/// A result given to a game and when it was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The outcome.
    pub outcome: Outcome,
    /// When it was decided (wall ms since the epoch): the game's end, or the entry of a
    /// forfeit.
    pub at_ms: i64,
}

/// One board of a round: a pairing and its game(s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// The board number, from 1.
    pub board: u32,
    /// The player with White in the first game.
    pub white: u32,
    /// The player with Black in the first game.
    pub black: u32,
    /// Its games in playing order (two or more for a micro-match, colours alternating).
    pub games: Vec<GameSlot>,
}

/// Why a player has no game in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ByeKind {
    /// A round-robin's free round (an odd field): no points, not a game (T 6).
    FreeRound,
    /// The Swiss engine's bye: the event's `bye_score` (T 6).
    PairingAllocated,
    /// A half-point bye the player asked for: a draw's points.
    Half,
    /// A zero-point bye (absent by arrangement).
    Zero,
}

/// A player without a game in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bye {
    /// The player's id.
    pub player: u32,
    /// What kind of bye.
    pub kind: ByeKind,
}

/// A recorded tournament event: when, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentEvent {
    /// Wall time in milliseconds since the Unix epoch (UTC), as the service recorded it.
    pub at_ms: i64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened to a tournament.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum EventKind {
    /// The event was created; the lot's first seed is sealed (its hash is published).
    Created {
        /// The settings.
        config: Config,
        /// The sealed seed of the next draw.
        sealed: Seed,
    },
    /// Players were entered, in order (their ids follow the ones before).
    PlayersAdded {
        /// Who.
        players: Vec<Entrant>,
    },
    /// A player withdrew (T 6): not paired from `from_round` on.
    PlayerWithdrawn {
        /// The player's id.
        player: u32,
        /// The first round they do not play.
        from_round: u32,
        /// The arbiter's reason.
        reason: String,
    },
    /// Pairing numbers were given (T 2): `numbers[i]` is the id of the player with
    /// pairing number `i + 1`.
    NumbersGiven {
        /// Player ids by pairing number.
        numbers: Vec<u32>,
        /// Lot, rating or hall.
        source: NumbersSource,
        /// Swiss: whether pairing number 1 has White in round 1, drawn by lot (T 2).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        top_white: Option<bool>,
    },
    /// A round was paired (T 1), its openings drawn (T 3) and its games named.
    RoundPaired {
        /// The round, from 1.
        round: u32,
        /// Where the pairings came from.
        source: PairingSource,
        /// The boards in order.
        pairings: Vec<Pairing>,
        /// Who has no game.
        byes: Vec<Bye>,
        /// The ballot numbers drawn, in the order drawn (T 3: none repeats until the
        /// table is exhausted).
        #[serde(default)]
        draws: Vec<u32>,
    },
    /// The seed of the draws just recorded is revealed and the next one sealed (T 2).
    LotRevealed {
        /// The seed the draws used; its hash is the commitment published before.
        seed: Seed,
        /// The next sealed seed.
        sealed: Seed,
    },
    /// A round started: its games started and the default time runs from here (T 5).
    RoundStarted {
        /// The round.
        round: u32,
    },
    /// The arbiter marked a player absent for a round (T 5: both lose at the default
    /// time if the side to move has not acted either).
    MarkedAbsent {
        /// The round.
        round: u32,
        /// The player's id.
        player: u32,
    },
    /// A game's result, taken from the game (a finished game, a default) or entered as a
    /// forfeit; a later one for the same game corrects it.
    GameResult {
        /// The game's id.
        game_id: String,
        /// The outcome.
        outcome: Outcome,
        /// The rule, if the result is one the tournament decided (`T 5`, `T 6`).
        rule: Option<String>,
        /// When the game's result was decided (its end, wall ms), when it is not the
        /// event's own time (a result taken from a game after it ended).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decided_at_ms: Option<i64>,
    },
    /// The arbiter annulled a default (T 5): the board's game is played again as a new
    /// game, `replay_id`, which replaces `game_id` in the pairing.
    GameReplayed {
        /// The game whose default is annulled.
        game_id: String,
        /// The game that replaces it.
        replay_id: String,
        /// The arbiter's reason (the documented delay).
        reason: String,
    },
}
