//! The event store: the same behaviour from `MemoryStore`, `SqliteStore` and
//! `PostgresStore` (one suite, every backend; PostgreSQL where `ARBITER_TEST_DATABASE_URL`
//! names one), plus what only the durable ones promise (reopen, concurrency through group
//! commit, kill -9). The leases of the PostgreSQL store are in `pg_lease.rs`.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use draughts_arbiter::store::{
    AliveMark, BootStamp, EventStore, GameFilter, GameRecord, MemoryStore, SqliteStore, StoreError,
    Stream, SummaryUpdate, TournamentRecord,
};
use tokio::task::JoinSet;

fn game(id: &str, event: &str, round: &str, board: u32) -> GameRecord {
    GameRecord {
        game_id: id.to_string(),
        created_at_ms: 1_700_000_000_000,
        event: event.to_string(),
        round: round.to_string(),
        board,
        finished: false,
        metadata_json: format!(r#"{{"id":"{id}"}}"#),
        summary_json: String::new(),
    }
}

fn payload(game_id: &str, seq: u64) -> Vec<u8> {
    format!(r#"{{"game":"{game_id}","seq":{seq}}}"#).into_bytes()
}

fn payloads(game_id: &str, first: u64, n: u64) -> Vec<Vec<u8>> {
    (first..first + n).map(|s| payload(game_id, s)).collect()
}

fn ids(games: &[GameRecord]) -> Vec<&str> {
    games.iter().map(|g| g.game_id.as_str()).collect()
}

/// Checks that a game's log is exactly seqs 1..=n with the payloads `payload` makes.
async fn assert_dense(store: &dyn EventStore, game_id: &str, n: u64) {
    let events = store.load(Stream::Game(game_id), 0).await.expect("load");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=n).collect::<Vec<_>>(), "log of {game_id}");
    for e in &events {
        assert_eq!(e.game_id, game_id);
        assert_eq!(
            e.payload,
            payload(game_id, e.seq),
            "payload of {game_id}#{}",
            e.seq
        );
    }
    assert_eq!(
        store
            .last_seq(Stream::Game(game_id))
            .await
            .expect("last seq"),
        n
    );
}

// ---------------------------------------------------------------------------------------
// Shared behaviour, run against both stores.
// ---------------------------------------------------------------------------------------

async fn seqs_are_dense_from_one(store: &dyn EventStore) {
    store
        .create_game(game("g", "Open", "1", 1))
        .await
        .expect("create");
    assert_eq!(
        store.last_seq(Stream::Game("g")).await.expect("empty log"),
        0
    );
    assert_eq!(
        store
            .append(Stream::Game("g"), 1, payloads("g", 1, 1), None)
            .await
            .expect("1"),
        1
    );
    assert_eq!(
        store
            .append(Stream::Game("g"), 2, payloads("g", 2, 3), None)
            .await
            .expect("2..=4"),
        4
    );
    assert_eq!(
        store
            .append(Stream::Game("g"), 5, payloads("g", 5, 2), None)
            .await
            .expect("5..=6"),
        6
    );
    assert_dense(store, "g", 6).await;
}

async fn conflict_is_refused_and_writes_nothing(store: &dyn EventStore) {
    store
        .create_game(game("g", "Open", "1", 1))
        .await
        .expect("create");
    store
        .append(Stream::Game("g"), 1, payloads("g", 1, 2), None)
        .await
        .expect("1..=2");
    for stale in [0, 1, 2, 4, 100] {
        let err = store
            .append(Stream::Game("g"), stale, payloads("g", stale, 3), None)
            .await
            .expect_err("stale or future seq refused");
        assert!(
            matches!(err, StoreError::Conflict { expected, actual: 3 } if expected == stale),
            "{err}"
        );
    }
    assert_dense(store, "g", 2).await;
    assert_eq!(
        store
            .append(Stream::Game("g"), 3, payloads("g", 3, 1), None)
            .await
            .expect("3"),
        3
    );
    assert_dense(store, "g", 3).await;
}

