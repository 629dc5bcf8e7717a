//! The state every gRPC service shares ([`Api`]): authentication, the audience of a
//! read, and running a command in the game's task. The services themselves are one file
//! each (`rules`, `games`, `arbiter`, `broadcast`, `board`).

use std::sync::Arc;

use tonic::{Request, Status};

use super::auth::{Action, Caller, Place, Role, Tokens};
use super::convert;
use super::error::Refusal;
use super::error::{auth_status, status};
use super::pb;
use super::request::{ParseGameRequest, Wants};
use super::token_table::TokenTable;
use super::validate::checked;
use crate::game::{Actor, BoardInput, Command, Occupancy};
use crate::hub::{Audience, GameHandle, GameMeta, Hub, Pending};
use crate::rules::Color;
use crate::store::GameFilter;

/// The state every service shares.
#[derive(Clone)]
pub struct Api {
    hub: Arc<Hub>,
    tokens: Arc<TokenTable>,
    /// Each event's default broadcast delay (ms), for games created without one.
    event_delays: Arc<std::collections::BTreeMap<String, u64>>,
    /// How fast one board stream may send.
    board_rate: super::rate::BoardRate,
    /// A bound board silent this long while its clock runs is not responding.
    board_silence: std::time::Duration,
    /// Whether a caller without a token may follow broadcasts as the public
    /// (`[web] public_broadcast`).
    public_broadcast: bool,
    /// Each game's latest PDN export, shared by the HTTP relays.
    pdn_cache: Arc<super::pdn_cache::PdnCache>,
    /// The round feeds the round streams share.
    feeds: Arc<super::round_feed::Feeds>,
    /// Which board stream holds each game.
    board_seats: Arc<super::board_seat::Seats>,
    /// The tournaments on the hub.
    tournaments: Arc<crate::hub::Tournaments>,
    /// The Swiss pairing engine, if one is configured.
    pairing_engine: Option<Arc<crate::hub::PairingEngine>>,
}

impl Api {
    /// Services over a hub and a token table.
    pub fn new(hub: Arc<Hub>, tokens: Arc<Tokens>) -> Api {
        Api {
            tokens: Arc::new(TokenTable::new(Arc::unwrap_or_clone(tokens))),
            event_delays: Arc::default(),
            board_rate: super::rate::BoardRate::default(),
            board_silence: std::time::Duration::from_secs(10),
            public_broadcast: true,
            pdn_cache: Arc::default(),
            feeds: Arc::default(),
            board_seats: Arc::default(),
            tournaments: crate::hub::Tournaments::new(Arc::clone(&hub)),
            pairing_engine: None,
            hub,
        }
    }

    /// Swiss rounds paired by this engine when their pairings are not given.
    #[must_use]
    pub fn with_pairing_engine(mut self, engine: Option<crate::hub::PairingEngine>) -> Api {
        self.pairing_engine = engine.map(Arc::new);
        self
    }

    /// The Swiss pairing engine, if one is configured.
    pub(super) fn pairing_engine(&self) -> Option<&Arc<crate::hub::PairingEngine>> {
        self.pairing_engine.as_ref()
    }

    /// The tournaments on the hub.
    pub(super) fn tournaments(&self) -> &Arc<crate::hub::Tournaments> {
        &self.tournaments
    }

    /// Which board stream holds each game.
    pub(super) fn board_seats(&self) -> &super::board_seat::Seats {
        &self.board_seats
    }

    pub(super) fn pdn_cache(&self) -> &super::pdn_cache::PdnCache {
        &self.pdn_cache
    }

    pub(super) fn feeds(&self) -> &Arc<super::round_feed::Feeds> {
        &self.feeds
    }

    /// Whether callers without a token follow broadcasts (BroadcastService, the HTTP PDN
    /// routes, the live page) as the public, behind each game's delay (the default), or
    /// are refused with UNAUTHENTICATED like every other service's.
    #[must_use]
    pub fn with_public_broadcast(mut self, public: bool) -> Api {
        self.public_broadcast = public;
        self
    }

    /// The same services, each board stream held to `rate`.
    pub fn with_board_rate(mut self, rate: super::rate::BoardRate) -> Api {
        self.board_rate = rate;
        self
    }

    /// How fast one board stream may send.
    pub(super) fn board_rate(&self) -> super::rate::BoardRate {
        self.board_rate
    }

    /// The same services, a bound board recorded as not responding after `silence`
    /// without a message while its game's clock runs (checked every second).
    #[must_use]
    pub fn with_board_silence(mut self, silence: std::time::Duration) -> Api {
        self.board_silence = silence;
        self
    }

    /// How long a bound board may be silent while its clock runs.
    pub(super) fn board_silence(&self) -> std::time::Duration {
        self.board_silence
    }

    /// The same services, with each named event's default broadcast delay (ms): a game
    /// of that event created without `settings.broadcast_delay_ms` takes it.
    pub fn with_event_delays(mut self, delays: std::collections::BTreeMap<String, u64>) -> Api {
        self.event_delays = Arc::new(delays);
        self
    }

