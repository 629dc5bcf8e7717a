//! `draughts-arbiter game …`: a client for people at the table, so a game can be tried
//! without writing code.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tokio_stream::StreamExt;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

use super::events::{describe, event_json, game_json};
use super::sheet;
use crate::api::pb;
use crate::server::tls::{ClientTls, client_config, error_chain};

/// Prints a line; a closed pipe (`| head`) is not an error worth a panic.
macro_rules! outln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
use crate::api::pb::broadcast_service_client::BroadcastServiceClient;
use crate::api::pb::game_service_client::GameServiceClient;

/// Connection and output options of the client subcommands (`game`, `arbiter`).
#[derive(Debug, Args)]
pub struct Connection {
    /// The server: `http://host:port`, or `https://host:port` for TLS.
    #[arg(long, env = "ARBITER_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// CA certificate (PEM) to trust for an https:// server instead of the system's roots
    /// (a private CA).
    #[arg(long, env = "ARBITER_CA_CERT")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Client certificate (PEM) for a server requiring mutual TLS.
    #[arg(long, env = "ARBITER_CLIENT_CERT")]
    pub client_cert: Option<std::path::PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, env = "ARBITER_CLIENT_KEY")]
    pub client_key: Option<std::path::PathBuf>,
    /// Bearer token.
    #[arg(long, env = "ARBITER_TOKEN")]
    pub token: Option<String>,
    /// Print one JSON object per line (events, then the game) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

/// `draughts-arbiter game …`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Where the server is and how to talk to it.
    #[command(flatten)]
    pub connection: Connection,
    /// What to do.
    #[command(subcommand)]
    pub action: GameAction,
}

/// A side on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SideArg {
    /// White.
    White,
    /// Black.
    Black,
}

pub(super) fn side(s: Option<SideArg>) -> i32 {
    match s {
        Some(SideArg::White) => pb::Side::White as i32,
        Some(SideArg::Black) => pb::Side::Black as i32,
        None => 0,
    }
}

/// The rule edition on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum EditionArg {
    /// Russian: RU 1.9.1 (c)-(g).
    Classic,
    /// Russian: the 2013 edition.
    #[value(name = "2013")]
    Edition2013,
}

/// When a digital move switches the clock.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SwitchingArg {
    /// A submitted move also presses the clock.
    OnMove,
    /// Only an explicit press switches the clock.
    OnPress,
}

/// How repetitions are handled.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum RepetitionArg {
    /// The side to move must claim (RU 1.9.2).
    Claim,
    /// The server draws the game at once.
    Automatic,
}

/// How move-count draws take effect.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum MoveCountArg {
    /// The server draws the game.
    Automatic,
    /// The server records it and the arbiter decides.
    Referred,
}

/// On or off.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

