//! The leases of the PostgreSQL store (several nodes on one database): one owner per game,
//! writes fenced by the database, renewal, release and takeover. Against the server named
//! by `ARBITER_TEST_DATABASE_URL`; skipped, saying so, without one.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use draughts_arbiter::store::{
    EventStore, GameRecord, Leases, POSTGRES_GROUP_APPEND, PostgresStore, StoreError, Stream,
};

use crate::common::pg::TestDb;

fn game(id: &str) -> GameRecord {
    GameRecord {
        game_id: id.into(),
        created_at_ms: 1,
        event: "Open".into(),
        round: "1".into(),
        board: 1,
        finished: false,
        metadata_json: "{}".into(),
        summary_json: String::new(),
    }
}

/// Ends the lease of `game` in the database, as the passing of time would while its
/// owner is paused (SIGSTOP) or cut off: the owner still believes it holds it.
async fn expire(db: &TestDb, game: &str) {
    db.execute(&format!(
        "UPDATE games SET lease_until = now() - interval '1 millisecond' WHERE game_id = '{game}'"
    ))
    .await;
}

const LONG: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_game_has_one_owner_and_others_are_told_who() {
    let Some(db) = TestDb::create("lease_owner").await else {
        return;
    };
    let a = db.store("node-a", LONG).await;
    let b = db.store("node-b", LONG).await;
    let last = a
        .create_game_with_events(game("g"), vec![b"e1".to_vec()])
        .await
        .expect("create");
    assert_eq!(last, 1);
    assert!(a.holds("g") && !b.holds("g"));
    assert_eq!(a.epoch_of("g"), Some(1));

    let refused = b.acquire("g").await.expect_err("a holds it");
    match refused {
        StoreError::Fenced {
            game_id,
            owner: Some((node, addr)),
        } => {
            assert_eq!(game_id, "g");
            assert_eq!(node, "node-a");
            assert_eq!(addr, "node-a.test:50051");
        }
        other => panic!("expected Fenced naming node-a, got {other:?}"),
    }
    // A node that does not hold the lease cannot append, whatever seq it names.
    let refused = b
        .append(Stream::Game("g"), 2, vec![b"b".to_vec()], None)
        .await;
    assert!(
        matches!(refused, Err(StoreError::Fenced { .. })),
        "{refused:?}"
    );
    assert_eq!(
        a.append(Stream::Game("g"), 2, vec![b"e2".to_vec()], None)
            .await
            .expect("a"),
        2
    );
    assert_eq!(
        b.last_seq(Stream::Game("g"))
            .await
            .expect("reads work anywhere"),
        2
    );
    assert!(matches!(
        b.acquire("nope").await,
        Err(StoreError::GameNotFound(_))
    ));
    a.close().await.expect("close a");
    b.close().await.expect("close b");
    db.drop_schema().await;
}

/// The owner is paused past its lease, another node takes the game over, and the owner
/// wakes up believing it still holds it: the database refuses its write, nothing forks,
/// and the owner announces that it lost the game.
#[tokio::test]
async fn a_paused_owner_that_lost_its_lease_is_fenced() {
    let Some(db) = TestDb::create("lease_fence").await else {
        return;
    };
    let a = db.store("node-a", LONG).await;
    let b = db.store("node-b", LONG).await;
    let mut losses = a.lease_losses();
    a.create_game_with_events(game("g"), vec![b"a1".to_vec()])
        .await
        .expect("create");
    expire(&db, "g").await;
    b.acquire("g").await.expect("b takes over an expired lease");
    assert_eq!(b.epoch_of("g"), Some(2), "the takeover bumps the epoch");
    assert!(a.holds("g"), "a has not noticed yet (it was paused)");

    let stale = a
        .append(Stream::Game("g"), 2, vec![b"a2".to_vec()], None)
        .await;
    match stale {
        Err(StoreError::Fenced {
            owner: Some((node, _)),
            ..
        }) => assert_eq!(node, "node-b"),
        other => panic!("the stale owner's write must be fenced, got {other:?}"),
    }
    assert!(!a.holds("g"), "a stops serving the game at once");
    assert_eq!(losses.try_recv().expect("loss announced"), "g");
    assert_eq!(
        b.append(Stream::Game("g"), 2, vec![b"b2".to_vec()], None)
            .await
            .expect("b"),
        2
    );
    let log = b.load(Stream::Game("g"), 1).await.expect("load");
    let payloads: Vec<&[u8]> = log.iter().map(|e| e.payload.as_slice()).collect();
    assert_eq!(payloads, [b"a1".as_slice(), b"b2".as_slice()]);
    a.close().await.expect("close a");
    b.close().await.expect("close b");
    db.drop_schema().await;
}

