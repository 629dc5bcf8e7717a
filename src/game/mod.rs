//! The arbiter session: one deterministic judge per game.
//!
//! [`Session::handle`] takes a command from a board, a player's app or an arbiter, with
//! the instant it happened, and returns the events it decided, each citing the rule that
//! decided it. A session is exactly the fold of its events ([`Session::replay`]), so a
//! recorded log rebuilds the identical state. Time is never read here: the server passes
//! `now` and calls [`Session::tick`] when the timer armed at [`Session::next_deadline`]
//! fires (and before each command).

mod apply;
mod arbiter;
mod board;
mod command;
mod decide;
pub mod describe;
mod draws;
mod error;
mod event;
mod meta;
mod note;
pub mod pdn;
mod session;
mod settings;
mod tx;
mod view;

pub use command::{
    Actor, ArbiterAction, ArbiterId, BoardHealth, BoardInput, ClaimKind, Command, Declared, Given,
    MAX_REASON_BYTES, MAX_RULE_BYTES, Occupancy, OfferResponse, Outcome, Play, Ruling,
};
pub use error::{ErrorClass, GameError, ReplayError};
pub use event::{
    BoardPiece, EndReason, EventKind, FollowCause, GameEvent, IrregularityKind, MoveSource, Now,
    OfferTiming, OutageMeasure,
};
pub use meta::{GameMeta, PlayerInfo, time_zone};
pub use note::{ClockReading, ClockRun, EventNote};
pub use session::{
    BoardStatus, BoardView, Claim, GameResult, InHand, MoveRecord, Offer, Outstanding, Session,
    Stamps, WarningRecord,
};
pub use settings::{
    GameSettings, MAX_BROADCAST_DELAY_MS, MAX_DEFAULT_TIME_MS, MoveCountDraws, RepetitionMode,
};
pub use tx::Decided;
pub use view::{GameSummary, GameView};
