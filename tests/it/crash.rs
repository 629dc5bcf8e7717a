//! Crash test (issue 6): the real server binary, killed with SIGKILL at random moments.
//!
//! A few tasks play random legal moves on several games (untimed and timed) of a server
//! started as a child process on its own SQLite data directory. At a random moment the
//! child is killed with `kill -9`; after a short random downtime it is started again on the
//! same directory and every game is checked:
//! - every acknowledged move (its RPC returned OK) is in `GetGame`, at its place, and the
//!   move list replays from the start position to the game's FEN;
//! - nothing is half-applied: `WatchGame` from 0 gives exactly `last_seq` events, dense
//!   from 1, whose moves are the game's moves;
//! - started games resumed: status RUNNING, the log ends with `OutageRecorded`, and a
//!   timed game's clocks show the downtime was not charged (or was, for the games whose
//!   settings ask for it).
//!
//! Random choices come from a seed printed at the start (`CRASH_SEED=n` to reuse one; the
//! moments of the kills still depend on timing). `CRASH_CYCLES=n` changes the number of
//! kills (default 24).
//!
//! The second test stops the binary the polite way: SIGTERM while 1,000 watch streams and
//! 100 board streams are open (exit 0 within 2 s, every stream ended with UNAVAILABLE,
//! the WAL truncated, everything replays after a restart).

use std::fmt::Display;
use std::fs::OpenOptions;
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::rules_service_client::RulesServiceClient;
use draughts_arbiter::notation::{parse_fen, parse_move, write_fen};
use draughts_arbiter::rules::Variant;
use tokio::time::timeout;
use tonic::transport::{Channel, Endpoint};

const CYCLES: usize = 24;
const TASKS: usize = 4;
const GAMES_PER_TASK: usize = 2;
const TIME_CONTROL: &str = "10m+5s";
/// Each side's time before its first move under [`TIME_CONTROL`].
const INITIAL_MS: i64 = 600_000;
/// Generous bound for one RPC; on loopback they take milliseconds.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a (re)started server may take to answer; normally well under a second.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Server clock readings taken by different parts of the server may differ by this much.
const CLOCK_SLACK_MS: i64 = 50;

/// splitmix64: enough randomness for choosing moves and moments.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo))
    }
}

