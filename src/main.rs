//! The `draughts-arbiter` command line; see `draughts-arbiter --help`.

use std::process::ExitCode;

use clap::Parser;
use draughts_arbiter::cli::{Cli, run};

fn main() -> ExitCode {
    run(Cli::parse())
}
