//! A game served by another node: this node follows its log, and takes it over when the
//! owner's lease runs out (PostgreSQL store, several nodes; see `store::postgres`).
//!
//! A game's task is either its **owner** (it decides commands, appends under the lease,
//! runs the clock's timer) or a **follower**: it reads the log's new rows by seq when the
//! store hints that the game grew (PostgreSQL `NOTIFY`, see [`crate::store::StoreHint`]),
//! applies them to its copy of the session and publishes them to its watchers exactly as
//! the owner does, so reads, watch streams, the PDN stream and the live page behave the
//! same on every node. A follower refuses commands with the owner's name and address
//! (UNAVAILABLE, the address in the `arbiter-owner-addr` metadata). A follower has no
//! timer of its own: hints can be lost, so every
//! [`HubConfig::takeover_every`](super::HubConfig::takeover_every), and just after the
//! first of their leases is due to end, the hub asks the store where all the games it
//! follows stand, in one statement
//! ([`EventStore::survey`](crate::store::EventStore::survey)), and tells each one: a game
//! whose log is longer than its copy reads the rest; a running game whose owner's lease
//! has run out (the owner died, or was cut off) is taken by the first node to try (the
//! database bumps the epoch, which fences the old owner), which reads the last rows, records
//! the handover gap as an outage (charged or not as after a restart) and re-arms the
//! clock from the recorded absolute times. The watchers stay on the same task: no gap,
//! no duplicate. An owner that loses its lease becomes a follower in the same way.

use std::sync::Arc;

use super::error::{HubError, decode};
use super::fanout::Published;
use super::task::{GameTask, Tenure};
use crate::game::{Decided, GameEvent, OutageMeasure, Session};
use crate::store::{LeaseGap, Standing, StoreError, Stream};

/// Where a running game goes on when this node starts serving it: from when it was last
/// served, to which instant of the game's timeline, measured how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Resume {
    /// The last instant the game was known served (`None`: its last event).
    pub down_since: Option<u64>,
    /// The instant the game resumes at, on its own timeline: its timeline is shifted so
    /// that it reads this when the facts were read.
    pub at_ms: u64,
    /// What measured the span between the two.
    pub measured: OutageMeasure,
}

/// Where a running game resumes, from the best facts there are:
/// - `gap`, the lease's (PostgreSQL): the previous owner was alive a known span after
///   the last event (thinking time, charged) and the game was served by no one for a
///   known span since, both on the database's clock, so the game resumes at its last
///   event plus both, whatever this node's clock says;
/// - otherwise `mark`, the previous run's alive mark on this store with what measured
///   the time since (the hub's timeline goes on from it): the game resumes now;
/// - otherwise from its last event, now.
///
/// `now_ms` is the hub's unshifted timeline when the facts were read.
pub(super) fn resume_point(
    session: &Session,
    gap: Option<LeaseGap>,
    mark: Option<(u64, OutageMeasure)>,
    now_ms: u64,
) -> Resume {
    let last = session.last_ms();
    if let Some(gap) = gap {
        let since = last.saturating_add(gap.alive_after_last_event_ms);
        return Resume {
            down_since: Some(since),
            at_ms: since.saturating_add(gap.unserved_ms),
            measured: OutageMeasure::DatabaseClock,
        };
    }
    let (down_since, measured) = match mark {
        Some((at, measured)) => (Some(at), measured),
        None => (None, OutageMeasure::LastEvent),
    };
    Resume {
        down_since,
        at_ms: now_ms.max(last),
        measured,
    }
}

/// The outage of a running game (the time no node served it: from `resume.down_since`,
/// when the service last served it, or its last event if that is later or unknown, to
/// `now`), recorded as the judge decides it: charged to the side on move if `charged`.
/// Returns the decision, if there was any outage to record; nothing is appended here.
pub(super) fn outage_of(
    session: &Session,
    now: crate::game::Now,
    resume: &Resume,
    charged: bool,
) -> Option<Decided> {
    session.outage(
        now,
        resume.down_since,
        charged || session.settings().charge_outage,
        resume.measured,
    )
}

impl GameTask {
    /// The error a follower answers commands with.
    pub(super) fn not_owner(&self) -> HubError {
        HubError::Store(StoreError::Fenced {
            game_id: self.meta.id.clone(),
            owner: self.tenure.elsewhere.clone(),
        })
    }

