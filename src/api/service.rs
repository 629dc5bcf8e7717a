//! The gRPC services: authenticate, convert, hand the command to the game's task in the
//! hub, convert back. Errors map to status codes in one table ([`status`]).

use std::pin::Pin;
use std::sync::Arc;

use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use super::convert::{self, BadField};
use super::pb;
use crate::api::auth::{Action, AuthError, Role, Tokens};
use crate::game::{Actor, ArbiterAction, BoardInput, Command, ErrorClass, Occupancy, Ruling};
use crate::hub::{Audience, GameHandle, GameMeta, Hub, HubError, Listed};
use crate::notation::fen::parse_fen;
use crate::rules::{Color, Position};
use crate::store::{GameFilter, StoreError};

/// The one table from domain errors to gRPC status codes. Internal errors (the judge or
/// the hub breaking an invariant of its own) are logged here.
pub fn status(e: &HubError) -> Status {
    match e {
        HubError::NotFound(_) => Status::not_found(e.to_string()),
        HubError::Game(g) => match g.class() {
            ErrorClass::InvalidArgument => Status::invalid_argument(g.to_string()),
            ErrorClass::FailedPrecondition => Status::failed_precondition(g.to_string()),
            ErrorClass::Internal => {
                tracing::error!(error = %g, "internal error");
                Status::internal(g.to_string())
            }
        },
        HubError::Stale { .. } | HubError::Store(StoreError::Conflict { .. }) => {
            Status::aborted(e.to_string())
        }
        HubError::Store(StoreError::GameExists(_)) => Status::already_exists(e.to_string()),
        HubError::Store(StoreError::GameNotFound(_)) => Status::not_found(e.to_string()),
        HubError::Store(_) | HubError::ShuttingDown => Status::unavailable(e.to_string()),
        HubError::Full(_) => Status::resource_exhausted(e.to_string()),
        HubError::Corrupt(_) => Status::data_loss(e.to_string()),
        HubError::Internal(_) => {
            tracing::error!(error = %e, "internal error");
            Status::internal(e.to_string())
        }
    }
}

fn auth_status(e: AuthError) -> Status {
    match e {
        AuthError::Unauthenticated(m) => Status::unauthenticated(m),
        AuthError::Denied(m) => Status::permission_denied(m),
    }
}

fn bad(e: BadField) -> Status {
    Status::invalid_argument(e.0)
}

/// The state every service shares.
#[derive(Clone)]
pub struct Api {
    hub: Arc<Hub>,
    tokens: Arc<Tokens>,
}

impl Api {
    /// Services over a hub and a token table.
    pub fn new(hub: Arc<Hub>, tokens: Arc<Tokens>) -> Api {
        Api { hub, tokens }
    }

    /// The hub the services run on.
    pub(crate) fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    fn role<T>(&self, req: &Request<T>) -> Result<Role, Status> {
        let header = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        self.tokens.role(header).map_err(auth_status)
    }

    async fn game(&self, id: &str) -> Result<GameHandle, Status> {
        if id.trim().is_empty() {
            return Err(Status::invalid_argument("game_id: required"));
        }
        self.hub.game(id).await.map_err(|e| status(&e))
    }

    /// The game as protobuf, read in its task; `with_moves` false leaves out the score
    /// sheet (see the proto's `Game.moves`).
    async fn view(&self, handle: &GameHandle, with_moves: bool) -> Result<pb::Game, Status> {
        self.view_as(handle, Audience::Live, with_moves).await
    }

    /// The game as `audience` sees it (viewers: behind the broadcast delay).
    async fn view_as(
        &self,
        handle: &GameHandle,
        audience: Audience,
        with_moves: bool,
    ) -> Result<pb::Game, Status> {
        let meta = handle.meta().clone();
        handle
            .read_as(audience, move |session, now| {
                convert::game_pb(&meta, session, now, with_moves)
            })
            .await
            .map_err(|e| status(&e))
    }

