//! `draughts-arbiter perft`: leaf-node counts, one line `perft D N` per depth.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Threads to count with: the root's moves are shared out among them, each counting
    /// whole subtrees (1: this thread alone).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
}

/// Perft of `pos` at `depth` on `threads` threads, the root's moves split among them
/// (each thread takes the next unclaimed root move when it is done with one).
fn count(pos: &Position, depth: u32, distinct: bool, threads: u32) -> u64 {
    if threads <= 1 || depth < 2 {
        return perft(pos, depth, distinct);
    }
    let mut moves = Vec::new();
    pos.generate(&mut moves, distinct);
    let children: Vec<Position> = moves
        .iter()
        .map(|mv| pos.play(mv).expect("generated moves are legal"))
        .collect();
    let next = AtomicUsize::new(0);
    let workers = (threads as usize).min(children.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut total = 0;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(child) = children.get(i) else {
                            return total;
                        };
                        total += perft(child, depth - 1, distinct);
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a perft thread panicked"))
            .sum()
    })
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
                let next = pos.play(mv).expect("generated moves are legal");
                let n = count(&next, depth - 1, distinct, args.threads);
                let _ = writeln!(stdout, "{} {n}", write_move_full(&pos, mv));
            }
        }
        let n = count(&pos, depth, distinct, args.threads);
        nodes += n;
        let _ = writeln!(stdout, "perft {depth} {n}");
        let _ = stdout.flush();
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "time {:.3} s, {} nodes, {:.1} M nodes/s, {} thread{}",
        secs,
        nodes,
        nodes as f64 / secs.max(1e-9) / 1e6,
        args.threads,
        if args.threads == 1 { "" } else { "s" }
    );
    ExitCode::SUCCESS
}
