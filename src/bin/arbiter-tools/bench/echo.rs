//! The transport anchor's server: a bare tonic `GameService` that answers every
//! `SubmitMove` with one canned response captured from the real service (same encoded
//! size), decides nothing and records nothing. Driven by the same client code,
//! alternating with the real service on the memory store (`anchor.rs`), it says how much
//! of a move's cost is gRPC, HTTP/2 and loopback TCP alone.
//!
//! With a hop ([`Echo::with_hop`]) each `SubmitMove` goes to a task of its game over a
//! bounded channel and waits for the task's oneshot reply, as the service's commands go
//! to their game's task (`hub/`): that echo says what the hop alone costs, the floor the
//! one-task-per-game design sets under the service's anchor ratio on this machine.
//!
//! For the fan-out anchor ([`super::fanout`]) it also serves `BroadcastService`'s
//! `WatchEvent` and `WatchGame`: each `SubmitMove` publishes the events of a move
//! captured from the service's stream of the same kind (the same encoded sizes, a round
//! stream's cursor included), stamped with the time of publication, to every round stream
//! and to the streams of the move's game, as a plain tonic server would (broadcast
//! channels, each stream cloning and encoding each event). Driven by the same watchers
//! as the service, it says what the fan-out costs on this machine with nothing of the
//! judge in it.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use draughts_arbiter::api::pb;
use draughts_arbiter::hub::HubConfig;

/// The echo service: only `SubmitMove` answers.
pub(super) struct Echo {
    canned: pb::SubmitMoveResponse,
    fanout: Option<Arc<Fanout>>,
    hops: Option<Hops>,
}

impl Echo {
    pub(super) fn new(canned: pb::SubmitMoveResponse) -> Echo {
        Echo {
            canned,
            fanout: None,
            hops: None,
        }
    }

    /// An echo whose moves are published to the streams of `fanout`.
    pub(super) fn publishing(canned: pb::SubmitMoveResponse, fanout: Arc<Fanout>) -> Echo {
        Echo {
            canned,
            fanout: Some(fanout),
            hops: None,
        }
    }

    /// An echo whose answers come from a task per game, as the service's do (the hop).
    pub(super) fn with_hop(canned: pb::SubmitMoveResponse) -> Echo {
        Echo {
            canned,
            fanout: None,
            hops: Some(Hops::default()),
        }
    }
}

/// A game task's queue: each message is the oneshot its answer goes to.
type HopSender = mpsc::Sender<oneshot::Sender<pb::SubmitMoveResponse>>;

/// The games' tasks of the echo with a hop, by game id.
#[derive(Default)]
struct Hops(Mutex<HashMap<String, HopSender>>);

impl Hops {
    /// The queue of `game`'s task, started at its first move. The task answers each
    /// message with the canned response until the echo (and with it the queue) goes.
    fn game(&self, game: &str, canned: &pb::SubmitMoveResponse) -> HopSender {
        let mut games = self.0.lock().unwrap_or_else(|p| p.into_inner());
        games
            .entry(game.to_string())
            .or_insert_with(|| {
                // As deep as a game task's queue in the service.
                let (tx, mut rx) = mpsc::channel::<oneshot::Sender<pb::SubmitMoveResponse>>(
                    HubConfig::default().command_queue,
                );
                let canned = canned.clone();
                tokio::spawn(async move {
                    while let Some(reply) = rx.recv().await {
                        let _ = reply.send(canned.clone());
                    }
                });
                tx
            })
            .clone()
    }
}

/// What a move publishes.
type Published = Arc<Vec<pb::GameEvent>>;

/// The fan-out anchor's channels: what a move publishes, and to whom.
pub(super) struct Fanout {
    events: Vec<pb::GameEvent>,
    round: broadcast::Sender<Published>,
    games: Mutex<HashMap<String, broadcast::Sender<Published>>>,
}

impl Fanout {
    /// Publishes `events` (a move's, captured from the service) at each move.
    pub(super) fn new(events: Vec<pb::GameEvent>) -> Arc<Fanout> {
        Arc::new(Fanout {
            events,
            round: broadcast::channel(1024).0,
            games: Mutex::new(HashMap::new()),
        })
    }

