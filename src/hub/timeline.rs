//! The server's one timeline: every event of every game is stamped on it.
//!
//! It runs at the rate of a monotonic clock (tokio's, so tests can pause and advance it)
//! from the instant it starts, and never reads the wall clock again: a wall clock stepped
//! while the service runs changes nothing. Where it starts is what a restart must get
//! right, since a running game's clock counts from its last recorded instant:
//!
//! - **On the same boot of the same host**, the previous run's alive mark carries the
//!   boot id and the boot-time clock (`CLOCK_BOOTTIME`, which nobody sets): the timeline
//!   goes on from the mark by exactly the time that passed, whatever the wall clock did
//!   meanwhile (an NTP step, a restored VM snapshot's clock).
//! - **Across a reboot or a move to another host**, nothing spans both runs: the timeline
//!   starts at the wall clock, but never before the mark plus the time since this boot
//!   (the service was down at least that long). A wall clock behind that is logged and
//!   counted; the outage is then only a lower bound.
//! - **Without a mark** (a new store, PostgreSQL), at the wall clock.
//!
//! A game may run on a shifted copy of the timeline ([`Timeline::for_game`]): a node that
//! takes a game over from another (PostgreSQL), whose clock may be seconds apart, shifts
//! the game so that it goes on from the instant the database's clock says, and a game
//! whose last event is later than this timeline (events after the last mark) is shifted
//! so that its instants stay monotone. The shift is fixed when the game is loaded or
//! taken, so its clocks run at the monotonic rate from then on.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use crate::game::{Now, OutageMeasure};
use crate::store::{AliveMark, BootStamp};

/// Where the time comes from: the wall clock and the host's boot clock. The service's
/// own is [`SystemClocks`]; tests step a fake one.
pub trait Clocks: Send + Sync + std::fmt::Debug {
    /// The wall clock, ms since the Unix epoch.
    fn wall_ms(&self) -> i64;
    /// This boot's id and its boot-time clock now, where the system tells them.
    fn boot(&self) -> Option<BootStamp>;
}

/// The host's clocks: `chrono`'s wall clock; on Linux the boot id
/// (`/proc/sys/kernel/random/boot_id`) and the boot-time clock (`/proc/uptime`, which the
/// kernel reads from `CLOCK_BOOTTIME`, to the hundredth of a second).
#[derive(Debug, Default)]
pub struct SystemClocks {
    boot_id: std::sync::OnceLock<Option<String>>,
}

impl Clocks for SystemClocks {
    fn wall_ms(&self) -> i64 {
        Utc::now().timestamp_millis()
    }

    fn boot(&self) -> Option<BootStamp> {
        let id = self
            .boot_id
            .get_or_init(|| {
                std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
            })
            .clone()?;
        let uptime = std::fs::read_to_string("/proc/uptime").ok()?;
        Some(BootStamp {
            id,
            ms: uptime_ms(&uptime)?,
        })
    }
}

/// The first field of `/proc/uptime` ("12345.67 …", seconds) in milliseconds.
fn uptime_ms(text: &str) -> Option<u64> {
    let first = text.split_whitespace().next()?;
    let (secs, frac) = first.split_once('.').unwrap_or((first, ""));
    let secs: u64 = secs.parse().ok()?;
    let mut ms = 0;
    for (i, d) in frac.chars().take(3).enumerate() {
        ms += u64::from(d.to_digit(10)?) * [100, 10, 1][i];
    }
    secs.checked_mul(1000)?.checked_add(ms)
}

/// How the timeline started: what a restart knew, for the log, the metrics and each
/// game's outage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// What measured the time since the alive mark.
    pub measured: OutageMeasure,
    /// The wall clock minus the timeline at the start, ms (positive: the wall clock is
    /// ahead). Near 0 normally; the step after a wall-clock step on the same boot.
    pub wall_offset_ms: i64,
    /// The wall clock was behind what the log proves (the mark, plus the time since this
    /// boot): by how much, ms.
    pub wall_behind_ms: Option<u64>,
}

/// A monotonic millisecond timeline that continues across restarts (see the module).
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The timeline's instant at `anchor`.
    base_ms: u64,
    anchor: Instant,
    /// A game's shift from the hub's timeline, ms (0 for the hub's own), shared by the
    /// game's handle and task.
    offset_ms: Arc<AtomicI64>,
}

