//! Issue 37, item 4: damage found before it is served. A log written by the real server
//! binary (two finished games, two running ones), stopped, then damaged on disk the way a
//! disk or an operator damages it: bytes flipped in an index page, in a table page inside
//! a finished game's rows, in page 1 (the header); the file truncated; impossible and
//! implausible alive marks; a zero-length file. For each: what `check` says (exit code,
//! the game named), what the server does at start (refuses naming the file and the
//! repair, or serves with the damaged game quarantined), and what GetGame, ListGames and
//! a move on a healthy running game answer.
//!
//! Which page holds what is found by walking SQLite's b-trees from their root pages
//! (`sqlite_master.rootpage`); the damage is the same on every run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use tonic::Code;

use super::quarantine::{
    BIN, CONFIG, MOVES, Server, authed, cli, free_port, game, get, list, resign, text,
};

/// The games of every log: "a-long" finished with many events (its rows fill table
/// pages of their own), "b-short" finished, "c-run" and "d-run" running.
async fn written_log(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    let s = Server::start(&data).await;
    game(&s, "a-long", 1, "", &MOVES).await;
    let mut arbiter = pb::arbiter_service_client::ArbiterServiceClient::new(s.channel());
    for i in 0..48 {
        arbiter
            .issue_warning(authed(
                "arb",
                pb::IssueWarningRequest {
                    game_id: "a-long".into(),
                    side: pb::Side::White as i32,
                    reason: format!("warning {i}: {}", "noise at the board ".repeat(8)),
                    rule: String::new(),
                },
            ))
            .await
            .expect("warning");
    }
    resign(&s, "a-long").await;
    game(&s, "b-short", 2, "", &MOVES).await;
    resign(&s, "b-short").await;
    game(&s, "c-run", 3, "90m+30s", &MOVES).await;
    game(&s, "d-run", 4, "90m+30s", &MOVES[..2]).await;
    s.stop().await;
    data
}

fn db(data: &Path) -> PathBuf {
    data.join("arbiter.sqlite")
}

fn check(data: &Path) -> (Option<i32>, String) {
    let out = cli(&["check", "--data-dir", data.to_str().expect("utf-8")]);
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

/// Starts the server binary on `data` expecting it to refuse: its exit code and what it
/// said.
fn refused_start(data: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let config = data.with_extension("toml");
    std::fs::write(&config, CONFIG).expect("config");
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("ARBITER_") {
            cmd.env_remove(&key);
        }
    }
    let mut child = cmd
        .arg("serve")
        .arg("--listen")
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(&config)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server binary");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "the server started instead of refusing:\n{}",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

fn varint(b: &[u8], mut i: usize) -> (u64, usize) {
    let mut v = 0u64;
    for k in 0..9 {
        let c = b[i];
        i += 1;
        if k == 8 {
            return ((v << 8) | u64::from(c), i);
        }
        v = (v << 7) | u64::from(c & 0x7f);
        if c < 0x80 {
            break;
        }
    }
    (v, i)
}

/// The file's pages (1-based page `n` is `pages[n - 1]`) and its page size.
struct File {
    bytes: Vec<u8>,
    size: usize,
}

impl File {
    fn read(path: &Path) -> File {
        let conn = rusqlite::Connection::open(path).expect("open");
        let size: i64 = conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .expect("page_size");
        drop(conn);
        File {
            bytes: std::fs::read(path).expect("read"),
            size: usize::try_from(size).expect("size"),
        }
    }

    fn page(&self, n: usize) -> &[u8] {
        &self.bytes[(n - 1) * self.size..n * self.size]
    }

    /// The b-tree header's offset in page `n` (page 1 has the file header first).
    fn header(n: usize) -> usize {
        if n == 1 { 100 } else { 0 }
    }

    /// The leaf pages of the b-tree rooted at `root`, left to right.
    fn leaves(&self, root: usize) -> Vec<usize> {
        let p = self.page(root);
        let h = File::header(root);
        match p[h] {
            0x0d | 0x0a => vec![root],
            0x05 | 0x02 => {
                let cells = usize::from(u16::from_be_bytes([p[h + 3], p[h + 4]]));
                let mut out = Vec::new();
                for k in 0..cells {
                    let at =
                        usize::from(u16::from_be_bytes([p[h + 12 + 2 * k], p[h + 13 + 2 * k]]));
                    let child = u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]]);
                    out.extend(self.leaves(child as usize));
                }
                let right = u32::from_be_bytes([p[h + 8], p[h + 9], p[h + 10], p[h + 11]]);
                out.extend(self.leaves(right as usize));
                out
            }
            t => panic!("page {root}: b-tree page type {t:#x}"),
        }
    }

    /// The offsets of page `n`'s cells, in key order.
    fn cells(&self, n: usize) -> Vec<usize> {
        let p = self.page(n);
        let h = File::header(n);
        let count = usize::from(u16::from_be_bytes([p[h + 3], p[h + 4]]));
        (0..count)
            .map(|k| usize::from(u16::from_be_bytes([p[h + 8 + 2 * k], p[h + 9 + 2 * k]])))
            .collect()
    }

    /// The rowids of a table leaf page.
    fn rowids(&self, n: usize) -> Vec<u64> {
        let p = self.page(n);
        self.cells(n)
            .into_iter()
            .map(|at| {
                let (_, i) = varint(p, at);
                varint(p, i).0
            })
            .collect()
    }

    /// Where, in the file, the game id of each entry (game_id, seq, rowid) of an index
    /// leaf page starts, with the id and the seq.
    fn index_entries(&self, n: usize) -> Vec<(String, u64, usize)> {
        let p = self.page(n);
        self.cells(n)
            .into_iter()
            .map(|at| {
                let (_, record) = varint(p, at);
                let (header_len, mut i) = varint(p, record);
                let mut types = Vec::new();
                while i < record + header_len as usize {
                    let (t, next) = varint(p, i);
                    types.push(t);
                    i = next;
                }
                let body = record + header_len as usize;
                let id_len = ((types[0] - 13) / 2) as usize;
                let id = String::from_utf8_lossy(&p[body..body + id_len]).into_owned();
                // Serial types 8 and 9 are the constants 0 and 1, with no bytes.
                let (seq_len, constant) = match types[1] {
                    t @ 1..=4 => (t as usize, 0),
                    5 => (6, 0),
                    6 => (8, 0),
                    8 => (0, 0),
                    9 => (0, 1),
                    t => panic!("seq serial type {t}"),
                };
                let mut seq = constant;
                for b in &p[body + id_len..body + id_len + seq_len] {
                    seq = (seq << 8) | u64::from(*b);
                }
                (id, seq, (n - 1) * self.size + body)
            })
            .collect()
    }

    fn write(&self, path: &Path) {
        std::fs::write(path, &self.bytes).expect("write");
    }
}

