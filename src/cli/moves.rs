//! `draughts-arbiter moves`: the legal moves of one position or of a file of positions.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::notation::fen::parse_fen;
use crate::notation::movetext::move_records;
use crate::rules::{Position, Variant};

/// Arguments of `moves`.
#[derive(Debug, Args)]
pub struct MovesArgs {
    /// The variant: russian, international, english, brazilian, pool, italian, giveaway,
    /// antidraughts, turkish, frisian, russian80, diagonal, towers, corners.
    #[arg(long, value_parser = super::parse_variant)]
    pub variant: Variant,
    /// One position (PDN FEN; towers stacks as `c3(bw)`, README "Towers FEN"); the start
    /// position if neither this nor --fen-file is given.
    #[arg(long, conflicts_with = "fen_file")]
    pub fen: Option<String>,
    /// A file with one FEN per line (`-` for standard input).
    #[arg(long)]
    pub fen_file: Option<PathBuf>,
    /// One JSON object per line: notation, path and captured squares (PDN numbers).
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: &MovesArgs) -> ExitCode {
    let lines: Vec<String> = match (&args.fen, &args.fen_file) {
        (Some(fen), _) => vec![fen.clone()],
        (None, None) => vec![crate::notation::fen::write_fen(&Position::start(
            args.variant,
        ))],
        (None, Some(path)) => {
            let read = if path.as_os_str() == "-" {
                std::io::stdin()
                    .lock()
                    .lines()
                    .collect::<Result<Vec<_>, _>>()
            } else {
                std::fs::read_to_string(path).map(|t| t.lines().map(str::to_string).collect())
            };
            match read {
                Ok(lines) => lines,
                Err(e) => {
                    eprintln!("error: {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
    };
    let many = args.fen_file.is_some();
    let mut failed = false;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, line) in lines.iter().enumerate() {
        let pos = match parse_fen(line, args.variant) {
            Ok(p) => p,
            Err(e) => {
                failed = true;
                if args.json && many {
                    let obj = serde_json::json!({"position": i, "error": e.to_string()});
                    let _ = writeln!(out, "{obj}");
                } else {
                    eprintln!("error: line {}: {e}", i + 1);
                }
                continue;
            }
        };
        let records = move_records(&pos);
        if !args.json && many {
            let _ = writeln!(out, "# position {i}: {}", line.trim());
        }
        if records.is_empty() && many {
            let _ = if args.json {
                writeln!(out, "{}", serde_json::json!({"position": i, "none": true}))
            } else {
                writeln!(out, "none")
            };
            continue;
        }
        for r in records {
            let _ = if args.json {
                let mut obj = serde_json::to_value(&r).expect("records serialise");
                if many {
                    obj["position"] = i.into();
                }
                writeln!(out, "{obj}")
            } else {
                writeln!(out, "{}", r.notation)
            };
        }
    }
    let _ = out.flush();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
