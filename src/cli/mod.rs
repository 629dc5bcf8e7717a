//! The command line: `perft`, `moves`, `replay` over the rules core; `serve`; the
//! `game` and `arbiter` client subcommands; `check`, `export` and `import` over the event
//! log offline. The tools beside the service (`bench`, `board-sim`) are a binary of their
//! own, `arbiter-tools` (src/bin/arbiter-tools), over this library's public API.

mod arbiter;
mod client;
mod entrant;
mod eventlog;
mod events;
mod moves;
mod perft;
mod replay;
mod serve;
mod sheet;
mod standings;
mod tournament;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use arbiter::{ArbiterAction, ArbiterArgs};
pub use client::{
    ClientArgs, Connection, CreateArgs, GameAction, block_on, channel, endpoint, run_on, runtime,
};
pub use eventlog::{CheckArgs, ExportArgs, ImportArgs};
pub use events::{clock_time, describe, event_json, game_json};
pub use moves::MovesArgs;
pub use perft::PerftArgs;
pub use replay::ReplayArgs;
pub use serve::ServeArgs;
pub use tournament::{TournamentAction, TournamentArgs};

/// The competition judge for draughts tournaments.
#[derive(Debug, Parser)]
#[command(name = "draughts-arbiter", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the leaf nodes of the move tree (perft) from a position.
    Perft(PerftArgs),
    /// List the legal moves of one or many positions.
    Moves(MovesArgs),
    /// Check every move of every game of PDN files.
    Replay(ReplayArgs),
    /// Run the gRPC service.
    Serve(ServeArgs),
    /// Talk to a running service: create, play, offer, claim, watch.
    Game(ClientArgs),
    /// The arbiter's powers over a running service: pause, resume, adjust a clock, warn,
    /// declare a result, rule on a claim or an irregularity, set the position, press.
    Arbiter(ArbiterArgs),
    /// The tournaments of a running service: create, enter players, number them, pair,
    /// start, forfeits and absences, TRF in and out.
    Tournament(TournamentArgs),
    /// Check an event log offline: SQLite's integrity check (damaged pages, index rows
    /// missing), an impossible alive mark, an empty or foreign file, and every game
    /// replays with seqs dense; names each game affected, with its bad seq and the
    /// reason (exit code 1 then).
    Check(CheckArgs),
    /// Write games of an event log as JSON lines (a game line, then its events as
    /// stored), for backup or repair.
    Export(ExportArgs),
    /// Add games written by `export` to an event log; refuses a game that exists there or
    /// does not replay (and then imports nothing).
    Import(ImportArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Perft(args) => perft::run(&args),
        Command::Moves(args) => moves::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Serve(args) => serve::run_serve(&args),
        Command::Game(args) => client::run_client(&args),
        Command::Arbiter(args) => arbiter::run_arbiter(&args),
        Command::Tournament(args) => tournament::run_tournament(&args),
        Command::Check(args) => eventlog::run_check(&args),
        Command::Export(args) => eventlog::run_export(&args),
        Command::Import(args) => eventlog::run_import(&args),
    }
}

/// Parses a variant name for clap (`--variant russian`).
///
/// # Errors
/// The name is not a variant's; the message lists the known names.
pub fn parse_variant(s: &str) -> Result<crate::rules::Variant, String> {
    s.parse()
        .map_err(|e: crate::rules::UnknownVariant| e.to_string())
}
