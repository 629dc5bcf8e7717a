//! draughts-arbiter: the competition judge for draughts tournaments.
//!
//! Layers, each depending only on the ones below it:
//! - [`history`]: the append-only record the growing parts of a game are kept in,
//!   shared between the judge's working copies;
//! - [`rules`]: pure rules of every variant (boards, move generation, draw counters);
//! - [`notation`]: squares, moves, FEN and PDN, read and written;
//! - [`clock`]: time controls and clock arithmetic, driven by explicit instants;
//! - [`game`]: the arbiter session, one deterministic judge per game.
//! - [`store`]: the durable event log (SQLite with group commit, or in memory);
//! - [`hub`]: the live games, one owner per game, their watchers and timers;
//! - [`api`]: the gRPC contract (generated protobuf types);
//! - [`web`]: HTTP beside gRPC on the API port (PDN for relays, the live board page).
// One exception, `server::memory`'s call of glibc's `malloc_trim` (allowed there alone).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod api;
pub mod cli;
pub mod clock;
pub mod game;
pub mod history;
pub mod hub;
pub mod notation;
pub mod rules;
pub mod server;
pub mod store;
pub mod tournament;
pub mod web;
