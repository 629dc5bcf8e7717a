//! The limits of a time control ([`TimeControl::new`](super::TimeControl::new) and the
//! parser refuse anything beyond them).

use super::Millis;

/// Milliseconds in an hour.
const HOUR: Millis = 3_600_000;

/// The longest time a period may give: 7 days (168 h).
pub const MAX_PERIOD_TIME: Millis = 7 * 24 * HOUR;
/// The largest increment or delay a period may give per move: 1 hour.
pub const MAX_BONUS: Millis = HOUR;
/// The largest move count of a period.
pub const MAX_MOVES: u32 = 1_000;
/// The most periods a time control may have.
pub const MAX_PERIODS: usize = 16;
/// The longest English "Time!" per-move limit: 24 hours.
pub const MAX_MOVE_LIMIT: Millis = 24 * HOUR;
/// The longest allowance after "Time!": 1 hour.
pub const MAX_ALLOWANCE: Millis = HOUR;
/// The most an arbiter adds to or takes from a clock at once: 24 hours. A remaining time
/// an arbiter sets or reaches by adding is at most [`MAX_PERIOD_TIME`].
pub const MAX_ADJUSTMENT: Millis = 24 * HOUR;
