//! `arbiter-tools board-sim`: plays recorded games through a running service the way an
//! electronic board reports them, and checks that the judge ends each one where the
//! record does. Also a load tool: `--boards N` games at once, with the board messages a
//! second and the acknowledgement latency at the end.
//!
//! It is the reference board client (issue 38 item 5): with `--bind` it plays onto games
//! an arbiter created, with the board's token; it names itself (`--board-id`, unique per
//! process by default), sends a heartbeat every second while idle, and reconnects by
//! itself through restarts and failovers ([`link`]), going on from what the judge
//! recorded, never sending a move twice.
//!
//! With `--noise` it makes every irregularity a board can cause and brings each to an
//! end ([`incident`]): ruled corrected and the board restored, ruled to stand, or the
//! board put back; the summary counts them by kind, and a game fails when one was not
//! flagged with its rule or not brought to an end.

mod args;
mod compose;
mod incident;
mod link;
mod plan;

pub use args::BoardSimArgs;
use link::Ctx;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use compose::move_plan;
use draughts_arbiter::api::convert::{side_pb, variant_pb};
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::board_message::Kind;
use draughts_arbiter::api::pb::game_event::Kind as EventKind;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::notation::clock_comment::line_clocks;
use draughts_arbiter::notation::pdn::{PdnGame, PdnResult, read_games_bytes};
use draughts_arbiter::notation::replay::{ReplayNote, game_variant, replay_record, start_position};
use draughts_arbiter::notation::write_fen;
use draughts_arbiter::rules::variant::Removal;
use draughts_arbiter::rules::{Bitboard, Color, Variant};
use draughts_arbiter::server::tls::ClientTls;
use incident::{Noiser, Tally};
use link::{Answer, Link, Lost};
pub use plan::Mode;
use plan::{Act, Ending, Expect, Noise, Physical, Ply, Rng, Step, pieces};

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
    /// The same by kind, with how each ended.
    tally: Tally,
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
            tally: Tally::default(),
        }
    }
}

/// Runs `board-sim`: exit 0 when every game ended as its record does (bound games: has
/// every move of its record), 1 when one did not or the board gave up, 2 for a usage
/// error found in the file (`--game` out of range, `--bind` not matching the games).
pub fn run(args: &BoardSimArgs) -> ExitCode {
    let games = match selected(args) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    draughts_arbiter::cli::block_on(simulate(args, games))
}

/// The games of the file to play, numbered from 1.
type Selected = Vec<(usize, Result<PdnGame, String>)>;

