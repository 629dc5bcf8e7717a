//! The electronic board stream: a board binds to a game, then streams its touches,
//! lifts, placements, releases, clock presses and snapshots. It gets an acknowledgement
//! or a refusal for each message, the events each message caused (with that message's
//! id), and every other event of its game as it is recorded (message id 0: a digital
//! move, a flag the timer recorded, an arbiter's ruling) — each event once, in order —
//! and, every second while a clock runs, both clocks.
//! The stream ends at shutdown with UNAVAILABLE.
//!
//! The board's health is recorded in its game as the stream sees it (issue 16): active
//! when bound, not responding after `board_silence` without a message while the clock
//! runs (checked with the clock tick), active again at its next message, disconnected
//! when its stream ends (or it binds to another game) before the game is over.

use async_stream::stream;
use std::pin::Pin;
use tokio_stream::{Stream, StreamExt};

use tonic::{Request, Response, Status, Streaming};

use super::convert::reading_pb;
use super::error::status;
use super::pb;
use super::rate::{Admit, Bucket};
use super::service::{Api, occupancy};
use super::validate::Check;
use super::watch::next_pb;
use crate::api::auth::Role;
use crate::game::{BoardHealth, BoardInput, ClockReading, ClockRun};
use crate::hub::{GameHandle, HubError, Watch};

fn rejected(id: u64, s: &Status) -> pb::BoardFeedback {
    pb::BoardFeedback {
        message_id: id,
        kind: Some(pb::board_feedback::Kind::Rejected(pb::BoardRejected {
            code: super::error::code_name(s.code()).to_string(),
            // The stream's rejections are bounded like every status message.
            message: super::error::bounded_message(s.message()).into_owned(),
        })),
    }
}

fn unsolicited(e: pb::GameEvent) -> pb::BoardFeedback {
    pb::BoardFeedback {
        message_id: 0,
        kind: Some(pb::board_feedback::Kind::Event(e)),
    }
}

/// The next event of the bound game's watch; pending for ever while unbound.
async fn next_event(watch: &mut Option<Watch>) -> Option<Result<pb::GameEvent, Status>> {
    match watch {
        Some(w) => next_pb(w).await,
        None => std::future::pending().await,
    }
}

enum Input {
    Message(Option<Result<pb::BoardMessage, Status>>),
    Event(Box<Option<Result<pb::GameEvent, Status>>>),
    Tick,
    Stop,
}

/// Records what the stream sees of the board in its game; true when that changed the
/// board's recorded state (the judge ignores a repeat, a silence with the clocks stopped
/// and anything after the game's end).
async fn record_health(
    api: &Api,
    game: &GameHandle,
    board_id: &str,
    health: BoardHealth,
    silent: std::time::Duration,
) -> bool {
    let input = BoardInput::Health {
        health,
        silent_ms: u64::try_from(silent.as_millis()).unwrap_or(u64::MAX),
    };
    match api.board_input(game, board_id, input, None).await {
        Ok(events) if !events.is_empty() => {
            api.hub().metrics().board_health_changed(health);
            true
        }
        Ok(_) => false,
        Err(s) => {
            tracing::warn!(
                game = game.meta().id.as_str(),
                board = board_id,
                error = %s.message(),
                "board health: not recorded"
            );
            false
        }
    }
}

/// Records the bound board as disconnected when its stream goes away, however it goes:
/// the board hung up, an error, or the call dropped by the client (the stream is then
/// dropped, not run to its end). Not at shutdown (`to` is cleared): the service stops,
/// and the outage its restart records leaves no board connected.
struct Farewell {
    api: Api,
    to: Option<(GameHandle, String)>,
    /// The board's last message.
    heard: tokio::time::Instant,
}

impl Drop for Farewell {
    fn drop(&mut self) {
        if let Some((game, board_id)) = self.to.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let api = self.api.clone();
            let silent = self.heard.elapsed();
            runtime.spawn(async move {
                record_health(&api, &game, &board_id, BoardHealth::Disconnected, silent).await;
            });
        }
    }
}

