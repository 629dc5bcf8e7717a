//! The live board page in a real browser (issue #14 item 5): the release-built server and
//! headless Chromium, driven through chromedriver's WebDriver HTTP protocol (a small
//! HTTP/1.1 client over a TCP stream; no WebDriver crate).
//!
//! One round of three boards (Russian and International running, an English game with a
//! warning and a result): the page shows each start position (pieces counted from the
//! DOM), a move made through `GameService/SubmitMove` within a second, the running clock
//! counting down, survives a server restart on the same port and data directory (it
//! resumes from the stream's cursor: the move after the restart appears, none twice),
//! adds the board of a game created meanwhile, and stops when the round has finished.
//! Then a second server with tokens and a broadcast delay: the public (no token) sees a
//! move only after the delay, an arbiter's token (`?token=`) at once. A screenshot is
//! saved to `target/browser/live.png`.
//!
//! Skipped, saying so, when `/usr/bin/chromium` or `/usr/bin/chromedriver` is missing
//! (`apt-get install chromium chromium-driver`; `.ci/run` installs them).

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::rules_service_client::RulesServiceClient;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{sleep, timeout};
use tonic::Request;
use tonic::transport::{Channel, Endpoint};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The event of the main round (a space, to be percent-encoded in the page's URL).
const EVENT: &str = "Open 2026";
const DELAYED_EVENT: &str = "Delayed Cup";
const DELAY_MS: u64 = 3_000;

pub(crate) fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local address")
        .port()
}

// ---------------------------------------------------------------------------
// The server binary
// ---------------------------------------------------------------------------

pub(crate) struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    pub(crate) fn spawn(data: &Path, port: u16, config: Option<&Path>, log: &Path) -> Server {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("server log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"));
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ARBITER_") {
                cmd.env_remove(&key);
            }
        }
        cmd.arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(data);
        if let Some(config) = config {
            cmd.arg("--config").arg(config);
        }
        cmd.env("ARBITER_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file));
        Server {
            child: cmd.spawn().expect("start the server binary"),
            port,
            log: log.to_path_buf(),
        }
    }

    pub(crate) fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Waits until a cheap RPC is answered (with `token` when the server has tokens).
    pub(crate) async fn ready(&mut self, token: Option<&str>) -> Channel {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("server exited: {status}\n{}", self.log_tail());
            }
            assert!(
                Instant::now() < deadline,
                "server not ready\n{}",
                self.log_tail()
            );
            let endpoint = Endpoint::from_shared(format!("http://127.0.0.1:{}", self.port))
                .expect("endpoint")
                .connect_timeout(Duration::from_millis(500));
            if let Ok(Ok(channel)) = timeout(Duration::from_secs(1), endpoint.connect()).await {
                let mut rules = RulesServiceClient::new(channel.clone());
                let probe = rules.legal_moves(authed(
                    pb::LegalMovesRequest {
                        variant: pb::Variant::Russian as i32,
                        fen: String::new(),
                    },
                    token,
                ));
                if let Ok(Ok(_)) = timeout(Duration::from_secs(2), probe).await {
                    return channel;
                }
            }
            sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGTERM (a graceful stop: streams end with UNAVAILABLE) and reap.
    pub(crate) fn stop(&mut self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill(1)");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().expect("wait").is_none() {
            assert!(Instant::now() < deadline, "server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn authed<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token {
        r.metadata_mut().insert(
            "authorization",
            format!("Bearer {t}").parse().expect("header"),
        );
    }
    r
}

pub(crate) fn player(name: &str, federation: &str, rating: u32) -> Option<pb::Player> {
    Some(pb::Player {
        name: name.into(),
        federation: federation.into(),
        rating,
        ..Default::default()
    })
}

#[allow(clippy::too_many_arguments)]
async fn create(
    games: &mut GameServiceClient<Channel>,
    token: Option<&str>,
    id: &str,
    event: &str,
    board: u32,
    variant: pb::Variant,
    time_control: &str,
    names: (&str, &str),
) {
    games
        .create_game(authed(
            pb::CreateGameRequest {
                game_id: id.into(),
                variant: variant as i32,
                time_control: time_control.into(),
                white: player(names.0, "NED", 2310),
                black: player(names.1, "UKR", 2284),
                event: event.into(),
                round: "1".into(),
                board,
                ..Default::default()
            },
            token,
        ))
        .await
        .expect("create game");
    games
        .start_game(authed(
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
            token,
        ))
        .await
        .expect("start game");
}

