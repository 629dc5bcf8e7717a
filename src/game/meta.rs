//! What the server knows of a game besides its log: the names on the score sheet (the
//! PDN writer's tags; the hub keeps it in the store's metadata row).

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
}
