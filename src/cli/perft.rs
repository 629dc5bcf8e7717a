//! `draughts-arbiter perft`: leaf-node counts, one line `perft D N` per depth.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use crate::notation::fen::parse_fen;
use crate::notation::movetext::write_move_full;
use crate::rules::{Position, Variant, perft};

/// Arguments of `perft`.
#[derive(Debug, Args)]
pub struct PerftArgs {
    /// The variant: russian, international, english, brazilian, pool, italian, giveaway,
    /// antidraughts, turkish, frisian, russian80, diagonal, towers, corners.
    #[arg(long, value_parser = super::parse_variant)]
    pub variant: Variant,
    /// Count to this depth, printing every depth from 1.
    #[arg(long)]
    pub depth: u32,
    /// The position (PDN FEN); the start position if absent.
    #[arg(long)]
    pub fen: Option<String>,
    /// Count every distinct capture path, not every distinct (start, end, captured set).
    #[arg(long)]
    pub keep_duplicates: bool,
    /// Also print each root move's count at the deepest depth.
    #[arg(long)]
    pub divide: bool,
}

pub(super) fn run(args: &PerftArgs) -> ExitCode {
    let pos = match &args.fen {
        Some(fen) => match parse_fen(fen, args.variant) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => Position::start(args.variant),
    };
    let distinct = !args.keep_duplicates;
    let mut stdout = std::io::stdout().lock();
    let started = Instant::now();
    let mut nodes = 0u64;
    for depth in 1..=args.depth {
        if args.divide && depth == args.depth {
            let mut moves = Vec::new();
            pos.generate(&mut moves, distinct);
            for mv in &moves {
                let mut next = pos;
                next = next.play(mv).expect("generated moves are legal");
                let n = perft(&next, depth - 1, distinct);
                let _ = writeln!(stdout, "{} {n}", write_move_full(&pos, mv));
            }
        }
        let n = perft(&pos, depth, distinct);
        nodes += n;
        let _ = writeln!(stdout, "perft {depth} {n}");
        let _ = stdout.flush();
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "time {:.3} s, {} nodes, {:.1} M nodes/s",
        secs,
        nodes,
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    ExitCode::SUCCESS
}
