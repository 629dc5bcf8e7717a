//! The arbiter's round report (issue 41) for `TournamentService.GetRoundReport` and HTTP's
//! `GET /report/<event>/<round>`: the tournament's round and each of its games' logs,
//! read from the store live (the event's arbiters only: no broadcast delay applies),
//! made into the report by [`crate::tournament::report`] and written by
//! [`crate::tournament::report_text`].

use std::collections::BTreeMap;

use tonic::Status;

use super::auth::{Action, Role};
use super::error::Refusal;
use super::error::{auth_status, status, tournament_status};
use super::service::Api;
use crate::game::GameEvent;
use crate::hub::HubError;
use crate::store::{GameFilter, StoreError};
use crate::tournament::event_key;
use crate::tournament::report::{self, GameLog};
use crate::tournament::report_text::{self, Format};

impl Api {
    /// The role of a report's caller by its `authorization` header: a token is required
    /// whatever the broadcast settings (the report is the arbiter's), except on an open
    /// server, where everyone is an arbiter.
    ///
    /// # Errors
    /// UNAUTHENTICATED for no token or one the server does not know.
    pub(crate) fn report_role(&self, authorization: Option<&str>) -> Result<Role, Status> {
        self.tokens().role(authorization).map_err(auth_status)
    }

    /// The report of round `round` of the tournament `name` (its name or key) in
    /// `format`, for `role`.
    ///
    /// # Errors
    /// INVALID_ARGUMENT for round 0; NOT_FOUND for an unknown tournament or a round not
    /// paired; PERMISSION_DENIED for anyone but the event's arbiters; the store failing.
    pub(crate) async fn round_report(
        &self,
        role: &Role,
        name: &str,
        round: u32,
        format: Format,
    ) -> Result<String, Status> {
        if round == 0 {
            return Err(Refusal::Field("round: required: the round, from 1".into()).into());
        }
        let t = self
            .tournaments()
            .get(&event_key(name.trim()))
            .await
            .map_err(|e| tournament_status(&e))?;
        let event = t.config().map(|c| c.name.clone()).unwrap_or_default();
        // The event's arbiters: those who may write to it.
        if role.allows(Action::Create { event: &event }).is_err() {
            return Err(Refusal::Denied(format!(
                "{} may not read the round report of event {event:?}: it is for the event's \
                 arbiters",
                role.describe()
            ))
            .into());
        }
        let Some(r) = t.round(round) else {
            return Err(Refusal::NotFound(format!(
                "round: event {event:?} has no round {round} paired ({} so far)",
                t.rounds().len()
            ))
            .into());
        };
        let metas: BTreeMap<String, _> = self
            .hub()
            .list(&GameFilter {
                event: Some(event.clone()),
                round: None,
                unfinished_only: false,
            })
            .await
            .map_err(|e| status(&e))?
            .into_iter()
            .map(|m| (m.id.clone(), m))
            .collect();
        let mut logs = BTreeMap::new();
        let mut ids: Vec<String> = Vec::new();
        for g in r.games() {
            ids.extend(g.replaced.iter().cloned());
            ids.push(g.game_id.clone());
        }
        for id in ids {
            let Some(events) = self.game_log(&id).await? else {
                continue;
            };
            let meta = metas.get(&id).cloned().unwrap_or_default();
            logs.insert(id, GameLog { meta, events });
        }
        let now_ms = chrono::Utc::now().timestamp_millis();
        let report = report::build(&t, round, &logs, now_ms).ok_or_else(|| {
            Refusal::NotFound(format!("round: event {event:?} has no round {round}"))
        })?;
        Ok(report_text::render(&report, format))
    }

    /// A game's whole log from the store; `None` when the game does not exist (a round
    /// not started, a forfeit decided without a game).
    async fn game_log(&self, id: &str) -> Result<Option<Vec<GameEvent>>, Status> {
        match self.hub().log_of(id).await {
            Ok(events) => Ok(Some(events)),
            Err(HubError::Store(StoreError::GameNotFound(_))) => Ok(None),
            Err(e) => Err(status(&e)),
        }
    }
}
