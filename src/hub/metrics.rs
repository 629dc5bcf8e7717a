//! Prometheus metrics: one [`Metrics`] handle shared by the hub, the store writer, the
//! watch and board streams and the RPC edge (the `/metrics` HTTP listener that renders
//! it is the server's, `server::probes`).
//!
//! Every hook on a request path is an atomic add: counters and gauges are
//! `prometheus-client`'s (atomics), the per-variant and per-code counters are created up
//! front so no label map is locked while serving, and the latency histograms are
//! [`LatencyHistogram`], a fixed-bucket histogram of atomics (`prometheus-client`'s own
//! histogram takes a mutex per observation).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::game::BoardHealth;
use crate::rules::Variant;
use crate::store::CommitObserver;

/// The content type of the OpenMetrics text format `prometheus-client` writes; Prometheus
/// asks for it and parses it.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Bucket upper bounds (seconds) of the fsync histogram: 50 µs to 1 s.
const FSYNC_BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// Bucket upper bounds (seconds) of the ack latency histogram: 100 µs to 5 s.
const ACK_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// A latency histogram with fixed buckets, lock-free: an observation is two atomic adds
/// (its bucket and the sum in nanoseconds). The count is the sum of the buckets, so a
/// scrape always sees buckets and count that agree.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    inner: Arc<HistogramInner>,
}

#[derive(Debug)]
struct HistogramInner {
    /// Upper bounds in seconds, ascending.
    bounds: &'static [f64],
    /// One per bound plus the `+Inf` bucket; not cumulative.
    counts: Box<[AtomicU64]>,
    sum_nanos: AtomicU64,
}

impl LatencyHistogram {
    /// A histogram over `bounds` (seconds, ascending).
    #[must_use]
    pub fn new(bounds: &'static [f64]) -> LatencyHistogram {
        LatencyHistogram {
            inner: Arc::new(HistogramInner {
                bounds,
                counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
                sum_nanos: AtomicU64::new(0),
            }),
        }
    }

    /// Records one duration.
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let bucket = self.inner.bounds.partition_point(|b| *b < secs);
        self.inner.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.inner.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// How many durations were recorded.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.inner
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }

    /// Sum of the recorded durations.
    #[must_use]
    pub fn sum(&self) -> Duration {
        Duration::from_nanos(self.inner.sum_nanos.load(Ordering::Relaxed))
    }
}

impl EncodeMetric for LatencyHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        // prometheus-client takes per-bucket counts and accumulates them itself; f64::MAX
        // is its marker for the +Inf bucket.
        let buckets: Vec<(f64, u64)> = self
            .inner
            .bounds
            .iter()
            .copied()
            .chain([f64::MAX])
            .zip(self.inner.counts.iter().map(|c| c.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        encoder.encode_histogram::<NoLabelSet>(self.sum().as_secs_f64(), count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// Events recorded but not yet public (a game's broadcast delay holds them back): the
/// instant each batch becomes public and its size. Counted when scraped, so the gauge is
/// exact without a timer: what has become public by then is dropped first.
#[derive(Debug, Clone, Default)]
pub struct DelayedEvents {
    due: Arc<std::sync::Mutex<std::collections::BTreeMap<tokio::time::Instant, u64>>>,
}

impl DelayedEvents {
    fn add(&self, at: tokio::time::Instant, n: u64) {
        let mut due = self.due.lock().unwrap_or_else(|p| p.into_inner());
        *due.entry(at).or_default() += n;
    }

    /// How many are still held back now.
    #[must_use]
    pub fn depth(&self) -> u64 {
        // Due at or before now: public.
        let after = tokio::time::Instant::now() + Duration::from_nanos(1);
        let mut due = self.due.lock().unwrap_or_else(|p| p.into_inner());
        let later = due.split_off(&after);
        *due = later;
        due.values().sum()
    }
}

impl EncodeMetric for DelayedEvents {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&(i64::try_from(self.depth()).unwrap_or(i64::MAX)))
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }
}

/// What a watcher follows, the `kind` label of the watcher metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchKind {
    /// `WatchGame`: one game.
    Game,
    /// `WatchEvent` (gRPC or grpc-web): a round or event.
    Event,
    /// `GET /pdn/<event>/<round>/stream`.
    PdnStream,
}

