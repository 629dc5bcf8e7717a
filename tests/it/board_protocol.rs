//! The board stream's transport contract (issue 38 item 4), from outside over a real
//! server on 127.0.0.1:0: heartbeats keep a silent board ACTIVE and cost no rate within
//! their floor; message ids increase per stream (a repeat and 0 are refused, nothing
//! recorded); a bind's `resume_from_seq` replays exactly the events the board missed,
//! the outage a restart records included, and one past the game's end is refused; a
//! second stream for a game takes it over and the old one ends with ABORTED.

use std::time::Duration;

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use pb::board_feedback::Kind as Fb;
use pb::board_message::Kind;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Streaming};

use crate::common::server::TestServer;

/// One board stream: what it sends and what it hears.
struct Board {
    tx: tokio::sync::mpsc::Sender<pb::BoardMessage>,
    feed: Streaming<pb::BoardFeedback>,
}

impl Board {
    async fn open(channel: &Channel) -> Board {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let feed = BoardServiceClient::new(channel.clone())
            .connect(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .expect("board stream")
            .into_inner();
        Board { tx, feed }
    }

    async fn send(&self, message_id: u64, kind: Kind) {
        self.tx
            .send(pb::BoardMessage {
                message_id,
                board_time_ms: 0,
                kind: Some(kind),
            })
            .await
            .expect("send");
    }

    /// The next feedback other than the periodic clocks.
    async fn next(&mut self) -> pb::BoardFeedback {
        loop {
            let f = tokio::time::timeout(Duration::from_secs(5), self.feed.next())
                .await
                .expect("feedback within 5 s")
                .expect("stream open")
                .expect("feedback");
            if !matches!(f.kind, Some(Fb::Clock(_))) {
                return f;
            }
        }
    }

    /// Binds with `message_id`; the bound game, or the refusal.
    async fn bind(
        &mut self,
        message_id: u64,
        game: &str,
        board_id: &str,
        resume_from_seq: u64,
    ) -> Result<pb::Game, pb::BoardRejected> {
        self.send(
            message_id,
            Kind::Bind(pb::BindBoard {
                game_id: game.into(),
                board_id: board_id.into(),
                resume_from_seq,
            }),
        )
        .await;
        let f = self.next().await;
        assert_eq!(f.message_id, message_id, "the bind's answer first: {f:?}");
        match f.kind {
            Some(Fb::Bound(g)) => Ok(g),
            Some(Fb::Rejected(r)) => Err(r),
            other => panic!("not an answer to a bind: {other:?}"),
        }
    }

    /// Sends one message and reads up to its answer: the events heard meanwhile (any
    /// message id) and the answer (an ack or a refusal).
    async fn call(&mut self, message_id: u64, kind: Kind) -> (Vec<pb::BoardFeedback>, Fb) {
        self.send(message_id, kind).await;
        let mut heard = Vec::new();
        loop {
            let f = self.next().await;
            match f.kind {
                Some(k @ (Fb::Ack(_) | Fb::Rejected(_))) if f.message_id == message_id => {
                    return (heard, k);
                }
                _ => heard.push(f),
            }
        }
    }

    /// How the stream ended (after any feedback still on the way).
    async fn end(mut self) -> Option<tonic::Status> {
        loop {
            match tokio::time::timeout(Duration::from_secs(5), self.feed.next())
                .await
                .expect("the stream ends within 5 s")
            {
                Some(Ok(_)) => continue,
                Some(Err(s)) => return Some(s),
                None => return None,
            }
        }
    }
}

fn square(n: u32) -> pb::BoardSquare {
    pb::BoardSquare { square: n }
}

fn heartbeat() -> Kind {
    Kind::Heartbeat(pb::BoardHeartbeat {})
}

fn ack(k: &Fb) -> u64 {
    match k {
        Fb::Ack(a) => a.last_seq,
        other => panic!("not an ack: {other:?}"),
    }
}

fn refusal(k: &Fb) -> &pb::BoardRejected {
    match k {
        Fb::Rejected(r) => r,
        other => panic!("not a refusal: {other:?}"),
    }
}

fn event(f: &pb::BoardFeedback) -> &pb::GameEvent {
    match &f.kind {
        Some(Fb::Event(e)) => e,
        other => panic!("not an event: {other:?}"),
    }
}

fn games(channel: &Channel) -> GameServiceClient<Channel> {
    GameServiceClient::new(channel.clone())
}

/// A started Russian game with 10 minutes a side.
async fn started(channel: &Channel, id: &str) {
    games(channel)
        .create_game(pb::CreateGameRequest {
            game_id: id.into(),
            variant: pb::Variant::Russian as i32,
            time_control: "10m".into(),
            ..Default::default()
        })
        .await
        .expect("create");
    games(channel)
        .start_game(pb::StartGameRequest {
            game_id: id.into(),
            expected_seq: 0,
        })
        .await
        .expect("start");
}

async fn get(channel: &Channel, id: &str) -> pb::Game {
    games(channel)
        .get_game(pb::GetGameRequest { game_id: id.into() })
        .await
        .expect("get")
        .into_inner()
}

async fn submit(channel: &Channel, id: &str, mv: &str) -> pb::Game {
    games(channel)
        .submit_move(pb::SubmitMoveRequest {
            game_id: id.into(),
            r#move: mv.into(),
            ..Default::default()
        })
        .await
        .expect("move")
        .into_inner()
        .game
        .expect("game")
}

/// The game's whole log, as a watcher reads it.
async fn log(channel: &Channel, id: &str) -> Vec<pb::GameEvent> {
    let last = get(channel, id).await.last_seq;
    let mut watch = BroadcastServiceClient::new(channel.clone())
        .watch_game(pb::WatchGameRequest {
            game_id: id.into(),
            from_seq: 0,
        })
        .await
        .expect("watch")
        .into_inner();
    let mut out = Vec::new();
    while let Some(e) = watch.next().await {
        let e = e.expect("event");
        let seq = e.seq;
        out.push(e);
        if seq == last {
            break;
        }
    }
    out
}

/// The board health changes in a log: (board id, health).
fn health_changes(log: &[pb::GameEvent]) -> Vec<(String, pb::BoardHealth)> {
    log.iter()
        .filter_map(|e| match &e.kind {
            Some(pb::game_event::Kind::BoardHealthChanged(h)) => Some((
                h.board_id.clone(),
                pb::BoardHealth::try_from(h.health).expect("health"),
            )),
            _ => None,
        })
        .collect()
}

fn status(g: &pb::Game) -> Option<(String, pb::BoardHealth)> {
    g.board_status.as_ref().map(|b| {
        (
            b.board_id.clone(),
            pb::BoardHealth::try_from(b.health).expect("health"),
        )
    })
}

/// Waits until the game shows its board with `health` (a stream's end is recorded after
/// it); the board's id.
async fn shown_as(channel: &Channel, id: &str, health: pb::BoardHealth) -> String {
    let mut shown = None;
    for _ in 0..250 {
        shown = status(&get(channel, id).await);
        if let Some((board, h)) = &shown
            && *h == health
        {
            return board.clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{id}: the board shown as {shown:?}, not {health:?}");
}

/// A board silent for four times `board_silence_s` but sending heartbeats stays ACTIVE,
/// each heartbeat answered with the game's last seq and nothing recorded; once the
/// heartbeats stop it goes NOT_RESPONDING, and its next heartbeat makes it ACTIVE again.
#[tokio::test]
async fn heartbeats_keep_a_silent_board_active_and_without_them_it_is_not_responding() {
    let s = TestServer::start("[limits]\nboard_silence_s = 1\n").await;
    started(&s.channel, "hb").await;
    let mut board = Board::open(&s.channel).await;
    let bound = board.bind(1, "hb", "dgt-hb", 0).await.expect("bound");
    assert_eq!(
        status(&bound),
        Some(("dgt-hb".into(), pb::BoardHealth::Active))
    );
    // 4 s of thinking, a heartbeat every 300 ms (more than three ticks of the 1 s check).
    let began = tokio::time::Instant::now();
    let mut id = 1;
    while began.elapsed() < Duration::from_secs(4) {
        id += 1;
        let (heard, answer) = board.call(id, heartbeat()).await;
        assert!(heard.is_empty(), "nothing happened: {heard:?}");
        assert_eq!(
            ack(&answer),
            bound.last_seq,
            "heartbeat {id}: nothing recorded"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let g = get(&s.channel, "hb").await;
    assert_eq!(g.last_seq, bound.last_seq, "heartbeats are not recorded");
    assert_eq!(status(&g), Some(("dgt-hb".into(), pb::BoardHealth::Active)));
    // The heartbeats stop: within the silence and a tick or two, NOT_RESPONDING.
    let f = board.next().await;
    assert_eq!(f.message_id, 0, "{f:?}");
    match &event(&f).kind {
        Some(pb::game_event::Kind::BoardHealthChanged(h)) => {
            assert_eq!(h.health, pb::BoardHealth::NotResponding as i32);
            assert!(h.silent_ms >= 1_000, "{h:?}");
        }
        other => panic!("not a health change: {other:?}"),
    }
    // A heartbeat is a sign of life: ACTIVE again, then its ack.
    id += 1;
    let (heard, answer) = board.call(id, heartbeat()).await;
    let again: Vec<_> = heard.iter().map(|f| (f.message_id, event(f).seq)).collect();
    assert_eq!(again.len(), 1, "{heard:?}");
    assert!(matches!(
        &event(&heard[0]).kind,
        Some(pb::game_event::Kind::BoardHealthChanged(h)) if h.health == pb::BoardHealth::Active as i32
    ));
    assert_eq!(
        ack(&answer),
        again[0].1,
        "the ack's seq is the last event sent"
    );
    let changes = health_changes(&log(&s.channel, "hb").await);
    use pb::BoardHealth::{Active, NotResponding};
    assert_eq!(
        changes,
        [Active, NotResponding, Active].map(|h| ("dgt-hb".to_string(), h))
    );
    s.stop().await;
}

/// Heartbeats at most every 250 ms are not counted against the rate: with one message a
/// second (burst 1), a touch spends the bucket, and heartbeats 300 ms apart are still
/// answered; one sent right after another is counted, and refused.
#[tokio::test]
async fn heartbeats_within_their_floor_cost_no_rate_and_faster_ones_count() {
    let s = TestServer::start("[limits]\nboard_messages_per_s = 1\nboard_burst = 1\n").await;
    started(&s.channel, "rate").await;
    let mut board = Board::open(&s.channel).await;
    // The bind spends the only token; wait for it to come back.
    board.bind(1, "rate", "dgt-r", 0).await.expect("bound");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (_, answer) = board.call(2, Kind::Touch(square(22))).await;
    ack(&answer);
    for id in 3..=4 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (_, answer) = board.call(id, heartbeat()).await;
        ack(&answer);
    }
    // At once after the last free one: counted, and the bucket is not full again yet.
    let (_, answer) = board.call(5, heartbeat()).await;
    let r = refusal(&answer);
    assert_eq!(r.code, "RESOURCE_EXHAUSTED", "{r:?}");
    s.stop().await;
}

/// Message ids increase per stream: a repeat (the id read last, or a lower one) is
/// refused ALREADY_EXISTS naming it, 0 INVALID_ARGUMENT; neither records anything nor
/// moves the count. A message refused for what it says moves it all the same.
#[tokio::test]
async fn board_message_ids_repeat_and_zero_are_refused_and_record_nothing() {
    let s = TestServer::start("").await;
    started(&s.channel, "ids").await;
    let mut board = Board::open(&s.channel).await;
    // Any first id ≥ 1.
    let bound = board.bind(5, "ids", "dgt-i", 0).await.expect("bound");
    for id in [5, 3] {
        let (heard, answer) = board.call(id, Kind::Touch(square(22))).await;
        assert!(heard.is_empty(), "{heard:?}");
        let r = refusal(&answer);
        assert_eq!(r.code, "ALREADY_EXISTS", "{r:?}");
        assert!(
            r.message.starts_with(&format!("message_id {id}: a repeat")),
            "{r:?}"
        );
    }
    let (heard, answer) = board.call(0, Kind::Touch(square(22))).await;
    assert!(heard.is_empty(), "{heard:?}");
    let r = refusal(&answer);
    assert_eq!(r.code, "INVALID_ARGUMENT");
    assert_eq!(
        r.message,
        "message_id: required (≥ 1, increasing per stream)"
    );
    assert_eq!(
        get(&s.channel, "ids").await.last_seq,
        bound.last_seq,
        "nothing recorded"
    );
    // A gap is fine; the refused ids did not move the count.
    let (_, answer) = board.call(6, Kind::Touch(square(22))).await;
    assert_eq!(ack(&answer), bound.last_seq + 1, "the touch is recorded");
    // Refused for its square, 8 is read: sent again, it is a repeat.
    let (_, answer) = board.call(8, Kind::Lift(square(40))).await;
    assert_eq!(refusal(&answer).code, "INVALID_ARGUMENT");
    let (_, answer) = board.call(8, Kind::Lift(square(22))).await;
    assert_eq!(refusal(&answer).code, "ALREADY_EXISTS");
    let (_, answer) = board.call(9, Kind::Lift(square(22))).await;
    assert_eq!(ack(&answer), bound.last_seq + 2);
    // The count is the stream's: a new stream starts where it likes (its bind takes the
    // game over from the first).
    let mut second = Board::open(&s.channel).await;
    second
        .bind(1, "ids", "dgt-i", 0)
        .await
        .expect("bound again");
    s.stop().await;
}

/// A bind with `resume_from_seq` gets, after the bound answer and with message id 0,
/// exactly the events after that seq up to the bound game's, in order, then the live
/// ones: none twice, none missed. One past the game's last seq is refused and changes
/// nothing; the game's last seq itself replays nothing.
#[tokio::test]
async fn resume_from_seq_replays_exactly_the_missed_events() {
    let s = TestServer::start("").await;
    started(&s.channel, "re").await;
    let mut first = Board::open(&s.channel).await;
    let seen = first
        .bind(1, "re", "dgt-re", 0)
        .await
        .expect("bound")
        .last_seq;
    // The board goes away (recorded); the game goes on without it.
    drop(first);
    shown_as(&s.channel, "re", pb::BoardHealth::Disconnected).await;
    submit(&s.channel, "re", "c3-d4").await;
    submit(&s.channel, "re", "f6-g5").await;
    let before = get(&s.channel, "re").await.last_seq;

    let mut board = Board::open(&s.channel).await;
    let r = board
        .bind(1, "re", "dgt-re", before + 1)
        .await
        .expect_err("past the end");
    assert_eq!(r.code, "INVALID_ARGUMENT", "{r:?}");
    assert_eq!(
        r.message,
        format!(
            "resume_from_seq: {} is past the game's last seq {before}",
            before + 1
        )
    );
    assert_eq!(
        get(&s.channel, "re").await.last_seq,
        before,
        "nothing recorded"
    );

    let bound = board.bind(2, "re", "dgt-re", seen).await.expect("bound");
    assert!(
        bound.last_seq > before,
        "the bind recorded the board active"
    );
    let mut replayed = Vec::new();
    while replayed.len() < (bound.last_seq - seen) as usize {
        let f = board.next().await;
        assert_eq!(f.message_id, 0, "{f:?}");
        replayed.push(event(&f).clone());
    }
    let all = log(&s.channel, "re").await;
    let missed: Vec<_> = all
        .iter()
        .filter(|e| e.seq > seen && e.seq <= bound.last_seq)
        .cloned()
        .collect();
    assert_eq!(replayed, missed, "exactly the missed events, in order");
    let kinds: Vec<_> = missed.iter().map(|e| format!("{:?}", e.kind)).collect();
    assert!(
        kinds
            .iter()
            .filter(|k| k.starts_with("Some(MovePlayed"))
            .count()
            == 2,
        "{kinds:?}"
    );
    // Then live: the next move's events (the move, the press), once each, in order.
    let after = submit(&s.channel, "re", "d4-e5").await.last_seq;
    let mut live = Vec::new();
    while live.len() < (after - bound.last_seq) as usize {
        let f = board.next().await;
        assert_eq!(f.message_id, 0, "{f:?}");
        live.push(event(&f).seq);
    }
    assert_eq!(live, ((bound.last_seq + 1)..=after).collect::<Vec<_>>());
    // A heartbeat's ack: nothing else was on the way.
    let (heard, answer) = board.call(3, heartbeat()).await;
    assert!(heard.is_empty(), "{heard:?}");
    assert_eq!(ack(&answer), after);

    // Resuming from the game's last seq replays nothing (the bind's own ACTIVE, a
    // repeat of the bound board's, is not recorded).
    let last = get(&s.channel, "re").await.last_seq;
    let mut third = Board::open(&s.channel).await;
    let g = third.bind(1, "re", "dgt-re", last).await.expect("bound");
    let (heard, answer) = third.call(2, heartbeat()).await;
    let seqs: Vec<_> = heard.iter().map(|f| event(f).seq).collect();
    assert_eq!(seqs, ((last + 1)..=g.last_seq).collect::<Vec<_>>());
    assert_eq!(ack(&answer), g.last_seq);
    s.stop().await;
}

/// A board connected when the server stops hears UNAVAILABLE "server shutting down";
/// after the restart on the same log it binds again with the last seq it saw and hears
/// the `OutageRecorded` the restart recorded before it came back.
#[tokio::test]
async fn a_board_resuming_after_a_restart_hears_the_outage() {
    let s = TestServer::start("").await;
    started(&s.channel, "out").await;
    let mut board = Board::open(&s.channel).await;
    let bound = board.bind(1, "out", "dgt-o", 0).await.expect("bound");
    let (_, answer) = board.call(2, Kind::Touch(square(22))).await;
    let seen = ack(&answer);
    assert!(seen > bound.last_seq);
    let data = s.data().to_path_buf();
    let stopping = tokio::spawn(s.stop());
    let end = board.end().await.expect("an error status");
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    assert_eq!(end.message(), "server shutting down");
    let dir = stopping.await.expect("stopped");

    let s = TestServer::start_in(&data, "", None).await;
    let mut board = Board::open(&s.channel).await;
    let bound = board.bind(1, "out", "dgt-o", seen).await.expect("bound");
    let mut replayed = Vec::new();
    while replayed.len() < (bound.last_seq - seen) as usize {
        let f = board.next().await;
        assert_eq!(f.message_id, 0, "{f:?}");
        replayed.push(event(&f).clone());
    }
    assert_eq!(
        replayed.iter().map(|e| e.seq).collect::<Vec<_>>(),
        ((seen + 1)..=bound.last_seq).collect::<Vec<_>>()
    );
    assert!(
        replayed
            .iter()
            .any(|e| matches!(e.kind, Some(pb::game_event::Kind::OutageRecorded(_)))),
        "{replayed:?}"
    );
    s.stop().await;
    drop(dir);
}

/// A second stream binding a game takes it over: the first ends with ABORTED, saying
/// which board took it; the new one plays; the health stays the new board's (the old
/// stream's end records nothing), the same board id taking over included; the last
/// stream's end records DISCONNECTED.
#[tokio::test]
async fn a_second_board_stream_takes_the_game_over_and_the_first_ends_aborted() {
    let s = TestServer::start("").await;
    started(&s.channel, "tk").await;
    let mut a = Board::open(&s.channel).await;
    a.bind(1, "tk", "dgt-1", 0).await.expect("bound");
    let mut b = Board::open(&s.channel).await;
    let bound = b.bind(1, "tk", "dgt-2", 0).await.expect("bound");
    assert_eq!(
        status(&bound),
        Some(("dgt-2".into(), pb::BoardHealth::Active))
    );
    let end = a.end().await.expect("an error status");
    assert_eq!(end.code(), Code::Aborted, "{end:?}");
    assert_eq!(
        end.message(),
        "board stream replaced: board dgt-2 bound game tk on another stream; do not \
         reconnect this one"
    );
    // The new stream plays: c3-d4 (22 to 18), made at the release.
    for (id, kind) in [(2, Kind::Lift(square(22))), (3, Kind::Place(square(18)))] {
        let (_, answer) = b.call(id, kind).await;
        ack(&answer);
    }
    let (heard, answer) = b.call(4, Kind::Release(square(18))).await;
    ack(&answer);
    assert!(
        heard.iter().any(|f| f.message_id == 4
            && matches!(event(f).kind, Some(pb::game_event::Kind::MovePlayed(_)))),
        "{heard:?}"
    );
    // The same board id on a third stream: the second ends the same way.
    let mut c = Board::open(&s.channel).await;
    c.bind(1, "tk", "dgt-2", 0).await.expect("bound");
    let end = b.end().await.expect("an error status");
    assert_eq!(end.code(), Code::Aborted, "{end:?}");
    // Whatever the ended streams left to do is done by the time a heartbeat is answered
    // twice; still ACTIVE, and no DISCONNECTED in the log.
    for id in 2..=3 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (_, answer) = c.call(id, heartbeat()).await;
        ack(&answer);
    }
    let g = get(&s.channel, "tk").await;
    assert_eq!(status(&g), Some(("dgt-2".into(), pb::BoardHealth::Active)));
    use pb::BoardHealth::{Active, Disconnected};
    assert_eq!(
        health_changes(&log(&s.channel, "tk").await),
        [("dgt-1".to_string(), Active), ("dgt-2".to_string(), Active)]
    );
    // The last stream hangs up: the board is gone.
    drop(c);
    assert_eq!(shown_as(&s.channel, "tk", Disconnected).await, "dgt-2");
    s.stop().await;
}

/// The judge's picture of the board over the wire (issue 38 items 2 and 3): an illegal
/// move and its press are two irregularities; `corrected` sends the board its target
/// (`BoardOutOfStep`), the board's steps bring it back (`BoardInStep`, `GetGame.board_view`
/// in step), the press is ruled on by itself; a move from an app is copied onto the board
/// the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fmjd_5_4_a_board_is_told_its_target_and_follows_it_with_steps() {
    use pb::arbiter_service_client::ArbiterServiceClient;
    use pb::game_event::Kind as Ev;
    let s = TestServer::start("").await;
    started(&s.channel, "bv").await;
    let mut b = Board::open(&s.channel).await;
    let bound = b.bind(1, "bv", "dgt-9", 0).await.expect("bound");
    let view = bound.board_view.expect("board_view");
    assert!(view.in_step);
    assert_eq!(view.white, (21..=32).collect::<Vec<u32>>());
    // c3 to a5: illegal; then the press.
    ack(&b.call(2, Kind::Lift(square(22))).await.1);
    let (heard, answer) = b.call(3, Kind::Release(square(13))).await;
    ack(&answer);
    let illegal = heard
        .iter()
        .find(|f| matches!(event(f).kind, Some(Ev::IrregularityFlagged(_))))
        .map(|f| event(f).seq)
        .expect("flagged");
    let press = pb::BoardClockPress {
        side: pb::Side::White as i32,
    };
    let (heard, answer) = b.call(4, Kind::ClockPress(press)).await;
    ack(&answer);
    assert!(heard.iter().any(|f| matches!(&event(f).kind,
        Some(Ev::IrregularityFlagged(i)) if i.kind == pb::IrregularityKind::ClockPressWithoutMove as i32)));
    let g = get(&s.channel, "bv").await;
    assert_eq!(
        g.pending_irregularities.len(),
        2,
        "{:?}",
        g.pending_irregularities
    );
    // Corrected: the board hears the ruling and its target.
    ArbiterServiceClient::new(s.channel.clone())
        .rule_on_irregularity(pb::RuleOnIrregularityRequest {
            game_id: "bv".into(),
            irregularity_seq: illegal,
            ruling: pb::IrregularityRuling::Corrected as i32,
            reason: "put it back".into(),
            rule: String::new(),
        })
        .await
        .expect("corrected");
    let target = loop {
        let f = b.next().await;
        if let Some(Ev::BoardOutOfStep(o)) = &event(&f).kind {
            assert_eq!(f.message_id, 0);
            break o.clone();
        }
    };
    assert_eq!(target.cause, pb::BoardFollowCause::Corrected as i32);
    assert_eq!(target.to_clear, vec![13]);
    assert_eq!(target.to_fill.len(), 1);
    assert_eq!(target.to_fill[0].square, 22);
    let view = get(&s.channel, "bv").await.board_view.expect("view");
    assert!(!view.in_step);
    assert_eq!(
        (view.to_clear, view.to_fill),
        (target.to_clear, target.to_fill)
    );
    // The board follows; then the retake c3-d4 and its press.
    ack(&b.call(5, Kind::Lift(square(13))).await.1);
    let (heard, _) = b.call(6, Kind::Release(square(22))).await;
    assert!(
        heard
            .iter()
            .any(|f| matches!(event(f).kind, Some(Ev::BoardInStep(_)))),
        "{heard:?}"
    );
    ack(&b.call(7, Kind::Lift(square(22))).await.1);
    let (heard, _) = b.call(8, Kind::Release(square(18))).await;
    assert!(
        heard
            .iter()
            .any(|f| matches!(event(f).kind, Some(Ev::MovePlayed(_)))),
        "{heard:?}"
    );
    let press = pb::BoardClockPress {
        side: pb::Side::White as i32,
    };
    ack(&b.call(9, Kind::ClockPress(press)).await.1);
    // Black in an app: f6-g5 (11 to 16); the board copies it.
    submit(&s.channel, "bv", "f6-g5").await;
    let target = loop {
        let f = b.next().await;
        if let Some(Ev::BoardOutOfStep(o)) = &event(&f).kind {
            break o.clone();
        }
    };
    assert_eq!(target.cause, pb::BoardFollowCause::MoveElsewhere as i32);
    assert_eq!(target.to_clear, vec![11]);
    ack(&b.call(10, Kind::Lift(square(11))).await.1);
    let (heard, _) = b.call(11, Kind::Release(square(16))).await;
    assert!(
        heard
            .iter()
            .any(|f| matches!(event(f).kind, Some(Ev::BoardInStep(_)))),
        "{heard:?}"
    );
    let g = get(&s.channel, "bv").await;
    assert!(g.board_view.expect("view").in_step);
    // The press is still pending, ruled on by itself: the clocks stay as they are.
    assert_eq!(g.pending_irregularities.len(), 1);
    let before = g.clock.expect("clock").running_side;
    let ruled = ArbiterServiceClient::new(s.channel.clone())
        .rule_on_irregularity(pb::RuleOnIrregularityRequest {
            game_id: "bv".into(),
            irregularity_seq: 0,
            ruling: pb::IrregularityRuling::Stands as i32,
            reason: String::new(),
            rule: String::new(),
        })
        .await
        .expect("stands")
        .into_inner();
    let g = ruled.game.expect("game");
    assert!(g.pending_irregularities.is_empty());
    assert_eq!(g.clock.expect("clock").running_side, before);
    s.stop().await;
}
