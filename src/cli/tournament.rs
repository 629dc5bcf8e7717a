//! `draughts-arbiter tournament …`: the arbiter's command line for `TournamentService`,
//! one subcommand per RPC. Lines in words by default (a pairing a line: board, players
//! with pairing numbers and ratings, the drawn opening, the game ids); `--json` prints the
//! answer's fields as JSON.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use super::client::{Connection, block_on, connect, request, status_text};
use super::entrant::{player_json, player_text};
use crate::api::pb;
use crate::api::pb::broadcast_service_client::BroadcastServiceClient;
use crate::api::pb::tournament_service_client::TournamentServiceClient;

/// `draughts-arbiter tournament …`.
#[derive(Debug, Args)]
pub struct TournamentArgs {
    /// Where the server is and how to talk to it (writes need an arbiter's token for the
    /// event).
    #[command(flatten)]
    pub connection: Connection,
    /// What to do.
    #[command(subcommand)]
    pub action: TournamentAction,
}

/// How rounds are paired (RULES.md T 1).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SystemArg {
    /// Everyone meets everyone once (Berger tables).
    RoundRobin,
    /// Everyone meets everyone twice, colours reversed.
    DoubleRoundRobin,
    /// Paired by a Swiss engine (pairings given with `pair --board` or `import`).
    Swiss,
    /// Paired by the arbiter.
    Manual,
}

/// Points for a win, a draw and a loss (RULES.md T 7).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ScoringArg {
    /// 2 / 1 / 0.
    #[value(name = "2-1-0")]
    TwoOneZero,
    /// 1 / ½ / 0.
    #[value(name = "1-0.5-0")]
    OneHalfZero,
}

