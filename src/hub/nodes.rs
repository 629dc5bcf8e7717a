//! Several nodes on one store: what the store says of the games (leases lost, hints of
//! rows appended or games created elsewhere, the survey of the games this node follows)
//! acted on by the games' tasks.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use super::registry::Hub;
use super::task::Msg;
use crate::store::{GameRecord, StoreHint};

/// What the store says of several nodes' games, acted on: a task whose lease was
/// dropped steps down and follows; a follower whose game grew elsewhere (a hint) reads
/// it at once; a game created on another node is loaded (as a follower) and announced to
/// the round streams; every `takeover_every`, and just after the first of their leases
/// is due to end, the games this node follows are surveyed in one statement (see
/// [`Hub::survey`]); and every fourth period the running games that
/// no node serves (their owner died) are loaded, so this node takes them over or follows
/// them if another node was quicker. After hints were lost, that look covers every
/// unfinished game once (games created elsewhere meanwhile are followed).
pub(super) async fn watch_store(
    hub: std::sync::Weak<Hub>,
    mut losses: broadcast::Receiver<String>,
    mut hints: Option<broadcast::Receiver<StoreHint>>,
) {
    let every = match hub.upgrade() {
        Some(h) => h.config.takeover_every,
        None => return,
    };
    let mut survey_at = tokio::time::Instant::now() + every;
    let mut scan_at = survey_at + every * 3;
    // Hints were lost: the next look lists every unfinished game, not only unserved ones.
    let mut missed = false;
    loop {
        let wake = tokio::select! {
            lost = losses.recv() => Wake::Lost(lost),
            Some(hint) = next_hint(&mut hints) => Wake::Hint(hint),
            () = tokio::time::sleep_until(survey_at) => Wake::Survey,
        };
        let Some(hub) = hub.upgrade() else { return };
        if hub.stopping() {
            return;
        }
        match wake {
            Wake::Lost(Ok(id)) => hub.tell(&id, || Msg::LeaseLost),
            Wake::Lost(Err(broadcast::error::RecvError::Lagged(_))) => {
                hub.tell_all(|| Msg::LeaseLost);
            }
            Wake::Lost(Err(broadcast::error::RecvError::Closed)) => return,
            Wake::Hint(Ok(StoreHint::Appended { game_id, .. })) => {
                hub.tell(&game_id, || Msg::Follow);
            }
            Wake::Hint(Ok(StoreHint::Created { game_id })) => {
                // This node's own creations are announced by `create`.
                if !hub.games().contains_key(&game_id) && !hub.store.holds(&game_id) {
                    let hub = hub.clone();
                    tokio::spawn(async move { hub.adopt(&game_id).await });
                }
            }
            Wake::Hint(Ok(StoreHint::Missed) | Err(broadcast::error::RecvError::Lagged(_))) => {
                hub.tell_all(|| Msg::Follow);
                missed = true;
            }
            Wake::Hint(Err(broadcast::error::RecvError::Closed)) => hints = None,
            Wake::Survey => {
                let lease_ends = hub.survey().await;
                let now = tokio::time::Instant::now();
                // The next survey: as usual, or just after the first lease of a game this
                // node follows runs out (its owner may be dead: take it over at once).
                survey_at = now + every;
                if let Some(left) = lease_ends {
                    survey_at = survey_at.min(now + left + LEASE_END_MARGIN);
                }
                if now < scan_at {
                    continue;
                }
                scan_at = now + every * 4;
                let listed = if std::mem::take(&mut missed) {
                    hub.store.unfinished_games().await
                } else {
                    hub.store.unserved_games().await
                };
                let orphans = match listed {
                    Ok(records) => records,
                    Err(e) => {
                        tracing::warn!(error = %e, "looking for unserved games");
                        continue;
                    }
                };
                let orphans: Vec<GameRecord> = {
                    let games = hub.games();
                    orphans
                        .into_iter()
                        .filter(|r| !games.contains_key(&r.game_id))
                        .collect()
                };
                if !orphans.is_empty() {
                    hub.resume(orphans).await;
                }
            }
        }
    }
}

/// How long after a followed game's lease ends (by the database's clock, as the survey
/// read it) the next survey looks again: the survey's own round trip is the slack.
const LEASE_END_MARGIN: Duration = Duration::from_millis(2);

/// What woke [`watch_store`].
enum Wake {
    Lost(Result<String, broadcast::error::RecvError>),
    Hint(Result<StoreHint, broadcast::error::RecvError>),
    Survey,
}

/// The next hint, or never if the store gives none.
async fn next_hint(
    hints: &mut Option<broadcast::Receiver<StoreHint>>,
) -> Option<Result<StoreHint, broadcast::error::RecvError>> {
    match hints {
        Some(h) => Some(h.recv().await),
        None => std::future::pending().await,
    }
}

impl Hub {
    /// Wakes a loaded game's task (never waits: a full queue wakes it anyway).
    fn tell(&self, id: &str, msg: impl Fn() -> Msg) {
        if let Some(h) = self.games().get(id) {
            let _ = h.tx.try_send(msg());
        }
    }

    /// Wakes every loaded game's task.
    fn tell_all(&self, msg: impl Fn() -> Msg) {
        for h in self.games().values() {
            let _ = h.tx.try_send(msg());
        }
    }

    /// Asks the store where the games this node follows stand (one statement for all of
    /// them) and tells each its standing: it reads the rows it lacks, and a running game
    /// whose lease ran out is taken over (see the `follow` module). A node following no
    /// game asks nothing. Returns how long until the first of their live leases ends.
    async fn survey(&self) -> Option<Duration> {
        // A store of one process: this node serves every game and follows none.
        let leases = self.store.leases()?;
        let followed: Vec<String> = self
            .games()
            .keys()
            .filter(|id| !leases.holds(id))
            .cloned()
            .collect();
        if followed.is_empty() {
            return None;
        }
        match leases.survey(&followed).await {
            Ok(standings) => {
                let first_end = standings
                    .iter()
                    .filter(|s| !s.free)
                    .filter_map(|s| s.lease_left)
                    .min();
                for standing in standings {
                    let id = standing.game_id.clone();
                    self.tell(&id, move || Msg::Surveyed(standing.clone()));
                }
                first_end
            }
            Err(e) => {
                tracing::warn!(error = %e, "surveying the games followed");
                None
            }
        }
    }

    /// Loads a game another node created and announces it to the round streams.
    async fn adopt(self: &Arc<Self>, id: &str) {
        match self.game(id).await {
            Ok(handle) => {
                let _ = self.created.send(handle.meta().clone());
            }
            Err(e) => tracing::warn!(game = %id, error = %e, "a game created elsewhere not loaded"),
        }
    }
}
