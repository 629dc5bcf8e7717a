//! `draughts-arbiter replay`: checks every move of every game of PDN files, and with
//! `--draws` says where each draw rule first applied, beside the recorded result.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use crate::notation::pdn::{PdnGame, read_games_bytes};
use crate::notation::replay::{Replay, ReplayFailure, ReplayNote, replay_record};
use crate::rules::{DrawArising, DrawMode, Variant};

/// Arguments of `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The variant, overriding each game's `GameType` tag (needed when a file has none).
    #[arg(long, value_parser = super::parse_variant)]
    pub variant: Option<Variant>,
    /// For each game, the first ply at which each draw rule applied (automatic,
    /// claimable, or referred with --referred), with its rule, beside the recorded result.
    #[arg(long)]
    pub draws: bool,
    /// With --draws: report move-count draws as referred to the arbiter (the event
    /// setting `move_count_draws = referred`) instead of automatic.
    #[arg(long, requires = "draws")]
    pub referred: bool,
    /// One JSON object per game and a summary object, instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// PDN files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// How a draw rule takes effect, as `replay` names it.
fn mode_name(mode: DrawMode, referred: bool) -> &'static str {
    match mode {
        DrawMode::Automatic if referred => "referred",
        DrawMode::Automatic => "automatic",
        DrawMode::Claimable => "claimable",
        DrawMode::Final(_) => "final",
    }
}

/// The result the record gives: its termination marker, else its `Result` tag, else `*`.
fn recorded_result(game: &PdnGame) -> String {
    match (&game.result_text, game.result_tag()) {
        (Some(text), _) => text.clone(),
        (None, Some(tag)) => tag.as_str().to_owned(),
        (None, None) => "*".to_owned(),
    }
}

/// One game's report: its text line and its JSON object.
struct Report {
    ok: bool,
    line: String,
    json: Value,
}

fn report_ok(game: &PdnGame, replay: &Replay, args: &ReplayArgs) -> Report {
    let result = recorded_result(game);
    let plies = replay.game.moves().len();
    let mut line = format!("ok, {plies} plies, result {result}");
    let mut obj = json!({"status": "ok", "plies": plies, "result": result});
    if !replay.notes.is_empty() {
        let notes: Vec<String> = replay.notes.iter().map(ToString::to_string).collect();
        line.push_str(&format!("; note: {}", notes.join("; ")));
        obj["notes"] = replay.notes.iter().map(note_json).collect();
    }
    if args.draws {
        let history = replay.game.draw_history();
        let text: Vec<String> = history
            .iter()
            .map(|a| {
                format!(
                    "{} ({}) at ply {}",
                    a.verdict.rule,
                    mode_name(a.verdict.mode, args.referred),
                    a.ply
                )
            })
            .collect();
        line.push_str("; draws: ");
        line.push_str(&if text.is_empty() {
            "none".to_owned()
        } else {
            text.join(", ")
        });
        obj["draws"] = history
            .iter()
            .map(|a| draw_json(a, args.referred))
            .collect();
    }
    Report {
        ok: true,
        line,
        json: obj,
    }
}

fn draw_json(a: &DrawArising, referred: bool) -> Value {
    json!({"rule": a.verdict.rule, "mode": mode_name(a.verdict.mode, referred), "ply": a.ply})
}

fn note_json(note: &ReplayNote) -> Value {
    match note {
        ReplayNote::NoMovesRecorded { placeholders } => {
            json!({"kind": "no_moves_recorded", "placeholders": placeholders})
        }
        ReplayNote::Ambiguous {
            ply,
            text,
            line,
            candidates,
            chosen,
            decided_by_later_moves,
        } => json!({
            "kind": "ambiguous",
            "ply": ply,
            "text": text,
            "line": line,
            "candidates": candidates,
            "chosen": chosen,
            "decided_by_later_moves": decided_by_later_moves,
        }),
    }
}

fn report_failed(e: &ReplayFailure) -> Report {
    let mut obj = json!({"status": "failed", "error": e.to_string()});
    if let ReplayFailure::Illegal { ply, line, .. } = e {
        obj["ply"] = (*ply).into();
        obj["line"] = (*line).into();
    }
    Report {
        ok: false,
        line: e.to_string(),
        json: obj,
    }
}

pub(super) fn run(args: &ReplayArgs) -> ExitCode {
    let (mut total, mut ok, mut failed) = (0usize, 0usize, 0usize);
    let mut out = std::io::stdout().lock();
    let many_files = args.files.len() > 1;
    for path in &args.files {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                failed += 1;
                continue;
            }
        };
        let games = read_games_bytes(&bytes);
        let bar = (std::io::stderr().is_terminal() && games.len() > 50).then(|| {
            let bar = indicatif::ProgressBar::new(games.len() as u64);
            bar.set_message(path.display().to_string());
            bar
        });
        let prefix = if many_files {
            format!("{}: ", path.display())
        } else {
            String::new()
        };
        for (i, game) in games.iter().enumerate() {
            total += 1;
            let report = match game {
                Err(e) => Report {
                    ok: false,
                    line: format!("unreadable: {e}"),
                    json: json!({"status": "unreadable", "error": e.to_string()}),
                },
                Ok(game) => match replay_record(game, args.variant) {
                    Ok(replay) => report_ok(game, &replay, args),
                    Err(e) => report_failed(&e),
                },
            };
            if report.ok {
                ok += 1;
            } else {
                failed += 1;
            }
            let text = if args.json {
                let mut obj = json!({"file": path.display().to_string(), "game": i + 1});
                if let (Value::Object(head), Value::Object(body)) = (&mut obj, report.json) {
                    head.extend(body);
                }
                obj.to_string()
            } else {
                format!("{prefix}game {}: {}", i + 1, report.line)
            };
            let _ = match &bar {
                Some(bar) => {
                    bar.inc(1);
                    bar.suspend(|| writeln!(out, "{text}"))
                }
                None => writeln!(out, "{text}"),
            };
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }
    let _ = if args.json {
        writeln!(
            out,
            "{}",
            json!({"summary": {"games": total, "ok": ok, "failed": failed}})
        )
    } else {
        writeln!(out, "{total} games, {ok} ok, {failed} failed")
    };
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