    /// The same services over `table`, whose list the server replaces on SIGHUP.
    #[must_use]
    pub fn with_token_table(mut self, table: Arc<TokenTable>) -> Api {
        self.tokens = table;
        self
    }

    /// The token list as it stands.
    pub(super) fn tokens(&self) -> Arc<Tokens> {
        self.tokens.current()
    }

    /// Resolves when the token `req` was made with is revoked by a reload (never for a
    /// request without one): a stream opened with it ends then ([`super::token_table::until_revoked`]).
    pub(super) fn revocation<T>(
        &self,
        req: &Request<T>,
    ) -> impl Future<Output = ()> + Send + use<T> {
        let header = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        self.revocation_of(header)
    }

    /// [`Self::revocation`] for an `authorization` header value.
    pub(crate) fn revocation_of(
        &self,
        header: Option<String>,
    ) -> impl Future<Output = ()> + Send + use<> {
        let caller = self.tokens().caller(header.as_deref()).ok();
        self.tokens.revoked(header, caller)
    }

    /// The default broadcast delay (ms) of games of `event`: 0 unless configured.
    pub(super) fn event_delay(&self, event: &str) -> u64 {
        self.event_delays.get(event).copied().unwrap_or(0)
    }

    /// The hub the services run on.
    pub(crate) fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    pub(super) fn role<T>(&self, req: &Request<T>) -> Result<Role, Status> {
        self.caller(req).map(|c| c.role)
    }

    /// The caller of a request (its token's role and label).
    pub(super) fn caller<T>(&self, req: &Request<T>) -> Result<Caller, Status> {
        let header = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        self.tokens().caller(header).map_err(auth_status)
    }

    /// The role of a broadcast caller by its `authorization` header (`Bearer <token>`):
    /// none is the public when broadcasts are public (an arbiter on an open server); the
    /// HTTP routes use it as BroadcastService does.
    ///
    /// # Errors
    /// UNAUTHENTICATED for a token the server does not know, or for none when broadcasts
    /// are not public.
    pub(crate) fn role_of(&self, authorization: Option<&str>) -> Result<Role, Status> {
        let tokens = self.tokens();
        if authorization.is_none() && self.public_broadcast && !tokens.is_open() {
            return Ok(Role::Viewer);
        }
        tokens.role(authorization).map_err(auth_status)
    }

    /// The role of a broadcast request (BroadcastService): without a token, the public
    /// when broadcasts are public.
    pub(super) fn broadcast_role<T>(&self, req: &Request<T>) -> Result<Role, Status> {
        let header = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        self.role_of(header)
    }

    pub(super) async fn game(&self, id: &str) -> Result<GameHandle, Status> {
        if id.trim().is_empty() {
            return Err(Refusal::Field("game_id: required".into()).into());
        }
        self.hub.game(id).await.map_err(|e| status(&e))
    }

    /// The game as protobuf, read in its task; `with_moves` false leaves out the score
    /// sheet (see the proto's `Game.moves`).
    pub(super) async fn view(
        &self,
        handle: &GameHandle,
        with_moves: bool,
    ) -> Result<pb::Game, Status> {
        self.view_as(handle, Audience::Live, with_moves).await
    }