/// The server child process; killed (SIGKILL) and reaped when dropped, so a failing test
/// leaves nothing behind.
struct Server {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Server {
    fn spawn(data: &Path, log: &Path) -> Server {
        // Bind port 0 to learn a free port, release it, hand it to the child.
        let port = StdListener::bind("127.0.0.1:0")
            .expect("bind a free port")
            .local_addr()
            .expect("local address")
            .port();
        let log_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("server log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"));
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ARBITER_") {
                cmd.env_remove(&key);
            }
        }
        cmd.arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(data)
            .env("ARBITER_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file));
        Server {
            child: cmd.spawn().expect("start the server binary"),
            url: format!("http://127.0.0.1:{port}"),
            log: log.to_path_buf(),
        }
    }

    /// SIGTERM, as systemd and Kubernetes stop a service.
    fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill(1)");
        assert!(status.success(), "kill -TERM failed");
    }

    /// `kill -9` (std's `Child::kill` is SIGKILL on unix) and reap.
    fn kill(&mut self) {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Retries a cheap RPC until the server answers (it listens only after recovery).
    async fn ready(&mut self) -> Result<Channel, String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Err(format!("server exited: {status}"));
            }
            if Instant::now() > deadline {
                return Err(format!("no answer within {READY_TIMEOUT:?}"));
            }
            let endpoint = Endpoint::from_shared(self.url.clone())
                .map_err(|e| e.to_string())?
                .connect_timeout(Duration::from_millis(500));
            if let Ok(Ok(channel)) = timeout(Duration::from_secs(1), endpoint.connect()).await {
                let mut rules = RulesServiceClient::new(channel.clone());
                let probe = rules.legal_moves(pb::LegalMovesRequest {
                    variant: pb::Variant::Russian as i32,
                    fen: String::new(),
                });
                if let Ok(Ok(_)) = timeout(Duration::from_secs(2), probe).await {
                    return Ok(channel);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server on `data` and waits until it answers. Retries on a new port if the
/// released one was taken meanwhile.
async fn start(data: &Path, log: &Path) -> (Server, Channel) {
    let mut attempt = 0;
    loop {
        let mut server = Server::spawn(data, log);
        match server.ready().await {
            Ok(channel) => return (server, channel),
            Err(e) if attempt < 3 && server.log_tail().contains("listen") => {
                eprintln!("server could not listen ({e}); another port");
                attempt += 1;
            }
            Err(e) => panic!(
                "server did not become ready: {e}\n--- server log ---\n{}",
                server.log_tail()
            ),
        }
    }
}

/// A move the server acknowledged.
#[derive(Debug, Clone)]
struct Ack {
    /// Its index in the game's move list.
    index: usize,
    /// The seq of its `MovePlayed` event.
    seq: u64,
    /// The notation the server recorded.
    notation: String,
    /// The position after it.
    fen_after: String,
}

/// What the test knows of one game.
#[derive(Debug)]
struct GameModel {
    id: String,
    timed: bool,
    /// The game's settings ask for the downtime to be charged.
    charged: bool,
    /// CreateGame was acknowledged (or the game was seen since).
    confirmed: bool,
    /// StartGame was acknowledged (or the game was seen started).
    started: bool,
    finished: bool,
    /// Checked as finished after a restart; only the final check reads it again.
    settled: bool,
    acked: Vec<Ack>,
    fen: String,
    last_seq: u64,
    moves: usize,
}

impl GameModel {
    fn update(&mut self, g: &pb::Game) {
        self.fen.clone_from(&g.fen);
        self.last_seq = g.last_seq;
        self.moves = g.move_count as usize;
        self.started |= g.status != pb::GameStatus::Created as i32;
        self.finished = g.status == pb::GameStatus::Finished as i32;
    }
}

/// One driving task's state, kept across cycles.
struct Driver {
    task: usize,
    rng: Rng,
    games: Vec<GameModel>,
    created: usize,
}

/// Why a driver stopped early.
fn interrupted(stop: &AtomicBool, what: impl Display) -> Result<(), String> {
    if stop.load(Ordering::SeqCst) {
        // The server was killed under us: expected.
        Ok(())
    } else {
        Err(what.to_string())
    }
}

async fn rpc<T>(
    fut: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, String> {
    match timeout(RPC_TIMEOUT, fut).await {
        Ok(Ok(r)) => Ok(r.into_inner()),
        Ok(Err(s)) => Err(format!("{:?}: {}", s.code(), s.message())),
        Err(_) => Err("timed out".into()),
    }
}

impl Driver {
    fn new(task: usize, seed: u64) -> Driver {
        Driver {
            task,
            rng: Rng(seed ^ (task as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F)),
            games: Vec::new(),
            created: 0,
        }
    }

    /// Plays until `stop` is set (and the server killed). Errors seen after `stop` are
    /// the kill's doing; any other is a failure.
    async fn drive(
        mut self,
        channel: Channel,
        stop: Arc<AtomicBool>,
    ) -> (Driver, Result<(), String>) {
        let result = self.drive_inner(channel, &stop).await;
        (self, result)
    }

    async fn drive_inner(&mut self, channel: Channel, stop: &AtomicBool) -> Result<(), String> {
        let mut games = GameServiceClient::new(channel.clone());
        let mut rules = RulesServiceClient::new(channel);
        loop {
            if self.games.iter().filter(|g| !g.finished).count() < GAMES_PER_TASK {
                if stop.load(Ordering::SeqCst) {
                    return Ok(());
                }
                if let Err(e) = self.create(&mut games).await {
                    return interrupted(stop, e);
                }
            }
            for i in 0..self.games.len() {
                if self.games[i].finished {
                    continue;
                }
                if stop.load(Ordering::SeqCst) {
                    return Ok(());
                }
                if let Err(e) = self.step(i, &mut games, &mut rules).await {
                    return interrupted(stop, format!("{}: {e}", self.games[i].id));
                }
            }
        }
    }

    async fn create(&mut self, games: &mut GameServiceClient<Channel>) -> Result<(), String> {
        let n = self.created;
        self.created += 1;
        let timed = n.is_multiple_of(2);
        // Every other timed game of task 0 asks for the downtime to be charged.
        let charged = timed && self.task == 0 && n % 4 == 2;
        let id = format!("crash-t{}-g{n}", self.task);
        self.games.push(GameModel {
            id: id.clone(),
            timed,
            charged,
            confirmed: false,
            started: false,
            finished: false,
            settled: false,
            acked: Vec::new(),
            fen: String::new(),
            last_seq: 0,
            moves: 0,
        });
        let g = rpc(games.create_game(pb::CreateGameRequest {
            variant: pb::Variant::Russian as i32,
            time_control: if timed {
                TIME_CONTROL.into()
            } else {
                String::new()
            },
            white: Some(pb::Player {
                name: "White".into(),
                ..Default::default()
            }),
            black: Some(pb::Player {
                name: "Black".into(),
                ..Default::default()
            }),
            event: "Crash test".into(),
            round: "1".into(),
            board: n as u32 + 1,
            start_fen: String::new(),
            settings: Some(pb::GameSettings {
                charge_outage_to_side_on_move: charged,
                ..Default::default()
            }),
            game_id: id,
            site: String::new(),
            time_zone: String::new(),
        }))
        .await?;
        let model = self.games.last_mut().expect("just pushed");
        model.confirmed = true;
        if timed && (g.white_clock_ms, g.black_clock_ms) != (INITIAL_MS, INITIAL_MS) {
            return Err(format!(
                "a new {TIME_CONTROL} game shows {} and {} ms",
                g.white_clock_ms, g.black_clock_ms
            ));
        }
        model.update(&g);
        Ok(())
    }

    async fn step(
        &mut self,
        i: usize,
        games: &mut GameServiceClient<Channel>,
        rules: &mut RulesServiceClient<Channel>,
    ) -> Result<(), String> {
        let model = &mut self.games[i];
        if !model.started {
            let r = rpc(games.start_game(pb::StartGameRequest {
                game_id: model.id.clone(),
                expected_seq: model.last_seq,
            }))
            .await?;
            let g = r.game.ok_or("StartGame without the game")?;
            model.started = true;
            model.update(&g);
            return Ok(());
        }
        let legal = rpc(rules.legal_moves(pb::LegalMovesRequest {
            variant: pb::Variant::Russian as i32,
            fen: model.fen.clone(),
        }))
        .await?
        .moves;
        if legal.is_empty() {
            return Err(format!(
                "no legal move in {} but the game is not finished",
                model.fen
            ));
        }
        let choice = legal[self.rng.below(legal.len())].notation.clone();
        let r = rpc(games.submit_move(pb::SubmitMoveRequest {
            game_id: model.id.clone(),
            r#move: choice.clone(),
            expected_seq: model.last_seq,
            side: 0,
            offer_draw: false,
        }))
        .await?;
        let g = r.game.ok_or("SubmitMove without the game")?;
        let played: Vec<(u64, &pb::MovePlayed)> = r
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                Some(pb::game_event::Kind::MovePlayed(m)) => Some((e.seq, m)),
                _ => None,
            })
            .collect();
        let [(seq, played)] = played[..] else {
            return Err(format!("{choice}: {} MovePlayed events", played.len()));
        };
        if g.move_count as usize != model.moves + 1 {
            return Err(format!(
                "{choice}: {} moves after the move, {} before",
                g.move_count, model.moves
            ));
        }
        model.acked.push(Ack {
            index: model.moves,
            seq,
            notation: played
                .r#move
                .as_ref()
                .map(|m| m.notation.clone())
                .unwrap_or_default(),
            fen_after: played.fen_after.clone(),
        });
        model.update(&g);
        Ok(())
    }
}

fn ms(t: Option<&prost_types::Timestamp>) -> i64 {
    t.map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000)
}