/// A lease renews in the background as long as its owner runs; renewal of a lease that
/// another node took over fails and the game is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_renew_and_a_lost_renewal_drops_the_game() {
    let Some(db) = TestDb::create("lease_renew").await else {
        return;
    };
    // Long enough that a loaded machine (a renewal every third of it) never misses one.
    let lease = Duration::from_millis(1_000);
    let a = db.store("node-a", lease).await;
    let b = db.store("node-b", lease).await;
    a.create_game(game("g")).await.expect("create");
    let mut next = 1;
    let until = Instant::now() + lease * 3;
    while Instant::now() < until {
        a.append(Stream::Game("g"), next, vec![b"a".to_vec()], None)
            .await
            .expect("the owner keeps writing past its first lease");
        next += 1;
        assert!(b.acquire("g").await.is_err(), "renewed: never free");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // a's renewal runs in the background: one that lands between the expiry and b's
    // try renews the lease (its holder is back in time), so b tries again on a loaded
    // machine, as a node would at its next survey.
    let mut tries = 0;
    loop {
        expire(&db, "g").await;
        match b.acquire("g").await {
            Ok(_) => break,
            Err(StoreError::Fenced { .. }) if tries < 20 => tries += 1,
            Err(e) => panic!("b takes the expired lease: {e:?} after {tries} tries"),
        }
    }
    let lost = a.renew_now().await.expect("renewal runs");
    assert_eq!(lost, ["g"]);
    assert!(!a.holds("g"));
    a.close().await.expect("close a");
    b.close().await.expect("close b");
    db.drop_schema().await;
}

