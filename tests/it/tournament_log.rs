//! A tournament served by the hub (issue 40 on issue 39's log): its log in the store
//! beside the games', its rounds' games created in the hub from the drawn openings, the
//! games' results taken into it, and what a crash between the two logs left re-derived at
//! the next load; two writers on one log (two nodes) decide again on a seq conflict.

use std::sync::Arc;

use draughts_arbiter::game::{Actor, GameSettings};
use draughts_arbiter::game::{
    ArbiterAction, Command as GameCommand, Declared, EndReason, Given, Outcome as GameOutcome,
};
use draughts_arbiter::hub::{Hub, Tournaments};
use draughts_arbiter::rules::Variant;
use draughts_arbiter::store::{EventStore, SqliteStore, Stream};
use draughts_arbiter::tournament::{
    Ballot, BallotPer, ByeScore, Class, Command, Config, DEFAULT_TIME_MS, Entrant, Outcome,
    ResultKind, Score, Scoring, Seed, System, Tiebreak, Tournament, TournamentEvent, ballot,
    event_key,
};

const AT: i64 = 1_780_000_000_000;
/// Who gives the commands here (the service passes the calling arbiter).
const BY: Actor = Actor::System;

fn config(name: &str, games: u32) -> Config {
    Config {
        name: name.into(),
        system: System::RoundRobin,
        rounds: 0,
        settings: GameSettings::new(Variant::Russian),
        scoring: Scoring::TwoOneZero,
        tiebreaks: Tiebreak::defaults(System::RoundRobin),
        ballot: Some(Ballot {
            table: "fmjd-64".into(),
            per: BallotPer::Pairing,
        }),
        games_per_pairing: games,
        default_time_ms: DEFAULT_TIME_MS,
        bye_score: ByeScore::Win,
        annul_before_half: true,
        site: String::new(),
        time_zone: String::new(),
    }
}

fn players(names: &[&str]) -> Command {
    Command::AddPlayers {
        players: names
            .iter()
            .enumerate()
            .map(|(i, n)| Entrant {
                name: (*n).into(),
                rating: 2000 + 10 * i as u32,
                ..Entrant::default()
            })
            .collect(),
    }
}

fn seed(n: u8) -> Seed {
    Seed([n; 32])
}

/// A hub and its tournaments on a SQLite file.
async fn open(path: &std::path::Path) -> (Arc<Hub>, Arc<Tournaments>, Arc<dyn EventStore>) {
    let store: Arc<dyn EventStore> = Arc::new(SqliteStore::open(path).expect("open"));
    let hub = Hub::new(Arc::clone(&store), false);
    hub.recover().await.expect("recover");
    (Arc::clone(&hub), Tournaments::new(hub), store)
}

/// Ends a game by an arbiter's declaration.
async fn declare(hub: &Arc<Hub>, id: &str, outcome: GameOutcome) {
    let game = hub.game(id).await.expect("game");
    game.command(
        Actor::Arbiter("chief".into()),
        GameCommand::Arbiter(
            ArbiterAction::DeclareResult {
                outcome,
                kind: Declared::Decision,
            },
            Given {
                reason: Some("agreed result reported to the arbiter".into()),
                rule: Some("RU 1.9.4".into()),
            },
        ),
        None,
        |_, _| (),
    )
    .await
    .expect("declared");
}