fn side_name(side: i32) -> &'static str {
    pb::Side::try_from(side).map_or("?", |s| s.as_str_name())
}

/// Checks one game after a restart and brings the model up to date. `Ok(false)`: the
/// game's creation was never acknowledged and it does not exist (forget it).
async fn verify_game(
    channel: &Channel,
    model: &mut GameModel,
    downtime: Duration,
) -> Result<bool, String> {
    let mut games = GameServiceClient::new(channel.clone());
    let g = match timeout(
        RPC_TIMEOUT,
        games.get_game(pb::GetGameRequest {
            game_id: model.id.clone(),
        }),
    )
    .await
    {
        Ok(Ok(r)) => r.into_inner(),
        Ok(Err(s)) if s.code() == tonic::Code::NotFound && !model.confirmed => return Ok(false),
        Ok(Err(s)) => return Err(format!("GetGame: {:?}: {}", s.code(), s.message())),
        Err(_) => return Err("GetGame timed out".into()),
    };

    // The move list replays from the start position to the game's position.
    let mut pos =
        parse_fen(&g.start_fen, Variant::Russian).map_err(|e| format!("start_fen: {e}"))?;
    let mut fens = Vec::with_capacity(g.moves.len());
    let mut notations = Vec::with_capacity(g.moves.len());
    for (i, m) in g.moves.iter().enumerate() {
        let notation = m
            .r#move
            .as_ref()
            .map(|m| m.notation.clone())
            .unwrap_or_default();
        let mv = parse_move(&notation, &pos).map_err(|e| format!("move {i} {notation}: {e}"))?;
        pos = pos
            .play(&mv)
            .map_err(|e| format!("move {i} {notation}: {e}"))?;
        fens.push(write_fen(&pos));
        notations.push(notation);
    }
    if write_fen(&pos) != g.fen {
        return Err(format!(
            "the moves lead to {} but the game shows {}",
            write_fen(&pos),
            g.fen
        ));
    }

    // The log: exactly last_seq events, dense from 1, whose moves are the game's moves.
    let mut watch = BroadcastServiceClient::new(channel.clone());
    let mut stream = rpc(watch.watch_game(pb::WatchGameRequest {
        game_id: model.id.clone(),
        from_seq: 0,
    }))
    .await
    .map_err(|e| format!("WatchGame: {e}"))?;
    let mut events = Vec::new();
    while (events.len() as u64) < g.last_seq {
        match timeout(RPC_TIMEOUT, stream.message()).await {
            Ok(Ok(Some(e))) => events.push(e),
            Ok(Ok(None)) => break,
            Ok(Err(s)) => return Err(format!("WatchGame stream: {s}")),
            Err(_) => {
                return Err(format!(
                    "WatchGame: {} of {} events",
                    events.len(),
                    g.last_seq
                ));
            }
        }
    }
    drop(stream);
    if events.len() as u64 != g.last_seq {
        return Err(format!(
            "last_seq {} but the log holds {} events",
            g.last_seq,
            events.len()
        ));
    }
    if let Some((i, e)) = events
        .iter()
        .enumerate()
        .find(|(i, e)| e.seq != *i as u64 + 1)
    {
        return Err(format!("event {} has seq {}: not dense", i + 1, e.seq));
    }
    let played: Vec<(u64, &pb::MovePlayed)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(pb::game_event::Kind::MovePlayed(m)) => Some((e.seq, m)),
            _ => None,
        })
        .collect();
    if played.len() != g.moves.len() {
        return Err(format!(
            "{} MovePlayed events but {} moves",
            played.len(),
            g.moves.len()
        ));
    }
    for (i, (seq, m)) in played.iter().enumerate() {
        let notation = m.r#move.as_ref().map_or("", |m| m.notation.as_str());
        if notation != notations[i] || m.fen_after != fens[i] {
            return Err(format!(
                "event {seq} ({notation} -> {}) is not move {i} ({} -> {})",
                m.fen_after, notations[i], fens[i]
            ));
        }
    }

    // Every acknowledged move is there, at its place.
    for ack in &model.acked {
        let Some((seq, m)) = played.get(ack.index) else {
            return Err(format!(
                "acknowledged move {} ({}, seq {}) is missing: {} moves",
                ack.index,
                ack.notation,
                ack.seq,
                played.len()
            ));
        };
        let notation = m.r#move.as_ref().map_or("", |m| m.notation.as_str());
        if *seq != ack.seq || notation != ack.notation || m.fen_after != ack.fen_after {
            return Err(format!(
                "acknowledged move {} was {} at seq {} -> {}; now {} at seq {} -> {}",
                ack.index, ack.notation, ack.seq, ack.fen_after, notation, seq, m.fen_after
            ));
        }
    }

    let finished = g.status == pb::GameStatus::Finished as i32;
    if model.finished && !finished {
        return Err("a finished game is no longer finished".into());
    }
    if model.started && g.status == pb::GameStatus::Created as i32 {
        return Err("an acknowledged StartGame is lost".into());
    }
    if !finished && g.status != pb::GameStatus::Created as i32 {
        check_resumed(model, &g, &events, downtime)?;
    }
    model.confirmed = true;
    model.update(&g);
    Ok(true)
}