impl Timeline {
    /// Starts the timeline now, going on from the previous run's alive mark as well as the
    /// clocks allow (see the module).
    pub fn resume(mark: Option<&AliveMark>, clocks: &dyn Clocks) -> (Timeline, Started) {
        let anchor = Instant::now();
        let wall = u64::try_from(clocks.wall_ms()).unwrap_or(0);
        let boot = clocks.boot();
        let (base_ms, measured, wall_behind_ms) = match mark {
            None => (wall, OutageMeasure::LastEvent, None),
            Some(mark) => match mark.boot.as_ref().zip(boot.as_ref()) {
                Some((then, now)) if let Some(elapsed) = now.since(then) => (
                    mark.at_ms.saturating_add(elapsed),
                    OutageMeasure::BootClock,
                    None,
                ),
                _ => {
                    // Another boot (or no boot clock): down at least since this boot
                    // began, if the mark's boot is known to be an earlier one.
                    let since_boot = match mark.boot.as_ref().zip(boot.as_ref()) {
                        Some((then, now)) if then.id != now.id => now.ms,
                        _ => 0,
                    };
                    let floor = mark.at_ms.saturating_add(since_boot);
                    if wall >= floor {
                        (wall, OutageMeasure::WallClock, None)
                    } else {
                        (floor, OutageMeasure::LowerBound, Some(floor - wall))
                    }
                }
            },
        };
        let started = Started {
            measured,
            wall_offset_ms: i64::try_from(wall).unwrap_or(i64::MAX)
                - i64::try_from(base_ms).unwrap_or(i64::MAX),
            wall_behind_ms,
        };
        let timeline = Timeline {
            base_ms,
            anchor,
            offset_ms: Arc::default(),
        };
        (timeline, started)
    }

    /// A copy for one game, unshifted until [`Timeline::shift_at`] shifts it (its handle
    /// and its task share the shift).
    #[must_use]
    pub fn for_game(&self) -> Timeline {
        Timeline {
            base_ms: self.base_ms,
            anchor: self.anchor,
            offset_ms: Arc::default(),
        }
    }

    /// Shifts this game's timeline so that it read `ms` at the hub's instant `hub_ms`
    /// (from [`Timeline::now_unshifted`], taken when the facts were read): a takeover goes
    /// on from the instant the database's clock says, whether this node's clock is
    /// behind or ahead of the previous owner's. `ms` is never before the game's last
    /// event (and [`Timeline::now`] never answers before it anyway).
    pub fn shift_at(&self, ms: u64, hub_ms: u64) {
        let want = i64::try_from(ms).unwrap_or(i64::MAX);
        let at = i64::try_from(hub_ms).unwrap_or(i64::MAX);
        self.offset_ms
            .store(want.saturating_sub(at), Ordering::Release);
    }

    /// The hub's timeline now, without this game's shift.
    pub fn now_unshifted(&self) -> u64 {
        u64::try_from(self.raw_ms()).unwrap_or(0)
    }

