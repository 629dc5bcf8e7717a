//! The hub: the live games, one task per game that owns its judge.
//!
//! Callers (the gRPC services) reach a game through a [`GameHandle`]: a command goes to
//! the game's task over a bounded channel with a reply, and the task decides it, appends
//! its events durably, takes the new state and publishes the events to the watchers, in
//! that order and without the caller — so a cancelled request can never leave half a
//! commit behind, and nothing unacknowledged is ever applied or published. The task also
//! owns the game's clock deadline (a flag falls with nobody sending anything) and its
//! fan-out ([`Watch`]: a receiver of one broadcast channel per audience, the public one
//! fed after the broadcast delay; `Resync` for laggards, an end at the game's end and at
//! shutdown). See DESIGN.md §10.
//!
//! One place for each part: `registry.rs` the live games (the map, creation, eviction,
//! the shutdown token), `loading.rs` a game loaded from the store (its gate, its outage,
//! quarantine), `listing.rs` the listings, `task.rs` a game's task, `fanout.rs` its watchers'
//! channels, `handle.rs` the handle callers hold and the watch, `follow.rs` a game another
//! node serves, `recovery.rs` the games after a start, `nodes.rs` the store's leases and
//! hints, `tournaments.rs` the tournaments' logs, `metrics.rs` the process's metrics.

mod engine;
mod error;
mod fanout;
mod follow;
mod handle;
mod listing;
mod loading;
mod meta;
pub mod metrics;
mod nodes;
mod quarantine;
mod recovery;
mod registry;
mod slots;
mod task;
mod timeline;
mod tournaments;

use std::sync::Arc;

pub use crate::game::{GameMeta, PlayerInfo};
pub use engine::{EngineError, EngineProtocol, PairingEngine};
pub use error::HubError;
pub use error::WatcherLimit;
pub(crate) use error::{encode, summary_of};
pub use fanout::{Published, WatchEnd};
pub use handle::{Audience, GameHandle, Snapshot, Watch, WatchItem, WatchPermit};
pub use quarantine::{Quarantine, unfinished_log, verify_log};
pub use registry::{ALIVE_EVERY, Hub, HubConfig, Listed};
pub use task::Pending;
pub use timeline::{Clocks, Started, SystemClocks, Timeline};
pub use tournaments::{Tournaments, TournamentsError};

use crate::store::EventStore;
use metrics::Metrics;

/// The hub assembled: the registry and its loops (the nodes' watch of the store, the
/// alive mark), each a task holding a weak handle to it.
impl Hub {
    /// A hub over a store.
    pub fn new(store: Arc<dyn EventStore>, charge_outage: bool) -> Arc<Hub> {
        Self::with_metrics(store, charge_outage, Arc::new(Metrics::new()))
    }

    /// A hub over a store, counting into `metrics`.
    pub fn with_metrics(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
    ) -> Arc<Hub> {
        Self::with_config(store, charge_outage, metrics, HubConfig::default())
    }

    /// A hub with explicit sizes.
    pub fn with_config(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
        config: HubConfig,
    ) -> Arc<Hub> {
        Self::with_clocks(
            store,
            charge_outage,
            metrics,
            config,
            Arc::new(SystemClocks::default()),
        )
    }

    /// A hub with explicit sizes and clocks (tests step a fake wall clock).
    pub fn with_clocks(
        store: Arc<dyn EventStore>,
        charge_outage: bool,
        metrics: Arc<Metrics>,
        config: HubConfig,
        clocks: Arc<dyn Clocks>,
    ) -> Arc<Hub> {
        let shared = store.leases().map(|l| (l.lease_losses(), l.hints()));
        let hub = Hub::build(store, charge_outage, metrics, config, clocks);
        if let Some((losses, hints)) = shared {
            tokio::spawn(nodes::watch_store(
                Arc::downgrade(&hub),
                losses,
                Some(hints),
            ));
        }
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(recovery::keep_alive(Arc::downgrade(&hub)));
        }
        hub
    }
}

#[cfg(test)]
mod tests;