/// The tournament commands.
#[derive(Debug, Subcommand)]
pub enum TournamentAction {
    /// Create a tournament (CreateTournament).
    Create {
        /// Its name: unique, its games' event.
        name: String,
        /// The variant (russian, international, english, …).
        #[arg(long, default_value = "russian")]
        variant: String,
        /// How rounds are paired.
        #[arg(long, value_enum)]
        system: SystemArg,
        /// Rounds of a Swiss or manual event.
        #[arg(long, default_value_t = 0)]
        rounds: u32,
        /// The games' time control (`game create`'s syntax, e.g. 90m+30s).
        #[arg(long, default_value = "")]
        time_control: String,
        /// The ballot table (fmjd-64, fmjd-64-brazilian, idf-64, acf-3move); none: the start
        /// position.
        #[arg(long, default_value = "")]
        ballot: String,
        /// One ballot draw a round for every board instead of one a pairing.
        #[arg(long)]
        ballot_per_round: bool,
        /// Games a pairing plays: 1, or an even number (micro-matches, T 4).
        #[arg(long, default_value_t = 1)]
        games_per_pairing: u32,
        /// The default time in minutes (T 5); 0: none. Unset: 30.
        #[arg(long)]
        default_time_minutes: Option<u64>,
        /// Points for a win, a draw and a loss.
        #[arg(long, value_enum, default_value = "2-1-0")]
        scoring: ScoringArg,
        /// Where it is played: its games' PDN Site (e.g. "Moscow, Russia"); empty: unknown.
        #[arg(long, default_value = "")]
        site: String,
        /// The venue's IANA time zone (e.g. Europe/Moscow): its games' PDN Date is the day
        /// there; empty: UTC.
        #[arg(long, default_value = "")]
        time_zone: String,
    },
    /// Show a tournament: settings, players, rounds and results (GetTournament).
    Show {
        /// Its name or key.
        name: String,
    },
    /// List the tournaments (ListTournaments).
    List,
    /// Enter players (AddPlayers): each `--player "Name;rating;title;federation;fmjd id"`,
    /// everything after the name optional.
    Add {
        /// The tournament's name or key.
        name: String,
        /// A player, repeated.
        #[arg(long = "player", required = true)]
        players: Vec<String>,
    },
    /// A player withdraws (WithdrawPlayer, T 6).
    Withdraw {
        /// The tournament's name or key.
        name: String,
        /// The player's id (the order entered, from 1).
        player: u32,
        /// The arbiter's reason.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Give the pairing numbers (NumberPlayers, T 2): `--hall 3,1,…` as drawn in the
    /// hall (player ids by number), else by lot (round-robin) or rating (Swiss).
    Number {
        /// The tournament's name or key.
        name: String,
        /// Player ids by pairing number, comma-separated.
        #[arg(long, value_delimiter = ',')]
        hall: Vec<u32>,
    },
    /// Pair a round (PairRound): a round-robin from the Berger tables; a Swiss or manual
    /// round from `--board WHITE-BLACK` (player ids) and `--bye ID:KIND`.
    Pair {
        /// The tournament's name or key.
        name: String,
        /// The round, from 1.
        round: u32,
        /// A board, `white-black` player ids, in board order; repeated.
        #[arg(long = "board")]
        boards: Vec<String>,
        /// A bye, `id:kind` (kind: free-round, pairing-allocated, half, zero); repeated.
        #[arg(long = "bye")]
        byes: Vec<String>,
        /// Where the given pairings come from.
        #[arg(long, default_value = "")]
        source: String,
    },
    /// Start a paired round (StartRound).
    Start {
        /// The tournament's name or key.
        name: String,
        /// The round.
        round: u32,
    },
    /// Mark a player absent for a round (MarkAbsent, T 5).
    Absent {
        /// The tournament's name or key.
        name: String,
        /// The round.
        round: u32,
        /// The player's id.
        player: u32,
    },
    /// Record a forfeit (RecordForfeit).
    Forfeit {
        /// The tournament's name or key.
        name: String,
        /// The round.
        round: u32,
        /// The player who forfeits.
        player: u32,
    },
    /// Annul a game's default (T 5) and have the board play it again (AnnulDefault).
    AnnulDefault {
        /// The tournament's name or key.
        name: String,
        /// The game lost by default.
        game_id: String,
        /// Why (required): the documented delay.
        #[arg(long)]
        reason: String,
    },
    /// Pair a round from another program's TRF-16 file (ImportPairings).
    Import {
        /// The tournament's name or key.
        name: String,
        /// The round.
        round: u32,
        /// The TRF file.
        file: std::path::PathBuf,
        /// Where it comes from ("Swiss-Manager").
        #[arg(long, default_value = "")]
        source: String,
    },
    /// Print the tournament as TRF-16 (ExportTrf).
    Trf {
        /// The tournament's name or key.
        name: String,
    },
    /// Print the standings (GetStandings; T 7, T 8).
    Standings {
        /// The tournament's name or key.
        name: String,
        /// After this round (default: every encounter over so far).
        #[arg(long, default_value_t = 0)]
        round: u32,
    },
    /// Print the crosstable (GetCrosstable): round by round, or `--matrix`.
    Crosstable {
        /// The tournament's name or key.
        name: String,
        /// A round-robin's matrix: a column a pairing number.
        #[arg(long)]
        matrix: bool,
    },
    /// Follow the event (WatchEvent): every game's events as they are recorded, each line
    /// after its game's id, and the standings as they change. Without `--round` it stays
    /// open between rounds and ends when the tournament is over.
    Watch {
        /// The tournament's name (exactly: its games' event).
        name: String,
        /// Only this round.
        #[arg(long)]
        round: Option<u32>,
    },
    /// Write the arbiter's report of a round (GetRoundReport; the event's arbiter token):
    /// per board each game's result with its rule, every incident with its time, rule
    /// and actor, and the score sheet with each move's time. A round still being played
    /// is reported as it stands.
    Report {
        /// The tournament's name or key.
        name: String,
        /// The round, from 1.
        round: u32,
        /// HTML (a page to print: A4, a page per board), CSV (a row per incident and
        /// move) or JSON.
        #[arg(long, value_enum, default_value = "html")]
        format: ReportFormatArg,
        /// Write it to this file instead of standard output.
        #[arg(long)]
        output: Option<std::path::PathBuf>,
    },
}

/// The round report's format.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReportFormatArg {
    /// A page to print.
    Html,
    /// RFC 4180 CSV.
    Csv,
    /// JSON.
    Json,
}

