//! An exhaustive model of the lease-and-fence protocol of the PostgreSQL store
//! (`src/store/postgres`): every interleaving of two nodes acquiring, renewing, appending
//! and forgetting, with time passing, up to a bound. The database's side of each step is
//! the condition of the store's SQL statement, written out here:
//!
//! - acquire: `owner IS NULL OR owner = me OR lease_until <= now()` → epoch + 1, owner me;
//! - renew: `owner = me AND epoch = mine` → `lease_until = now() + lease`;
//! - append: `owner = me AND epoch = mine AND lease_until > now() AND last_seq = expected`.
//!
//! A node's append is two steps with no local check of its lease: it sends the statement
//! under the epoch it believes it holds, and the statement reaches the database at any
//! later step (the worst case: a node paused, or a packet delayed, between the two for as
//! long as you like, while leases expire and change hands, its own included). The
//! property: the log never forks — each epoch is written by one node only and epochs in
//! the log never go back, so once another tenure has written, an older one never writes
//! again. The same search over a protocol without the epoch condition finds a fork, so
//! the check can fail.

use std::collections::HashSet;

const NODES: usize = 2;
const LEASE: u8 = 2;
const END_OF_TIME: u8 = 7;
const MAX_LOG: usize = 4;
const MAX_EPOCH: u8 = 5;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct State {
    now: u8,
    owner: Option<usize>,
    epoch: u8,
    lease_until: u8,
    /// (node, epoch it held) of each append, in seq order.
    log: Vec<(usize, u8)>,
    /// The epoch each node believes it holds.
    local: [Option<u8>; NODES],
    /// Each node's append on its way to the database, under the epoch it was sent with.
    in_flight: [Option<u8>; NODES],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fence {
    /// The store's: owner, epoch and lease time.
    Epoch,
    /// A protocol that only checks the owner's name and the lease time.
    OwnerAndTime,
}

fn successors(s: &State, fence: Fence) -> Vec<State> {
    let mut next = Vec::new();
    if s.now < END_OF_TIME {
        let mut t = s.clone();
        t.now += 1;
        next.push(t);
    }
    for n in 0..NODES {
        // acquire
        if s.epoch < MAX_EPOCH
            && (s.owner.is_none() || s.owner == Some(n) || s.lease_until <= s.now)
        {
            let mut t = s.clone();
            t.epoch += 1;
            t.owner = Some(n);
            t.lease_until = s.now + LEASE;
            t.local[n] = Some(t.epoch);
            next.push(t);
        }
        if let Some(mine) = s.local[n] {
            // renew
            let mut t = s.clone();
            if s.owner == Some(n) && s.epoch == mine {
                t.lease_until = s.now + LEASE;
            } else {
                t.local[n] = None;
            }
            next.push(t);
            // send an append, with no local check of the lease
            if s.in_flight[n].is_none() && s.log.len() < MAX_LOG {
                let mut t = s.clone();
                t.in_flight[n] = Some(mine);
                next.push(t);
            }
            // the node forgets its lease (it restarts, or learns it lost it)
            let mut t = s.clone();
            t.local[n] = None;
            next.push(t);
        }
        // the append reaches the database, whatever happened meanwhile
        if let Some(sent) = s.in_flight[n] {
            let allowed = match fence {
                Fence::Epoch => s.owner == Some(n) && s.epoch == sent && s.lease_until > s.now,
                Fence::OwnerAndTime => s.owner == Some(n) && s.lease_until > s.now,
            };
            let mut t = s.clone();
            t.in_flight[n] = None;
            if allowed {
                t.log.push((n, sent));
            } else if t.local[n] == Some(sent) {
                t.local[n] = None;
            }
            next.push(t);
        }
    }
    next
}

/// The first state whose log forks, if any, and how many states were searched.
fn search(fence: Fence) -> (Option<State>, usize) {
    let start = State {
        now: 0,
        owner: None,
        epoch: 0,
        lease_until: 0,
        log: Vec::new(),
        local: [None; NODES],
        in_flight: [None; NODES],
    };
    let mut seen = HashSet::new();
    let mut stack = vec![start];
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        if forks(&s.log) {
            return (Some(s), seen.len());
        }
        stack.extend(successors(&s, fence));
    }
    (None, seen.len())
}

/// Whether two nodes wrote under one epoch, or an older epoch wrote after a newer one.
fn forks(log: &[(usize, u8)]) -> bool {
    log.windows(2).any(|w| {
        let ((n1, e1), (n2, e2)) = (w[0], w[1]);
        e2 < e1 || (e1 == e2 && n1 != n2)
    }) || log
        .iter()
        .enumerate()
        .any(|(i, (n, e))| log[..i].iter().any(|(m, f)| f == e && m != n))
}

#[test]
fn two_nodes_never_both_append_to_one_game() {
    let (fork, states) = search(Fence::Epoch);
    eprintln!("lease model: {states} states searched");
    assert!(
        states > 10_000,
        "the bound is large enough to mean something"
    );
    assert_eq!(fork, None, "the log forked");
}

#[test]
fn without_the_epoch_the_same_search_finds_a_fork() {
    let (fork, _) = search(Fence::OwnerAndTime);
    let fork = fork.expect("a protocol without epochs forks");
    // The counterexample: an append sent in an earlier tenure lands in a later one.
    eprintln!("lease model without epochs forks: {:?}", fork.log);
    assert!(forks(&fork.log), "{fork:?}");
}