async fn play(games: &mut GameServiceClient<Channel>, token: Option<&str>, id: &str, mv: &str) {
    games
        .submit_move(authed(
            pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: mv.into(),
                ..Default::default()
            },
            token,
        ))
        .await
        .unwrap_or_else(|e| panic!("move {mv} in {id}: {e}"));
}

// ---------------------------------------------------------------------------
// WebDriver over HTTP/1.1
// ---------------------------------------------------------------------------

/// One HTTP/1.1 exchange: the status code and the body. The body is read by its
/// `Content-Length` (chromedriver says `Connection: close` but keeps the socket open),
/// else to the end of the stream.
async fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, Vec<u8>) {
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        let payload = body.map(Value::to_string).unwrap_or_default();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
             Content-Length: {}\r\n",
            payload.len()
        );
        if body.is_some() {
            head.push_str("Content-Type: application/json; charset=utf-8\r\n");
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).await?;
        s.write_all(payload.as_bytes()).await?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            if let Some((end, length)) = head_of(&raw)
                && raw.len() >= end + length.unwrap_or(usize::MAX)
            {
                break;
            }
            let n = s.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        Ok::<_, std::io::Error>(raw)
    };
    let raw = timeout(Duration::from_secs(60), exchange)
        .await
        .unwrap_or_else(|_| panic!("{method} {path}: no answer in 60 s"))
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let (end, length) = head_of(&raw).unwrap_or_else(|| panic!("{method} {path}: no HTTP head"));
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: bad status line {head}"));
    let body = &raw[end..];
    let body = &body[..length.unwrap_or(body.len()).min(body.len())];
    (status, body.to_vec())
}

/// Where a response's head ends (the body's first byte) and its `Content-Length`.
fn head_of(raw: &[u8]) -> Option<(usize, Option<usize>)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let length = head.lines().find_map(|line| {
        line.strip_prefix("content-length:")
            .and_then(|v| v.trim().parse().ok())
    });
    Some((end, length))
}