    /// A hint that the game grew: read the new rows now.
    pub(super) async fn follow(&mut self) {
        if let Err(e) = self.catch_up().await {
            tracing::warn!(game = %self.meta.id, error = %e, "following: log not read");
        }
    }

    /// The hub's survey says where the game stands: read the rows this copy lacks, and
    /// try to take a running game whose lease ran out (another node may be quicker: the
    /// database decides).
    pub(super) async fn surveyed(&mut self, standing: Standing) {
        if standing.owner.is_some() {
            self.tenure.elsewhere = standing.owner;
        }
        if standing.last_seq > self.session.last_seq()
            && let Err(e) = self.catch_up().await
        {
            tracing::warn!(game = %self.meta.id, error = %e, "following: log not read");
            return;
        }
        if !standing.free || self.session.result().is_some() {
            return;
        }
        match self.store.acquire(&self.meta.id).await {
            Ok(gap) => {
                let acquired_ms = self.timeline.now_unshifted();
                self.take_over(gap, acquired_ms).await;
            }
            Err(StoreError::Fenced { owner, .. }) => self.tenure.elsewhere = owner,
            Err(e) => tracing::warn!(game = %self.meta.id, error = %e, "takeover not tried"),
        }
    }

    /// Applies the log's rows after the session's last seq and publishes them.
    async fn catch_up(&mut self) -> Result<(), HubError> {
        let id = &self.meta.id;
        let rows = self
            .store
            .load(Stream::Game(id), self.session.last_seq() + 1)
            .await?;
        if rows.is_empty() {
            return Ok(());
        }
        let events: Vec<GameEvent> = decode(id, &rows)?;
        // Noted as the owner noted them: a move pressed with its command carries the
        // clocks after its press (a command's rows are appended, so read, together).
        let notes = self
            .session
            .apply_all_noted(&events)
            .map_err(|e| HubError::Corrupt(format!("{id}: seq {}: {}", e.seq, e.message)))?;
        let variant = self.session.variant();
        let published: Vec<Arc<Published>> = events
            .into_iter()
            .zip(notes)
            .map(|(event, note)| Arc::new(Published::new(event, note, variant)))
            .collect();
        self.hold_back(&published);
        let finished = self.session.result().is_some();
        self.publish(&published, finished);
        Ok(())
    }

    /// This node now holds the lease (`gap`: what it showed of the last owner, read at the
    /// hub's instant `acquired_ms`): read what the last owner wrote, record the gap, and
    /// serve.
    async fn take_over(&mut self, gap: Option<LeaseGap>, acquired_ms: u64) {
        let started = std::time::Instant::now();
        if let Err(e) = self.catch_up().await {
            // Without the last rows this node must not decide anything: give it back.
            tracing::error!(game = %self.meta.id, error = %e, "takeover: log not read");
            let _ = self.store.release(&self.meta.id).await;
            return;
        }
        self.tenure = Tenure::owner();
        self.retry_at = None;
        // The game goes on from the instant the database's clock says: thinking time up
        // to the last owner's last sign of life, the outage after it, whatever this
        // node's clock says against the last owner's.
        let resume = resume_point(&self.session, gap, None, acquired_ms);
        self.timeline.shift_at(resume.at_ms, acquired_ms);
        let now = self.now();
        if let Some(decided) = outage_of(&self.session, now, &resume, self.charge_outage)
            && let Err(e) = self.commit(decided).await
        {
            tracing::warn!(game = %self.meta.id, error = %e, "takeover: outage not recorded");
        }
        self.metrics.takeover(started.elapsed());
        tracing::info!(game = %self.meta.id, seq = self.session.last_seq(), "took the game over");
    }

    /// This node no longer holds the lease: follow the game from now on.
    pub(super) fn step_down(&mut self, elsewhere: Option<(String, String)>) {
        if self.tenure.owner {
            tracing::warn!(game = %self.meta.id, "lease lost: following the game");
            if self.session.result().is_none() {
                // No longer active here: it counts on the node that serves it.
                self.metrics.game_finished();
            }
        }
        self.tenure = Tenure::follower(elsewhere);
        self.retry_at = None;
    }

    /// After every wake: an owner whose lease lapsed steps down.
    pub(super) fn check_lease(&mut self) {
        if self.tenure.owner && !self.store.holds(&self.meta.id) {
            self.step_down(None);
        }
    }
}
