//! Recovery time (issue 13 item 6): a data directory with many games, most finished, some
//! running, then the server's real binary (`draughts-arbiter serve`) started on it, timed
//! from the process's start to `grpc.health.v1.Health` answering SERVING. The log is
//! written in-process through a [`Hub`] over a [`SqliteStore`], as the service writes it:
//! every game is created, started and played two moves; the finished ones resign; the
//! running ones keep 90 minutes a side, except the last few, on 4 s sudden death, whose
//! flags must fall after the restart with nobody sending anything (checked through
//! `GetGame`).

use std::net::TcpListener as StdListener;
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use super::harness::server_exe;
use draughts_arbiter::api::pb;
use draughts_arbiter::clock::TimeControl;
use draughts_arbiter::game::{Actor, Command, GameSettings};
use draughts_arbiter::hub::{GameMeta, Hub};
use draughts_arbiter::rules::{Color, Variant};
use draughts_arbiter::store::SqliteStore;

/// The sizes of a restart run.
pub(super) struct RestartPlan {
    /// Games in all.
    pub games: usize,
    /// Of which left running (clocks running).
    pub unfinished: usize,
    /// Of the running ones, how many on a short sudden death (their flags fall after the
    /// restart).
    pub flagging: usize,
    /// The binary to restart (default: the server's beside this one, [`server_exe`]),
    /// e.g. an older build to compare.
    pub exe: Option<std::path::PathBuf>,
}

/// Sudden death of the games whose flags must fall after the restart.
const FLAG_MS: u64 = 4_000;

/// Games created at a time.
const PARALLEL: usize = 128;

