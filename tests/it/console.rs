//! The arbiter's console in a real browser (issue 42, items 1 and 4): the release-built
//! server and headless Chromium through chromedriver (`browser.rs`'s driver), every step
//! a click or a key press.
//!
//! One round of three boards. The arbiter signs in through the form (the token is not in
//! `location.href` afterwards); a draw claim made through `GameService/ClaimDraw` in a
//! game whose claims wait for the arbiter (`claims_need_arbiter`) is an alert within a
//! second; the arbiter opens it and rules from the page, and the ruling is in the game's
//! log with its rule; board 2 is picked with the keyboard, paused and its clock adjusted
//! (checked through GetGame); an irregularity from a simulated board stream is ruled
//! `corrected`; the board's silence shows "not responding", the stream's end
//! "disconnected". A viewer's token gets the server's PERMISSION_DENIED on the page.
//!
//! Everything the browser sends goes through a small recording proxy in front of the
//! server: the token appears only in `authorization` headers (and in the request line of
//! a `?token=` link itself, whose token the page moves out of the address bar at once),
//! and no request carries a Referer. Screenshots: `target/browser/console-*.png`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use crate::browser::{Browser, Server, authed, free_port, player, skipped};

const EVENT: &str = "Console Open";
const PATH: &str = "/arbiter/Console%20Open/1";
const TOKEN: &str = "arb-7f3c-console-secret";
const VIEWER: &str = "viewer-5d1e";
const ESCAPE: &str = "\u{E00C}";
const ENTER: &str = "\u{E007}";

fn config() -> String {
    format!(
        "[limits]\nboard_silence_s = 1\n\
         [[tokens]]\ntoken = \"{TOKEN}\"\nrole = \"arbiter\"\nname = \"Chief arbiter I. Petrov\"\n\
         [[tokens]]\ntoken = \"{VIEWER}\"\nrole = \"viewer\"\n\
         [[tokens]]\ntoken = \"board-c3\"\nrole = \"board\"\nevent = \"{EVENT}\"\ngame = \"c3\"\n"
    )
}

/// The release-built server on a free port with [`config`], its data and log in `dir`:
/// the server, its port and a channel to it, ready.
async fn serve(dir: &Path) -> (Server, u16, Channel) {
    let config_path = dir.join("arbiter.toml");
    std::fs::write(&config_path, config()).expect("config");
    let port = free_port();
    let mut server = Server::spawn(
        &dir.join("data"),
        port,
        Some(&config_path),
        &dir.join("server.log"),
    );
    let channel = server.ready(Some(TOKEN)).await;
    (server, port, channel)
}

/// A proxy on a free port in front of `server`: every byte the browser sends is kept.
async fn recording_proxy(server: u16) -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the proxy");
    let port = listener.local_addr().expect("proxy address").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(upstream) = tokio::net::TcpStream::connect(("127.0.0.1", server)).await else {
                continue;
            };
            let (mut from_client, mut to_client) = client.into_split();
            let (mut from_server, mut to_server) = upstream.into_split();
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                while let Ok(n) = from_client.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    kept.lock().expect("lock").extend_from_slice(&buf[..n]);
                    if to_server.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
                let _ = to_server.shutdown().await;
            });
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                let _ = to_client.shutdown().await;
            });
        }
    });
    (port, seen)
}

async fn create(games: &mut GameServiceClient<Channel>, id: &str, board: u32, claims: bool) {
    games
        .create_game(authed(
            pb::CreateGameRequest {
                game_id: id.into(),
                variant: pb::Variant::Russian as i32,
                time_control: "10m".into(),
                white: player(&format!("White {board}"), "RUS", 2300),
                black: player(&format!("Black {board}"), "BLR", 2250),
                event: EVENT.into(),
                round: "1".into(),
                board,
                settings: Some(pb::GameSettings {
                    claims_need_arbiter: claims,
                    ..Default::default()
                }),
                ..Default::default()
            },
            Some(TOKEN),
        ))
        .await
        .expect("create game");
    games
        .start_game(authed(
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
            Some(TOKEN),
        ))
        .await
        .expect("start game");
}

