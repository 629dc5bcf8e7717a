//! `draughts-arbiter replay`: checks every move of every game of PDN files.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::notation::pdn::read_games_bytes;
use crate::notation::replay::replay_game;
use crate::rules::Variant;

/// Arguments of `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The variant, overriding each game's `GameType` tag (needed when a file has none).
    #[arg(long, value_parser = super::parse_variant)]
    pub variant: Option<Variant>,
    /// PDN files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
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
            let line = match game {
                Err(e) => {
                    failed += 1;
                    format!("{prefix}game {}: unreadable: {e}", i + 1)
                }
                Ok(game) => match replay_game(game, args.variant) {
                    Ok(g) => {
                        ok += 1;
                        let result = game.result_text.as_deref().unwrap_or("*");
                        format!(
                            "{prefix}game {}: ok, {} plies, result {result}",
                            i + 1,
                            g.moves().len()
                        )
                    }
                    Err(e) => {
                        failed += 1;
                        format!("{prefix}game {}: {e}", i + 1)
                    }
                },
            };
            let _ = match &bar {
                Some(bar) => {
                    bar.inc(1);
                    bar.suspend(|| writeln!(out, "{line}"))
                }
                None => writeln!(out, "{line}"),
            };
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }
    let _ = writeln!(out, "{total} games, {ok} ok, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