    /// Runs a command after checking the role; returns the game and the new events.
    async fn run(
        &self,
        role: &Role,
        game_id: &str,
        action: impl FnOnce(&GameMeta) -> Action<'_>,
        actor: Actor,
        cmd: Command,
        expected_seq: u64,
    ) -> Result<(pb::Game, Vec<pb::GameEvent>), Status> {
        let handle = self.game(game_id).await?;
        role.allows(action(handle.meta())).map_err(auth_status)?;
        let meta = handle.meta().clone();
        // The reply's game is read in the same step as the command, from the same state.
        let (events, game) = handle
            .command(actor, cmd, Some(expected_seq), move |session, now| {
                convert::game_pb(&meta, session, now, false)
            })
            .await
            .map_err(|e| status(&e))?;
        let events = events
            .iter()
            .map(|e| convert::event_pb(e, handle.meta()))
            .collect();
        Ok((game, events))
    }

    /// The side a player request acts for: the field, else the player's own side, else
    /// (for an arbiter) the side to move.
    async fn side_for(&self, role: &Role, field: i32, game_id: &str) -> Result<Color, Status> {
        if field != 0 {
            return convert::side(field, "side").map_err(bad);
        }
        if let Role::Player { side, .. } = role {
            return Ok(*side);
        }
        let handle = self.game(game_id).await?;
        handle
            .read(|s, _| s.position().turn())
            .await
            .map_err(|e| status(&e))
    }

    /// A player command whose only argument is the side.
    async fn side_command(
        &self,
        role: Role,
        game_id: &str,
        side_field: i32,
        expected_seq: u64,
        make: impl FnOnce(Color) -> Command,
    ) -> Result<(pb::Game, Vec<pb::GameEvent>), Status> {
        let side = self.side_for(&role, side_field, game_id).await?;
        self.play(role, game_id, side, make(side), expected_seq)
            .await
    }

    async fn play(
        &self,
        req_role: Role,
        game_id: &str,
        side: Color,
        cmd: Command,
        expected_seq: u64,
    ) -> Result<(pb::Game, Vec<pb::GameEvent>), Status> {
        let actor = match &req_role {
            Role::Player { side, .. } => Actor::Player(*side),
            _ => Actor::Arbiter(role_name(&req_role)),
        };
        self.run(
            &req_role,
            game_id,
            |m| Action::Play {
                game: &m.id,
                event: &m.event,
                side,
            },
            actor,
            cmd,
            expected_seq,
        )
        .await
    }

    async fn arbitrate(
        &self,
        role: Role,
        game_id: &str,
        action: ArbiterAction,
    ) -> Result<(pb::Game, Vec<pb::GameEvent>), Status> {
        let actor = Actor::Arbiter(role_name(&role));
        self.run(
            &role,
            game_id,
            |m| Action::Arbitrate {
                game: &m.id,
                event: &m.event,
            },
            actor,
            Command::Arbiter(action),
            0,
        )
        .await
    }
}

/// Who sees a game live: arbiters (of its event, or of all), its own board and its own
/// players. Everyone else is its public and sees it behind its broadcast delay.
fn audience(role: &Role, meta: &GameMeta) -> Audience {
    match role {
        Role::Arbiter { event: None } => Audience::Live,
        Role::Arbiter { event: Some(e) } if *e == meta.event => Audience::Live,
        Role::Board { game } | Role::Player { game, .. } if *game == meta.id => Audience::Live,
        _ => Audience::Public,
    }
}

fn role_name(role: &Role) -> String {
    match role {
        Role::Arbiter { event: Some(e) } => format!("arbiter:{e}"),
        Role::Arbiter { event: None } => "arbiter".into(),
        Role::Board { game } => format!("board:{game}"),
        Role::Player { game, side } => format!("{side}:{game}"),
        Role::Viewer => "viewer".into(),
    }
}