async fn get(games: &mut GameServiceClient<Channel>, id: &str) -> pb::Game {
    games
        .get_game(authed(
            pb::GetGameRequest { game_id: id.into() },
            Some(TOKEN),
        ))
        .await
        .expect("get game")
        .into_inner()
}

/// The game's whole log as `WatchGame` gives it.
async fn log(channel: &Channel, id: &str) -> Vec<pb::GameEvent> {
    let last = get(&mut GameServiceClient::new(channel.clone()), id)
        .await
        .last_seq;
    let mut watch = BroadcastServiceClient::new(channel.clone())
        .watch_game(authed(
            pb::WatchGameRequest {
                game_id: id.into(),
                from_seq: 0,
            },
            Some(TOKEN),
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut out = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("an event within 5 s")
    {
        let ev = ev.expect("event");
        let seq = ev.seq;
        out.push(ev);
        if seq >= last {
            break;
        }
    }
    out
}

/// A simulated board on game `c3`: its stream, the next message id, its heartbeats.
struct Board {
    tx: Option<tokio::sync::mpsc::Sender<pb::BoardMessage>>,
    feed: Option<tonic::Streaming<pb::BoardFeedback>>,
    ids: Arc<AtomicU64>,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
}

impl Board {
    async fn bind(channel: &Channel) -> Board {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let feed = BoardServiceClient::new(channel.clone())
            .connect(authed(
                tokio_stream::wrappers::ReceiverStream::new(rx),
                Some("board-c3"),
            ))
            .await
            .expect("board stream")
            .into_inner();
        let mut b = Board {
            tx: Some(tx),
            feed: Some(feed),
            ids: Arc::new(AtomicU64::new(0)),
            heartbeat: None,
        };
        b.send(pb::board_message::Kind::Bind(pb::BindBoard {
            game_id: "c3".into(),
            board_id: "dgt-c3".into(),
            resume_from_seq: 0,
        }))
        .await;
        // Heartbeats keep it ACTIVE until the test wants it silent.
        let tx = b.tx.clone().expect("sender");
        let ids = b.ids.clone();
        b.heartbeat = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let id = ids.fetch_add(1, Ordering::SeqCst) + 1;
                let beat = pb::BoardMessage {
                    message_id: id,
                    board_time_ms: 0,
                    kind: Some(pb::board_message::Kind::Heartbeat(pb::BoardHeartbeat {})),
                };
                if tx.send(beat).await.is_err() {
                    return;
                }
            }
        }));
        // The feed is drained so the server never waits on it.
        let mut feed = b.feed.take().expect("feed");
        tokio::spawn(async move { while let Some(Ok(_)) = feed.next().await {} });
        b
    }

    async fn send(&self, kind: pb::board_message::Kind) {
        let id = self.ids.fetch_add(1, Ordering::SeqCst) + 1;
        self.tx
            .as_ref()
            .expect("stream open")
            .send(pb::BoardMessage {
                message_id: id,
                board_time_ms: 0,
                kind: Some(kind),
            })
            .await
            .expect("send");
    }

    fn silence(&mut self) {
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
    }

    /// Closes the stream (the board's cable pulled).
    fn cut(&mut self) {
        self.silence();
        self.tx = None;
    }
}

/// What the console shows, per board and in the alert list.
const SHOWN: &str = r#"
const cards = [...document.querySelectorAll('#boards .card')].map(c => ({
  id: c.dataset.gameId, board: Number(c.dataset.board), status: c.dataset.status,
  health: (c.querySelector('.health') || {}).textContent || '',
  tags: [...c.querySelectorAll('.tag')].map(t => t.textContent),
  clocks: [...c.querySelectorAll('.clock')].map(k => k.textContent),
}));
const alerts = [...document.querySelectorAll('#alerts .alert')].map(a => ({ kind: a.dataset.kind, id: a.dataset.gameId, text: a.textContent }));
const panel = document.getElementById('panel');
return { href: location.href, signed: document.body.dataset.signedIn, connection: document.body.dataset.connection || '',
  cards, alerts, panel: panel.hidden ? '' : panel.dataset.gameId,
  message: document.getElementById('message').hidden ? '' : document.getElementById('message').textContent,
  log: [...document.querySelectorAll('#panel .log tr[data-seq]')].map(r => ({ kind: r.dataset.kind, text: r.textContent, rule: r.querySelector('.r').textContent, who: r.querySelector('.a').textContent })) };
