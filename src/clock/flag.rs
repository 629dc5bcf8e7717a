//! A fallen flag and why it fell.

use serde::{Deserialize, Serialize};

use super::{Millis, Side};

/// Why a flag fell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FlagCause {
    /// The side's remaining time reached zero.
    TimeExpired,
    /// English "Time!" rule: the side did not move within the allowance after the call.
    MoveLimit,
}

/// A fallen flag: who, when (the exact instant), and why. The game is lost on time
/// (subject to the arbiter's ruling, e.g. on insufficient material).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Flag {
    /// The side whose flag fell.
    pub side: Side,
    /// The instant it fell.
    pub at: Millis,
    /// Why.
    pub cause: FlagCause,
}
