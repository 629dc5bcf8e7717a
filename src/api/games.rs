//! `GameService`: create, read, list and play games.

use tonic::{Request, Response, Status};

use super::auth::{Action, Role};
use super::auth::{View, audience};
use super::convert;
use super::error::Refusal;
use super::error::{auth_status, bad, status};
use super::pb;
use super::service::Api;
use super::validate::checked;
use crate::game::GameSummary;
use crate::hub::{Audience, GameMeta, HubError, Listed, Quarantine};
use crate::store::GameFilter;

#[tonic::async_trait]
impl pb::game_service_server::GameService for Api {
    async fn create_game(
        &self,
        req: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let caller = self.caller(&req)?;
        let role = &caller.role;
        let r = checked(req)?;
        role.allows(Action::Create { event: &r.event })
            .map_err(auth_status)?;
        if let Some(event) = self.tokens().reserved_event(&r.game_id)
            && event != r.event
        {
            return Err(Refusal::Denied(format!(
                "game_id {}: board or player tokens name it for event '{event}'; it can only be created there",
                r.game_id
            )).into());
        }
        let variant = convert::variant(r.variant).map_err(bad)?;
        let mut settings =
            convert::settings(variant, &r.time_control, r.settings.as_ref()).map_err(bad)?;
        if r.settings
            .as_ref()
            .is_none_or(|s| s.broadcast_delay_ms.is_none())
        {
            settings.broadcast_delay_ms = self.event_delay(&r.event);
        }
        let meta = GameMeta {
            id: r.game_id.clone(),
            event: r.event.clone(),
            round: r.round.clone(),
            board: r.board,
            white: convert::player(r.white.as_ref()),
            black: convert::player(r.black.as_ref()),
            site: r.site.trim().to_string(),
            time_zone: r.time_zone.clone(),
        };
        let fen = (!r.start_fen.trim().is_empty()).then_some(r.start_fen.as_str());
        let handle = self
            .hub()
            .create(meta, settings, fen, caller.arbiter())
            .await
            .map_err(|e| match e {
                HubError::Game(crate::game::GameError::Fen(f)) => {
                    Refusal::Field(format!("start_fen: {f}")).into()
                }
                other => status(&other),
            })?;
        Ok(Response::new(self.view(&handle, true).await?))
    }

    async fn get_game(
        &self,
        req: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let handle = self.game(&r.game_id).await?;
        let audience = audience(&role, handle.meta());
        Ok(Response::new(self.view_as(&handle, audience, true).await?))
    }

    async fn list_games(
        &self,
        req: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        // The store's finished flag is the live one. A caller who sees some listed game
        // as the public does (behind its broadcast delay) must still see it unfinished
        // while the delay lasts: its filter runs on the views instead.
        let live_on_all = View::of(&role, &r.event) == View::All(Audience::Live);
        let public_unfinished = r.unfinished_only && !live_on_all;
        let filter = GameFilter {
            event: (!r.event.is_empty()).then_some(r.event),
            round: (!r.round.is_empty()).then_some(r.round),
            unfinished_only: r.unfinished_only && live_on_all,
        };
        // Games in memory answer from their task; finished games that left memory from
        // their stored summary (no replay), unless their score sheets are asked for.
        // Quarantined games only to arbiters.
        let listed = self.hub().listing(&filter).await.map_err(|e| status(&e))?;
        let mut games = Vec::with_capacity(listed.len());
        for item in listed {
            // A stored game left memory only after its public delay had passed.
            let game = match item {
                // Finished, and its delay is over.
                Listed::Stored(..) if public_unfinished => continue,
                // The row is current only for finished games.
                Listed::Quarantined(_, _, Some(_)) if public_unfinished => continue,
                Listed::Stored(meta, summary) if !r.include_moves => {
                    convert::summary_pb(&meta, &summary, std::iter::empty())
                }
                Listed::Stored(meta, summary) => match self.hub().game(&meta.id).await {
                    Ok(handle) => self.view_as(&handle, audience(&role, &meta), true).await?,
                    Err(HubError::Quarantined { quarantine, .. }) => {
                        if !sees_quarantined(&role, &meta) {
                            continue;
                        }
                        quarantined_pb(&meta, &quarantine, Some(&summary))
                    }
                    Err(e) => return Err(status(&e)),
                },
                Listed::Live(handle) => {
                    let audience = audience(&role, handle.meta());
                    let game = self.view_as(&handle, audience, r.include_moves).await?;
                    if public_unfinished && game.status == pb::GameStatus::Finished as i32 {
                        continue;
                    }
                    game
                }
                Listed::Quarantined(meta, quarantine, summary) => {
                    if !sees_quarantined(&role, &meta) {
                        continue;
                    }
                    quarantined_pb(&meta, &quarantine, summary.as_deref())
                }
            };
            games.push(game);
        }
        Ok(Response::new(pb::ListGamesResponse { games }))
    }

    async fn start_game(
        &self,
        req: Request<pb::StartGameRequest>,
    ) -> Result<Response<pb::StartGameResponse>, Status> {
        reply!(StartGameResponse, self.game_request(req).await?)
    }

    async fn submit_move(
        &self,
        req: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        reply!(SubmitMoveResponse, self.game_request(req).await?)
    }

    async fn press_clock(
        &self,
        req: Request<pb::PressClockRequest>,
    ) -> Result<Response<pb::PressClockResponse>, Status> {
        reply!(PressClockResponse, self.game_request(req).await?)
    }

    async fn offer_draw(
        &self,
        req: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        reply!(OfferDrawResponse, self.game_request(req).await?)
    }

    async fn respond_to_draw_offer(
        &self,
        req: Request<pb::RespondToDrawOfferRequest>,
    ) -> Result<Response<pb::RespondToDrawOfferResponse>, Status> {
        reply!(RespondToDrawOfferResponse, self.game_request(req).await?)
    }

    async fn claim_draw(
        &self,
        req: Request<pb::ClaimDrawRequest>,
    ) -> Result<Response<pb::ClaimDrawResponse>, Status> {
        reply!(ClaimDrawResponse, self.game_request(req).await?)
    }

    async fn resign(
        &self,
        req: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        reply!(ResignResponse, self.game_request(req).await?)
    }
}

/// Who is shown a quarantined game in listings: arbiters of all events or of its event.
fn sees_quarantined(role: &Role, meta: &GameMeta) -> bool {
    match role {
        Role::Arbiter { event: None } => true,
        Role::Arbiter { event: Some(e) } => *e == meta.event,
        _ => false,
    }
}

/// A quarantined game as an arbiter's listing shows it: its names, the quarantine, and
/// what its stored summary says if it had finished (see the proto's `Game.quarantine`).
fn quarantined_pb(
    meta: &GameMeta,
    quarantine: &Quarantine,
    summary: Option<&GameSummary>,
) -> pb::Game {
    let mut game = match summary {
        Some(s) => convert::summary_pb(meta, s, std::iter::empty()),
        None => pb::Game {
            id: meta.id.clone(),
            event: meta.event.clone(),
            round: meta.round.clone(),
            board: meta.board,
            white: Some(convert::player_pb(&meta.white)),
            black: Some(convert::player_pb(&meta.black)),
            ..pb::Game::default()
        },
    };
    game.quarantine = Some(pb::Quarantine {
        seq: quarantine.seq,
        reason: quarantine.reason.clone(),
    });
    game
}