pub(super) fn run_tournament(args: &TournamentArgs) -> ExitCode {
    block_on(tournament(args))
}

fn player_arg(s: &str) -> Result<pb::Player, String> {
    let mut parts = s.split(';').map(str::trim);
    let name = parts.next().unwrap_or_default().to_string();
    if name.is_empty() {
        return Err(format!(
            "--player {s:?}: a name first (\"Name;rating;title;federation;fmjd id\")"
        ));
    }
    let rating = match parts.next() {
        None | Some("") => 0,
        Some(r) => r
            .parse()
            .map_err(|_| format!("--player {s:?}: the rating {r:?} is not a number"))?,
    };
    Ok(pb::Player {
        name,
        rating,
        title: parts.next().unwrap_or_default().to_string(),
        federation: parts.next().unwrap_or_default().to_string(),
        fmjd_id: parts.next().unwrap_or_default().to_string(),
        ..pb::Player::default()
    })
}

fn board_arg(s: &str) -> Result<pb::GivenBoard, String> {
    let (w, b) = s
        .split_once('-')
        .ok_or_else(|| format!("--board {s:?}: expected white-black player ids, e.g. 3-7"))?;
    let id = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("--board {s:?}: {v:?} is not a player id"))
    };
    Ok(pb::GivenBoard {
        white_player_id: id(w)?,
        black_player_id: id(b)?,
    })
}

fn bye_arg(s: &str) -> Result<pb::GivenBye, String> {
    let (id, kind) = s
        .split_once(':')
        .ok_or_else(|| format!("--bye {s:?}: expected id:kind, e.g. 9:pairing-allocated"))?;
    let player_id = id
        .trim()
        .parse()
        .map_err(|_| format!("--bye {s:?}: {id:?} is not a player id"))?;
    let kind = match kind.trim() {
        "free-round" => pb::ByeKind::FreeRound,
        "pairing-allocated" => pb::ByeKind::PairingAllocated,
        "half" => pb::ByeKind::Half,
        "zero" => pb::ByeKind::Zero,
        k => {
            return Err(format!(
                "--bye {s:?}: kind {k:?}: free-round, pairing-allocated, half or zero"
            ));
        }
    };
    Ok(pb::GivenBye {
        player_id,
        kind: kind as i32,
    })
}

