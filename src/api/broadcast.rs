//! `BroadcastService`: watch streams and PDN exports, each for its audience.

use std::pin::Pin;
use std::sync::Arc;

use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::auth::{Role, View, audience};
use super::cursor::Cursor;
use super::error::Refusal;
use super::error::status;
use super::frame::{BroadcastService, EventFrame};
use super::pb;
use super::round_feed::{self, RoundStream};
use super::service::Api;
use super::token_table::until_revoked;
use super::validate::{RESUME_ENTRIES, checked};
use super::watch::{Resume, out_of_range, past_last};
use crate::hub::GameMeta;
use crate::hub::metrics::WatchKind;
use crate::notation::pdn::{PdnGame, write_games};
use crate::store::GameFilter;

type EventStream = Pin<Box<dyn Stream<Item = Result<EventFrame, Status>> + Send>>;

#[tonic::async_trait]
impl BroadcastService for Api {
    type WatchGameStream = EventStream;
    type WatchEventStream = EventStream;

    async fn watch_game(
        &self,
        req: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let role = self.broadcast_role(&req)?;
        let revoked = self.revocation(&req);
        let r = checked(req)?;
        let handle = self.game(&r.game_id).await?;
        let audience = audience(&role, handle.meta());
        // A seq the caller cannot have seen (past the last event as it sees the game) is
        // refused rather than waited for in silence. Seqs only grow: one valid here is
        // still valid when the watch registers.
        if let Some(last) = past_last(&handle, audience, r.from_seq).await? {
            return Err(out_of_range(
                "from_seq",
                r.from_seq,
                &handle.meta().id,
                last,
            ));
        }
        let watch = handle
            .watch_as(audience, r.from_seq)
            .await
            .map_err(|e| status(&e))?;
        let stream = super::watch::watch(self.hub().metrics(), watch);
        Ok(Response::new(Box::pin(until_revoked(
            Box::pin(stream),
            revoked,
        ))))
    }

    async fn watch_event(
        &self,
        req: Request<pb::WatchEventRequest>,
    ) -> Result<Response<Self::WatchEventStream>, Status> {
        let role = self.broadcast_role(&req)?;
        let revoked = self.revocation(&req);
        let r = checked(req)?;
        let stream = self.watch_round(role, r, WatchKind::Event).await?;
        Ok(Response::new(Box::pin(until_revoked(
            Box::pin(stream),
            revoked,
        ))))
    }

    async fn export_pdn(
        &self,
        req: Request<pb::ExportPdnRequest>,
    ) -> Result<Response<pb::ExportPdnResponse>, Status> {
        let role = self.broadcast_role(&req)?;
        let r = checked(req)?;
        let pdn = self.export(&role, &r).await?;
        Ok(Response::new(pb::ExportPdnResponse { pdn }))
    }
}

impl Api {
    /// A round stream (a checked `WatchEventRequest`) as `role` may see it.
    ///
    /// # Errors
    /// The store failing, a game that cannot load, a watcher limit.
    pub(crate) async fn watch_round(
        &self,
        role: Role,
        r: pb::WatchEventRequest,
        kind: WatchKind,
    ) -> Result<impl Stream<Item = Result<EventFrame, Status>> + Send + use<>, Status> {
        // Checked with the request: it is ours and made for this event and round.
        let cursor = (!r.from_cursor.is_empty())
            .then(|| Cursor::decode(&r.from_cursor, &r.event, &r.round, RESUME_ENTRIES))
            .transpose()
            .map_err(|e| Refusal::Field(format!("from_cursor: {e}")))?;
        // Where the request says each game listed starts.
        let froms = |metas: &[GameMeta]| -> Vec<Resume> {
            match &cursor {
                Some(c) => c
                    .resume(metas.iter().map(|m| m.id.as_str()))
                    .into_iter()
                    .map(|seq| Resume {
                        seq,
                        field: Some("from_cursor"),
                    })
                    .collect(),
                None => metas
                    .iter()
                    .map(|m| match r.resume_from.get(&m.id) {
                        Some(&seq) => Resume {
                            seq,
                            field: Some("resume_from"),
                        },
                        None => Resume {
                            seq: r.from_seq,
                            field: None,
                        },
                    })
                    .collect(),
            }
        };
        // Every round stream runs on the shared feed of its round and view.
        let req = RoundStream {
            view: View::of(&role, &r.event),
            event: r.event.clone(),
            round: r.round.clone(),
            role,
            kind,
        };
        round_feed::open(self.hub(), self.tournaments(), self.feeds(), req, &froms).await
    }

