//! `draughts-arbiter board-sim` against a real server (issue #16 item 2): every game of
//! the reference files (`tests/data/games/`, copies of `../shared/reference/games/`)
//! played through a simulated electronic board, in events and in snapshots, ends with
//! the final position and result `replay` gives; with `--noise` over 20 seeds every
//! injected irregularity is flagged with its rule and nothing else is; a record played
//! on past an automatic draw diverges where the judge ends the game; towers are refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::server::TestServer;
use draughts_arbiter::notation::pdn::read_games_bytes;
use draughts_arbiter::notation::replay::replay_record;
use draughts_arbiter::rules::Variant;

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

/// Runs the release binary's `board-sim` against `server` (on a blocking thread: the
/// server runs on this test's runtime).
async fn board_sim(server: &TestServer, args: Vec<String>) -> Run {
    let url = format!("http://{}", server.addr);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"))
            .arg("board-sim")
            .arg("--server")
            .arg(url)
            .args(args)
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
async fn noise_over_twenty_seeds_is_flagged_with_its_rule_and_nothing_else() {
    let server = TestServer::start_memory(LIMITS).await;
    let kinds = [
        "jitter",
        "adjust",
        "opponent touch",
        "lift and put back",
        "swapped scan",
        "press without move",
    ];
    let mut seen = std::collections::BTreeMap::<&str, u64>::new();
    let (mut injected, mut games) = (0u64, 0usize);
    for seed in 1..=20u64 {
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
        assert_eq!(nums.len(), 2, "{flags}");
        assert_eq!(
            nums[0], nums[1],
            "seed {seed}: every injected irregularity flagged"
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
        injected >= 100,
        "{injected} irregularities over {games} games"
    );
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
