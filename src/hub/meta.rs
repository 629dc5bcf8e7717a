//! The game's metadata as the store keeps it (the type is the domain's,
//! [`crate::game::GameMeta`]).

use crate::game::GameMeta;
use crate::store::GameRecord;

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
