//! `arbiter-tools board-sim` against a real server (issue #16 item 2): every game of
//! the reference files (`tests/data/games/`, copies of `../shared/reference/games/`)
//! played through a simulated electronic board, in events and in snapshots, ends with
//! the final position and result `replay` gives; with `--noise` over eight seeds every
//! injected irregularity is flagged with its rule and nothing else is; every
//! irregularity kind a board can cause goes through each of its cycles, as the judge's
//! own logs show (issue 38: flagged, ruled corrected and restored, ruled to stand,
//! cleared by the board put back, a capture finished), on created games and on games
//! an arbiter created, where a bound board rules only with an arbiter's token; a record
//! played on past an automatic draw diverges where the judge ends the game; towers are
//! refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::server::TestServer;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_event::Kind as Ev;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::notation::pdn::read_games_bytes;
use draughts_arbiter::notation::replay::replay_record;
use draughts_arbiter::notation::{square_number, write_fen};
use draughts_arbiter::rules::Variant;
use tokio_stream::StreamExt;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

/// The board streams may send as fast as the server answers.
const LIMITS: &str = "[limits]\nboard_messages_per_s = 1000000\nboard_burst = 1000000\n";

fn reference(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/games")
        .join(name)
}

/// Each reference file with the variant to force where it has no GameType tag.
const FILES: [(&str, Option<&str>); 4] = [
    ("nk2003-amsterdam.pdn", None),
    ("abatsiev.pdn", Some("russian")),
    ("Campionato_Assoluto_2005.pdn", Some("italian")),
    ("OCA_2.0.pdn", Some("english")),
];

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs the tools' release binary's `board-sim` against `server` (on a blocking thread: the
/// server runs on this test's runtime).
async fn board_sim(server: &TestServer, args: Vec<String>) -> Run {
    let url = format!("http://{}", server.addr);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_arbiter-tools"))
            .arg("board-sim")
            .arg("--server")
            .arg(url)
            .args(args)
            .env_remove("ARBITER_TOKEN")
            .env_remove("ARBITER_ARBITER_TOKEN")
            .output()
            .expect("board-sim runs")
    })
    .await
    .expect("join");
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn file_args(name: &str, variant: Option<&str>, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["--pdn".to_string(), reference(name).display().to_string()];
    if let Some(v) = variant {
        a.extend(["--variant".to_string(), v.to_string()]);
    }
    a.extend(extra.iter().map(|s| (*s).to_string()));
    a
}