async fn bad_appends_are_refused(store: &dyn EventStore) {
    let err = store
        .append(Stream::Game("nobody"), 1, payloads("nobody", 1, 1), None)
        .await
        .expect_err("unknown game");
    assert!(
        matches!(err, StoreError::GameNotFound(ref id) if id == "nobody"),
        "{err}"
    );
    store
        .create_game(game("g", "Open", "1", 1))
        .await
        .expect("create");
    let err = store
        .append(Stream::Game("g"), 1, Vec::new(), None)
        .await
        .expect_err("empty append");
    assert!(matches!(err, StoreError::EmptyAppend), "{err}");
    assert_eq!(store.last_seq(Stream::Game("g")).await.expect("last"), 0);
    let err = store
        .load(Stream::Game("nobody"), 0)
        .await
        .expect_err("unknown game");
    assert!(matches!(err, StoreError::GameNotFound(_)), "{err}");
    let err = store
        .last_seq(Stream::Game("nobody"))
        .await
        .expect_err("unknown game");
    assert!(matches!(err, StoreError::GameNotFound(_)), "{err}");
}

async fn load_from_a_middle_seq(store: &dyn EventStore) {
    store
        .create_game(game("g", "Open", "1", 1))
        .await
        .expect("create");
    store
        .append(Stream::Game("g"), 1, payloads("g", 1, 10), None)
        .await
        .expect("1..=10");
    let tail = store.load(Stream::Game("g"), 7).await.expect("load from 7");
    assert_eq!(
        tail.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [7, 8, 9, 10]
    );
    assert_eq!(tail[0].payload, payload("g", 7));
    assert_eq!(
        store
            .load(Stream::Game("g"), 1)
            .await
            .expect("from 1")
            .len(),
        10
    );
    assert_eq!(
        store
            .load(Stream::Game("g"), 0)
            .await
            .expect("from 0")
            .len(),
        10
    );
    assert!(
        store
            .load(Stream::Game("g"), 11)
            .await
            .expect("past the end")
            .is_empty()
    );
    assert!(
        store
            .load(Stream::Game("g"), u64::MAX)
            .await
            .expect("far past")
            .is_empty()
    );
}