async fn tournament(args: &TournamentArgs) -> Result<(), String> {
    let c = &args.connection;
    let ch = connect(c, &c.server).await?;
    let mut t = TournamentServiceClient::new(ch.clone());
    let token = &c.token;
    let json = c.json;
    let st = |s: tonic::Status| status_text(&s);
    macro_rules! call {
        ($method:ident($request:expr)) => {
            t.$method(request(token, $request))
                .await
                .map_err(st)?
                .into_inner()
        };
    }
    match &args.action {
        TournamentAction::Create {
            name,
            variant,
            system,
            rounds,
            time_control,
            ballot,
            ballot_per_round,
            games_per_pairing,
            default_time_minutes,
            scoring,
            site,
            time_zone,
        } => {
            let v =
                pb::Variant::from_str_name(&format!("VARIANT_{}", variant.to_ascii_uppercase()))
                    .filter(|v| *v != pb::Variant::Unspecified)
                    .ok_or(format!("--variant: unknown variant '{variant}'"))?;
            let system = match system {
                SystemArg::RoundRobin => pb::TournamentSystem::RoundRobin,
                SystemArg::DoubleRoundRobin => pb::TournamentSystem::DoubleRoundRobin,
                SystemArg::Swiss => pb::TournamentSystem::Swiss,
                SystemArg::Manual => pb::TournamentSystem::Manual,
            };
            let created = call!(create_tournament(pb::CreateTournamentRequest {
                name: name.clone(),
                variant: v as i32,
                system: system as i32,
                rounds: *rounds,
                time_control: time_control.clone(),
                ballot_table: ballot.clone(),
                ballot_per_round: *ballot_per_round,
                games_per_pairing: *games_per_pairing,
                default_time_ms: default_time_minutes.map(|m| m.saturating_mul(60_000)),
                scoring: match scoring {
                    ScoringArg::TwoOneZero => pb::TournamentScoring::TwoOneZero,
                    ScoringArg::OneHalfZero => pb::TournamentScoring::OneHalfZero,
                } as i32,
                site: site.clone(),
                time_zone: time_zone.clone(),
                ..Default::default()
            }));
            print_tournament(json, created.tournament.as_ref(), false);
        }
        TournamentAction::Show { name } => {
            let got = call!(get_tournament(pb::GetTournamentRequest {
                tournament: name.clone(),
            }));
            print_tournament(json, got.tournament.as_ref(), true);
        }
        TournamentAction::List => {
            let all = call!(list_tournaments(pb::ListTournamentsRequest {}));
            for one in &all.tournaments {
                print_tournament(json, Some(one), false);
            }
        }
        TournamentAction::Add { name, players } => {
            let players = players
                .iter()
                .map(|p| player_arg(p))
                .collect::<Result<Vec<_>, _>>()?;
            let added = call!(add_players(pb::AddPlayersRequest {
                tournament: name.clone(),
                players,
            }));
            print_players(json, &added.players);
        }
        TournamentAction::Withdraw {
            name,
            player,
            reason,
        } => {
            let done = call!(withdraw_player(pb::WithdrawPlayerRequest {
                tournament: name.clone(),
                player_id: *player,
                reason: reason.clone(),
            }));
            print_players(json, done.player.as_slice());
        }
        TournamentAction::Number { name, hall } => {
            let numbered = call!(number_players(pb::NumberPlayersRequest {
                tournament: name.clone(),
                hall_order: hall.clone(),
            }));
            print_players(json, &numbered.players);
        }
        TournamentAction::Pair {
            name,
            round,
            boards,
            byes,
            source,
        } => {
            let paired = call!(pair_round(pb::PairRoundRequest {
                tournament: name.clone(),
                round: *round,
                boards: boards
                    .iter()
                    .map(|b| board_arg(b))
                    .collect::<Result<_, _>>()?,
                byes: byes.iter().map(|b| bye_arg(b)).collect::<Result<_, _>>()?,
                source_note: source.clone(),
            }));
            print_paired(json, &paired);
        }
        TournamentAction::Start { name, round } => {
            let started = call!(start_round(pb::StartRoundRequest {
                tournament: name.clone(),
                round: *round,
            }));
            print_round(json, started.round.as_ref());
        }
        TournamentAction::Absent {
            name,
            round,
            player,
        } => {
            let marked = call!(mark_absent(pb::MarkAbsentRequest {
                tournament: name.clone(),
                round: *round,
                player_id: *player,
            }));
            print_round(json, marked.round.as_ref());
        }
        TournamentAction::Forfeit {
            name,
            round,
            player,
        } => {
            let recorded = call!(record_forfeit(pb::RecordForfeitRequest {
                tournament: name.clone(),
                round: *round,
                player_id: *player,
            }));
            print_round(json, recorded.round.as_ref());
        }
        TournamentAction::AnnulDefault {
            name,
            game_id,
            reason,
        } => {
            let annulled = call!(annul_default(pb::AnnulDefaultRequest {
                tournament: name.clone(),
                game_id: game_id.clone(),
                reason: reason.clone(),
            }));
            if json {
                let round = annulled.round.as_ref().map(round_json);
                println!(
                    "{}",
                    json!({"replay_game_id": annulled.replay_game_id, "round": round})
                );
            } else {
                println!(
                    "{game_id}: default annulled; replayed as {} (started)",
                    annulled.replay_game_id
                );
                print_round(false, annulled.round.as_ref());
            }
        }
        TournamentAction::Import {
            name,
            round,
            file,
            source,
        } => {
            let trf =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let imported = call!(import_pairings(pb::ImportPairingsRequest {
                tournament: name.clone(),
                round: *round,
                trf,
                source_note: source.clone(),
            }));
            if let Some(paired) = &imported.paired {
                print_paired(json, paired);
            }
        }
        TournamentAction::Trf { name } => {
            let trf = call!(export_trf(pb::ExportTrfRequest {
                tournament: name.clone(),
            }))
            .trf;
            if json {
                println!("{}", json!({ "trf": trf }));
            } else {
                print!("{trf}");
            }
        }
        TournamentAction::Standings { name, round } => {
            let standings = call!(get_standings(pb::GetStandingsRequest {
                tournament: name.clone(),
                round: *round,
            }));
            super::standings::print_standings(json, &standings);
        }
        TournamentAction::Crosstable { name, matrix } => {
            let table = call!(get_crosstable(pb::GetCrosstableRequest {
                tournament: name.clone(),
            }));
            super::standings::print_crosstable(json, *matrix, &table);
        }
        TournamentAction::Watch { name, round } => {
            let mut stream = BroadcastServiceClient::new(ch)
                .watch_event(request(
                    token,
                    pb::WatchEventRequest {
                        event: name.clone(),
                        round: round.map(|r| r.to_string()).unwrap_or_default(),
                        ..Default::default()
                    },
                ))
                .await
                .map_err(st)?
                .into_inner();
            while let Some(e) = tokio_stream::StreamExt::next(&mut stream).await {
                let e = e.map_err(st)?;
                let line = if json {
                    super::events::event_json(&e).to_string()
                } else if e.game_id.is_empty() {
                    super::events::describe(&e)
                } else {
                    format!("{} {}", e.game_id, super::events::describe(&e))
                };
                // A closed pipe (`| head`) ends the watch quietly.
                if writeln!(std::io::stdout(), "{line}").is_err() {
                    break;
                }
            }
        }
        TournamentAction::Report {
            name,
            round,
            format,
            output,
        } => {
            let format = match format {
                ReportFormatArg::Html => pb::ReportFormat::Html,
                ReportFormatArg::Csv => pb::ReportFormat::Csv,
                ReportFormatArg::Json => pb::ReportFormat::Json,
            };
            let report = call!(get_round_report(pb::GetRoundReportRequest {
                tournament: name.clone(),
                round: *round,
                format: format as i32,
            }));
            match output {
                Some(path) => {
                    std::fs::write(path, report.text.as_bytes())
                        .map_err(|e| format!("--output {}: {e}", path.display()))?;
                    eprintln!(
                        "round {round} report of {name} written to {} ({}, {} bytes)",
                        path.display(),
                        report.content_type,
                        report.text.len()
                    );
                }
                None => print!("{}", report.text),
            }
        }
    }
    Ok(())
}

