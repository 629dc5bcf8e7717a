//! The electronic board stream: a board binds to a game, then streams its touches,
//! lifts, placements, releases, clock presses, snapshots and heartbeats. It gets an
//! acknowledgement or a refusal for each message, the events each message caused (with
//! that message's id), and every other event of its game as it is recorded (message id
//! 0: a digital move, a flag the timer recorded, an arbiter's ruling) — each event once,
//! in order, every event up to an ack's `last_seq` before that ack — and, every second
//! while a clock runs, both clocks. The protocol as a board sees it is the comment at the
//! top of the proto's BoardService messages and the README's "Board protocol".
//!
//! Message ids increase per stream: a repeat (an id at or below the last one read) is
//! refused ALREADY_EXISTS, 0 INVALID_ARGUMENT. A bind may carry `resume_from_seq`: the
//! events after it are sent after the bound answer, before anything else. One stream
//! holds a game at a time ([`super::board_seat`]): a bind for a game another stream holds
//! takes it over, and the old stream ends with ABORTED.
//! The stream ends at shutdown with UNAVAILABLE.
//!
//! The board's health is recorded in its game as the stream sees it (issue 16): active
//! when bound, not responding after `board_silence` without a message (a heartbeat is
//! one) while the clock runs (checked with the clock tick), active again at its next
//! message, disconnected when its stream ends (or it binds to another game) before the
//! game is over — each only while the stream holds the game's seat.

use async_stream::stream;
use std::pin::Pin;
use tokio::sync::oneshot;
use tokio_stream::{Stream, StreamExt};

use tonic::{Request, Response, Status, Streaming};

use super::convert::reading_pb;
use super::error::Refusal;
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
    Replaced(Option<String>),
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

/// Records `health` for the board of this stream (`stream`) only while the stream holds
/// its game's seat, under the seat's lock: a stream taken over records nothing more.
async fn record_held(
    api: &Api,
    stream: u64,
    game: &GameHandle,
    board_id: &str,
    health: BoardHealth,
    silent: std::time::Duration,
) -> bool {
    let seat = api.board_seats().lock(&game.meta().id).await;
    seat.held_by(stream) && record_health(api, game, board_id, health, silent).await
}

/// The stream `stream` leaves its game's seat, if it still holds it, recording the board
/// as disconnected after `silent` (none: nothing recorded).
async fn leave_seat(
    api: &Api,
    stream: u64,
    game: &GameHandle,
    board_id: &str,
    silent: Option<std::time::Duration>,
) {
    let mut seat = api.board_seats().lock(&game.meta().id).await;
    if seat.leave(stream)
        && let Some(silent) = silent
    {
        record_health(api, game, board_id, BoardHealth::Disconnected, silent).await;
    }
}

/// Leaves the bound game's seat when the stream goes away, however it goes: the board
/// hung up, an error, or the call dropped by the client (the stream is then dropped, not
/// run to its end); records the board as disconnected unless `record` was cleared (at
/// shutdown the service stops, and the outage its restart records leaves no board
/// connected; after the game's end the board's health no longer matters). A stream taken
/// over holds no seat any more: it records nothing.
struct Farewell {
    api: Api,
    /// This stream's number among the seats.
    stream: u64,
    /// The game bound and the board's id.
    to: Option<(GameHandle, String)>,
    /// Whether the board's going is recorded.
    record: bool,
    /// The board's last message.
    heard: tokio::time::Instant,
}

impl Drop for Farewell {
    fn drop(&mut self) {
        if let Some((game, board_id)) = self.to.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let api = self.api.clone();
            let stream = self.stream;
            let silent = self.record.then(|| self.heard.elapsed());
            runtime.spawn(async move {
                leave_seat(&api, stream, &game, &board_id, silent).await;
            });
        }
    }
}

/// Why another stream took the game over; pending for ever while nobody did.
async fn replaced(told: &mut Option<oneshot::Receiver<String>>) -> Option<String> {
    match told {
        Some(rx) => rx.await.ok(),
        None => std::future::pending().await,
    }
}