async fn games_are_listed_by_event_and_round_in_board_order(store: &dyn EventStore) {
    // Created out of order on purpose.
    for (id, event, round, board) in [
        ("o2-3", "Open", "2", 3),
        ("o10-1", "Open", "10", 1),
        ("o2-1", "Open", "2", 1),
        ("w2-1", "Women", "2", 1),
        ("o1-2", "Open", "1", 2),
        ("o2-10", "Open", "2", 10),
        ("o2-2", "Open", "2", 2),
        ("o1-1", "Open", "1", 1),
    ] {
        store
            .create_game(game(id, event, round, board))
            .await
            .expect("create");
    }
    let round2 = store
        .list_games(&GameFilter {
            event: Some("Open".into()),
            round: Some("2".into()),
            ..GameFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(ids(&round2), ["o2-1", "o2-2", "o2-3", "o2-10"]);

    let open = store
        .list_games(&GameFilter {
            event: Some("Open".into()),
            ..GameFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(
        ids(&open),
        ["o1-1", "o1-2", "o2-1", "o2-2", "o2-3", "o2-10", "o10-1"],
        "rounds in natural order, boards in order within a round"
    );

    let all = store
        .list_games(&GameFilter::default())
        .await
        .expect("list");
    assert_eq!(all.len(), 8);
    assert_eq!(all.last().map(|g| g.game_id.as_str()), Some("w2-1"));
    assert_eq!(
        all[0],
        game("o1-1", "Open", "1", 1),
        "every field round-trips"
    );
}

async fn unfinished_games_and_updates(store: &dyn EventStore) {
    for (id, board) in [("a", 1), ("b", 2), ("c", 3)] {
        store
            .create_game(game(id, "Open", "1", board))
            .await
            .expect("create");
    }
    assert_eq!(
        ids(&store.unfinished_games().await.expect("list")),
        ["a", "b", "c"]
    );

    store
        .update_game("b", true, Some(r#"{"result":"1-1"}"#.into()))
        .await
        .expect("finish b");
    store.update_game("c", true, None).await.expect("finish c");
    assert_eq!(ids(&store.unfinished_games().await.expect("list")), ["a"]);

    let b = store.get_game("b").await.expect("get").expect("b exists");
    assert!(b.finished);
    assert_eq!(b.metadata_json, r#"{"result":"1-1"}"#);
    let c = store.get_game("c").await.expect("get").expect("c exists");
    assert_eq!(c.metadata_json, r#"{"id":"c"}"#, "None keeps the metadata");

    // An arbiter correction can reopen a game.
    store.update_game("c", false, None).await.expect("reopen c");
    assert_eq!(
        ids(&store.unfinished_games().await.expect("list")),
        ["a", "c"]
    );

    let err = store
        .update_game("zz", true, None)
        .await
        .expect_err("unknown");
    assert!(
        matches!(err, StoreError::GameNotFound(ref id) if id == "zz"),
        "{err}"
    );
    assert!(store.get_game("zz").await.expect("get").is_none());
}

async fn duplicate_game_is_refused(store: &dyn EventStore) {
    store
        .create_game(game("g", "Open", "1", 1))
        .await
        .expect("create");
    store
        .append(Stream::Game("g"), 1, payloads("g", 1, 1), None)
        .await
        .expect("1");
    let err = store
        .create_game(game("g", "Other", "9", 9))
        .await
        .expect_err("duplicate");
    assert!(
        matches!(err, StoreError::GameExists(ref id) if id == "g"),
        "{err}"
    );
    let g = store.get_game("g").await.expect("get").expect("exists");
    assert_eq!(g.event, "Open", "the original row is untouched");
    assert_dense(store, "g", 1).await;
}

/// A game created with its first events: one step, seqs from 1, the id refused when taken
/// (and nothing written then), an empty first log refused.
async fn game_created_with_its_first_events(store: &dyn EventStore) {
    assert_eq!(
        store
            .create_game_with_events(game("g", "Open", "1", 1), payloads("g", 1, 2))
            .await
            .expect("created"),
        2
    );
    assert_dense(store, "g", 2).await;
    let err = store
        .create_game_with_events(game("g", "Other", "9", 9), payloads("g", 3, 1))
        .await
        .expect_err("duplicate");
    assert!(
        matches!(err, StoreError::GameExists(ref id) if id == "g"),
        "{err}"
    );
    assert_dense(store, "g", 2).await;
    let err = store
        .create_game_with_events(game("h", "Open", "1", 2), Vec::new())
        .await
        .expect_err("empty log");
    assert!(matches!(err, StoreError::EmptyAppend), "{err}");
    assert!(store.get_game("h").await.expect("get").is_none());
    assert_eq!(
        store
            .append(Stream::Game("g"), 3, payloads("g", 3, 1), None)
            .await
            .expect("3"),
        3
    );
    assert_dense(store, "g", 3).await;
}

/// An append with a summary writes the events and the row's finished flag and summary in
/// one step; a refused one (a seq conflict) writes neither.
async fn summaries_are_written_with_their_events(store: &dyn EventStore) {
    store
        .create_game_with_events(game("g", "Open", "1", 1), payloads("g", 1, 1))
        .await
        .expect("created");
    let summary = |n: u32| SummaryUpdate {
        finished: n == 3,
        summary_json: format!("{{\"n\":{n}}}"),
    };
    store
        .append(Stream::Game("g"), 2, payloads("g", 2, 1), Some(summary(2)))
        .await
        .expect("2");
    let row = store.get_game("g").await.expect("get").expect("row");
    assert_eq!(
        (row.finished, row.summary_json.as_str()),
        (false, r#"{"n":2}"#)
    );
    let err = store
        .append(Stream::Game("g"), 9, payloads("g", 9, 1), Some(summary(3)))
        .await
        .expect_err("conflict");
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    let row = store.get_game("g").await.expect("get").expect("row");
    assert_eq!(
        (row.finished, row.summary_json.as_str()),
        (false, r#"{"n":2}"#)
    );
    store
        .append(Stream::Game("g"), 3, payloads("g", 3, 1), Some(summary(3)))
        .await
        .expect("3");
    let row = store.get_game("g").await.expect("get").expect("row");
    assert_eq!(
        (row.finished, row.summary_json.as_str()),
        (true, r#"{"n":3}"#)
    );
    assert_dense(store, "g", 3).await;
    assert!(store.unfinished_games().await.expect("list").is_empty());
}

fn tournament(key: &str) -> TournamentRecord {
    TournamentRecord {
        key: key.into(),
        name: format!("{key} open"),
        created_at_ms: 1_700_000_000_000,
        finished: false,
        summary_json: String::new(),
    }
}

/// A tournament's log keeps the contract of a game's (issue 40 on issue 39's log): created
/// with its first events, dense seqs, a stale seq refused writing nothing, its summary
/// replaced with the append that carries it, read from a seq; and a tournament's key and
/// a game's id never meet, even when they are the same string.
async fn a_tournaments_log_is_kept_as_a_games(store: &dyn EventStore) {
    let t = Stream::Tournament("open");
    assert_eq!(
        store
            .create_tournament(tournament("open"), payloads("t", 1, 2))
            .await
            .expect("created"),
        2
    );
    let err = store
        .create_tournament(tournament("open"), payloads("t", 1, 1))
        .await
        .expect_err("taken");
    assert!(
        matches!(err, StoreError::TournamentExists(ref k) if k == "open"),
        "{err}"
    );
    let err = store
        .create_tournament(tournament("empty"), Vec::new())
        .await
        .expect_err("empty");
    assert!(matches!(err, StoreError::EmptyAppend), "{err}");
    // A game of the same id is another stream.
    store
        .create_game_with_events(game("open", "Open", "1", 1), payloads("g", 1, 1))
        .await
        .expect("game");
    assert_eq!(store.last_seq(Stream::Game("open")).await.expect("game"), 1);
    assert_eq!(store.last_seq(t).await.expect("tournament"), 2);

    let summary = SummaryUpdate {
        finished: false,
        summary_json: r#"{"round":1}"#.into(),
    };
    assert_eq!(
        store
            .append(t, 3, payloads("t", 3, 2), Some(summary.clone()))
            .await
            .expect("3, 4"),
        4
    );
    let err = store
        .append(t, 3, payloads("t", 3, 1), None)
        .await
        .expect_err("stale");
    assert!(
        matches!(
            err,
            StoreError::Conflict {
                expected: 3,
                actual: 5
            }
        ),
        "{err}"
    );
    let err = store
        .append(Stream::Tournament("nobody"), 1, payloads("t", 1, 1), None)
        .await
        .expect_err("unknown");
    assert!(
        matches!(err, StoreError::TournamentNotFound(ref k) if k == "nobody"),
        "{err}"
    );
    let err = store
        .load(Stream::Tournament("nobody"), 1)
        .await
        .expect_err("unknown");
    assert!(matches!(err, StoreError::TournamentNotFound(_)), "{err}");

    let events = store.load(t, 0).await.expect("load");
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    for e in &events {
        assert_eq!(e.payload, payload("t", e.seq), "seq {}", e.seq);
    }
    assert_eq!(store.load(t, 4).await.expect("tail").len(), 1);
    let game_log = store.load(Stream::Game("open"), 0).await.expect("game");
    assert_eq!(game_log.len(), 1);
    assert_eq!(game_log[0].payload, payload("g", 1));

    let row = store
        .get_tournament("open")
        .await
        .expect("get")
        .expect("row");
    assert_eq!(row.name, "open open");
    assert_eq!(row.summary_json, r#"{"round":1}"#);
    assert!(!row.finished);
    store
        .append(
            t,
            5,
            payloads("t", 5, 1),
            Some(SummaryUpdate {
                finished: true,
                summary_json: "{}".into(),
            }),
        )
        .await
        .expect("5");
    assert!(
        store
            .get_tournament("open")
            .await
            .expect("get")
            .expect("row")
            .finished
    );
    assert!(store.get_tournament("nobody").await.expect("get").is_none());
    store
        .create_tournament(tournament("blitz"), payloads("t", 1, 1))
        .await
        .expect("second");
    let keys: Vec<String> = store
        .list_tournaments()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.key)
        .collect();
    assert_eq!(keys, ["blitz", "open"]);
    // No tournament is a game to list or rebuild.
    assert_eq!(
        ids(&store
            .list_games(&GameFilter::default())
            .await
            .expect("games")),
        ["open"]
    );
}

/// Several writers race on ONE game, each re-reading the last seq on conflict: every
/// successful append gets its own seqs and the log stays dense.
async fn racing_writers_on_one_game(store: Arc<dyn EventStore>) {
    store
        .create_game(game("g", "Open", "1", 1))
        .await
        .expect("create");
    let mut tasks = JoinSet::new();
    for _ in 0..8 {
        let store = Arc::clone(&store);
        tasks.spawn(async move {
            let mut won = Vec::new();
            let mut conflicts = 0u32;
            while won.len() < 10 {
                let next = store.last_seq(Stream::Game("g")).await.expect("last") + 1;
                match store
                    .append(Stream::Game("g"), next, payloads("g", next, 1), None)
                    .await
                {
                    Ok(last) => won.push(last),
                    Err(StoreError::Conflict { .. }) => conflicts += 1,
                    Err(e) => panic!("append failed: {e}"),
                }
            }
            (won, conflicts)
        });
    }
    let mut all = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (won, _conflicts) = done.expect("task");
        all.extend(won);
    }
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=80).collect::<Vec<_>>(),
        "each seq won exactly once"
    );
    assert_dense(store.as_ref(), "g", 80).await;
}

macro_rules! for_every_store {
    ($($test:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(&draughts_arbiter::store::MemoryStore::new()).await;
                }
            )*
        }
        mod sqlite {
            $(
                #[tokio::test]
                async fn $test() {
                    let dir = tempfile::tempdir().expect("temp dir");
                    let store = draughts_arbiter::store::SqliteStore::open(dir.path().join("log.db"))
                        .expect("open");
                    super::$test(&store).await;
                    store.close().await.expect("close");
                }
            )*
        }
        mod postgres {
            use draughts_arbiter::store::EventStore;
            $(
                #[tokio::test]
                async fn $test() {
                    let Some(db) = crate::common::pg::TestDb::create(stringify!($test)).await
                    else {
                        return;
                    };
                    let store = db.store("node-a", std::time::Duration::from_secs(30)).await;
                    super::$test(&store).await;
                    store.close().await.expect("close");
                    db.drop_schema().await;
                }
            )*
        }
    };
}

for_every_store!(
    seqs_are_dense_from_one,
    conflict_is_refused_and_writes_nothing,
    bad_appends_are_refused,
    load_from_a_middle_seq,
    games_are_listed_by_event_and_round_in_board_order,
    unfinished_games_and_updates,
    duplicate_game_is_refused,
    game_created_with_its_first_events,
    summaries_are_written_with_their_events,
    a_tournaments_log_is_kept_as_a_games,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_racing_writers_on_one_game() {
    racing_writers_on_one_game(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_racing_writers_on_one_game() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("log.db")).expect("open");
    racing_writers_on_one_game(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_racing_writers_on_one_game() {
    let Some(db) = crate::common::pg::TestDb::create("racing").await else {
        return;
    };
    let store = db.store("node-a", Duration::from_secs(30)).await;
    racing_writers_on_one_game(Arc::new(store.clone())).await;
    store.close().await.expect("close");
    db.drop_schema().await;
}

// ---------------------------------------------------------------------------------------
// SQLite only.
// ---------------------------------------------------------------------------------------

/// 200 games appending at once through the group-commit writer: each caller gets its own
/// answer and every row is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_appenders_across_games() {
    const GAMES: u64 = 200;
    const APPENDS: u64 = 10;
    const PER_APPEND: u64 = 2;
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("log.db")).expect("open");
    for g in 0..GAMES {
        let id = format!("g{g}");
        store
            .create_game(game(&id, "Open", "1", g as u32 + 1))
            .await
            .expect("create");
    }
    let mut tasks = JoinSet::new();
    for g in 0..GAMES {
        let store = store.clone();
        tasks.spawn(async move {
            let id = format!("g{g}");
            let mut next = 1;
            for _ in 0..APPENDS {
                let last = store
                    .append(
                        Stream::Game(&id),
                        next,
                        payloads(&id, next, PER_APPEND),
                        None,
                    )
                    .await
                    .expect("append");
                assert_eq!(last, next + PER_APPEND - 1, "{id}: its own answer");
                next = last + 1;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("appender");
    }
    for g in 0..GAMES {
        assert_dense(&store, &format!("g{g}"), APPENDS * PER_APPEND).await;
    }
    store.close().await.expect("close");
}

#[tokio::test]
async fn data_survives_drop_and_reopen() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("nested").join("log.db");
    {
        let store = SqliteStore::open(&path).expect("open");
        store
            .create_game(game("a", "Open", "1", 1))
            .await
            .expect("create");
        store
            .create_game(game("b", "Open", "1", 2))
            .await
            .expect("create");
        store
            .append(Stream::Game("a"), 1, payloads("a", 1, 5), None)
            .await
            .expect("append");
        store.update_game("b", true, None).await.expect("finish");
        // Dropped without close(): acknowledged writes are already durable.
    }
    let store = SqliteStore::open(&path).expect("reopen");
    assert_dense(&store, "a", 5).await;
    assert_eq!(ids(&store.unfinished_games().await.expect("list")), ["a"]);
    store
        .append(Stream::Game("a"), 6, payloads("a", 6, 1), None)
        .await
        .expect("append after reopen");
    store.close().await.expect("close");

    let store = SqliteStore::open(&path).expect("reopen after close");
    assert_dense(&store, "a", 6).await;
}

#[tokio::test]
async fn writes_after_close_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("log.db")).expect("open");
    store
        .create_game(game("a", "Open", "1", 1))
        .await
        .expect("create");
    store.close().await.expect("close");
    let err = store
        .append(Stream::Game("a"), 1, payloads("a", 1, 1), None)
        .await
        .expect_err("closed");
    assert!(matches!(err, StoreError::Closed), "{err}");
    assert!(matches!(store.close().await, Err(StoreError::Closed)));
    // Reads still work: they do not go through the writer.
    assert_eq!(
        store
            .last_seq(Stream::Game("a"))
            .await
            .expect("read after close"),
        0
    );
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("log.db");
    drop(SqliteStore::open(&path).expect("create"));
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.pragma_update(None, "user_version", 99)
        .expect("bump version");
    drop(conn);
    let err = SqliteStore::open(&path).expect_err("newer schema");
    assert!(
        matches!(
            err,
            StoreError::Schema {
                found: 99,
                supported: 6
            }
        ),
        "{err}"
    );
}

#[test]
fn the_file_is_in_wal_mode_with_the_expected_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("log.db");
    drop(SqliteStore::open(&path).expect("create"));
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("journal mode");
    assert_eq!(mode, "wal");
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("version");
    assert_eq!(version, 6);
    let names = |sql: &str| -> Vec<String> {
        conn.prepare(sql)
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    // Events in the order written (a rowid table), each game's unique through the index.
    let pk = names("SELECT name FROM pragma_table_info('events') WHERE pk > 0 ORDER BY pk");
    assert_eq!(pk, ["id"]);
    let unique =
        names("SELECT name FROM pragma_index_list('events') WHERE \"unique\" = 1 AND origin = 'c'");
    assert_eq!(unique, ["events_by_game"]);
    let key = names("SELECT name FROM pragma_index_info('events_by_game') ORDER BY seqno");
    assert_eq!(key, ["game_id", "seq"]);
}

/// The service's alive mark survives a restart: the next open reads the last one (what a
/// game running at the restart counts its outage from), and a new file has none.
#[tokio::test]
async fn the_alive_mark_is_read_back_at_the_next_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("log.db");
    let store = SqliteStore::open(&path).expect("create");
    assert_eq!(store.alive_mark(), None, "a new file");
    let mark = |at_ms, boot: Option<(&str, u64)>| AliveMark {
        at_ms,
        boot: boot.map(|(id, ms)| BootStamp { id: id.into(), ms }),
    };
    store.mark_alive(&mark(1_000, None)).await.expect("mark");
    store
        .mark_alive(&mark(2_500, Some(("boot-1", 77_000))))
        .await
        .expect("mark again");
    assert_eq!(store.alive_mark(), None, "as opened, not as marked since");
    store.close().await.expect("close");
    let reopened = SqliteStore::open(&path).expect("reopen");
    assert_eq!(
        reopened.alive_mark(),
        Some(mark(2_500, Some(("boot-1", 77_000)))),
        "with the boot it was marked on"
    );
    reopened.mark_alive(&mark(3_000, None)).await.expect("mark");
    reopened.close().await.expect("close");
    let again = SqliteStore::open(&path).expect("reopen");
    assert_eq!(
        again.alive_mark(),
        Some(mark(3_000, None)),
        "no boot: none read back"
    );
    again.close().await.expect("close");
}

// ---------------------------------------------------------------------------------------
// Crash safety: kill -9 a process that is appending, then check the log.
// ---------------------------------------------------------------------------------------

/// Where the child process finds its database; unset, the helper test does nothing.
const CRASH_DB_ENV: &str = "ARBITER_STORE_CRASH_DB";
const CRASH_GAMES: usize = 4;
/// Events per append: after any crash every log length is a multiple of this, since an
/// append is all or nothing.
const CRASH_PER_APPEND: u64 = 3;
const CRASH_CYCLES: usize = 20;

/// The child side: appends to several games as fast as it can and prints `ACK game seq`
/// after each acknowledged append, until it is killed (or 30 s pass, so that a lost
/// parent cannot leave it running).
#[test]
#[ignore = "helper run as a child process by crash_safety_every_acknowledged_append_survives_kill_9"]
fn crash_child_appender() {
    let Ok(path) = std::env::var(CRASH_DB_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let store = SqliteStore::open(&path).expect("open");
        let stop_at = Instant::now() + Duration::from_secs(30);
        let mut tasks = JoinSet::new();
        for g in 0..CRASH_GAMES {
            let store = store.clone();
            tasks.spawn(async move {
                let id = format!("g{g}");
                if store.get_game(&id).await.expect("get").is_none() {
                    store
                        .create_game(game(&id, "Crash", "1", g as u32 + 1))
                        .await
                        .expect("create");
                }
                let mut next = store.last_seq(Stream::Game(&id)).await.expect("last") + 1;
                while Instant::now() < stop_at {
                    let last = store
                        .append(
                            Stream::Game(&id),
                            next,
                            payloads(&id, next, CRASH_PER_APPEND),
                            None,
                        )
                        .await
                        .expect("append");
                    // Straight to the stdout handle (not the test harness's capture),
                    // one whole line per write so a kill cannot tear it.
                    let line = format!("ACK {id} {last}\n");
                    let mut out = std::io::stdout().lock();
                    out.write_all(line.as_bytes()).expect("stdout");
                    out.flush().expect("flush");
                    next = last + 1;
                }
            });
        }
        while tasks.join_next().await.is_some() {}
    });
}

/// Reads the child's ACK lines; the maximum acknowledged seq per game.
fn read_acks(lines: &[String], acked: &mut HashMap<String, u64>) {
    for line in lines {
        let mut parts = line.split_whitespace();
        if parts.next() != Some("ACK") {
            continue;
        }
        let (Some(id), Some(seq)) = (parts.next(), parts.next()) else {
            panic!("malformed ack line {line:?}");
        };
        let seq: u64 = seq.parse().expect("ack seq");
        let max = acked.entry(id.to_string()).or_default();
        *max = (*max).max(seq);
    }
}

/// Opens the database after a crash and checks every game's log against the acks.
fn check_after_crash(path: &Path, acked: &HashMap<String, u64>, cycle: usize) -> u64 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = SqliteStore::open(path).expect("reopen after kill");
        let mut total = 0;
        for game in store
            .list_games(&GameFilter::default())
            .await
            .expect("list")
        {
            let id = game.game_id;
            let events = store.load(Stream::Game(&id), 0).await.expect("load");
            let n = events.len() as u64;
            for (i, e) in events.iter().enumerate() {
                assert_eq!(e.seq, i as u64 + 1, "cycle {cycle}: gap in {id}");
                assert_eq!(
                    e.payload,
                    payload(&id, e.seq),
                    "cycle {cycle}: {id}#{}",
                    e.seq
                );
            }
            assert_eq!(
                n % CRASH_PER_APPEND,
                0,
                "cycle {cycle}: {id} has a torn append"
            );
            let acked = acked.get(&id).copied().unwrap_or(0);
            assert!(
                n >= acked,
                "cycle {cycle}: {id} acknowledged {acked}, found {n}"
            );
            total += n;
        }
        for id in acked.keys() {
            assert!(
                store.get_game(id).await.expect("get").is_some(),
                "cycle {cycle}: acknowledged game {id} is missing"
            );
        }
        store.close().await.expect("close");
        total
    })
}

/// kill -9 at random moments, 20 times: every acknowledged append is in the log, the log
/// has no gaps and no torn append. (A kill keeps the OS page cache, so this proves the
/// ack-after-commit ordering and atomicity; fsync itself is SQLite's `synchronous=FULL`.)
#[test]
fn crash_safety_every_acknowledged_append_survives_kill_9() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("crash.db");
    let exe = std::env::current_exe().expect("test binary");
    let random = RandomState::new();
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut acked: HashMap<String, u64> = HashMap::new();
    let mut kills_after_acks = 0;
    let mut total = 0;

    for cycle in 0..CRASH_CYCLES {
        assert!(
            Instant::now() < deadline,
            "only {cycle} crash cycles fitted in the time bound"
        );
        let mut child = Command::new(&exe)
            .args([
                // The test's full path in the one test binary (tests/it/main.rs).
                "store::crash_child_appender",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CRASH_DB_ENV, &path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });

        let roll = random.hash_one(cycle);
        let mut lines = Vec::new();
        if cycle % 5 == 4 {
            // Sometimes kill early: during start-up, schema creation or the first commit.
            std::thread::sleep(Duration::from_millis(roll % 40));
        } else {
            let first = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("child acknowledged nothing within 20 s");
            lines.push(first);
            std::thread::sleep(Duration::from_millis(roll % 150));
            kills_after_acks += 1;
        }
        child.kill().expect("kill -9");
        child.wait().expect("reap child");
        reader.join().expect("reader thread");
        lines.extend(rx.try_iter());
        read_acks(&lines, &mut acked);
        total = check_after_crash(&path, &acked, cycle);
    }
    assert!(kills_after_acks >= CRASH_CYCLES / 2);
    let acked_total: u64 = acked.values().sum();
    assert!(acked_total > 0, "the child never acknowledged anything");
    assert!(total >= acked_total);
    // The summary the service issue asks to quote (visible with --nocapture).
    eprintln!(
        "crash test: {CRASH_CYCLES} kill -9 cycles ({kills_after_acks} mid-stream), \
         {acked_total} events acknowledged, {total} in the log, no gap, no torn append"
    );
}

/// A log written by version 1 of the schema (no summary column, events clustered by
/// game) opens, is migrated in place, keeps its games and events, and takes summaries
/// from then on.
#[tokio::test]
async fn a_version_1_log_is_migrated() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("log.db");
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute_batch(
        "CREATE TABLE games (game_id TEXT NOT NULL PRIMARY KEY, created_at_ms INTEGER NOT NULL,
             event TEXT NOT NULL, round TEXT NOT NULL, board INTEGER NOT NULL,
             finished INTEGER NOT NULL DEFAULT 0, metadata_json TEXT NOT NULL) STRICT;
         CREATE INDEX games_by_event ON games (event, round, board);
         CREATE TABLE events (game_id TEXT NOT NULL REFERENCES games (game_id),
             seq INTEGER NOT NULL CHECK (seq >= 1), written_at_ms INTEGER NOT NULL,
             payload BLOB NOT NULL, PRIMARY KEY (game_id, seq)) STRICT, WITHOUT ROWID;
         INSERT INTO games VALUES ('old', 0, 'Open', '1', 1, 0, '{}');
         INSERT INTO events VALUES ('old', 1, 0, x'7b7d');
         PRAGMA user_version = 1;",
    )
    .expect("a version 1 file");
    drop(conn);
    let store = SqliteStore::open(&path).expect("migrated");
    let row = store.get_game("old").await.expect("get").expect("row");
    assert_eq!(row.summary_json, "", "old rows have no summary");
    store
        .append(
            Stream::Game("old"),
            2,
            vec![b"{}".to_vec()],
            Some(SummaryUpdate {
                finished: true,
                summary_json: "{}".into(),
            }),
        )
        .await
        .expect("append");
    let row = store.get_game("old").await.expect("get").expect("row");
    assert!(row.finished);
    assert_eq!(store.last_seq(Stream::Game("old")).await.expect("seq"), 2);
    // Version 3 moved the events to a table in written order: the old one is there.
    let events = store.load(Stream::Game("old"), 1).await.expect("load");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(events[0].payload, b"{}");
    store.close().await.expect("close");
}