/// `text()` when `show`, else nothing: an optional part of a line.
fn shown(show: bool, text: impl FnOnce() -> String) -> String {
    if show { text() } else { String::new() }
}

fn system_name(v: i32) -> &'static str {
    match pb::TournamentSystem::try_from(v) {
        Ok(pb::TournamentSystem::RoundRobin) => "round-robin",
        Ok(pb::TournamentSystem::DoubleRoundRobin) => "double round-robin",
        Ok(pb::TournamentSystem::Swiss) => "Swiss",
        Ok(pb::TournamentSystem::Manual) => "manual",
        _ => "?",
    }
}

fn print_players(json: bool, players: &[pb::Player]) {
    for p in players {
        if json {
            println!("{}", player_json(p));
        } else {
            let number = shown(p.pairing_number > 0, || {
                format!(", number {}", p.pairing_number)
            });
            let withdrawn = shown(p.withdrawn_from_round > 0, || {
                format!(", withdrawn from round {}", p.withdrawn_from_round)
            });
            let title = shown(!p.title.is_empty(), || format!(" {}", p.title));
            let rating = shown(p.rating > 0, || format!(" {}", p.rating));
            println!(
                "player {}: {}{title}{rating}{number}{withdrawn}",
                p.player_id, p.name
            );
        }
    }
}