    /// The game's shift from the hub's timeline, ms.
    fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::Acquire)
    }

    /// The hub's timeline now, unshifted.
    fn raw_ms(&self) -> i64 {
        let elapsed = u64::try_from(self.anchor.elapsed().as_millis()).unwrap_or(u64::MAX);
        i64::try_from(self.base_ms.saturating_add(elapsed)).unwrap_or(i64::MAX)
    }

    /// The current instant, never before `not_before` (a game's last event: its instants
    /// stay monotone even if the shift was set too early).
    pub fn now(&self, not_before: u64) -> Now {
        let ms = self.raw_ms().saturating_add(self.offset_ms());
        let mono = u64::try_from(ms).unwrap_or(0).max(not_before);
        Now {
            mono_ms: mono,
            wall: DateTime::<Utc>::from_timestamp_millis(i64::try_from(mono).unwrap_or(0))
                .unwrap_or_default(),
        }
    }

    /// The tokio instant of a timeline millisecond.
    pub fn instant(&self, ms: u64) -> tokio::time::Instant {
        let start = i64::try_from(self.base_ms)
            .unwrap_or(i64::MAX)
            .saturating_add(self.offset_ms());
        let ms = i64::try_from(ms).unwrap_or(i64::MAX);
        let after = u64::try_from(ms.saturating_sub(start)).unwrap_or(0);
        self.anchor + Duration::from_millis(after)
    }

    /// The wall clock minus this timeline now, ms: how far a wall-clock step has taken
    /// the two apart.
    pub fn wall_offset_ms(&self, clocks: &dyn Clocks) -> i64 {
        clocks.wall_ms().saturating_sub(self.raw_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fixed {
        wall: i64,
        boot: Option<BootStamp>,
    }

    impl Clocks for Fixed {
        fn wall_ms(&self) -> i64 {
            self.wall
        }
        fn boot(&self) -> Option<BootStamp> {
            self.boot.clone()
        }
    }

    fn boot(id: &str, ms: u64) -> Option<BootStamp> {
        Some(BootStamp { id: id.into(), ms })
    }

    fn mark(at_ms: u64, boot: Option<BootStamp>) -> AliveMark {
        AliveMark { at_ms, boot }
    }

    #[test]
    fn reads_proc_uptime() {
        assert_eq!(uptime_ms("12345.67 999.00\n"), Some(12_345_670));
        assert_eq!(uptime_ms("7.5 1.0"), Some(7_500));
        assert_eq!(uptime_ms("42 1"), Some(42_000));
        assert_eq!(uptime_ms("x.1 1"), None);
        assert_eq!(uptime_ms(""), None);
    }

    #[tokio::test(start_paused = true)]
    async fn same_boot_goes_on_by_the_boot_clock_whatever_the_wall_clock() {
        // Marked at 1,000,000 on boot b at 50 s; restarted 10 s later with the wall
        // clock 30 s behind the mark (an NTP step back).
        let clocks = Fixed {
            wall: 970_000,
            boot: boot("b", 60_000),
        };
        let (t, started) = Timeline::resume(Some(&mark(1_000_000, boot("b", 50_000))), &clocks);
        assert_eq!(t.now(0).mono_ms, 1_010_000);
        assert_eq!(started.measured, OutageMeasure::BootClock);
        assert_eq!(started.wall_offset_ms, -40_000);
        assert_eq!(started.wall_behind_ms, None);
        tokio::time::advance(Duration::from_millis(2_500)).await;
        assert_eq!(t.now(0).mono_ms, 1_012_500, "runs at the monotonic rate");
        // And one hour ahead: the same.
        let ahead = Fixed {
            wall: 1_000_000 + 3_600_000,
            boot: boot("b", 60_000),
        };
        let (t, started) = Timeline::resume(Some(&mark(1_000_000, boot("b", 50_000))), &ahead);
        assert_eq!(t.now(0).mono_ms, 1_010_000);
        assert_eq!(started.wall_offset_ms, 3_590_000);
    }

    #[tokio::test(start_paused = true)]
    async fn another_boot_starts_at_the_wall_clock_never_before_the_mark_and_the_boot() {
        let mk = mark(1_000_000, boot("a", 50_000));
        // Rebooted 8 s ago, the wall clock 20 s past the mark: the wall clock.
        let (t, s) = Timeline::resume(
            Some(&mk),
            &Fixed {
                wall: 1_020_000,
                boot: boot("b", 8_000),
            },
        );
        assert_eq!(
            (t.now(0).mono_ms, s.measured),
            (1_020_000, OutageMeasure::WallClock)
        );
        // The wall clock behind the mark: the mark plus the time since this boot.
        let (t, s) = Timeline::resume(
            Some(&mk),
            &Fixed {
                wall: 900_000,
                boot: boot("b", 8_000),
            },
        );
        assert_eq!(t.now(0).mono_ms, 1_008_000);
        assert_eq!(s.measured, OutageMeasure::LowerBound);
        assert_eq!(s.wall_behind_ms, Some(108_000));
        // A mark without a boot stamp and a wall clock behind it: the mark.
        let (t, s) = Timeline::resume(
            Some(&mark(1_000_000, None)),
            &Fixed {
                wall: 990_000,
                boot: None,
            },
        );
        assert_eq!(t.now(0).mono_ms, 1_000_000);
        assert_eq!(s.wall_behind_ms, Some(10_000));
    }

    #[tokio::test(start_paused = true)]
    async fn a_games_shift_moves_its_now_and_its_instants_together() {
        let (hub, _) = Timeline::resume(
            None,
            &Fixed {
                wall: 5_000,
                boot: None,
            },
        );
        let game = hub.for_game();
        let shift = |ms| game.shift_at(ms, hub.now_unshifted());
        shift(25_000);
        assert_eq!(game.now(0).mono_ms, 25_000);
        assert_eq!(hub.now(0).mono_ms, 5_000, "the hub's own is not shifted");
        assert_eq!(game.instant(26_000), hub.instant(6_000));
        shift(1_000);
        assert_eq!(
            game.now(0).mono_ms,
            1_000,
            "behind the hub: a node ahead of the owner"
        );
        assert_eq!(
            game.now(20_000).mono_ms,
            20_000,
            "never before the last event"
        );
        let handle = game.clone();
        shift(30_000);
        assert_eq!(
            handle.now(0).mono_ms,
            30_000,
            "the handle's copy sees the shift"
        );
    }
}