/// Reads the file and picks the games `--game` / `--all` select; checks `--bind` and
/// `--speed` against them.
fn selected(args: &BoardSimArgs) -> Result<Selected, String> {
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
    let chosen: Selected = games
        .into_iter()
        .enumerate()
        .map(|(i, g)| (i + 1, g.map_err(|e| e.to_string())))
        .filter(|(n, _)| args.game.is_none_or(|g| g == *n))
        .collect();
    if !args.bind.is_empty() && args.bind.len() != chosen.len() {
        return Err(format!(
            "--bind names {} games, the file's games selected are {} ({}): one --bind per \
             game, in order",
            args.bind.len(),
            chosen.len(),
            args.game
                .map_or_else(|| "--all".to_string(), |n| format!("--game {n}"))
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = args.bind.iter().find(|b| !seen.insert(b.as_str())) {
        return Err(format!("--bind {dup}: named twice (one board per game)"));
    }
    if args.server.is_empty() {
        return Err("--server: at least one is needed".into());
    }
    Ok(chosen)
}

fn out(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// This host's name as an id part: letters, digits, `.` and `-` (at most 24).
fn host_name() -> String {
    let raw = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_default();
    let name: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(24)
        .collect();
    if name.is_empty() { "host".into() } else { name }
}

/// Plays the games; an error when one failed (after every line and the summary).
async fn simulate(args: &BoardSimArgs, chosen: Selected) -> Result<(), String> {
    let tls = ClientTls {
        ca_cert: args.ca_cert.as_deref(),
        cert: None,
        key: None,
    };
    // The first server must answer now (a wrong address is said at once); the others,
    // and this one after a restart, are reconnected as they come back.
    let channel = draughts_arbiter::cli::channel(&args.server[0], &tls).await?;
    let mut channels = BTreeMap::new();
    channels.insert(args.server[0].clone(), channel);
    let prefix = args.id_prefix.clone().unwrap_or_else(|| {
        format!(
            "sim-{}",
            chrono::Utc::now().timestamp_millis().unsigned_abs()
        )
    });
    let total = chosen.len();
    let ctx = Ctx {
        args,
        servers: args.server.clone(),
        channels: Mutex::new(channels),
        reconnect_for: Duration::from_secs(args.reconnect_for),
        prefix,
        started: Instant::now(),
        board_prefix: format!("sim-{}-{}", host_name(), std::process::id()),
        total,
    };
    let ctx = &ctx;
    let mut runs = futures_util::stream::iter(chosen.into_iter().enumerate().map(
        |(i, (n, g))| async move {
            let bind = args.bind.get(i).map(String::as_str);
            let report = match g {
                Ok(game) => play(ctx, n, &game, bind).await,
                Err(e) => GameReport::failed(format!("unreadable: {e}")),
            };
            (n, report)
        },
    ))
    .buffer_unordered(usize::from(args.boards));
    // Lines in game order, each as soon as the games before it are done.
    let mut waiting: BTreeMap<usize, GameReport> = BTreeMap::new();
    let mut next = args.game.unwrap_or(1);
    let (mut ok, mut failed, mut messages) = (0usize, 0usize, 0u64);
    let mut acks: Vec<Duration> = Vec::new();
    let mut noise: BTreeMap<Noise, u64> = BTreeMap::new();
    let (mut injected, mut flagged) = (0u64, 0u64);
    let mut tally = Tally::default();
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
            tally.add(&r.tally);
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
        let (_, _, ended) = tally.totals();
        out(&format!(
            "noise: {}; irregularities injected {injected}, flagged with their rule {flagged}, \
             brought to an end {ended}",
            if parts.is_empty() {
                "none".to_string()
            } else {
                parts.join(", ")
            }
        ));
        out(&tally.line(args.mode, ctx.rulings()));
        if !ctx.rulings() {
            out(
                "rulings: none (--bind without --arbiter-token): only what the board puts \
                 right itself is made",
            );
        }
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
    let (made, flagged_all, ended) = tally.totals();
    if made != flagged_all || flagged_all != ended {
        return Err(format!(
            "irregularities: {made} injected, {flagged_all} flagged, {ended} brought to an end"
        ));
    }
    Ok(())
}

/// The first of these tags the game has (Italian files write `Bianco`, `Nero`, `Dati`);
/// empty for none, and for `?`, which PDN (and our export) writes for "not known".
fn tag<'a>(g: &'a PdnGame, names: &[&str]) -> &'a str {
    let v = names.iter().find_map(|n| g.tag(n)).unwrap_or("").trim();
    if v == "?" { "" } else { v }
}

/// A player as the record names them: name, and the FMJD id and rating our export writes
/// (`WhiteFmjdId`, `WhiteRating`…; PDN 3.0's player tags). A rating that is no number
/// (`-`, `?`) is left out.
fn player(g: &PdnGame, color: Color) -> pb::Player {
    let (names, prefix) = match color {
        Color::White => (["White", "Bianco"], "White"),
        Color::Black => (["Black", "Nero"], "Black"),
    };
    pb::Player {
        name: tag(g, &names).into(),
        fmjd_id: tag(g, &[&format!("{prefix}FmjdId")]).into(),
        federation: String::new(),
        rating: tag(g, &[&format!("{prefix}Rating")]).parse().unwrap_or(0),
        ..pb::Player::default()
    }
}

/// The time control the record gives: its `TimeControl` tag (`-`: none, so untimed;
/// `?` or absent: not known, so `fallback`).
fn record_time_control(g: &PdnGame, fallback: &str) -> String {
    match g.tag("TimeControl").map(str::trim) {
        Some("-") => String::new(),
        Some(tc) if !tc.is_empty() && tc != "?" => tc.to_string(),
        _ => fallback.to_string(),
    }
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

/// Plays game `n` through the service as a board would: onto game `bind` when given,
/// else onto a game it creates.
async fn play(ctx: &Ctx<'_>, n: usize, game: &PdnGame, bind: Option<&str>) -> GameReport {
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
    let noise = args.noise.map(|s| {
        let rng =
            Rng::new(draughts_arbiter::rules::splitmix(s) ^ (n as u64).wrapping_mul(0x9E37_79B9));
        Noiser::new(rng, ctx.rulings(), args.mode)
    });
    let mut report = GameReport::failed(String::new());
    let record = Record {
        n,
        game,
        variant,
        replay: &replay,
        start,
    };
    let result = drive(ctx, &record, bind, noise, &mut report).await;
    report.line = match result {
        Ok(line) => {
            report.ok = true;
            line
        }
        Err(line) => line,
    };
    report
}

/// One game of the file, read and replayed.
struct Record<'a> {
    n: usize,
    game: &'a PdnGame,
    variant: Variant,
    replay: &'a draughts_arbiter::notation::replay::Replay,
    start: draughts_arbiter::rules::Position,
}

/// The moves the judge has recorded, checked against the record's: how many of the
/// record's plies they make, with the plies `stood` (made by a `stands` ruling, which the
/// judge's score sheet does not list).
fn agree(
    g: &pb::Game,
    moves: &[draughts_arbiter::rules::Move],
    v: Variant,
    stood: &[usize],
) -> Result<usize, String> {
    let count = usize::try_from(g.move_count).unwrap_or(usize::MAX);
    let listed: Vec<usize> = (0..moves.len()).filter(|p| !stood.contains(p)).collect();
    if count > listed.len() {
        return Err(format!(
            "the judge has {count} moves, the record {}",
            listed.len()
        ));
    }
    for (i, played) in g.moves.iter().enumerate() {
        let path: Vec<u32> = played
            .r#move
            .as_ref()
            .map(|m| m.path.clone())
            .unwrap_or_default();
        let want: Vec<u32> = listed
            .get(i)
            .and_then(|&p| moves.get(p))
            .map(|m| {
                m.path()
                    .map(|s| draughts_arbiter::notation::square::square_number(s, v))
                    .collect()
            })
            .unwrap_or_default();
        if path != want {
            return Err(format!(
                "the judge's move {} ({path:?}) is not the record's ({want:?})",
                i + 1
            ));
        }
    }
    // The plies the judge's moves make, and the stood ones after them.
    let mut covered = if count == 0 { 0 } else { listed[count - 1] + 1 };
    while stood.contains(&covered) {
        covered += 1;
    }
    Ok(covered)
}

/// The rules' game after the record's first `plies` moves.
fn judge_at(
    start: draughts_arbiter::rules::Position,
    edition: draughts_arbiter::rules::RuleEdition,
    moves: &[draughts_arbiter::rules::Move],
    plies: usize,
) -> draughts_arbiter::rules::Game {
    let mut judge = draughts_arbiter::rules::Game::new(start, edition);
    for mv in moves.iter().take(plies) {
        let _ = judge.play(mv);
    }
    judge
}

/// An irregularity the current ply's incident makes.
#[derive(Debug, Clone)]
struct Tag {
    kind: pb::IrregularityKind,
    planned: Ending,
    /// The seq of the judge's flag, once flagged.
    seq: Option<u64>,
    /// How it ended, once it did.
    ended: Option<Ending>,
}

/// Checks what the judge did with one step (`events`: what the message caused).
fn check_step(
    link: &mut Link<'_>,
    expect: &Expect,
    events: &[pb::GameEvent],
    what: &str,
    tags: &mut [Tag],
    report: &mut GameReport,
) -> Result<(), String> {
    match expect {
        Expect::Nothing => {}
        Expect::Move(path) => {
            let played = events.iter().any(|e| {
                matches!(&e.kind, Some(EventKind::MovePlayed(m))
                    if m.r#move.as_ref().is_some_and(|m| m.path == *path))
            });
            if !played {
                let why = link
                    .flags
                    .last()
                    .map_or("no move was recognised".to_string(), flag_text);
                return Err(format!("{what}: {why}"));
            }
        }
        Expect::Flag(kind, tag) => {
            report.injected += 1;
            report.tally.of(*kind).injected += 1;
            let Some(e) = link.take_flag(*kind) else {
                return Err(format!(
                    "{what}: the judge did not flag {}",
                    kind.as_str_name()
                ));
            };
            report.flagged += 1;
            report.tally.of(*kind).flagged += 1;
            if let Some(t) = tags.get_mut(usize::from(*tag)) {
                t.seq = Some(e.seq);
            }
        }
    }
    if let Some(e) = link.flags.first() {
        return Err(format!("{what}: flagged without cause: {}", flag_text(e)));
    }
    Ok(())
}

/// Takes in the events the board heard: how the incident's irregularities ended (each
/// must end as planned), the judge's last target for the board, the hand put aside when
/// the board is in step again or put back.
fn absorb(
    link: &mut Link<'_>,
    tags: &mut [Tag],
    board: &mut Physical,
    target: &mut Option<pb::BoardOutOfStep>,
) -> Result<(), String> {
    for e in std::mem::take(&mut link.heard) {
        match &e.kind {
            Some(EventKind::IrregularityRuled(r)) => {
                let ending = match pb::IrregularityRuling::try_from(r.ruling) {
                    Ok(pb::IrregularityRuling::Corrected) => Ending::Corrected,
                    Ok(pb::IrregularityRuling::Stands) => Ending::Stands,
                    _ if r.reason.contains("finished") => Ending::Finished,
                    _ => Ending::Cleared,
                };
                if ending != Ending::Corrected {
                    board.hand = None;
                }
                let Some(t) = tags.iter_mut().find(|t| t.seq == Some(r.irregularity_seq)) else {
                    continue;
                };
                if t.ended.is_some() || ending != t.planned {
                    return Err(format!(
                        "irregularity #{} ({}) ended {} [{}], the board planned {}",
                        r.irregularity_seq,
                        incident::kind_name(t.kind),
                        ending.name(),
                        e.rule,
                        t.planned.name()
                    ));
                }
                t.ended = Some(ending);
            }
            Some(EventKind::BoardOutOfStep(o)) => *target = Some(o.clone()),
            Some(EventKind::BoardInStep(_)) => board.hand = None,
            _ => {}
        }
    }
    Ok(())
}

/// The position (white, black) a judge's target for the board shows.
fn target_pieces(v: Variant, o: &pb::BoardOutOfStep) -> (Bitboard, Bitboard) {
    let bits = |list: &[u32]| list.iter().fold(0, |b, &s| b | plan::sq_bit(v, s));
    let clear = bits(&o.to_clear);
    let (mut w, mut b) = (bits(&o.white) & !clear, bits(&o.black) & !clear);
    for p in &o.to_fill {
        if p.side == pb::Side::Black as i32 {
            b |= plan::sq_bit(v, p.square);
        } else {
            w |= plan::sq_bit(v, p.square);
        }
    }
    (w, b)
}

/// The steps that bring the board back: to the judge's target after a `corrected`
/// ruling (which must be `official`, and must start from the board as it is), or to
/// `official` put back by the players; with a wrong copy on the way where one is planned
/// and a piece is carried.
fn back_steps(
    v: Variant,
    mode: Mode,
    board: &Physical,
    act: &Act,
    target: &mut Option<pb::BoardOutOfStep>,
    rng: &mut Rng,
) -> Result<Vec<Step>, String> {
    let (official, wrong_copy) = match act {
        Act::Restore {
            official,
            wrong_copy,
        } => {
            let Some(o) = target.take() else {
                return Err("the judge gave the board no target after the ruling".into());
            };
            let shown = (
                o.white.iter().fold(0, |b, &s| b | plan::sq_bit(v, s)),
                o.black.iter().fold(0, |b, &s| b | plan::sq_bit(v, s)),
            );
            if shown != board.pieces() {
                return Err(format!(
                    "the judge's picture of the board (white {:?}, black {:?}) is not the \
                     board's (white {:?}, black {:?})",
                    o.white,
                    o.black,
                    plan::numbers(v, board.white),
                    plan::numbers(v, board.black)
                ));
            }
            if o.cause != pb::BoardFollowCause::Corrected as i32
                || target_pieces(v, &o) != *official
            {
                return Err(format!(
                    "the judge's target (clear {:?}, fill {:?}, cause {}) is not the position \
                     before the irregularity",
                    o.to_clear,
                    o.to_fill.iter().map(|p| p.square).collect::<Vec<_>>(),
                    o.cause
                ));
            }
            (*official, *wrong_copy)
        }
        Act::PutBack { official } => (*official, None),
        _ => return Ok(Vec::new()),
    };
    let kinds = plan::steps_to(v, mode, board, official, rng)?;
    let carried = kinds.iter().enumerate().position(|(i, k)| {
        matches!(k, Kind::Release(_)) && i > 0 && matches!(kinds[i - 1], Kind::Lift(_))
    });
    let (Some((tag, ending)), Some(j)) = (wrong_copy, carried) else {
        return Ok(kinds.into_iter().map(Step::quiet).collect());
    };
    // The piece carried first goes down where the official position has none of its
    // colour: a wrong copy.
    let mut shown = board.clone();
    for k in &kinds[..j] {
        shown.apply(v, k);
    }
    let Some((colour, _)) = shown.hand else {
        return Ok(kinds.into_iter().map(Step::quiet).collect());
    };
    let theirs = match colour {
        Color::White => official.0,
        Color::Black => official.1,
    };
    let free = !(shown.white | shown.black) & !theirs & !(official.0 | official.1);
    let squares = plan::numbers(v, free);
    let Some(wrong) = rng.pick(&squares) else {
        return Ok(kinds.into_iter().map(Step::quiet).collect());
    };
    let mut steps: Vec<Step> = kinds[..j].iter().cloned().map(Step::quiet).collect();
    steps.push(Step::send(
        Kind::Release(plan::square(wrong)),
        Expect::Flag(pb::IrregularityKind::WrongCopy, tag),
    ));
    match ending {
        Ending::Corrected => {
            steps.push(Step::act(Act::Rule {
                tag,
                ruling: Ending::Corrected,
            }));
            steps.push(Step::act(Act::Restore {
                official,
                wrong_copy: None,
            }));
        }
        _ => steps.push(Step::act(Act::PutBack { official })),
    }
    Ok(steps)
}

/// The arbiter's ruling on irregularity `seq`; the last seq it recorded. A ruling that
/// may have been recorded before the connection broke is asked about, not repeated.
async fn rule_on(
    ctx: &Ctx<'_>,
    server: &str,
    id: &str,
    seq: u64,
    kind: pb::IrregularityKind,
    ruling: Ending,
) -> Result<u64, String> {
    let give_up = Instant::now() + ctx.reconnect_for;
    let pb_ruling = match ruling {
        Ending::Stands => pb::IrregularityRuling::Stands,
        _ => pb::IrregularityRuling::Corrected,
    };
    loop {
        let request = pb::RuleOnIrregularityRequest {
            game_id: id.to_string(),
            irregularity_seq: seq,
            ruling: pb_ruling as i32,
            reason: format!(
                "board-sim --noise: {} {}",
                incident::kind_name(kind).to_lowercase().replace('_', " "),
                ruling.name()
            ),
            rule: String::new(),
        };
        let answer = ArbiterServiceClient::new(ctx.channel(server)?)
            .rule_on_irregularity(ctx.arbiter_request(request))
            .await;
        match answer {
            Ok(r) => {
                let r = r.into_inner();
                let ruled = r.events.iter().any(|e| {
                    matches!(&e.kind, Some(EventKind::IrregularityRuled(x))
                        if x.irregularity_seq == seq && x.ruling == pb_ruling as i32)
                });
                if !ruled {
                    return Err(format!(
                        "the ruling on #{seq} recorded no IrregularityRuled"
                    ));
                }
                return Ok(r.events.iter().map(|e| e.seq).max().unwrap_or(seq));
            }
            Err(s)
                if matches!(
                    s.code(),
                    tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
                ) && Instant::now() < give_up =>
            {
                if let Ok(g) = official(ctx, server, id).await
                    && !g.pending_irregularities.iter().any(|p| p.seq == seq)
                {
                    return Ok(g.last_seq);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(s) => {
                return Err(format!(
                    "rule {} on #{seq} ({}): {}",
                    ruling.name(),
                    incident::kind_name(kind),
                    status_line(&s)
                ));
            }
        }
    }
}

/// After a ply with an incident: every irregularity it made was brought to an end as
/// planned, and the judge agrees with the board: nothing of it outstanding, the board in
/// step with the picture the board has of itself, and the official position the
/// record's (`want`).
async fn check_incident(
    ctx: &Ctx<'_>,
    server: &str,
    id: &str,
    v: Variant,
    tags: &[Tag],
    board: &Physical,
    want: &draughts_arbiter::rules::Position,
) -> Result<(), String> {
    if let Some(t) = tags.iter().find(|t| t.seq.is_some() && t.ended.is_none()) {
        return Err(format!(
            "irregularity #{} ({}) was not brought to an end (planned: {})",
            t.seq.unwrap_or(0),
            incident::kind_name(t.kind),
            t.planned.name()
        ));
    }
    let g = official(ctx, server, id).await?;
    let ours: Vec<u64> = tags.iter().filter_map(|t| t.seq).collect();
    if let Some(p) = g
        .pending_irregularities
        .iter()
        .find(|p| ours.contains(&p.seq))
    {
        return Err(format!("irregularity #{} still outstanding", p.seq));
    }
    let view = g.board_view.clone().unwrap_or_default();
    let judged = Physical::from_view(v, &view);
    if !view.in_step || judged.pieces() != board.pieces() || judged.pending != board.pending {
        return Err(format!(
            "the judge's picture of the board (in step {}, white {:?}, black {:?}, to lift \
             {:?}) is not the board's (white {:?}, black {:?}, to lift {:?})",
            view.in_step,
            view.white,
            view.black,
            view.pending_removal,
            plan::numbers(v, board.white),
            plan::numbers(v, board.black),
            board.pending
        ));
    }
    let pos = draughts_arbiter::notation::parse_fen(&g.fen, v)
        .map_err(|e| format!("the judge's FEN: {e}"))?;
    if pieces(&pos) != pieces(want) || pos.kings() != want.kings() || pos.turn() != want.turn() {
        return Err(format!(
            "the judge's position {} is not the record's {}",
            g.fen,
            write_fen(want)
        ));
    }
    Ok(())
}

/// The game as the judge has it now, asked where the board's stream goes (retried while
/// the server is unavailable).
async fn official(ctx: &Ctx<'_>, server: &str, id: &str) -> Result<pb::Game, String> {
    let give_up = Instant::now() + ctx.reconnect_for;
    let mut servers = std::iter::once(server.to_string())
        .chain(ctx.servers.iter().cloned())
        .cycle();
    loop {
        let at = servers.next().unwrap_or_else(|| server.to_string());
        let mut games = GameServiceClient::new(ctx.channel(&at)?);
        match games
            .get_game(ctx.request(pb::GetGameRequest {
                game_id: id.to_string(),
            }))
            .await
        {
            Ok(g) => return Ok(g.into_inner()),
            Err(s)
                if matches!(
                    s.code(),
                    tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
                ) && Instant::now() < give_up =>
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(s) => return Err(format!("get the game: {}", status_line(&s))),
        }
    }
}

#[allow(clippy::too_many_lines)]
async fn drive(
    ctx: &Ctx<'_>,
    rec: &Record<'_>,
    bind: Option<&str>,
    mut noise: Option<Noiser>,
    report: &mut GameReport,
) -> Result<String, String> {
    let args = ctx.args;
    let (n, game, variant, start) = (rec.n, rec.game, rec.variant, rec.start);
    let id = bind.map_or_else(|| format!("{}-{n}", ctx.prefix), str::to_string);
    let fail = |what: &str, s: tonic::Status| format!("failed: {what}: {}", status_line(&s));
    let mut timed = false;
    if bind.is_none() {
        let mut games = GameServiceClient::new(ctx.first()?);
        let time_control = record_time_control(game, &args.time_control);
        timed = !time_control.is_empty();
        let board_no = tag(game, &["Board"])
            .parse::<u32>()
            .unwrap_or(u32::try_from(n).unwrap_or(0));
        let create = pb::CreateGameRequest {
            game_id: id.clone(),
            variant: variant_pb(variant) as i32,
            time_control,
            white: Some(player(game, Color::White)),
            black: Some(player(game, Color::Black)),
            event: tag(game, &["Event", "Dati"]).into(),
            round: tag(game, &["Round"]).into(),
            board: board_no,
            start_fen: if game.fen().is_some() {
                write_fen(&start)
            } else {
                String::new()
            },
            settings: None,
            site: String::new(),
            time_zone: String::new(),
        };
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
    }

    let seed = u64::from(std::process::id()).rotate_left(17)
        ^ (n as u64)
        ^ u64::try_from(ctx.started.elapsed().as_nanos()).unwrap_or(0);
    let mut link = Link::new(ctx, id.clone(), ctx.board_id(n), seed);
    let bound = link.open().await.map_err(|e| format!("failed: {e}"))?;
    let moves: Vec<draughts_arbiter::rules::Move> =
        rec.replay.game.moves().iter().copied().collect();
    let positions: Vec<draughts_arbiter::rules::Position> =
        rec.replay.game.positions().iter().copied().collect();
    let plies = moves.len();
    let edition = rec.replay.game.edition();
    timed = if bind.is_some() {
        // The game is the arbiter's: its variant and start must be the record's.
        if bound.game.variant != variant_pb(variant) as i32 {
            return Err(format!(
                "failed: game {id} is {}, the record {variant}",
                pb::Variant::try_from(bound.game.variant)
                    .map_or("of an unknown variant", |v| v.as_str_name())
            ));
        }
        let theirs = draughts_arbiter::notation::parse_fen(&bound.game.start_fen, variant)
            .map(|p| write_fen(&p))
            .unwrap_or_else(|_| bound.game.start_fen.clone());
        if theirs != write_fen(&start) {
            return Err(format!(
                "failed: game {id} starts from {theirs}, the record from {}",
                write_fen(&start)
            ));
        }
        bound.game.white_clock_ms >= 0
    } else {
        timed
    };
    // Where the judge stands: the moves it has recorded must be the record's first ones,
    // and the board goes on with the next.
    let mut stood: Vec<usize> = Vec::new();
    let mut ply =
        agree(&bound.game, &moves, variant, &stood).map_err(|e| format!("failed: {e}"))?;
    // The board as it knows itself, from the judge's picture when it binds.
    let mut board = bound.game.board_view.as_ref().map_or_else(
        || Physical::of(positions.get(ply).unwrap_or(&start)),
        |view| Physical::from_view(variant, view),
    );
    let mut target: Option<pb::BoardOutOfStep> = None;
    let mut tags: Vec<Tag> = Vec::new();
    let mut ply_plies = 1usize;
    let mut ply_stood: Vec<usize> = Vec::new();
    let mut fallback = Rng::new(seed);
    let expected = recorded_result(game);
    let spent = spent_per_ply(game, start.turn());
    // The rules' game beside the judge's: its legal moves are what a reading must not
    // be mistaken for.
    let mut judge = judge_at(start, edition, &moves, ply);
    // The current ply's messages (its clock press last), the next to send, whether the
    // message in flight may have been recorded, and whether the ply was resumed after a
    // broken stream (then started again from its first message, once, if the judge no
    // longer holds what the board had sent).
    let mut steps: Vec<Step> = Vec::new();
    let mut planned = false;
    let mut k = 0usize;
    let mut in_flight = false;
    let mut resumed = false;
    let mut restarted = false;
    let mut offered = false;
    let result: Result<(), String> = loop {
        let text = game
            .moves
            .get(ply)
            .map_or_else(String::new, |m| m.text.clone());
        let diverged = |why: String| format!("diverged at ply {} '{text}': {why}", ply + 1);
        if ply >= plies {
            break Ok(());
        }
        if link.finished.is_some() && !planned {
            break Err(diverged(
                "the game is over before it (the judge's result stands)".into(),
            ));
        }
        let outcome: Result<Option<(Answer, String)>, Lost> = if !link.started {
            if bind.is_some() {
                eprintln!("board-sim: game {n}: waiting for the arbiter to start game {id}");
            }
            link.wait_started().await.map(|()| None)
        } else if !planned {
            let paced = match (args.speed, spent.get(ply)) {
                (Some(s), Some(&ms)) if ms > 0 => {
                    Some(Duration::from_secs_f64(ms as f64 / 1000.0 / s))
                }
                _ => None,
            };
            let wait = paced.max(args.move_every.map(Duration::from_millis));
            let waited = match wait {
                Some(w) => link.idle(w).await,
                None => Ok(()),
            };
            waited.map(|()| {
                let before = positions.get(ply).copied().unwrap_or(start);
                // Only readings can be mistaken for another move.
                let legal = match args.mode {
                    Mode::Snapshots => judge.position_moves(),
                    Mode::Events => Vec::new(),
                };
                let mv_plan = move_plan(
                    &Ply {
                        before: &before,
                        mv: &moves[ply],
                        legal: &legal,
                        timed,
                        next: moves.get(ply + 1),
                        left: plies - ply - 1,
                    },
                    args.mode,
                    noise.as_mut(),
                );
                for kind in &mv_plan.noise {
                    *report.noise.entry(*kind).or_default() += 1;
                }
                steps = mv_plan.steps;
                tags = mv_plan
                    .tags
                    .iter()
                    .map(|&(kind, planned)| Tag {
                        kind,
                        planned,
                        seq: None,
                        ended: None,
                    })
                    .collect();
                ply_plies = mv_plan.plies;
                ply_stood = mv_plan.stood;
                planned = true;
                k = 0;
                None
            })
        } else if k >= steps.len() {
            // The ply is done: what the noise made is over, and the judge agrees.
            if !tags.is_empty() {
                let want = positions.get(ply + ply_plies).unwrap_or(&start);
                let checked =
                    check_incident(ctx, link.target(), &id, variant, &tags, &board, want).await;
                if let Err(e) = checked {
                    break Err(diverged(e));
                }
                for t in tags.drain(..) {
                    if let Some(e) = t.ended {
                        *report.tally.of(t.kind).ended.entry(e).or_default() += 1;
                    }
                }
            }
            for mv in moves.iter().skip(ply).take(ply_plies) {
                let _ = judge.play(mv);
            }
            stood.extend(ply_stood.iter().map(|o| ply + o));
            if let Some(end) = &link.finished {
                if ply + ply_plies < plies {
                    break Err(diverged(format!(
                        "the judge ended the game after it [{}]",
                        end.rule
                    )));
                }
                break Ok(());
            }
            ply += ply_plies;
            planned = false;
            resumed = false;
            restarted = false;
            continue;
        } else if link.finished.is_some()
            && steps[..k]
                .iter()
                .any(|s| matches!(s.expect, Expect::Move(_)))
        {
            // The move ended the game: what would follow it (its removals, the press)
            // is left out.
            k = steps.len();
            continue;
        } else if let Act::Rule { tag, ruling } = steps[k].act {
            let Some(t) = tags.get(usize::from(tag)).cloned() else {
                break Err(diverged(format!(
                    "a ruling on irregularity {tag}, which the plan does not make"
                )));
            };
            let Some(seq) = t.seq else {
                break Err(diverged(format!(
                    "a ruling on {} before it was flagged",
                    incident::kind_name(t.kind)
                )));
            };
            // Only a target that follows this ruling counts.
            target = None;
            let last = match rule_on(ctx, link.target(), &id, seq, t.kind, ruling).await {
                Ok(last) => last,
                Err(e) => break Err(diverged(e)),
            };
            k += 1;
            link.hear_through(last).await.map(|()| None)
        } else if matches!(steps[k].act, Act::Restore { .. } | Act::PutBack { .. }) {
            let rng = noise.as_mut().map_or(&mut fallback, |nz| &mut nz.rng);
            match back_steps(variant, args.mode, &board, &steps[k].act, &mut target, rng) {
                Ok(more) => {
                    steps.splice(k + 1..k + 1, more);
                    k += 1;
                    continue;
                }
                Err(e) => break Err(diverged(e)),
            }
        } else {
            let is_press = matches!(steps[k].act, Act::Press(_));
            if is_press
                && bind.is_none()
                && ply + ply_plies == plies
                && expected == PdnResult::Draw
                && !offered
            {
                // A recorded draw: offered with the last move (RU 1.9.3), accepted below.
                let mover = positions.get(ply).copied().unwrap_or(start).turn();
                GameServiceClient::new(ctx.channel(link.target())?)
                    .offer_draw(ctx.request(pb::OfferDrawRequest {
                        game_id: id.clone(),
                        side: side_pb(mover),
                        expected_seq: 0,
                    }))
                    .await
                    .map_err(|s| diverged(format!("offer a draw: {}", status_line(&s))))?;
                offered = true;
            }
            let step = &steps[k];
            let kind = match &step.act {
                Act::Send(kind) => kind.clone(),
                Act::Press(side) => plan::press(*side),
                _ => Kind::Heartbeat(pb::BoardHeartbeat {}),
            };
            let what = describe_step(&kind);
            in_flight = true;
            link.send(kind, ctx.board_ms(step.jitter_ms))
                .await
                .map(|a| Some((a, what)))
        };
        match outcome {
            Ok(None) => {
                if let Err(e) = absorb(&mut link, &mut tags, &mut board, &mut target) {
                    break Err(diverged(e));
                }
            }
            Ok(Some((answer, what))) => {
                in_flight = false;
                if let Some(r) = answer.rejected {
                    if resumed && !restarted && tags.is_empty() && r.message.contains("out of step")
                    {
                        // The judge does not hold what the board had sent of this ply
                        // before the stream broke: the move again from its start (not
                        // an irregularity's cycle: it would be made twice).
                        eprintln!(
                            "board-sim: game {n}: {what} refused after the reconnection \
                             ({}); ply {} again from its start",
                            r.message,
                            ply + 1
                        );
                        restarted = true;
                        k = 0;
                        continue;
                    }
                    break Err(diverged(format!(
                        "{what} refused: {}: {}",
                        r.code, r.message
                    )));
                }
                let expect = steps[k].expect.clone();
                if let Err(e) =
                    check_step(&mut link, &expect, &answer.events, &what, &mut tags, report)
                {
                    break Err(diverged(e));
                }
                took(variant, &mut board, &steps[k], &answer.events);
                if let Err(e) = absorb(&mut link, &mut tags, &mut board, &mut target) {
                    break Err(diverged(e));
                }
                k += 1;
            }
            Err(Lost::Fatal(why)) => {
                break Err(diverged(format!("gave up: {why}")));
            }
            Err(Lost::Retry(why)) => {
                eprintln!(
                    "board-sim: game {n}: board {}: the stream broke ({why}); reconnecting",
                    link.board_id()
                );
                let b = match link.open().await {
                    Ok(b) => b,
                    Err(e) => break Err(diverged(format!("gave up: {e}"))),
                };
                // Whether the message in flight was recorded: it caused events, which
                // are among those missed.
                if in_flight && planned && k < steps.len() {
                    in_flight = false;
                    if b.missed.iter().any(link::from_board) {
                        let expect = steps[k].expect.clone();
                        let what = match &steps[k].act {
                            Act::Send(kind) => describe_step(kind),
                            _ => "clock press".into(),
                        };
                        if let Err(e) =
                            check_step(&mut link, &expect, &b.missed, &what, &mut tags, report)
                        {
                            break Err(diverged(e));
                        }
                        k += 1;
                    }
                }
                // The board shows what the judge's picture of it says (the bound Game is
                // the state after the events replayed).
                if let Some(view) = &b.game.board_view {
                    board = Physical::from_view(variant, view);
                }
                if let Err(e) = absorb(&mut link, &mut tags, &mut board, &mut target) {
                    break Err(diverged(e));
                }
                let made = usize::from(
                    planned
                        && steps[..k.min(steps.len())]
                            .iter()
                            .any(|s| matches!(s.expect, Expect::Move(_))),
                );
                let m = match agree(&b.game, &moves, variant, &stood) {
                    Ok(m) => m,
                    Err(e) => break Err(diverged(e)),
                };
                if m < ply {
                    break Err(diverged(format!(
                        "the judge has {m} moves after the reconnection, the board had made {ply}"
                    )));
                }
                if m != ply + made {
                    // Someone else moved, or the message's fate was not what the board
                    // thought: go on from the judge's moves (an irregularity the noise
                    // made stays for the end's check to find).
                    ply = m;
                    judge = judge_at(start, edition, &moves, ply);
                    planned = false;
                    restarted = false;
                    tags.clear();
                } else {
                    resumed = true;
                }
                let at = if !planned {
                    format!("ply {}", ply + 1)
                } else if k >= steps.len() {
                    format!("the end of ply {}", ply + 1)
                } else {
                    format!("ply {}, its message {} of {}", ply + 1, k + 1, steps.len())
                };
                eprintln!(
                    "board-sim: game {n}: board {} bound again to {}; the judge has {m} moves, \
                     going on at {at}",
                    link.board_id(),
                    link.target(),
                );
            }
        }
    };
    report.acks = std::mem::take(&mut link.acks);
    report.messages = link.messages;
    result?;
    let reconnects = link.reconnects;

    // The result the record gives, where the last move did not end the game: made with
    // the arbiter's token for a game the simulator created, left to the arbiter on a
    // bound game.
    let final_pos = rec.replay.game.position();
    let mut pending = false;
    if link.finished.is_none() && expected != PdnResult::Unknown {
        if bind.is_some() {
            pending = true;
        } else {
            settle(ctx, &id, expected, plies, final_pos.turn()).await?;
        }
    }
    let server = link.target().to_string();
    drop(link);
    let official = official(ctx, &server, &id)
        .await
        .map_err(|e| format!("failed: {e}"))?;
    if !official.pending_irregularities.is_empty() {
        let list: Vec<String> = official
            .pending_irregularities
            .iter()
            .map(|p| {
                format!(
                    "#{} {}",
                    p.seq,
                    pb::IrregularityKind::try_from(p.kind).map_or("?", incident::kind_name)
                )
            })
            .collect();
        return Err(format!(
            "failed: irregularities still outstanding at the end: {}",
            list.join(", ")
        ));
    }
    let fen = write_fen(final_pos);
    if official.fen != fen {
        return Err(format!(
            "failed: the judge's position {} is not the record's {fen}",
            official.fen
        ));
    }
    let recorded_text = game.result_text.clone().unwrap_or_else(|| match expected {
        PdnResult::Unknown => "*".into(),
        r => r.as_str().to_string(),
    });
    let mut line = if pending && official.result == pb::GameResult::Unspecified as i32 {
        format!("ok, {plies} plies, result {recorded_text} pending for the arbiter")
    } else if official.result != result_pb(expected) as i32 {
        return Err(format!(
            "failed: the judge's result is {}, the record's {}",
            result_text(official.result),
            result_text(result_pb(expected) as i32)
        ));
    } else {
        format!("ok, {plies} plies, result {recorded_text}")
    };
    let notes: Vec<String> = rec
        .replay
        .notes
        .iter()
        .filter(|n| matches!(n, ReplayNote::Ambiguous { .. }))
        .map(ToString::to_string)
        .collect();
    if !notes.is_empty() {
        line.push_str(&format!("; note: {}", notes.join("; ")));
    }
    if !stood.is_empty() {
        line.push_str(&format!(
            "; {} stood by ruling (FMJD 5.4)",
            match stood.len() {
                1 => "1 ply".to_string(),
                k => format!("{k} plies"),
            }
        ));
    }
    if reconnects > 0 {
        line.push_str(&format!("; reconnected {reconnects} times"));
    }
    Ok(line)
}

/// What a board message the judge took did to the board, as the board knows itself: a
/// move made at a release leaves its captured pieces on the board, to be lifted.
fn took(v: Variant, board: &mut Physical, step: &Step, events: &[pb::GameEvent]) {
    let Act::Send(kind) = &step.act else {
        return;
    };
    board.apply(v, kind);
    if matches!(kind, Kind::Release(_)) {
        for e in events {
            if let Some(EventKind::MovePlayed(m)) = &e.kind {
                board.pending = m
                    .r#move
                    .as_ref()
                    .map(|m| m.captured.clone())
                    .unwrap_or_default();
            }
        }
    }
}

/// Records the result the record gives with the arbiter's token (a game the simulator
/// created): a resignation, the draw offered with the last move accepted, or the
/// arbiter's declaration where no move was made.
async fn settle(
    ctx: &Ctx<'_>,
    id: &str,
    expected: PdnResult,
    plies: usize,
    to_move: Color,
) -> Result<(), String> {
    let fail = |what: &str, s: tonic::Status| format!("failed: {what}: {}", status_line(&s));
    let channel = ctx.first()?;
    let mut games = GameServiceClient::new(channel.clone());
    let mut arbiter = ArbiterServiceClient::new(channel);
    let declare = |result: pb::GameResult| pb::DeclareResultRequest {
        game_id: id.to_string(),
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
                    game_id: id.to_string(),
                    side: side_pb(loser),
                    expected_seq: 0,
                }))
                .await
                .map_err(|s| fail("resign", s))?;
        }
        PdnResult::Draw if plies > 0 => {
            games
                .respond_to_draw_offer(ctx.request(pb::RespondToDrawOfferRequest {
                    game_id: id.to_string(),
                    side: side_pb(to_move),
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
    Ok(())
}