/// The plies of each game of a reference file as `replay` counts them.
fn replayed_plies(name: &str, variant: Option<&str>) -> Vec<usize> {
    let bytes = std::fs::read(reference(name)).expect("reference file");
    let forced = variant.map(|v| v.parse::<Variant>().expect("variant"));
    read_games_bytes(&bytes)
        .into_iter()
        .map(|g| {
            let g = g.expect("every reference game reads");
            replay_record(&g, forced)
                .expect("every reference game replays")
                .game
                .moves()
                .len()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reference_game_replays_through_a_board_in_both_modes() {
    let server = TestServer::start_memory(LIMITS).await;
    let mut total = 0;
    for mode in ["events", "snapshots"] {
        for (name, variant) in FILES {
            let plies = replayed_plies(name, variant);
            let prefix = format!("{mode}-{name}");
            let run = board_sim(
                &server,
                file_args(
                    name,
                    variant,
                    &[
                        "--all",
                        "--boards",
                        "8",
                        "--mode",
                        mode,
                        "--id-prefix",
                        &prefix,
                    ],
                ),
            )
            .await;
            assert!(run.ok, "{mode} {name}:\n{}\n{}", run.stdout, run.stderr);
            let lines: Vec<&str> = run.stdout.lines().collect();
            assert_eq!(
                lines.last().copied(),
                Some(format!("{} games, {} ok, 0 failed", plies.len(), plies.len()).as_str()),
                "{mode} {name}"
            );
            // One line per game, in order, with the plies the replay counts: the final
            // position and result were compared with the judge's by the simulator.
            for (i, p) in plies.iter().enumerate() {
                let want = format!("game {}: ok, {p} plies, result ", i + 1);
                assert!(
                    lines[i].starts_with(&want),
                    "{mode} {name}: '{}' is not '{want}…'",
                    lines[i]
                );
            }
            assert!(run.stderr.contains("messages/s"), "{}", run.stderr);
            total += plies.len();
        }
    }
    assert_eq!(total, 2 * 185, "both modes over every reference game");
    // The Italian game 46 ends on a capture two captures fit: the board shows its path.
    let run = board_sim(
        &server,
        file_args(
            "Campionato_Assoluto_2005.pdn",
            Some("italian"),
            &["--game", "46", "--id-prefix", "it46"],
        ),
    )
    .await;
    assert!(run.ok, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("game 46: ok, 26 plies, result 0-1; note: ply 26 '3x26' fits"),
        "{}",
        run.stdout
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noise_over_eight_seeds_is_flagged_with_its_rule_and_nothing_else() {
    let server = TestServer::start_memory(LIMITS).await;
    let kinds = [
        "jitter",
        "adjust",
        "opponent touch",
        "lift and put back",
        "swapped scan",
    ];
    let mut seen = std::collections::BTreeMap::<&str, u64>::new();
    let (mut injected, mut games) = (0u64, 0usize);
    for seed in 1..=8u64 {
        let (name, variant) = FILES[(seed as usize) % FILES.len()];
        let mode = if seed % 2 == 0 { "events" } else { "snapshots" };
        let seed_text = seed.to_string();
        let prefix = format!("noise-{seed}");
        let run = board_sim(
            &server,
            file_args(
                name,
                variant,
                &[
                    "--all",
                    "--boards",
                    "8",
                    "--mode",
                    mode,
                    "--noise",
                    &seed_text,
                    "--id-prefix",
                    &prefix,
                ],
            ),
        )
        .await;
        // The simulator fails a game on a flag it did not cause, on an injected
        // irregularity left unflagged, and on a result or position that is not the
        // record's.
        assert!(
            run.ok,
            "seed {seed} {mode} {name}:\n{}\n{}",
            run.stdout, run.stderr
        );
        let noise = run
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("noise: "))
            .expect("a noise line");
        let (counts, flags) = noise.split_once("; ").expect("counts; flags");
        for part in counts.split(", ") {
            let (kind, n) = part.rsplit_once(' ').expect("kind count");
            let k = kinds
                .iter()
                .find(|k| **k == kind)
                .unwrap_or_else(|| panic!("unknown noise '{kind}'"));
            *seen.entry(k).or_default() += n.parse::<u64>().expect("count");
        }
        let nums: Vec<u64> = flags
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("number"))
            .collect();
        assert_eq!(nums.len(), 3, "{flags}");
        assert_eq!(
            (nums[0], nums[0]),
            (nums[1], nums[2]),
            "seed {seed}: every injected irregularity flagged and brought to an end"
        );
        injected += nums[0];
        games += replayed_plies(name, variant).len();
    }
    for k in kinds {
        assert!(
            seen.get(k).copied().unwrap_or(0) > 0,
            "noise '{k}' never injected: {seen:?}"
        );
    }
    assert!(
        injected >= 1000,
        "{injected} irregularities over {games} games"
    );
    server.stop().await;
}

// ---- Every irregularity a board causes, through its cycles (issue 38) ---------------

/// The kinds a board can cause and the endings each must reach over a run, as the
/// judge's log says them, in events and in snapshots: `corrected` (ruled, and on the
/// board restored until `BoardInStep`), `stands`, `cleared` (the board put back, no
/// ruling), `finished` (a capture stopped early finished on the board, RU 1.5.5). A
/// scanning board senses no touch, sees a capture once its pieces are off (no removal,
/// no press before it) and is not judged piece by piece while it catches up (no wrong
/// copy); an out-of-turn reading stands only as a position the record never has.
const EVENTS_CYCLES: [(&str, &[&str]); 8] = [
    ("MOVE_OUT_OF_TURN", &["corrected", "stands", "cleared"]),
    ("ILLEGAL_MOVE", &["corrected", "stands", "cleared"]),
    ("TOUCH_MOVE", &["corrected", "stands", "cleared"]),
    ("WRONG_REMOVAL", &["corrected", "stands", "cleared"]),
    ("CAPTURE_INCOMPLETE", &["corrected", "cleared", "finished"]),
    ("CLOCK_PRESS_WITHOUT_MOVE", &["corrected", "stands"]),
    ("CLOCK_PRESS_BEFORE_REMOVAL", &["corrected", "stands"]),
    ("WRONG_COPY", &["corrected", "cleared"]),
];
const SNAPSHOT_CYCLES: [(&str, &[&str]); 4] = [
    ("MOVE_OUT_OF_TURN", &["corrected", "cleared"]),
    ("ILLEGAL_MOVE", &["corrected", "stands", "cleared"]),
    ("CAPTURE_INCOMPLETE", &["corrected", "cleared"]),
    ("CLOCK_PRESS_WITHOUT_MOVE", &["corrected", "stands"]),
];

fn authed<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token {
        r.metadata_mut().insert(
            "authorization",
            MetadataValue::try_from(format!("Bearer {t}")).expect("header"),
        );
    }
    r
}

async fn get_game(ch: &Channel, id: &str, token: Option<&str>) -> pb::Game {
    GameServiceClient::new(ch.clone())
        .get_game(authed(pb::GetGameRequest { game_id: id.into() }, token))
        .await
        .unwrap_or_else(|s| panic!("get {id}: {s}"))
        .into_inner()
}

/// Every event of the game's log, in order.
async fn game_log(ch: &Channel, id: &str, token: Option<&str>) -> Vec<pb::GameEvent> {
    let last = get_game(ch, id, token).await.last_seq;
    let mut stream = BroadcastServiceClient::new(ch.clone())
        .watch_game(authed(
            pb::WatchGameRequest {
                game_id: id.into(),
                from_seq: 0,
            },
            token,
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut events = Vec::new();
    while events.last().is_none_or(|e: &pb::GameEvent| e.seq < last) {
        let e = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("events come")
            .expect("stream open")
            .expect("event");
        events.push(e);
    }
    events
}

/// A recorded game: each ply's path (PDN squares) and the FEN before each ply and at
/// the end.
struct Recorded {
    paths: Vec<Vec<u32>>,
    fens: Vec<String>,
}

fn recorded(name: &str, variant: Option<&str>) -> Vec<Recorded> {
    let bytes = std::fs::read(reference(name)).expect("reference file");
    let forced = variant.map(|v| v.parse::<Variant>().expect("variant"));
    read_games_bytes(&bytes)
        .into_iter()
        .map(|g| {
            let r = replay_record(&g.expect("reads"), forced).expect("replays");
            let v = r.game.position().variant();
            Recorded {
                paths: r
                    .game
                    .moves()
                    .iter()
                    .map(|m| m.path().map(|s| square_number(s, v)).collect())
                    .collect(),
                fens: r.game.positions().iter().map(write_fen).collect(),
            }
        })
        .collect()
}

fn on_board(kind: &str) -> bool {
    !kind.starts_with("CLOCK_PRESS")
}

/// What the judge's log of one game says: each irregularity flagged with a rule and
/// brought to an end once (a `corrected` one on the board answered with the target and
/// followed by `BoardInStep` before the next move), every move the record's in order, a
/// stood irregularity the record's position, nothing outstanding at the end. Gives each
/// irregularity's (kind, ending), and how many incidents flagged two kinds at once.
async fn judged(
    ch: &Channel,
    id: &str,
    rec: &Recorded,
    token: Option<&str>,
) -> (Vec<(String, String)>, usize) {
    let game = get_game(ch, id, token).await;
    assert!(
        game.pending_irregularities.is_empty(),
        "{id}: outstanding at the end: {:?}",
        game.pending_irregularities
    );
    assert_eq!(
        Some(&game.fen),
        rec.fens.last(),
        "{id}: the record's final position"
    );
    let events = game_log(ch, id, token).await;
    let mut flagged: BTreeMap<u64, String> = BTreeMap::new();
    let mut outstanding: BTreeSet<u64> = BTreeSet::new();
    let mut out = Vec::new();
    let mut two_at_once = 0;
    let mut ply = 0usize;
    for (i, e) in events.iter().enumerate() {
        match &e.kind {
            Some(Ev::MovePlayed(m)) => {
                let path = m
                    .r#move
                    .as_ref()
                    .map(|m| m.path.clone())
                    .unwrap_or_default();
                assert_eq!(
                    Some(&path),
                    rec.paths.get(ply),
                    "{id}: move at seq {} is not the record's ply {}",
                    e.seq,
                    ply + 1
                );
                ply += 1;
            }
            Some(Ev::IrregularityFlagged(f)) => {
                let kind = pb::IrregularityKind::try_from(f.kind)
                    .expect("a kind")
                    .as_str_name()
                    .trim_start_matches("IRREGULARITY_KIND_")
                    .to_string();
                assert!(!e.rule.is_empty(), "{id}: #{} {kind} cites no rule", e.seq);
                if outstanding
                    .iter()
                    .any(|s| flagged.get(s).is_some_and(|k| *k != kind))
                {
                    two_at_once += 1;
                }
                flagged.insert(e.seq, kind);
                outstanding.insert(e.seq);
            }
            Some(Ev::IrregularityRuled(r)) => {
                let seq = r.irregularity_seq;
                let kind = flagged
                    .get(&seq)
                    .unwrap_or_else(|| panic!("{id}: #{} rules on #{seq}, never flagged", e.seq))
                    .clone();
                assert!(outstanding.remove(&seq), "{id}: #{seq} ended twice");
                let ending = match pb::IrregularityRuling::try_from(r.ruling) {
                    Ok(pb::IrregularityRuling::Corrected) => "corrected",
                    Ok(pb::IrregularityRuling::Stands) => "stands",
                    _ if r.reason.contains("finished") => "finished",
                    _ => "cleared",
                };
                if ending == "corrected" && on_board(&kind) {
                    // The board is told where to go, and gets there before play goes on.
                    assert!(
                        matches!(&events[i + 1].kind, Some(Ev::BoardOutOfStep(o))
                            if o.cause == pb::BoardFollowCause::Corrected as i32),
                        "{id}: #{seq} corrected without a target for the board"
                    );
                    let back = events[i + 1..]
                        .iter()
                        .find(|e| matches!(e.kind, Some(Ev::BoardInStep(_) | Ev::MovePlayed(_))));
                    assert!(
                        matches!(back.and_then(|e| e.kind.as_ref()), Some(Ev::BoardInStep(_))),
                        "{id}: #{seq} corrected, and the board not restored before the next move"
                    );
                }
                if ending == "stands" && on_board(&kind) {
                    // What stands is the record's position: after the move made (a
                    // removal), or after the next ply (made by the ruling).
                    if rec.fens.get(ply) != Some(&r.fen_after) {
                        assert_eq!(
                            rec.fens.get(ply + 1),
                            Some(&r.fen_after),
                            "{id}: #{seq} {kind} stands as no position of the record"
                        );
                        ply += 1;
                    }
                }
                if ending == "stands" && !on_board(&kind) {
                    assert_eq!(rec.fens.get(ply), Some(&r.fen_after), "{id}: #{seq}");
                }
                out.push((kind, ending.to_string()));
            }
            _ => {}
        }
    }
    assert!(outstanding.is_empty(), "{id}: never ended: {outstanding:?}");
    assert_eq!(ply, rec.paths.len(), "{id}: every ply of the record");
    (out, two_at_once)
}

/// Runs `board-sim --noise` over a reference file and reads what the judge recorded of
/// each game: the (kind, ending) pairs, and the incidents that flagged two kinds.
async fn noise_run(
    server: &TestServer,
    (name, variant): (&str, Option<&str>),
    mode: &str,
    seed: u64,
) -> (BTreeMap<(String, String), usize>, usize, String) {
    let prefix = format!("cycle-{mode}-{seed}");
    let seed_text = seed.to_string();
    let run = board_sim(
        server,
        file_args(
            name,
            variant,
            &[
                "--all",
                "--boards",
                "8",
                "--mode",
                mode,
                "--noise",
                &seed_text,
                "--id-prefix",
                &prefix,
            ],
        ),
    )
    .await;
    assert!(run.ok, "{mode} {name}:\n{}\n{}", run.stdout, run.stderr);
    let summary = run
        .stdout
        .lines()
        .find(|l| l.starts_with("irregularities: "))
        .expect("a line by kind")
        .to_string();
    let mut seen = BTreeMap::new();
    let mut two = 0;
    for (i, rec) in recorded(name, variant).iter().enumerate() {
        let (pairs, both) =
            judged(&server.channel, &format!("{prefix}-{}", i + 1), rec, None).await;
        for p in pairs {
            *seen.entry(p).or_default() += 1;
        }
        two += both;
    }
    (seen, two, summary)
}

fn missing(seen: &BTreeMap<(String, String), usize>, want: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, endings) in want {
        for e in *endings {
            if !seen.contains_key(&((*kind).to_string(), (*e).to_string())) {
                out.push(format!("{kind} {e}"));
            }
        }
    }
    out
}

/// Issue 38: every kind a board can cause, through a simulated board end to end, as the
/// judge's logs have it: flagged with its rule (an incident with every kind it is: an
/// irregular move and the press after it are two), then corrected and restored, stood,
/// cleared by the board put back, or a capture finished; every game ends with its
/// record's moves and final position and nothing outstanding. The counts the simulator
/// prints are the logs' counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fmjd_5_4_every_irregularity_a_board_causes_goes_through_each_cycle() {
    let server = TestServer::start_memory(LIMITS).await;
    let mut events = BTreeMap::new();
    let mut two = 0;
    for (file, seed) in [(FILES[1], 5), (FILES[2], 6)] {
        let (seen, both, summary) = noise_run(&server, file, "events", seed).await;
        // The simulator's own counts are the judge's.
        for ((kind, ending), n) in &seen {
            *events.entry((kind.clone(), ending.clone())).or_insert(0) += n;
        }
        for (kind, _) in EVENTS_CYCLES {
            let logged: usize = seen
                .iter()
                .filter(|((k, _), _)| k == kind)
                .map(|(_, n)| n)
                .sum();
            assert!(
                summary.contains(&format!("{kind} {logged} injected, {logged} flagged")),
                "{kind}: {logged} in the logs; {summary}"
            );
        }
        two += both;
    }
    let gaps = missing(&events, &EVENTS_CYCLES);
    assert!(gaps.is_empty(), "events: never {gaps:?}: {events:?}");
    assert!(two > 0, "no incident flagged two kinds at once");
    let (snapshots, _, summary) = noise_run(&server, FILES[0], "snapshots", 7).await;
    let gaps = missing(&snapshots, &SNAPSHOT_CYCLES);
    assert!(gaps.is_empty(), "snapshots: never {gaps:?}: {snapshots:?}");
    for kind in [
        "TOUCH_MOVE",
        "WRONG_REMOVAL",
        "CLOCK_PRESS_BEFORE_REMOVAL",
        "WRONG_COPY",
    ] {
        assert!(
            snapshots.keys().all(|(k, _)| k != kind),
            "a scanning board made {kind}"
        );
        assert!(summary.contains(&format!("{kind} not made (")), "{summary}");
    }
    for never in [
        "ADJUST_OUT_OF_TURN",
        "TOUCHED_IMMOVABLE_PIECE",
        "BOARD_MISMATCH",
    ] {
        assert!(
            events
                .keys()
                .chain(snapshots.keys())
                .all(|(k, _)| k != never)
        );
    }
    server.stop().await;
}

/// A board bound to games an arbiter created rules only with an arbiter's token: without
/// `--arbiter-token` it makes only what it puts right itself (cleared, finished; nothing
/// ruled, no clock irregularity), with it every cycle, the rulings the arbiter's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fmjd_5_4_a_bound_board_rules_only_with_an_arbiters_token() {
    let games = ["bound-1", "bound-2", "bound-3", "bound-4"];
    let mut config = format!("{LIMITS}[[tokens]]\ntoken = \"arb\"\nrole = \"arbiter\"\n");
    for g in games {
        config.push_str(&format!(
            "[[tokens]]\ntoken = \"board-{g}\"\nrole = \"board\"\nevent = \"Bound\"\ngame = \"{g}\"\n"
        ));
    }
    let server = TestServer::start_memory(&config).await;
    let ch = server.channel.clone();
    let records = recorded("abatsiev.pdn", Some("russian"));
    for (i, g) in games.iter().enumerate() {
        let mut client = GameServiceClient::new(ch.clone());
        client
            .create_game(authed(
                pb::CreateGameRequest {
                    game_id: (*g).into(),
                    variant: pb::Variant::Russian as i32,
                    time_control: "90m+30s".into(),
                    event: "Bound".into(),
                    round: "1".into(),
                    board: u32::try_from(i + 1).expect("small"),
                    ..Default::default()
                },
                Some("arb"),
            ))
            .await
            .expect("create");
        client
            .start_game(authed(
                pb::StartGameRequest {
                    game_id: (*g).into(),
                    expected_seq: 0,
                },
                Some("arb"),
            ))
            .await
            .expect("start");
    }
    let mut endings: [BTreeSet<(String, String)>; 2] = Default::default();
    for (i, g) in games.iter().enumerate() {
        let n = i + 1;
        let with = i % 2 == 1;
        let token = format!("board-{g}");
        let mut extra = vec![
            "--game".to_string(),
            n.to_string(),
            "--bind".to_string(),
            (*g).to_string(),
            "--token".to_string(),
            token,
            "--noise".to_string(),
            "11".to_string(),
        ];
        if with {
            extra.extend(["--arbiter-token".to_string(), "arb".to_string()]);
        }
        let mut args = vec![
            "--pdn".to_string(),
            reference("abatsiev.pdn").display().to_string(),
            "--variant".to_string(),
            "russian".to_string(),
        ];
        args.extend(extra);
        let run = board_sim(&server, args).await;
        assert!(run.ok, "{g}:\n{}\n{}", run.stdout, run.stderr);
        assert_eq!(
            run.stdout
                .contains("rulings: none (--bind without --arbiter-token)"),
            !with,
            "{}",
            run.stdout
        );
        let (pairs, _) = judged(&ch, g, &records[i], Some("arb")).await;
        endings[usize::from(with)].extend(pairs);
        for e in game_log(&ch, g, Some("arb")).await {
            if let Some(Ev::IrregularityRuled(r)) = &e.kind
                && r.ruling != pb::IrregularityRuling::Unspecified as i32
            {
                let actor = e.actor.clone().expect("an actor");
                assert!(with, "{g}: a ruling without an arbiter's token: {e:?}");
                assert_eq!(actor.kind, pb::ActorKind::Arbiter as i32, "{g}");
            }
        }
    }
    let [without, with] = endings;
    assert!(!without.is_empty(), "nothing made without a token");
    for (kind, ending) in &without {
        assert!(
            on_board(kind) && kind != "WRONG_COPY",
            "{kind} made without rulings"
        );
        assert!(
            ending == "cleared" || ending == "finished",
            "{kind} {ending}"
        );
    }
    for ending in ["corrected", "stands"] {
        assert!(
            with.iter().any(|(_, e)| e == ending),
            "with the arbiter's token, nothing {ending}: {with:?}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_played_past_an_automatic_draw_diverges_where_the_judge_ends_it() {
    let server = TestServer::start_memory(LIMITS).await;
    let dir = tempfile::tempdir().expect("dir");
    let pdn = dir.path().join("past.pdn");
    // FMJD 5 moves: a king and a man against a king becoming king against king stays
    // in the count, drawn at ply 10; the record goes on.
    std::fs::write(
        &pdn,
        "[Event \"Past a draw\"]\n[GameType \"20\"]\n[FEN \"W:WK47:BK5,27\"]\n[Result \"*\"]\n\n\
         1. 47-33 27-32 2. 33-42 5-14 3. 42-15 32-38 4. 15x42 14-9 5. 42-26 9-4 6. 26-48 4-13 *\n",
    )
    .expect("write");
    let run = board_sim(&server, vec!["--pdn".into(), pdn.display().to_string()]).await;
    assert!(!run.ok, "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "game 1: diverged at ply 10 '9-4': the judge ended the game after it [FMJD 5 moves]"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("1 games, 0 ok, 1 failed"),
        "{}",
        run.stdout
    );
    // Towers: a board senses single pieces, not stacks (as the judge refuses them).
    let run = board_sim(
        &server,
        file_args("abatsiev.pdn", Some("towers"), &["--game", "1"]),
    )
    .await;
    assert!(!run.ok);
    assert!(
        run.stdout
            .contains("game 1: failed: towers cannot be played on an electronic board"),
        "{}",
        run.stdout
    );
    // A bad --game is refused before anything is played.
    let run = board_sim(
        &server,
        vec![
            "--pdn".into(),
            pdn.display().to_string(),
            "--game".into(),
            "2".into(),
        ],
    )
    .await;
    assert!(!run.ok);
    assert!(
        run.stderr.contains("--game 2: the file has 1 games"),
        "{}",
        run.stderr
    );
    server.stop().await;
}
