//! What the hub knows of a game besides its log: the names on the score sheet.

use serde::{Deserialize, Serialize};

use crate::store::GameRecord;

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
}

impl GameMeta {
    /// The metadata of a stored game row (its JSON, else the row's own columns).
    pub fn of_record(record: &GameRecord) -> GameMeta {
        serde_json::from_str(&record.metadata_json).unwrap_or_else(|_| GameMeta {
            id: record.game_id.clone(),
            event: record.event.clone(),
            round: record.round.clone(),
            board: record.board,
            ..GameMeta::default()
        })
    }
}
