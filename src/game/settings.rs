//! Per-game settings an organiser chooses when creating a game.

use serde::{Deserialize, Serialize};

use crate::clock::TimeControl;
use crate::rules::{RuleEdition, Variant};

/// How a threefold repetition ends the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepetitionMode {
    /// Only by a player's claim (RU 1.9.2); the over-the-board default.
    #[default]
    Claim,
    /// The judge records the draw as soon as the position occurs a third time; the online
    /// default.
    Automatic,
}

/// What happens when a move-count draw rule (RU 1.9.1 (c)–(f), FMJD, EN 40 moves) is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveCountDraws {
    /// The judge records the draw at once.
    #[default]
    Automatic,
    /// The judge reports the condition and the arbiter decides.
    Referred,
}

/// The settings of one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSettings {
    /// The variant.
    pub variant: Variant,
    /// Which edition of the Russian draw rules applies.
    #[serde(default)]
    pub edition: RuleEdition,
    /// The time control; `None` for an untimed game.
    pub time_control: Option<TimeControl>,
    /// Whether a digital move (`submit_move`) also presses the clock.
    #[serde(default = "yes")]
    pub press_on_move: bool,
    /// Claim or automatic repetition draws.
    #[serde(default)]
    pub repetition: RepetitionMode,
    /// Whether draw claims wait for an arbiter's ruling (the claimant's clock runs
    /// meanwhile, RU 1.9.2) instead of being decided at once.
    #[serde(default)]
    pub claims_need_arbiter: bool,
    /// Automatic or referred move-count draws.
    #[serde(default)]
    pub move_count_draws: MoveCountDraws,
    /// No draw offer before this move number (an event rule; 0 = none).
    #[serde(default)]
    pub min_move_for_offer: u32,
    /// English practice: touching a piece that cannot move is warned the first time and
    /// loses the second (seed 004). Defaults to on for English, off otherwise.
    #[serde(default)]
    pub touch_immovable_penalty: Option<bool>,
    /// Whether time the service was down is charged to the side on move.
    #[serde(default)]
    pub charge_outage: bool,
    /// Viewers see the game as it was this many milliseconds ago (a public broadcast
    /// delay); arbiters, the game's board and its players see it live. 0 = live for all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub broadcast_delay_ms: u64,
    /// The default time (RULES.md T 5), in milliseconds from the game's start: the side
    /// to move that has not acted by then loses by default (both sides, when the other
    /// was marked absent). 0 = none (a game outside a tournament, unless set).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub default_time_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The longest public delay a game may have: 24 hours.
pub const MAX_BROADCAST_DELAY_MS: u64 = 24 * 60 * 60 * 1000;

/// The longest default time (T 5) a game may have: 24 hours.
pub const MAX_DEFAULT_TIME_MS: u64 = 24 * 60 * 60 * 1000;

fn yes() -> bool {
    true
}

impl GameSettings {
    /// The defaults for a variant: untimed, over-the-board claim rules.
    pub fn new(variant: Variant) -> GameSettings {
        GameSettings {
            variant,
            edition: RuleEdition::Classic,
            time_control: None,
            press_on_move: true,
            repetition: RepetitionMode::Claim,
            claims_need_arbiter: false,
            move_count_draws: MoveCountDraws::Automatic,
            min_move_for_offer: 0,
            touch_immovable_penalty: None,
            charge_outage: false,
            broadcast_delay_ms: 0,
            default_time_ms: 0,
        }
    }

    /// Whether the English touch rule is on.
    pub fn touch_penalty(&self) -> bool {
        self.touch_immovable_penalty
            .unwrap_or(self.variant == Variant::English)
    }
}