/// What `game create` sends: every field of `CreateGameRequest` and its `GameSettings`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The game's id (empty: the server makes one; refused with ALREADY_EXISTS if taken).
    #[arg(long, default_value = "")]
    pub id: String,
    /// Variant name (russian, international, english, …).
    #[arg(long, default_value = "russian")]
    pub variant: String,
    /// Time control: `5m+3s`, `2h/50 then 1h/25 then 15min+30s`, a PDN tag
    /// `50/7200:25/3600:900+30`, or `-` for none.
    #[arg(long, default_value = "-")]
    pub time_control: String,
    /// White's name.
    #[arg(long, default_value = "")]
    pub white: String,
    /// White's FMJD id.
    #[arg(long, default_value = "")]
    pub white_fmjd_id: String,
    /// White's federation (FMJD three-letter code).
    #[arg(long, default_value = "")]
    pub white_federation: String,
    /// White's rating (0: unrated).
    #[arg(long, default_value_t = 0)]
    pub white_rating: u32,
    /// Black's name.
    #[arg(long, default_value = "")]
    pub black: String,
    /// Black's FMJD id.
    #[arg(long, default_value = "")]
    pub black_fmjd_id: String,
    /// Black's federation.
    #[arg(long, default_value = "")]
    pub black_federation: String,
    /// Black's rating (0: unrated).
    #[arg(long, default_value_t = 0)]
    pub black_rating: u32,
    /// Event (PDN Event).
    #[arg(long, default_value = "")]
    pub event: String,
    /// Round (PDN Round).
    #[arg(long, default_value = "")]
    pub round: String,
    /// Board number in the round.
    #[arg(long, default_value_t = 0)]
    pub board: u32,
    /// Where it is played (PDN Site, e.g. "Moscow, Russia"); empty: unknown.
    #[arg(long, default_value = "")]
    pub site: String,
    /// The venue's IANA time zone (e.g. Europe/Moscow): the PDN Date is the day the game
    /// started there; empty: UTC.
    #[arg(long, default_value = "")]
    pub time_zone: String,
    /// Start position (FEN; default: the variant's start position).
    #[arg(long)]
    pub fen: Option<String>,
    /// Rule edition (Russian: classic or 2013; default: the variant's).
    #[arg(long, value_enum)]
    pub rule_edition: Option<EditionArg>,
    /// When a digital move switches the clock (default: on-move).
    #[arg(long, value_enum)]
    pub clock_switching: Option<SwitchingArg>,
    /// Repetition draws by claim or automatic (default: claim).
    #[arg(long, value_enum)]
    pub repetition: Option<RepetitionArg>,
    /// Move-count draws automatic or referred to the arbiter (default: automatic).
    #[arg(long, value_enum)]
    pub move_count_draws: Option<MoveCountArg>,
    /// Claims wait for an arbiter's ruling (the claimant's clock runs meanwhile).
    #[arg(long)]
    pub claims_need_arbiter: bool,
    /// No draw offers before this move number (0: no minimum).
    #[arg(long, default_value_t = 0)]
    pub min_move_for_draw_offer: u32,
    /// Public broadcast delay in milliseconds (at most 86400000, 24 hours); default: the
    /// event's default from the server's configuration, else 0.
    #[arg(long)]
    pub broadcast_delay_ms: Option<u64>,
    /// Charge the time the service was down to the side on move.
    #[arg(long)]
    pub charge_outage: bool,
    /// The English touch penalty for touching a piece that cannot move (default: on
    /// for English only).
    #[arg(long, value_enum)]
    pub touch_immovable_penalty: Option<OnOff>,
    /// The default time in minutes (RULES.md T 5): the side to move that has not acted
    /// this long after the start loses by default; 0 or unset: none.
    #[arg(long, default_value_t = 0)]
    pub default_time_minutes: u64,
}

impl CreateArgs {
    fn request(&self) -> Result<pb::CreateGameRequest, String> {
        let v =
            pb::Variant::from_str_name(&format!("VARIANT_{}", self.variant.to_ascii_uppercase()))
                .filter(|v| *v != pb::Variant::Unspecified)
                .ok_or(format!("--variant: unknown variant '{}'", self.variant))?;
        let player = |name: &str, fmjd_id: &str, federation: &str, rating: u32| pb::Player {
            name: name.to_string(),
            fmjd_id: fmjd_id.to_string(),
            federation: federation.to_string(),
            rating,
            ..pb::Player::default()
        };
        Ok(pb::CreateGameRequest {
            variant: v as i32,
            time_control: self.time_control.clone(),
            white: Some(player(
                &self.white,
                &self.white_fmjd_id,
                &self.white_federation,
                self.white_rating,
            )),
            black: Some(player(
                &self.black,
                &self.black_fmjd_id,
                &self.black_federation,
                self.black_rating,
            )),
            event: self.event.clone(),
            round: self.round.clone(),
            board: self.board,
            start_fen: self.fen.clone().unwrap_or_default(),
            settings: Some(pb::GameSettings {
                rule_edition: match self.rule_edition {
                    Some(EditionArg::Classic) => pb::RuleEdition::Classic as i32,
                    Some(EditionArg::Edition2013) => pb::RuleEdition::RuleEdition2013 as i32,
                    None => 0,
                },
                clock_switching: match self.clock_switching {
                    Some(SwitchingArg::OnMove) => pb::ClockSwitching::OnMove as i32,
                    Some(SwitchingArg::OnPress) => pb::ClockSwitching::OnPress as i32,
                    None => 0,
                },
                repetition_mode: match self.repetition {
                    Some(RepetitionArg::Claim) => pb::RepetitionMode::Claim as i32,
                    Some(RepetitionArg::Automatic) => pb::RepetitionMode::Automatic as i32,
                    None => 0,
                },
                move_count_draws: match self.move_count_draws {
                    Some(MoveCountArg::Automatic) => pb::MoveCountDraws::Automatic as i32,
                    Some(MoveCountArg::Referred) => pb::MoveCountDraws::ReferredToArbiter as i32,
                    None => 0,
                },
                claims_need_arbiter: self.claims_need_arbiter,
                min_move_for_draw_offer: self.min_move_for_draw_offer,
                broadcast_delay_ms: self.broadcast_delay_ms,
                charge_outage_to_side_on_move: self.charge_outage,
                touch_immovable_penalty: self
                    .touch_immovable_penalty
                    .map(|o| matches!(o, OnOff::On)),
                default_time_ms: self.default_time_minutes.saturating_mul(60_000),
            }),
            game_id: self.id.clone(),
            site: self.site.clone(),
            time_zone: self.time_zone.clone(),
        })
    }
}