    /// A game's channel.
    fn game(&self, id: &str) -> broadcast::Sender<Published> {
        let mut games = self.games.lock().unwrap_or_else(|p| p.into_inner());
        games
            .entry(id.to_string())
            .or_insert_with(|| broadcast::channel(1024).0)
            .clone()
    }

    /// The move's events, stamped now (the watchers' publish → receive latency is their
    /// clock at receipt minus this stamp, as for the service), to the round and to the
    /// game.
    fn publish(&self, game_id: &str) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut events = self.events.clone();
        for e in &mut events {
            e.monotonic_ms = now;
        }
        let events = Arc::new(events);
        // A channel with no stream open: nobody to tell.
        if self.round.receiver_count() > 0 {
            let _ = self.round.send(events.clone());
        }
        let _ = self.game(game_id).send(events);
    }
}

/// A stream of what `rx` hears, each event cloned (and then encoded) for it alone.
fn follow(mut rx: broadcast::Receiver<Published>) -> Events {
    Box::pin(async_stream::stream! {
        loop {
            match rx.recv().await {
                Ok(events) => {
                    for e in events.iter() {
                        yield Ok(e.clone());
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    })
}

/// The fan-out anchor's `BroadcastService`: `WatchEvent` (any request: every move) and
/// `WatchGame` (the game's moves) answer.
pub(super) struct EchoBroadcast(pub(super) Arc<Fanout>);

/// An echo stream.
type Events = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

#[tonic::async_trait]
impl pb::broadcast_service_server::BroadcastService for EchoBroadcast {
    type WatchGameStream = Events;
    type WatchEventStream = Events;

    async fn watch_game(
        &self,
        req: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Events>, Status> {
        let rx = self.0.game(&req.get_ref().game_id).subscribe();
        Ok(Response::new(follow(rx)))
    }

    async fn watch_event(
        &self,
        _: Request<pb::WatchEventRequest>,
    ) -> Result<Response<Events>, Status> {
        Ok(Response::new(follow(self.0.round.subscribe())))
    }

    async fn export_pdn(
        &self,
        _: Request<pb::ExportPdnRequest>,
    ) -> Result<Response<pb::ExportPdnResponse>, Status> {
        Err(Status::unimplemented("the echo server only streams"))
    }
}

fn only_submit() -> Status {
    Status::unimplemented("the echo server answers SubmitMove only")
}

#[tonic::async_trait]
impl pb::game_service_server::GameService for Echo {
    async fn create_game(
        &self,
        _: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::Game>, Status> {
        Err(only_submit())
    }

    async fn get_game(&self, _: Request<pb::GetGameRequest>) -> Result<Response<pb::Game>, Status> {
        Err(only_submit())
    }

    async fn list_games(
        &self,
        _: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        Err(only_submit())
    }

    async fn start_game(
        &self,
        _: Request<pb::StartGameRequest>,
    ) -> Result<Response<pb::StartGameResponse>, Status> {
        Err(only_submit())
    }

    async fn submit_move(
        &self,
        req: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        if let Some(fanout) = &self.fanout {
            fanout.publish(&req.get_ref().game_id);
        }
        if let Some(hops) = &self.hops {
            let (reply, answer) = oneshot::channel();
            hops.game(&req.get_ref().game_id, &self.canned)
                .send(reply)
                .await
                .map_err(|_| Status::unavailable("the echo's game task is gone"))?;
            let canned = answer
                .await
                .map_err(|_| Status::unavailable("the echo's game task is gone"))?;
            return Ok(Response::new(canned));
        }
        Ok(Response::new(self.canned.clone()))
    }

    async fn press_clock(
        &self,
        _: Request<pb::PressClockRequest>,
    ) -> Result<Response<pb::PressClockResponse>, Status> {
        Err(only_submit())
    }

    async fn offer_draw(
        &self,
        _: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        Err(only_submit())
    }

    async fn respond_to_draw_offer(
        &self,
        _: Request<pb::RespondToDrawOfferRequest>,
    ) -> Result<Response<pb::RespondToDrawOfferResponse>, Status> {
        Err(only_submit())
    }

    async fn claim_draw(
        &self,
        _: Request<pb::ClaimDrawRequest>,
    ) -> Result<Response<pb::ClaimDrawResponse>, Status> {
        Err(only_submit())
    }

    async fn resign(
        &self,
        _: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        Err(only_submit())
    }
}
