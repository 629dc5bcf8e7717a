//! The gRPC API (`draughts.arbiter.v1`): generated types sealed in [`pb`], conversions in
//! one module, the services, and the error table.

/// A command's reply: the game after it and the events it recorded.
macro_rules! reply {
    ($ty:ident, $pair:expr) => {{
        let (game, events) = $pair;
        Ok(Response::new(pb::$ty {
            game: Some(game),
            events,
        }))
    }};
}

mod arbiter;
pub mod auth;
mod board;
mod board_seat;
mod broadcast;
pub mod codec;
pub mod convert;
pub mod cursor;
mod error;
mod feed_standings;
pub mod frame;
mod games;
pub mod pb;
mod pdn_cache;
mod ranking;
mod rate;
mod report;
mod request;
mod round_feed;
mod rules;
pub mod service;
pub mod token_table;
mod tournaments;
pub mod validate;
mod watch;

pub use error::{
    MAX_STATUS_MESSAGE, OWNER_ADDR, OWNER_NODE, Refusal, bounded_message, code_name, status,
};
pub use rate::BoardRate;
pub use service::Api;
