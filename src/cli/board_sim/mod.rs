//! `draughts-arbiter board-sim`: plays recorded games through a running service the way an
//! electronic board reports them, and checks that the judge ends each one where the
//! record does. Also a load tool: `--boards N` games at once, with the board messages a
//! second and the acknowledgement latency at the end.

mod plan;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

use crate::api::convert::{side_pb, variant_pb};
use crate::api::pb;
use crate::api::pb::arbiter_service_client::ArbiterServiceClient;
use crate::api::pb::board_feedback::Kind as Feedback;
use crate::api::pb::board_message::Kind;
use crate::api::pb::board_service_client::BoardServiceClient;
use crate::api::pb::game_event::Kind as EventKind;
use crate::api::pb::game_service_client::GameServiceClient;
use crate::notation::clock_comment::line_clocks;
use crate::notation::pdn::{PdnGame, PdnResult, read_games_bytes};
use crate::notation::replay::{ReplayNote, game_variant, replay_record, start_position};
use crate::notation::write_fen;
use crate::rules::variant::Removal;
use crate::rules::{Color, Variant};
use crate::server::tls::ClientTls;
pub use plan::Mode;
use plan::{Expect, Noise, Ply, Rng, Step, move_plan};

/// Arguments of `board-sim`.
#[derive(Debug, Args)]
pub struct BoardSimArgs {
    /// The server: `http://host:port`, or `https://host:port` for TLS.
    #[arg(long, env = "ARBITER_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// CA certificate (PEM) to trust for an https:// server (a private CA).
    #[arg(long, env = "ARBITER_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// Bearer token for every call (the board stream, creating and ending games; an
    /// arbiter's token where the service has roles).
    #[arg(long, env = "ARBITER_TOKEN")]
    pub token: Option<String>,
    /// The PDN file whose games are played.
    #[arg(long)]
    pub pdn: PathBuf,
    /// The variant, overriding each game's `GameType` tag (needed when a file has none).
    #[arg(long, value_parser = super::parse_variant)]
    pub variant: Option<Variant>,
    /// Play only game N of the file (1-based).
    #[arg(long, conflicts_with = "all")]
    pub game: Option<usize>,
    /// Play every game of the file (the default).
    #[arg(long)]
    pub all: bool,
    /// How the board reports: `events` (touch, lift, place, release, removals, press) or
    /// `snapshots` (whole-board readings with their intermediate states, and presses).
    #[arg(long, value_enum, default_value = "events")]
    pub mode: Mode,
    /// Add noise reproducibly from this seed: jitter, "I adjust", a touch of an
    /// opponent's piece, a piece lifted and put back, two updates of a scan swapped, a
    /// press without a move. Each irregularity it makes must be flagged with its rule,
    /// and nothing else may be.
    #[arg(long)]
    pub noise: Option<u64>,
    /// Play at the record's pace divided by X: the time each move took, from the PDN's
    /// clock comments (`[%clock …]`, `[%clk …]`). Without it, or without clock
    /// comments, as fast as the server answers.
    #[arg(long)]
    pub speed: Option<f64>,
    /// How many boards play at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub boards: u16,
    /// The time control of games whose record has no `TimeControl` tag.
    #[arg(long, default_value = "90m+30s")]
    pub time_control: String,
    /// The games' ids: `<prefix>-<N>` (default: `sim-` and the start time in ms).
    #[arg(long)]
    pub id_prefix: Option<String>,
}

/// What one game's run gives.
struct GameReport {
    ok: bool,
    line: String,
    acks: Vec<Duration>,
    messages: u64,
    noise: BTreeMap<Noise, u64>,
    /// Irregularities the noise made, and how many of them the judge flagged.
    injected: u64,
    flagged: u64,
}

impl GameReport {
    fn failed(line: String) -> GameReport {
        GameReport {
            ok: false,
            line,
            acks: Vec::new(),
            messages: 0,
            noise: BTreeMap::new(),
            injected: 0,
            flagged: 0,
        }
    }
}