fn root_page(path: &Path, name: &str) -> usize {
    let conn = rusqlite::Connection::open(path).expect("open");
    let root: i64 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .expect(name);
    usize::try_from(root).expect("root")
}

fn rowid_range(path: &Path, game: &str) -> (u64, u64) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.query_row(
        "SELECT MIN(id), MAX(id) FROM events WHERE game_id = ?1",
        [game],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
    )
    .expect("range")
}

async fn move_on(s: &Server, id: &str, notation: &str) -> Result<pb::Game, tonic::Status> {
    s.games()
        .submit_move(authed(
            "arb",
            pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: notation.into(),
                ..Default::default()
            },
        ))
        .await
        .map(|r| r.into_inner().game.expect("game"))
}

/// Waits until a viewer's ListGames leaves the damaged game out (the background check of
/// the finished games' logs quarantines it) and the arbiter's shows it quarantined with
/// `seq`; every ListGames on the way answers OK.
async fn listed_quarantined(s: &Server, damaged: &str) -> pb::Quarantine {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let ids: Vec<String> = list(s, "view", false)
            .await
            .into_iter()
            .map(|g| g.id)
            .collect();
        if !ids.iter().any(|id| id == damaged) {
            break;
        }
        assert!(Instant::now() < deadline, "a viewer still lists {ids:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for include_moves in [false, true] {
        let ids: Vec<String> = list(s, "view", include_moves)
            .await
            .into_iter()
            .map(|g| g.id)
            .collect();
        let mut want: Vec<&str> = vec!["a-long", "b-short", "c-run", "d-run"];
        want.retain(|id| *id != damaged);
        assert_eq!(ids, want, "viewer, moves {include_moves}");
    }
    list(s, "arb", true)
        .await
        .into_iter()
        .find(|g| g.id == damaged)
        .and_then(|g| g.quarantine)
        .expect("the arbiter sees the damaged game quarantined")
}

/// The healthy games answer, and a healthy running game takes a move.
async fn healthy_serve(s: &Server, damaged: &str, (game, notation): (&str, &str)) {
    for id in ["a-long", "b-short", "c-run", "d-run"] {
        if id == damaged {
            continue;
        }
        let g = get(s, "view", id)
            .await
            .unwrap_or_else(|e| panic!("GetGame {id}: {e}"));
        let running = id.ends_with("-run");
        assert_eq!(
            g.status == pb::GameStatus::Running as i32,
            running,
            "{id}: {g:?}"
        );
    }
    move_on(s, game, notation)
        .await
        .expect("a move on a healthy running game");
}

