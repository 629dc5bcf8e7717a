//! The service's alive marks: while it serves, the hub marks the time in the store every
//! [`ALIVE_EVERY`] (and once more when it stops), so that the next start counts a running
//! game's outage from when the service last served it, not from the game's last event.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Hub;

/// How often the hub marks the service alive in the store
/// ([`crate::store::EventStore::mark_alive`]): after a crash, at most this much of the time before it
/// counts as outage.
pub const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// Marks the service alive in the store every [`ALIVE_EVERY`] until the hub stops (its
/// shutdown marks the last instant).
pub(super) async fn keep_alive(hub: std::sync::Weak<Hub>) {
    let mut every = tokio::time::interval(ALIVE_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(hub) = hub.upgrade() else { return };
        if hub.stopping() {
            return;
        }
        if !hub.serving.load(Ordering::Acquire) {
            continue;
        }
        if let Err(e) = hub.store.mark_alive(hub.now().mono_ms).await {
            tracing::warn!(error = %e, "service alive mark not written");
        }
    }
}
