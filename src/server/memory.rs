//! Gives the system back the memory a crowd of watch streams freed (Linux with glibc).
//!
//! glibc's malloc keeps what the program frees in its arenas (one per thread that
//! allocates, up to eight a core) and returns to the system only the free space at the
//! top of each. A burst of 10,000 `WatchEvent` streams opening together peaks at about
//! 100 MB of heap, spread over the runtime's worker threads' arenas; when they have
//! ended, the 20 MB still live (the HTTP/2 connections' tables, SQLite's caches) sits
//! among the freed space, and the rest stays resident though free. Which arena a burst's
//! memory comes from depends on which worker runs which stream, so each arena grows to
//! its own high-water mark over several bursts: the resident size after bursts of 10,000
//! streams grew by 6 to 22 MB from the first to the third with the live heap flat (issue
//! 37, measured with heaptrack and glibc's `malloc_info`: the growth was free space in
//! the two worker arenas). `malloc_trim(0)` gives back the free pages inside every arena
//! as well (`madvise`), so once a crowd of streams has left, the resident size is what
//! is live.
//!
//! The trim walks every arena under its lock (3 ms after a crowd of 2,000 streams, 8 to
//! 26 ms after 10,000): it runs on a blocking thread, once a crowd has left (at least
//! [`CROWD`] streams ended since the last one, and the ends have died down), not on a
//! timer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::hub::metrics::Metrics;

/// How often the keeper looks at how many watch streams have ended.
pub const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How many watch streams must have ended since the last trim for the next one: each
/// held about 10 KB at a burst's peak, so 10 MB or more to give back.
pub const CROWD: u64 = 1_000;

/// Whether this build can give memory back (glibc's `malloc_trim`).
pub const SUPPORTED: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// Gives back the memory freed by each crowd of watch streams once it has left (see
/// `Crowd`), looking every [`LOOK_EVERY`]. Counted in `arbiter_memory_trims_total`.
/// Returns at `stop`, at once where the allocator has no such call.
pub async fn keep(metrics: Arc<Metrics>, stop: impl Future<Output = ()>) {
    keep_every(metrics, stop, LOOK_EVERY).await;
}

async fn keep_every(metrics: Arc<Metrics>, stop: impl Future<Output = ()>, every: Duration) {
    if !SUPPORTED {
        return;
    }
    let mut stop = std::pin::pin!(stop);
    let mut look = tokio::time::interval(every);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut crowd = Crowd::new(metrics.watchers_ended());
    loop {
        tokio::select! {
            () = &mut stop => return,
            _ = look.tick() => {}
        }
        let Some(streams) = crowd.look(metrics.watchers_ended()) else {
            continue;
        };
        let started = Instant::now();
        let before = resident_kib();
        let gave_back = tokio::task::spawn_blocking(trim).await.unwrap_or(false);
        metrics.memory_trimmed();
        tracing::debug!(
            streams,
            gave_back,
            rss_before_kib = before,
            rss_after_kib = resident_kib(),
            took = ?started.elapsed(),
            "a crowd of watch streams left: freed memory given back to the system"
        );
    }
}

/// When a crowd of streams has left: at least [`CROWD`] ended since the last trim, and
/// fewer than a tenth of that since the last look (a crowd still leaving holds the trim
/// off; a steady trickle of streams does not).
#[derive(Debug, Clone, Copy)]
struct Crowd {
    /// Streams ended, at the last trim and at the last look.
    trimmed_at: u64,
    last: u64,
}

impl Crowd {
    fn new(ended: u64) -> Crowd {
        Crowd {
            trimmed_at: ended,
            last: ended,
        }
    }

    /// A look with `ended` streams ended so far: how many ended since the last trim, if
    /// it is time for the next.
    fn look(&mut self, ended: u64) -> Option<u64> {
        let (since, lately) = (ended - self.trimmed_at, ended - self.last);
        self.last = ended;
        if since < CROWD || lately >= CROWD / 10 {
            return None;
        }
        self.trimmed_at = ended;
        Some(since)
    }
}

/// glibc's `malloc_trim(0)`: the free space at the top of the heap and the free pages
/// inside every arena go back to the system. Whether any did.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() -> bool {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: `malloc_trim` takes no pointer and has no precondition; glibc takes each
    // arena's lock while it walks it, as for any other allocation.
    unsafe { malloc_trim(0) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() -> bool {
    false
}

/// The process's resident set (`VmRSS`), KiB; 0 where /proc does not say.
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::metrics::WatchKind;

    /// One stream alone is no crowd; a crowd still leaving (a tenth of it or more a look)
    /// holds the trim off; once it has left, one trim; a steady trickle does not hold it
    /// off.
    #[test]
    fn a_trim_follows_a_crowd_once_it_has_left() {
        let mut c = Crowd::new(0);
        assert_eq!(c.look(1), None, "one stream");
        let mut ended = 1;
        for _ in 0..8 {
            ended += CROWD / 4;
            assert_eq!(c.look(ended), None, "still leaving");
        }
        assert_eq!(c.look(ended), Some(ended), "the crowd has left");
        assert_eq!(c.look(ended), None, "nothing more to give back");
        // A trickle of a few streams a look adds up to a crowd too.
        let mut looks = 0;
        while c.look(ended).is_none() {
            ended += CROWD / 20;
            looks += 1;
            assert!(looks <= 21, "a trickle never trims");
        }
    }

    /// The keeper gives back the memory after a crowd of streams has left, and counts it.
    #[tokio::test]
    async fn the_keeper_trims_after_a_crowd_has_left() {
        if !SUPPORTED {
            return;
        }
        let metrics = Arc::new(Metrics::new());
        let trims = |m: &Metrics| {
            m.render()
                .lines()
                .find_map(|l| l.strip_prefix("arbiter_memory_trims_total "))
                .map(|v| v.parse::<u64>().expect("a count"))
                .expect("arbiter_memory_trims_total")
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let keeper = tokio::spawn(keep_every(
            metrics.clone(),
            async {
                let _ = stopped.await;
            },
            Duration::from_millis(10),
        ));
        // The keeper counts from where it starts.
        tokio::time::sleep(Duration::from_millis(30)).await;
        for _ in 0..CROWD {
            drop(metrics.watcher(WatchKind::Event));
        }
        let t = Instant::now();
        while trims(&metrics) == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "no trim after a crowd"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = stop.send(());
        keeper.await.expect("the keeper ends at stop");
        assert_eq!(trims(&metrics), 1);
    }
}