    /// The game as `audience` sees it (viewers: behind the broadcast delay).
    pub(super) async fn view_as(
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

    /// Runs a command after checking the role (`acts_for`: the side a player command acts
    /// for, which its player or an arbiter may; `None`: an arbiter's command); returns the
    /// game and the new events.
    async fn run(
        &self,
        role: &Role,
        game_id: &str,
        acts_for: Option<Color>,
        actor: Actor,
        cmd: Pending,
        expected_seq: u64,
    ) -> Result<(pb::Game, Vec<pb::GameEvent>), Status> {
        let handle = self.game(game_id).await?;
        // A side named: a player's right (an arbiter has it too); none: an arbiter's.
        let action = match acts_for {
            Some(side) => Action::Play {
                game: handle.meta(),
                side,
            },
            None => Action::Arbitrate(handle.meta()),
        };
        role.allows(action).map_err(auth_status)?;
        let meta = handle.meta().clone();
        // The reply's game is read in the same step as the command, from the same state.
        let (events, game) = handle
            .send_command(actor, cmd, Some(expected_seq), None, move |session, now| {
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

    /// The one path of a command on a game (issue 39 item 3): the caller, the request's
    /// fields checked and parsed ([`ParseGameRequest`]), the side a player command acts
    /// for, the caller's right, then the game's task.
    pub(super) async fn game_request<R: ParseGameRequest>(
        &self,
        req: Request<R>,
    ) -> Result<(pb::Game, Vec<pb::GameEvent>), Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?.parse()?;
        match r.wants {
            Wants::Arbitrate(cmd) => {
                let actor = caller.arbiter();
                self.run(
                    &caller.role,
                    &r.game_id,
                    None,
                    actor,
                    Pending::Ready(cmd),
                    r.expected_seq,
                )
                .await
            }
            Wants::Play { side, play } => {
                let side = match (side, &caller.role) {
                    (Some(side), _) => Some(side),
                    (None, Role::Player { side, .. }) => Some(*side),
                    (None, Role::Arbiter { .. }) if play.side_required_of_an_arbiter() => {
                        return Err(Refusal::Field(
                            "side: SIDE_WHITE or SIDE_BLACK required (an arbiter names the \
                             side that resigns)"
                                .into(),
                        )
                        .into());
                    }
                    // An arbiter who names no side acts for the side to move, which the
                    // game's task takes when it decides the command (no read before it).
                    (None, Role::Arbiter { .. }) => None,
                    // Refused whatever the side, without reading the game: the side to
                    // move is live, and a viewer sees the game behind its broadcast
                    // delay. An unknown game is still NOT_FOUND.
                    (None, role) => {
                        let handle = self.game(&r.game_id).await?;
                        return Err(Refusal::Denied(format!(
                            "{} may not act for a player in game {}",
                            role.describe(),
                            handle.meta().id
                        ))
                        .into());
                    }
                };
                let actor = match &caller.role {
                    Role::Player { side, .. } => Actor::Player(*side),
                    _ => caller.arbiter(),
                };
                let cmd = match side {
                    Some(side) => Pending::Ready(play.by(side)),
                    None => Pending::ForSideToMove(play),
                };
                self.run(&caller.role, &r.game_id, side, actor, cmd, r.expected_seq)
                    .await
            }
        }
    }
}

impl Api {
    /// Binds a board connection to a game after checking the role. An empty `game_id` is
    /// the game of the board token's place ([`Api::game_on_board`]).
    pub(super) async fn bind_board(
        &self,
        role: &Role,
        game_id: &str,
    ) -> Result<GameHandle, Status> {
        let handle = if game_id.is_empty() {
            self.game_on_board(role).await?
        } else {
            self.game(game_id).await?
        };
        role.allows(Action::Board(handle.meta()))
            .map_err(auth_status)?;
        Ok(handle)
    }

    /// The game a board token plays when its bind names none: the token's game; for a
    /// token scoped to a board number, the unfinished game on that board of its event (a
    /// tournament's current round), else the last game created on it (a board back after
    /// the end hears the end). Several unfinished games on the board are refused: the
    /// bind must name one.
    async fn game_on_board(&self, role: &Role) -> Result<GameHandle, Status> {
        let (event, place) = match role {
            Role::Board { event, place } => (event, place),
            _ => {
                return Err(Refusal::Field(
                    "bind.game_id: required (only a board token knows its game or board)".into(),
                )
                .into());
            }
        };
        let n = match place {
            Place::Game(g) => return self.game(g).await,
            Place::Board(n) => *n,
        };
        let mut filter = GameFilter {
            event: Some(event.clone()),
            round: None,
            unfinished_only: true,
        };
        let on_board = |games: Vec<GameMeta>| -> Vec<GameMeta> {
            games.into_iter().filter(|m| m.board == n).collect()
        };
        let unfinished = on_board(self.hub.list(&filter).await.map_err(|e| status(&e))?);
        let id = match unfinished.as_slice() {
            [one] => one.id.clone(),
            [] => {
                filter.unfinished_only = false;
                let all = on_board(
                    self.hub
                        .list_by_creation(&filter)
                        .await
                        .map_err(|e| status(&e))?,
                );
                match all.last() {
                    Some(m) => m.id.clone(),
                    None => {
                        return Err(Refusal::NotFound(format!(
                            "no game on board {n} of event '{event}' yet (the round is not \
                             paired): bind again once it is"
                        ))
                        .into());
                    }
                }
            }
            several => {
                let ids: Vec<&str> = several.iter().map(|m| m.id.as_str()).collect();
                return Err(Refusal::NotNow(format!(
                    "board {n} of event '{event}' has {} unfinished games ({}): \
                     bind.game_id must name one",
                    ids.len(),
                    ids.join(", ")
                ))
                .into());
            }
        };
        self.game(&id).await
    }

    /// Runs one board input on a bound game.
    pub(super) async fn board_input(
        &self,
        handle: &GameHandle,
        board_id: &str,
        input: BoardInput,
        board_ms: Option<i64>,
    ) -> Result<Vec<pb::GameEvent>, Status> {
        let (events, ()) = handle
            .send_command(
                Actor::Board(board_id.to_string()),
                Pending::Ready(Command::Board(input)),
                None,
                board_ms,
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
/// A board's reading.
///
/// # Errors
/// A colour-blind reading (`occupied`), which the judge does not read yet.
pub(super) fn occupancy(o: pb::BoardOccupancy) -> Result<Occupancy, convert::BadField> {
    if !o.occupied.is_empty() {
        return Err(convert::BadField(
            "snapshot.occupied: colour-blind snapshots are not supported; send white and black"
                .into(),
        ));
    }
    Ok(Occupancy {
        white: o.white,
        black: o.black,
        kings: (!o.kings.is_empty()).then_some(o.kings),
    })
}