"#;

fn card<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["cards"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["id"] == json!(id)))
        .unwrap_or(&Value::Null)
}

fn has_alert(v: &Value, kind: &str, id: &str) -> bool {
    v["alerts"].as_array().is_some_and(|a| {
        a.iter()
            .any(|x| x["kind"] == json!(kind) && x["id"] == json!(id))
    })
}

async fn shot(browser: &Browser, name: &str) {
    let png = browser.screenshot().await;
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/browser/console-{name}.png"));
    std::fs::create_dir_all(path.parent().expect("folder")).expect("target/browser");
    std::fs::write(&path, png).expect("write the screenshot");
    eprintln!("screenshot: {}", path.display());
}

fn kind(ev: &pb::GameEvent) -> Option<&pb::game_event::Kind> {
    ev.kind.as_ref()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_arbiter_runs_a_round_from_the_console_in_chromium() {
    if skipped() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, server_port, channel) = serve(dir.path()).await;
    let mut games = GameServiceClient::new(channel.clone());
    create(&mut games, "c1", 1, true).await;
    create(&mut games, "c2", 2, false).await;
    create(&mut games, "c3", 3, false).await;
    let mut board = Board::bind(&channel).await;
    let (port, sent) = recording_proxy(server_port).await;
    let base = format!("http://127.0.0.1:{port}");

    let profile = dir.path().join("chromium");
    let browser = Browser::start(&profile).await;

    // 1. Sign in through the form.
    browser.open(&format!("{base}{PATH}")).await;
    let (v, _) = browser
        .wait_for("the sign-in form", "return !document.getElementById('signin').hidden && document.body.dataset.connection === 'signed-out';", Duration::from_secs(10), |v| v == &json!(true))
        .await;
    assert_eq!(v, json!(true));
    shot(&browser, "signin").await;
    browser.type_into("#signin input[name=token]", TOKEN).await;
    browser.click("#signin button[type=submit]").await;
    let (v, took) = browser
        .wait_for("three boards", SHOWN, Duration::from_secs(10), |v| {
            v["cards"].as_array().map(Vec::len) == Some(3) && v["connection"] == json!("live")
        })
        .await;
    eprintln!("signed in, three boards shown in {took:?}");
    let href = v["href"].as_str().unwrap_or_default();
    assert!(!href.contains(TOKEN), "the token in the address: {href}");
    assert_eq!(href, format!("{base}{PATH}"));
    assert_eq!(v["signed"], json!("yes"));
    let history = browser.eval("return history.length;").await;
    assert_eq!(
        history,
        json!(2),
        "a new tab and the console: nothing else in the history"
    );
    assert_eq!(
        card(&v, "c3")["health"]
            .as_str()
            .map(|h| h.starts_with("connected")),
        Some(true),
        "{v}"
    );

    // 2. A claim made through the API is an alert within a second.
    let before = Instant::now();
    games
        .claim_draw(authed(
            pb::ClaimDrawRequest {
                game_id: "c1".into(),
                side: pb::Side::White as i32,
                kind: pb::DrawClaimKind::Repetition as i32,
                ..Default::default()
            },
            Some(TOKEN),
        ))
        .await
        .expect("claim");
    let (v, _) = browser
        .wait_for("the claim's alert", SHOWN, Duration::from_secs(5), |v| {
            has_alert(v, "claim", "c1")
        })
        .await;
    let took = before.elapsed();
    eprintln!("claim alert shown {took:?} after ClaimDraw was sent");
    assert!(took < Duration::from_secs(1), "the alert took {took:?}");
    assert!(
        card(&v, "c1")["tags"].to_string().contains("claim: White"),
        "{v}"
    );
    // The cue: the new alert flashes (`new`), and the page, used since it opened (the
    // sign-in was typed and clicked), sounded its tone (`data-cues`).
    let cue = browser
        .eval(
            "return { flash: [...document.querySelectorAll('#alerts .alert.new')].map(a => a.dataset.kind), \
             cues: Number(document.body.dataset.cues || 0) };",
        )
        .await;
    assert_eq!(cue["flash"], json!(["claim"]), "{cue}");
    assert!(cue["cues"].as_u64() >= Some(1), "no cue sounded: {cue}");
    shot(&browser, "alert").await;

    // The arbiter opens it from the alert and rules: incorrect, with the rule.
    browser
        .click("#alerts .alert[data-kind=claim] button")
        .await;
    browser
        .click("#panel form[data-act=claim] select[name=ruling] option[value='2']")
        .await;
    browser
        .type_into(
            "#panel form[data-act=claim] input[name=reason]",
            "no position occurred three times",
        )
        .await;
    browser
        .type_into("#panel form[data-act=claim] input[name=rule]", "RU 1.9.2")
        .await;
    browser.click("#panel form[data-act=claim] button.go").await;
    let (v, _) = browser
        .wait_for(
            "the ruling in the page's log",
            SHOWN,
            Duration::from_secs(5),
            |v| {
                v["log"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|r| r["kind"] == json!("claimDecided")))
            },
        )
        .await;
    let row = v["log"]
        .as_array()
        .and_then(|l| l.iter().find(|r| r["kind"] == json!("claimDecided")))
        .cloned()
        .unwrap_or_default();
    assert_eq!(row["rule"], json!("RU 1.9.2"), "{row}");
    assert_eq!(
        row["who"],
        json!("arbiter: Chief arbiter I. Petrov"),
        "{row}"
    );
    assert!(!has_alert(&v, "claim", "c1"), "the alert is gone: {v}");
    shot(&browser, "claim-ruled").await;
    let g = get(&mut games, "c1").await;
    assert!(g.pending_claim.is_none(), "{g:?}");
    let ruled: Vec<_> = log(&channel, "c1")
        .await
        .into_iter()
        .filter(|e| matches!(kind(e), Some(pb::game_event::Kind::ClaimDecided(_))))
        .collect();
    assert_eq!(ruled.len(), 1, "{ruled:?}");
    let e = &ruled[0];
    assert_eq!(e.rule, "RU 1.9.2");
    let actor = e.actor.clone().unwrap_or_default();
    assert_eq!(actor.kind, pb::ActorKind::Arbiter as i32, "{e:?}");
    assert_eq!(actor.name, "Chief arbiter I. Petrov", "{e:?}");
    match kind(e) {
        Some(pb::game_event::Kind::ClaimDecided(d)) => {
            assert_eq!(d.ruling, pb::ClaimRuling::Incorrect as i32);
            assert_eq!(d.reason, "no position occurred three times");
        }
        other => panic!("{other:?}"),
    }
    browser.press(ESCAPE).await;

    // 3. Board 2 with the keyboard: "2", Enter; pause, then add 30 s to White.
    browser.press("2").await;
    browser.press(ENTER).await;
    browser
        .wait_for("board 2's panel", SHOWN, Duration::from_secs(5), |v| {
            v["panel"] == json!("c2")
        })
        .await;
    browser
        .type_into(
            "#panel form[data-act=pause] input[name=reason]",
            "a player feels unwell",
        )
        .await;
    browser
        .type_into("#panel form[data-act=pause] input[name=rule]", "RU 1.10")
        .await;
    browser.click("#panel form[data-act=pause] button.go").await;
    let paused = async {
        for _ in 0..100 {
            let g = get(&mut games, "c2").await;
            if g.status == pb::GameStatus::Paused as i32 {
                return g;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("c2 not paused");
    }
    .await;
    browser
        .wait_for("the adjust form of a paused game", "return !!document.querySelector('#panel form[data-act=resume]') && !!document.querySelector('#panel form[data-act=adjust]');", Duration::from_secs(5), |v| v == &json!(true))
        .await;
    browser
        .click("#panel form[data-act=adjust] select[name=side] option[value='1']")
        .await;
    browser
        .type_into("#panel form[data-act=adjust] input[name=time]", "0:30")
        .await;
    browser
        .type_into(
            "#panel form[data-act=adjust] input[name=reason]",
            "time lost to the illness",
        )
        .await;
    browser
        .type_into("#panel form[data-act=adjust] input[name=rule]", "RU 1.10")
        .await;
    browser
        .click("#panel form[data-act=adjust] button.go")
        .await;
    let adjusted = async {
        for _ in 0..100 {
            let g = get(&mut games, "c2").await;
            if g.white_clock_ms != paused.white_clock_ms {
                return g;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("c2's clock not adjusted");
    }
    .await;
    assert_eq!(adjusted.white_clock_ms - paused.white_clock_ms, 30_000);
    assert_eq!(adjusted.black_clock_ms, paused.black_clock_ms);
    let c2 = log(&channel, "c2").await;
    assert!(c2.iter().any(|e| matches!(kind(e), Some(pb::game_event::Kind::ClocksPaused(p)) if p.reason == "a player feels unwell") && e.rule == "RU 1.10"), "{c2:?}");
    assert!(c2.iter().any(|e| matches!(kind(e), Some(pb::game_event::Kind::ClockAdjusted(a)) if a.side == pb::Side::White as i32) && e.rule == "RU 1.10"), "{c2:?}");
    let (v, _) = browser
        .wait_for(
            "board 2 paused on the page",
            SHOWN,
            Duration::from_secs(5),
            |v| card(v, "c2")["status"] == json!("paused"),
        )
        .await;
    eprintln!("board 2: {}", card(&v, "c2"));
    shot(&browser, "paused").await;
    browser.press(ESCAPE).await;
    browser
        .wait_for("the panel closed", SHOWN, Duration::from_secs(5), |v| {
            v["panel"] == json!("")
        })
        .await;

    // 4. An irregularity from the board: c3 to a5 is not a move (RU 1.4); ruled corrected.
    board
        .send(pb::board_message::Kind::Lift(pb::BoardSquare {
            square: 22,
        }))
        .await;
    board
        .send(pb::board_message::Kind::Release(pb::BoardSquare {
            square: 13,
        }))
        .await;
    browser
        .wait_for(
            "the irregularity's alert",
            SHOWN,
            Duration::from_secs(5),
            |v| has_alert(v, "irregularity", "c3"),
        )
        .await;
    shot(&browser, "irregularity").await;
    browser
        .click("#alerts .alert[data-kind=irregularity] button")
        .await;
    browser
        .click("#panel form[data-act^=irregularity] select[name=ruling] option[value='2']")
        .await;
    browser
        .type_into(
            "#panel form[data-act^=irregularity] input[name=reason]",
            "the piece goes back to c3",
        )
        .await;
    browser
        .click("#panel form[data-act^=irregularity] button.go")
        .await;
    let (v, _) = browser
        .wait_for(
            "the irregularity ruled",
            SHOWN,
            Duration::from_secs(5),
            |v| {
                !has_alert(v, "irregularity", "c3")
                    && v["log"]
                        .as_array()
                        .is_some_and(|l| l.iter().any(|r| r["kind"] == json!("irregularityRuled")))
            },
        )
        .await;
    assert!(v["message"].as_str().unwrap_or("").contains("done"), "{v}");
    let g = get(&mut games, "c3").await;
    assert!(g.pending_irregularities.is_empty(), "{g:?}");
    let c3 = log(&channel, "c3").await;
    let ruled: Vec<_> = c3
        .iter()
        .filter_map(|e| match kind(e) {
            Some(pb::game_event::Kind::IrregularityRuled(r)) => Some((
                r.ruling,
                r.reason.clone(),
                e.actor.clone().unwrap_or_default().kind,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        ruled,
        [(
            pb::IrregularityRuling::Corrected as i32,
            "the piece goes back to c3".to_string(),
            pb::ActorKind::Arbiter as i32
        )],
        "{c3:?}"
    );
    browser.press(ESCAPE).await;

    // 5. The board falls silent: "not responding"; its stream ends: "disconnected".
    board.silence();
    let cut_at = Instant::now();
    let (v, took) = browser
        .wait_for("not responding", SHOWN, Duration::from_secs(10), |v| {
            card(v, "c3")["health"]
                .as_str()
                .is_some_and(|h| h.starts_with("not responding"))
                && has_alert(v, "board", "c3")
        })
        .await;
    eprintln!(
        "board 3 not responding on the page {took:?} after its last heartbeat: {}",
        card(&v, "c3")
    );
    assert!(
        cut_at.elapsed() >= Duration::from_millis(900),
        "not before the silence (1 s)"
    );
    shot(&browser, "not-responding").await;
    board.cut();
    let (v, took) = browser
        .wait_for("disconnected", SHOWN, Duration::from_secs(10), |v| {
            card(v, "c3")["health"]
                .as_str()
                .is_some_and(|h| h.starts_with("disconnected"))
        })
        .await;
    eprintln!(
        "board 3 disconnected on the page {took:?} after its stream closed: {}",
        card(&v, "c3")
    );
    let text = v["alerts"].to_string();
    assert!(text.contains("board dgt-c3 disconnected since"), "{text}");
    shot(&browser, "disconnected").await;

    // 6. Sign out; a viewer's token is refused by the server, plainly.
    browser.click("#signout").await;
    browser
        .wait_for("signed out", "return document.body.dataset.signedIn === 'no' && !document.getElementById('signin').hidden && sessionStorage.length === 0;", Duration::from_secs(5), |v| v == &json!(true))
        .await;
    browser.type_into("#signin input[name=token]", VIEWER).await;
    browser.click("#signin button[type=submit]").await;
    browser
        .wait_for(
            "boards for the viewer",
            SHOWN,
            Duration::from_secs(10),
            |v| v["cards"].as_array().map(Vec::len) == Some(3),
        )
        .await;
    browser.click("#boards .card[data-game-id=c2]").await;
    browser
        .type_into(
            "#panel form[data-act=resume] input[name=reason]",
            "back to play",
        )
        .await;
    browser
        .click("#panel form[data-act=resume] button.go")
        .await;
    let (v, _) = browser
        .wait_for("the refusal", SHOWN, Duration::from_secs(5), |v| {
            v["message"]
                .as_str()
                .unwrap_or("")
                .contains("PERMISSION_DENIED")
        })
        .await;
    eprintln!("viewer refused: {}", v["message"]);
    assert_eq!(
        get(&mut games, "c2").await.status,
        pb::GameStatus::Paused as i32
    );
    shot(&browser, "refused").await;

    // 7. A `?token=` link: the token leaves the address bar at once, for both pages.
    for page in ["/live/Console%20Open/1", PATH] {
        browser
            .open(&format!("{base}{page}?view=hall&token={TOKEN}"))
            .await;
        let (v, _) = browser
            .wait_for("the token moved", "return [location.href, sessionStorage.getItem('draughts-arbiter.token'), document.body.dataset.signedIn];", Duration::from_secs(5), |v| v[1] == json!(TOKEN))
            .await;
        assert_eq!(v[0], json!(format!("{base}{page}?view=hall")), "{v}");
        assert_eq!(v[2], json!("yes"), "{v}");
    }

    // 8. What the browser sent: the token only as `authorization`, never in a Referer.
    let bytes = sent.lock().expect("lock").clone();
    let text = String::from_utf8_lossy(&bytes);
    let mut bearer = 0;
    for line in text.split("\r\n") {
        let lower = line.to_ascii_lowercase();
        assert!(!lower.starts_with("referer:"), "a Referer went out: {line}");
        if !line.contains(TOKEN) {
            continue;
        }
        if lower.starts_with("authorization: bearer ") {
            bearer += 1;
            continue;
        }
        // The links themselves (step 7): the request that opened them (on a kept-alive
        // connection the line may follow the previous request's body, which ends without
        // a line break).
        let request = line.rfind("GET ").map_or(line, |i| &line[i..]);
        assert!(
            request.starts_with("GET /live/Console%20Open/1?view=hall&token=")
                || request.starts_with(&format!("GET {PATH}?view=hall&token=")),
            "the token outside an authorization header: {line}"
        );
    }
    assert!(bearer >= 10, "the calls carried the token: {bearer}");
    server.stop();
}

/// What the console's tournament box shows: its title, its facts line and its forms.
const TOURNAMENT: &str = r#"
const box = document.getElementById('tournament');
const cards = [...document.querySelectorAll('#boards .card')].map(c => ({ id: c.dataset.gameId, board: Number(c.dataset.board), status: c.dataset.status,
  tags: [...c.querySelectorAll('.tag')].map(t => t.textContent) }));
return { hidden: box.hidden, title: (box.querySelector('h2') || {}).textContent || '',
  facts: (box.querySelector('.facts') || {}).textContent || '',
  forms: [...box.querySelectorAll('form')].map(f => f.dataset.act), cards,
  message: document.getElementById('message').hidden ? '' : document.getElementById('message').textContent };
"#;

/// Issue 42 item 1's last part, by clicks: on a tournament's event the arbiter pairs a
/// round by hand, marks a player absent (T 5), starts the round and records a forfeit
/// (T 6) from the console, and each is in the tournament and its games as the API has
/// it, with the arbiter's label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_arbiter_pairs_starts_and_forfeits_a_round_from_the_console_in_chromium() {
    use draughts_arbiter::api::pb::tournament_service_client::TournamentServiceClient;
    if skipped() {
        return;
    }
    const CUP: &str = "Console Cup";
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, port, channel) = serve(dir.path()).await;
    let mut t = TournamentServiceClient::new(channel.clone());
    t.create_tournament(authed(
        pb::CreateTournamentRequest {
            name: CUP.into(),
            variant: pb::Variant::Russian as i32,
            system: pb::TournamentSystem::Manual as i32,
            rounds: 2,
            time_control: "10m".into(),
            ..Default::default()
        },
        Some(TOKEN),
    ))
    .await
    .expect("tournament");
    let ids: Vec<u32> = t
        .add_players(authed(
            pb::AddPlayersRequest {
                tournament: CUP.into(),
                players: ["Ann", "Boris", "Clara", "Dmitri"]
                    .iter()
                    .zip([2400, 2350, 2300, 2250])
                    .map(|(n, r)| player(n, "RUS", r).expect("player"))
                    .collect(),
            },
            Some(TOKEN),
        ))
        .await
        .expect("players")
        .into_inner()
        .players
        .iter()
        .map(|p| p.player_id)
        .collect();
    assert_eq!(ids.len(), 4);
    let get_tournament = async |t: &mut TournamentServiceClient<Channel>| {
        t.get_tournament(authed(
            pb::GetTournamentRequest {
                tournament: CUP.into(),
            },
            Some(TOKEN),
        ))
        .await
        .expect("tournament")
        .into_inner()
        .tournament
        .expect("tournament")
    };

    let browser = Browser::start(&dir.path().join("chromium")).await;
    browser
        .open(&format!("http://127.0.0.1:{port}/arbiter/Console%20Cup"))
        .await;
    browser
        .wait_for(
            "the sign-in form",
            "return !document.getElementById('signin').hidden;",
            Duration::from_secs(10),
            |v| v == &json!(true),
        )
        .await;
    browser.type_into("#signin input[name=token]", TOKEN).await;
    browser.click("#signin button[type=submit]").await;
    let (v, _) = browser
        .wait_for(
            "the tournament box",
            TOURNAMENT,
            Duration::from_secs(10),
            |v| v["hidden"] == json!(false) && v["forms"] == json!(["pair"]),
        )
        .await;
    assert_eq!(v["title"], json!("Console Cup: no round paired yet"), "{v}");

    // 1. Round 1 by hand: Ann–Dmitri, Boris–Clara.
    let boards = format!("{}-{}, {}-{}", ids[0], ids[3], ids[1], ids[2]);
    browser
        .type_into(
            "#tournament form[data-act=pair] input[name=boards]",
            &boards,
        )
        .await;
    browser
        .click("#tournament form[data-act=pair] button.go")
        .await;
    let (v, _) = browser
        .wait_for(
            "round 1 paired, two boards",
            TOURNAMENT,
            Duration::from_secs(10),
            |v| {
                v["title"] == json!("Console Cup: round 1 of 2")
                    && v["cards"].as_array().map(Vec::len) == Some(2)
                    && v["forms"] == json!(["start-round", "absent", "forfeit"])
            },
        )
        .await;
    assert!(
        v["facts"]
            .as_str()
            .is_some_and(|f| f.contains("not started") && f.contains("entered by the arbiter")),
        "{v}"
    );
    let got = get_tournament(&mut t).await;
    let round = &got.paired_rounds[0];
    let pairs: Vec<(u32, u32, u32)> = round
        .pairings
        .iter()
        .map(|p| {
            (
                p.board,
                p.white.as_ref().map_or(0, |w| w.player_id),
                p.black.as_ref().map_or(0, |b| b.player_id),
            )
        })
        .collect();
    assert_eq!(pairs, [(1, ids[0], ids[3]), (2, ids[1], ids[2])]);
    let board1 = round.pairings[0].game_ids[0].clone();
    let board2 = round.pairings[1].game_ids[0].clone();
    // The box is drawn again when the new games' events arrive; let it settle.
    tokio::time::sleep(Duration::from_millis(800)).await;

    // 2. Clara (black on board 2) is absent.
    browser
        .click(&format!(
            "#tournament form[data-act=absent] select[name=player] option[value='{}']",
            ids[2]
        ))
        .await;
    browser
        .click("#tournament form[data-act=absent] button.go")
        .await;
    browser
        .wait_for(
            "Clara absent, on board 2's card too",
            TOURNAMENT,
            Duration::from_secs(10),
            |v| {
                v["facts"]
                    .as_str()
                    .is_some_and(|f| f.contains(&format!("absent: Clara (#{})", ids[2])))
                    && v["cards"].as_array().is_some_and(|c| {
                        c.iter().any(|c| {
                            c["board"] == json!(2) && c["tags"] == json!(["absent: Black (T 5)"])
                        })
                    })
            },
        )
        .await;

    // 3. The round starts.
    browser
        .click("#tournament form[data-act=start-round] button.go")
        .await;
    browser
        .wait_for(
            "round 1 started",
            TOURNAMENT,
            Duration::from_secs(10),
            |v| {
                v["facts"].as_str().is_some_and(|f| f.contains("started "))
                    && !v["forms"].to_string().contains("start-round")
            },
        )
        .await;

    // 4. Dmitri (black on board 1) forfeits.
    browser
        .click(&format!(
            "#tournament form[data-act=forfeit] select[name=player] option[value='{}']",
            ids[3]
        ))
        .await;
    browser
        .click("#tournament form[data-act=forfeit] button.go")
        .await;
    browser
        .wait_for(
            "board 1 over by forfeit",
            TOURNAMENT,
            Duration::from_secs(10),
            |v| {
                v["cards"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["id"] == json!(board1) && c["status"] == json!("finished"))
                }) && v["message"] == json!("Record a forfeit (T 6): done")
            },
        )
        .await;
    shot(&browser, "tournament").await;

    // What the API has: the round started with Clara absent, board 1 1-0 by forfeit (T 5),
    // board 2 running with Clara's absence in its log, each by the labelled arbiter.
    let got = get_tournament(&mut t).await;
    let round = &got.paired_rounds[0];
    assert!(round.started_at.is_some(), "{round:?}");
    assert_eq!(round.absent_player_ids, [ids[2]]);
    let mut games = GameServiceClient::new(channel.clone());
    let g1 = get(&mut games, &board1).await;
    assert_eq!(g1.status, pb::GameStatus::Finished as i32, "{g1:?}");
    assert_eq!(g1.result, pb::GameResult::WhiteWins as i32, "{g1:?}");
    assert_eq!(g1.result_reason, pb::ResultReason::Forfeit as i32, "{g1:?}");
    let g2 = get(&mut games, &board2).await;
    assert_eq!(g2.status, pb::GameStatus::Running as i32, "{g2:?}");
    let labelled = |e: &pb::GameEvent| {
        e.actor
            .as_ref()
            .is_some_and(|a| a.name == "Chief arbiter I. Petrov")
    };
    let absent: Vec<_> = log(&channel, &board2)
        .await
        .into_iter()
        .filter(|e| matches!(kind(e), Some(pb::game_event::Kind::PlayerMarkedAbsent(_))))
        .collect();
    assert_eq!(absent.len(), 1, "{absent:?}");
    assert!(labelled(&absent[0]), "{absent:?}");
    let ended: Vec<_> = log(&channel, &board1)
        .await
        .into_iter()
        .filter(|e| matches!(kind(e), Some(pb::game_event::Kind::GameFinished(_))))
        .collect();
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert!(labelled(&ended[0]), "{ended:?}");
    assert_eq!(ended[0].rule, "T 5", "{ended:?}");
    server.stop();
}
