//! The event around the games (DESIGN.md 12; RULES.md T 1–T 8): players, pairing
//! numbers, rounds and their pairings, ballot openings, micro-matches, byes, forfeits
//! and the results the games report.
//!
//! Pure like `game/`: [`Tournament::handle`] takes a command with the instant it
//! happened and returns the events it decided; a tournament is exactly the fold of its
//! events ([`Tournament::replay`]). It knows games by id and result only: the hub creates
//! and starts a round's games from the pairings recorded here, and reports their results
//! back as [`Command::GameFinished`]. The fresh seeds for the lot (T 2) and a Swiss
//! engine's pairings (T 1) come in with the commands, so nothing here reads a clock, a
//! random source or a process.

pub mod ballot;
pub mod berger;
mod command;
mod error;
mod event;
pub mod lot;
pub mod report;
pub mod report_text;
pub mod standings;
mod state;
pub mod swiss;
pub mod trf;

pub use command::{Command, GivenPairings};
pub use error::{Class, TournamentError};
pub use event::{
    Ballot, BallotPer, Bye, ByeKind, ByeScore, Config, DEFAULT_TIME_MS, Decision, DrawnOpening,
    Entrant, EventKind, GameSlot, NumbersSource, Outcome, Pairing, PairingSource, Player,
    ResultKind, Score, Scoring, System, Tiebreak, TournamentEvent,
};
pub use lot::Seed;
pub use state::{RoundState, Tournament};

/// The most bytes of an event key (the games' ids are `KEY-rR-bB[-gG]`, at most 64).
pub const MAX_KEY_BYTES: usize = 40;

/// The key the games of an event are named by: the event's name in lowercase ASCII
/// letters and digits, every other run of characters one `-`, at most
/// [`MAX_KEY_BYTES`] bytes; a name with no ASCII letter or digit gets `event-` and the
/// first 8 hex digits of its SHA-256. Two events whose names give the same key cannot
/// both exist (the server refuses the second).
pub fn event_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len().min(MAX_KEY_BYTES));
    let mut dash = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if dash && !key.is_empty() {
                key.push('-');
            }
            dash = false;
            key.push(c.to_ascii_lowercase());
        } else {
            dash = true;
        }
        if key.len() >= MAX_KEY_BYTES {
            break;
        }
    }
    let key = key.trim_end_matches('-').to_string();
    if key.is_empty() {
        use sha2::Digest;
        let hash = sha2::Sha256::digest(name.as_bytes());
        return format!("event-{}", &lot::hex(&hash)[..8]);
    }
    key
}

/// The id of game `game` (1-based) of board `board` in round `round` of the event keyed
/// `key`: `KEY-rROUND-bBOARD`, with `-gGAME` when a pairing plays more than one game
/// (a micro-match, T 4).
pub fn game_id(key: &str, round: u32, board: u32, game: u32, games_per_pairing: u32) -> String {
    if games_per_pairing > 1 {
        format!("{key}-r{round}-b{board}-g{game}")
    } else {
        format!("{key}-r{round}-b{board}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_keys_and_game_ids() {
        assert_eq!(
            event_key("Russian Championship 2026"),
            "russian-championship-2026"
        );
        assert_eq!(event_key("  Open A / B  "), "open-a-b");
        assert_eq!(event_key("Кубок"), event_key("Кубок"));
        assert!(event_key("Кубок").starts_with("event-"));
        assert_ne!(event_key("Кубок"), event_key("Чемпионат"));
        assert!(event_key(&"x".repeat(100)).len() <= MAX_KEY_BYTES);
        assert_eq!(game_id("open", 3, 12, 1, 1), "open-r3-b12");
        assert_eq!(game_id("open", 3, 12, 2, 2), "open-r3-b12-g2");
        let longest = game_id(&"x".repeat(MAX_KEY_BYTES), 999, 999, 10, 10);
        assert!(longest.len() <= 64, "{longest}");
    }
}
