//! `check`, `export` and `import`: the SQLite event log offline.
//!
//! - `check --data-dir D` checks the file (missing where a log was, empty, not a
//!   database or another program's), runs SQLite's `integrity_check` (every page, every
//!   index row against its table: a game named where SQLite names its row), judges the
//!   alive mark (impossible: negative or past the year 9999; a mark ahead of this host's
//!   clock is only a warning), then replays every game of the log as the server does when
//!   it loads one (seqs dense from 1, each row an event carrying its seq, each event
//!   accepted by the judge, a game whose row says finished ends with a result) and names
//!   each game that cannot be read or does not replay, with its bad seq and the reason;
//!   the exit code is 1 if anything is found, 2 if there is no log or it cannot be read
//!   for another reason.
//! - `export --data-dir D --game ID` writes a game as JSON lines: a first line
//!   `{"game": {...}}` with its row (id, creation time, event, round, board, metadata),
//!   then each stored event as the store keeps it (the serde JSON of the domain event),
//!   one a line, in seq order. A quarantined game is exported as it is, for repair.
//! - `import --data-dir D [FILE]` reads such lines (one game or several, each from its
//!   `{"game": ...}` line) and writes the games, after checking every one: a game whose
//!   id exists in the log, or whose events do not replay, is refused with the reason,
//!   and then nothing at all is written.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::game::GameEvent;
use crate::hub::{Quarantine, encode, summary_of, unfinished_log, verify_log};
use crate::store::{
    EventStore, GameRecord, LogReader, MarkVerdict, SqliteStore, StoredEvent, judge_alive_mark,
    marker_path,
};

/// The event log's file in a data directory (as `serve` opens it).
const LOG_FILE: &str = "arbiter.sqlite";

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The data directory (its `arbiter.sqlite`).
    #[arg(long, env = "ARBITER_DATA_DIR")]
    pub data_dir: PathBuf,
}

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The data directory (its `arbiter.sqlite`).
    #[arg(long, env = "ARBITER_DATA_DIR")]
    pub data_dir: PathBuf,
    /// The game to export (repeat for several; they follow one another).
    #[arg(long = "game", required = true)]
    pub games: Vec<String>,
    /// Write to this file instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The data directory (its `arbiter.sqlite`, created if there is none).
    #[arg(long, env = "ARBITER_DATA_DIR")]
    pub data_dir: PathBuf,
    /// The JSON lines `export` wrote; `-` or nothing: stdin.
    pub file: Option<PathBuf>,
}

/// The first line of an exported game: its row in the log.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    id: String,
    created_at_ms: i64,
    event: String,
    round: String,
    board: u32,
    /// The row's metadata (players...), as the JSON the server wrote.
    metadata: serde_json::Value,
}

#[derive(Debug, Serialize, Deserialize)]
struct HeaderLine {
    game: Header,
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join(LOG_FILE)
}