/// The last index entry of a finished game is changed to name a game that does not
/// exist (the b-tree stays in order): its log read through the index loses its last
/// event (the resignation) and still replays. The old `check` said it was clean, and the
/// server served the game as running.
#[tokio::test]
async fn an_index_row_gone_is_found_and_its_game_quarantined() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = written_log(dir.path()).await;
    let path = db(&data);
    let mut file = File::read(&path);
    let root = root_page(&path, "events_by_game");
    let (_, seq, at) = file
        .leaves(root)
        .into_iter()
        .flat_map(|leaf| file.index_entries(leaf))
        .filter(|(id, _, _)| id == "b-short")
        .max_by_key(|(_, seq, _)| *seq)
        .expect("b-short's index entries");
    // "b-short" -> "b-shoru": after every b-short entry, before "c-run".
    file.bytes[at + 6] = b'u';
    file.write(&path);

    let (code, out) = check(&data);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("missing from index events_by_game") && out.contains("game b-short"),
        "{out}"
    );
    assert!(
        out.contains(&format!("game b-short: seq {seq}")),
        "the seq the index lost: {out}"
    );
    assert!(
        !out.contains("game a-long") && !out.contains("game c-run"),
        "{out}"
    );

    let s = Server::start(&data).await;
    let q = listed_quarantined(&s, "b-short").await;
    assert_eq!(q.seq, seq, "{q:?}");
    for token in ["view", "arb"] {
        let e = get(&s, token, "b-short").await.expect_err("quarantined");
        assert_eq!(e.code(), Code::DataLoss, "{e}");
    }
    healthy_serve(&s, "b-short", ("c-run", "b2-c3")).await;
    assert_eq!(s.metric("arbiter_quarantined_games").await, 1.0);
    s.stop().await;
}

/// A table page holding only rows of the finished game "a-long" has its b-tree header
/// flipped: SQLite answers "database disk image is malformed" for that game's rows. It
/// answered UNAVAILABLE (a code that invites retries); now the game is quarantined
/// (DATA_LOSS, naming the first seq not read) and every other game serves.
#[tokio::test]
async fn a_damaged_table_page_quarantines_its_game_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = written_log(dir.path()).await;
    let path = db(&data);
    let mut file = File::read(&path);
    let (first, last) = rowid_range(&path, "a-long");
    let own: Vec<usize> = file
        .leaves(root_page(&path, "events"))
        .into_iter()
        .filter(|&leaf| {
            let ids = file.rowids(leaf);
            !ids.is_empty() && ids.iter().all(|id| (first..=last).contains(id))
        })
        .collect();
    assert!(own.len() >= 3, "a-long fills pages of its own: {own:?}");
    let page = own[1];
    let start = (page - 1) * file.size;
    for b in &mut file.bytes[start..start + 8] {
        *b ^= 0xff;
    }
    file.write(&path);

    let (code, out) = check(&data);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("integrity: "), "SQLite's check ran: {out}");
    assert!(out.contains("game a-long: unreadable"), "{out}");
    assert!(
        !out.contains("game b-short") && !out.contains("game c-run"),
        "{out}"
    );

    let s = Server::start(&data).await;
    let e = get(&s, "view", "a-long").await.expect_err("damaged");
    assert_eq!(e.code(), Code::DataLoss, "{e}");
    assert!(e.message().contains("malformed"), "{}", e.message());
    let q = listed_quarantined(&s, "a-long").await;
    assert!(q.seq > 1 && q.reason.contains("unreadable"), "{q:?}");
    healthy_serve(&s, "a-long", ("c-run", "b2-c3")).await;
    let log = std::fs::read_to_string(&s.log).expect("log");
    assert!(
        log.contains("game quarantined") && log.contains("a-long"),
        "{log}"
    );
    s.stop().await;
}

/// Page 1's first bytes (the "SQLite format 3" magic) flipped: not a database. `check`
/// says so (exit 1, not 2: the log is damaged, not absent); the server refuses to start,
/// naming the file and the repair.
#[tokio::test]
async fn a_damaged_header_is_refused_naming_the_file_and_the_repair() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = written_log(dir.path()).await;
    let path = db(&data);
    let mut file = File::read(&path);
    for b in &mut file.bytes[..16] {
        *b ^= 0xff;
    }
    file.write(&path);

    let (code, out) = check(&data);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("damaged") && out.contains("not a database"),
        "{out}"
    );

    let (code, said) = refused_start(&data, &[]);
    assert_ne!(code, Some(0), "{said}");
    assert!(
        said.contains(&path.display().to_string())
            && said.contains("check --data-dir")
            && said.contains("export"),
        "{said}"
    );
}

