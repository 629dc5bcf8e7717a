//! The electronic board stream: a board binds to a game, then streams its touches,
//! lifts, placements, releases, clock presses and snapshots; it gets an acknowledgement or
//! a refusal for each message, and every event of its game (irregularities, clock state).

use async_stream::stream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Status, Streaming};

use super::pb;
use super::service::{Api, occupancy};
use crate::api::auth::Role;
use crate::game::BoardInput;

fn rejected(id: u64, s: &Status) -> pb::BoardFeedback {
    pb::BoardFeedback {
        message_id: id,
        kind: Some(pb::board_feedback::Kind::Rejected(pb::BoardRejected {
            code: format!("{:?}", s.code()),
            message: s.message().to_string(),
        })),
    }
}

/// Runs one board connection.
pub fn session(
    api: Api,
    role: Role,
    mut inbound: Streaming<pb::BoardMessage>,
) -> impl Stream<Item = Result<pb::BoardFeedback, Status>> + Send {
    let open = api.registry().metrics().board();
    stream! {
        // Counted in the boards gauge until the stream ends or the board hangs up.
        let _open = open;
        let mut bound = None;
        let mut board_id = String::new();
        while let Some(msg) = inbound.next().await {
            let msg = match msg {
                Ok(m) => m,
                Err(e) => { yield Err(e); break; }
            };
            let id = msg.message_id;
            let Some(kind) = msg.kind else {
                yield Ok(rejected(id, &Status::invalid_argument("kind: required")));
                continue;
            };
            use pb::board_message::Kind;
            if let Kind::Bind(b) = kind {
                match api.bind_board(&role, &b.game_id).await {
                    Ok(h) => {
                        board_id = if b.board_id.is_empty() { "board".into() } else { b.board_id };
                        let game = api.game_view(&h).await;
                        bound = Some(h);
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
                Kind::Snapshot(o) => Ok(BoardInput::Snapshot(occupancy(o))),
            };
            let input = match input {
                Ok(i) => i,
                Err(e) => { yield Ok(rejected(id, &Status::invalid_argument(e.0))); continue; }
            };
            match api.board_input(handle, &board_id, input).await {
                Ok(events) => {
                    let last_seq = events.last().map(|e| e.seq).unwrap_or(0);
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
