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

use tokio::time::Instant;

use super::error::{HubError, decode};
use super::queue::Published;
use super::task::{GameTask, Tenure};
use crate::game::{Decided, GameEvent, Session};
use crate::store::{Standing, StoreError};

/// The outage of a running game (the time no node served it: from `down_since`, when
/// the service last served it, or its last event if that is later or unknown), recorded
/// as the judge decides it: charged to the side on move if `charged`. Returns the
/// decision, if there was any outage to record; nothing is appended here.
pub(super) fn outage_of(
    session: &Session,
    now: crate::game::Now,
    down_since: Option<u64>,
    charged: bool,
) -> Option<Decided> {
    session.outage(now, down_since, charged || session.settings().charge_outage)
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
            Ok(()) => self.take_over().await,
            Err(StoreError::Fenced { owner, .. }) => self.tenure.elsewhere = owner,
            Err(e) => tracing::warn!(game = %self.meta.id, error = %e, "takeover not tried"),
        }
    }

    /// Applies the log's rows after the session's last seq and publishes them.
    async fn catch_up(&mut self) -> Result<(), HubError> {
        let id = &self.meta.id;
        let rows = self.store.load(id, self.session.last_seq() + 1).await?;
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
        let published: Vec<Arc<Published>> = events
            .into_iter()
            .zip(notes)
            .map(|(event, note)| Arc::new(Published::new(event, note)))
            .collect();
        if let Some(p) = self.public.as_mut() {
            p.pending
                .extend(published.iter().map(|p: &Arc<Published>| p.event.clone()));
            self.metrics.delayed(
                Instant::now() + std::time::Duration::from_millis(p.delay_ms),
                published.len(),
            );
        }
        let finished = self.session.result().is_some();
        self.publish(&published, finished);
        Ok(())
    }

    /// This node now holds the lease: read what the last owner wrote, record the gap,
    /// and serve.
    async fn take_over(&mut self) {
        let started = std::time::Instant::now();
        if let Err(e) = self.catch_up().await {
            // Without the last rows this node must not decide anything: give it back.
            tracing::error!(game = %self.meta.id, error = %e, "takeover: log not read");
            let _ = self.store.release(&self.meta.id).await;
            return;
        }
        self.tenure = Tenure::owner();
        self.retry_at = None;
        let now = self.now();
        if let Some(decided) = outage_of(&self.session, now, None, self.charge_outage)
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
