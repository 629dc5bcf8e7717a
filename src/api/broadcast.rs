//! `BroadcastService`: watch streams and PDN exports, each for its audience.

use std::pin::Pin;

use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::error::status;
use super::pb;
use super::service::{Api, audience};
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
        let r = req.into_inner();
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
        let r = req.into_inner();
        if r.event.trim().is_empty() {
            return Err(Status::invalid_argument("event: required"));
        }
        let filter = GameFilter {
            event: Some(r.event),
            round: (!r.round.is_empty()).then_some(r.round),
            unfinished_only: false,
        };
        let metas = self.hub().list(&filter).await.map_err(|e| status(&e))?;
        let mut watches = Vec::new();
        for m in metas {
            let from = r.resume_from.get(&m.id).copied().unwrap_or(r.from_seq);
            let handle = self.game(&m.id).await?;
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
        let r = req.into_inner();
        let handle = self.game(&r.game_id).await?;
        let meta = handle.meta().clone();
        let pdn = handle
            .read_as(audience(&role, &meta), move |session, _| {
                super::pdn::export(&meta, session)
            })
            .await
            .map_err(|e| status(&e))?;
        Ok(Response::new(pb::ExportPdnResponse { pdn }))
    }
}
