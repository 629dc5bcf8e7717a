//! `draughts-arbiter game …`: a client for people at the table, so a game can be tried
//! without writing code.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tokio_stream::StreamExt;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

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

/// Connection options of the client subcommands.
#[derive(Debug, Args)]
pub struct ClientArgs {
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

fn side(s: Option<SideArg>) -> i32 {
    match s {
        Some(SideArg::White) => pb::Side::White as i32,
        Some(SideArg::Black) => pb::Side::Black as i32,
        None => 0,
    }
}

/// Client actions.
#[derive(Debug, Subcommand)]
pub enum GameAction {
    /// Create a game; prints its id.
    Create {
        /// Variant name (russian, international, …).
        #[arg(long, default_value = "russian")]
        variant: String,
        /// Time control (`10m+5s`, `40/7200:3600`, `-` for none).
        #[arg(long, default_value = "-")]
        time_control: String,
        /// White's name.
        #[arg(long, default_value = "")]
        white: String,
        /// Black's name.
        #[arg(long, default_value = "")]
        black: String,
        /// Event.
        #[arg(long, default_value = "")]
        event: String,
        /// Round.
        #[arg(long, default_value = "")]
        round: String,
        /// Board number.
        #[arg(long, default_value_t = 0)]
        board: u32,
        /// Start position (FEN).
        #[arg(long)]
        fen: Option<String>,
        /// Claims wait for an arbiter's ruling.
        #[arg(long)]
        claims_need_arbiter: bool,
    },
    /// Start the clocks.
    Start {
        /// Game id.
        id: String,
    },
    /// Show a game.
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
    /// Claim a draw by repetition (RU 1.9.2).
    Claim {
        /// Game id.
        id: String,
        /// The move written on the scoresheet, not played.
        #[arg(long)]
        written: Option<String>,
        /// The side.
        #[arg(long, value_enum)]
        side: Option<SideArg>,
    },
    /// Resign.
    Resign {
        /// Game id.
        id: String,
        /// The side.
        #[arg(long, value_enum)]
        side: Option<SideArg>,
    },
    /// Follow a game's events (Ctrl-C to stop).
    Watch {
        /// Game id.
        id: String,
        /// Start after this seq (0 = from the beginning).
        #[arg(long, default_value_t = 0)]
        from: u64,
    },
    /// Print a game as PDN.
    Pdn {
        /// Game id.
        id: String,
    },
}

fn request<T>(token: &Option<String>, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token
        && let Ok(v) = MetadataValue::try_from(format!("Bearer {t}"))
    {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

/// One line for an event.
pub fn describe(e: &pb::GameEvent) -> String {
    let kind = e.kind.as_ref().map_or("?".to_string(), |k| {
        let s = format!("{k:?}");
        s.chars().take(140).collect()
    });
    let rule = if e.rule.is_empty() {
        String::new()
    } else {
        format!(" [{}]", e.rule)
    };
    format!("#{} {kind}{rule}", e.seq)
}

fn show(g: &pb::Game) -> String {
    let status = pb::GameStatus::try_from(g.status).map_or("?", |s| s.as_str_name());
    let result = pb::GameResult::try_from(g.result).map_or("?", |s| s.as_str_name());
    let notations: Vec<&str> = g
        .moves
        .iter()
        .filter_map(|m| m.r#move.as_ref())
        .map(|m| m.notation.as_str())
        .collect();
    // Command replies leave the score sheet out (`game show` prints it).
    let moves = if notations.is_empty() && g.move_count > 0 {
        format!("{} played", g.move_count)
    } else {
        notations.join(" ")
    };
    format!(
        "game {} ({}) {}\n  fen {}\n  clocks white {} ms, black {} ms; to move {}\n  moves {}\n  result {} {} {}\n  last seq {}",
        g.id,
        pb::Variant::try_from(g.variant).map_or("?", |v| v.as_str_name()),
        status,
        g.fen,
        g.white_clock_ms,
        g.black_clock_ms,
        pb::Side::try_from(g.side_to_move).map_or("?", |s| s.as_str_name()),
        moves,
        result,
        pb::ResultReason::try_from(g.result_reason).map_or("?", |s| s.as_str_name()),
        g.rule,
        g.last_seq
    )
}

/// Connects to `server`; over TLS for `https://`, trusting `tls.ca_cert` (or the system's
/// roots) and presenting the client certificate if one is given.
///
/// # Errors
/// A bad URL, TLS options with an `http://` server, unreadable TLS files, or the server
/// not answering (a failed handshake included).
pub async fn channel(server: &str, tls: &ClientTls<'_>) -> Result<Channel, String> {
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
    endpoint
        .connect()
        .await
        .map_err(|e| format!("cannot reach {server}: {}", error_chain(&e)))
}

pub(super) fn run_client(args: &ClientArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(client(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn client(args: &ClientArgs) -> Result<(), String> {
    let tls = ClientTls {
        ca_cert: args.ca_cert.as_deref(),
        cert: args.client_cert.as_deref(),
        key: args.client_key.as_deref(),
    };
    let ch = channel(&args.server, &tls).await?;
    let mut games = GameServiceClient::new(ch.clone());
    let t = &args.token;
    let st = |s: tonic::Status| format!("{:?}: {}", s.code(), s.message());
    let print = |g: Option<pb::Game>, events: Vec<pb::GameEvent>| {
        for e in &events {
            outln!("{}", describe(e));
        }
        if let Some(g) = g {
            outln!("{}", show(&g));
        }
    };
    match &args.action {
        GameAction::Create {
            variant,
            time_control,
            white,
            black,
            event,
            round,
            board,
            fen,
            claims_need_arbiter,
        } => {
            let v =
                pb::Variant::from_str_name(&format!("VARIANT_{}", variant.to_ascii_uppercase()))
                    .ok_or(format!("unknown variant '{variant}'"))?;
            let req = pb::CreateGameRequest {
                variant: v as i32,
                time_control: time_control.clone(),
                white: Some(pb::Player {
                    name: white.clone(),
                    ..Default::default()
                }),
                black: Some(pb::Player {
                    name: black.clone(),
                    ..Default::default()
                }),
                event: event.clone(),
                round: round.clone(),
                board: *board,
                start_fen: fen.clone().unwrap_or_default(),
                settings: Some(pb::GameSettings {
                    claims_need_arbiter: *claims_need_arbiter,
                    ..Default::default()
                }),
                game_id: String::new(),
            };
            let g = games
                .create_game(request(t, req))
                .await
                .map_err(st)?
                .into_inner();
            outln!("{}", show(&g));
        }
        GameAction::Start { id } => {
            let r = games
                .start_game(request(
                    t,
                    pb::StartGameRequest {
                        game_id: id.clone(),
                        expected_seq: 0,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            print(r.game, r.events);
        }
        GameAction::Show { id } => {
            let g = games
                .get_game(request(
                    t,
                    pb::GetGameRequest {
                        game_id: id.clone(),
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            outln!("{}", show(&g));
        }
        GameAction::List { event, round } => {
            let r = games
                .list_games(request(
                    t,
                    pb::ListGamesRequest {
                        event: event.clone(),
                        round: round.clone(),
                        unfinished_only: false,
                        include_moves: false,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            for g in r.games {
                outln!(
                    "{}\t{}\t{}\t{}\t{}",
                    g.id,
                    g.event,
                    g.round,
                    g.board,
                    pb::GameStatus::try_from(g.status).map_or("?", |s| s.as_str_name())
                );
            }
        }
        GameAction::Move { id, mv, side: s } => {
            let r = games
                .submit_move(request(
                    t,
                    pb::SubmitMoveRequest {
                        game_id: id.clone(),
                        r#move: mv.clone(),
                        expected_seq: 0,
                        side: side(*s),
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            print(r.game, r.events);
        }
        GameAction::Offer { id, side: s } => {
            let r = games
                .offer_draw(request(
                    t,
                    pb::OfferDrawRequest {
                        game_id: id.clone(),
                        side: side(*s),
                        expected_seq: 0,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
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
            let r = games
                .respond_to_draw_offer(request(
                    t,
                    pb::RespondToDrawOfferRequest {
                        game_id: id.clone(),
                        side: side(*s),
                        response: response as i32,
                        expected_seq: 0,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            print(r.game, r.events);
        }
        GameAction::Claim {
            id,
            written,
            side: s,
        } => {
            let r = games
                .claim_draw(request(
                    t,
                    pb::ClaimDrawRequest {
                        game_id: id.clone(),
                        side: side(*s),
                        written_move: written.clone().unwrap_or_default(),
                        kind: pb::DrawClaimKind::Repetition as i32,
                        expected_seq: 0,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            print(r.game, r.events);
        }
        GameAction::Resign { id, side: s } => {
            let r = games
                .resign(request(
                    t,
                    pb::ResignRequest {
                        game_id: id.clone(),
                        side: side(*s),
                        expected_seq: 0,
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
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
            let mut out = std::io::stdout();
            while let Some(e) = stream.next().await {
                // A closed pipe (`| head`) ends the watch quietly.
                if writeln!(out, "{}", describe(&e.map_err(st)?)).is_err() {
                    break;
                }
            }
        }
        GameAction::Pdn { id } => {
            let mut b = BroadcastServiceClient::new(ch);
            let r = b
                .export_pdn(request(
                    t,
                    pb::ExportPdnRequest {
                        game_id: id.clone(),
                        event: String::new(),
                        round: String::new(),
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