/// A node that closes gives its games up: another takes them at once, not a lease later.
/// A node that stops renewing (it died) frees its games when its lease runs out.
#[tokio::test]
async fn release_frees_at_once_and_death_frees_after_the_lease() {
    let Some(db) = TestDb::create("lease_release").await else {
        return;
    };
    let a = db.store("node-a", LONG).await;
    let b = db.store("node-b", Duration::from_millis(400)).await;
    let c = db.store("node-c", LONG).await;
    a.create_game(game("g1")).await.expect("create");
    a.close().await.expect("close releases");
    b.acquire("g1").await.expect("free at once after a release");

    // b dies: it forgets without releasing, and nothing renews the lease any more.
    let died = Instant::now();
    b.forget("g1");
    assert!(c.acquire("g1").await.is_err(), "not before the lease ends");
    loop {
        match c.acquire("g1").await {
            Ok(_) => break,
            Err(StoreError::Fenced { .. }) => {
                assert!(died.elapsed() < Duration::from_secs(5), "never freed");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        died.elapsed() >= Duration::from_millis(300),
        "{:?}",
        died.elapsed()
    );
    assert_eq!(c.epoch_of("g1"), Some(3));
    b.close().await.expect("close b");
    c.close().await.expect("close c");
    db.drop_schema().await;
}

/// A group append is one statement that locks its games' rows in id order before it
/// updates any (as the lease renewal does, so the two never deadlock): PostgreSQL's plan
/// runs the ordered lock as the init plan of a one-time filter above the update's scan.
#[tokio::test]
async fn a_group_append_locks_its_rows_in_id_order_before_it_writes() {
    let Some(db) = TestDb::create("lease_plan").await else {
        return;
    };
    let a = db.store("node-a", LONG).await;
    for id in ["g1", "g2"] {
        a.create_game(game(id)).await.expect("create");
    }
    let plan = db
        .lines(&format!(
            "PREPARE ga(text[], bigint[], bigint[], bigint[], boolean[], text[], text, bigint,
                        text[], bigint[], bytea[]) AS {POSTGRES_GROUP_APPEND};
             EXPLAIN EXECUTE ga(ARRAY['g2', 'g1'], ARRAY[1, 1]::bigint[],
                 ARRAY[0, 0]::bigint[], ARRAY[1, 1]::bigint[], ARRAY[NULL, NULL]::boolean[],
                 ARRAY[NULL, NULL]::text[], 'node-a', 0, ARRAY['g2', 'g1'],
                 ARRAY[1, 1]::bigint[], ARRAY['\\x01', '\\x02']::bytea[])"
        ))
        .await;
    let text = plan.join("\n");
    let at = |needle: &str| {
        plan.iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in the plan:\n{text}"))
    };
    // The lock: rows sorted by id, then locked.
    assert!(at("LockRows") < at("Sort Key: games.game_id"), "{text}");
    // The update: gated by a one-time filter (evaluated once, first) on an init plan
    // reading the lock, above the scan of the rows it updates.
    let update = at("Update on games");
    assert!(
        update < at("InitPlan") && at("InitPlan") < at("One-Time Filter"),
        "{text}"
    );
    assert!(
        plan[at("One-Time Filter")..]
            .iter()
            .any(|l| l.contains("Scan on games")),
        "{text}"
    );
    a.close().await.expect("close");
    db.drop_schema().await;
}

/// What a following node asks every `takeover_every` instead of reading each game's log
/// and trying each lease: one survey of its games (last seq, owner, whether the lease ran
/// out), and the running games nobody serves.
#[tokio::test]
async fn a_survey_tells_followers_where_their_games_stand() {
    let Some(db) = TestDb::create("lease_survey").await else {
        return;
    };
    let a = db.store("node-a", LONG).await;
    let b = db.store("node-b", LONG).await;
    for id in ["g1", "g2", "g3"] {
        a.create_game_with_events(game(id), vec![b"e1".to_vec()])
            .await
            .expect("create");
    }
    a.append(
        Stream::Game("g1"),
        2,
        vec![b"e2".to_vec(), b"e3".to_vec()],
        None,
    )
    .await
    .expect("append");
    a.update_game("g3", true, None).await.expect("g3 finished");
    let ids: Vec<String> = ["g1", "g2", "g3", "unknown"].map(String::from).to_vec();
    let mut standings = b.survey(&ids).await.expect("survey");
    standings.sort_by(|x, y| x.game_id.cmp(&y.game_id));
    let seen: Vec<(&str, u64, bool)> = standings
        .iter()
        .map(|s| (s.game_id.as_str(), s.last_seq, s.free))
        .collect();
    assert_eq!(seen, [("g1", 3, false), ("g2", 1, false), ("g3", 1, false)]);
    assert!(
        standings
            .iter()
            .all(|s| s.owner == Some(("node-a".into(), "node-a.test:50051".into())))
    );
    assert!(b.unserved_games().await.expect("unserved").is_empty());

    // g2's owner stops renewing (paused, or dead): the survey says it is free, the
    // running games nobody serves list it, and its owner's own survey never does.
    expire(&db, "g2").await;
    expire(&db, "g3").await;
    let free: Vec<String> = b
        .survey(&ids)
        .await
        .expect("survey")
        .into_iter()
        .filter(|s| s.free)
        .map(|s| s.game_id)
        .collect();
    assert_eq!(free.len(), 2, "{free:?}");
    let unserved: Vec<String> = b
        .unserved_games()
        .await
        .expect("unserved")
        .into_iter()
        .map(|r| r.game_id)
        .collect();
    assert_eq!(unserved, ["g2"], "a finished game is never taken over");
    b.acquire("g2").await.expect("free");
    assert!(b.unserved_games().await.expect("unserved").is_empty());
    assert!(b.survey(&[]).await.expect("nothing asked").is_empty());
    a.close().await.expect("close a");
    b.close().await.expect("close b");
    db.drop_schema().await;
}

/// Three nodes fight over one game for two seconds with a 60 ms lease: each tries to take
/// it, appends what it can, and is now and then "paused" (its lease ended under it in the
/// database while it still believes it holds it). Afterwards the log must show one owner
/// per epoch, epochs that never go back, and every acknowledged append at its seq.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_racing_for_one_game_never_fork_it() {
    let Some(db) = TestDb::create("lease_race").await else {
        return;
    };
    let db = Arc::new(db);
    let lease = Duration::from_millis(60);
    let nodes: Vec<PostgresStore> = vec![
        db.store("n0", lease).await,
        db.store("n1", lease).await,
        db.store("n2", lease).await,
    ];
    nodes[0].create_game(game("g")).await.expect("create");
    let mut tasks = tokio::task::JoinSet::new();
    for (i, node) in nodes.iter().cloned().enumerate() {
        let db = Arc::clone(&db);
        tasks.spawn(async move {
            let mut acked: Vec<(u64, Vec<u8>)> = Vec::new();
            let mut fenced = 0u32;
            let mut rng = 0x9e37_79b9_u32.wrapping_mul(i as u32 + 1);
            let mut step = || {
                rng ^= rng << 13;
                rng ^= rng >> 17;
                rng ^= rng << 5;
                rng
            };
            let end = Instant::now() + Duration::from_secs(2);
            while Instant::now() < end {
                if !node.holds("g") && node.acquire("g").await.is_err() {
                    tokio::time::sleep(Duration::from_millis(u64::from(step() % 15))).await;
                    continue;
                }
                let Some(epoch) = node.epoch_of("g") else {
                    continue;
                };
                if step() % 10 == 0 {
                    expire(&db, "g").await;
                }
                let next = match node.last_seq(Stream::Game("g")).await {
                    Ok(last) => last + 1,
                    Err(e) => panic!("{e}"),
                };
                let payload = format!("{i}:{epoch}:{next}").into_bytes();
                match node
                    .append(Stream::Game("g"), next, vec![payload.clone()], None)
                    .await
                {
                    Ok(seq) => acked.push((seq, payload)),
                    Err(StoreError::Fenced { .. }) => fenced += 1,
                    Err(StoreError::Conflict { .. }) => {}
                    Err(e) => panic!("{e}"),
                }
                tokio::time::sleep(Duration::from_millis(u64::from(step() % 5))).await;
            }
            (acked, fenced)
        });
    }
    let mut acked = Vec::new();
    let mut fenced = 0;
    while let Some(done) = tasks.join_next().await {
        let (mine, f) = done.expect("node task");
        acked.extend(mine);
        fenced += f;
    }
    let log = nodes[0].load(Stream::Game("g"), 1).await.expect("load");
    let mut owner_of_epoch: BTreeMap<u64, String> = BTreeMap::new();
    let mut last_epoch = 0;
    for (i, event) in log.iter().enumerate() {
        assert_eq!(event.seq, i as u64 + 1, "dense");
        let text = String::from_utf8(event.payload.clone()).expect("utf-8");
        let parts: Vec<&str> = text.split(':').collect();
        let (node, epoch): (String, u64) = (parts[0].into(), parts[1].parse().expect("epoch"));
        assert!(
            epoch >= last_epoch,
            "epochs never go back: {text} after {last_epoch}"
        );
        last_epoch = epoch;
        let owner = owner_of_epoch.entry(epoch).or_insert_with(|| node.clone());
        assert_eq!(*owner, node, "epoch {epoch} written by two nodes");
    }
    for (seq, payload) in &acked {
        let stored = &log[usize::try_from(*seq).expect("seq") - 1];
        assert_eq!(
            &stored.payload, payload,
            "acknowledged append {seq} is in the log"
        );
    }
    assert_eq!(
        acked.len(),
        log.len(),
        "nothing in the log that was not acknowledged"
    );
    eprintln!(
        "lease race: {} appends under {} epochs, {fenced} stale writes fenced",
        log.len(),
        owner_of_epoch.len()
    );
    assert!(
        owner_of_epoch.len() > 3 && fenced > 0,
        "the race exercised takeovers and fences"
    );
    for node in &nodes {
        node.close().await.expect("close");
    }
    if let Ok(db) = Arc::try_unwrap(db) {
        db.drop_schema().await;
    }
}

