//! `TournamentService` over gRPC (issue 40's contract): a 6-player round-robin ballot
//! event from CreateTournament to its first round's games, as an arbiter's tool calls it;
//! results coming back from the games; the refusals of the contract, each changing
//! nothing; writes only with an arbiter's token for the event.

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::tournament_service_client::TournamentServiceClient;
use tonic::transport::Channel;
use tonic::{Code, Request};

use crate::common::server::TestServer;

const EVENT: &str = "Ballot Cup 2026";

const CONFIG: &str = "[[tokens]]\ntoken = \"chief\"\nrole = \"arbiter\"\nevent = \"Ballot Cup 2026\"\n\
     [[tokens]]\ntoken = \"other\"\nrole = \"arbiter\"\nevent = \"Other Open\"\n\
     [[tokens]]\ntoken = \"fan\"\nrole = \"viewer\"\n";

fn req<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

fn client(ch: &Channel) -> TournamentServiceClient<Channel> {
    TournamentServiceClient::new(ch.clone())
}

fn create_request(name: &str) -> pb::CreateTournamentRequest {
    pb::CreateTournamentRequest {
        name: name.into(),
        variant: pb::Variant::Russian as i32,
        system: pb::TournamentSystem::RoundRobin as i32,
        time_control: "90m+30s".into(),
        ballot_table: "fmjd-64".into(),
        games_per_pairing: 2,
        ..Default::default()
    }
}

fn player(name: &str, rating: u32, title: &str) -> pb::Player {
    pb::Player {
        name: name.into(),
        rating,
        title: title.into(),
        federation: "RUS".into(),
        ..Default::default()
    }
}

