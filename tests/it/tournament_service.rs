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
                ballot_table: "acf-3move".into(),
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