/// Runs `board-sim`: exit 0 when every game ended as its record does.
pub fn run(args: &BoardSimArgs) -> ExitCode {
    super::client::block_on(simulate(args))
}

fn out(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Everything the games share.
struct Ctx<'a> {
    args: &'a BoardSimArgs,
    channel: Channel,
    prefix: String,
    started: Instant,
}

impl Ctx<'_> {
    fn request<T>(&self, msg: T) -> Request<T> {
        let mut r = Request::new(msg);
        if let Some(t) = &self.args.token
            && let Ok(v) = MetadataValue::try_from(format!("Bearer {t}"))
        {
            r.metadata_mut().insert("authorization", v);
        }
        r
    }
}

/// Plays the games; an error when one failed (after every line and the summary).
async fn simulate(args: &BoardSimArgs) -> Result<(), String> {
    let bytes = std::fs::read(&args.pdn).map_err(|e| format!("{}: {e}", args.pdn.display()))?;
    let games = read_games_bytes(&bytes);
    if let Some(n) = args.game
        && (n == 0 || n > games.len())
    {
        return Err(format!(
            "--game {n}: the file has {} games (1..={})",
            games.len(),
            games.len()
        ));
    }
    if let Some(s) = args.speed
        && !(s.is_finite() && s > 0.0)
    {
        return Err(format!("--speed {s}: must be a positive number"));
    }
    let tls = ClientTls {
        ca_cert: args.ca_cert.as_deref(),
        cert: None,
        key: None,
    };
    let channel = super::client::channel(&args.server, &tls).await?;
    let prefix = args.id_prefix.clone().unwrap_or_else(|| {
        format!(
            "sim-{}",
            chrono::Utc::now().timestamp_millis().unsigned_abs()
        )
    });
    let ctx = Ctx {
        args,
        channel,
        prefix,
        started: Instant::now(),
    };
    let chosen: Vec<(usize, &Result<PdnGame, _>)> = games
        .iter()
        .enumerate()
        .map(|(i, g)| (i + 1, g))
        .filter(|(n, _)| args.game.is_none_or(|g| g == *n))
        .collect();
    let total = chosen.len();
    let ctx = &ctx;
    let mut runs = futures_util::stream::iter(chosen.into_iter().map(|(n, g)| async move {
        let report = match g {
            Ok(game) => play(ctx, n, game).await,
            Err(e) => GameReport::failed(format!("unreadable: {e}")),
        };
        (n, report)
    }))
    .buffer_unordered(usize::from(args.boards));
    // Lines in game order, each as soon as the games before it are done.
    let mut waiting: BTreeMap<usize, GameReport> = BTreeMap::new();
    let mut next = args.game.unwrap_or(1);
    let (mut ok, mut failed, mut messages) = (0usize, 0usize, 0u64);
    let mut acks: Vec<Duration> = Vec::new();
    let mut noise: BTreeMap<Noise, u64> = BTreeMap::new();
    let (mut injected, mut flagged) = (0u64, 0u64);
    while let Some((n, report)) = runs.next().await {
        waiting.insert(n, report);
        while let Some(r) = waiting.remove(&next) {
            out(&format!("game {next}: {}", r.line));
            if r.ok {
                ok += 1;
            } else {
                failed += 1;
            }
            messages += r.messages;
            acks.extend(r.acks);
            injected += r.injected;
            flagged += r.flagged;
            for (k, c) in r.noise {
                *noise.entry(k).or_default() += c;
            }
            next += 1;
        }
    }
    let secs = ctx.started.elapsed().as_secs_f64();
    out(&format!("{total} games, {ok} ok, {failed} failed"));
    if args.noise.is_some() {
        let parts: Vec<String> = noise
            .iter()
            .map(|(k, c)| format!("{} {c}", k.name()))
            .collect();
        out(&format!(
            "noise: {}; irregularities injected {injected}, flagged with their rule {flagged}",
            if parts.is_empty() {
                "none".to_string()
            } else {
                parts.join(", ")
            }
        ));
    }
    acks.sort_unstable();
    let q = |p: f64| -> f64 {
        if acks.is_empty() {
            return 0.0;
        }
        let i = ((acks.len() as f64 * p).ceil() as usize).clamp(1, acks.len()) - 1;
        acks[i].as_secs_f64() * 1000.0
    };
    eprintln!(
        "board-sim: {messages} board messages in {secs:.2} s = {:.0} messages/s over {} boards at once; ack p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
        messages as f64 / secs.max(1e-9),
        args.boards,
        q(0.5),
        q(0.99),
        q(1.0),
    );
    if failed > 0 {
        return Err(format!("{failed} of {total} games failed"));
    }
    Ok(())
}