impl WatchKind {
    const ALL: [WatchKind; 3] = [WatchKind::Game, WatchKind::Event, WatchKind::PdnStream];

    fn label(self) -> &'static str {
        match self {
            WatchKind::Game => "game",
            WatchKind::Event => "event",
            WatchKind::PdnStream => "pdn_stream",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// gRPC status codes 1..=16 by name (0, OK, is not a refusal).
const CODES: [&str; 16] = [
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

type Labels = Vec<(&'static str, &'static str)>;

/// The service's metrics. Cheap to share (`Arc`); every method is a few atomic adds.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    moves: Vec<(Variant, Counter)>,
    rejected: Vec<Counter>,
    events_appended: Counter,
    acks: Counter,
    ack_latency: LatencyHistogram,
    fsync: LatencyHistogram,
    commits: Counter,
    active_games: Gauge,
    /// By [`WatchKind`], in its order.
    watchers: Vec<Gauge>,
    /// Watch streams ended, every kind.
    watchers_ended: Counter,
    /// Times freed memory was given back to the system (`server::memory`).
    memory_trims: Counter,
    deliveries: Vec<Counter>,
    resyncs: Counter,
    round_feeds: Gauge,
    takeovers: Counter,
    takeover_seconds: Gauge<f64, AtomicU64>,
    forwarded: Counter,
    forwards_unanswered: Counter,
    delayed: DelayedEvents,
    boards: Gauge,
    /// Bound boards by health: active, not responding.
    board_health: [Gauge; 2],
    /// Recorded health changes: active, not responding, disconnected.
    board_health_changes: [Counter; 3],
    recovery_seconds: Gauge<f64, AtomicU64>,
    recovered_games: Gauge,
    quarantined_games: Gauge,
    wall_clock_offset: Gauge,
    wall_clock_steps: Counter,
    ready: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric registered, at zero.
    #[must_use]
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("arbiter");

        let moves_family = Family::<Labels, Counter>::default();
        let moves = Variant::ALL
            .iter()
            .map(|v| {
                let c = moves_family
                    .get_or_create(&vec![("variant", v.name())])
                    .clone();
                (*v, c)
            })
            .collect();
        registry.register(
            "moves_accepted",
            "Moves accepted and durably recorded, by variant",
            moves_family,
        );

        let rejected_family = Family::<Labels, Counter>::default();
        let rejected = CODES
            .iter()
            .map(|code| {
                rejected_family
                    .get_or_create(&vec![("code", *code)])
                    .clone()
            })
            .collect();
        registry.register(
            "requests_rejected",
            "RPCs answered with an error status before any message, by gRPC status code",
            rejected_family,
        );

        let events_appended = Counter::default();
        registry.register(
            "events_appended",
            "Game events durably appended to the event log (commands, clock flags, recovery)",
            events_appended.clone(),
        );
        let acks = Counter::default();
        registry.register(
            "commands_acknowledged",
            "Commands acknowledged to their caller after their events were durable",
            acks.clone(),
        );
        let ack_latency = LatencyHistogram::new(ACK_BUCKETS);
        registry.register(
            "ack_latency_seconds",
            "Time from a command's receipt by the registry to its durable acknowledgement",
            ack_latency.clone(),
        );
        let fsync = LatencyHistogram::new(FSYNC_BUCKETS);
        registry.register(
            "store_commit_seconds",
            "Duration of one SQLite group commit (COMMIT with synchronous=FULL: the fsync)",
            fsync.clone(),
        );
        let commits = Counter::default();
        registry.register(
            "store_commits",
            "SQLite group commits (transactions) by the writer",
            commits.clone(),
        );
        let active_games = Gauge::default();
        registry.register(
            "active_games",
            "Unfinished games held in memory",
            active_games.clone(),
        );
        let watchers_family = Family::<Labels, Gauge>::default();
        let deliveries_family = Family::<Labels, Counter>::default();
        let (watchers, deliveries) = WatchKind::ALL
            .iter()
            .map(|k| {
                let label = vec![("kind", k.label())];
                (
                    watchers_family.get_or_create(&label).clone(),
                    deliveries_family.get_or_create(&label).clone(),
                )
            })
            .unzip();
        registry.register(
            "watchers",
            "Open watch streams by kind: game (WatchGame), event (WatchEvent, gRPC or grpc-web), \
             pdn_stream (GET /pdn/<event>/<round>/stream)",
            watchers_family,
        );
        let watchers_ended = Counter::default();
        registry.register(
            "watch_streams_ended",
            "Watch streams ended, every kind (a crowd of them ending is when the server gives \
             back the memory they used)",
            watchers_ended.clone(),
        );
        let memory_trims = Counter::default();
        registry.register(
            "memory_trims",
            "Times the memory freed by a crowd of watch streams was given back to the system \
             (glibc's malloc_trim; Linux with glibc only)",
            memory_trims.clone(),
        );
        registry.register(
            "watch_deliveries",
            "Messages sent to watchers by kind (events and resyncs; PDN texts on a pdn_stream)",
            deliveries_family,
        );
        let resyncs = Counter::default();
        registry.register(
            "watch_resyncs",
            "Resync messages sent to watchers that fell behind (further than their channel holds)",
            resyncs.clone(),
        );
        let round_feeds = Gauge::default();
        registry.register(
            "round_feeds",
            "Round feeds running: one per round (or whole event) and audience (live, public) \
             with WatchEvent or PDN streams on it, each following the round's games once",
            round_feeds.clone(),
        );
        let takeovers = Counter::default();
        registry.register(
            "game_takeovers",
            "Games this node took over from another whose lease ran out (several nodes on \
             PostgreSQL)",
            takeovers.clone(),
        );
        let takeover_seconds = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "last_takeover_seconds",
            "How long the last takeover took on this node, from the lease to serving",
            takeover_seconds.clone(),
        );
        let forwarded = Counter::default();
        registry.register(
            "forwarded_commands",
            "Commands this node did not own the game of, forwarded to the owner and \
             answered with its reply (several nodes on PostgreSQL)",
            forwarded.clone(),
        );
        let forwards_unanswered = Counter::default();
        registry.register(
            "forwards_unanswered",
            "Commands forwarded to an owner that gave no answer in time (dead or paused): \
             the caller got the refusal naming it",
            forwards_unanswered.clone(),
        );
        let delayed = DelayedEvents::default();
        registry.register(
            "delayed_events",
            "Events recorded but held back from the public by their game's broadcast delay",
            delayed.clone(),
        );
        let boards = Gauge::default();
        registry.register(
            "boards_connected",
            "Open electronic-board streams (BoardService.Connect)",
            boards.clone(),
        );
        let health_family = Family::<Labels, Gauge>::default();
        let board_health = ["active", "not_responding"]
            .map(|h| health_family.get_or_create(&vec![("health", h)]).clone());
        registry.register(
            "boards_bound",
            "Board streams bound to a running game, by health: active, not_responding (silent \
             for board_silence_s while the clock runs)",
            health_family,
        );
        let changes_family = Family::<Labels, Counter>::default();
        let board_health_changes = ["active", "not_responding", "disconnected"]
            .map(|h| changes_family.get_or_create(&vec![("health", h)]).clone());
        registry.register(
            "board_health_changes",
            "Board health changes recorded in games (BoardHealthChanged), by the new health",
            changes_family,
        );
        let recovery_seconds = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "recovery_duration_seconds",
            "How long the start-up recovery of unfinished games took (in the background, from the start of \
             recovery to the last unfinished game loaded; 0 until then)",
            recovery_seconds.clone(),
        );
        let recovered_games = Gauge::default();
        registry.register(
            "recovered_games",
            "Unfinished games recovered at start-up",
            recovered_games.clone(),
        );
        let quarantined_games = Gauge::default();
        registry.register(
            "quarantined_games",
            "Games set aside because their event log does not replay (each named in the log \
             with its bad seq; shown to arbiters in ListGames)",
            quarantined_games.clone(),
        );
        let wall_clock_offset = Gauge::default();
        registry.register(
            "wall_clock_offset_ms",
            "The host's wall clock minus the service's timeline (the clock events are stamped \
             on, which runs at the rate of a monotonic clock and never goes back), in ms, \
             updated every second: near 0 unless the wall clock stepped",
            wall_clock_offset.clone(),
        );
        let wall_clock_steps = Counter::default();
        registry.register(
            "wall_clock_steps",
            "Times the wall clock was found implausible: behind the store's alive mark at \
             start, or moved by more than a second against the timeline (each logged as an \
             error); running clocks never follow it",
            wall_clock_steps.clone(),
        );
        Metrics {
            registry,
            moves,
            rejected,
            events_appended,
            acks,
            ack_latency,
            fsync,
            commits,
            active_games,
            watchers,
            watchers_ended,
            memory_trims,
            deliveries,
            resyncs,
            round_feeds,
            takeovers,
            takeover_seconds,
            forwarded,
            forwards_unanswered,
            delayed,
            boards,
            board_health,
            board_health_changes,
            recovery_seconds,
            recovered_games,
            quarantined_games,
            wall_clock_offset,
            wall_clock_steps,
            ready: AtomicBool::new(false),
        }
    }

    /// Whether `/readyz` says ready: set with the gRPC health service's SERVING (once
    /// recovery has begun), cleared when shutdown begins.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// See [`Metrics::set_ready`].
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// A move of `variant` was recorded.
    pub fn move_accepted(&self, variant: Variant) {
        if let Some((_, c)) = self.moves.iter().find(|(v, _)| *v == variant) {
            c.inc();
        }
    }

    /// An RPC was refused with gRPC status `code` (1..=16; others are ignored).
    pub fn rejected(&self, code: i32) {
        if let Some(c) = usize::try_from(code)
            .ok()
            .and_then(|c| c.checked_sub(1))
            .and_then(|i| self.rejected.get(i))
        {
            c.inc();
        }
    }

    /// `n` events were durably appended.
    pub fn events_appended(&self, n: usize) {
        self.events_appended.inc_by(n as u64);
    }

    /// A command was acknowledged `latency` after its receipt.
    pub fn acknowledged(&self, latency: Duration) {
        self.acks.inc();
        self.ack_latency.observe(latency);
    }

    /// A game became active (loaded unfinished, or created).
    pub fn game_started(&self) {
        self.active_games.inc();
    }

    /// An active game finished.
    pub fn game_finished(&self) {
        self.active_games.dec();
    }

    /// A watch stream of `kind` opened; the guard closes it when dropped.
    #[must_use]
    pub fn watcher(self: &Arc<Self>, kind: WatchKind) -> GaugeGuard {
        let mut guard = GaugeGuard::new(self.watchers[kind.index()].clone());
        guard.ended = Some(self.watchers_ended.clone());
        guard
    }

    /// How many watch streams have ended since the server started, every kind.
    #[must_use]
    pub fn watchers_ended(&self) -> u64 {
        self.watchers_ended.get()
    }

    /// Freed memory was given back to the system.
    pub fn memory_trimmed(&self) {
        self.memory_trims.inc();
    }

    /// A round feed started; the guard counts it stopped when dropped.
    #[must_use]
    pub fn round_feed(self: &Arc<Self>) -> GaugeGuard {
        GaugeGuard::new(self.round_feeds.clone())
    }

    /// A message went to a watcher of `kind`.
    pub fn delivered(&self, kind: WatchKind) {
        self.deliveries[kind.index()].inc();
    }

    /// This node took a game over (it holds the lease and serves it) in `took`.
    pub fn takeover(&self, took: std::time::Duration) {
        self.takeovers.inc();
        self.takeover_seconds.set(took.as_secs_f64());
        self.game_started();
    }

    /// A command was forwarded to its game's owner, which `answered` in time or not.
    pub fn forwarded(&self, answered: bool) {
        if answered {
            self.forwarded.inc();
        } else {
            self.forwards_unanswered.inc();
        }
    }

    /// A watcher got a `Resync`.
    pub fn resynced(&self) {
        self.resyncs.inc();
    }

    /// `n` events of a game become public at `at` (its broadcast delay after they were
    /// recorded).
    pub fn delayed(&self, at: tokio::time::Instant, n: usize) {
        if n > 0 {
            self.delayed.add(at, n as u64);
        }
    }

    /// Events held back from the public now.
    #[must_use]
    pub fn delayed_depth(&self) -> u64 {
        self.delayed.depth()
    }

    /// A board stream opened; the guard closes it when dropped.
    #[must_use]
    pub fn board(self: &Arc<Self>) -> GaugeGuard {
        GaugeGuard::new(self.boards.clone())
    }

    /// A bound board is in `health` (active or not responding) until the guard drops;
    /// `None` for a disconnected one.
    #[must_use]
    pub fn board_health(self: &Arc<Self>, health: BoardHealth) -> Option<GaugeGuard> {
        match health {
            BoardHealth::Active => Some(GaugeGuard::new(self.board_health[0].clone())),
            BoardHealth::NotResponding => Some(GaugeGuard::new(self.board_health[1].clone())),
            BoardHealth::Disconnected => None,
        }
    }

    /// A game recorded a board health change to `health`.
    pub fn board_health_changed(&self, health: BoardHealth) {
        let i = match health {
            BoardHealth::Active => 0,
            BoardHealth::NotResponding => 1,
            BoardHealth::Disconnected => 2,
        };
        self.board_health_changes[i].inc();
    }

    /// Start-up recovery took `took` and brought back `games` games.
    pub fn recovered(&self, took: Duration, games: usize) {
        self.recovery_seconds.set(took.as_secs_f64());
        self.recovered_games
            .set(i64::try_from(games).unwrap_or(i64::MAX));
    }

    /// The wall clock minus the service's timeline is `ms` now.
    pub fn wall_clock_offset(&self, ms: i64) {
        self.wall_clock_offset.set(ms);
    }

    /// The wall clock was found implausible once more (see `wall_clock_steps`).
    pub fn wall_clock_implausible(&self) {
        self.wall_clock_steps.inc();
    }

    /// How many times the wall clock was found implausible.
    #[must_use]
    pub fn wall_clock_steps(&self) -> u64 {
        self.wall_clock_steps.get()
    }

    /// `games` games are quarantined.
    pub fn set_quarantined(&self, games: usize) {
        self.quarantined_games
            .set(i64::try_from(games).unwrap_or(i64::MAX));
    }

    /// The fsync (commit) histogram.
    #[must_use]
    pub fn commit_latency(&self) -> &LatencyHistogram {
        &self.fsync
    }

    /// The ack latency histogram.
    #[must_use]
    pub fn ack_latency(&self) -> &LatencyHistogram {
        &self.ack_latency
    }

    /// Everything in the OpenMetrics text format.
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail; an encoding error would be a bug in a metric's
        // encoder, and a scrape should then show what was written so far.
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!(error = %e, "metrics encoding failed");
        }
        out
    }
}