#[tonic::async_trait]
impl pb::rules_service_server::RulesService for Api {
    async fn legal_moves(
        &self,
        req: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<pb::LegalMovesResponse>, Status> {
        self.role(&req)?;
        let r = req.into_inner();
        let variant = convert::variant(r.variant).map_err(bad)?;
        let pos = if r.fen.trim().is_empty() {
            Position::start(variant)
        } else {
            parse_fen(&r.fen, variant).map_err(|e| Status::invalid_argument(format!("fen: {e}")))?
        };
        Ok(Response::new(pb::LegalMovesResponse {
            moves: convert::legal_moves(&pos),
        }))
    }
}

macro_rules! reply {
    ($ty:ident, $pair:expr) => {{
        let (game, events) = $pair;
        Ok(Response::new(pb::$ty {
            game: Some(game),
            events,
        }))
    }};
}

#[tonic::async_trait]
impl pb::game_service_server::GameService for Api {
    async fn create_game(
        &self,
        req: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        role.allows(Action::Create { event: &r.event })
            .map_err(auth_status)?;
        let variant = convert::variant(r.variant).map_err(bad)?;
        let settings =
            convert::settings(variant, &r.time_control, r.settings.as_ref()).map_err(bad)?;
        let meta = GameMeta {
            id: r.game_id.clone(),
            event: r.event.clone(),
            round: r.round.clone(),
            board: r.board,
            white: convert::player(r.white.as_ref()),
            black: convert::player(r.black.as_ref()),
        };
        let fen = (!r.start_fen.trim().is_empty()).then_some(r.start_fen.as_str());
        let handle = self
            .hub
            .create(meta, settings, fen, Actor::Arbiter(role_name(&role)))
            .await
            .map_err(|e| match e {
                HubError::Game(crate::game::GameError::Fen(f)) => {
                    Status::invalid_argument(format!("start_fen: {f}"))
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
        let handle = self.game(&req.get_ref().game_id).await?;
        let audience = audience(&role, handle.meta());
        Ok(Response::new(self.view_as(&handle, audience, true).await?))
    }

    async fn list_games(
        &self,
        req: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let filter = GameFilter {
            event: (!r.event.is_empty()).then_some(r.event),
            round: (!r.round.is_empty()).then_some(r.round),
            unfinished_only: r.unfinished_only,
        };
        // Games in memory answer from their task; finished games that left memory from
        // their stored summary (no replay), unless their score sheets are asked for.
        let listed = self.hub.listing(&filter).await.map_err(|e| status(&e))?;
        let mut games = Vec::with_capacity(listed.len());
        for item in listed {
            // A stored game left memory only after its public delay had passed.
            let game = match item {
                Listed::Stored(meta, summary) if !r.include_moves => {
                    convert::summary_pb(&meta, &summary, &[])
                }
                Listed::Stored(meta, _) => {
                    let handle = self.game(&meta.id).await?;
                    self.view_as(&handle, audience(&role, &meta), true).await?
                }
                Listed::Live(handle) => {
                    let audience = audience(&role, handle.meta());
                    self.view_as(&handle, audience, r.include_moves).await?
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
        let role = self.role(&req)?;
        let r = req.into_inner();
        let actor = Actor::Arbiter(role_name(&role));
        let pair = self
            .run(
                &role,
                &r.game_id,
                |m| Action::Arbitrate {
                    game: &m.id,
                    event: &m.event,
                },
                actor,
                Command::Start,
                r.expected_seq,
            )
            .await?;
        reply!(StartGameResponse, pair)
    }

    async fn submit_move(
        &self,
        req: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        if r.r#move.trim().is_empty() {
            return Err(Status::invalid_argument("move: required"));
        }
        let side = self.side_for(&role, r.side, &r.game_id).await?;
        let cmd = Command::SubmitMove {
            side,
            notation: r.r#move,
            offer_draw: false,
        };
        let pair = self
            .play(role, &r.game_id, side, cmd, r.expected_seq)
            .await?;
        reply!(SubmitMoveResponse, pair)
    }

    async fn press_clock(
        &self,
        req: Request<pb::PressClockRequest>,
    ) -> Result<Response<pb::PressClockResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let pair = self
            .side_command(role, &r.game_id, r.side, r.expected_seq, |side| {
                Command::PressClock { side }
            })
            .await?;
        reply!(PressClockResponse, pair)
    }

    async fn offer_draw(
        &self,
        req: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let pair = self
            .side_command(role, &r.game_id, r.side, r.expected_seq, |side| {
                Command::OfferDraw { side }
            })
            .await?;
        reply!(OfferDrawResponse, pair)
    }

    async fn respond_to_draw_offer(
        &self,
        req: Request<pb::RespondToDrawOfferRequest>,
    ) -> Result<Response<pb::RespondToDrawOfferResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let side = self.side_for(&role, r.side, &r.game_id).await?;
        let response = convert::response(r.response).map_err(bad)?;
        let cmd = Command::RespondToOffer { side, response };
        let pair = self
            .play(role, &r.game_id, side, cmd, r.expected_seq)
            .await?;
        reply!(RespondToDrawOfferResponse, pair)
    }

    async fn claim_draw(
        &self,
        req: Request<pb::ClaimDrawRequest>,
    ) -> Result<Response<pb::ClaimDrawResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let side = self.side_for(&role, r.side, &r.game_id).await?;
        let cmd = Command::ClaimDraw {
            side,
            kind: convert::claim_kind(r.kind),
            written_move: (!r.written_move.trim().is_empty()).then_some(r.written_move),
        };
        let pair = self
            .play(role, &r.game_id, side, cmd, r.expected_seq)
            .await?;
        reply!(ClaimDrawResponse, pair)
    }

    async fn resign(
        &self,
        req: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let pair = self
            .side_command(role, &r.game_id, r.side, r.expected_seq, |side| {
                Command::Resign { side }
            })
            .await?;
        reply!(ResignResponse, pair)
    }
}

#[tonic::async_trait]
impl pb::arbiter_service_server::ArbiterService for Api {
    async fn pause_clocks(
        &self,
        req: Request<pb::PauseClocksRequest>,
    ) -> Result<Response<pb::PauseClocksResponse>, Status> {
        let role = self.role(&req)?;
        let pair = self
            .arbitrate(role, &req.get_ref().game_id, ArbiterAction::PauseClocks)
            .await?;
        reply!(PauseClocksResponse, pair)
    }

    async fn resume_clocks(
        &self,
        req: Request<pb::ResumeClocksRequest>,
    ) -> Result<Response<pb::ResumeClocksResponse>, Status> {
        let role = self.role(&req)?;
        let pair = self
            .arbitrate(role, &req.get_ref().game_id, ArbiterAction::ResumeClocks)
            .await?;
        reply!(ResumeClocksResponse, pair)
    }

    async fn adjust_clock(
        &self,
        req: Request<pb::AdjustClockRequest>,
    ) -> Result<Response<pb::AdjustClockResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let side = convert::side(r.side, "side").map_err(bad)?;
        let action = match r.change {
            Some(pb::adjust_clock_request::Change::SetRemainingMs(ms)) if ms > 0 => {
                ArbiterAction::SetTime {
                    side,
                    remaining_ms: ms as u64,
                }
            }
            Some(pb::adjust_clock_request::Change::AddMs(ms)) if ms > 0 => ArbiterAction::AddTime {
                side,
                amount_ms: ms as u64,
            },
            Some(pb::adjust_clock_request::Change::AddMs(ms)) if ms < 0 => ArbiterAction::Penalty {
                side,
                amount_ms: ms.unsigned_abs(),
                reason: r.reason.clone(),
            },
            _ => {
                return Err(Status::invalid_argument(
                    "change: set_remaining_ms > 0 or a non-zero add_ms required",
                ));
            }
        };
        let pair = self.arbitrate(role, &r.game_id, action).await?;
        reply!(AdjustClockResponse, pair)
    }

    async fn declare_result(
        &self,
        req: Request<pb::DeclareResultRequest>,
    ) -> Result<Response<pb::DeclareResultResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let outcome = convert::outcome(r.result).map_err(bad)?;
        let reason = if r.explanation.trim().is_empty() {
            "arbiter's decision".to_string()
        } else {
            r.explanation
        };
        let pair = self
            .arbitrate(
                role,
                &r.game_id,
                ArbiterAction::DeclareResult { outcome, reason },
            )
            .await?;
        reply!(DeclareResultResponse, pair)
    }