/// Client actions.
#[derive(Debug, Subcommand)]
pub enum GameAction {
    /// Create a game with its settings; prints the game (`game ID …` first).
    Create(Box<CreateArgs>),
    /// Start the clocks.
    Start {
        /// Game id.
        id: String,
        /// Refused unless this is the game's last seq (0: no check).
        #[arg(long, default_value_t = 0)]
        expected_seq: u64,
    },
    /// Show a game with its score sheet.
    Show {
        /// Game id.
        id: String,
    },
    /// List games.
    List {
        /// Event.
        #[arg(long, default_value = "")]
        event: String,
        /// Round.
        #[arg(long, default_value = "")]
        round: String,
        /// Only games not finished.
        #[arg(long)]
        unfinished: bool,
    },
    /// Play a move (and press the clock).
    Move {
        /// Game id.
        id: String,
        /// The move (`c3-d4`, `22-18`, `e3:c5:e7`).
        mv: String,
        /// The side (default: your token's side, or the side to move).
        #[arg(long, value_enum)]
        side: Option<SideArg>,
        /// Offer a draw with the move, before the press (RU 1.9.3).
        #[arg(long)]
        offer_draw: bool,
        /// Refused unless this is the game's last seq (0: no check).
        #[arg(long, default_value_t = 0)]
        expected_seq: u64,
    },
    /// Offer a draw.
    Offer {
        /// Game id.
        id: String,
        /// The side.
        #[arg(long, value_enum)]
        side: Option<SideArg>,
    },
    /// Answer a draw offer.
    Respond {
        /// Game id.
        id: String,
        /// accept, decline or postpone.
        answer: String,
        /// The side.
        #[arg(long, value_enum)]
        side: Option<SideArg>,
    },
    /// Claim a draw by repetition (RU 1.9.2) or by a move-count rule.
    Claim {
        /// Game id.
        id: String,
        /// The move written on the scoresheet, not played.
        #[arg(long)]
        written: Option<String>,
        /// Claim a move-count draw instead of a repetition.
        #[arg(long)]
        move_count: bool,
        /// The side.
        #[arg(long, value_enum)]
        side: Option<SideArg>,
    },
    /// Resign.
    Resign {
        /// Game id.
        id: String,
        /// The side (required with an arbiter's token; a player's token resigns its own).
        #[arg(long, value_enum)]
        side: Option<SideArg>,
    },
    /// Follow a game's events (Ctrl-C to stop; ends after the game's last event).
    Watch {
        /// Game id.
        id: String,
        /// Start after this seq (0 = from the beginning).
        #[arg(long, default_value_t = 0)]
        from: u64,
    },
    /// Print a game as PDN, or every game of an event (`--event E`) or of one of its
    /// rounds (`--event E --round R`). `game pdn ID` is the same.
    #[command(visible_alias = "pdn")]
    Export {
        /// Game id (or give `--event`).
        #[arg(required_unless_present = "event", conflicts_with = "event")]
        id: Option<String>,
        /// Every game of this event (PDN Event).
        #[arg(long)]
        event: Option<String>,
        /// Only this round of the event.
        #[arg(long, requires = "event")]
        round: Option<String>,
    },
}

