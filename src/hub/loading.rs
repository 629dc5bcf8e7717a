//! Loading a game that is not in memory: one load at a time per game (its gate), the
//! outage of a running game recorded as it comes back, a log that does not replay set
//! aside (quarantine).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::error::{HubError, append_decided};
use super::follow::{outage_of, resume_point};
use super::handle::GameHandle;
use super::quarantine::{Quarantine, unfinished_log, verify_log};
use super::registry::Hub;
use super::task::Tenure;
use crate::game::{GameMeta, Session};
use crate::store::{GameRecord, StoreError, Stream};

impl Hub {
    /// A game by id, loaded from the store if it is not in memory. An unfinished game
    /// that is not in memory was running before this process started (a running game
    /// never leaves memory): loading it records the outage, as recovery does, and arms
    /// its timer. A log that does not replay quarantines the game.
    ///
    /// # Errors
    /// Not found, quarantined (its log does not replay), the store failing, the memory
    /// limit, or shutting down.
    pub async fn game(self: &Arc<Self>, id: &str) -> Result<GameHandle, HubError> {
        self.game_from(id, None).await.map(|(h, _)| h)
    }

    /// [`Hub::game`], with the game's row if the caller has it; also says whether the
    /// game is running (unfinished).
    pub(super) async fn game_from(
        self: &Arc<Self>,
        id: &str,
        record: Option<GameRecord>,
    ) -> Result<(GameHandle, bool), HubError> {
        if let Some(known) = self.known(id) {
            return known;
        }
        // On a task of its own: a caller that goes away (a deadline, a disconnect) while
        // it waits for the gate or while the game loads neither leaves the gate behind
        // nor cuts a load (which may record an outage) in half.
        let hub = self.clone();
        let id = id.to_string();
        tokio::spawn(async move {
            let gate = hub.loading_gates().entry(id.clone()).or_default().clone();
            let turn = gate.lock().await;
            // Another caller may have loaded it (or found it quarantined) while this one
            // waited for the turn.
            let loaded = match hub.known(&id) {
                Some(known) => known,
                None => hub.load(&id, record).await,
            };
            {
                // Still holding the turn: a request that comes after this sees the game
                // in memory (or quarantined) before it could take a gate of its own.
                let mut gates = hub.loading_gates();
                if gates.get(&id).is_some_and(|g| Arc::ptr_eq(g, &gate)) {
                    gates.remove(&id);
                }
            }
            drop(turn);
            loaded
        })
        .await
        .map_err(|e| HubError::Internal(format!("loading a game: {e}")))?
    }

    /// A game the hub knows without reading the store: in memory, or quarantined.
    fn known(&self, id: &str) -> Option<Result<(GameHandle, bool), HubError>> {
        if let Some(h) = self.games().get(id) {
            return Some(Ok((h.clone(), false)));
        }
        self.quarantine_of(id).map(|q| Err(quarantined(id, q)))
    }

