//! One simulated board's stream to the judge, kept up as a real board keeps it: bound to
//! its game, a heartbeat every second while nothing else is sent, and when the stream
//! breaks (a restart, a failover, a transport error, a refused connection) opened again
//! with backoff and bound again with `resume_from_seq`, the last seq the board has seen.
//! What the judge recorded meanwhile comes back as the events missed (replayed after the
//! bound answer, or read from `WatchGame` where the server does not replay them), so the
//! caller can tell whether the message in flight when the stream broke was recorded.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::transport::Channel;

use std::collections::BTreeMap;
use std::sync::Mutex;

use tonic::Request;
use tonic::metadata::MetadataValue;

use super::args::BoardSimArgs;
use super::plan::Rng;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_feedback::Kind as Feedback;
use draughts_arbiter::api::pb::board_message::Kind;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_event::Kind as EventKind;
use draughts_arbiter::server::tls::ClientTls;

/// How often a board says it is still there while it sends nothing else (the judge
/// wants one at least every 2 s).
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// The first wait before opening the stream again, doubled up to [`BACKOFF_MAX`].
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// How long the events missed may take to come after the bound answer.
const CATCH_UP: Duration = Duration::from_secs(5);
/// How long a bind may take (a node that accepts the connection and hangs is left).
const BIND_WITHIN: Duration = Duration::from_secs(15);

/// Why a message did not get its answer.
#[derive(Debug)]
pub enum Lost {
    /// The stream broke in a way a board retries: open it again and rebind.
    Retry(String),
    /// A refusal that will not change (no right to the game, no such game, another
    /// board took the game over): the board gives up.
    Fatal(String),
}

/// What the judge answered to one message.
pub struct Answer {
    /// The events the message caused.
    pub events: Vec<pb::GameEvent>,
    /// The refusal, if it was refused.
    pub rejected: Option<pb::BoardRejected>,
}

/// The stream bound again.
pub struct Bound {
    /// The game as the bound answer gives it.
    pub game: pb::Game,
    /// The events recorded after the last one this board had seen before the bind, in
    /// seq order (none on the first bind).
    pub missed: Vec<pb::GameEvent>,
}

struct Conn {
    tx: mpsc::Sender<pb::BoardMessage>,
    rx: tonic::Streaming<pb::BoardFeedback>,
}

/// One board's stream, kept up.
pub struct Link<'a> {
    ctx: &'a Ctx<'a>,
    game_id: String,
    board_id: String,
    /// The server the stream goes to now (the first `--server`, another after a failure,
    /// or the owner a node named).
    target: String,
    conn: Option<Conn>,
    /// The last failure chose the next server already.
    moved: bool,
    next_id: u64,
    last_sent: Instant,
    rng: Rng,
    /// The game's last seq this board has seen (events and acknowledgements).
    pub last_seq: u64,
    /// Irregularities and warnings the judge flagged, not yet matched to an injected one.
    pub flags: Vec<pb::GameEvent>,
    /// Every event heard since the caller last took them, in seq order (rulings, the
    /// judge's targets for the board, in step again…).
    pub heard: Vec<pb::GameEvent>,
    /// The game's end, when the judge recorded it.
    pub finished: Option<pb::GameEvent>,
    /// Whether the game has started.
    pub started: bool,
    /// Acknowledgement latencies.
    pub acks: Vec<Duration>,
    /// Messages sent (heartbeats and binds included).
    pub messages: u64,
    /// Times the stream was opened again after it broke.
    pub reconnects: u32,
}

/// Whether a status ends the board's work or is retried.
fn classify(s: &tonic::Status) -> Lost {
    let text = format!("{:?}: {}", s.code(), s.message());
    match s.code() {
        Code::PermissionDenied
        | Code::Unauthenticated
        | Code::NotFound
        | Code::Aborted
        | Code::InvalidArgument
        | Code::FailedPrecondition
        | Code::AlreadyExists
        | Code::DataLoss
        | Code::Unimplemented
        | Code::OutOfRange => Lost::Fatal(text),
        // UNAVAILABLE (shutting down, not the owner, connection refused), transport
        // errors (UNKNOWN, INTERNAL from h2), CANCELLED, timeouts, RESOURCE_EXHAUSTED.
        _ => Lost::Retry(text),
    }
}