/// A started game after a restart: running, its log ending with the outage recorded at
/// recovery, and (timed) its clocks charged exactly what the settings say.
fn check_resumed(
    model: &GameModel,
    g: &pb::Game,
    events: &[pb::GameEvent],
    downtime: Duration,
) -> Result<(), String> {
    if g.status != pb::GameStatus::Running as i32 {
        return Err(format!("status {} after recovery, not RUNNING", g.status));
    }
    let is_outage =
        |e: &pb::GameEvent| matches!(e.kind, Some(pb::game_event::Kind::OutageRecorded(_)));
    let outage = |e: &pb::GameEvent| match &e.kind {
        Some(pb::game_event::Kind::OutageRecorded(o)) => Some(*o),
        _ => None,
    };
    let last = events.last().ok_or("empty log")?;
    let Some(resumed) = outage(last) else {
        return Err(format!(
            "the log does not end with OutageRecorded: {:?}",
            last.kind
        ));
    };
    // Not the kill-to-restart time, but at least the downtime we waited: long enough for
    // the charged and uncharged readings below to differ.
    if resumed.duration_ms < downtime.as_millis() as i64 {
        return Err(format!(
            "outage of {} ms recorded after {} ms down",
            resumed.duration_ms,
            downtime.as_millis()
        ));
    }
    let tail = events
        .iter()
        .rposition(|e| !is_outage(e))
        .ok_or("only outages")?
        + 1;
    for o in events[tail..].iter().filter_map(outage) {
        if o.charged != model.charged {
            return Err(format!(
                "outage charged={} for a game with charged={}",
                o.charged, model.charged
            ));
        }
    }
    if !model.timed {
        return Ok(());
    }
    let clock = g.clock.as_ref().ok_or("a timed game without a clock")?;
    if clock.state != pb::ClockState::Running as i32 || clock.running_side != g.side_to_move {
        return Err(format!(
            "clock state {} running {} after recovery; {} to move",
            clock.state,
            side_name(clock.running_side),
            side_name(g.side_to_move)
        ));
    }
    // Each side's time after its last move (with the increment), or the initial time.
    let after_last_move = |side: pb::Side| {
        g.moves
            .iter()
            .rev()
            .find(|m| m.side == side as i32)
            .map_or(INITIAL_MS, |m| match side {
                pb::Side::White => m.white_clock_ms,
                _ => m.black_clock_ms,
            })
    };
    let (on_move, waiting) = if g.side_to_move == pb::Side::White as i32 {
        (pb::Side::White, pb::Side::Black)
    } else {
        (pb::Side::Black, pb::Side::White)
    };
    let now = |side: pb::Side| match side {
        pb::Side::White => clock.white_ms,
        _ => clock.black_ms,
    };
    if (now(waiting) - after_last_move(waiting)).abs() > 1 {
        return Err(format!(
            "the waiting side's clock moved: {} ms after its move, {} ms now",
            after_last_move(waiting),
            now(waiting)
        ));
    }
    // The side on move's clock started with the last event that is not an outage (the
    // opponent's move, or the start). Uncharged, each outage paused it from when the
    // service was last seen serving (its last alive mark, or the last event if later) to
    // the restart, so it ran only while a run served; charged, it ran all along.
    let read_at = ms(clock.read_at.as_ref());
    let ran_ms = if model.charged {
        read_at - events[tail - 1].monotonic_ms
    } else {
        let mut served_from = events[tail - 1].monotonic_ms;
        let mut ran = 0;
        for o in events[tail..].iter().filter_map(outage) {
            ran += ms(o.last_seen.as_ref()) - served_from;
            served_from = ms(o.resumed_at.as_ref());
        }
        ran + read_at - served_from
    };
    let used = after_last_move(on_move) - now(on_move);
    if (used - ran_ms).abs() > CLOCK_SLACK_MS {
        return Err(format!(
            "{} used {used} ms since its clock started; expected {ran_ms} ms (charged={}, \
             last outage {} ms)",
            on_move.as_str_name(),
            model.charged,
            resumed.duration_ms
        ));
    }
    Ok(())
}