/// How often a bound board is sent the clocks while one runs.
const CLOCK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// A heartbeat at most this often is not counted against the board's rate
/// (`board_messages_per_s`); one sooner after the last uncounted one is counted.
pub const HEARTBEAT_FREE_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

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
    let stream_no = api.board_seats().stream();
    stream! {
        // Counted in the boards gauge until the stream ends or the board hangs up.
        let _open = open;
        tokio::pin!(stopped);
        let mut bound: Option<crate::hub::GameHandle> = None;
        let mut watch: Option<Watch> = None;
        let mut board_id = String::new();
        let mut bucket = Bucket::new(rate);
        // The last heartbeat not counted against the rate.
        let mut free_beat: Option<tokio::time::Instant> = None;
        // The highest message id read (0: none yet).
        let mut last_id: u64 = 0;
        // Hears why, when another stream takes the bound game over.
        let mut told: Option<oneshot::Receiver<String>> = None;
        // The first clocks a second after the board binds (reset there), not at once:
        // a tick already due when the bind is handled read the clocks the instant the
        // game started.
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + CLOCK_EVERY, CLOCK_EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // The board's last message and its game (for the record when the stream goes),
        // its health as this stream recorded it, and its place in the boards_bound gauge
        // (none once the game is over).
        let mut farewell = Farewell {
            api: api.clone(),
            stream: stream_no,
            to: None,
            record: false,
            heard: tokio::time::Instant::now(),
        };
        let mut health: Option<BoardHealth> = None;
        let mut _counted = None;
        loop {
            let input = tokio::select! {
                biased;
                () = &mut stopped => Input::Stop,
                why = replaced(&mut told) => Input::Replaced(why),
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
                                && record_held(&api, stream_no, h, &board_id, BoardHealth::NotResponding, silent).await
                            {
                                health = Some(BoardHealth::NotResponding);
                                _counted = metrics.board_health(BoardHealth::NotResponding);
                            }
                        }
                    }
                    continue;
                }
                Input::Stop => {
                    farewell.record = false;
                    yield Err(status(&HubError::ShuttingDown));
                    break;
                }
                Input::Replaced(Some(why)) => {
                    // The seat is the new stream's: this one leaves and records nothing.
                    farewell.to = None;
                    yield Err(Refusal::Aborted(why).into());
                    break;
                }
                Input::Replaced(None) => {
                    // No longer told (the seat was left): nothing to hear.
                    told = None;
                    continue;
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
                        farewell.record = false;
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
                record_held(&api, stream_no, h, &board_id, BoardHealth::Active, silent).await;
                health = Some(BoardHealth::Active);
                _counted = metrics.board_health(BoardHealth::Active);
            }
            let id = msg.message_id;
            use pb::board_message::Kind;
            // Heartbeats up to one every HEARTBEAT_FREE_EVERY cost nothing: they never
            // make the board's real messages be refused.
            let free = matches!(msg.kind, Some(Kind::Heartbeat(_)))
                && free_beat.is_none_or(|t| t.elapsed() >= HEARTBEAT_FREE_EVERY);
            if free {
                free_beat = Some(tokio::time::Instant::now());
            } else if let Admit::No(report) = bucket.admit() {
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
                yield Ok(rejected(id, &Refusal::Limit(format!(
                    "the board sends more than {} messages a second (burst {}): message refused \
                     (board_messages_per_s)",
                    rate.per_s, rate.burst
                )).into()));
                continue;
            }
            // Ids increase per stream. A message refused for its id leaves the count;
            // any other message read moves it, whether it is then recorded or refused.
            if id == 0 {
                yield Ok(rejected(id, &Refusal::Field(
                    "message_id: required (≥ 1, increasing per stream)".into(),
                ).into()));
                continue;
            }
            if id <= last_id {
                yield Ok(rejected(id, &Refusal::Exists(format!(
                    "message_id {id}: a repeat (ids increase per stream; the last one read \
                     was {last_id}): nothing recorded"
                )).into()));
                continue;
            }
            last_id = id;
            if let Err(e) = msg.check() {
                yield Ok(rejected(id, &Refusal::Field(e.0).into()));
                continue;
            }
            // 0: the board sent no timestamp.
            let board_ms = (msg.board_time_ms != 0).then_some(msg.board_time_ms);
            let Some(kind) = msg.kind else {
                yield Ok(rejected(id, &Refusal::Field("kind: required".into()).into()));
                continue;
            };
            if let Kind::Bind(b) = kind {
                let h = match api.bind_board(&role, &b.game_id).await {
                    Ok(h) => h,
                    Err(s) => { yield Ok(rejected(id, &s)); continue; }
                };
                let new_id = if b.board_id.is_empty() { "board".to_string() } else { b.board_id };
                // The game's last seq as the bind finds it: the most a board can have seen.
                let before = match h.read(|s, _| s.last_seq()).await {
                    Ok(n) => n,
                    Err(e) => { yield Ok(rejected(id, &status(&e))); continue; }
                };
                if b.resume_from_seq > before {
                    yield Ok(rejected(id, &Refusal::Field(format!(
                        "resume_from_seq: {} is past the game's last seq {before}",
                        b.resume_from_seq
                    )).into()));
                    continue;
                }
                // Every event after the resume point (else after the game as read now,
                // those recorded after the game's end included); opened before anything
                // is recorded, so that a refusal (max_watchers) changes nothing.
                let from = if b.resume_from_seq > 0 { b.resume_from_seq } else { before };
                let mut w = match h.watch_through_end(from).await {
                    Ok(w) => w,
                    Err(e) => { yield Ok(rejected(id, &status(&e))); continue; }
                };
                // Bound to another game before: that game's board is gone.
                if let Some((old, old_board)) = farewell.to.take() {
                    if old.meta().id != h.meta().id {
                        let silent = farewell.record.then_some(std::time::Duration::ZERO);
                        leave_seat(&api, stream_no, &old, &old_board, silent).await;
                    }
                    bound = None;
                    watch = None;
                    told = None;
                }
                // The game's seat: another stream holding it is told and ends; the board
                // is recorded active under the seat's lock, so that the old stream's end
                // records nothing over it.
                let told_now = {
                    let mut seat = api.board_seats().lock(&h.meta().id).await;
                    let why = format!(
                        "board stream replaced: board {new_id} bound game {} on another \
                         stream; do not reconnect this one",
                        h.meta().id
                    );
                    let told_now = seat.take(stream_no, why);
                    record_health(&api, &h, &new_id, BoardHealth::Active, std::time::Duration::ZERO).await;
                    told_now
                };
                let game = match api.game_view(&h).await {
                    Ok(g) => g,
                    Err(s) => {
                        // Not bound after all.
                        leave_seat(&api, stream_no, &h, &new_id, Some(std::time::Duration::ZERO)).await;
                        health = None;
                        _counted = None;
                        yield Ok(rejected(id, &s));
                        continue;
                    }
                };
                if b.resume_from_seq == 0 {
                    // The bound view is the state: only what comes after it is sent.
                    w.skip_to(game.last_seq);
                }
                let replay_until = game.last_seq;
                health = Some(BoardHealth::Active);
                _counted = metrics.board_health(BoardHealth::Active);
                board_id = new_id;
                farewell.to = Some((h.clone(), board_id.clone()));
                farewell.record = true;
                told = Some(told_now);
                bound = Some(h);
                ticks.reset();
                yield Ok(pb::BoardFeedback { message_id: id, kind: Some(pb::board_feedback::Kind::Bound(game)) });
                // The events the board missed, up to the bound view's, before any other.
                while w.last_seq() < replay_until {
                    match next_pb(&mut w).await {
                        Some(Ok(e)) => yield Ok(unsolicited(e)),
                        Some(Err(s)) => { yield Err(s); return; }
                        None => break,
                    }
                }
                watch = Some(w);
                continue;
            }
            let Some(handle) = bound.as_ref() else {
                yield Ok(rejected(id, &Refusal::NotNow("bind the board to a game first".into()).into()));
                continue;
            };
            if let Kind::Heartbeat(_) = kind {
                // Not judged, not recorded: answered with the game's last seq, after
                // every event up to it.
                let last_seq = match handle.read(|s, _| s.last_seq()).await {
                    Ok(n) => n,
                    Err(e) => { yield Ok(rejected(id, &status(&e))); continue; }
                };
                if let Some(w) = watch.as_mut() {
                    while w.last_seq() < last_seq {
                        match next_pb(w).await {
                            Some(Ok(e)) => yield Ok(unsolicited(e)),
                            Some(Err(s)) => { yield Err(s); return; }
                            None => break,
                        }
                    }
                }
                yield Ok(pb::BoardFeedback { message_id: id, kind: Some(pb::board_feedback::Kind::Ack(pb::BoardAck { last_seq })) });
                continue;
            }
            let side = |s: i32| super::convert::side(s, "side");
            let input = match kind {
                Kind::Bind(_) | Kind::Heartbeat(_) => continue,
                Kind::Touch(s) => Ok(BoardInput::Touch(s.square)),
                Kind::Lift(s) => Ok(BoardInput::Lift(s.square)),
                Kind::Place(s) => Ok(BoardInput::Place(s.square)),
                Kind::Release(s) => Ok(BoardInput::Release(s.square)),
                Kind::Adjust(a) => side(a.side).map(BoardInput::AdjustAnnounced),
                Kind::ClockPress(c) => side(c.side).map(BoardInput::ClockPress),
                Kind::Snapshot(o) => occupancy(o).map(BoardInput::Snapshot),
            };
            let input = match input {
                Ok(i) => i,
                Err(e) => { yield Ok(rejected(id, &Refusal::Field(e.0).into())); continue; }
            };
            match api.board_input(handle, &board_id, input, board_ms).await {
                Ok(events) => {
                    let last_seq = match events.last() {
                        Some(e) => e.seq,
                        None => handle.read(|s, _| s.last_seq()).await.unwrap_or(0),
                    };
                    if let Some(w) = watch.as_mut() {
                        // Events of others recorded before this message's (or, when it
                        // recorded none, up to the ack's last seq) are already in the
                        // watch's queue: send them first, so the order holds.
                        let before = events.first().map_or(last_seq, |e| e.seq - 1);
                        while w.last_seq() < before {
                            match next_pb(w).await {
                                Some(Ok(e)) => yield Ok(unsolicited(e)),
                                Some(Err(s)) => { yield Err(s); return; }
                                None => break,
                            }
                        }
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
        let revoked = self.revocation(&req);
        let inbound = req.into_inner();
        let session = Box::pin(super::board::session(self.clone(), role, inbound));
        Ok(Response::new(Box::pin(super::token_table::until_revoked(
            session, revoked,
        ))))
    }
}
