//! `draughts-arbiter replay`: the game lines with their notes, `--draws` (the first ply
//! at which each draw rule applied, with its rule, beside the recorded result) and
//! `--json`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn replay(args: &[&str], files: &[&Path]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"))
        .arg("replay")
        .args(args)
        .args(files)
        .output()
        .expect("run replay");
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("utf-8 output"),
    )
}

/// A temporary PDN file holding `text`, removed on drop.
struct TempPdn(PathBuf);

impl TempPdn {
    fn new(name: &str, text: &str) -> TempPdn {
        let dir = std::env::temp_dir().join(format!("replay-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("games.pdn");
        std::fs::write(&path, text).expect("write pdn");
        TempPdn(path)
    }
}

impl Drop for TempPdn {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// RULES.md, FMJD draws, "Counting": king and man against king becoming king against king
/// (15x42) stays in the 5-move count (ply 10); the position after ply 8 (kings on 42 and 9,
/// White to move) comes back after plies 12 and 16: claimable from ply 16.
const FMJD: &str = "[GameType \"20\"]\n[FEN \"W:WK47:BK5,27\"]\n[Result \"1/2-1/2\"]\n\n\
    1. 47-33 27-32 2. 33-42 5-14 3. 42-15 32-38 4. 15x42 14-9 5. 42-26 9-4 \
    6. 26-42 4-9 7. 42-26 9-4 8. 26-42 4-9 9. 42-26 9-4 1/2-1/2\n\n\
    [GameType \"20\"]\n[Result \"2-0\"]\n\n1. 32-28 19-23 2-0\n";

#[test]
fn replay_draws_gives_the_first_ply_of_each_rule_beside_the_result() {
    let file = TempPdn::new("draws", FMJD);
    let (ok, text) = replay(&["--draws"], &[&file.0]);
    assert!(ok, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "game 1: ok, 18 plies, result 1/2-1/2; draws: FMJD 5 moves (automatic) at ply 10, \
             FMJD threefold repetition (claimable) at ply 16",
            "game 2: ok, 2 plies, result 2-0; draws: none",
            "2 games, 2 ok, 0 failed",
        ]
    );
    let (_, referred) = replay(&["--draws", "--referred"], &[&file.0]);
    assert!(
        referred.contains("FMJD 5 moves (referred) at ply 10"),
        "{referred}"
    );
    // Without --draws the lines say nothing of draws.
    let (_, plain) = replay(&[], &[&file.0]);
    assert!(
        plain.starts_with("game 1: ok, 18 plies, result 1/2-1/2\n"),
        "{plain}"
    );
}

#[test]
fn replay_json_gives_one_object_per_game_and_a_summary() {
    let file = TempPdn::new("json", FMJD);
    let (ok, text) = replay(&["--draws", "--json"], &[&file.0]);
    assert!(ok, "{text}");
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(objects.len(), 3);
    let first = &objects[0];
    assert_eq!(first["game"], 1);
    assert_eq!(first["status"], "ok");
    assert_eq!(first["plies"], 18);
    assert_eq!(first["result"], "1/2-1/2");
    assert_eq!(
        first["draws"],
        serde_json::json!([
            {"rule": "FMJD 5 moves", "mode": "automatic", "ply": 10},
            {"rule": "FMJD threefold repetition", "mode": "claimable", "ply": 16},
        ])
    );
    assert_eq!(objects[1]["draws"], serde_json::json!([]));
    assert_eq!(
        objects[2],
        serde_json::json!({"summary": {"games": 2, "ok": 2, "failed": 0}})
    );
}

#[test]
fn replay_notes_an_ambiguous_move_and_counts_the_game_as_ok() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/Campionato_Assoluto_2005.pdn");
    let (ok, text) = replay(&["--variant", "italian"], &[&file]);
    assert!(ok, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[45],
        "game 46: ok, 26 plies, result 0-1; note: ply 26 '3x26' fits 3x10x17x26, \
         3x10x19x26; took 3x10x17x26 (the first in PDN order; no later move decides)"
    );
    assert_eq!(lines.last(), Some(&"53 games, 53 ok, 0 failed"));
    let (_, json) = replay(&["--variant", "italian", "--json"], &[&file]);
    let game46: serde_json::Value =
        serde_json::from_str(json.lines().nth(45).expect("game 46")).expect("json");
    assert_eq!(game46["notes"][0]["kind"], "ambiguous");
    assert_eq!(
        game46["notes"][0]["candidates"],
        serde_json::json!(["3x10x17x26", "3x10x19x26"])
    );
}

#[test]
fn replay_failures_keep_their_line_and_the_exit_code() {
    let file = TempPdn::new(
        "fail",
        "[GameType \"20\"]\n\n1. 32-28 28-23 *\n\n[GameType \"20\"]\n\n1. - - 2. - - *\n",
    );
    let (ok, text) = replay(&["--json"], &[&file.0]);
    assert!(!ok, "{text}");
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(objects[0]["status"], "failed");
    assert_eq!(objects[0]["ply"], 2);
    assert_eq!(objects[1]["status"], "ok");
    assert_eq!(objects[1]["plies"], 0);
    assert_eq!(objects[1]["notes"][0]["kind"], "no_moves_recorded");
    assert_eq!(
        objects[2],
        serde_json::json!({"summary": {"games": 2, "ok": 1, "failed": 1}})
    );
}