/// Checks every game (finished ones once, and all of them at the end).
async fn verify_all(
    channel: &Channel,
    drivers: &mut [Driver],
    downtime: Duration,
    last: bool,
) -> Result<(), String> {
    for d in drivers.iter_mut() {
        let mut i = 0;
        while i < d.games.len() {
            let model = &mut d.games[i];
            if model.settled && !last {
                i += 1;
                continue;
            }
            let keep = verify_game(channel, model, downtime)
                .await
                .map_err(|e| format!("game {}: {e}", model.id))?;
            if keep {
                model.settled = model.finished;
                i += 1;
            } else {
                d.games.remove(i);
            }
        }
    }
    // The store's finished flags agree with the games.
    let mut games = GameServiceClient::new(channel.clone());
    let listed = rpc(games.list_games(pb::ListGamesRequest {
        event: "Crash test".into(),
        round: String::new(),
        unfinished_only: true,
        include_moves: false,
    }))
    .await
    .map_err(|e| format!("ListGames: {e}"))?;
    for g in &listed.games {
        if g.status == pb::GameStatus::Finished as i32 {
            return Err(format!(
                "ListGames(unfinished_only) lists finished game {}",
                g.id
            ));
        }
    }
    let unfinished = drivers
        .iter()
        .flat_map(|d| &d.games)
        .filter(|m| !m.finished)
        .count();
    if listed.games.len() != unfinished {
        return Err(format!(
            "ListGames(unfinished_only) lists {} games, {unfinished} are unfinished",
            listed.games.len()
        ));
    }
    Ok(())
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_loses_no_acknowledged_move() {
    let began = Instant::now();
    let seed = env_number("CRASH_SEED").unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let cycles = env_number("CRASH_CYCLES").map_or(CYCLES, |n| n as usize);
    eprintln!("crash test: seed {seed} (CRASH_SEED={seed} to reuse)");
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let mut rng = Rng(seed);
    let mut drivers: Vec<Driver> = (0..TASKS).map(|t| Driver::new(t, seed)).collect();
    let mut downtime = Duration::ZERO;

    for cycle in 0..=cycles {
        let log = dir.path().join(format!("server-{cycle}.log"));
        let (mut server, channel) = start(&data, &log).await;
        if let Err(e) = verify_all(&channel, &mut drivers, downtime, cycle == cycles).await {
            panic!(
                "after restart {cycle} (seed {seed}): {e}\n--- server log ---\n{}",
                server.log_tail()
            );
        }
        if cycle == cycles {
            break;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = drivers
            .drain(..)
            .map(|d| tokio::spawn(d.drive(channel.clone(), stop.clone())))
            .collect();
        // Mostly while moves fly; sometimes right after the restart.
        let run_for = if rng.below(5) == 0 {
            rng.millis(1, 40)
        } else {
            rng.millis(40, 400)
        };
        tokio::time::sleep(run_for).await;
        stop.store(true, Ordering::SeqCst);
        server.kill();
        for task in tasks {
            let (driver, result) = task.await.expect("driver task");
            if let Err(e) = result {
                panic!(
                    "cycle {cycle} (seed {seed}), task {}: {e}\n--- server log ---\n{}",
                    driver.task,
                    server.log_tail()
                );
            }
            drivers.push(driver);
        }
        drop(channel);
        // Down long enough for a charged outage to show on the clocks.
        downtime = rng.millis(100, 250);
        tokio::time::sleep(downtime).await;
    }

    let games: Vec<&GameModel> = drivers.iter().flat_map(|d| &d.games).collect();
    let acked: usize = games.iter().map(|g| g.acked.len()).sum();
    let finished = games.iter().filter(|g| g.finished).count();
    assert!(
        acked >= cycles,
        "only {acked} moves acknowledged in {cycles} cycles: the test exercised little"
    );
    eprintln!(
        "crash test: {cycles} cycles, {acked} acknowledged moves, all present \
         ({} games, {finished} finished, {:.1} s)",
        games.len(),
        began.elapsed().as_secs_f64()
    );
}

/// SIGTERM with 1,000 watchers and 100 boards connected: the server stops accepting, ends
/// every stream with UNAVAILABLE "server shutting down", checkpoints and truncates the
/// WAL and exits 0 within 2 s; a restart replays everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_1000_watchers_and_100_boards_exits_cleanly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let (mut server, channel) = start(&data, &dir.path().join("server-0.log")).await;
    let mut games = GameServiceClient::new(channel.clone());
    let mut ids = Vec::new();
    // A game for each board: a second board stream on a game would take it over.
    for board in 1..=100 {
        let g = games
            .create_game(pb::CreateGameRequest {
                variant: pb::Variant::Russian as i32,
                time_control: TIME_CONTROL.into(),
                event: "Open".into(),
                round: "1".into(),
                board,
                ..Default::default()
            })
            .await
            .expect("create")
            .into_inner();
        games
            .start_game(pb::StartGameRequest {
                game_id: g.id.clone(),
                expected_seq: 0,
            })
            .await
            .expect("start");
        games
            .submit_move(pb::SubmitMoveRequest {
                game_id: g.id.clone(),
                r#move: "c3-d4".into(),
                ..Default::default()
            })
            .await
            .expect("move");
        ids.push(g.id);
    }
    // Ten connections of 100 watch streams each, then 100 board streams.
    let mut watchers = Vec::new();
    for c in 0..10 {
        let conn = Endpoint::from_shared(server.url.clone())
            .expect("url")
            .connect()
            .await
            .expect("connect");
        for w in 0..100 {
            let mut stream = BroadcastServiceClient::new(conn.clone())
                .watch_game(pb::WatchGameRequest {
                    game_id: ids[(c + w) % ids.len()].clone(),
                    from_seq: 0,
                })
                .await
                .expect("watch")
                .into_inner();
            stream.message().await.expect("history").expect("open");
            watchers.push(stream);
        }
    }
    let mut boards = Vec::new();
    for b in 0..100u64 {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.send(pb::BoardMessage {
            message_id: 1,
            board_time_ms: 0,
            kind: Some(pb::board_message::Kind::Bind(pb::BindBoard {
                game_id: ids[b as usize % ids.len()].clone(),
                board_id: format!("b{b}"),
                resume_from_seq: 0,
            })),
        })
        .await
        .expect("bind");
        let mut feed = BoardServiceClient::new(channel.clone())
            .connect(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .expect("connect")
            .into_inner();
        feed.message().await.expect("bound").expect("open");
        boards.push((tx, feed));
    }
    let before: Vec<u64> = {
        let mut seqs = Vec::new();
        for id in &ids {
            let g = games
                .get_game(pb::GetGameRequest {
                    game_id: id.clone(),
                })
                .await
                .expect("get")
                .into_inner();
            seqs.push(g.last_seq);
        }
        seqs
    };

    let began = Instant::now();
    server.terminate();
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            began.elapsed() < Duration::from_secs(2),
            "still running 2 s after SIGTERM\n{}",
            server.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let took = began.elapsed();
    assert!(
        status.success(),
        "exit status {status}\n{}",
        server.log_tail()
    );
    let mut unavailable = 0;
    for mut stream in watchers {
        let end = loop {
            match stream.message().await {
                Ok(Some(_)) => continue,
                other => break other,
            }
        };
        match end {
            Err(e)
                if e.code() == tonic::Code::Unavailable
                    && e.message() == "server shutting down" =>
            {
                unavailable += 1
            }
            other => panic!("a watch stream ended otherwise: {other:?}"),
        }
    }
    for (_tx, mut feed) in boards {
        let end = loop {
            match feed.message().await {
                Ok(Some(_)) => continue,
                other => break other,
            }
        };
        assert!(
            matches!(&end, Err(e) if e.code() == tonic::Code::Unavailable),
            "a board stream ended otherwise: {end:?}"
        );
    }
    let wal = data.join("arbiter.sqlite-wal");
    let wal_bytes = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert_eq!(wal_bytes, 0, "the WAL is checkpointed and truncated");
    eprintln!(
        "SIGTERM with 1000 watchers and 100 boards: exit 0 after {} ms, \
         {unavailable} watch streams ended UNAVAILABLE, WAL {wal_bytes} bytes",
        took.as_millis()
    );

    let (_server, channel) = start(&data, &dir.path().join("server-1.log")).await;
    let mut games = GameServiceClient::new(channel);
    for (id, seq) in ids.iter().zip(before) {
        let g = games
            .get_game(pb::GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .expect("get after restart")
            .into_inner();
        // The restart records the outage: one event more, nothing lost.
        assert_eq!(g.last_seq, seq + 1, "{id}: everything replays");
        assert_eq!(g.move_count, 1);
    }
}
