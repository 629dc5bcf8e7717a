//! The server's one timeline: every event of every game is stamped on it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use crate::game::Now;

/// A monotonic millisecond timeline that continues across restarts: wall-clock
/// milliseconds at start-up plus the monotonic time elapsed since (tokio's clock, so
/// tests can pause and advance it).
#[derive(Debug, Clone, Copy)]
pub struct Timeline {
    wall_ms: u64,
    anchor: Instant,
}

impl Timeline {
    /// Starts the timeline now.
    pub fn start() -> Timeline {
        Timeline {
            wall_ms: u64::try_from(Utc::now().timestamp_millis()).unwrap_or(0),
            anchor: Instant::now(),
        }
    }

    /// The current instant, never before `not_before`.
    pub fn now(&self, not_before: u64) -> Now {
        let mono = self.wall_ms + self.anchor.elapsed().as_millis() as u64;
        let mono = mono.max(not_before);
        Now {
            mono_ms: mono,
            wall: DateTime::<Utc>::from_timestamp_millis(mono as i64).unwrap_or_default(),
        }
    }

    /// The tokio instant of a timeline millisecond.
    pub fn instant(&self, ms: u64) -> tokio::time::Instant {
        let offset = Duration::from_millis(ms.saturating_sub(self.wall_ms));
        self.anchor + offset
    }
}
