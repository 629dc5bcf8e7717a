//! The transport anchor's server: a bare tonic `GameService` that answers every
//! `SubmitMove` with one canned response captured from the real service (same encoded
//! size), decides nothing and records nothing. Driven by the same client code,
//! alternating with the real service on the memory store (`anchor.rs`), it says how much
//! of a move's cost is gRPC, HTTP/2 and loopback TCP alone.
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

use tokio::sync::broadcast;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::api::pb;

/// The echo service: only `SubmitMove` answers.
pub(super) struct Echo {
    canned: pb::SubmitMoveResponse,
    fanout: Option<Arc<Fanout>>,
}

impl Echo {
    pub(super) fn new(canned: pb::SubmitMoveResponse) -> Echo {
        Echo {
            canned,
            fanout: None,
        }
    }

    /// An echo whose moves are published to the streams of `fanout`.
    pub(super) fn publishing(canned: pb::SubmitMoveResponse, fanout: Arc<Fanout>) -> Echo {
        Echo {
            canned,
            fanout: Some(fanout),
        }
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
