//! A tournament's player as the command line prints it: in words and as JSON (the
//! tournament, standings and crosstable commands).

use serde_json::{Value, json};

use crate::api::pb;

/// `3. GMI Chizhov, Alexei (2380)`: pairing number, title, name, rating.
pub(super) fn player_text(p: Option<&pb::Player>) -> String {
    let Some(p) = p else {
        return "?".into();
    };
    let title = if p.title.is_empty() {
        String::new()
    } else {
        format!("{} ", p.title)
    };
    let rating = if p.rating > 0 {
        format!(" ({})", p.rating)
    } else {
        String::new()
    };
    format!("{}. {title}{}{rating}", p.pairing_number, p.name)
}

/// The player's fields as JSON.
pub(super) fn player_json(p: &pb::Player) -> Value {
    json!({
        "player_id": p.player_id,
        "pairing_number": p.pairing_number,
        "name": p.name,
        "rating": p.rating,
        "title": p.title,
        "federation": p.federation,
        "fmjd_id": p.fmjd_id,
        "withdrawn_from_round": p.withdrawn_from_round,
    })
}