/// A 4-player round-robin ballot event of 2-game micro-matches: pairing a round creates
/// its games in the hub, each starting from the drawn opening (T 3), the pairing's two
/// games on the same opening with colours reversed (T 4), named with the round and board;
/// a finished game's result reaches the tournament; a restart replays the same state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_round_opens_its_games_and_their_results_come_back() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("log.db");
    let (hub, desk, _) = open(&path).await;
    let (key, _) = desk
        .create(config("Ballot Cup 2026", 2), seed(1), AT)
        .await
        .expect("created");
    assert_eq!(key, event_key("Ballot Cup 2026"));
    desk.command(&key, &players(&["Ann", "Bob", "Cy", "Di"]), AT + 1, &BY)
        .await
        .expect("players");
    desk.command(
        &key,
        &Command::NumberPlayers {
            hall: None,
            next_seed: seed(2),
        },
        AT + 2,
        &BY,
    )
    .await
    .expect("numbers");
    let (events, state) = desk
        .command(
            &key,
            &Command::PairRound {
                round: 1,
                given: None,
                next_seed: seed(3),
            },
            AT + 3,
            &BY,
        )
        .await
        .expect("paired");
    assert!(!events.is_empty());
    let round = state.round(1).expect("round 1");
    assert_eq!(round.pairings.len(), 2);
    let table = ballot::table("fmjd-64").expect("table");
    for pairing in &round.pairings {
        assert_eq!(pairing.games.len(), 2);
        let (first, second) = (&pairing.games[0], &pairing.games[1]);
        assert_eq!((first.white, first.black), (second.black, second.white));
        let drawn = first.opening.as_ref().expect("a drawn opening");
        assert_eq!(
            second.opening.as_ref(),
            Some(drawn),
            "T 4: one opening a pairing"
        );
        let fen = &table.opening(drawn.number).expect("in the table").fen;
        for slot in &pairing.games {
            let game = hub.game(&slot.game_id).await.expect("created in the hub");
            let meta = game.meta();
            assert_eq!(meta.event, "Ballot Cup 2026");
            assert_eq!(meta.round, "1");
            assert_eq!(meta.board, pairing.board);
            let white = state.player(slot.white).expect("white");
            assert_eq!(meta.white.name, white.entrant.name);
            assert_eq!(meta.white.rating, white.entrant.rating);
            let start = game
                .read(|s, _| s.start_fen().to_string())
                .await
                .expect("read");
            assert_eq!(
                &start, fen,
                "{} starts from the drawn opening",
                slot.game_id
            );
        }
    }

    let first = round.pairings[0].games[0].game_id.clone();
    declare(&hub, &first, GameOutcome::WhiteWins).await;
    let state = desk.get(&key).await.expect("get");
    let (_, slot) = state.game(&first).expect("slot");
    assert_eq!(
        slot.outcome,
        Some(Outcome {
            score: Score::WhiteWins,
            kind: ResultKind::Played,
        })
    );

    // A restart replays the same tournament from its log.
    drop(desk);
    hub.shutdown().await;
    drop(hub);
    let (_hub, desk, store) = open(&path).await;
    assert_eq!(desk.get(&key).await.expect("reloaded"), state);
    let row = store
        .get_tournament(&key)
        .await
        .expect("row")
        .expect("kept");
    assert_eq!(row.name, "Ballot Cup 2026");
    assert!(
        row.summary_json.contains("\"paired\":1"),
        "{}",
        row.summary_json
    );
}

/// What a crash between the two logs leaves is re-derived at the next load: a round whose
/// pairing is durable but whose games were never created gets its games, and a game that
/// finished while the tournament's log did not hear of it gives its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_the_logs_loses_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("log.db");
    let (hub, desk, store) = open(&path).await;
    let (key, _) = desk
        .create(config("Crash Open", 1), seed(1), AT)
        .await
        .expect("created");
    desk.command(&key, &players(&["Ann", "Bob", "Cy", "Di"]), AT + 1, &BY)
        .await
        .expect("players");
    let (_, state) = desk
        .command(
            &key,
            &Command::NumberPlayers {
                hall: None,
                next_seed: seed(2),
            },
            AT + 2,
            &BY,
        )
        .await
        .expect("numbers");
    // The pairing reaches the log, the process dies before it creates the games.
    let pair = Command::PairRound {
        round: 1,
        given: None,
        next_seed: seed(3),
    };
    let decided: Vec<TournamentEvent> = state.handle(&pair, AT + 3).expect("decided");
    let last = store.last_seq(Stream::Tournament(&key)).await.expect("seq");
    let payloads = decided
        .iter()
        .map(|e| serde_json::to_vec(e).expect("json"))
        .collect();
    store
        .append(Stream::Tournament(&key), last + 1, payloads, None)
        .await
        .expect("appended behind the desk's back");
    drop(desk);
    hub.shutdown().await;
    drop(hub);

    let (hub, desk, store) = open(&path).await;
    let state = desk.get(&key).await.expect("loaded");
    let games: Vec<String> = state
        .round(1)
        .expect("round 1")
        .games()
        .map(|g| g.game_id.clone())
        .collect();
    assert_eq!(games.len(), 2);
    for id in &games {
        hub.game(id).await.expect("the missing game was created");
    }
    // A game finishes; the tournament is not told (its desk is gone) until it loads.
    declare(&hub, &games[1], GameOutcome::Draw).await;
    drop(desk);
    let desk = Tournaments::new(Arc::clone(&hub));
    let state = desk.get(&key).await.expect("loaded again");
    let (_, slot) = state.game(&games[1]).expect("slot");
    assert_eq!(slot.outcome.map(|o| o.score), Some(Score::Draw));
    let (_, other) = state.game(&games[0]).expect("slot");
    assert_eq!(other.outcome, None, "the unfinished game has no result");

    // A forfeit reaches the tournament's log; the process dies before the game is told.
    let white = other.white;
    let forfeit = Command::RecordForfeit {
        round: 1,
        player: white,
    };
    let decided: Vec<TournamentEvent> = state.handle(&forfeit, AT + 5).expect("decided");
    let last = store.last_seq(Stream::Tournament(&key)).await.expect("seq");
    let payloads = decided
        .iter()
        .map(|e| serde_json::to_vec(e).expect("json"))
        .collect();
    store
        .append(Stream::Tournament(&key), last + 1, payloads, None)
        .await
        .expect("appended behind the desk's back");
    drop(desk);
    let desk = Tournaments::new(Arc::clone(&hub));
    desk.get(&key).await.expect("loaded again");
    let result = hub
        .game(&games[0])
        .await
        .expect("game")
        .read(|s, _| s.result().cloned())
        .await
        .expect("read")
        .expect("the forfeit was carried out on the game");
    assert_eq!(
        (result.outcome, result.reason),
        (GameOutcome::BlackWins, EndReason::Forfeit)
    );
    // Read again: nothing more is recorded anywhere.
    let seq = hub
        .game(&games[0])
        .await
        .expect("game")
        .read(|s, _| s.last_seq())
        .await;
    desk.get(&key).await.expect("read");
    assert_eq!(
        hub.game(&games[0])
            .await
            .expect("game")
            .read(|s, _| s.last_seq())
            .await
            .expect("seq"),
        seq.expect("seq")
    );
}