/// The owner's address in a follower's refusal ("… is served by node 'n' (addr), not
/// this one").
fn owner_addr(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once("' (")?;
    let (addr, _) = rest.split_once("), not this one")?;
    (!addr.is_empty() && !addr.contains(char::is_whitespace)).then_some(addr)
}

/// Whether a board message of ours caused `e` (not the stream's own health records).
pub fn from_board(e: &pb::GameEvent) -> bool {
    e.actor
        .as_ref()
        .is_some_and(|a| a.kind == pb::ActorKind::Board as i32)
        && !matches!(
            e.kind,
            Some(
                EventKind::BoardHealthChanged(_)
                    | EventKind::BoardFlooded(_)
                    | EventKind::Resync(_)
            )
        )
}

impl<'a> Link<'a> {
    /// A link for `game_id`, not connected yet ([`Link::open`] connects it).
    pub fn new(ctx: &'a Ctx<'a>, game_id: String, board_id: String, seed: u64) -> Link<'a> {
        Link {
            ctx,
            game_id,
            board_id,
            target: ctx.servers[0].clone(),
            conn: None,
            moved: false,
            next_id: 0,
            last_sent: Instant::now(),
            rng: Rng::new(seed),
            last_seq: 0,
            flags: Vec::new(),
            heard: Vec::new(),
            finished: None,
            started: false,
            acks: Vec::new(),
            messages: 0,
            reconnects: 0,
        }
    }

    /// The board's id (`BindBoard.board_id`).
    pub fn board_id(&self) -> &str {
        &self.board_id
    }

    /// The server the stream goes to now.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// A channel to the current server.
    fn channel(&self) -> Result<Channel, String> {
        self.ctx.channel(&self.target)
    }

    /// Notes an event the board hears; false for one heard already (a replay overlapping
    /// a watch).
    fn note(&mut self, e: &pb::GameEvent) -> bool {
        if e.seq <= self.last_seq && !matches!(e.kind, Some(EventKind::Resync(_))) {
            return false;
        }
        self.last_seq = self.last_seq.max(e.seq);
        if !matches!(e.kind, Some(EventKind::Resync(_))) {
            self.heard.push(e.clone());
        }
        match &e.kind {
            Some(EventKind::IrregularityFlagged(_) | EventKind::WarningIssued(_)) => {
                self.flags.push(e.clone());
            }
            Some(EventKind::GameFinished(_)) => self.finished = Some(e.clone()),
            Some(EventKind::GameStarted(_)) => self.started = true,
            Some(EventKind::Resync(r)) => {
                if let Some(g) = &r.game {
                    self.game_state(g);
                }
            }
            _ => {}
        }
        true
    }

    fn game_state(&mut self, g: &pb::Game) {
        let status = pb::GameStatus::try_from(g.status).unwrap_or(pb::GameStatus::Unspecified);
        self.started = self.started || status != pb::GameStatus::Created;
        if status == pb::GameStatus::Finished && self.finished.is_none() {
            // The end itself is in the log before the bind; what counts is that it ended.
            self.finished = Some(pb::GameEvent {
                seq: g.last_seq,
                rule: g.rule.clone(),
                game_id: g.id.clone(),
                ..Default::default()
            });
        }
        self.last_seq = self.last_seq.max(g.last_seq);
    }

    async fn push(&mut self, kind: Kind, board_ms: i64) -> Result<u64, Lost> {
        let conn = self
            .conn
            .as_ref()
            .ok_or_else(|| Lost::Retry("not connected".into()))?;
        self.next_id += 1;
        let id = self.next_id;
        let sent = conn
            .tx
            .send(pb::BoardMessage {
                message_id: id,
                board_time_ms: board_ms,
                kind: Some(kind),
            })
            .await;
        if sent.is_err() {
            self.conn = None;
            return Err(Lost::Retry("the board stream closed".into()));
        }
        self.messages += 1;
        self.last_sent = Instant::now();
        Ok(id)
    }

    /// The next feedback of the stream; a broken stream is forgotten.
    async fn next_feedback(&mut self) -> Result<pb::BoardFeedback, Lost> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| Lost::Retry("not connected".into()))?;
        let got = conn.rx.next().await;
        match got {
            Some(Ok(fb)) => Ok(fb),
            Some(Err(s)) => {
                self.conn = None;
                Err(classify(&s))
            }
            None => {
                self.conn = None;
                Err(Lost::Retry("the server ended the board stream".into()))
            }
        }
    }

    /// A feedback nobody waits for: events are noted, the rest (clocks, answers to
    /// heartbeats, a refusal of a heartbeat by a server that does not know them) dropped.
    fn unsolicited(&mut self, fb: &pb::BoardFeedback) {
        if let Some(Feedback::Event(e)) = &fb.kind {
            self.note(e);
        }
    }

    /// Sends one message and waits for its acknowledgement or refusal; a refusal for
    /// the rate limit is waited out and sent again, one from a node that does not serve
    /// the game (UNAVAILABLE) breaks the stream so that it is opened where the game is.
    pub async fn send(&mut self, kind: Kind, board_ms: i64) -> Result<Answer, Lost> {
        loop {
            let sent = Instant::now();
            let id = self.push(kind.clone(), board_ms).await?;
            let mut events = Vec::new();
            loop {
                let fb = self.next_feedback().await?;
                match fb.kind {
                    Some(Feedback::Event(e)) if fb.message_id == id => {
                        self.note(&e);
                        events.push(e);
                    }
                    Some(Feedback::Ack(a)) if fb.message_id == id => {
                        self.acks.push(sent.elapsed());
                        self.last_seq = self.last_seq.max(a.last_seq);
                        return Ok(Answer {
                            events,
                            rejected: None,
                        });
                    }
                    Some(Feedback::Rejected(r)) if fb.message_id == id => {
                        self.acks.push(sent.elapsed());
                        match r.code.as_str() {
                            "RESOURCE_EXHAUSTED" => {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                break;
                            }
                            "UNAVAILABLE" => return Err(self.elsewhere(&r.message)),
                            _ => {
                                return Ok(Answer {
                                    events,
                                    rejected: Some(r),
                                });
                            }
                        }
                    }
                    _ => self.unsolicited(&fb),
                }
            }
        }
    }

    /// This node does not serve the game now: the stream goes (to the owner it names,
    /// else to the next server).
    fn elsewhere(&mut self, message: &str) -> Lost {
        self.conn = None;
        self.moved = true;
        match owner_addr(message) {
            Some(addr) => {
                let scheme = if self.target.starts_with("https://") {
                    "https"
                } else {
                    "http"
                };
                self.target = format!("{scheme}://{addr}");
            }
            None => self.next_server(),
        }
        Lost::Retry(format!("UNAVAILABLE: {message}"))
    }

    fn next_server(&mut self) {
        let servers = &self.ctx.servers;
        let at = servers.iter().position(|s| *s == self.target);
        self.target = servers[at.map_or(0, |i| (i + 1) % servers.len())].clone();
    }

    /// Waits `time` as a board whose player thinks: a heartbeat every second, the
    /// events pushed meanwhile noted.
    pub async fn idle(&mut self, time: Duration) -> Result<(), Lost> {
        let until = tokio::time::Instant::now() + time;
        loop {
            let beat = tokio::time::Instant::from_std(self.last_sent + HEARTBEAT_EVERY);
            if beat <= tokio::time::Instant::now() {
                self.push(Kind::Heartbeat(pb::BoardHeartbeat {}), 0).await?;
                continue;
            }
            let got = {
                let conn = self
                    .conn
                    .as_mut()
                    .ok_or_else(|| Lost::Retry("not connected".into()))?;
                tokio::select! {
                    () = tokio::time::sleep_until(until) => return Ok(()),
                    () = tokio::time::sleep_until(beat) => None,
                    fb = conn.rx.next() => Some(fb),
                }
            };
            match got {
                None => {}
                Some(Some(Ok(fb))) => self.unsolicited(&fb),
                Some(Some(Err(s))) => {
                    self.conn = None;
                    return Err(classify(&s));
                }
                Some(None) => {
                    self.conn = None;
                    return Err(Lost::Retry("the server ended the board stream".into()));
                }
            }
        }
    }

    /// Hears every event of the game through `seq` (recorded by someone else, e.g. an
    /// arbiter's ruling): a heartbeat's acknowledgement comes after every event up to the
    /// game's last seq.
    pub async fn hear_through(&mut self, seq: u64) -> Result<(), Lost> {
        let give_up = Instant::now() + CATCH_UP;
        while self.last_seq < seq {
            if Instant::now() >= give_up {
                return Err(Lost::Retry(format!(
                    "the events through seq {seq} did not come (heard through {})",
                    self.last_seq
                )));
            }
            let answer = self
                .send(Kind::Heartbeat(pb::BoardHeartbeat {}), self.ctx.board_ms(0))
                .await?;
            if answer.rejected.is_some() {
                // A server that does not know heartbeats: the events come by themselves.
                self.idle(Duration::from_millis(50)).await?;
            }
        }
        Ok(())
    }

    /// Waits, heartbeating, until the arbiter starts the game (or it is over).
    pub async fn wait_started(&mut self) -> Result<(), Lost> {
        while !self.started && self.finished.is_none() {
            self.idle(Duration::from_millis(250)).await?;
        }
        Ok(())
    }

    /// Opens the stream and binds it, retrying with backoff (100 ms doubling to 5 s,
    /// with jitter) while the failure is one a board retries, for at most
    /// `--reconnect-for` without success.
    pub async fn open(&mut self) -> Result<Bound, String> {
        let give_up = Instant::now() + self.ctx.reconnect_for;
        let mut delay = BACKOFF_FIRST;
        let first = self.next_id == 0;
        loop {
            match self.bind_once().await {
                Ok(b) => {
                    if !first {
                        self.reconnects += 1;
                    }
                    return Ok(b);
                }
                Err(Lost::Fatal(why)) => {
                    return Err(format!(
                        "board {} on game {}: {why}",
                        self.board_id, self.game_id
                    ));
                }
                Err(Lost::Retry(why)) => {
                    if Instant::now() >= give_up {
                        return Err(format!(
                            "board {} on game {}: gave up after {} s without a stream: {why}",
                            self.board_id,
                            self.game_id,
                            self.ctx.reconnect_for.as_secs()
                        ));
                    }
                    // Full jitter over the upper half: boards that lost the same server
                    // do not all come back at the same instant.
                    let ms = u64::try_from(delay.as_millis()).unwrap_or(5_000);
                    let wait = ms / 2 + self.rng.below(ms / 2 + 1);
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    delay = (delay * 2).min(BACKOFF_MAX);
                    // A node that is gone: try the next one (a node that answered
                    // named where to go already).
                    if !std::mem::take(&mut self.moved) {
                        self.next_server();
                    }
                }
            }
        }
    }

    async fn bind_once(&mut self) -> Result<Bound, Lost> {
        match tokio::time::timeout(BIND_WITHIN, self.bind_inner()).await {
            Ok(r) => r,
            Err(_) => {
                self.conn = None;
                Err(Lost::Retry(format!(
                    "no answer to the bind within {} s",
                    BIND_WITHIN.as_secs()
                )))
            }
        }
    }

    async fn bind_inner(&mut self) -> Result<Bound, Lost> {
        self.conn = None;
        let channel = self.channel().map_err(Lost::Fatal)?;
        let (tx, rx) = mpsc::channel::<pb::BoardMessage>(8);
        let stream = BoardServiceClient::new(channel)
            .connect(self.ctx.request(ReceiverStream::new(rx)))
            .await
            .map_err(|s| classify(&s))?
            .into_inner();
        self.conn = Some(Conn { tx, rx: stream });
        let resume = self.last_seq;
        let bind = Kind::Bind(pb::BindBoard {
            game_id: self.game_id.clone(),
            board_id: self.board_id.clone(),
            resume_from_seq: resume,
        });
        let id = self.push(bind, self.ctx.board_ms(0)).await?;
        let game = loop {
            let fb = self.next_feedback().await?;
            match fb.kind {
                Some(Feedback::Bound(g)) => break g,
                Some(Feedback::Rejected(r)) if fb.message_id == id => {
                    return Err(match r.code.as_str() {
                        "UNAVAILABLE" => self.elsewhere(&r.message),
                        "RESOURCE_EXHAUSTED" | "INTERNAL" | "UNKNOWN" => {
                            self.conn = None;
                            Lost::Retry(format!("bind: {}: {}", r.code, r.message))
                        }
                        _ => {
                            self.conn = None;
                            Lost::Fatal(format!("bind refused: {}: {}", r.code, r.message))
                        }
                    });
                }
                _ => {}
            }
        };
        let mut missed = Vec::new();
        if resume > 0 && game.last_seq > resume {
            self.catch_up(resume, game.last_seq, &mut missed).await?;
        }
        self.game_state(&game);
        Ok(Bound { game, missed })
    }

    /// Collects the events after `resume` through `to`: replayed on the stream after the
    /// bound answer, before the answer to a heartbeat sent at once; what a server that
    /// does not replay leaves out is read with `WatchGame`.
    async fn catch_up(
        &mut self,
        resume: u64,
        to: u64,
        missed: &mut Vec<pb::GameEvent>,
    ) -> Result<(), Lost> {
        let beat = self.push(Kind::Heartbeat(pb::BoardHeartbeat {}), 0).await?;
        let deadline = tokio::time::Instant::now() + CATCH_UP;
        let mut seen = resume;
        while seen < to {
            let fb = match tokio::time::timeout_at(deadline, self.next_feedback()).await {
                Ok(fb) => fb?,
                Err(_) => break,
            };
            match &fb.kind {
                Some(Feedback::Event(e)) if e.seq > seen => {
                    seen = e.seq;
                    missed.push(e.clone());
                }
                Some(Feedback::Ack(_) | Feedback::Rejected(_)) if fb.message_id == beat => break,
                _ => {}
            }
        }
        if seen < to {
            let mut watch = BroadcastServiceClient::new(self.channel().map_err(Lost::Fatal)?)
                .watch_game(self.ctx.request(pb::WatchGameRequest {
                    game_id: self.game_id.clone(),
                    from_seq: seen,
                }))
                .await
                .map_err(|s| classify(&s))?
                .into_inner();
            while seen < to {
                match tokio::time::timeout_at(deadline, watch.next()).await {
                    Ok(Some(Ok(e))) if e.seq > seen => {
                        seen = e.seq;
                        missed.push(e);
                    }
                    Ok(Some(Ok(_))) => {}
                    Ok(Some(Err(s))) => return Err(classify(&s)),
                    Ok(None) | Err(_) => {
                        return Err(Lost::Retry(format!(
                            "the events after seq {resume} did not come (seen through {seen} of {to})"
                        )));
                    }
                }
            }
        }
        for e in missed.iter() {
            self.note(e);
        }
        Ok(())
    }

    /// Takes the judge's flag of this kind, if it raised one with a rule.
    pub fn take_flag(&mut self, kind: pb::IrregularityKind) -> Option<pb::GameEvent> {
        let i = self.flags.iter().position(|e| {
            matches!(&e.kind, Some(EventKind::IrregularityFlagged(f)) if f.kind == kind as i32)
                && !e.rule.is_empty()
        })?;
        Some(self.flags.remove(i))
    }
}

