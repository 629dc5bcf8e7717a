//! The `game` and `arbiter` command lines against a real server (in-process, on
//! 127.0.0.1:0, with an arbiter's token): each command is the built binary, run as a
//! subprocess, and its output lines are read back: events in words (seq, time, actor,
//! what happened, clocks, rule), `--json` lines, and server refusals as `error: CODE:
//! message` with a non-zero exit.

use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::auth::{Role, TokenConfig};
use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::store::MemoryStore;
use serde_json::Value;

const TOKEN: &str = "arb-token";

/// A server on its own runtime thread; dropped with the test process.
fn start_server() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            let file = FileConfig {
                tokens: vec![TokenConfig {
                    token: TOKEN.into(),
                    name: None,
                    role: Role::Arbiter { event: None },
                }],
                ..FileConfig::default()
            };
            let config =
                Config::resolve(file, Some(addr), None, true, None, None, false).expect("config");
            tx.send(format!("http://{addr}")).expect("send the address");
            let store = Arc::new(MemoryStore::new());
            run(&config, store, listener, std::future::pending::<()>())
                .await
                .expect("server runs");
        });
    });
    let url = rx.recv().expect("the server's address");
    // Wait until it answers.
    for _ in 0..100 {
        if cli_raw(&url, Some(TOKEN), &["game", "list"])
            .status
            .success()
        {
            return url;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    panic!("server did not come up");
}

fn cli_raw(url: &str, token: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("ARBITER_") {
            cmd.env_remove(&key);
        }
    }
    // The connection flags belong to `game` / `arbiter`, before the action.
    let (group, rest) = args.split_first().expect("a subcommand");
    cmd.arg(group).arg("--server").arg(url);
    if let Some(t) = token {
        cmd.arg("--token").arg(t);
    }
    cmd.args(rest).output().expect("run the binary")
}

/// Runs a command that must succeed; its stdout lines.
fn ok(url: &str, args: &[&str]) -> Vec<String> {
    let out = cli_raw(url, Some(TOKEN), args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "{args:?} failed: {stderr}\nstdout: {stdout}"
    );
    stdout.lines().map(str::to_string).collect()
}

/// Runs a command that must fail; its stderr.
fn fails(url: &str, token: Option<&str>, args: &[&str]) -> String {
    let out = cli_raw(url, token, args);
    assert!(!out.status.success(), "{args:?} should fail");
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// The one event line containing `needle`, checked for the `#seq time actor:` prefix.
fn event_line<'a>(lines: &'a [String], needle: &str) -> &'a str {
    let hits: Vec<&String> = lines.iter().filter(|l| l.contains(needle)).collect();
    assert_eq!(hits.len(), 1, "one line with {needle:?} in {lines:#?}");
    let line = hits[0].as_str();
    let mut words = line.split(' ');
    let seq = words.next().expect("seq");
    assert!(
        seq.starts_with('#') && seq[1..].parse::<u64>().is_ok(),
        "{line}"
    );
    let time = words.next().expect("time");
    assert!(
        time.len() == 24 && time.ends_with('Z') && time.contains('T'),
        "RFC 3339 time in {line}"
    );
    line
}

