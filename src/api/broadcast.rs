//! `BroadcastService`: watch streams and PDN exports, each for its audience.

use std::pin::Pin;

use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::auth::Role;
use super::error::status;
use super::pb;
use super::service::{Api, audience};
use super::validate::checked;
use crate::game::GameEvent;
use crate::hub::HubError;
use crate::notation::pdn::{PdnGame, write_games};
use crate::store::GameFilter;

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

#[tonic::async_trait]
impl pb::broadcast_service_server::BroadcastService for Api {
    type WatchGameStream = EventStream;
    type WatchEventStream = EventStream;

    async fn watch_game(
        &self,
        req: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let handle = self.game(&r.game_id).await?;
        let watch = handle
            .watch_as(audience(&role, handle.meta()), r.from_seq)
            .await
            .map_err(|e| status(&e))?;
        let stream = super::watch::watch(self.hub().metrics(), watch);
        Ok(Response::new(Box::pin(stream)))
    }

    async fn watch_event(
        &self,
        req: Request<pb::WatchEventRequest>,
    ) -> Result<Response<Self::WatchEventStream>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let filter = GameFilter {
            event: Some(r.event),
            round: (!r.round.is_empty()).then_some(r.round),
            unfinished_only: false,
        };
        let metas = self.hub().list(&filter).await.map_err(|e| status(&e))?;
        let mut watches = Vec::new();
        for m in metas {
            let from = r.resume_from.get(&m.id).copied().unwrap_or(r.from_seq);
            // A game found quarantined as it loads is left out like those known before.
            let handle = match self.hub().game(&m.id).await {
                Ok(h) => h,
                Err(HubError::Quarantined { .. }) => continue,
                Err(e) => return Err(status(&e)),
            };
            let audience = audience(&role, handle.meta());
            watches.push(
                handle
                    .watch_as(audience, from)
                    .await
                    .map_err(|e| status(&e))?,
            );
        }
        Ok(Response::new(Box::pin(super::watch::watch_many(
            self.hub().metrics(),
            watches,
        ))))
    }

    async fn export_pdn(
        &self,
        req: Request<pb::ExportPdnRequest>,
    ) -> Result<Response<pb::ExportPdnResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let ids = if !r.game_id.trim().is_empty() {
            vec![r.game_id]
        } else if r.event.trim().is_empty() {
            return Err(Status::invalid_argument(
                "game_id: required, or event (and round) for every game of an event or round",
            ));
        } else {
            let filter = GameFilter {
                event: Some(r.event.clone()),
                round: (!r.round.is_empty()).then(|| r.round.clone()),
                unfinished_only: false,
            };
            let metas = self.hub().list(&filter).await.map_err(|e| status(&e))?;
            if metas.is_empty() {
                return Err(Status::not_found(format!(
                    "no games of event {:?}{}",
                    r.event,
                    if r.round.is_empty() {
                        String::new()
                    } else {
                        format!(", round {:?}", r.round)
                    }
                )));
            }
            metas.into_iter().map(|m| m.id).collect()
        };
        let mut records = Vec::new();
        for id in ids {
            records.extend(self.pdn_records(&role, &id).await?);
        }
        Ok(Response::new(pb::ExportPdnResponse {
            pdn: write_games(&records),
        }))
    }
}

impl Api {
    /// One game's PDN records as `role` may see it: its log up to the last event of the
    /// session the caller is shown (the public sees a delayed game as it was).
    async fn pdn_records(&self, role: &Role, id: &str) -> Result<Vec<PdnGame>, Status> {
        let handle = self.game(id).await?;
        let meta = handle.meta().clone();
        let last = handle
            .read_as(audience(role, &meta), |session, _| session.last_seq())
            .await
            .map_err(|e| status(&e))?;
        let rows = self
            .hub()
            .store()
            .load(id, 1)
            .await
            .map_err(|e| status(&HubError::from(e)))?;
        let events = rows
            .iter()
            .take_while(|row| row.seq <= last)
            .map(|row| {
                serde_json::from_slice::<GameEvent>(&row.payload).map_err(|e| {
                    status(&HubError::Corrupt(format!("{id}: event {}: {e}", row.seq)))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        super::pdn::export_games(&meta, &events).map_err(|e| {
            tracing::error!(game = id, error = %e, "pdn export failed");
            Status::internal(e.to_string())
        })
    }
}
