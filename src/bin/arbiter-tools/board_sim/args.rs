//! The arguments of `board-sim`.

use std::path::PathBuf;

use clap::Args;

use super::plan::Mode;
use draughts_arbiter::rules::Variant;

/// Arguments of `board-sim`.
#[derive(Debug, Args)]
pub struct BoardSimArgs {
    /// The server: `http://host:port`, or `https://host:port` for TLS. Repeatable (the
    /// nodes of a cluster): when one is gone the board tries the next, and a node that
    /// names the game's owner sends it there.
    #[arg(
        long,
        env = "ARBITER_SERVER",
        default_value = "http://127.0.0.1:50051",
        value_delimiter = ','
    )]
    pub server: Vec<String>,
    /// CA certificate (PEM) to trust for an https:// server (a private CA).
    #[arg(long, env = "ARBITER_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// Bearer token for every call: with `--bind`, the board's token (its stream and
    /// reads); without, an arbiter's where the service has roles (it creates, starts and
    /// ends the games too).
    #[arg(long, env = "ARBITER_TOKEN")]
    pub token: Option<String>,
    /// An arbiter's token, for the rulings `--noise` asks for with `--bind` (the board's
    /// `--token` cannot rule). Without it, bound boards make only the irregularities the
    /// board itself puts right. Without `--bind`, `--token` is the arbiter's already.
    #[arg(long, env = "ARBITER_ARBITER_TOKEN", value_name = "TOKEN")]
    pub arbiter_token: Option<String>,
    /// Play onto this existing game instead of creating one (repeatable): the file's
    /// games selected by `--game` or `--all` are matched to the bound games in order. The
    /// board waits for the arbiter to start a game not started yet, goes on after the
    /// moves the judge has already recorded, and leaves a result no move makes
    /// (resignation, agreed draw, time forfeit) to the arbiter.
    #[arg(long = "bind", value_name = "GAME_ID")]
    pub bind: Vec<String>,
    /// The board's id (`BindBoard.board_id`); with several games, `NAME-<game number>`.
    /// Default: `sim-<host>-<pid>-<game number>`, unique per process.
    #[arg(long, value_name = "NAME")]
    pub board_id: Option<String>,
    /// Give up when the board stream cannot be opened and bound again for this many
    /// seconds in a row (a refusal that will not change gives up at once).
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub reconnect_for: u64,
    /// The PDN file whose games are played.
    #[arg(long)]
    pub pdn: PathBuf,
    /// The variant, overriding each game's `GameType` tag (needed when a file has none).
    #[arg(long, value_parser = draughts_arbiter::cli::parse_variant)]
    pub variant: Option<Variant>,
    /// Play only game N of the file (1-based).
    #[arg(long, conflicts_with = "all")]
    pub game: Option<usize>,
    /// Play every game of the file (the default).
    #[arg(long)]
    pub all: bool,
    /// How the board reports: `events` (touch, lift, place, release, removals, press) or
    /// `snapshots` (whole-board readings with their intermediate states, and presses).
    #[arg(long, value_enum, default_value = "events")]
    pub mode: Mode,
    /// Add noise reproducibly from this seed: harmless (jitter, "I adjust", a touch of
    /// an opponent's piece, a piece lifted and put back, two updates of a scan swapped)
    /// and irregularities of every kind a board can cause, each flagged with its rule
    /// (nothing else may be) and brought to an end: ruled corrected and the board
    /// restored, ruled to stand, or the board put back (see the README).
    #[arg(long)]
    pub noise: Option<u64>,
    /// Play at the record's pace divided by X: the time each move took, from the PDN's
    /// clock comments (`[%clock …]`, `[%clk …]`). Without it, or without clock
    /// comments, as fast as the server answers.
    #[arg(long)]
    pub speed: Option<f64>,
    /// The least time each move takes, in ms: the player thinks that long before the
    /// board reports the move (heartbeats meanwhile). With `--speed`, the longer of the
    /// two.
    #[arg(long, value_name = "MS")]
    pub move_every: Option<u64>,
    /// How many boards play at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub boards: u16,
    /// The time control of games whose record has no `TimeControl` tag.
    #[arg(long, default_value = "90m+30s")]
    pub time_control: String,
    /// The games' ids: `<prefix>-<N>` (default: `sim-` and the start time in ms).
    #[arg(long)]
    pub id_prefix: Option<String>,
}