/// Appends of many games at once share statements (the group append): 64 games append
/// together, round after round, while in each round one of them names a stale seq and
/// one was taken by another node in between; only those two are refused (a seq conflict,
/// fenced), every other append is written, each log stays dense, and a lease renewal
/// running meanwhile (it locks the same rows) never deadlocks with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_appends_refuse_only_their_own_bad_members() {
    let Some(db) = TestDb::create("lease_group").await else {
        return;
    };
    let a = Arc::new(db.store("node-a", LONG).await);
    let b = db.store("node-b", LONG).await;
    const GAMES: usize = 64;
    let ids: Vec<String> = (0..GAMES).map(|i| format!("g{i:02}")).collect();
    for id in &ids {
        a.create_game_with_events(game(id), vec![b"e1".to_vec()])
            .await
            .expect("create");
    }
    let mut next: BTreeMap<String, u64> = ids.iter().map(|id| (id.clone(), 2)).collect();
    let mut taken = Vec::new();
    for round in 0..8 {
        // One game goes to node b (its lease run out first, as after a pause of a).
        let lost = &ids[round * 2];
        expire(&db, lost).await;
        b.acquire(lost).await.expect("b takes it");
        taken.push(lost.clone());
        let stale = &ids[round * 2 + 1];
        let appends = ids
            .iter()
            .filter(|id| !taken[..taken.len() - 1].contains(id))
            .map(|id| {
                let a = a.clone();
                let seq = if id == stale { next[id] - 1 } else { next[id] };
                let id = id.clone();
                async move {
                    let r = a
                        .append(
                            Stream::Game(&id),
                            seq,
                            vec![b"x".to_vec(), b"y".to_vec()],
                            None,
                        )
                        .await;
                    (id, r)
                }
            });
        // A renewal of every lease of a's at the same time: it locks the same rows.
        let (results, renewed) = tokio::join!(futures_util::future::join_all(appends), async {
            tokio::time::sleep(Duration::from_micros(300)).await;
            a.renew_now().await
        });
        renewed.expect("renewal");
        for (id, r) in results {
            if id == *lost {
                assert!(matches!(r, Err(StoreError::Fenced { .. })), "{id}: {r:?}");
            } else if id == *stale {
                assert!(matches!(r, Err(StoreError::Conflict { .. })), "{id}: {r:?}");
            } else {
                let last = r.unwrap_or_else(|e| panic!("{id}: {e:?}"));
                assert_eq!(last, next[&id] + 1, "{id}");
                next.insert(id, last + 1);
            }
        }
    }
    for id in &ids {
        let seqs: Vec<u64> = a
            .load(Stream::Game(id), 1)
            .await
            .expect("load")
            .iter()
            .map(|e| e.seq)
            .collect();
        let last = if taken.contains(id) {
            a.last_seq(Stream::Game(id)).await.expect("last")
        } else {
            next[id] - 1
        };
        assert_eq!(seqs, (1..=last).collect::<Vec<_>>(), "{id}: dense");
    }
    a.close().await.expect("close a");
    b.close().await.expect("close b");
    db.drop_schema().await;
}