/// The file cut short by its last page (a copy that stopped early, a full disk). The
/// last pages hold the games table (its rows are rewritten with every finished game), so
/// the games cannot be listed: the server refuses, naming the file and the repair, where
/// it answered UNAVAILABLE to every ListGames with the running games unloaded.
#[tokio::test]
async fn a_truncated_file_is_found_and_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = written_log(dir.path()).await;
    let path = db(&data);
    let file = File::read(&path);
    let len = file.bytes.len() - file.size;
    std::fs::write(&path, &file.bytes[..len]).expect("truncate");

    let (code, out) = check(&data);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("cut short by {} bytes", file.size)),
        "{out}"
    );

    let (code, said) = refused_start(&data, &[]);
    assert_ne!(code, Some(0), "{said}");
    assert!(
        said.contains(&path.display().to_string()) && said.contains("check --data-dir"),
        "{said}"
    );
}

fn set_mark(data: &Path, ms: i64) {
    let conn = rusqlite::Connection::open(db(data)).expect("open");
    conn.execute("UPDATE service SET alive_at_ms = ?1 WHERE id = 1", [ms])
        .expect("mark");
}

/// An impossible alive mark (negative; past the year 9999) is named by `check` (exit 1);
/// the server starts, logs it naming the file, ignores it, and serves every game. The
/// negative mark stopped the start while `check` said clean. A mark an hour ahead of the
/// clock is possible (the clock may have stepped back): a warning, exit 0.
#[tokio::test]
async fn impossible_alive_marks_are_named_and_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = written_log(dir.path()).await;
    let path = db(&data);
    for (mark, says, play) in [
        (-5_i64, "negative", ("c-run", "b2-c3")),
        (300_000_000_000_000, "year 9999", ("d-run", "g3-f4")),
    ] {
        set_mark(&data, mark);
        let (code, out) = check(&data);
        assert_eq!(code, Some(1), "mark {mark}: {out}");
        assert!(out.contains("alive mark") && out.contains(says), "{out}");

        let s = Server::start(&data).await;
        healthy_serve(&s, "", play).await;
        assert_eq!(list(&s, "view", false).await.len(), 4);
        let log = std::fs::read_to_string(&s.log).expect("log");
        assert!(
            log.contains(says) && log.contains(&path.display().to_string()),
            "{log}"
        );
        s.stop().await;
    }
    let now = chrono::Utc::now().timestamp_millis();
    set_mark(&data, now + 3_600_000);
    let (code, out) = check(&data);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("warning: alive mark"), "{out}");
}

/// The database emptied (0 bytes) or removed while its WAL, shared-memory index and
/// marker stay: `check` says so (exit 1); the server refuses to start an empty log there
/// unless told `--init`, which sets the old files aside. It started empty without a word.
#[tokio::test]
async fn an_emptied_log_is_refused_unless_init() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = written_log(dir.path()).await;
    let path = db(&data);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open")
        .set_len(0)
        .expect("truncate");

    let (code, out) = check(&data);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("empty (0 bytes)"), "{out}");

    let (code, said) = refused_start(&data, &[]);
    assert_ne!(code, Some(0), "{said}");
    assert!(
        said.contains(&path.display().to_string()) && said.contains("--init"),
        "{said}"
    );

    std::fs::remove_file(&path).expect("remove");
    let (code, said) = refused_start(&data, &[]);
    assert_ne!(code, Some(0), "{said}");
    assert!(said.contains("is missing"), "{said}");

    let s = Server::start_with(&data, &["--init"]).await;
    assert!(list(&s, "view", false).await.is_empty());
    game(&s, "fresh", 1, "", &MOVES[..1]).await;
    s.stop().await;
    let aside = std::fs::read_dir(&data)
        .expect("data dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".set-aside-"))
        .count();
    assert!(aside >= 1, "the old files are set aside");
    let (code, out) = check(&data);
    assert_eq!(code, Some(0), "{out}");

    // A new directory starts silently, as always.
    let fresh = dir.path().join("new");
    let s = Server::start(&fresh).await;
    assert!(list(&s, "view", false).await.is_empty());
    s.stop().await;
}