impl CommitObserver for Metrics {
    fn committed(&self, took: Duration) {
        self.commits.inc();
        self.fsync.observe(took);
    }
}

/// Increments a gauge now and decrements it when dropped (the end of a stream), counting
/// the end in `ended` if set.
#[derive(Debug)]
pub struct GaugeGuard {
    gauge: Gauge,
    ended: Option<Counter>,
}

impl GaugeGuard {
    fn new(gauge: Gauge) -> GaugeGuard {
        gauge.inc();
        GaugeGuard { gauge, ended: None }
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.gauge.dec();
        if let Some(ended) = &self.ended {
            ended.inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The histogram's buckets and count agree, the +Inf bucket catches the rest, and the
    /// sum is exact (Prometheus histogram semantics: `le` is an inclusive upper bound).
    #[test]
    fn histogram_buckets_are_inclusive_upper_bounds() {
        let h = LatencyHistogram::new(&[0.001, 0.01]);
        h.observe(Duration::from_micros(1000)); // exactly 1 ms: le="0.001"
        h.observe(Duration::from_millis(5));
        h.observe(Duration::from_secs(3)); // +Inf
        assert_eq!(h.count(), 3);
        assert_eq!(h.sum(), Duration::from_micros(3_006_000));
        let counts: Vec<u64> = h
            .inner
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, vec![1, 1, 1]);
    }

    #[test]
    fn render_names_every_metric_with_help() {
        let m = Arc::new(Metrics::new());
        m.move_accepted(Variant::International);
        m.rejected(3);
        m.rejected(0); // OK is not a refusal
        m.rejected(99); // not a gRPC code
        m.acknowledged(Duration::from_millis(2));
        m.committed(Duration::from_micros(300));
        let w = m.watcher(WatchKind::Event);
        m.delivered(WatchKind::Event);
        m.resynced();
        let text = m.render();
        for line in [
            "arbiter_moves_accepted_total{variant=\"international\"} 1",
            "arbiter_moves_accepted_total{variant=\"russian\"} 0",
            "arbiter_requests_rejected_total{code=\"INVALID_ARGUMENT\"} 1",
            "arbiter_commands_acknowledged_total 1",
            "arbiter_ack_latency_seconds_count 1",
            "arbiter_ack_latency_seconds_bucket{le=\"0.0025\"} 1",
            "arbiter_ack_latency_seconds_bucket{le=\"0.001\"} 0",
            "arbiter_ack_latency_seconds_bucket{le=\"+Inf\"} 1",
            "arbiter_store_commit_seconds_count 1",
            "arbiter_store_commits_total 1",
            "arbiter_watchers{kind=\"event\"} 1",
            "arbiter_watchers{kind=\"game\"} 0",
            "arbiter_watchers{kind=\"pdn_stream\"} 0",
            "arbiter_watch_deliveries_total{kind=\"event\"} 1",
            "arbiter_watch_resyncs_total 1",
            "arbiter_delayed_events 0",
            "# HELP arbiter_active_games Unfinished games held in memory.",
            "# TYPE arbiter_store_commit_seconds histogram",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert_eq!(
            text.matches("arbiter_requests_rejected_total{").count(),
            16,
            "one series per non-OK code, created up front"
        );
        drop(w);
        let text = m.render();
        assert!(text.contains("arbiter_watchers{kind=\"event\"} 0"));
        assert!(
            text.contains("arbiter_watch_streams_ended_total 1"),
            "{text}"
        );
        assert_eq!(m.watchers_ended(), 1);
        m.memory_trimmed();
        assert!(m.render().contains("arbiter_memory_trims_total 1"));
    }

    /// The delayed gauge counts what is still held back when scraped.
    #[tokio::test(start_paused = true)]
    async fn delayed_events_leave_the_gauge_when_they_become_public() {
        let m = Metrics::new();
        let now = tokio::time::Instant::now();
        m.delayed(now + Duration::from_secs(60), 2);
        m.delayed(now + Duration::from_secs(30), 1);
        m.delayed(now, 0);
        assert!(m.render().contains("arbiter_delayed_events 3"));
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(m.delayed_depth(), 2);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(m.render().contains("arbiter_delayed_events 0"));
    }
}