/// Everything the games share.
pub(super) struct Ctx<'a> {
    pub(super) args: &'a BoardSimArgs,
    /// The servers, in the order they are tried.
    pub(super) servers: Vec<String>,
    /// A channel per server (or owner a node named), connected lazily.
    pub(super) channels: Mutex<BTreeMap<String, Channel>>,
    pub(super) reconnect_for: Duration,
    pub(super) prefix: String,
    pub(super) started: Instant,
    /// This process's part of the default board ids: `sim-<host>-<pid>`.
    pub(super) board_prefix: String,
    /// How many games this process plays.
    pub(super) total: usize,
}

impl Ctx<'_> {
    /// The channel to `server` (a new one is connected on its first call; a node that is
    /// down answers UNAVAILABLE and is tried again later).
    pub(super) fn channel(&self, server: &str) -> Result<Channel, String> {
        let mut channels = self
            .channels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = channels.get(server) {
            return Ok(c.clone());
        }
        let tls = ClientTls {
            ca_cert: self.args.ca_cert.as_deref(),
            cert: None,
            key: None,
        };
        let c = draughts_arbiter::cli::endpoint(server, &tls)?
            .connect_timeout(Duration::from_secs(2))
            .connect_lazy();
        channels.insert(server.to_string(), c.clone());
        Ok(c)
    }

    /// The first server's channel (for the unary calls of a game without a board yet).
    pub(super) fn first(&self) -> Result<Channel, String> {
        self.channel(&self.servers[0])
    }

    /// The board's clock: ms since the simulator started, plus `jitter`.
    pub(super) fn board_ms(&self, jitter: i64) -> i64 {
        i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX) + 1 + jitter
    }

    /// The id of the board playing game `n` of the file.
    pub(super) fn board_id(&self, n: usize) -> String {
        match &self.args.board_id {
            Some(name) if self.total == 1 => name.clone(),
            Some(name) => format!("{name}-{n}"),
            None => format!("{}-{n}", self.board_prefix),
        }
    }

    pub(super) fn request<T>(&self, msg: T) -> Request<T> {
        authorized(msg, self.args.token.as_deref())
    }

    /// The token an arbiter's ruling is made with: `--arbiter-token`, or without
    /// `--bind` the `--token` the games were created with; none bound to games an
    /// arbiter created without `--arbiter-token` (then nothing that needs a ruling is
    /// made).
    pub(super) fn arbiter_token(&self) -> Option<&str> {
        let own = if self.args.bind.is_empty() {
            self.args.token.as_deref()
        } else {
            None
        };
        self.args.arbiter_token.as_deref().or(own)
    }

    /// Whether rulings can be asked for.
    pub(super) fn rulings(&self) -> bool {
        self.args.bind.is_empty() || self.args.arbiter_token.is_some()
    }

    /// A request with the arbiter's token (see [`Ctx::arbiter_token`]).
    pub(super) fn arbiter_request<T>(&self, msg: T) -> Request<T> {
        authorized(msg, self.arbiter_token())
    }
}

fn authorized<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token
        && let Ok(v) = MetadataValue::try_from(format!("Bearer {t}"))
    {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_followers_refusal_names_the_owner() {
        assert_eq!(
            owner_addr("game 'g1' is served by node 'n2' (127.0.0.1:5002), not this one"),
            Some("127.0.0.1:5002")
        );
        assert_eq!(
            owner_addr("this node does not hold the lease of game 'g1'"),
            None
        );
    }

    #[test]
    fn refusals_that_will_not_change_end_the_board_and_the_rest_are_retried() {
        for code in [Code::PermissionDenied, Code::NotFound, Code::Aborted] {
            assert!(matches!(
                classify(&tonic::Status::new(code, "x")),
                Lost::Fatal(_)
            ));
        }
        for code in [
            Code::Unavailable,
            Code::Unknown,
            Code::Internal,
            Code::Cancelled,
        ] {
            assert!(matches!(
                classify(&tonic::Status::new(code, "x")),
                Lost::Retry(_)
            ));
        }
    }
}