/// Two desks on one log (two nodes on one database): the one reading an older log loses
/// the append's seq check, reads what the other wrote and decides again; nothing is lost
/// and nothing written twice. A refused command changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_on_one_log_decide_again_on_a_conflict() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("log.db");
    let (hub, a, store) = open(&path).await;
    let b = Tournaments::new(Arc::clone(&hub));
    let (key, _) = a
        .create(config("Two Nodes", 1), seed(1), AT)
        .await
        .expect("created");
    // B reads the log now; A then writes.
    b.get(&key).await.expect("b loads");
    a.command(&key, &players(&["Ann", "Bob"]), AT + 1, &BY)
        .await
        .expect("a adds");
    let (_, state) = b
        .command(&key, &players(&["Cy", "Di"]), AT + 2, &BY)
        .await
        .expect("b adds after deciding again");
    let names: Vec<&str> = state
        .players()
        .iter()
        .map(|p| p.entrant.name.as_str())
        .collect();
    assert_eq!(names, ["Ann", "Bob", "Cy", "Di"]);
    let log = store.load(Stream::Tournament(&key), 1).await.expect("log");
    assert_eq!(log.len(), 3, "create, A's players, B's players");
    let replayed = Tournament::replay(
        &log.iter()
            .map(|r| serde_json::from_slice(&r.payload).expect("event"))
            .collect::<Vec<TournamentEvent>>(),
    )
    .expect("replays");
    assert_eq!(replayed, state);

    // Refusals: nothing written.
    let err = a
        .command(&key, &Command::StartRound { round: 1 }, AT + 3, &BY)
        .await
        .expect_err("unpaired round");
    assert!(err.to_string().contains("round"), "{err}");
    let err = a
        .create(config("Two Nodes", 1), seed(9), AT + 4)
        .await
        .expect_err("the name is taken");
    assert!(
        matches!(&err, draughts_arbiter::hub::TournamentsError::Refused(e) if e.class == Class::AlreadyExists),
        "{err}"
    );
    let held = a.held();
    let err = a.get("nobody").await.expect_err("unknown");
    assert_eq!(a.held(), held, "an unknown name leaves nothing in memory");
    assert!(
        matches!(&err, draughts_arbiter::hub::TournamentsError::Refused(e) if e.class == Class::NotFound),
        "{err}"
    );
    assert_eq!(
        store.last_seq(Stream::Tournament(&key)).await.expect("seq"),
        3,
        "nothing written by a refusal"
    );
}