/// The first of these tags the game has (Italian files write `Bianco`, `Nero`, `Dati`).
fn tag<'a>(g: &'a PdnGame, names: &[&str]) -> &'a str {
    names.iter().find_map(|n| g.tag(n)).unwrap_or("").trim()
}

/// The recorded result: the termination marker, else the Result tag.
fn recorded_result(g: &PdnGame) -> PdnResult {
    g.result
        .or_else(|| {
            ["Result", "Risultato"]
                .iter()
                .find_map(|n| PdnResult::from_token(g.tag(n)?.trim()))
        })
        .unwrap_or(PdnResult::Unknown)
}

fn result_pb(r: PdnResult) -> pb::GameResult {
    match r {
        PdnResult::WhiteWins => pb::GameResult::WhiteWins,
        PdnResult::BlackWins => pb::GameResult::BlackWins,
        PdnResult::Draw => pb::GameResult::Draw,
        PdnResult::DoubleForfeit => pb::GameResult::BothLose,
        PdnResult::Unknown => pb::GameResult::Unspecified,
    }
}

fn result_text(r: i32) -> &'static str {
    match pb::GameResult::try_from(r) {
        Ok(pb::GameResult::WhiteWins) => "white wins",
        Ok(pb::GameResult::BlackWins) => "black wins",
        Ok(pb::GameResult::Draw) => "draw",
        Ok(pb::GameResult::BothLose) => "both lose",
        _ => "none",
    }
}

/// The time each ply took by the record's clock comments, in ms (0 where unknown).
fn spent_per_ply(game: &PdnGame, first: Color) -> Vec<u64> {
    let mut last: [Option<u64>; 2] = [None, None];
    let mut mover = first;
    line_clocks(&game.moves, first)
        .into_iter()
        .map(|c| {
            let now = c.ok().flatten().and_then(|c| c.of(mover));
            let spent = match (last[mover.index()], now) {
                (Some(before), Some(after)) => before.saturating_sub(after),
                _ => 0,
            };
            if now.is_some() {
                last[mover.index()] = now;
            }
            mover = !mover;
            spent
        })
        .collect()
}

fn status_line(s: &tonic::Status) -> String {
    format!("{:?}: {}", s.code(), s.message())
}

/// One board's stream: messages out, feedback in.
struct Board {
    tx: mpsc::Sender<pb::BoardMessage>,
    rx: tonic::Streaming<pb::BoardFeedback>,
    next_id: u64,
    /// Irregularities and warnings the judge flagged, not yet matched to an injected one.
    flags: Vec<pb::GameEvent>,
    /// The game's end, when the judge recorded it.
    finished: Option<pb::GameEvent>,
    acks: Vec<Duration>,
    messages: u64,
}

/// What the judge answered to one message.
struct Answer {
    events: Vec<pb::GameEvent>,
    rejected: Option<pb::BoardRejected>,
}

impl Board {
    fn note(&mut self, e: &pb::GameEvent) {
        match &e.kind {
            Some(EventKind::IrregularityFlagged(_) | EventKind::WarningIssued(_)) => {
                self.flags.push(e.clone());
            }
            Some(EventKind::GameFinished(_)) => self.finished = Some(e.clone()),
            _ => {}
        }
    }