/// `1-0`, `0-1 (default)`, `0-0 (forfeit)`, `*` while none.
fn result_text(r: &pb::TournamentGameResult) -> String {
    let score = match pb::GameResult::try_from(r.result) {
        Ok(pb::GameResult::WhiteWins) => "1-0",
        Ok(pb::GameResult::BlackWins) => "0-1",
        Ok(pb::GameResult::Draw) => "½-½",
        Ok(pb::GameResult::BothLose) => "0-0",
        _ => return "*".to_string(),
    };
    match pb::TournamentResultKind::try_from(r.kind) {
        Ok(pb::TournamentResultKind::Default) => format!("{score} (default)"),
        Ok(pb::TournamentResultKind::Forfeit) => format!("{score} (forfeit)"),
        _ => score.to_string(),
    }
}

fn pairing_json(p: &pb::Pairing) -> Value {
    json!({
        "board": p.board,
        "white": p.white.as_ref().map(player_json),
        "black": p.black.as_ref().map(player_json),
        "game_ids": p.game_ids,
        "opening": p.opening.as_ref().map(|o| json!({
            "table": o.table, "number": o.number, "code": o.code, "moves": o.moves, "fen": o.fen,
        })),
        "results": p.results.iter().map(|r| json!({
            "game_id": r.game_id,
            "result": pb::GameResult::try_from(r.result).map_or("?", |g| g.as_str_name()),
            "kind": pb::TournamentResultKind::try_from(r.kind).map_or("?", |k| k.as_str_name()),
        })).collect::<Vec<_>>(),
    })
}

/// `board 1: 1. GMI Abaturov, Ivan (2410) - 6. Fedorov, Ilya (2200), opening fmjd-64 #12
/// 2-I (c3-d4 d6-c5 b2-c3), games KEY-r1-b1-g1 1-0, KEY-r1-b1-g2 *`
fn pairing_text(p: &pb::Pairing) -> String {
    let opening = p.opening.as_ref().map_or_else(String::new, |o| {
        let moves = shown(!o.moves.is_empty(), || format!(" ({})", o.moves.join(" ")));
        format!(", opening {} #{} {}{moves}", o.table, o.number, o.code)
    });
    let games: Vec<String> = p
        .game_ids
        .iter()
        .zip(&p.results)
        .map(|(id, r)| format!("{id} {}", result_text(r)))
        .collect();
    format!(
        "board {}: {} - {}{opening}, games {}",
        p.board,
        player_text(p.white.as_ref()),
        player_text(p.black.as_ref()),
        games.join(", ")
    )
}

fn bye_text(b: &pb::TournamentBye) -> String {
    let kind = pb::ByeKind::try_from(b.kind).map_or("?", |k| match k {
        pb::ByeKind::FreeRound => "free round",
        pb::ByeKind::PairingAllocated => "pairing-allocated bye",
        pb::ByeKind::Half => "half-point bye",
        pb::ByeKind::Zero => "zero-point bye",
        pb::ByeKind::Unspecified => "?",
    });
    format!("bye: {} ({kind})", player_text(b.player.as_ref()))
}

fn print_paired(json: bool, r: &pb::PairRoundResponse) {
    if json {
        println!(
            "{}",
            json!({
                "round": r.round,
                "pairings": r.pairings.iter().map(pairing_json).collect::<Vec<_>>(),
                "byes": r.byes.iter().map(|b| json!({
                    "player": b.player.as_ref().map(player_json),
                    "kind": pb::ByeKind::try_from(b.kind).map_or("?", |k| k.as_str_name()),
                })).collect::<Vec<_>>(),
            })
        );
        return;
    }
    println!("round {} paired", r.round);
    for p in &r.pairings {
        println!("{}", pairing_text(p));
    }
    for b in &r.byes {
        println!("{}", bye_text(b));
    }
}

