//! `arbiter-tools`: the tools beside the service, built from the same package but not
//! linked into the server's binary: `bench`, the service's figures, and `board-sim`, the
//! reference electronic board (recorded games played through a running service, and a
//! load tool). Both use the library's public API only; `bench` starts `serve` of the
//! `draughts-arbiter` binary beside this one where it needs the real process.
#![deny(unsafe_code)]

mod bench;
mod board_sim;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The tools beside the draughts competition judge: its bench and its board simulator.
#[derive(Debug, Parser)]
#[command(name = "arbiter-tools", version)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Measure the service: SubmitMove throughput and latency, the SQLite baseline,
    /// memory per game, the transport anchor, fan-out to watchers, an open-loop load,
    /// CPU per move by game length, flag precision.
    Bench(bench::BenchArgs),
    /// Play the games of a PDN file through a running service as an electronic board
    /// reports them (events or snapshots, optionally with noise), and check that each
    /// ends where its record does; also a load tool (`--boards N` at once).
    BoardSim(board_sim::BoardSimArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => bench::run(&args),
        Command::BoardSim(args) => board_sim::run(&args),
    }
}