    /// Sends one message and waits for its acknowledgement or refusal; a refusal for
    /// the rate limit is waited out and sent again.
    async fn send(&mut self, kind: Kind, board_ms: i64) -> Result<Answer, String> {
        loop {
            self.next_id += 1;
            let id = self.next_id;
            let sent = Instant::now();
            self.tx
                .send(pb::BoardMessage {
                    message_id: id,
                    board_time_ms: board_ms,
                    kind: Some(kind.clone()),
                })
                .await
                .map_err(|_| "the board stream closed".to_string())?;
            self.messages += 1;
            let mut events = Vec::new();
            loop {
                let fb = match self.rx.next().await {
                    Some(Ok(fb)) => fb,
                    Some(Err(s)) => return Err(format!("board stream: {}", status_line(&s))),
                    None => return Err("board stream: ended by the server".into()),
                };
                match fb.kind {
                    Some(Feedback::Event(e)) => {
                        self.note(&e);
                        if fb.message_id == id {
                            events.push(e);
                        }
                    }
                    Some(Feedback::Ack(_)) if fb.message_id == id => {
                        self.acks.push(sent.elapsed());
                        return Ok(Answer {
                            events,
                            rejected: None,
                        });
                    }
                    Some(Feedback::Rejected(r)) if fb.message_id == id => {
                        self.acks.push(sent.elapsed());
                        if r.code == "RESOURCE_EXHAUSTED" {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            break;
                        }
                        return Ok(Answer {
                            events,
                            rejected: Some(r),
                        });
                    }
                    _ => {}
                }
            }
        }
    }

    /// Takes the judge's flag of this kind, if it raised one with a rule.
    fn take_flag(&mut self, kind: pb::IrregularityKind) -> Option<pb::GameEvent> {
        let i = self.flags.iter().position(|e| {
            matches!(&e.kind, Some(EventKind::IrregularityFlagged(f)) if f.kind == kind as i32)
                && !e.rule.is_empty()
        })?;
        Some(self.flags.remove(i))
    }
}

fn describe_step(kind: &Kind) -> String {
    match kind {
        Kind::Touch(s) => format!("touch {}", s.square),
        Kind::Lift(s) => format!("lift {}", s.square),
        Kind::Place(s) => format!("place {}", s.square),
        Kind::Release(s) => format!("release {}", s.square),
        Kind::Adjust(_) => "I adjust".into(),
        Kind::ClockPress(_) => "clock press".into(),
        Kind::Snapshot(o) => format!("reading (white {:?}, black {:?})", o.white, o.black),
        Kind::Bind(_) => "bind".into(),
        Kind::Heartbeat(_) => "heartbeat".into(),
    }
}

fn flag_text(e: &pb::GameEvent) -> String {
    match &e.kind {
        Some(EventKind::IrregularityFlagged(f)) => format!("{} [{}]", f.description, e.rule),
        Some(EventKind::WarningIssued(w)) => format!("warning: {} [{}]", w.reason, e.rule),
        _ => format!("event #{}", e.seq),
    }
}

/// Plays game `n` through the service as a board would.
async fn play(ctx: &Ctx<'_>, n: usize, game: &PdnGame) -> GameReport {
    let args = ctx.args;
    let variant = match game_variant(game, args.variant) {
        Ok(v) => v,
        Err(e) => return GameReport::failed(format!("failed: {e}")),
    };
    if variant.rules().removal == Removal::UnderCapturer {
        return GameReport::failed(
            "failed: towers cannot be played on an electronic board: a board senses single \
             pieces, not stacks (TOW)"
                .into(),
        );
    }
    let replay = match replay_record(game, Some(variant)) {
        Ok(r) => r,
        Err(e) => return GameReport::failed(format!("failed: the record does not replay: {e}")),
    };
    let start = match start_position(game, variant) {
        Ok(p) => p,
        Err(e) => return GameReport::failed(format!("failed: {e}")),
    };
    let mut noise = args
        .noise
        .map(|s| Rng::new(crate::rules::splitmix(s) ^ (n as u64).wrapping_mul(0x9E37_79B9)));
    let mut report = GameReport::failed(String::new());
    let result = drive(
        ctx,
        n,
        game,
        variant,
        &replay,
        start,
        noise.as_mut(),
        &mut report,
    )
    .await;
    report.line = match result {
        Ok(line) => {
            report.ok = true;
            line
        }
        Err(line) => line,
    };
    report
}