fn json_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn the_game_and_arbiter_command_lines_against_a_server() {
    let url = start_server();
    let url = url.as_str();

    // Create with settings and an id; the friendly time control of the proto comment.
    let created = ok(
        url,
        &[
            "game",
            "create",
            "--id",
            "cli-1",
            "--time-control",
            "5m+3s",
            "--white",
            "Ann",
            "--white-rating",
            "2100",
            "--black",
            "Bob",
            "--black-federation",
            "NED",
            "--event",
            "Open",
            "--round",
            "1",
            "--board",
            "2",
            "--claims-need-arbiter",
            "--min-move-for-draw-offer",
            "1",
            "--repetition",
            "claim",
            "--move-count-draws",
            "referred",
            "--rule-edition",
            "classic",
            "--touch-immovable-penalty",
            "off",
        ],
    );
    assert_eq!(created[0], "game cli-1 (russian) not started");
    let shown = json_lines(&ok(url, &["game", "--json", "show", "cli-1"]));
    let g = &shown[0]["game"];
    assert_eq!(g["id"], "cli-1");
    assert_eq!(g["time_control"], "5m+3s");
    assert_eq!(g["white"]["rating"], 2100);
    assert_eq!(g["black"]["federation"], "NED");
    assert_eq!(g["board"], 2);
    assert_eq!(g["settings"]["claims_need_arbiter"], true);
    assert_eq!(
        g["settings"]["move_count_draws"],
        "MOVE_COUNT_DRAWS_REFERRED_TO_ARBITER"
    );
    assert_eq!(g["settings"]["touch_immovable_penalty"], false);
    let long = ok(
        url,
        &[
            "game",
            "create",
            "--id",
            "cli-long",
            "--time-control",
            "2h/50 then 1h/25 then 15min+30s",
        ],
    );
    assert_eq!(long[0], "game cli-long (russian) not started");
    assert!(
        long.contains(&"  time      2h/50,1h/25,15m+30s; broadcast live (no delay)".to_string()),
        "{long:#?}"
    );

    // Refusals: the gRPC code and message, exit code 1.
    let err = fails(
        url,
        Some(TOKEN),
        &["game", "create", "--id", "bad", "--time-control", "5m+"],
    );
    assert_eq!(
        err.trim(),
        "error: INVALID_ARGUMENT: time_control \"5m+\" at byte 3: expected an increment after '+', e.g. 5m+3s, found the end"
    );
    let err = fails(url, Some(TOKEN), &["game", "create", "--id", "cli-1"]);
    assert!(err.starts_with("error: ALREADY_EXISTS: "), "{err}");
    let err = fails(url, None, &["arbiter", "pause", "cli-1"]);
    assert!(err.starts_with("error: UNAUTHENTICATED: "), "{err}");

    // Play: events in words with notation, clocks and rules.
    let started = ok(url, &["game", "start", "cli-1"]);
    let line = event_line(&started, "game started");
    assert!(
        line.contains("; clocks white 5:00.0, black 5:00.0, white to move"),
        "{line}"
    );
    let moved = ok(url, &["game", "move", "cli-1", "c3-d4"]);
    let line = event_line(&moved, "white played 1. c3-d4");
    assert!(line.contains(" spent; clocks white "), "{line}");
    let err = fails(url, Some(TOKEN), &["game", "move", "cli-1", "c3-b4"]);
    assert!(err.starts_with("error: FAILED_PRECONDITION: "), "{err}");
    let offered = ok(url, &["game", "move", "cli-1", "b6-a5", "--offer-draw"]);
    event_line(&offered, "black played 1... b6-a5");
    let line = event_line(&offered, "black offered a draw with the move");
    assert!(line.ends_with("[RU 1.9.3]"), "{line}");
    assert!(
        !offered.iter().any(|l| l.contains("warned")),
        "{offered:#?}"
    );
    let declined = ok(
        url,
        &["game", "respond", "cli-1", "decline", "--side", "white"],
    );
    event_line(&declined, "white declined the draw offer");

    // The arbiter's commands.
    let paused = ok(
        url,
        &["arbiter", "pause", "cli-1", "--reason", "a phone rang"],
    );
    let line = event_line(&paused, "clocks paused");
    assert!(line.contains(" arbiter: "), "{line}");
    assert!(line.ends_with(", paused"), "{line}");
    let resumed = ok(url, &["arbiter", "resume", "cli-1", "--reason", "done"]);
    event_line(&resumed, "clocks resumed: done; clocks white ");
    let added = ok(
        url,
        &[
            "arbiter",
            "adjust",
            "cli-1",
            "--side",
            "black",
            "--add",
            "1m",
            "--reason",
            "compensation",
        ],
    );
    event_line(&added, "black's clock + 1:00.0");
    let set = ok(
        url,
        &[
            "arbiter", "adjust", "cli-1", "--side", "white", "--set", "4m30s",
        ],
    );
    let line = event_line(&set, "white's clock set to 4:30.0");
    assert!(line.contains("; clocks white 4:30.0"), "{line}");
    let penalty = ok(
        url,
        &[
            "arbiter", "adjust", "cli-1", "--side", "white", "--add", "-30s", "--reason", "noise",
        ],
    );
    event_line(&penalty, "white's clock - 30.0 s");
    // A bad flag value is a usage error (clap's exit code 2), naming the flag.
    let out = cli_raw(
        url,
        Some(TOKEN),
        &[
            "arbiter", "adjust", "cli-1", "--side", "white", "--add", "30",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--add") && err.contains("expected a unit"),
        "{err}"
    );
    let warned = ok(
        url,
        &[
            "arbiter", "warn", "cli-1", "--side", "black", "--reason", "talking", "--rule",
            "RU 1.9.4",
        ],
    );
    event_line(&warned, "black warned (warning 1)");

    // A claim waits for the arbiter; the ruling finds the pending claim's seq itself.
    let claimed = ok(url, &["game", "claim", "cli-1", "--side", "white"]);
    event_line(&claimed, "arbiter: white claimed a draw by repetition");
    let ruled = ok(
        url,
        &[
            "arbiter",
            "rule-claim",
            "cli-1",
            "incorrect",
            "--reason",
            "no repetition",
        ],
    );
    event_line(&ruled, "white's claim #");
    assert!(
        ruled.iter().any(|l| l.contains("found incorrect")),
        "{ruled:#?}"
    );
    let err = fails(
        url,
        Some(TOKEN),
        &["arbiter", "rule-claim", "cli-1", "correct"],
    );
    assert_eq!(
        err.trim(),
        "error: FAILED_PRECONDITION: there is no pending claim (RU 1.9.2)"
    );
    let err = fails(
        url,
        Some(TOKEN),
        &["arbiter", "rule-irregularity", "cli-1", "stands"],
    );
    assert_eq!(
        err.trim(),
        "error: FAILED_PRECONDITION: there is no irregularity to rule on (FMJD 5.4)"
    );

    // Set the position (the game's own, with a reason), then declare the result.
    let fen = json_lines(&ok(url, &["game", "--json", "show", "cli-1"]))[0]["game"]["fen"]
        .as_str()
        .expect("fen")
        .to_string();
    let set = ok(
        url,
        &[
            "arbiter",
            "set-position",
            "cli-1",
            &fen,
            "--reason",
            "pieces knocked over",
        ],
    );
    event_line(&set, &format!("position set to {fen}"));
    let declared = ok(
        url,
        &[
            "arbiter",
            "declare",
            "cli-1",
            "white-wins",
            "--reason",
            "penalty",
            "--rule",
            "RU 1.9.4",
            "--explanation",
            "second warning",
        ],
    );
    event_line(&declared, "game over: white wins by ");
    assert!(
        declared
            .iter()
            .any(|l| l == "game cli-1 (russian) finished: White wins by penalty (RU 1.9.4)"),
        "{declared:#?}"
    );

    // Press: a game whose clock switches only on a press.
    ok(
        url,
        &[
            "game",
            "create",
            "--id",
            "cli-2",
            "--time-control",
            "10m",
            "--clock-switching",
            "on-press",
        ],
    );
    ok(url, &["game", "start", "cli-2"]);
    ok(url, &["game", "move", "cli-2", "c3-d4"]);
    let pressed = ok(url, &["arbiter", "press", "cli-2", "--side", "white"]);
    let line = event_line(&pressed, "white pressed the clock");
    assert!(line.ends_with("black to move"), "{line}");

    // The finished game's whole log, in words and as JSON.
    let watched = ok(url, &["game", "watch", "cli-1"]);
    let first = event_line(&watched, "game created");
    assert!(first.starts_with("#1 "), "{first}");
    assert!(
        first.ends_with(
            "game created: russian, time control 5m+3s, Ann - Bob, event Open, round 1, board 2"
        ),
        "{first}"
    );
    assert!(
        watched
            .iter()
            .all(|l| !l.contains("Some(") && !l.contains("{ ")),
        "no Debug text: {watched:#?}"
    );
    let json = json_lines(&ok(url, &["game", "watch", "cli-1", "--json"]));
    assert_eq!(json.len(), watched.len());
    for (i, e) in json.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1, "{e}");
        assert_eq!(e["game_id"], "cli-1");
    }
    let kinds: Vec<&str> = json
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or(""))
        .collect();
    for kind in [
        "game_created",
        "game_started",
        "move_played",
        "draw_offered",
        "draw_offer_declined",
        "clocks_paused",
        "clocks_resumed",
        "clock_adjusted",
        "warning_issued",
        "draw_claimed",
        "claim_decided",
        "position_set",
        "game_finished",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let mv = json
        .iter()
        .find(|e| e["kind"] == "move_played")
        .expect("a move");
    assert_eq!(mv["data"]["move"]["notation"], "c3-d4");
    assert_eq!(mv["data"]["side"], "SIDE_WHITE");
    assert!(mv["data"]["clock"]["white_ms"].is_i64(), "{mv}");
    let adjust = json
        .iter()
        .find(|e| e["kind"] == "clock_adjusted")
        .expect("an adjustment");
    assert_eq!(adjust["actor"]["kind"], "ACTOR_KIND_ARBITER");
    assert_eq!(adjust["data"]["add_ms"], 60_000);
}