pub(super) fn run_check(args: &CheckArgs) -> ExitCode {
    let path = log_path(&args.data_dir);
    let mut out = std::io::stdout().lock();
    // The file itself: missing, empty, not a database, another program's.
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if marker_path(&path).exists() {
                let _ = writeln!(
                    out,
                    "damaged: {} is missing but {} says a log was created here: the log was \
                     lost (restore it from a backup)",
                    path.display(),
                    marker_path(&path).display()
                );
                return ExitCode::FAILURE;
            }
            eprintln!("error: no event log at {}", path.display());
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
        Ok(m) if m.len() == 0 => {
            let _ = writeln!(
                out,
                "damaged: {} is empty (0 bytes): not an event log; a log that was here was \
                 lost or truncated (restore it from a backup; `serve` refuses it unless \
                 --init)",
                path.display()
            );
            return ExitCode::FAILURE;
        }
        Ok(_) => {}
    }
    let mut damage = 0usize;
    if let Some(short) = cut_short(&path) {
        damage += 1;
        let _ = writeln!(out, "damaged: {}: {short}", path.display());
    }
    let reader = match LogReader::open(&path) {
        Ok(r) => r,
        Err(e) if e.is_damaged() => {
            let _ = writeln!(out, "damaged: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    // SQLite's own check: every page, every index row against its table.
    let integrity = match reader.integrity() {
        Ok(problems) => problems,
        Err(e) => {
            damage += 1;
            let _ = writeln!(out, "integrity: the check stopped: {e}");
            Vec::new()
        }
    };
    let mut named: Vec<String> = Vec::new();
    for problem in &integrity {
        damage += 1;
        let _ = writeln!(out, "integrity: {}", problem.message);
        if let Some(game) = &problem.game
            && !named.contains(game)
        {
            named.push(game.clone());
        }
    }
    for game in &named {
        let _ = writeln!(
            out,
            "game {game}: a row of its log is missing from an index (the server reads the \
             log through it)"
        );
    }
    match reader.alive_mark() {
        Ok(Some(mark)) => match judge_alive_mark(mark, chrono::Utc::now().timestamp_millis()) {
            MarkVerdict::Impossible(why) => {
                damage += 1;
                let _ = writeln!(
                    out,
                    "alive mark: {why}: impossible (the server ignores it and logs an error)"
                );
            }
            MarkVerdict::Implausible(why) => {
                let _ = writeln!(out, "warning: {why}");
            }
            MarkVerdict::Fine => {}
        },
        Ok(None) => {}
        Err(e) => {
            damage += 1;
            let _ = writeln!(out, "alive mark: unreadable: {e}");
        }
    }
    // Every game: its rows read through the index and replayed as the server would.
    let games: Vec<(String, Option<bool>)> = match reader.games() {
        Ok(g) => g
            .into_iter()
            .map(|r| (r.game_id, Some(r.finished)))
            .collect(),
        Err(e) => {
            damage += 1;
            let _ = writeln!(out, "games table: unreadable: {e}");
            match reader.game_ids_of_events() {
                Ok(ids) => ids.into_iter().map(|id| (id, None)).collect(),
                Err(e) => {
                    let _ = writeln!(out, "events: the games cannot be named: {e}");
                    Vec::new()
                }
            }
        }
    };
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| indicatif::ProgressBar::new(games.len() as u64));
    let (mut bad, mut events, mut empty) = (0usize, 0usize, 0usize);
    for (id, finished) in &games {
        let line = match reader.events(id) {
            Err(e) => Some(format!("game {id}: unreadable: {e}")),
            Ok(rows) if rows.is_empty() => {
                empty += 1;
                None
            }
            Ok(rows) => {
                events += rows.len();
                match verify_log(&rows).and_then(|(session, _)| {
                    unfinished_log(*finished == Some(true), &session).map_or(Ok(()), Err)
                }) {
                    Err(q) => Some(format!("game {id}: seq {}: {}", q.seq, q.reason)),
                    Ok(()) => named
                        .contains(id)
                        .then(|| format!("game {id}: replays, but without its unindexed rows")),
                }
            }
        };
        if let Some(line) = line {
            bad += 1;
            let _ = match &bar {
                Some(bar) => bar.suspend(|| writeln!(out, "{line}")),
                None => writeln!(out, "{line}"),
            };
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let note = if empty > 0 {
        format!(
            "; {empty} game rows without events (creations that never completed: the server \
             ignores them)"
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} games, {events} events: {} replay, {bad} do not{note}; {}",
        games.len(),
        games.len() - bad - empty,
        if damage == 0 {
            "the file is sound".to_string()
        } else {
            format!("{damage} problems with the file itself")
        }
    );
    if bad > 0 || damage > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Whether the database file is shorter than its header says (a truncated copy, a
/// full disk): SQLite only finds out when it reads a missing page. The header's page
/// count is read only when valid (its change counter equals its version-valid-for).
fn cut_short(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).ok()?;
    file.read_exact(&mut header).ok()?;
    let len = file.metadata().ok()?.len();
    if &header[..16] != b"SQLite format 3\0" || header[24..28] != header[92..96] {
        return None;
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let want = pages * page_size;
    (len < want).then(|| {
        format!(
            "the file is {len} bytes but its header says {pages} pages of {page_size} bytes \
             ({want}): cut short by {} bytes (truncated)",
            want - len
        )
    })
}

pub(super) fn run_export(args: &ExportArgs) -> ExitCode {
    let path = log_path(&args.data_dir);
    let reader = match LogReader::open(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let mut text = Vec::new();
    let mut broken = false;
    for id in &args.games {
        match export_game(&reader, id, &mut text) {
            Ok(None) => {}
            Ok(Some(q)) => {
                broken = true;
                eprintln!(
                    "warning: game {id} does not replay at seq {}: {} (exported as stored, \
                     for repair)",
                    q.seq, q.reason
                );
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let written = match &args.out {
        Some(file) => std::fs::write(file, &text).map_err(|e| format!("{}: {e}", file.display())),
        None => std::io::stdout()
            .lock()
            .write_all(&text)
            .map_err(|e| format!("stdout: {e}")),
    };
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if broken {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Appends one game's lines to `out`; returns why it does not replay, if it does not.
fn export_game(
    reader: &LogReader,
    id: &str,
    out: &mut Vec<u8>,
) -> Result<Option<Quarantine>, String> {
    let record = reader
        .game(id)
        .map_err(|e| format!("game {id}: {e}"))?
        .ok_or_else(|| format!("game {id}: not in the log"))?;
    let rows = reader.events(id).map_err(|e| format!("game {id}: {e}"))?;
    let metadata = serde_json::from_str(&record.metadata_json)
        .unwrap_or(serde_json::Value::String(record.metadata_json.clone()));
    let header = HeaderLine {
        game: Header {
            id: record.game_id.clone(),
            created_at_ms: record.created_at_ms,
            event: record.event.clone(),
            round: record.round.clone(),
            board: record.board,
            metadata,
        },
    };
    let line = serde_json::to_string(&header).map_err(|e| format!("game {id}: {e}"))?;
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
    for row in &rows {
        match std::str::from_utf8(&row.payload) {
            // The store's own form, as it is (even if it does not decode: for repair).
            Ok(text) if !text.contains(['\n', '\r']) => out.extend_from_slice(text.as_bytes()),
            // Not one line of text: as a JSON string, so the line stays a line.
            _ => {
                let lossy = String::from_utf8_lossy(&row.payload);
                let wrapped =
                    serde_json::json!({"unreadable_row": {"seq": row.seq, "text": lossy}});
                out.extend_from_slice(wrapped.to_string().as_bytes());
            }
        }
        out.push(b'\n');
    }
    Ok(if rows.is_empty() {
        Some(Quarantine {
            seq: 1,
            reason: "no events".into(),
        })
    } else {
        verify_log(&rows).err()
    })
}

/// A game read from import lines, checked.
struct Incoming {
    record: GameRecord,
    payloads: Vec<Vec<u8>>,
}

pub(super) fn run_import(args: &ImportArgs) -> ExitCode {
    let input: Box<dyn BufRead> = match &args.file {
        None => Box::new(std::io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => Box::new(std::io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("error: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
    };
    let games = match read_games(input) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}; nothing was imported");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(write_games(&log_path(&args.data_dir), games)) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads and checks every game of the input: each must replay.
fn read_games(input: Box<dyn BufRead>) -> Result<Vec<Incoming>, String> {
    let mut games: Vec<(Header, Vec<(usize, String)>)> = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| format!("line {n}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("line {n}: not JSON: {e}"))?;
        if value.get("game").is_some() {
            let header: HeaderLine = serde_json::from_value(value)
                .map_err(|e| format!("line {n}: not a game line: {e}"))?;
            if games.iter().any(|(h, _)| h.id == header.game.id) {
                return Err(format!("line {n}: game {} given twice", header.game.id));
            }
            games.push((header.game, Vec::new()));
        } else {
            let (_, events) = games
                .last_mut()
                .ok_or_else(|| format!("line {n}: an event before any {{\"game\": ...}} line"))?;
            events.push((n, line));
        }
    }
    if games.is_empty() {
        return Err(
            "no game in the input (expected a {\"game\": ...} line, as export writes)".into(),
        );
    }
    games
        .into_iter()
        .map(|(header, lines)| incoming(header, &lines))
        .collect()
}

/// One game's header and event lines, checked as the server checks a log it loads.
fn incoming(header: Header, lines: &[(usize, String)]) -> Result<Incoming, String> {
    let id = &header.id;
    if id.trim().is_empty() {
        return Err("a game line with an empty id".into());
    }
    let mut events = Vec::with_capacity(lines.len());
    for (n, line) in lines {
        let event: GameEvent = serde_json::from_str(line)
            .map_err(|e| format!("game {id}: line {n}: not an event: {e}"))?;
        events.push(event);
    }
    // Checked against the seq each event will take (its position), so a gap or a
    // misnumbered event is refused like a stored one.
    let payloads = encode(&events).map_err(|e| format!("game {id}: {e}"))?;
    let rows: Vec<StoredEvent> = (1u64..)
        .zip(&payloads)
        .map(|(seq, payload)| StoredEvent {
            game_id: id.clone(),
            seq,
            payload: payload.clone(),
            written_at_ms: 0,
        })
        .collect();
    let (session, _) = verify_log(&rows).map_err(|q| {
        format!(
            "game {id} does not replay at seq {}: {}; not imported",
            q.seq, q.reason
        )
    })?;
    let summary = summary_of(&session).map_err(|e| format!("game {id}: {e}"))?;
    let metadata_json = match header.metadata {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    };
    Ok(Incoming {
        record: GameRecord {
            game_id: id.clone(),
            created_at_ms: header.created_at_ms,
            event: header.event,
            round: header.round,
            board: header.board,
            finished: summary.finished,
            metadata_json,
            summary_json: summary.summary_json,
        },
        payloads,
    })
}

/// Writes checked games: refuses them all if one id is taken.
async fn write_games(path: &Path, games: Vec<Incoming>) -> Result<Vec<String>, String> {
    let store = SqliteStore::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let result = write_all(&store, path, games).await;
    let closed = store.close().await;
    let lines = result?;
    closed.map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(lines)
}

async fn write_all(
    store: &SqliteStore,
    path: &Path,
    games: Vec<Incoming>,
) -> Result<Vec<String>, String> {
    for g in &games {
        let id = &g.record.game_id;
        if store
            .get_game(id)
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?
            .is_some()
        {
            return Err(format!(
                "game {id} already exists in {}; nothing was imported",
                path.display()
            ));
        }
    }
    let mut lines = Vec::with_capacity(games.len());
    for g in games {
        let id = g.record.game_id.clone();
        let finished = g.record.finished;
        let n = g.payloads.len();
        store
            .create_game_with_events(g.record, g.payloads)
            .await
            .map_err(|e| format!("game {id}: {e} (the games listed before it were imported)"))?;
        lines.push(format!(
            "imported {id}: {n} events, {}",
            if finished { "finished" } else { "not finished" }
        ));
    }
    Ok(lines)
}