pub(super) fn request<T>(token: &Option<String>, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token
        && let Ok(v) = MetadataValue::try_from(format!("Bearer {t}"))
    {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

/// A server's refusal as the client prints it: `FAILED_PRECONDITION: … (RU 1.4.1)`.
pub(super) fn status_text(s: &tonic::Status) -> String {
    if s.code() == tonic::Code::Unavailable
        && let Some(addr) = s
            .metadata()
            .get(crate::api::OWNER_ADDR)
            .and_then(|v| v.to_str().ok())
    {
        *OWNER
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(addr.to_string());
    }
    format!("{}: {}", crate::api::code_name(s.code()), s.message())
}

/// The node that serves the game, as the last UNAVAILABLE answer named it (several
/// nodes on PostgreSQL): the request goes there once more.
static OWNER: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Runs `run` against the configured server; if that node answers that another one
/// serves the game (nothing was done), runs it once more against that node.
pub(super) async fn follow_owner<F, Fut>(c: &Connection, run: F) -> Result<(), String>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let first = run(c.server.clone()).await;
    let owner = OWNER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    match (first, owner) {
        (Err(e), Some(addr)) => {
            let scheme = if c.server.starts_with("https://") {
                "https"
            } else {
                "http"
            };
            let there = format!("{scheme}://{addr}");
            eprintln!("note: {e}; sending it to {there}");
            run(there).await
        }
        (result, _) => result,
    }
}

/// Prints a command's answer: its events, one line each, then the game.
pub(super) fn print_reply(json: bool, game: Option<&pb::Game>, events: &[pb::GameEvent]) {
    for e in events {
        print_event(json, e);
    }
    if let Some(g) = game {
        print_game(json, g);
    }
}

/// Prints one event; false when stdout is closed.
pub(super) fn print_event(json: bool, e: &pb::GameEvent) -> bool {
    let line = if json {
        event_json(e).to_string()
    } else {
        describe(e)
    };
    writeln!(std::io::stdout(), "{line}").is_ok()
}

pub(super) fn print_game(json: bool, g: &pb::Game) {
    if json {
        outln!("{}", serde_json::json!({ "game": game_json(g) }));
    } else {
        outln!("{}", sheet::game_text(g));
    }
}

/// Connects to `server`; over TLS for `https://`, trusting `tls.ca_cert` (or the system's
/// roots) and presenting the client certificate if one is given.
///
/// # Errors
/// A bad URL, TLS options with an `http://` server, unreadable TLS files, or the server
/// not answering (a failed handshake included).
pub async fn channel(server: &str, tls: &ClientTls<'_>) -> Result<Channel, String> {
    endpoint(server, tls)?
        .connect()
        .await
        .map_err(|e| format!("cannot reach {server}: {}", error_chain(&e)))
}

/// The endpoint of `server` with the TLS files, not connected yet (`board-sim` connects
/// its further servers lazily: a node that is down is tried again later).
///
/// # Errors
/// A bad URL, TLS options with an `http://` server, or unreadable TLS files.
pub fn endpoint(server: &str, tls: &ClientTls<'_>) -> Result<Endpoint, String> {
    let mut endpoint =
        Endpoint::from_shared(server.to_string()).map_err(|e| format!("server {server}: {e}"))?;
    let https = endpoint.uri().scheme_str() == Some("https");
    if https {
        let config = client_config(tls).map_err(|e| e.0)?;
        endpoint = endpoint
            .tls_config(config)
            .map_err(|e| format!("server {server}: TLS: {}", error_chain(&e)))?;
    } else if tls.ca_cert.is_some() || tls.cert.is_some() || tls.key.is_some() {
        return Err(format!(
            "server {server}: --ca-cert/--client-cert/--client-key need an https:// server"
        ));
    }
    Ok(endpoint)
}

/// Connects to `server` with the options' TLS files.
pub(super) async fn connect(c: &Connection, server: &str) -> Result<Channel, String> {
    let tls = ClientTls {
        ca_cert: c.ca_cert.as_deref(),
        cert: c.client_cert.as_deref(),
        key: c.client_key.as_deref(),
    };
    channel(server, &tls).await
}

/// A runtime of its own for a command (`threads`: a worker per core, else the current
/// thread only); failing, `error: runtime: …` is said on stderr and the exit code is 1.
///
/// # Errors
/// The exit code to return.
pub fn runtime(threads: bool) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = if threads {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().map_err(|e| {
        eprintln!("error: runtime: {e}");
        ExitCode::FAILURE
    })
}

/// Runs a client future on a runtime of its own (current thread): exit 0, or 1 with
/// `error: …` on stderr.
pub fn block_on<F: std::future::Future<Output = Result<(), String>>>(f: F) -> ExitCode {
    run_on(false, f)
}

/// Runs `f` on a runtime of its own ([`runtime`]): exit 0, or 1 with `error: …` on stderr.
pub fn run_on<F: std::future::Future<Output = Result<(), String>>>(
    threads: bool,
    f: F,
) -> ExitCode {
    let runtime = match runtime(threads) {
        Ok(r) => r,
        Err(code) => return code,
    };
    match runtime.block_on(f) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(super) fn run_client(args: &ClientArgs) -> ExitCode {
    block_on(follow_owner(&args.connection, |server| {
        client(args, server)
    }))
}

async fn client(args: &ClientArgs, server: String) -> Result<(), String> {
    let ch = connect(&args.connection, &server).await?;
    let mut games = GameServiceClient::new(ch.clone());
    let t = &args.connection.token;
    let json = args.connection.json;
    let st = |s: tonic::Status| status_text(&s);
    let print = |g: Option<pb::Game>, events: Vec<pb::GameEvent>| {
        print_reply(json, g.as_ref(), &events);
    };
    // One request: sent with the token, its refusal as text, the answer back.
    macro_rules! call {
        ($method:ident ($request:expr)) => {
            games
                .$method(request(t, $request))
                .await
                .map_err(st)?
                .into_inner()
        };
    }
    match &args.action {
        GameAction::Create(c) => {
            let g = call!(create_game(c.request()?));
            print_game(json, &g);
        }
        GameAction::Start { id, expected_seq } => {
            let r = call!(start_game(pb::StartGameRequest {
                game_id: id.clone(),
                expected_seq: *expected_seq,
            }));
            print(r.game, r.events);
        }
        GameAction::Show { id } => {
            let g = call!(get_game(pb::GetGameRequest {
                game_id: id.clone(),
            }));
            print_game(json, &g);
        }
        GameAction::List {
            event,
            round,
            unfinished,
        } => {
            let r = call!(list_games(pb::ListGamesRequest {
                event: event.clone(),
                round: round.clone(),
                unfinished_only: *unfinished,
                include_moves: false,
            }));
            if json {
                for g in &r.games {
                    print_game(true, g);
                }
            } else {
                let rows: Vec<sheet::Row> = r.games.iter().map(sheet::row).collect();
                outln!(
                    "{}",
                    sheet::table(&rows, event.is_empty(), round.is_empty())
                );
            }
        }
        GameAction::Move {
            id,
            mv,
            side: s,
            offer_draw,
            expected_seq,
        } => {
            let r = call!(submit_move(pb::SubmitMoveRequest {
                game_id: id.clone(),
                r#move: mv.clone(),
                expected_seq: *expected_seq,
                side: side(*s),
                offer_draw: *offer_draw,
            }));
            print(r.game, r.events);
        }
        GameAction::Offer { id, side: s } => {
            let r = call!(offer_draw(pb::OfferDrawRequest {
                game_id: id.clone(),
                side: side(*s),
                expected_seq: 0,
            }));
            print(r.game, r.events);
        }
        GameAction::Respond {
            id,
            answer,
            side: s,
        } => {
            let response = match answer.as_str() {
                "accept" => pb::DrawResponse::Accept,
                "decline" => pb::DrawResponse::Decline,
                "postpone" => pb::DrawResponse::Postpone,
                other => return Err(format!("answer '{other}': accept, decline or postpone")),
            };
            let r = call!(respond_to_draw_offer(pb::RespondToDrawOfferRequest {
                game_id: id.clone(),
                side: side(*s),
                response: response as i32,
                expected_seq: 0,
            }));
            print(r.game, r.events);
        }
        GameAction::Claim {
            id,
            written,
            move_count,
            side: s,
        } => {
            let kind = if *move_count {
                pb::DrawClaimKind::MoveCount
            } else {
                pb::DrawClaimKind::Repetition
            };
            let r = call!(claim_draw(pb::ClaimDrawRequest {
                game_id: id.clone(),
                side: side(*s),
                written_move: written.clone().unwrap_or_default(),
                kind: kind as i32,
                expected_seq: 0,
            }));
            print(r.game, r.events);
        }
        GameAction::Resign { id, side: s } => {
            let r = call!(resign(pb::ResignRequest {
                game_id: id.clone(),
                side: side(*s),
                expected_seq: 0,
            }));
            print(r.game, r.events);
        }
        GameAction::Watch { id, from } => {
            let mut b = BroadcastServiceClient::new(ch);
            let mut stream = b
                .watch_game(request(
                    t,
                    pb::WatchGameRequest {
                        game_id: id.clone(),
                        from_seq: *from,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            while let Some(e) = stream.next().await {
                let e = e.map_err(st)?;
                // A closed pipe (`| head`) ends the watch quietly.
                if !print_event(json, &e) {
                    break;
                }
            }
        }
        GameAction::Export { id, event, round } => {
            let mut b = BroadcastServiceClient::new(ch);
            let r = b
                .export_pdn(request(
                    t,
                    pb::ExportPdnRequest {
                        game_id: id.clone().unwrap_or_default(),
                        event: event.clone().unwrap_or_default(),
                        round: round.clone().unwrap_or_default(),
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            let _ = write!(std::io::stdout(), "{}", r.pdn);
        }
    }
    Ok(())
}