async fn trf_of(ch: &Channel) -> String {
    client(ch)
        .export_trf(req(
            "fan",
            pb::ExportTrfRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("trf")
        .into_inner()
        .trf
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_robin_ballot_event_over_grpc() {
    let server = TestServer::start(CONFIG).await;
    let ch = server.channel.clone();
    let mut t = client(&ch);

    // Writes need the event's arbiter.
    let denied = t
        .create_tournament(req("other", create_request(EVENT)))
        .await
        .expect_err("another event's arbiter");
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    let bad_table = t
        .create_tournament(req(
            "chief",
            pb::CreateTournamentRequest {
                ballot_table: "fmjd-100".into(),
                ..create_request(EVENT)
            },
        ))
        .await
        .expect_err("unknown table");
    assert_eq!(bad_table.code(), Code::InvalidArgument);
    assert!(
        bad_table.message().contains("ballot_table") && bad_table.message().contains("fmjd-64"),
        "the known tables listed: {}",
        bad_table.message()
    );
    let odd = t
        .create_tournament(req(
            "chief",
            pb::CreateTournamentRequest {
                games_per_pairing: 3,
                ..create_request(EVENT)
            },
        ))
        .await
        .expect_err("odd micro-match");
    assert_eq!(odd.code(), Code::InvalidArgument, "{odd:?}");
    assert!(
        odd.message().contains("games_per_pairing"),
        "{}",
        odd.message()
    );

    let created = t
        .create_tournament(req("chief", create_request(EVENT)))
        .await
        .expect("created")
        .into_inner()
        .tournament
        .expect("tournament");
    assert_eq!(created.key, "ballot-cup-2026");
    assert_eq!(created.default_time_ms, 30 * 60 * 1000, "T 5's default");
    assert_eq!(
        created.seed_commitment.len(),
        64,
        "T 2: a sealed seed's hash"
    );
    let again = t
        .create_tournament(req("chief", create_request(EVENT)))
        .await
        .expect_err("name taken");
    assert_eq!(again.code(), Code::AlreadyExists);

    // Fewer than 2 players cannot be paired; an unpaired round cannot start.
    let unpaired = t
        .start_round(req(
            "chief",
            pb::StartRoundRequest {
                tournament: EVENT.into(),
                round: 1,
            },
        ))
        .await
        .expect_err("not paired");
    assert_eq!(unpaired.code(), Code::FailedPrecondition, "{unpaired:?}");

    let viewer = t
        .add_players(req(
            "fan",
            pb::AddPlayersRequest {
                tournament: EVENT.into(),
                players: vec![player("Ann", 2400, "GMI")],
            },
        ))
        .await
        .expect_err("a viewer writes");
    assert_eq!(viewer.code(), Code::PermissionDenied);
    let nameless = t
        .add_players(req(
            "chief",
            pb::AddPlayersRequest {
                tournament: EVENT.into(),
                players: vec![player("", 2400, "")],
            },
        ))
        .await
        .expect_err("no name");
    assert_eq!(nameless.code(), Code::InvalidArgument);
    assert!(
        nameless.message().contains("players.name"),
        "{}",
        nameless.message()
    );

    let names = [
        ("Abaturov, Ivan", 2410, "GMI"),
        ("Borisov, Oleg", 2390, "MI"),
        ("Chizhov, Alexei", 2380, ""),
        ("Dyachenko, Pavel", 2300, ""),
        ("Egorov, Mikhail", 2250, "MF"),
        ("Fedorov, Ilya", 2200, ""),
    ];
    let players = t
        .add_players(req(
            "chief",
            pb::AddPlayersRequest {
                tournament: EVENT.into(),
                players: names.iter().map(|(n, r, ti)| player(n, *r, ti)).collect(),
            },
        ))
        .await
        .expect("players")
        .into_inner()
        .players;
    assert_eq!(players.len(), 6);
    assert_eq!(players[0].player_id, 1);
    assert_eq!(players[0].title, "GMI");

    let paired = t
        .pair_round(req(
            "chief",
            pb::PairRoundRequest {
                tournament: EVENT.into(),
                round: 1,
                ..Default::default()
            },
        ))
        .await
        .expect("paired")
        .into_inner();
    assert_eq!(paired.round, 1);
    assert_eq!(paired.pairings.len(), 3);
    let mut games = GameServiceClient::new(ch.clone());
    for (i, p) in paired.pairings.iter().enumerate() {
        assert_eq!(p.board as usize, i + 1);
        let (white, black) = (
            p.white.as_ref().expect("white"),
            p.black.as_ref().expect("black"),
        );
        assert!(
            white.pairing_number > 0 && black.pairing_number > 0,
            "numbers drawn (T 2)"
        );
        assert_eq!(p.game_ids.len(), 2, "a 2-game micro-match (T 4)");
        assert_eq!(
            p.game_ids[0],
            format!("ballot-cup-2026-r1-b{}-g1", p.board),
            "ids from event, round, board and game"
        );
        let opening = p.opening.as_ref().expect("a drawn opening (T 3)");
        assert_eq!(opening.table, "fmjd-64");
        assert!(!opening.fen.is_empty() && !opening.code.is_empty());
        for (g, id) in p.game_ids.iter().enumerate() {
            let game = games
                .get_game(req(
                    "fan",
                    pb::GetGameRequest {
                        game_id: id.clone(),
                    },
                ))
                .await
                .expect("the game exists")
                .into_inner();
            assert_eq!(game.event, EVENT);
            assert_eq!(game.round, "1");
            assert_eq!(game.board, p.board);
            assert_eq!(game.start_fen, opening.fen, "{id} starts from the opening");
            let (w, b) = (game.white.expect("white"), game.black.expect("black"));
            if g == 0 {
                assert_eq!(
                    (w.name.as_str(), b.name.as_str()),
                    (white.name.as_str(), black.name.as_str())
                );
            } else {
                assert_eq!(
                    (w.name.as_str(), b.name.as_str()),
                    (black.name.as_str(), white.name.as_str()),
                    "colours reversed"
                );
            }
        }
    }
    // Pairing it again, or the next round before this one has finished, is refused.
    for round in [1, 2] {
        let refused = t
            .pair_round(req(
                "chief",
                pb::PairRoundRequest {
                    tournament: EVENT.into(),
                    round,
                    ..Default::default()
                },
            ))
            .await
            .expect_err("refused");
        assert_eq!(
            refused.code(),
            Code::FailedPrecondition,
            "round {round}: {refused:?}"
        );
    }
    let late = t
        .add_players(req(
            "chief",
            pb::AddPlayersRequest {
                tournament: EVENT.into(),
                players: vec![player("Late, Comer", 2000, "")],
            },
        ))
        .await
        .expect_err("round-robin after round 1");
    assert_eq!(late.code(), Code::FailedPrecondition);
    let trf_before = trf_of(&ch).await;

    // Starting the round starts every board's first game together; a micro-match's
    // second game waits for the arbiter to start it after the first.
    let started = t
        .start_round(req(
            "chief",
            pb::StartRoundRequest {
                tournament: EVENT.into(),
                round: 1,
            },
        ))
        .await
        .expect("started")
        .into_inner()
        .round
        .expect("round");
    assert!(started.started_at.is_some());
    for p in &paired.pairings {
        for (g, id) in p.game_ids.iter().enumerate() {
            let status = games
                .get_game(req(
                    "fan",
                    pb::GetGameRequest {
                        game_id: id.clone(),
                    },
                ))
                .await
                .expect("game")
                .into_inner()
                .status;
            let want = if g == 0 {
                pb::GameStatus::Running
            } else {
                pb::GameStatus::Created
            };
            assert_eq!(status, want as i32, "{id}");
        }
    }
    let twice = t
        .start_round(req(
            "chief",
            pb::StartRoundRequest {
                tournament: EVENT.into(),
                round: 1,
            },
        ))
        .await
        .expect_err("started already");
    assert_eq!(twice.code(), Code::FailedPrecondition);

    // A game ends; the tournament counts it.
    let first = paired.pairings[0].game_ids[0].clone();
    ArbiterServiceClient::new(ch.clone())
        .declare_result(req(
            "chief",
            pb::DeclareResultRequest {
                game_id: first.clone(),
                result: pb::GameResult::WhiteWins as i32,
                explanation: "White's win reported and signed by both players".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("declared");
    let got = t
        .get_tournament(req(
            "fan",
            pb::GetTournamentRequest {
                tournament: "ballot-cup-2026".into(),
            },
        ))
        .await
        .expect("get by key")
        .into_inner()
        .tournament
        .expect("tournament");
    let board1 = &got.paired_rounds[0].pairings[0];
    assert_eq!(board1.results[0].game_id, first);
    assert_eq!(board1.results[0].result, pb::GameResult::WhiteWins as i32);
    assert_eq!(
        board1.results[0].kind,
        pb::TournamentResultKind::Played as i32
    );
    assert_eq!(board1.results[1].result, pb::GameResult::Unspecified as i32);
    assert_eq!(
        trf_of(&ch).await,
        trf_before,
        "a micro-match enters the TRF once both its games are over"
    );
    ArbiterServiceClient::new(ch.clone())
        .declare_result(req(
            "chief",
            pb::DeclareResultRequest {
                game_id: paired.pairings[0].game_ids[1].clone(),
                result: pb::GameResult::Draw as i32,
                explanation: "draw agreed, reported by both players".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("declared");
    let got = t
        .get_tournament(req(
            "fan",
            pb::GetTournamentRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("get")
        .into_inner()
        .tournament
        .expect("tournament");
    assert_eq!(
        got.paired_rounds[0].pairings[0].results[1].result,
        pb::GameResult::Draw as i32
    );
    assert_ne!(
        trf_of(&ch).await,
        trf_before,
        "the match's result is in the TRF"
    );

    let unknown = t
        .get_tournament(req(
            "fan",
            pb::GetTournamentRequest {
                tournament: "Nobody's Open".into(),
            },
        ))
        .await
        .expect_err("unknown");
    assert_eq!(unknown.code(), Code::NotFound);
    let listed = t
        .list_tournaments(req("fan", pb::ListTournamentsRequest {}))
        .await
        .expect("list")
        .into_inner()
        .tournaments;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, EVENT);

    // A restart serves the same tournament from its log.
    let dir = server.stop().await.expect("dir");
    let server = TestServer::start_in(dir.path(), CONFIG, None).await;
    let reread = client(&server.channel)
        .get_tournament(req(
            "fan",
            pb::GetTournamentRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("after a restart")
        .into_inner()
        .tournament
        .expect("tournament");
    assert_eq!(reread, got);
    server.stop().await;
}

/// Whether the engine CI installs is here; says so when it is not.
fn caissify_installed() -> bool {
    let found = std::process::Command::new("caissify-pairings")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!(
            "SKIPPED: caissify-pairings is not installed (pip install caissify-pairings; \
             .ci/run installs it)"
        );
    }
    found
}

fn swiss_request(name: &str) -> pb::CreateTournamentRequest {
    pb::CreateTournamentRequest {
        name: name.into(),
        variant: pb::Variant::Russian as i32,
        system: pb::TournamentSystem::Swiss as i32,
        rounds: 3,
        ..Default::default()
    }
}

async fn nine_players(t: &mut TournamentServiceClient<Channel>, name: &str) {
    t.add_players(req(
        "chief",
        pb::AddPlayersRequest {
            tournament: name.into(),
            players: (0..9)
                .map(|i| player(&format!("Player {}", i + 1), 2400 - 20 * i, ""))
                .collect(),
        },
    ))
    .await
    .expect("players");
}

/// A Swiss event paired by the engine the server runs (`[tournaments] pairing_engine`):
/// every round from the engine, no repeat pairing, one bye a round to a player without
/// one, results coming back from the games between rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swiss_event_is_paired_by_the_configured_engine() {
    if !caissify_installed() {
        return;
    }
    let config = format!(
        "{CONFIG}[tournaments]\npairing_engine = \"caissify-pairings\"\n[[tokens]]\ntoken = \"swiss\"\nrole = \"arbiter\"\nevent = \"Swiss Open\"\n"
    );
    let server = TestServer::start(&config).await;
    let ch = server.channel.clone();
    let mut t = client(&ch);
    let name = "Swiss Open";
    t.create_tournament(req("swiss", swiss_request(name)))
        .await
        .expect("created");
    t.add_players(req(
        "swiss",
        pb::AddPlayersRequest {
            tournament: name.into(),
            players: (0..9)
                .map(|i| player(&format!("Player {}", i + 1), 2400 - 20 * i, ""))
                .collect(),
        },
    ))
    .await
    .expect("players");
    let mut arb = ArbiterServiceClient::new(ch.clone());
    let mut met = std::collections::BTreeSet::new();
    let mut had_bye = std::collections::BTreeSet::new();
    for round in 1..=3 {
        let paired = t
            .pair_round(req(
                "swiss",
                pb::PairRoundRequest {
                    tournament: name.into(),
                    round,
                    ..Default::default()
                },
            ))
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e:?}"))
            .into_inner();
        assert_eq!(paired.pairings.len(), 4, "round {round}");
        assert_eq!(paired.byes.len(), 1, "round {round}");
        let bye = paired.byes[0].player.as_ref().expect("bye").player_id;
        assert!(had_bye.insert(bye), "round {round}: a second bye for {bye}");
        for p in &paired.pairings {
            let (w, b) = (
                p.white.as_ref().expect("w").player_id,
                p.black.as_ref().expect("b").player_id,
            );
            assert!(
                met.insert((w.min(b), w.max(b))),
                "round {round}: {w}-{b} again"
            );
            arb.declare_result(req(
                "swiss",
                pb::DeclareResultRequest {
                    game_id: p.game_ids[0].clone(),
                    result: if w < b {
                        pb::GameResult::WhiteWins
                    } else {
                        pb::GameResult::Draw
                    } as i32,
                    explanation: "result reported".into(),
                    ..Default::default()
                },
            ))
            .await
            .expect("declared");
        }
        let got = t
            .get_tournament(req(
                "swiss",
                pb::GetTournamentRequest {
                    tournament: name.into(),
                },
            ))
            .await
            .expect("get")
            .into_inner()
            .tournament
            .expect("tournament");
        let r = &got.paired_rounds[round as usize - 1];
        assert!(r.finished, "round {round} finished once its games are");
        assert!(r.source.starts_with("caissify-pairings"), "{}", r.source);
    }
    server.stop().await;
}

/// The engine missing: UNAVAILABLE in the engine's own words, nothing changed. No engine
/// configured: FAILED_PRECONDITION saying how to give the pairings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_engine_is_a_clear_refusal_that_changes_nothing() {
    let config = format!(
        "{CONFIG}[tournaments]\npairing_engine = \"/nonexistent/bbpPairings\"\n[[tokens]]\ntoken = \"chief-swiss\"\nrole = \"arbiter\"\n"
    );
    let server = TestServer::start(&config).await;
    let mut t = client(&server.channel);
    for name in ["Swiss Open", "Swiss Cup"] {
        t.create_tournament(req("chief-swiss", swiss_request(name)))
            .await
            .expect("created");
        let mut token_t = client(&server.channel);
        token_t
            .add_players(req(
                "chief-swiss",
                pb::AddPlayersRequest {
                    tournament: name.into(),
                    players: (0..4).map(|i| player(&format!("P{i}"), 2000, "")).collect(),
                },
            ))
            .await
            .expect("players");
    }
    let missing = t
        .pair_round(req(
            "chief-swiss",
            pb::PairRoundRequest {
                tournament: "Swiss Open".into(),
                round: 1,
                ..Default::default()
            },
        ))
        .await
        .expect_err("no engine there");
    assert_eq!(missing.code(), Code::Unavailable, "{missing:?}");
    assert!(
        missing.message().contains("/nonexistent/bbpPairings"),
        "{}",
        missing.message()
    );
    let got = t
        .get_tournament(req(
            "chief-swiss",
            pb::GetTournamentRequest {
                tournament: "Swiss Open".into(),
            },
        ))
        .await
        .expect("get")
        .into_inner()
        .tournament
        .expect("tournament");
    assert!(got.paired_rounds.is_empty(), "nothing paired");
    server.stop().await;

    // No engine configured.
    let server = TestServer::start(CONFIG).await;
    let mut t = client(&server.channel);
    t.create_tournament(req(
        "chief",
        pb::CreateTournamentRequest {
            name: EVENT.into(),
            ..swiss_request(EVENT)
        },
    ))
    .await
    .expect("created");
    nine_players(&mut t, EVENT).await;
    let none = t
        .pair_round(req(
            "chief",
            pb::PairRoundRequest {
                tournament: EVENT.into(),
                round: 1,
                ..Default::default()
            },
        ))
        .await
        .expect_err("no engine configured");
    assert_eq!(none.code(), Code::FailedPrecondition);
    assert!(
        none.message().contains("pairing_engine"),
        "{}",
        none.message()
    );
    server.stop().await;
}

/// A game as the event's arbiter sees it.
async fn game_of(ch: &Channel, id: &str) -> pb::Game {
    GameServiceClient::new(ch.clone())
        .get_game(req("chief", pb::GetGameRequest { game_id: id.into() }))
        .await
        .expect("game")
        .into_inner()
}

/// Waits (up to 10 s) until game `id` has a result.
async fn finished(ch: &Channel, id: &str) -> pb::Game {
    for _ in 0..100 {
        let g = game_of(ch, id).await;
        if g.result != pb::GameResult::Unspecified as i32 {
            return g;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{id} did not finish");
}

/// Every event of a finished game, from the log, as the arbiter sees them.
async fn events_of(ch: &Channel, id: &str) -> Vec<pb::GameEvent> {
    use tokio_stream::StreamExt;
    let last = game_of(ch, id).await.last_seq;
    let mut stream = pb::broadcast_service_client::BroadcastServiceClient::new(ch.clone())
        .watch_game(req(
            "chief",
            pb::WatchGameRequest {
                game_id: id.into(),
                from_seq: 0,
            },
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut events = Vec::new();
    while events.last().is_none_or(|e: &pb::GameEvent| e.seq < last) {
        let e = tokio::time::timeout(std::time::Duration::from_secs(10), stream.next())
            .await
            .expect("events come")
            .expect("stream open")
            .expect("event");
        events.push(e);
    }
    events
}

fn results_of(t: &pb::Tournament, round: usize) -> Vec<(String, i32, i32)> {
    t.paired_rounds[round]
        .pairings
        .iter()
        .flat_map(|p| p.results.iter())
        .map(|r| (r.game_id.clone(), r.result, r.kind))
        .collect()
}

async fn tournament_as(ch: &Channel, token: &str) -> pb::Tournament {
    client(ch)
        .get_tournament(req(
            token,
            pb::GetTournamentRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("tournament")
        .into_inner()
        .tournament
        .expect("tournament")
}

/// RULES.md T 5 over gRPC: the round's games carry the event's default time; a player who
/// never acts loses at exactly the default time with `T 5` on the event; a player marked
/// absent whose opponent never acts either makes both lose; the arbiter annuls a default
/// and the board plays again; a correction of a result on the game reaches the
/// tournament; a forfeit is recorded in its game as one; viewers see the results behind
/// the event's broadcast delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_forfeits_and_corrections_reach_games_and_tournament() {
    const DEFAULT_MS: u64 = 1_500;
    let server = TestServer::start(CONFIG).await;
    let ch = server.channel.clone();
    let mut t = client(&ch);
    t.create_tournament(req(
        "chief",
        pb::CreateTournamentRequest {
            name: EVENT.into(),
            variant: pb::Variant::Russian as i32,
            system: pb::TournamentSystem::RoundRobin as i32,
            time_control: "10m".into(),
            default_time_ms: Some(DEFAULT_MS),
            settings: Some(pb::GameSettings {
                broadcast_delay_ms: Some(60_000),
                ..Default::default()
            }),
            ..Default::default()
        },
    ))
    .await
    .expect("created");
    let players = ["Abaturov", "Borisov", "Chizhov", "Dolgov"]
        .iter()
        .map(|n| player(n, 2300, ""))
        .collect();
    t.add_players(req(
        "chief",
        pb::AddPlayersRequest {
            tournament: EVENT.into(),
            players,
        },
    ))
    .await
    .expect("players");
    let paired = t
        .pair_round(req(
            "chief",
            pb::PairRoundRequest {
                tournament: EVENT.into(),
                round: 1,
                ..Default::default()
            },
        ))
        .await
        .expect("paired")
        .into_inner();
    let (b1, b2) = (&paired.pairings[0], &paired.pairings[1]);
    let (g1, g2) = (b1.game_ids[0].clone(), b2.game_ids[0].clone());
    assert_eq!(
        game_of(&ch, &g1)
            .await
            .settings
            .expect("settings")
            .default_time_ms,
        DEFAULT_MS,
        "the game carries the event's default time"
    );
    // Board 2's Black is not in the hall.
    let absent = b2.black.as_ref().expect("black").player_id;
    t.mark_absent(req(
        "chief",
        pb::MarkAbsentRequest {
            tournament: EVENT.into(),
            round: 1,
            player_id: absent,
        },
    ))
    .await
    .expect("marked absent");
    t.start_round(req(
        "chief",
        pb::StartRoundRequest {
            tournament: EVENT.into(),
            round: 1,
        },
    ))
    .await
    .expect("started");

    // Board 1: White never acts and loses at exactly the default time.
    let first = finished(&ch, &g1).await;
    assert_eq!(first.result, pb::GameResult::BlackWins as i32);
    assert_eq!(first.result_reason, pb::ResultReason::Default as i32);
    let events = events_of(&ch, &g1).await;
    let started = events
        .iter()
        .find(|e| matches!(e.kind, Some(pb::game_event::Kind::GameStarted(_))))
        .expect("started");
    let ended = events.last().expect("ended");
    assert!(
        matches!(ended.kind, Some(pb::game_event::Kind::GameFinished(_))),
        "{ended:?}"
    );
    assert_eq!(ended.rule, "T 5");
    assert_eq!(
        ended.monotonic_ms - started.monotonic_ms,
        DEFAULT_MS as i64,
        "at exactly the default time"
    );
    // Board 2: White never acts either, Black was marked absent: both lose.
    let second = finished(&ch, &g2).await;
    assert_eq!(second.result, pb::GameResult::BothLose as i32);
    assert_eq!(second.result_reason, pb::ResultReason::Default as i32);
    assert!(
        events_of(&ch, &g2).await.iter().any(|e| matches!(
            &e.kind,
            Some(pb::game_event::Kind::PlayerMarkedAbsent(m)) if m.side == pb::Side::Black as i32
        )),
        "the mark is in the game's log"
    );

    // The tournament counts both as defaults; a viewer sees nothing of them yet (the
    // event's games are public 60 s after the fact).
    let chief = tournament_as(&ch, "chief").await;
    let kinds: Vec<(i32, i32)> = results_of(&chief, 0).iter().map(|r| (r.1, r.2)).collect();
    assert_eq!(
        kinds,
        vec![
            (
                pb::GameResult::BlackWins as i32,
                pb::TournamentResultKind::Default as i32
            ),
            (
                pb::GameResult::BothLose as i32,
                pb::TournamentResultKind::Default as i32
            ),
        ]
    );
    assert!(chief.paired_rounds[0].finished);
    let fan = tournament_as(&ch, "fan").await;
    assert!(
        results_of(&fan, 0)
            .iter()
            .all(|r| r.1 == pb::GameResult::Unspecified as i32),
        "behind the delay: {:?}",
        results_of(&fan, 0)
    );
    assert!(!fan.paired_rounds[0].finished);
    let forfeit_cells = |trf: &str| {
        ["w +", "b +", "w -", "b -"]
            .iter()
            .map(|c| trf.matches(c).count())
            .sum::<usize>()
    };
    let fan_trf = trf_of_as(&ch, "fan").await;
    assert_eq!(
        forfeit_cells(&fan_trf),
        0,
        "no result leaks through the TRF:\n{fan_trf}"
    );
    let chief_trf = trf_of_as(&ch, "chief").await;
    assert_eq!(
        forfeit_cells(&chief_trf),
        4,
        "defaults are forfeits in TRF (+ / -):\n{chief_trf}"
    );

    // Annulling: only a default, with a reason, of a game of the event.
    let refusals = [
        ("nope-r1-b1", "a reason", Code::NotFound),
        (g1.as_str(), "", Code::InvalidArgument),
    ];
    for (game_id, reason, code) in refusals {
        let e = t
            .annul_default(req(
                "chief",
                pb::AnnulDefaultRequest {
                    tournament: EVENT.into(),
                    game_id: game_id.into(),
                    reason: reason.into(),
                },
            ))
            .await
            .expect_err("refused");
        assert_eq!(e.code(), code, "{game_id} {reason:?}: {e:?}");
    }
    let denied = t
        .annul_default(req(
            "fan",
            pb::AnnulDefaultRequest {
                tournament: EVENT.into(),
                game_id: g1.clone(),
                reason: "the bus was late".into(),
            },
        ))
        .await
        .expect_err("a viewer");
    assert_eq!(denied.code(), Code::PermissionDenied);
    let annulled = t
        .annul_default(req(
            "chief",
            pb::AnnulDefaultRequest {
                tournament: EVENT.into(),
                game_id: g1.clone(),
                reason: "the bus was late; confirmed by the organiser".into(),
            },
        ))
        .await
        .expect("annulled")
        .into_inner();
    let replay = annulled.replay_game_id.clone();
    assert_eq!(replay, format!("{g1}-replay1"));
    let round = annulled.round.expect("round");
    assert_eq!(round.pairings[0].game_ids, vec![replay.clone()]);
    assert!(!round.finished, "board 1 plays again");
    let old = game_of(&ch, &g1).await;
    assert_eq!(old.result, pb::GameResult::Annulled as i32);
    let again = game_of(&ch, &replay).await;
    assert_eq!(
        again.status,
        pb::GameStatus::Running as i32,
        "started at once"
    );
    // Only a default is annulled so: board 2's default is one, the replay is not.
    let e = t
        .annul_default(req(
            "chief",
            pb::AnnulDefaultRequest {
                tournament: EVENT.into(),
                game_id: replay.clone(),
                reason: "again".into(),
            },
        ))
        .await
        .expect_err("not a default");
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("T 5"), "{}", e.message());

    // The replay is played: White resigns; the result reaches the tournament, played.
    let mut games = GameServiceClient::new(ch.clone());
    games
        .resign(req(
            "chief",
            pb::ResignRequest {
                game_id: replay.clone(),
                side: pb::Side::White as i32,
                ..Default::default()
            },
        ))
        .await
        .expect("resign");
    // The arbiter corrects board 2 on the game: the clock in the hall was wrong, a draw.
    ArbiterServiceClient::new(ch.clone())
        .declare_result(req(
            "chief",
            pb::DeclareResultRequest {
                game_id: g2.clone(),
                result: pb::GameResult::Draw as i32,
                explanation: "the round's start was misannounced on board 2".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("corrected");
    let chief = tournament_as(&ch, "chief").await;
    assert_eq!(
        results_of(&chief, 0)
            .iter()
            .map(|r| (r.0.clone(), r.1, r.2))
            .collect::<Vec<_>>(),
        vec![
            (
                replay.clone(),
                pb::GameResult::BlackWins as i32,
                pb::TournamentResultKind::Played as i32
            ),
            (
                g2.clone(),
                pb::GameResult::Draw as i32,
                pb::TournamentResultKind::Played as i32
            ),
        ],
        "the replay's result and the correction"
    );

    // The standings follow: the arbiter sees the replay's win and the corrected draw;
    // the public, behind the 60 s delay, sees no result at all yet.
    let standings = |token: &'static str, round: u32| {
        let mut t = client(&ch);
        async move {
            t.get_standings(req(
                token,
                pb::GetStandingsRequest {
                    tournament: EVENT.into(),
                    round,
                },
            ))
            .await
        }
    };
    let chief = standings("chief", 1).await.expect("standings").into_inner();
    assert_eq!(chief.round, 1);
    assert_eq!(
        chief.tiebreak_names,
        vec![
            "T 8 (Sonneborn-Berger)",
            "T 8 (wins)",
            "T 8 (mutual result)"
        ]
    );
    let points: Vec<(u32, f64, u32)> = chief
        .rows
        .iter()
        .map(|r| {
            let p = r.player.as_ref().expect("player");
            (r.rank, r.points, p.player_id)
        })
        .collect();
    let winner = b1.black.as_ref().expect("black").player_id;
    assert_eq!(points[0], (1, 2.0, winner), "{points:?}");
    assert_eq!(
        points.iter().filter(|p| p.1 == 1.0).count(),
        2,
        "board 2's corrected draw: {points:?}"
    );
    let fan = standings("fan", 0).await.expect("standings").into_inner();
    assert!(
        fan.rows.iter().all(|r| r.points == 0.0 && r.games == 0),
        "no result held back shows in the public's standings: {:?}",
        fan.rows
    );
    let e = standings("fan", 2).await.expect_err("round 2 not paired");
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    let cross = client(&ch)
        .get_crosstable(req(
            "chief",
            pb::GetCrosstableRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("crosstable")
        .into_inner();
    let numbers: Vec<u32> = cross
        .rows
        .iter()
        .map(|r| r.player.as_ref().expect("player").pairing_number)
        .collect();
    assert_eq!(numbers, vec![1, 2, 3, 4], "in pairing-number order");
    let winner_row = cross
        .rows
        .iter()
        .find(|r| r.player.as_ref().expect("p").player_id == winner)
        .expect("row");
    assert_eq!(winner_row.cells[0].result, "1");
    assert_eq!(winner_row.cells[0].colour, pb::Side::Black as i32);
    assert_eq!(
        winner_row.cells[0].opponent,
        b1.white.as_ref().expect("white").pairing_number
    );

    // The same over HTTP, as a spreadsheet or a display reads it.
    let csv = crate::common::http::get(
        server.addr,
        "/standings/ballot-cup-2026.csv?round=1",
        &[("authorization", "Bearer chief")],
    )
    .await;
    assert_eq!(csv.status, 200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let text = String::from_utf8(csv.body).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "rank,number,name,title,federation,rating,points,games,wins,draws,losses,forfeits,\
         T 8 (Sonneborn-Berger),T 8 (wins),T 8 (mutual result)"
    );
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[1].starts_with("1,"), "{text}");
    let json = crate::common::http::get(
        server.addr,
        "/standings/Ballot%20Cup%202026.json",
        &[("authorization", "Bearer fan")],
    )
    .await;
    assert_eq!(json.status, 200);
    let v: serde_json::Value = serde_json::from_slice(&json.body).expect("json");
    assert!(
        v["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .all(|r| r["points"] == 0.0),
        "behind the delay over HTTP too: {v}"
    );
    // The page: the same standings, for a phone.
    let page = crate::common::http::get(
        server.addr,
        "/standings/ballot-cup-2026",
        &[("authorization", "Bearer fan")],
    )
    .await;
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.body);
    assert!(
        html.contains("<table class=\"standings\">") && html.contains("Abaturov"),
        "{html}"
    );
    let bad = crate::common::http::get(
        server.addr,
        "/standings/ballot-cup-2026.json?round=x",
        &[("authorization", "Bearer fan")],
    )
    .await;
    assert_eq!(bad.status, 400);

    // Round 2: a no-show entered before the round is a forfeit in its game too.
    let paired = t
        .pair_round(req(
            "chief",
            pb::PairRoundRequest {
                tournament: EVENT.into(),
                round: 2,
                ..Default::default()
            },
        ))
        .await
        .expect("round 2")
        .into_inner();
    let board = &paired.pairings[0];
    let no_show = board.white.as_ref().expect("white").player_id;
    t.record_forfeit(req(
        "chief",
        pb::RecordForfeitRequest {
            tournament: EVENT.into(),
            round: 2,
            player_id: no_show,
        },
    ))
    .await
    .expect("forfeit");
    let forfeited = game_of(&ch, &board.game_ids[0]).await;
    assert_eq!(forfeited.result, pb::GameResult::BlackWins as i32);
    assert_eq!(forfeited.result_reason, pb::ResultReason::Forfeit as i32);
    server.stop().await;
}

async fn trf_of_as(ch: &Channel, token: &str) -> String {
    client(ch)
        .export_trf(req(
            token,
            pb::ExportTrfRequest {
                tournament: EVENT.into(),
            },
        ))
        .await
        .expect("trf")
        .into_inner()
        .trf
}
