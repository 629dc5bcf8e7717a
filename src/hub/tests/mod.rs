//! The hub's tests: recovery and creation, watchers, memory (eviction, listings, limits).

use crate::game::{Actor, Command, GameSettings};
use crate::hub::*;
use crate::rules::Variant;
use crate::store::{MemoryStore, Stream};
use std::time::Duration;

/// A hub on a memory store of its own.
fn hub_with(config: HubConfig) -> Arc<Hub> {
    Hub::with_config(
        Arc::new(MemoryStore::new()),
        false,
        Arc::new(Metrics::new()),
        config,
    )
}

mod memory;
mod registry;
mod watch;