    /// The PDN text of a checked `ExportPdnRequest` as `role` may see it.
    ///
    /// # Errors
    /// Neither a game nor an event given; no such game, event or round; the store failing.
    pub(crate) async fn export(
        &self,
        role: &Role,
        r: &pb::ExportPdnRequest,
    ) -> Result<String, Status> {
        let ids = if !r.game_id.trim().is_empty() {
            vec![r.game_id.clone()]
        } else if r.event.trim().is_empty() {
            return Err(Refusal::Field(
                "game_id: required, or event (and round) for every game of an event or round"
                    .into(),
            )
            .into());
        } else {
            let filter = GameFilter {
                event: Some(r.event.clone()),
                round: (!r.round.is_empty()).then(|| r.round.clone()),
                unfinished_only: false,
            };
            let metas = self.hub().list(&filter).await.map_err(|e| status(&e))?;
            if metas.is_empty() {
                return Err(Refusal::NotFound(format!(
                    "no games of event {:?}{}",
                    r.event,
                    if r.round.is_empty() {
                        String::new()
                    } else {
                        format!(", round {:?}", r.round)
                    }
                ))
                .into());
            }
            metas.into_iter().map(|m| m.id).collect()
        };
        let mut records = Vec::new();
        for id in ids {
            records.extend(self.pdn_records(role, &id).await?);
        }
        Ok(write_games(&records))
    }

    /// One game's PDN records as `role` may see it: its log up to the last event of the
    /// session the caller is shown (the public sees a delayed game as it was).
    async fn pdn_records(&self, role: &Role, id: &str) -> Result<Vec<PdnGame>, Status> {
        self.pdn_at(role, id).await.map(|(_, records)| records)
    }

    /// One game's PDN text as `role` may see it, and the seq of the last event it shows.
    ///
    /// # Errors
    /// No such game, the store failing, a log that does not export.
    ///
    /// The text of a game up to a seq is the same for every caller (the public sees a
    /// prefix of the log), so it is kept per game: the relays following a round share
    /// one export of each change.
    pub(crate) async fn pdn_of(&self, role: &Role, id: &str) -> Result<(u64, Arc<str>), Status> {
        let (meta, last) = self.visible(role, id).await?;
        if let Some(text) = self.pdn_cache().get(id, last) {
            return Ok((last, text));
        }
        let text: Arc<str> = write_games(&self.records_up_to(&meta, last).await?).into();
        self.pdn_cache().put(id, last, text.clone());
        Ok((last, text))
    }

    /// One game for the relay feeds (`/livechess/...`) as `role` may see it: the game as
    /// GetGame gives it (moves included) and its PDN text as [`Api::pdn_of`] gives it,
    /// both as of the same last event (read again while an event came between the two
    /// reads).
    ///
    /// # Errors
    /// No such game, the store failing, a log that does not export.
    pub(crate) async fn relay_game(
        &self,
        role: &Role,
        id: &str,
    ) -> Result<(pb::Game, Arc<str>), Status> {
        let handle = self.game(id).await?;
        let to = audience(role, handle.meta());
        let mut tries = 0;
        loop {
            let game = self.view_as(&handle, to, true).await?;
            let (last, pdn) = self.pdn_of(role, id).await?;
            tries += 1;
            if last == game.last_seq || tries == 4 {
                if last != game.last_seq {
                    tracing::debug!(game = id, "relay feed: game and PDN one event apart");
                }
                return Ok((game, pdn));
            }
        }
    }

    async fn pdn_at(&self, role: &Role, id: &str) -> Result<(u64, Vec<PdnGame>), Status> {
        let (meta, last) = self.visible(role, id).await?;
        Ok((last, self.records_up_to(&meta, last).await?))
    }

    /// The game's metadata and the seq of the last event `role` may see of it.
    async fn visible(&self, role: &Role, id: &str) -> Result<(GameMeta, u64), Status> {
        let handle = self.game(id).await?;
        let meta = handle.meta().as_ref().clone();
        let last = handle
            .read_as(audience(role, &meta), |session, _| session.last_seq())
            .await
            .map_err(|e| status(&e))?;
        Ok((meta, last))
    }

    /// The PDN records of a game's log up to `last`.
    async fn records_up_to(&self, meta: &GameMeta, last: u64) -> Result<Vec<PdnGame>, Status> {
        let id = meta.id.as_str();
        let mut events = self.hub().log_of(id).await.map_err(|e| status(&e))?;
        events.retain(|e| e.seq <= last);
        crate::game::pdn::export_games(meta, &events).map_err(|e| {
            tracing::error!(game = id, error = %e, "pdn export failed");
            Refusal::Internal(e.to_string()).into()
        })
    }
}