    pub(super) fn loading_gates(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.loading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Loads a game from the store, under its gate and known to be neither in memory
    /// nor quarantined (see [`Hub::game_from`]).
    async fn load(
        self: &Arc<Self>,
        id: &str,
        record: Option<GameRecord>,
    ) -> Result<(GameHandle, bool), HubError> {
        if self.stopping() {
            return Err(HubError::ShuttingDown);
        }
        let record = match record {
            Some(r) => r,
            None => self
                .store
                .get_game(id)
                .await
                .map_err(|e| self.unreadable(id, e))?
                .ok_or_else(|| HubError::NotFound(id.to_string()))?,
        };
        // The lease first, the log after: once this node holds the lease, the previous
        // owner can write nothing more, so the log read below is the whole of it.
        let (tenure, gap) = match self.store.acquire(id).await {
            Ok(gap) => (Tenure::owner(), gap),
            Err(StoreError::Fenced { owner, .. }) => (Tenure::follower(owner), None),
            Err(e) => return Err(e.into()),
        };
        let acquired_ms = self.timeline.now_unshifted();
        let rows = self
            .store
            .load(Stream::Game(id), 1)
            .await
            .map_err(|e| self.unreadable(id, e))?;
        if rows.is_empty() {
            // A game row without events, left by a creation that never completed (older
            // versions wrote the row and the first event separately): it was never
            // acknowledged, so it does not exist.
            return Err(HubError::NotFound(id.to_string()));
        }
        let (mut session, mut events) = match verify_log(&rows) {
            Ok(rebuilt) => rebuilt,
            Err(q) => return Err(self.quarantine(id, q)),
        };
        if let Some(q) = unfinished_log(record.finished, &session) {
            return Err(self.quarantine(id, q));
        }
        let running = session.result().is_none();
        if running {
            let loaded = self.games().len();
            if loaded >= self.config.max_loaded {
                return Err(HubError::Full(loaded));
            }
        }
        let line = self.timeline.for_game();
        if running && tenure.owner {
            // Down since the previous run last served (the lease's gap on PostgreSQL, the
            // alive mark otherwise); the game goes on from the end of the outage as the
            // facts measure it. The server's setting, or the game's own
            // (GameSettings.charge_outage), says whether that time is charged.
            let resume = resume_point(&session, gap, self.down_since, acquired_ms);
            line.shift_at(resume.at_ms, acquired_ms);
            let now = line.now(session.last_ms());
            if let Some(d) = outage_of(&session, now, &resume, self.charge_outage) {
                append_decided(self.store.as_ref(), id, &session, &d.session, &d.events)
                    .await
                    .map_err(|e| self.unwritable(id, &session, e))?;
                self.metrics.events_appended(d.events.len());
                session = d.session;
                events.extend(d.events);
            }
        } else if !running && !record.finished {
            // Finished in its log, but the crash came between the last append and the
            // finished flag (older versions wrote them apart): set the flag now so it is
            // listed as finished.
            self.store.update_game(id, true, None).await?;
        }
        let public = self.public(&session, &events, &line);
        let running = session.result().is_none() && tenure.owner;
        let handle = self.insert(
            GameMeta::of_record(&record),
            session,
            public,
            tenure,
            true,
            line,
        )?;
        Ok((handle, running))
    }

    /// Sets a game aside: its log does not replay. Logged once; counted in the
    /// `arbiter_quarantined_games` gauge. Returns the error its callers get.
    pub(super) fn quarantine(&self, id: &str, q: Quarantine) -> HubError {
        let mut all = self.quarantined.lock().unwrap_or_else(|p| p.into_inner());
        if !all.contains_key(id) {
            tracing::error!(
                game = %id,
                seq = q.seq,
                reason = %q.reason,
                "game quarantined: its event log does not replay; every other game serves \
                 (draughts-arbiter check, export and import to repair it)"
            );
            all.insert(id.to_string(), q.clone());
            self.metrics.set_quarantined(all.len());
        }
        quarantined(id, q)
    }

    /// The error of a game whose row or log could not be read: a damaged store
    /// ([`StoreError::Damaged`]) quarantines the game, naming the first seq not read;
    /// anything else is the store's error as it is.
    pub(super) fn unreadable(&self, id: &str, e: StoreError) -> HubError {
        match e {
            StoreError::Damaged { what, from_seq } => self.quarantine(
                id,
                Quarantine {
                    seq: from_seq.unwrap_or(1),
                    reason: format!("unreadable: {what}"),
                },
            ),
            other => HubError::Store(other),
        }
    }

    /// The error of a game whose outage could not be appended when it was loaded: a log
    /// whose end is not where its rows say (a seq conflict: rows missing from the index
    /// the log is read through) or a damaged store quarantines the game.
    fn unwritable(&self, id: &str, session: &Session, e: HubError) -> HubError {
        let seq = session.last_seq() + 1;
        match e {
            HubError::Store(StoreError::Conflict { actual, .. }) => self.quarantine(
                id,
                Quarantine {
                    seq,
                    reason: format!(
                        "the log read ends at seq {} but the log's next seq is {actual}: rows \
                         missing from the index it is read through",
                        seq - 1
                    ),
                },
            ),
            HubError::Store(StoreError::Damaged { what, .. }) => self.quarantine(
                id,
                Quarantine {
                    seq,
                    reason: format!("its log cannot be written: {what}"),
                },
            ),
            other => other,
        }
    }

    /// Why a game is quarantined, if it is.
    pub fn quarantine_of(&self, id: &str) -> Option<Quarantine> {
        self.quarantined
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Every quarantined game, by id.
    pub fn quarantined(&self) -> BTreeMap<String, Quarantine> {
        self.quarantined
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The error of a request for a quarantined game.
fn quarantined(id: &str, quarantine: Quarantine) -> HubError {
    HubError::Quarantined {
        id: id.to_string(),
        quarantine,
    }
}