/// How often a bound board is sent the clocks while one runs.
const CLOCK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs one board connection.
pub fn session(
    api: Api,
    role: Role,
    mut inbound: Streaming<pb::BoardMessage>,
) -> impl Stream<Item = Result<pb::BoardFeedback, Status>> + Send {
    let open = api.hub().metrics().board();
    let stopped = api.hub().stopped();
    let rate = api.board_rate();
    let silence = api.board_silence();
    let metrics = api.hub().metrics().clone();
    stream! {
        // Counted in the boards gauge until the stream ends or the board hangs up.
        let _open = open;
        tokio::pin!(stopped);
        let mut bound: Option<crate::hub::GameHandle> = None;
        let mut watch: Option<Watch> = None;
        let mut board_id = String::new();
        let mut bucket = Bucket::new(rate);
        // The first clocks a second after the board binds (reset there), not at once:
        // a tick already due when the bind is handled read the clocks the instant the
        // game started.
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + CLOCK_EVERY, CLOCK_EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // The board's last message and its game (for the record when the stream goes),
        // its health as this stream recorded it, and its place in the boards_bound gauge
        // (none once the game is over).
        let mut farewell = Farewell { api: api.clone(), to: None, heard: tokio::time::Instant::now() };
        let mut health: Option<BoardHealth> = None;
        let mut _counted = None;
        loop {
            let input = tokio::select! {
                biased;
                () = &mut stopped => Input::Stop,
                e = next_event(&mut watch) => Input::Event(Box::new(e)),
                m = inbound.next() => Input::Message(m),
                _ = ticks.tick() => Input::Tick,
            };
            let msg = match input {
                Input::Tick => {
                    // While a clock runs, the board is sent both clocks (message id 0).
                    if let Some(h) = bound.as_ref() {
                        let reading = h
                            .read(|s, now| s.clock().map(|c| ClockReading::of(c, now)))
                            .await;
                        if let Ok(Some(r)) = reading
                            && matches!(r.run, ClockRun::Running(_))
                        {
                            yield Ok(pb::BoardFeedback {
                                message_id: 0,
                                kind: Some(pb::board_feedback::Kind::Clock(reading_pb(&r))),
                            });
                            // Silent too long while the clock runs: not responding.
                            let silent = farewell.heard.elapsed();
                            if health == Some(BoardHealth::Active)
                                && silent >= silence
                                && record_health(&api, h, &board_id, BoardHealth::NotResponding, silent).await
                            {
                                health = Some(BoardHealth::NotResponding);
                                _counted = metrics.board_health(BoardHealth::NotResponding);
                            }
                        }
                    }
                    continue;
                }
                Input::Stop => {
                    farewell.to = None;
                    yield Err(status(&HubError::ShuttingDown));
                    break;
                }
                Input::Event(e) => match *e {
                    Some(Ok(e)) => {
                        yield Ok(unsolicited(e));
                        continue;
                    }
                    Some(Err(s)) => {
                        yield Err(s);
                        break;
                    }
                    None => {
                        // The watch was ended by the hub (it goes on past the game's
                        // end, so this is not the end of the game): stop listening;
                        // the board may still bind to another game.
                        watch = None;
                        _counted = None;
                        // Over: its board's health no longer matters.
                        farewell.to = None;
                        continue;
                    }
                },
                // The board is gone: `farewell` records it.
                Input::Message(None) => break,
                Input::Message(Some(Err(e))) => {
                    yield Err(e);
                    break;
                }
                Input::Message(Some(Ok(m))) => m,
            };
            let silent = farewell.heard.elapsed();
            farewell.heard = tokio::time::Instant::now();
            if health == Some(BoardHealth::NotResponding)
                && let Some(h) = bound.as_ref()
            {
                // Talking again.
                record_health(&api, h, &board_id, BoardHealth::Active, silent).await;
                health = Some(BoardHealth::Active);
                _counted = metrics.board_health(BoardHealth::Active);
            }
            let id = msg.message_id;
            if let Admit::No(report) = bucket.admit() {
                if report {
                    tracing::warn!(
                        game = bound.as_ref().map(|h| h.meta().id.as_str()).unwrap_or(""),
                        board = board_id.as_str(),
                        messages_per_s = rate.per_s,
                        burst = rate.burst,
                        refused_before = bucket.refused - 1,
                        "board flood: messages beyond the rate are refused (board_messages_per_s)"
                    );
                    // Recorded in the bound game, once per flood, for the arbiter; the
                    // board hears of it through its watch like any other event.
                    if let Some(h) = bound.as_ref() {
                        let flooded = BoardInput::Flooded { per_s: rate.per_s, burst: rate.burst };
                        let board_ms = (msg.board_time_ms > 0).then_some(msg.board_time_ms);
                        if let Err(s) = api.board_input(h, &board_id, flooded, board_ms).await {
                            tracing::warn!(error = %s.message(), "board flood: not recorded");
                        }
                    }
                }
                yield Ok(rejected(id, &Status::resource_exhausted(format!(
                    "the board sends more than {} messages a second (burst {}): message refused \
                     (board_messages_per_s)",
                    rate.per_s, rate.burst
                ))));
                continue;
            }
            if let Err(e) = msg.check() {
                yield Ok(rejected(id, &Status::invalid_argument(e.0)));
                continue;
            }
            // 0: the board sent no timestamp.
            let board_ms = (msg.board_time_ms != 0).then_some(msg.board_time_ms);
            let Some(kind) = msg.kind else {
                yield Ok(rejected(id, &Status::invalid_argument("kind: required")));
                continue;
            };
            use pb::board_message::Kind;
            if let Kind::Bind(b) = kind {
                match api.bind_board(&role, &b.game_id).await {
                    Ok(h) => {
                        let new_id = if b.board_id.is_empty() { "board".to_string() } else { b.board_id };
                        // Bound elsewhere before: that game's board is gone.
                        if let Some(old) = bound.as_ref()
                            && old.meta().id != h.meta().id
                        {
                            record_health(&api, old, &board_id, BoardHealth::Disconnected, std::time::Duration::ZERO).await;
                        }
                        record_health(&api, &h, &new_id, BoardHealth::Active, std::time::Duration::ZERO).await;
                        health = Some(BoardHealth::Active);
                        _counted = metrics.board_health(BoardHealth::Active);
                        let game = match api.game_view(&h).await {
                            Ok(g) => g,
                            Err(s) => { yield Ok(rejected(id, &s)); continue; }
                        };
                        // Every event after the one the bound view shows, those recorded
                        // after the game's end included.
                        match h.watch_through_end(game.last_seq).await {
                            Ok(w) => watch = Some(w),
                            Err(e) => { yield Ok(rejected(id, &status(&e))); continue; }
                        }
                        board_id = new_id;
                        farewell.to = Some((h.clone(), board_id.clone()));
                        bound = Some(h);
                        ticks.reset();
                        yield Ok(pb::BoardFeedback { message_id: id, kind: Some(pb::board_feedback::Kind::Bound(game)) });
                    }
                    Err(s) => yield Ok(rejected(id, &s)),
                }
                continue;
            }
            let Some(handle) = bound.as_ref() else {
                yield Ok(rejected(id, &Status::failed_precondition("bind the board to a game first")));
                continue;
            };
            let side = |s: i32| super::convert::side(s, "side");
            let input = match kind {
                Kind::Bind(_) => continue,
                Kind::Touch(s) => Ok(BoardInput::Touch(s.square)),
                Kind::Lift(s) => Ok(BoardInput::Lift(s.square)),
                Kind::Place(s) => Ok(BoardInput::Place(s.square)),
                Kind::Release(s) => Ok(BoardInput::Release(s.square)),
                Kind::Adjust(a) => side(a.side).map(BoardInput::AdjustAnnounced),
                Kind::ClockPress(c) => side(c.side).map(BoardInput::ClockPress),
                Kind::Snapshot(o) => occupancy(o).map(BoardInput::Snapshot),
                // Not handled here yet (issue 38 item 4, the board stream's side): refused,
                // nothing recorded; the message still counts as the board talking.
                Kind::Heartbeat(_) => {
                    yield Ok(rejected(id, &Status::unimplemented("heartbeat: not handled by this server yet")));
                    continue;
                }
            };
            let input = match input {
                Ok(i) => i,
                Err(e) => { yield Ok(rejected(id, &Status::invalid_argument(e.0))); continue; }
            };
            match api.board_input(handle, &board_id, input, board_ms).await {
                Ok(events) => {
                    if let (Some(first), Some(w)) = (events.first(), watch.as_mut()) {
                        // Events of others recorded before this message's are already in
                        // the watch's queue: send them first, so the order holds.
                        while w.last_seq() + 1 < first.seq {
                            match next_pb(w).await {
                                Some(Ok(e)) => yield Ok(unsolicited(e)),
                                Some(Err(s)) => { yield Err(s); return; }
                                None => break,
                            }
                        }
                    }
                    let last_seq = match events.last() {
                        Some(e) => e.seq,
                        None => handle.read(|s, _| s.last_seq()).await.unwrap_or(0),
                    };
                    if let Some(w) = watch.as_mut() {
                        w.skip_to(events.last().map_or(0, |e| e.seq));
                    }
                    for e in events {
                        yield Ok(pb::BoardFeedback { message_id: id, kind: Some(pb::board_feedback::Kind::Event(e)) });
                    }
                    yield Ok(pb::BoardFeedback { message_id: id, kind: Some(pb::board_feedback::Kind::Ack(pb::BoardAck { last_seq })) });
                }
                Err(s) => yield Ok(rejected(id, &s)),
            }
        }
    }
}

type FeedbackStream = Pin<Box<dyn Stream<Item = Result<pb::BoardFeedback, Status>> + Send>>;

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