pub(crate) struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    pub(crate) async fn start(profile: &Path) -> Browser {
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let up = timeout(
                Duration::from_secs(2),
                tokio::net::TcpStream::connect(("127.0.0.1", port)),
            )
            .await;
            if matches!(up, Ok(Ok(_))) {
                let (code, body) = http(port, "GET", "/status", None).await;
                let status: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                if code == 200 && status["value"]["ready"] == json!(true) {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            sleep(Duration::from_millis(50)).await;
        }
        let args = [
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1440,1500".into(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": { "binary": CHROMIUM, "args": args }
                }
            }
        });
        let (code, body) = http(port, "POST", "/session", Some(&caps)).await;
        let reply: Value = serde_json::from_slice(&body).expect("session JSON");
        assert_eq!(code, 200, "new session: {reply}");
        browser.session = reply["value"]["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        browser
    }

    pub(crate) async fn command(&self, method: &str, what: &str, body: Option<&Value>) -> Value {
        let path = format!("/session/{}/{what}", self.session);
        let (code, raw) = http(self.port, method, &path, body).await;
        let reply: Value = serde_json::from_slice(&raw).expect("WebDriver JSON");
        assert_eq!(code, 200, "{method} {what}: {reply}");
        reply["value"].clone()
    }

    pub(crate) async fn open(&self, url: &str) {
        self.command("POST", "url", Some(&json!({ "url": url })))
            .await;
    }

    /// Runs a script in the page (`return …;`) and gives its value.
    pub(crate) async fn eval(&self, script: &str) -> Value {
        self.command(
            "POST",
            "execute/sync",
            Some(&json!({ "script": script, "args": [] })),
        )
        .await
    }

    /// Polls `script` until `done` holds for its value; the value and the time it took.
    pub(crate) async fn wait_for(
        &self,
        what: &str,
        script: &str,
        limit: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> (Value, Duration) {
        let start = Instant::now();
        loop {
            let v = self.eval(script).await;
            if done(&v) {
                return (v, start.elapsed());
            }
            assert!(
                start.elapsed() < limit,
                "{what}: not within {limit:?}; last value {v}"
            );
            sleep(Duration::from_millis(20)).await;
        }
    }

    /// The WebDriver id of the first element `css` selects (panics naming it when none).
    pub(crate) async fn find(&self, css: &str) -> String {
        let v = self
            .command(
                "POST",
                "element",
                Some(&json!({ "using": "css selector", "value": css })),
            )
            .await;
        v["element-6066-11e4-a52e-4f735466cecf"]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    /// Clicks the element `css` selects, as a user does (WebDriver's element click).
    pub(crate) async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.command("POST", &format!("element/{id}/click"), Some(&json!({})))
            .await;
    }

    /// Empties the field `css` selects and types `text` into it, key by key.
    pub(crate) async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.command("POST", &format!("element/{id}/clear"), Some(&json!({})))
            .await;
        self.command(
            "POST",
            &format!("element/{id}/value"),
            Some(&json!({ "text": text })),
        )
        .await;
    }

    /// Presses and releases `key` (a character, or a WebDriver key code such as
    /// `"\u{E00C}"` for Escape) on whatever has the focus.
    pub(crate) async fn press(&self, key: &str) {
        let actions = json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": [
            { "type": "keyDown", "value": key }, { "type": "keyUp", "value": key }
        ] }] });
        self.command("POST", "actions", Some(&actions)).await;
    }

    pub(crate) async fn screenshot(&self) -> Vec<u8> {
        let b64 = self.command("GET", "screenshot", None).await;
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().expect("base64 text"))
            .expect("base64 PNG")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ends the session (chromedriver closes Chromium), then chromedriver itself.
        if !self.session.is_empty() {
            use std::io::{Read, Write};
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let _ = write!(
                    s,
                    "DELETE /session/{} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
                     Content-Length: 0\r\n\r\n",
                    self.session
                );
                // The answer's first bytes: the session is gone (the socket stays open).
                let _ = s.read(&mut [0u8; 1024]);
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

// ---------------------------------------------------------------------------
// What the page shows
// ---------------------------------------------------------------------------

/// Per board: number, pieces (white, black), kings, the move list (seq, text), the
/// clocks' milliseconds, the result line, the notes.
const BOARDS: &str = r#"
return [...document.querySelectorAll('.game')].map(g => ({
  board: Number(g.dataset.board),
  status: g.dataset.status,
  white: g.querySelectorAll('.piece.white').length,
  black: g.querySelectorAll('.piece.black').length,
  cells: [...g.querySelectorAll('.piece')].map(p => (p.classList.contains('white') ? 'w' : 'b') + p.dataset.cell),
  moves: [...g.querySelectorAll('.mv[data-seq]')].map(m => [Number(m.dataset.seq), m.textContent]),
  last: [...g.querySelectorAll('.hl')].length,
  whiteMs: g.querySelector('.clock[data-side=white]').dataset.ms,
  blackMs: g.querySelector('.clock[data-side=black]').dataset.ms,
  names: [...g.querySelectorAll('.player .name')].map(n => n.textContent),
  result: (g.querySelector('.result') || {}).textContent || '',
  notes: [...g.querySelectorAll('.note')].map(n => n.textContent),
}));
"#;

const CONNECTION: &str = r#"
return { state: document.body.dataset.connection || '', badge: document.getElementById('status').textContent,
         start: document.body.dataset.lastStart || '', resumes: Number(document.body.dataset.resumes || 0) };
"#;

fn board(boards: &Value, n: u64) -> &Value {
    boards
        .as_array()
        .and_then(|a| a.iter().find(|b| b["board"] == json!(n)))
        .unwrap_or(&Value::Null)
}

fn moves_of(b: &Value) -> Vec<(u64, String)> {
    b["moves"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| {
                    (
                        m[0].as_u64().unwrap_or(0),
                        m[1].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn ms(v: &Value) -> i64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or(i64::MIN)
}

/// Every white piece in the rows `white_rows` (from the top) and every black one above
/// `black_below`: a start position drawn the right way up.
fn start_rows_ok(b: &Value, white_from: u32, black_to: u32) -> bool {
    b["cells"].as_array().is_some_and(|cells| {
        cells.iter().all(|c| {
            let c = c.as_str().unwrap_or("");
            let y: u32 = c
                .split(',')
                .nth(1)
                .and_then(|y| y.parse().ok())
                .unwrap_or(99);
            match c.as_bytes().first() {
                Some(b'w') => y >= white_from,
                Some(b'b') => y <= black_to,
                _ => false,
            }
        })
    })
}

pub(crate) fn skipped() -> bool {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(tool).exists() {
            eprintln!(
                "SKIPPED: browser test: {tool} is not installed \
                 (apt-get install -y chromium chromium-driver)"
            );
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_page_follows_the_round_in_chromium() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let log = dir.path().join("server.log");
    let port = free_port();
    let mut server = Server::spawn(&data, port, None, &log);
    let channel = server.ready(None).await;
    let mut games = GameServiceClient::new(channel.clone());
    let mut arbiter = ArbiterServiceClient::new(channel);
    create(
        &mut games,
        None,
        "r1",
        EVENT,
        1,
        pb::Variant::Russian,
        "10m+5s",
        ("Petrov, Ivan", "Sidorova, Anna"),
    )
    .await;
    create(
        &mut games,
        None,
        "i2",
        EVENT,
        2,
        pb::Variant::International,
        "90m+30s",
        ("de Vries, Jan", "Kovalenko, Olena"),
    )
    .await;
    create(
        &mut games,
        None,
        "e3",
        EVENT,
        3,
        pb::Variant::English,
        "",
        ("Smith, John", "Brown, Mary"),
    )
    .await;
    // Board 3: a move, a warning, a resignation: a finished game with a note.
    play(&mut games, None, "e3", "11-15").await;
    arbiter
        .issue_warning(pb::IssueWarningRequest {
            game_id: "e3".into(),
            side: pb::Side::White as i32,
            reason: "spoke to the opponent during play".into(),
            rule: String::new(),
        })
        .await
        .expect("warning");
    games
        .resign(pb::ResignRequest {
            game_id: "e3".into(),
            side: pb::Side::White as i32,
            expected_seq: 0,
        })
        .await
        .expect("resign");

    let profile = dir.path().join("chromium-profile");
    let browser = Browser::start(&profile).await;
    let url = format!("http://127.0.0.1:{port}/live/Open%202026/1");
    let opened = Instant::now();
    browser.open(&url).await;

    // 1. Every board with its start position.
    let (boards, took) = browser
        .wait_for("three boards drawn", BOARDS, Duration::from_secs(15), |v| {
            v.as_array().is_some_and(|a| a.len() == 3)
                && board(v, 3)["status"] == json!("finished")
                && board(v, 1)["white"] == json!(12)
        })
        .await;
    eprintln!(
        "page up with 3 boards {:?} after navigating ({took:?} of polling)",
        opened.elapsed()
    );
    let (b1, b2, b3) = (board(&boards, 1), board(&boards, 2), board(&boards, 3));
    assert_eq!(
        (b1["white"].clone(), b1["black"].clone()),
        (json!(12), json!(12)),
        "{b1}"
    );
    assert_eq!(
        (b2["white"].clone(), b2["black"].clone()),
        (json!(20), json!(20)),
        "{b2}"
    );
    assert!(start_rows_ok(b1, 5, 2), "Russian start position: {b1}");
    assert!(
        start_rows_ok(b2, 6, 3),
        "International start position: {b2}"
    );
    assert!(moves_of(b1).is_empty() && moves_of(b2).is_empty());
    assert_eq!(
        b1["names"],
        json!(["Sidorova, Anna", "Petrov, Ivan"]),
        "black on top"
    );
    // Board 3: English, Black moved first (11-15), then White resigned.
    assert_eq!(moves_of(b3).len(), 1, "{b3}");
    assert_eq!(
        b3["last"],
        json!(2),
        "last move's from and to highlighted: {b3}"
    );
    let result = b3["result"].as_str().unwrap_or("");
    assert!(
        result.contains("0–1") && result.contains("resignation"),
        "{result}"
    );
    let notes = b3["notes"].to_string();
    assert!(
        notes.contains("Warning by the arbiter to White")
            && notes.contains("spoke to the opponent"),
        "{notes}"
    );

    // 2. A move appears within a second.
    play(&mut games, None, "r1", "c3-d4").await;
    let (after, took) = browser
        .wait_for("c3-d4 on board 1", BOARDS, Duration::from_secs(5), |v| {
            moves_of(board(v, 1)).len() == 1
        })
        .await;
    eprintln!("move c3-d4 on the page {took:?} after SubmitMove returned");
    assert!(took < Duration::from_secs(1), "the move took {took:?}");
    let b1 = board(&after, 1);
    assert_eq!(moves_of(b1)[0].1, "c3-d4");
    let cells = b1["cells"].to_string();
    // c3 = (2, 5) is empty now, d4 = (3, 4) holds the white man.
    assert!(cells.contains("w3,4") && !cells.contains("w2,5"), "{cells}");
    assert_eq!(b1["last"], json!(2), "from and to highlighted");
    play(&mut games, None, "i2", "32-28").await;
    let (_, took) = browser
        .wait_for("32-28 on board 2", BOARDS, Duration::from_secs(5), |v| {
            moves_of(board(v, 2)).len() == 1
        })
        .await;
    eprintln!("move 32-28 on the page {took:?} after SubmitMove returned");
    assert!(took < Duration::from_secs(1), "the move took {took:?}");

    // 3. Black's clock runs on board 1: read twice, a second apart.
    let first = browser.eval(BOARDS).await;
    let t1 = Instant::now();
    sleep(Duration::from_millis(1_200)).await;
    let second = browser.eval(BOARDS).await;
    let waited = t1.elapsed().as_millis() as i64;
    let (b_before, b_after) = (
        ms(&board(&first, 1)["blackMs"]),
        ms(&board(&second, 1)["blackMs"]),
    );
    let (w_before, w_after) = (
        ms(&board(&first, 1)["whiteMs"]),
        ms(&board(&second, 1)["whiteMs"]),
    );
    eprintln!(
        "black's clock {b_before} ms, then {b_after} ms {waited} ms later; white's {w_before} -> {w_after}"
    );
    assert!(b_before > 590_000 && b_before <= 600_000, "{b_before}");
    let ran = b_before - b_after;
    assert!(
        ran >= waited - 250 && ran <= waited + 250,
        "black's clock ran {ran} ms in {waited} ms"
    );
    assert_eq!(w_before, w_after, "white's clock stands");

    // 4. A server restart on the same port and data directory.
    server.stop();
    browser
        .wait_for(
            "reconnecting badge",
            CONNECTION,
            Duration::from_secs(10),
            |v| v["state"] == json!("reconnecting") && v["badge"] == json!("reconnecting…"),
        )
        .await;
    let mut server = Server::spawn(&data, port, None, &log);
    let channel = server.ready(None).await;
    let restarted = Instant::now();
    let mut games = GameServiceClient::new(channel);
    let (conn, _) = browser
        .wait_for("live again", CONNECTION, Duration::from_secs(15), |v| {
            v["state"] == json!("live")
        })
        .await;
    eprintln!(
        "page live again {:?} after the server answered: {conn}",
        restarted.elapsed()
    );
    assert_eq!(
        conn["start"],
        json!("cursor"),
        "resumed from the stream's cursor, not from the start: {conn}"
    );
    play(&mut games, None, "r1", "f6-g5").await;
    let (after, took) = browser
        .wait_for(
            "f6-g5 after the restart",
            BOARDS,
            Duration::from_secs(5),
            |v| moves_of(board(v, 1)).len() >= 2,
        )
        .await;
    eprintln!("move f6-g5 on the page {took:?} after SubmitMove returned (after the restart)");
    assert!(took < Duration::from_secs(1), "the move took {took:?}");
    let sheet = moves_of(board(&after, 1));
    assert_eq!(
        sheet.iter().map(|m| m.1.as_str()).collect::<Vec<_>>(),
        ["c3-d4", "f6-g5"],
        "no move twice: {sheet:?}"
    );
    assert!(sheet[0].0 < sheet[1].0, "seqs in order: {sheet:?}");
    assert_eq!(
        moves_of(board(&after, 2)).len(),
        1,
        "board 2 kept its one move"
    );
    assert_eq!(board(&after, 3)["notes"].as_array().map(Vec::len), Some(1));

    // A game created in the round while the page follows it gets its board.
    create(
        &mut games,
        None,
        "b4",
        EVENT,
        4,
        pb::Variant::Brazilian,
        "60m+30s",
        ("Silva, Pedro", "Santos, Lucia"),
    )
    .await;
    let (after, took) = browser
        .wait_for("board 4 added", BOARDS, Duration::from_secs(5), |v| {
            board(v, 4)["status"] == json!("playing")
        })
        .await;
    eprintln!("board 4 on the page {took:?} after it was created and started");
    let b4 = board(&after, 4);
    assert_eq!(
        (b4["white"].clone(), b4["black"].clone()),
        (json!(12), json!(12)),
        "{b4}"
    );
    assert!(start_rows_ok(b4, 5, 2), "Brazilian start position: {b4}");
    let order: Vec<u64> = after
        .as_array()
        .map(|a| a.iter().filter_map(|b| b["board"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(order, [1, 2, 3, 4], "boards in board order");

    // The screenshot, with three games running and one finished.
    sleep(Duration::from_millis(300)).await;
    let png = browser.screenshot().await;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser/live.png");
    std::fs::create_dir_all(shot.parent().expect("folder")).expect("target/browser");
    std::fs::write(&shot, &png).expect("write the screenshot");
    eprintln!("screenshot: {} ({} bytes)", shot.display(), png.len());

    // 5. The round ends: the stream ends with OK and the page stops following it.
    for (id, side) in [
        ("r1", pb::Side::White),
        ("i2", pb::Side::Black),
        ("b4", pb::Side::White),
    ] {
        games
            .resign(pb::ResignRequest {
                game_id: id.into(),
                side: side as i32,
                expected_seq: 0,
            })
            .await
            .expect("resign");
    }
    let (conn, took) = browser
        .wait_for("round finished", CONNECTION, Duration::from_secs(5), |v| {
            v["state"] == json!("finished")
        })
        .await;
    eprintln!("round finished on the page {took:?} after the last resignation: {conn}");
    let boards = browser.eval(BOARDS).await;
    for n in 1..=4 {
        assert_eq!(board(&boards, n)["status"], json!("finished"), "board {n}");
    }
    server.stop();
    sleep(Duration::from_millis(1_500)).await;
    let conn = browser.eval(CONNECTION).await;
    assert_eq!(
        conn["state"],
        json!("finished"),
        "no reconnecting after the end: {conn}"
    );

    // 6. The public broadcast delay, as the page shows it.
    let config = dir.path().join("delay.toml");
    std::fs::write(
        &config,
        format!(
            "[[tokens]]\ntoken = \"arb\"\nrole = \"arbiter\"\n\
             [events.\"{DELAYED_EVENT}\"]\nbroadcast_delay_ms = {DELAY_MS}\n"
        ),
    )
    .expect("config");
    let port = free_port();
    let mut server = Server::spawn(&dir.path().join("data-delay"), port, Some(&config), &log);
    let channel = server.ready(Some("arb")).await;
    let mut games = GameServiceClient::new(channel);
    create(
        &mut games,
        Some("arb"),
        "d1",
        DELAYED_EVENT,
        1,
        pb::Variant::Russian,
        "10m+5s",
        ("Delayed, White", "Delayed, Black"),
    )
    .await;
    browser
        .open(&format!("http://127.0.0.1:{port}/live/Delayed%20Cup/1"))
        .await;
    // The game itself reaches the public only after the delay.
    let (_, took) = browser
        .wait_for("delayed board", BOARDS, Duration::from_secs(10), |v| {
            board(v, 1)["status"] == json!("playing")
        })
        .await;
    eprintln!("delayed board shown {took:?} after opening the page");
    play(&mut games, Some("arb"), "d1", "c3-d4").await;
    let acked = Instant::now();
    let (_, took) = browser
        .wait_for("delayed move", BOARDS, Duration::from_secs(10), |v| {
            moves_of(board(v, 1)).len() == 1
        })
        .await;
    let shown = acked.elapsed();
    eprintln!("delayed move shown {shown:?} after SubmitMove returned (delay {DELAY_MS} ms)");
    assert!(
        shown >= Duration::from_millis(DELAY_MS - 300),
        "the public saw the move after {shown:?}, before the {DELAY_MS} ms delay ({took:?})"
    );
    assert!(
        shown <= Duration::from_millis(DELAY_MS + 1_000),
        "the delayed move took {shown:?}"
    );
    let boards = browser.eval(BOARDS).await;
    let clock = ms(&board(&boards, 1)["blackMs"]);
    assert!(
        clock > 598_000 && clock <= 600_000,
        "the delayed clock counts from the move it shows: {clock}"
    );
    // An arbiter's token (`?token=`) sees the game live.
    browser
        .open(&format!(
            "http://127.0.0.1:{port}/live/Delayed%20Cup/1?token=arb"
        ))
        .await;
    browser
        .wait_for("the arbiter's page", BOARDS, Duration::from_secs(5), |v| {
            moves_of(board(v, 1)).len() == 1
        })
        .await;
    play(&mut games, Some("arb"), "d1", "f6-g5").await;
    let (_, took) = browser
        .wait_for(
            "the arbiter's live move",
            BOARDS,
            Duration::from_secs(5),
            |v| moves_of(board(v, 1)).len() == 2,
        )
        .await;
    eprintln!("with the arbiter's token the move shows {took:?} after SubmitMove returned");
    assert!(
        took < Duration::from_secs(1),
        "the arbiter's page took {took:?}"
    );
    server.stop();
}

/// Sets the page's viewport (not the window) to `width` × `height` CSS pixels.
async fn viewport(browser: &Browser, width: i64, height: i64) {
    let mut rect = (width, height);
    for _ in 0..3 {
        browser
            .command(
                "POST",
                "window/rect",
                Some(&json!({ "width": rect.0, "height": rect.1 })),
            )
            .await;
        let inner = browser.eval("return [innerWidth, innerHeight];").await;
        let (w, h) = (
            inner[0].as_i64().unwrap_or(0),
            inner[1].as_i64().unwrap_or(0),
        );
        if (w, h) == (width, height) {
            return;
        }
        rect = (rect.0 + width - w, rect.1 + height - h);
    }
    panic!("the viewport could not be set to {width}x{height}");
}

/// Where every board of the page is, and whether the page scrolls.
const HALL: &str = r#"
const vw = innerWidth, vh = innerHeight;
const games = [...document.querySelectorAll('.game')].map(g => {
  const r = g.getBoundingClientRect();
  const b = g.querySelector('svg.board').getBoundingClientRect();
  const c = g.querySelector('.clock');
  return { top: r.top, left: r.left, bottom: r.bottom, right: r.right, board: b.width,
           boardBottom: b.bottom, clockPx: parseFloat(getComputedStyle(c).fontSize),
           names: [...g.querySelectorAll('.player .name')].map(n => n.textContent) };
});
const panel = document.getElementById('standings');
const p = panel.getBoundingClientRect();
return { vw, vh, scrollW: document.documentElement.scrollWidth, scrollH: document.documentElement.scrollHeight,
         games, standings: { hidden: panel.hidden, rows: panel.querySelectorAll('tbody tr').length,
         shown: [...panel.querySelectorAll('tbody tr')].filter(r => !r.hidden).length,
         left: p.left, right: p.right, bottom: p.bottom,
         first: (panel.querySelector('tbody tr td.name .pname') || {}).textContent || '',
         firstPts: (panel.querySelector('tbody tr td.pts') || {}).textContent || '' } };
"#;

/// Projector mode and the standings (issue 41): at 1920×1080, `?view=hall` shows every
/// board of a 6- and of a 10-board round, each board whole within the screen and nothing
/// scrolling, with large clocks and the standings panel beside them (showing the result
/// declared); `/standings/<event>` on a phone's screen (412×915) without sideways
/// scrolling. Screenshots: `target/browser/hall-6.png`, `hall-10.png`,
/// `standings-phone.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projector_mode_and_standings_page_in_chromium() {
    use draughts_arbiter::api::pb::tournament_service_client::TournamentServiceClient;
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let mut server = Server::spawn(
        &dir.path().join("data"),
        port,
        None,
        &dir.path().join("server.log"),
    );
    let ch = server.ready(None).await;
    let mut t = TournamentServiceClient::new(ch.clone());
    let mut firsts = Vec::new();
    for (name, players) in [("Hall Six", 12), ("Hall Ten", 20)] {
        t.create_tournament(pb::CreateTournamentRequest {
            name: name.into(),
            variant: pb::Variant::Russian as i32,
            system: pb::TournamentSystem::RoundRobin as i32,
            time_control: "15m+10s".into(),
            default_time_ms: Some(0),
            ..Default::default()
        })
        .await
        .expect("created");
        t.add_players(pb::AddPlayersRequest {
            tournament: name.into(),
            players: (1..=players)
                .map(|i| pb::Player {
                    name: format!("Player {i:02} {}", &name[5..]),
                    federation: "RUS".into(),
                    rating: 2000 + i,
                    ..Default::default()
                })
                .collect(),
        })
        .await
        .expect("players");
        let paired = t
            .pair_round(pb::PairRoundRequest {
                tournament: name.into(),
                round: 1,
                ..Default::default()
            })
            .await
            .expect("paired")
            .into_inner();
        t.start_round(pb::StartRoundRequest {
            tournament: name.into(),
            round: 1,
        })
        .await
        .expect("started");
        firsts.push(paired.pairings[0].clone());
    }
    // Hall Six, board 1: White wins; the standings put White first with 2 points.
    let winner = firsts[0].white.as_ref().expect("white").name.clone();
    ArbiterServiceClient::new(ch.clone())
        .declare_result(pb::DeclareResultRequest {
            game_id: firsts[0].game_ids[0].clone(),
            result: pb::GameResult::WhiteWins as i32,
            explanation: "Black resigned, reported by both players".into(),
            ..Default::default()
        })
        .await
        .expect("declared");

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let browser = Browser::start(&dir.path().join("profile")).await;
    viewport(&browser, 1920, 1080).await;
    for (event, boards, players) in [("Hall%20Six", 6, 12), ("Hall%20Ten", 10, 20)] {
        browser
            .open(&format!("http://127.0.0.1:{port}/live/{event}/1?view=hall"))
            .await;
        let (hall, _) = browser
            .wait_for(
                "every board and the standings",
                HALL,
                Duration::from_secs(20),
                |v| {
                    v["games"].as_array().is_some_and(|g| g.len() == boards)
                        && v["standings"]["rows"] == json!(players)
                        && v["games"]
                            .as_array()
                            .is_some_and(|g| g.iter().all(|g| g["names"][0] != json!("Black")))
                },
            )
            .await;
        // Laid out (the grid is set once the cards are in).
        sleep(Duration::from_millis(300)).await;
        let hall = {
            let again = browser.eval(HALL).await;
            if again["games"].as_array().map(Vec::len) == Some(boards) {
                again
            } else {
                hall
            }
        };
        let (vw, vh) = (
            hall["vw"].as_f64().unwrap_or(0.0),
            hall["vh"].as_f64().unwrap_or(0.0),
        );
        assert_eq!((vw, vh), (1920.0, 1080.0));
        assert!(
            hall["scrollW"].as_f64() <= Some(vw) && hall["scrollH"].as_f64() <= Some(vh),
            "nothing scrolls: {hall}"
        );
        for g in hall["games"].as_array().expect("games") {
            let f = |k: &str| g[k].as_f64().unwrap_or(f64::NAN);
            assert!(
                f("top") >= 0.0 && f("left") >= 0.0 && f("bottom") <= vh && f("right") <= vw,
                "board within the screen: {g}"
            );
            assert!(f("boardBottom") <= vh, "the whole board shows: {g}");
            assert!(f("board") >= 200.0, "boards readable from the hall: {g}");
            assert!(f("clockPx") >= 28.0, "large clocks: {g}");
            assert!(
                f("right") <= hall["standings"]["left"].as_f64().unwrap_or(0.0) + 1.0,
                "the standings beside the boards: {g}"
            );
        }
        assert_eq!(hall["standings"]["hidden"], json!(false));
        assert!(hall["standings"]["bottom"].as_f64() <= Some(vh));
        assert!(hall["standings"]["shown"].as_u64() >= Some(10), "{hall}");
        if boards == 6 {
            assert_eq!(hall["standings"]["first"], json!(winner), "{hall}");
            assert_eq!(hall["standings"]["firstPts"], json!("2"));
        }
        let png = browser.screenshot().await;
        let shot = shots.join(format!("hall-{boards}.png"));
        std::fs::write(&shot, &png).expect("write the screenshot");
        eprintln!(
            "screenshot: {} ({} bytes); boards {:.0} px",
            shot.display(),
            png.len(),
            hall["games"][0]["board"].as_f64().unwrap_or(0.0)
        );
    }

    // The standings page on a phone.
    viewport(&browser, 412, 915).await;
    browser
        .open(&format!("http://127.0.0.1:{port}/standings/Hall%20Six"))
        .await;
    let (page, _) = browser
        .wait_for(
            "the standings page",
            r#"return { rows: document.querySelectorAll('table.standings tbody tr').length,
                        rounds: document.querySelectorAll('table.rounds tbody tr').length,
                        first: (document.querySelector('table.standings tbody .pname') || {}).textContent || '',
                        pts: (document.querySelector('table.standings tbody td.pts') || {}).textContent || '',
                        scrollW: document.documentElement.scrollWidth, vw: innerWidth };"#,
            Duration::from_secs(10),
            |v| v["rows"] == json!(12),
        )
        .await;
    assert_eq!(page["rounds"], json!(12), "every player's rounds: {page}");
    assert_eq!(page["first"], json!(winner));
    assert_eq!(page["pts"], json!("2"));
    assert!(
        page["scrollW"].as_f64() <= page["vw"].as_f64(),
        "no sideways scrolling on a phone: {page}"
    );
    let png = browser.screenshot().await;
    let shot = shots.join("standings-phone.png");
    std::fs::write(&shot, &png).expect("write the screenshot");
    eprintln!("screenshot: {} ({} bytes)", shot.display(), png.len());
    server.stop();
}