fn round_lines(r: &pb::TournamentRound) -> Vec<String> {
    let state = if r.finished {
        "finished"
    } else if r.started_at.is_some() {
        "started"
    } else {
        "paired"
    };
    let mut lines = vec![format!("round {}: {state} ({})", r.round, r.source)];
    lines.extend(r.pairings.iter().map(pairing_text));
    lines.extend(r.byes.iter().map(bye_text));
    if !r.absent_player_ids.is_empty() {
        let ids: Vec<String> = r.absent_player_ids.iter().map(u32::to_string).collect();
        lines.push(format!("absent: players {}", ids.join(", ")));
    }
    lines
}

fn round_json(r: &pb::TournamentRound) -> serde_json::Value {
    json!({
        "round": r.round,
        "started": r.started_at.is_some(),
        "finished": r.finished,
        "source": r.source,
        "absent_player_ids": r.absent_player_ids,
        "pairings": r.pairings.iter().map(pairing_json).collect::<Vec<_>>(),
    })
}

fn print_round(json: bool, r: Option<&pb::TournamentRound>) {
    let Some(r) = r else { return };
    if json {
        println!("{}", round_json(r));
        return;
    }
    for line in round_lines(r) {
        println!("{line}");
    }
}

fn print_tournament(json: bool, t: Option<&pb::Tournament>, whole: bool) {
    let Some(t) = t else { return };
    if json {
        println!(
            "{}",
            json!({
                "key": t.key,
                "name": t.name,
                "variant": pb::Variant::try_from(t.variant).map_or("?", |v| v.as_str_name()),
                "system": system_name(t.system),
                "rounds": t.rounds,
                "time_control": t.time_control,
                "ballot_table": t.ballot_table,
                "games_per_pairing": t.games_per_pairing,
                "default_time_ms": t.default_time_ms,
                "site": t.site,
                "time_zone": t.time_zone,
                "seed_commitment": t.seed_commitment,
                "revealed_seeds": t.revealed_seeds,
                "finished": t.finished,
                "players": t.players.iter().map(player_json).collect::<Vec<_>>(),
                "rounds_paired": t.paired_rounds.len(),
            })
        );
        return;
    }
    let ballot = shown(!t.ballot_table.is_empty(), || {
        format!(", ballot {}", t.ballot_table)
    });
    let games = shown(t.games_per_pairing > 1, || {
        format!(", {}-game matches", t.games_per_pairing)
    });
    let tc = shown(!t.time_control.is_empty(), || {
        format!(", {}", t.time_control)
    });
    // A round-robin's rounds follow from its players: none entered, none to say.
    let rounds = shown(t.rounds > 0, || format!(", {} rounds", t.rounds));
    let default_time = if t.default_time_ms > 0 {
        format!(", default time {} min", t.default_time_ms / 60_000)
    } else {
        ", no default time".to_string()
    };
    let site = shown(!t.site.is_empty(), || format!(", at {}", t.site));
    let zone = shown(!t.time_zone.is_empty(), || {
        format!(", dates in {}", t.time_zone)
    });
    println!(
        "tournament {} ({}): {}{rounds}{ballot}{games}{tc}{default_time}{site}{zone}{}",
        t.name,
        t.key,
        system_name(t.system),
        if t.finished { ", finished" } else { "" }
    );
    if !t.seed_commitment.is_empty() {
        println!("next draw's seed: SHA-256 {}", t.seed_commitment);
    }
    if !whole {
        return;
    }
    print_players(false, &t.players);
    for r in &t.paired_rounds {
        for line in round_lines(r) {
            println!("{line}");
        }
    }
}
