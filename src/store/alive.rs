//! What the log keeps of the service's own life, so that a restart or a takeover can tell
//! how long a running game was not served: the alive mark (one process's store) and the
//! gap a lease shows (several nodes).

/// When the service last served a store's games (SQLite and memory stores): written every
/// second while it serves and once more when it stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliveMark {
    /// The instant on the server's timeline (ms), the clock every event is stamped on.
    pub at_ms: u64,
    /// The host's boot and its boot-time clock at the same instant, where the system tells
    /// them (Linux): a restart on the same boot measures its outage on that clock, whatever
    /// the wall clock did meanwhile.
    pub boot: Option<BootStamp>,
}

/// One reading of a host's boot-time clock (Linux `CLOCK_BOOTTIME`: it counts from the
/// boot, suspend included, and no one can set it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootStamp {
    /// The boot's id (`/proc/sys/kernel/random/boot_id`): a new one at every boot.
    pub id: String,
    /// Milliseconds since that boot.
    pub ms: u64,
}

impl BootStamp {
    /// How long passed from `earlier` to this reading, if both are of the same boot (and
    /// this one is not before it).
    #[must_use]
    pub fn since(&self, earlier: &BootStamp) -> Option<u64> {
        (self.id == earlier.id && self.ms >= earlier.ms).then(|| self.ms - earlier.ms)
    }
}

/// What a node learns of a game's previous owner as it takes the game's lease (the
/// PostgreSQL store), on the database's clock, so both spans are measured on one clock
/// whatever the nodes' own clocks say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseGap {
    /// From the game's last append to the owner's last sign of life after it (a lease
    /// renewal or a release): thinking time, while the game was served.
    pub alive_after_last_event_ms: u64,
    /// From that last sign of life to this acquisition: the game was served by no node.
    pub unserved_ms: u64,
}