/// The README's command-line block, run as written: each `draughts-arbiter` command in
/// order (with `$A` the test server's address and an arbiter's token), and each `# …`
/// line under a command is a line it printed, `…` matching anything (times, clocks). A
/// line starting `error:` is expected on stderr, with exit code 1.
#[test]
fn the_readmes_command_line_block_runs_as_written() {
    let steps = readme_block("```sh\nA=\"--server http://127.0.0.1:50051\"");
    assert!(steps.len() >= 20, "{} commands", steps.len());
    run_readme_steps(&start_server(), "$A", &steps);
}

/// The README's tournament walkthrough (a 6-player round-robin ballot event of 2-game
/// micro-matches, issue 40), run as written in the same way, `$T` the server.
#[test]
fn the_readmes_tournament_walkthrough_runs_as_written() {
    let steps = readme_block("```sh\nT=\"--server http://127.0.0.1:50051\"");
    assert!(steps.len() >= 10, "{} commands", steps.len());
    assert!(
        steps
            .iter()
            .filter(|(c, _)| c.contains(" tournament "))
            .count()
            >= 9,
        "the walkthrough runs the tournament commands"
    );
    run_readme_steps(&start_server(), "$T", &steps);
}

/// The commands of the README's `sh` block starting with `start` (continued lines
/// joined, trailing comments dropped) and the expected lines under each.
fn readme_block(start: &str) -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let at = readme.find(start).expect("the README's command-line block");
    let block = &readme[at + 6..];
    let block = &block[..block.find("```").expect("the block's end")];
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        if let Some(expected) = line.strip_prefix("# ") {
            steps
                .last_mut()
                .expect("an expected line follows a command")
                .1
                .push(expected.to_string());
            continue;
        }
        if line.starts_with("A=") || line.starts_with("T=") || line.trim().is_empty() {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\'));
        if line.ends_with('\\') {
            continue;
        }
        let command = std::mem::take(&mut pending);
        // A trailing comment (two spaces and `#`) is not part of the command.
        let command = match command.find("  #") {
            Some(i) => command[..i].to_string(),
            None => command,
        };
        steps.push((command, Vec::new()));
    }
    steps
}