    async fn rule_on_claim(
        &self,
        req: Request<pb::RuleOnClaimRequest>,
    ) -> Result<Response<pb::RuleOnClaimResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let upheld = match pb::ClaimRuling::try_from(r.ruling) {
            Ok(pb::ClaimRuling::Correct) => true,
            Ok(pb::ClaimRuling::Incorrect) => false,
            _ => {
                return Err(Status::invalid_argument(
                    "ruling: CORRECT or INCORRECT required",
                ));
            }
        };
        let pair = self
            .arbitrate(role, &r.game_id, ArbiterAction::RuleOnClaim { upheld })
            .await?;
        reply!(RuleOnClaimResponse, pair)
    }

    async fn rule_on_irregularity(
        &self,
        req: Request<pb::RuleOnIrregularityRequest>,
    ) -> Result<Response<pb::RuleOnIrregularityResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let ruling = match pb::IrregularityRuling::try_from(r.ruling) {
            Ok(pb::IrregularityRuling::Stands) => Ruling::Stands,
            Ok(pb::IrregularityRuling::Corrected) => Ruling::Corrected,
            _ => {
                return Err(Status::invalid_argument(
                    "ruling: STANDS or CORRECTED required",
                ));
            }
        };
        let pair = self
            .arbitrate(
                role,
                &r.game_id,
                ArbiterAction::RuleOnIrregularity { ruling },
            )
            .await?;
        reply!(RuleOnIrregularityResponse, pair)
    }

    async fn issue_warning(
        &self,
        req: Request<pb::IssueWarningRequest>,
    ) -> Result<Response<pb::IssueWarningResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let side = convert::side(r.side, "side").map_err(bad)?;
        let pair = self
            .arbitrate(
                role,
                &r.game_id,
                ArbiterAction::Warn {
                    side,
                    reason: r.reason,
                },
            )
            .await?;
        reply!(IssueWarningResponse, pair)
    }

    async fn set_position(
        &self,
        req: Request<pb::SetPositionRequest>,
    ) -> Result<Response<pb::SetPositionResponse>, Status> {
        let role = self.role(&req)?;
        let r = req.into_inner();
        let pair = self
            .arbitrate(role, &r.game_id, ArbiterAction::SetPosition { fen: r.fen })
            .await?;
        reply!(SetPositionResponse, pair)
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;
type FeedbackStream = Pin<Box<dyn Stream<Item = Result<pb::BoardFeedback, Status>> + Send>>;

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
        let stream = super::watch::watch(self.hub.metrics(), watch);
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
        let metas = self.hub.list(&filter).await.map_err(|e| status(&e))?;
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
            self.hub.metrics(),
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

#[tonic::async_trait]
impl pb::board_service_server::BoardService for Api {
    type ConnectStream = FeedbackStream;

    async fn connect(
        &self,
        req: Request<Streaming<pb::BoardMessage>>,
    ) -> Result<Response<Self::ConnectStream>, Status> {
        let role = self.role(&req)?;
        let inbound = req.into_inner();
        Ok(Response::new(Box::pin(super::board::session(
            self.clone(),
            role,
            inbound,
        ))))
    }
}

impl Api {
    /// Binds a board connection to a game after checking the role.
    pub(super) async fn bind_board(
        &self,
        role: &Role,
        game_id: &str,
    ) -> Result<GameHandle, Status> {
        let handle = self.game(game_id).await?;
        role.allows(Action::Board {
            game: &handle.meta().id,
            event: &handle.meta().event,
        })
        .map_err(auth_status)?;
        Ok(handle)
    }

    /// Runs one board input on a bound game.
    pub(super) async fn board_input(
        &self,
        handle: &GameHandle,
        board_id: &str,
        input: BoardInput,
    ) -> Result<Vec<pb::GameEvent>, Status> {
        let (events, ()) = handle
            .command(
                Actor::Board(board_id.to_string()),
                Command::Board(input),
                None,
                |_, _| (),
            )
            .await
            .map_err(|e| status(&e))?;
        Ok(events
            .iter()
            .map(|e| convert::event_pb(e, handle.meta()))
            .collect())
    }

    /// The game as the API shows it.
    pub(super) async fn game_view(&self, handle: &GameHandle) -> Result<pb::Game, Status> {
        self.view(handle, true).await
    }
}

/// A snapshot from a board message.
pub(super) fn occupancy(o: pb::BoardOccupancy) -> Occupancy {
    Occupancy {
        white: o.white,
        black: o.black,
        kings: (!o.kings.is_empty()).then_some(o.kings),
    }
}
