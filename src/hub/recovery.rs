//! Recovery after a start: the unfinished games loaded again (their outage recorded),
//! the logs of the finished ones checked, and the mark that tells the next start how long
//! the service was alive.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::error::HubError;
use super::quarantine::{unfinished_log, verify_log};
use super::registry::{ALIVE_EVERY, Hub, WALL_STEP_MS};
use crate::store::{GameFilter, GameRecord, Stream};

/// How many games recovery loads at the same time: their reads overlap and their outage
/// events share the writer's group commits.
const RECOVERY_PARALLEL: usize = 8;

impl Hub {
    /// Loads every unfinished game ([`RECOVERY_PARALLEL`] at a time), records the outage
    /// since its last event (by default not charged to the side on move; charged if the
    /// server's or the game's settings say so) and starts its task. A game whose log does
    /// not replay is quarantined and the others go on. Returns how many games resumed.
    ///
    /// # Errors
    /// The store failing to list the games.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, HubError> {
        let records = self.store.unfinished_games().await?;
        Ok(self.resume(records).await)
    }

    /// Starts recovery without waiting for it, so the service can answer at once: lists
    /// the unfinished games, then loads them in the background as [`Hub::recover`] does
    /// (a request for one not loaded yet loads it first, under the same gate, so it is
    /// never loaded twice), then checks the log of every finished game on disk, one at a
    /// time, quarantining those that do not replay (they are listed from their summary
    /// row otherwise). The recovery metrics are set when the unfinished games are in.
    /// Returns how many unfinished games are to be loaded.
    ///
    /// # Errors
    /// The store failing to list the games.
    pub async fn recover_in_background(self: &Arc<Self>) -> Result<usize, HubError> {
        let started = std::time::Instant::now();
        let records = self.store.unfinished_games().await?;
        let n = records.len();
        let hub = self.clone();
        tokio::spawn(async move {
            let resumed = hub.resume(records).await;
            let took = started.elapsed();
            hub.metrics.recovered(took, resumed);
            tracing::info!(games = resumed, took = ?took, "recovered unfinished games");
            let verify = std::time::Instant::now();
            let (checked, bad) = hub.verify_stored().await;
            tracing::info!(
                games = checked,
                quarantined = bad,
                took = ?verify.elapsed(),
                "checked the logs of the finished games on disk"
            );
        });
        Ok(n)
    }

    /// Loads `records`' games, a few at a time; returns how many are running.
    pub(super) async fn resume(self: &Arc<Self>, records: Vec<GameRecord>) -> usize {
        let mut resumed = 0;
        let mut failed = false;
        let mut running = tokio::task::JoinSet::new();
        let mut records = records.into_iter();
        loop {
            while running.len() < RECOVERY_PARALLEL && !self.stopping() {
                let Some(record) = records.next() else { break };
                let hub = self.clone();
                running.spawn(async move {
                    let id = record.game_id.clone();
                    (hub.game_from(&id, Some(record)).await, id)
                });
            }
            let Some(done) = running.join_next().await else {
                break;
            };
            match done {
                Ok((Ok((_, true)), _)) => resumed += 1,
                Ok((Ok((_, false)), _) | (Err(HubError::Quarantined { .. }), _)) => {}
                Ok((Err(HubError::NotFound(_)), id)) => {
                    tracing::warn!(game = %id, "game without events skipped: its creation never completed");
                }
                Ok((Err(HubError::ShuttingDown), _)) => {}
                Ok((Err(e), id)) => {
                    failed = true;
                    tracing::error!(game = %id, error = %e, "recovery: game not loaded (a request loads it again)");
                }
                Err(e) => {
                    failed = true;
                    tracing::error!(error = %e, "recovery task failed");
                }
            }
        }
        // Every running game is served now: mark the service alive from here on. Not
        // when one could not be loaded: it is not served, and a mark would charge its
        // side on move for the time until it is (the marks of the previous run stand).
        if !failed && !self.stopping() {
            self.serving.store(true, Ordering::Release);
        }
        resumed
    }

    /// Checks the log of every finished game on disk that is neither in memory nor
    /// quarantined, one at a time; quarantines those that do not replay. Returns how
    /// many games were checked and how many of them were quarantined.
    pub async fn verify_stored(self: &Arc<Self>) -> (usize, usize) {
        let records = match self.store.list_games(&GameFilter::default()).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "finished games not checked");
                return (0, 0);
            }
        };
        let (mut checked, mut bad) = (0, 0);
        for record in records.into_iter().filter(|r| r.finished) {
            let id = &record.game_id;
            if self.stopping() {
                break;
            }
            if self.games().contains_key(id) || self.quarantine_of(id).is_some() {
                continue;
            }
            match self.store.load(Stream::Game(id), 1).await {
                Ok(rows) if rows.is_empty() => {}
                Ok(rows) => {
                    checked += 1;
                    let q = match verify_log(&rows) {
                        Err(q) => Some(q),
                        Ok((session, _)) => unfinished_log(record.finished, &session),
                    };
                    if let Some(q) = q {
                        self.quarantine(id, q);
                        bad += 1;
                    }
                }
                Err(e) if e.is_damaged() => {
                    checked += 1;
                    bad += 1;
                    self.unreadable(id, e);
                }
                Err(e) => tracing::warn!(game = %id, error = %e, "finished game not checked"),
            }
            tokio::task::yield_now().await;
        }
        (checked, bad)
    }
}

/// Marks the service alive in the store every [`ALIVE_EVERY`] until the hub stops (its
/// shutdown marks the last instant), and watches the wall clock against the timeline: a
/// step while serving changes no running clock (the timeline is monotonic), but it is
/// logged and counted, and the gauge says how far apart the two are.
pub(super) async fn keep_alive(hub: std::sync::Weak<Hub>) {
    let mut every = tokio::time::interval(ALIVE_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut offset: Option<i64> = None;
    loop {
        every.tick().await;
        let Some(hub) = hub.upgrade() else { return };
        if hub.stopping() {
            return;
        }
        let now = hub.timeline.wall_offset_ms(hub.clocks.as_ref());
        if let Some(before) = offset
            && now.abs_diff(before) > WALL_STEP_MS
        {
            hub.metrics.wall_clock_implausible();
            tracing::error!(
                step_ms = now - before,
                wall_offset_ms = now,
                "the wall clock stepped while serving: running clocks and event times go on \
                 by the monotonic timeline, which now differs from the wall clock by \
                 wall_offset_ms"
            );
        }
        offset = Some(now);
        hub.metrics.wall_clock_offset(now);
        if !hub.serving.load(Ordering::Acquire) {
            continue;
        }
        if let Err(e) = hub.store.mark_alive(&hub.alive_mark()).await {
            tracing::warn!(error = %e, "service alive mark not written");
        }
    }
}