#[allow(clippy::too_many_arguments)]
async fn drive(
    ctx: &Ctx<'_>,
    n: usize,
    game: &PdnGame,
    variant: Variant,
    replay: &crate::notation::replay::Replay,
    start: crate::rules::Position,
    mut noise: Option<&mut Rng>,
    report: &mut GameReport,
) -> Result<String, String> {
    let args = ctx.args;
    let id = format!("{}-{n}", ctx.prefix);
    let mut games = GameServiceClient::new(ctx.channel.clone());
    let time_control = match game.tag("TimeControl").map(str::trim) {
        Some(tc) if !tc.is_empty() && tc != "?" && tc != "-" => tc.to_string(),
        _ => args.time_control.clone(),
    };
    let timed = !time_control.is_empty();
    let player = |name: &str| {
        Some(pb::Player {
            name: name.into(),
            ..Default::default()
        })
    };
    let board_no = tag(game, &["Board"])
        .parse::<u32>()
        .unwrap_or(u32::try_from(n).unwrap_or(0));
    let create = pb::CreateGameRequest {
        game_id: id.clone(),
        variant: variant_pb(variant) as i32,
        time_control,
        white: player(tag(game, &["White", "Bianco"])),
        black: player(tag(game, &["Black", "Nero"])),
        event: tag(game, &["Event", "Dati"]).into(),
        round: tag(game, &["Round"]).into(),
        board: board_no,
        start_fen: if game.fen().is_some() {
            write_fen(&start)
        } else {
            String::new()
        },
        settings: None,
    };
    let fail = |what: &str, s: tonic::Status| format!("failed: {what}: {}", status_line(&s));
    games
        .create_game(ctx.request(create))
        .await
        .map_err(|s| fail("create the game", s))?;
    games
        .start_game(ctx.request(pb::StartGameRequest {
            game_id: id.clone(),
            expected_seq: 0,
        }))
        .await
        .map_err(|s| fail("start the game", s))?;

    let (tx, rx) = mpsc::channel::<pb::BoardMessage>(8);
    let mut boards = BoardServiceClient::new(ctx.channel.clone());
    let stream = boards
        .connect(ctx.request(ReceiverStream::new(rx)))
        .await
        .map_err(|s| fail("open the board stream", s))?
        .into_inner();
    let mut board = Board {
        tx,
        rx: stream,
        next_id: 0,
        flags: Vec::new(),
        finished: None,
        acks: Vec::new(),
        messages: 0,
    };
    let board_ms = |jitter: i64| -> i64 {
        i64::try_from(ctx.started.elapsed().as_millis()).unwrap_or(i64::MAX) + 1 + jitter
    };
    let bind = Kind::Bind(pb::BindBoard {
        game_id: id.clone(),
        board_id: format!("sim-board-{n}"),
        resume_from_seq: 0,
    });
    // The bind is answered with the game, not an ack.
    board.next_id += 1;
    board
        .tx
        .send(pb::BoardMessage {
            message_id: board.next_id,
            board_time_ms: board_ms(0),
            kind: Some(bind),
        })
        .await
        .map_err(|_| "failed: the board stream closed".to_string())?;
    board.messages += 1;
    loop {
        match board.rx.next().await {
            Some(Ok(pb::BoardFeedback {
                kind: Some(Feedback::Bound(_)),
                ..
            })) => break,
            Some(Ok(pb::BoardFeedback {
                kind: Some(Feedback::Rejected(r)),
                ..
            })) => return Err(format!("failed: bind: {}: {}", r.code, r.message)),
            Some(Ok(_)) => {}
            Some(Err(s)) => return Err(fail("bind", s)),
            None => return Err("failed: bind: the stream ended".into()),
        }
    }

    let expected = recorded_result(game);
    let moves: Vec<crate::rules::Move> = replay.game.moves().iter().copied().collect();
    let positions: Vec<crate::rules::Position> = replay.game.positions().iter().copied().collect();
    let plies = moves.len();
    let spent = spent_per_ply(game, start.turn());
    // The rules' own game beside the judge's: its legal moves are what a reading must
    // not be mistaken for.
    let mut judge = crate::rules::Game::new(start, replay.game.edition());
    let result = 'plies: {
        for (i, mv) in moves.iter().enumerate() {
            let ply = i + 1;
            let text = game
                .moves
                .get(i)
                .map_or_else(String::new, |m| m.text.clone());
            let diverged = |why: String| format!("diverged at ply {ply} '{text}': {why}");
            if let Some(s) = args.speed
                && let Some(&ms) = spent.get(i)
                && ms > 0
            {
                tokio::time::sleep(Duration::from_secs_f64(ms as f64 / 1000.0 / s)).await;
            }
            let before = positions.get(i).copied().unwrap_or(start);
            // Only readings can be mistaken for another move.
            let legal = match args.mode {
                Mode::Snapshots => judge.position_moves(),
                Mode::Events => Vec::new(),
            };
            let mv_plan = move_plan(
                &Ply {
                    before: &before,
                    mv,
                    legal: &legal,
                    timed,
                },
                args.mode,
                noise.as_deref_mut(),
            );
            for k in &mv_plan.noise {
                *report.noise.entry(*k).or_default() += 1;
            }
            for Step {
                kind,
                expect,
                jitter_ms,
            } in mv_plan.steps
            {
                let what = describe_step(&kind);
                let answer = board
                    .send(kind, board_ms(jitter_ms))
                    .await
                    .map_err(&diverged)?;
                if let Some(r) = answer.rejected {
                    break 'plies Err(diverged(format!(
                        "{what} refused: {}: {}",
                        r.code, r.message
                    )));
                }
                match expect {
                    Expect::Nothing => {}
                    Expect::Move(path) => {
                        let played = answer.events.iter().any(|e| {
                            matches!(&e.kind, Some(EventKind::MovePlayed(m))
                                if m.r#move.as_ref().is_some_and(|m| m.path == path))
                        });
                        if !played {
                            let why = board
                                .flags
                                .last()
                                .map_or("no move was recognised".to_string(), flag_text);
                            break 'plies Err(diverged(format!("{what}: {why}")));
                        }
                    }
                    Expect::Flag(kind) => {
                        report.injected += 1;
                        if board.take_flag(kind).is_some() {
                            report.flagged += 1;
                        } else {
                            break 'plies Err(diverged(format!(
                                "{what}: the judge did not flag {}",
                                kind.as_str_name()
                            )));
                        }
                    }
                }
                if let Some(e) = board.flags.first() {
                    break 'plies Err(diverged(format!(
                        "{what}: flagged without cause: {}",
                        flag_text(e)
                    )));
                }
            }
            let _ = judge.play(mv);
            if let Some(end) = &board.finished {
                if ply < plies {
                    break 'plies Err(diverged(format!(
                        "the judge ended the game after it [{}]",
                        end.rule
                    )));
                }
                break 'plies Ok(());
            }
            let mover = before.turn();
            // A recorded draw: offered with the last move (RU 1.9.3), accepted below.
            if ply == plies && expected == PdnResult::Draw {
                games
                    .offer_draw(ctx.request(pb::OfferDrawRequest {
                        game_id: id.clone(),
                        side: side_pb(mover),
                        expected_seq: 0,
                    }))
                    .await
                    .map_err(|s| diverged(format!("offer a draw: {}", status_line(&s))))?;
            }
            if timed {
                let answer = board
                    .send(
                        Kind::ClockPress(pb::BoardClockPress {
                            side: side_pb(mover),
                        }),
                        board_ms(0),
                    )
                    .await
                    .map_err(&diverged)?;
                if let Some(r) = answer.rejected {
                    break 'plies Err(diverged(format!(
                        "clock press refused: {}: {}",
                        r.code, r.message
                    )));
                }
                if let Some(e) = board.flags.first() {
                    break 'plies Err(diverged(format!(
                        "clock press: flagged without cause: {}",
                        flag_text(e)
                    )));
                }
            }
        }
        Ok(())
    };
    report.acks = std::mem::take(&mut board.acks);
    report.messages = board.messages;
    result?;

    // The result the record gives, where the last move did not end the game.
    let mut arbiter = ArbiterServiceClient::new(ctx.channel.clone());
    let final_pos = replay.game.position();
    if board.finished.is_none() {
        let declare = |result: pb::GameResult| pb::DeclareResultRequest {
            game_id: id.clone(),
            result: result as i32,
            reason: pb::ResultReason::ArbiterDecision as i32,
            rule: String::new(),
            explanation: "the result the record gives; no move recorded".into(),
        };
        match expected {
            PdnResult::WhiteWins | PdnResult::BlackWins => {
                let loser = if expected == PdnResult::WhiteWins {
                    Color::Black
                } else {
                    Color::White
                };
                games
                    .resign(ctx.request(pb::ResignRequest {
                        game_id: id.clone(),
                        side: side_pb(loser),
                        expected_seq: 0,
                    }))
                    .await
                    .map_err(|s| fail("resign", s))?;
            }
            PdnResult::Draw if plies > 0 => {
                games
                    .respond_to_draw_offer(ctx.request(pb::RespondToDrawOfferRequest {
                        game_id: id.clone(),
                        side: side_pb(final_pos.turn()),
                        response: pb::DrawResponse::Accept as i32,
                        expected_seq: 0,
                    }))
                    .await
                    .map_err(|s| fail("accept the draw", s))?;
            }
            PdnResult::Draw => {
                arbiter
                    .declare_result(ctx.request(declare(pb::GameResult::Draw)))
                    .await
                    .map_err(|s| fail("declare a draw", s))?;
            }
            PdnResult::DoubleForfeit => {
                arbiter
                    .declare_result(ctx.request(declare(pb::GameResult::BothLose)))
                    .await
                    .map_err(|s| fail("declare 0-0", s))?;
            }
            PdnResult::Unknown => {}
        }
    }
    drop(board);
    let official = games
        .get_game(ctx.request(pb::GetGameRequest {
            game_id: id.clone(),
        }))
        .await
        .map_err(|s| fail("get the game", s))?
        .into_inner();
    let fen = write_fen(final_pos);
    if official.fen != fen {
        return Err(format!(
            "failed: the judge's position {} is not the record's {fen}",
            official.fen
        ));
    }
    if official.result != result_pb(expected) as i32 {
        return Err(format!(
            "failed: the judge's result is {}, the record's {}",
            result_text(official.result),
            result_text(result_pb(expected) as i32)
        ));
    }
    let mut line = format!(
        "ok, {plies} plies, result {}",
        game.result_text.clone().unwrap_or_else(|| match expected {
            PdnResult::Unknown => "*".into(),
            r => r.as_str().to_string(),
        })
    );
    let notes: Vec<String> = replay
        .notes
        .iter()
        .filter(|n| matches!(n, ReplayNote::Ambiguous { .. }))
        .map(ToString::to_string)
        .collect();
    if !notes.is_empty() {
        line.push_str(&format!("; note: {}", notes.join("; ")));
    }
    Ok(line)
}
