//! The board stream's rate limit: a token bucket per stream, and when a flood is to be
//! reported.

/// How fast one board stream may send: `per_s` messages a second on average, `burst` at
/// once above that (a token bucket). The excess is refused with RESOURCE_EXHAUSTED, and
/// each flood is logged once (a warning naming the game and the board), not each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardRate {
    /// Messages a second, on average.
    pub per_s: u32,
    /// Messages at once above the rate.
    pub burst: u32,
}

impl Default for BoardRate {
    fn default() -> BoardRate {
        BoardRate {
            per_s: 20,
            burst: 100,
        }
    }
}

/// A flood ends when the bucket is full again; a new one is reported at most this often.
const FLOOD_REPORT_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// One stream's token bucket and flood state.
pub(super) struct Bucket {
    pub(super) rate: BoardRate,
    tokens: f64,
    at: tokio::time::Instant,
    flooding: bool,
    reported: Option<tokio::time::Instant>,
    /// Messages refused so far.
    pub(super) refused: u64,
}

/// What the bucket says of one message.
pub(super) enum Admit {
    Yes,
    /// Refused; `true` the first time of a flood that is to be reported.
    No(bool),
}

impl Bucket {
    pub(super) fn new(rate: BoardRate) -> Bucket {
        Bucket {
            rate,
            tokens: f64::from(rate.burst.max(1)),
            at: tokio::time::Instant::now(),
            flooding: false,
            reported: None,
            refused: 0,
        }
    }

    pub(super) fn admit(&mut self) -> Admit {
        let now = tokio::time::Instant::now();
        let burst = f64::from(self.rate.burst.max(1));
        let refill = now.duration_since(self.at).as_secs_f64() * f64::from(self.rate.per_s);
        self.tokens = (self.tokens + refill).min(burst);
        self.at = now;
        if self.flooding && self.tokens >= burst {
            self.flooding = false;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Admit::Yes;
        }
        self.refused += 1;
        let report = !self.flooding
            && self
                .reported
                .is_none_or(|t| now.duration_since(t) >= FLOOD_REPORT_EVERY);
        self.flooding = true;
        if report {
            self.reported = Some(now);
        }
        Admit::No(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn yes(b: &mut Bucket) -> bool {
        matches!(b.admit(), Admit::Yes)
    }

    #[tokio::test(start_paused = true)]
    async fn beyond_the_burst_is_refused_and_a_flood_reported_once() {
        let mut b = Bucket::new(BoardRate {
            per_s: 10,
            burst: 5,
        });
        for _ in 0..5 {
            assert!(yes(&mut b), "the burst");
        }
        assert!(
            matches!(b.admit(), Admit::No(true)),
            "the flood starts: reported"
        );
        for _ in 0..100 {
            assert!(matches!(b.admit(), Admit::No(false)), "the same flood");
        }
        tokio::time::advance(Duration::from_millis(100)).await;
        assert!(yes(&mut b), "one message a tenth of a second");
        assert!(
            matches!(b.admit(), Admit::No(false)),
            "still the same flood"
        );
        // Quiet long enough to refill: a new flood, within the minute: not reported.
        tokio::time::advance(Duration::from_secs(1)).await;
        for _ in 0..5 {
            assert!(yes(&mut b));
        }
        assert!(matches!(b.admit(), Admit::No(false)));
        // A minute after the report, a new flood is reported again.
        tokio::time::advance(Duration::from_secs(61)).await;
        for _ in 0..5 {
            assert!(yes(&mut b));
        }
        assert!(matches!(b.admit(), Admit::No(true)));
        assert_eq!(b.refused, 104);
    }
}