/// Kills the server child when dropped (a failing run leaves nothing behind).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(super) async fn run(plan: &RestartPlan, dir: &Path) -> Result<(), String> {
    let dir = dir.join("restart");
    let path = dir.join("arbiter.sqlite");
    let written = Instant::now();
    let flagging = write_log(plan, &path).await?;
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "restart: {} games ({} finished, {} running, {} of them on {} s sudden death) written \
         in {:.1} s, log {:.1} MiB",
        plan.games,
        plan.games - plan.unfinished.min(plan.games),
        plan.unfinished.min(plan.games),
        flagging.len(),
        FLAG_MS / 1000,
        written.elapsed().as_secs_f64(),
        bytes as f64 / (1024.0 * 1024.0)
    );

    let exe = match &plan.exe {
        Some(exe) => exe.clone(),
        None => server_exe().map_err(|e| format!("restart: {e}"))?,
    };
    let port = free_port()?;
    let metrics_port = free_port()?;
    let started = Instant::now();
    let mut cmd = Process::new(exe);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("ARBITER_") {
            cmd.env_remove(&key);
        }
    }
    let child = cmd
        .arg("serve")
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics_port}"))
        .arg("--data-dir")
        .arg(&dir)
        .env("ARBITER_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("restart: start the server: {e}"))?;
    let mut server = Server(child);
    let channel = serving(&mut server, port).await?;
    let to_serving = started.elapsed();
    let recovery = recovery_seconds(metrics_port).await;
    println!(
        "restart: health SERVING {:.0} ms after the process started (target <= 2000 ms); the \
         {} running games loaded in the background in {} (arbiter_recovery_duration_seconds)",
        to_serving.as_secs_f64() * 1000.0,
        plan.unfinished.min(plan.games),
        recovery.map_or_else(|| "unknown".into(), |s| format!("{:.2} s", s))
    );

    // The flags fall with nobody sending anything: wait past the longest, then look.
    tokio::time::sleep(Duration::from_millis(FLAG_MS + 1_000)).await;
    let mut games = pb::game_service_client::GameServiceClient::new(channel);
    let mut fallen = 0;
    for id in &flagging {
        let g = games
            .get_game(pb::GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .map_err(|e| format!("restart: GetGame {id}: {e}"))?
            .into_inner();
        if g.result_reason == pb::ResultReason::TimeForfeit as i32 {
            fallen += 1;
        }
    }
    println!(
        "restart: {fallen} of {} flags fell after the restart, nobody moving (target: all)",
        flagging.len()
    );
    drop(server);
    if fallen != flagging.len() {
        return Err(format!(
            "restart: {} flags did not fall after the restart",
            flagging.len() - fallen
        ));
    }
    Ok(())
}

/// Writes the games; returns the ids of the games whose flags fall after the restart.
async fn write_log(plan: &RestartPlan, path: &Path) -> Result<Vec<String>, String> {
    let store = Arc::new(SqliteStore::open(path).map_err(|e| format!("{}: {e}", path.display()))?);
    let hub = Hub::new(store.clone(), false);
    let total = plan.games;
    let unfinished = plan.unfinished.min(total);
    let flagging = plan.flagging.min(unfinished);
    // The flagging games last, so their clocks have the most time left at the restart.
    let mut ids = Vec::new();
    let mut next = 0;
    while next < total {
        let mut batch = tokio::task::JoinSet::new();
        for i in next..(next + PARALLEL).min(total) {
            let hub = hub.clone();
            let finish = i < total - unfinished;
            let short = i >= total - flagging;
            batch.spawn(async move { one_game(&hub, i, finish, short).await });
        }
        next = (next + PARALLEL).min(total);
        while let Some(done) = batch.join_next().await {
            let id = done.map_err(|e| format!("restart: {e}"))??;
            ids.push(id);
        }
    }
    hub.shutdown().await;
    store
        .close()
        .await
        .map_err(|e| format!("restart: close: {e}"))?;
    let mut flag_ids: Vec<String> = ids.into_iter().filter(|id| id.starts_with('s')).collect();
    flag_ids.sort();
    Ok(flag_ids)
}

async fn one_game(hub: &Arc<Hub>, i: usize, finish: bool, short: bool) -> Result<String, String> {
    let actor = Actor::Arbiter("bench".into());
    let mut settings = GameSettings::new(Variant::Russian);
    settings.time_control = Some(if short {
        TimeControl::sudden_death(FLAG_MS)
    } else {
        "90m+30s"
            .parse()
            .map_err(|e| format!("restart: time control: {e}"))?
    });
    let id = format!("{}{i:06}", if short { 's' } else { 'r' });
    let meta = GameMeta {
        id: id.clone(),
        event: "Restart".into(),
        round: (i / 1000 + 1).to_string(),
        board: (i % 1000) as u32 + 1,
        ..GameMeta::default()
    };
    let game = hub
        .create(meta, settings, None, actor.clone())
        .await
        .map_err(|e| format!("restart: create {id}: {e}"))?;
    let mut cmds = vec![Command::Start];
    if !short {
        cmds.push(Command::SubmitMove {
            side: Color::White,
            notation: "c3-d4".into(),
            offer_draw: false,
        });
        cmds.push(Command::SubmitMove {
            side: Color::Black,
            notation: "f6-g5".into(),
            offer_draw: false,
        });
    }
    if finish {
        cmds.push(Command::Resign { side: Color::White });
    }
    for cmd in cmds {
        game.command(actor.clone(), cmd, None, |_, _| ())
            .await
            .map_err(|e| format!("restart: {id}: {e}"))?;
    }
    Ok(id)
}

fn free_port() -> Result<u16, String> {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("restart: a free port: {e}"))
}

/// Polls the health service until it answers SERVING (every 5 ms, at most 60 s).
async fn serving(server: &mut Server, port: u16) -> Result<Channel, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let endpoint = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_millis(200));
    loop {
        if let Ok(Some(status)) = server.0.try_wait() {
            return Err(format!("restart: the server exited: {status}"));
        }
        if Instant::now() > deadline {
            return Err("restart: not SERVING within 60 s".into());
        }
        if let Ok(channel) = endpoint.connect().await {
            let mut health = HealthClient::new(channel.clone());
            let answer = health
                .check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await;
            if answer.is_ok_and(|a| a.into_inner().status == ServingStatus::Serving as i32) {
                return Ok(channel);
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `arbiter_recovery_duration_seconds` once it is set (polled for up to 30 s).
async fn recovery_seconds(port: u16) -> Option<f64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(v) = metric(port, "arbiter_recovery_duration_seconds").await
            && v > 0.0
        {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

async fn metric(port: u16, name: &str) -> Option<f64> {
    let name = name.to_string();
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .ok()?;
        let mut body = String::new();
        s.read_to_string(&mut body).ok()?;
        body.lines().find_map(|l| {
            l.strip_prefix(name.as_str())?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
    })
    .await
    .ok()
    .flatten()
}
