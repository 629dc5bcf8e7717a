//! What every part of the benchmark shares: the games' position and time control, a run's
//! latencies, percentiles and ranges, and a scratch directory for SQLite files.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Two kings a side, far enough apart that no capture is ever possible in the shuffle.
pub(super) const SHUFFLE_FEN: &str = "W:WK29,K32:BK1,K4";
/// The benchmark games' time control (the clocks run; nobody's flag falls).
pub(super) const TIME_CONTROL: &str = "90m+30s";

/// Latencies of one run and how long it took.
pub(super) struct Sample {
    pub(super) latencies: Vec<Duration>,
    pub(super) elapsed: Duration,
}

impl Sample {
    pub(super) fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Nearest-rank percentile, in milliseconds.
    pub(super) fn percentile_ms(&self, q: f64) -> f64 {
        percentile_ms(&self.latencies, q)
    }

    pub(super) fn line(&self, label: &str, games: usize, unit: &str) -> String {
        format!(
            "games={games:<4} {label:<16} {:>8.0} {unit}/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ({} {unit} in {:.2} s)",
            self.per_second(),
            self.percentile_ms(0.50),
            self.percentile_ms(0.99),
            self.latencies.len(),
            self.elapsed.as_secs_f64()
        )
    }
}

/// Nearest-rank percentile of durations, in milliseconds (0 when empty).
pub(super) fn percentile_ms(latencies: &[Duration], q: f64) -> f64 {
    let ms: Vec<f64> = latencies.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    percentile_ms_f64(&ms, q)
}

/// Nearest-rank percentile of values already in milliseconds (0 when empty).
pub(super) fn percentile_ms_f64(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or(0.0)
}

/// "low-high" of several measurements (one value alone when there is one).
pub(super) fn range(values: &[f64], decimals: usize) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        "-".into()
    } else if values.len() == 1 || (hi - lo).abs() < f64::EPSILON {
        format!("{lo:.decimals$}")
    } else {
        format!("{lo:.decimals$}-{hi:.decimals$}")
    }
}

/// A fresh directory for the SQLite files, removed when dropped.
pub(super) struct Scratch(pub(super) PathBuf);

impl Scratch {
    pub(super) fn new(base: Option<&Path>) -> Result<Scratch, String> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let dir = base.join(format!(
            "draughts-arbiter-bench-{}-{stamp}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