/// Runs README steps against `url` (`var` standing for its address and an arbiter's
/// token), each printing its expected lines; `error:` lines on stderr with exit code 1.
fn run_readme_steps(url: &str, var: &str, steps: &[(String, Vec<String>)]) {
    for (command, expected) in steps {
        let words = shell_words(command);
        assert_eq!(words[0], "draughts-arbiter", "{command}");
        assert_eq!(words[2], var, "{command}");
        let args: Vec<&str> = std::iter::once(words[1].as_str())
            .chain(words[3..].iter().map(String::as_str))
            .collect();
        let out = cli_raw(url, Some(TOKEN), &args);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let wants_error = expected.iter().any(|e| e.starts_with("error:"));
        assert_eq!(
            out.status.code(),
            Some(if wants_error { 1 } else { 0 }),
            "{command}\nstdout: {stdout}\nstderr: {stderr}"
        );
        let printed = if wants_error { &stderr } else { &stdout };
        for want in expected {
            assert!(
                printed.lines().any(|l| matches_pattern(l, want)),
                "{command}: no line like\n  {want}\nin\n{printed}"
            );
        }
    }
}

/// The words of a shell command line: spaces separate, double quotes group.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// Whether `line` is `pattern` with each `…` standing for any text.
fn matches_pattern(line: &str, pattern: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    let Some(rest) = line.strip_prefix(parts[0]) else {
        return false;
    };
    let mut rest = rest;
    for (i, part) in parts.iter().enumerate().skip(1) {
        if i == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The README's five-minute walkthrough, run as written with `sh` (the binary first on
/// `PATH`, `ARBITER_SERVER` and `ARBITER_TOKEN` pointing at a test server): each line in
/// order, `ID=$(…)` setting the game id the later lines use; the `watch` line, meant for
/// a third terminal, runs in the background and must have printed the moves by the end.
/// A line whose comment says `error` or `refused` must exit 1; every other line 0.
#[test]
fn the_readmes_walkthrough_runs_as_written() {
    let url = start_server();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("## Five-minute walkthrough")
        .expect("the walkthrough");
    let block = &readme[start..];
    let block = &block[block.find("```sh\n").expect("its sh block") + 6..];
    let block = &block[..block.find("```").expect("the block's end")];
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_draughts-arbiter"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sh = |line: &str, id: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(line)
            .env("PATH", &path)
            .env("ARBITER_SERVER", &url)
            .env("ARBITER_TOKEN", TOKEN)
            .env("ID", id)
            .output()
            .expect("sh")
    };
    let mut id = String::new();
    let mut watch = None;
    let mut pending = String::new();
    let mut ran = 0;
    for line in block.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\'));
        if line.ends_with('\\') {
            continue;
        }
        let command = std::mem::take(&mut pending);
        let (command, comment) = match command.find("  #") {
            Some(i) => (command[..i].trim().to_string(), command[i..].to_string()),
            None => (command.trim().to_string(), String::new()),
        };
        ran += 1;
        if let Some(rest) = command.strip_prefix("ID=$(") {
            let inner = rest.strip_suffix(')').expect("ID=$(…)");
            let out = sh(inner, "");
            assert!(out.status.success(), "{inner}: {out:?}");
            id = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert!(!id.is_empty(), "{inner} printed no id");
            continue;
        }
        if command.contains(" watch ") {
            // `exec`: the watch itself is the child, so stopping it closes its output.
            let child = Command::new("sh")
                .arg("-c")
                .arg(format!("exec {command}"))
                .env("PATH", &path)
                .env("ARBITER_SERVER", &url)
                .env("ARBITER_TOKEN", TOKEN)
                .env("ID", &id)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("watch");
            watch = Some(child);
            // Let the stream open before the moves.
            std::thread::sleep(Duration::from_millis(300));
            continue;
        }
        let out = sh(&command, &id);
        let refused = comment.contains("error") || comment.contains("refused");
        assert_eq!(
            out.status.code(),
            Some(if refused { 1 } else { 0 }),
            "{command} {comment}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(ran >= 10, "{ran} lines ran");
    let mut watch = watch.expect("the walkthrough watches the game");
    std::thread::sleep(Duration::from_millis(300));
    watch.kill().expect("stop the watch");
    let seen = watch.wait_with_output().expect("watch output");
    let seen = String::from_utf8_lossy(&seen.stdout);
    for needle in [
        "white played 1. c3-d4",
        "black played 1... b6-a5",
        "white offered a draw",
    ] {
        assert!(
            seen.contains(needle),
            "the watch printed no {needle:?}:\n{seen}"
        );
    }
}

/// The line of `lines` starting with `prefix` (exactly one).
fn line_starting<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    let hits: Vec<&String> = lines.iter().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(hits.len(), 1, "one line starting {prefix:?} in {lines:#?}");
    hits[0]
}

/// A row of `game list`'s table: its cells (columns are two or more spaces apart).
fn cells(row: &str) -> Vec<String> {
    row.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// Issue 42, item 5: `game show` reads like a score sheet (event, round, board, site and
/// date, the players with ids, federations and ratings, variant and rule edition, time
/// control and broadcast delay, status and result in words with the rule, what waits
/// for a ruling, a numbered score sheet with both clocks and the time spent on each
/// move); `game list` is a table with board, players, clocks and result; `game export`
/// writes an event's or a round's PDN; no raw enum names and no doubled words.
#[test]
fn show_list_and_export_read_like_a_score_sheet() {
    let url = start_server();
    let url = url.as_str();
    let create = |id: &str, round: &str, board: &str, white: &str, black: &str, extra: &[&str]| {
        let mut args = vec![
            "game",
            "create",
            "--id",
            id,
            "--white",
            white,
            "--black",
            black,
            "--event",
            "Spring Open",
            "--round",
            round,
            "--board",
            board,
        ];
        args.extend_from_slice(extra);
        ok(url, &args)
    };
    create(
        "s-1",
        "2",
        "1",
        "Abaturov, Ivan",
        "Borisov, Oleg",
        &[
            "--time-control",
            "5m+3s",
            "--white-fmjd-id",
            "14523",
            "--white-federation",
            "RUS",
            "--white-rating",
            "2410",
            "--black-federation",
            "NED",
            "--site",
            "Moscow, Russia",
            "--time-zone",
            "Europe/Moscow",
            "--broadcast-delay-ms",
            "900000",
            "--claims-need-arbiter",
        ],
    );
    create(
        "s-2",
        "2",
        "2",
        "Chizhov, Alexei",
        "Dyachenko, Pavel",
        &["--time-control", "10m"],
    );
    let third = create("s-3", "3", "1", "Egorov, Mikhail", "Fedorov, Ilya", &[]);
    assert_eq!(third[0], "game s-3 (russian) not started");
    assert!(
        third.contains(&"  time      untimed; broadcast live (no delay)".to_string()),
        "{third:#?}"
    );

    ok(url, &["game", "start", "s-1"]);
    for mv in ["c3-d4", "f6-g5", "g3-f4"] {
        ok(url, &["game", "move", "s-1", mv]);
    }
    ok(url, &["game", "claim", "s-1", "--side", "black"]);
    ok(
        url,
        &[
            "arbiter", "warn", "s-1", "--side", "black", "--reason", "talking", "--rule",
            "RU 1.9.4",
        ],
    );

    // A running game: the header, what waits, the score sheet so far.
    let shown = ok(url, &["game", "show", "s-1"]);
    assert_eq!(
        shown[0], "game s-1 (russian) running, black to move",
        "{shown:#?}"
    );
    for want in [
        "  event     Spring Open, round 2, board 1",
        "  white     Abaturov, Ivan (FMJD 14523, RUS, 2410)",
        "  black     Borisov, Oleg (NED, unrated)",
        "  rules     russian draughts, classic rules (RU 1.9.1); claims wait for the arbiter",
        "  time      5m+3s; broadcast delay 15:00.0",
    ] {
        assert!(shown.contains(&want.to_string()), "{want:?} in {shown:#?}");
    }
    let site = line_starting(&shown, "  site      ");
    let today = chrono::Utc::now().with_timezone(&chrono_tz::Europe::Moscow);
    let yesterday = today - chrono::Duration::minutes(1);
    assert!(
        [today, yesterday]
            .iter()
            .any(|d| site == format!("  site      Moscow, Russia, {}", d.format("%Y-%m-%d"))),
        "{site}"
    );
    let clocks = line_starting(&shown, "  clocks    ");
    assert!(
        clocks.starts_with("  clocks    white ") && clocks.contains(", black "),
        "{clocks}"
    );
    let claim = line_starting(&shown, "  claim     ");
    assert!(
        claim.starts_with("  claim     black claimed a draw by repetition (#")
            && claim.ends_with("), waiting for a ruling"),
        "{claim}"
    );
    let warning = line_starting(&shown, "  warning   ");
    assert!(
        warning.starts_with("  warning   #") && warning.ends_with(" to black: talking (RU 1.9.4)"),
        "{warning}"
    );
    line_starting(
        &shown,
        "  score sheet (each move: the time spent, then White's / Black's clock after it)",
    );
    let first = line_starting(&shown, "  1. ");
    let words: Vec<&str> = first.split_whitespace().collect();
    // 1. c3-d4 0.0 s W / B f6-g5 0.4 s W / B (W, B: the clocks after the move)
    assert_eq!(words.len(), 13, "{first}");
    assert_eq!(
        (words[1], words[3], words[5]),
        ("c3-d4", "s", "/"),
        "{first}"
    );
    assert_eq!(
        (words[7], words[9], words[11]),
        ("f6-g5", "s", "/"),
        "{first}"
    );
    for clock in [words[4], words[6], words[10], words[12]] {
        assert!(
            clock.contains(':') && clock.contains('.'),
            "{clock} in {first}"
        );
    }
    let second = line_starting(&shown, "  2. ");
    assert!(second.starts_with("  2. g3-f4  "), "{second}");
    assert_eq!(second.matches(" / ").count(), 1, "{second}");
    assert!(
        !shown.iter().any(|l| l.starts_with("  final")),
        "{shown:#?}"
    );
    // The arbiter rules; black resigns; s-2 is drawn by agreement.
    ok(
        url,
        &[
            "arbiter",
            "rule-claim",
            "s-1",
            "incorrect",
            "--reason",
            "no repetition",
        ],
    );
    let resigned = ok(url, &["game", "resign", "s-1", "--side", "black"]);
    event_line(&resigned, "game over: white wins by resignation");
    ok(url, &["game", "start", "s-2"]);
    ok(url, &["game", "move", "s-2", "c3-d4"]);
    ok(url, &["game", "offer", "s-2", "--side", "black"]);
    let agreed = ok(
        url,
        &["game", "respond", "s-2", "accept", "--side", "white"],
    );
    event_line(&agreed, "game over: draw by agreement");

    // A finished game: the result in words with its rule, no side to move, the final
    // line under the score sheet.
    let shown = ok(url, &["game", "show", "s-1"]);
    assert!(
        shown[0].starts_with("game s-1 (russian) finished: White wins by resignation (RU "),
        "{shown:#?}"
    );
    let result = shown[0].split_once("finished: ").expect("the result").1;
    assert_eq!(
        shown[shown.len() - 2],
        format!("  final     {result}"),
        "{shown:#?}"
    );
    assert!(
        shown.last().expect("a line").starts_with("  last seq  "),
        "{shown:#?}"
    );
    assert!(!shown.iter().any(|l| l.contains("to move")), "{shown:#?}");
    assert!(
        !shown.iter().any(|l| l.starts_with("  claim")),
        "{shown:#?}"
    );
    let drawn = ok(url, &["game", "show", "s-2"]);
    assert!(
        drawn[0].starts_with("game s-2 (russian) finished: Draw by agreement (RU "),
        "{drawn:#?}"
    );
    line_starting(&drawn, "  1. c3-d4  ");
    for lines in [&shown, &drawn] {
        for l in lines.iter() {
            for raw in [
                "SIDE_",
                "GAME_",
                "RESULT_",
                "VARIANT_",
                "BOARD_HEALTH",
                "draw by draw",
                "draw agreed",
            ] {
                assert!(!l.contains(raw), "{raw:?} in {l}");
            }
        }
    }

    // The list of a round: board, game, players, clocks, result.
    let listed = ok(
        url,
        &["game", "list", "--event", "Spring Open", "--round", "2"],
    );
    assert_eq!(
        cells(&listed[0]),
        [
            "board",
            "game",
            "white",
            "black",
            "clocks (white black)",
            "status"
        ],
        "{listed:#?}"
    );
    assert_eq!(listed.len(), 3, "{listed:#?}");
    let row1 = cells(line_starting(&listed, "1 "));
    assert_eq!(
        &row1[..4],
        ["1", "s-1", "Abaturov, Ivan", "Borisov, Oleg"],
        "{row1:?}"
    );
    assert_eq!(row1[5], "white wins by resignation", "{row1:?}");
    let row2 = cells(line_starting(&listed, "2 "));
    assert_eq!(
        &row2[..4],
        ["2", "s-2", "Chizhov, Alexei", "Dyachenko, Pavel"],
        "{row2:?}"
    );
    assert_eq!(row2[5], "draw by agreement", "{row2:?}");
    let clocks: Vec<&str> = row2[4].split(' ').collect();
    assert!(
        clocks.len() == 2 && clocks.iter().all(|c| c.contains(':')),
        "{row2:?}"
    );
    // Unfiltered: the event and round are columns too.
    let all = ok(url, &["game", "list"]);
    assert_eq!(
        cells(&all[0]),
        [
            "event",
            "round",
            "board",
            "game",
            "white",
            "black",
            "clocks (white black)",
            "status"
        ]
    );
    let row3 = cells(
        all.iter()
            .find(|l| l.contains(" s-3 "))
            .expect("s-3 listed"),
    );
    assert_eq!(
        row3,
        [
            "Spring Open",
            "3",
            "1",
            "s-3",
            "Egorov, Mikhail",
            "Fedorov, Ilya",
            "untimed",
            "not started"
        ]
    );
    // --json stays the wire's names.
    let json = json_lines(&ok(
        url,
        &["game", "--json", "list", "--event", "Spring Open"],
    ));
    assert_eq!(json.len(), 3);
    assert!(
        json.iter()
            .any(|g| g["game"]["result"] == "GAME_RESULT_WHITE_WINS")
    );
    let g = &json_lines(&ok(url, &["game", "--json", "show", "s-1"]))[0]["game"];
    assert_eq!(g["status"], "GAME_STATUS_FINISHED");
    assert_eq!(g["result_reason"], "RESULT_REASON_RESIGNATION");

    // Export: a game, a round, an event.
    let pdn = |args: &[&str]| ok(url, args).join("\n");
    let one = pdn(&["game", "export", "s-1"]);
    assert_eq!(one.matches("[Event \"Spring Open\"]").count(), 1, "{one}");
    assert_eq!(one, pdn(&["game", "pdn", "s-1"]), "`pdn` is `export`");
    let round = pdn(&["game", "export", "--event", "Spring Open", "--round", "2"]);
    assert_eq!(
        round.matches("[Event \"Spring Open\"]").count(),
        2,
        "{round}"
    );
    assert_eq!(round.matches("[Round \"2\"]").count(), 2, "{round}");
    assert!(
        round.contains("[White \"Abaturov, Ivan\"]")
            && round.contains("[White \"Chizhov, Alexei\"]")
    );
    assert!(!round.contains("Egorov"), "{round}");
    assert!(!round.contains("draw, draw agreed"), "{round}");
    let event = pdn(&["game", "export", "--event", "Spring Open"]);
    assert_eq!(
        event.matches("[Event \"Spring Open\"]").count(),
        3,
        "{event}"
    );
    let err = fails(
        url,
        Some(TOKEN),
        &["game", "export", "--event", "Spring Open", "--round", "9"],
    );
    assert!(err.starts_with("error: NOT_FOUND: "), "{err}");
    // Usage errors (exit 2): a round without its event, an id with an event, nothing.
    for args in [
        &["game", "export", "--round", "2"][..],
        &["game", "export", "s-1", "--event", "Spring Open"],
        &["game", "export"],
    ] {
        assert_eq!(
            cli_raw(url, Some(TOKEN), args).status.code(),
            Some(2),
            "{args:?}"
        );
    }
}
