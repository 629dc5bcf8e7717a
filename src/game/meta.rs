//! What the server knows of a game besides its log: the names on the score sheet, the
//! site and the time zone of its calendar day (the PDN writer's tags; the hub keeps it in
//! the store's metadata row).

use serde::{Deserialize, Serialize};

/// A player as the game record names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInfo {
    /// Name as on the scoresheet.
    pub name: String,
    /// FMJD id, if any.
    pub fmjd_id: String,
    /// Federation code.
    pub federation: String,
    /// Rating.
    pub rating: u32,
}

/// What the server knows of a game besides its log (kept in the store's metadata row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameMeta {
    /// The game's id.
    pub id: String,
    /// Tournament name.
    pub event: String,
    /// Round.
    pub round: String,
    /// Board number in the round.
    pub board: u32,
    /// White.
    pub white: PlayerInfo,
    /// Black.
    pub black: PlayerInfo,
    /// Where it is played (PDN `Site`, e.g. "Moscow, Russia"); empty: unknown (`?`).
    #[serde(default)]
    pub site: String,
    /// The IANA time zone of the venue ("Europe/Moscow"), in which the PDN `Date` is the
    /// calendar day; empty: UTC.
    #[serde(default)]
    pub time_zone: String,
}

/// The zone of an IANA time zone name ("Europe/Moscow"); the empty name is UTC.
///
/// # Errors
/// The name is not in the IANA database this server was built with (chrono-tz's), with
/// the message saying so.
pub fn time_zone(name: &str) -> Result<chrono_tz::Tz, String> {
    if name.is_empty() {
        return Ok(chrono_tz::UTC);
    }
    name.parse::<chrono_tz::Tz>().map_err(|_| {
        format!(
            "{name:?} is not an IANA time zone (e.g. \"Europe/Moscow\", \"America/Toronto\"; \
             empty = UTC)"
        )
    })
}

impl GameMeta {
    /// The zone the game's calendar day is counted in: its `time_zone`, UTC when empty
    /// (or, in a record written by another version, unknown to this one).
    pub fn zone(&self) -> chrono_tz::Tz {
        time_zone(&self.time_zone).unwrap_or(chrono_tz::UTC)
    }
}
