//! The judge's clock through wall-clock faults, restarts and takeovers (issue 37): running
//! clocks never freeze nor jump when the wall clock steps between two runs, the outage
//! is measured as well as the facts allow and recorded with its length, and the time a
//! player spent thinking while the service was alive is charged.
//!
//! In-process hubs over SQLite and PostgreSQL with a wall clock the test steps
//! ([`FakeClocks`]); and the release binary restarted under Debian's `faketime` (skipped,
//! saying so, without it). Real time throughout: the store's writer is a thread, and the
//! figures asserted are the ones a player at the board would see.

use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::game::{
    Actor, Command, EndReason, EventKind, GameEvent, GameSettings, OutageMeasure,
};
use draughts_arbiter::hub::metrics::Metrics;
use draughts_arbiter::hub::{Clocks, GameHandle, GameMeta, Hub, HubConfig};
use draughts_arbiter::rules::Variant;
use draughts_arbiter::store::{BootStamp, EventStore, SqliteStore, Stream};
use tonic::transport::{Channel, Endpoint};

use crate::common::pg::TestDb;

/// A wall clock the test steps, and a boot clock the test may "reboot"; both run with
/// real time.
#[derive(Debug)]
struct FakeClocks {
    origin: Instant,
    wall_at_origin: i64,
    step_ms: AtomicI64,
    /// The boot's id and its boot clock at `origin` (ms, may be negative for a boot
    /// that began after `origin`).
    boot: Mutex<(String, i64)>,
}

impl FakeClocks {
    fn new(step_ms: i64) -> Arc<FakeClocks> {
        Arc::new(FakeClocks {
            origin: Instant::now(),
            wall_at_origin: chrono::Utc::now().timestamp_millis(),
            step_ms: AtomicI64::new(step_ms),
            boot: Mutex::new(("boot-1".into(), 3_600_000)),
        })
    }

    fn elapsed(&self) -> i64 {
        i64::try_from(self.origin.elapsed().as_millis()).expect("ms")
    }

    fn step(&self, ms: i64) {
        self.step_ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// A new boot that began `ago_ms` ago.
    fn reboot(&self, ago_ms: i64) {
        *self.boot.lock().expect("lock") = ("boot-2".into(), ago_ms - self.elapsed());
    }
}

impl Clocks for FakeClocks {
    fn wall_ms(&self) -> i64 {
        self.wall_at_origin + self.elapsed() + self.step_ms.load(Ordering::SeqCst)
    }

    fn boot(&self) -> Option<BootStamp> {
        let (id, at_origin) = self.boot.lock().expect("lock").clone();
        Some(BootStamp {
            id,
            ms: u64::try_from(at_origin + self.elapsed()).expect("after the boot"),
        })
    }
}

fn meta(id: &str) -> GameMeta {
    GameMeta {
        id: id.into(),
        event: "Clock faults".into(),
        round: "1".into(),
        board: 1,
        ..GameMeta::default()
    }
}

fn arbiter() -> Actor {
    Actor::Arbiter("test".into())
}

/// A hub over `store` with `clocks` (its metrics to read), recovered (with how many
/// running games it resumed): serving.
async fn serving(
    store: Arc<dyn EventStore>,
    config: HubConfig,
    clocks: Arc<dyn Clocks>,
) -> (Arc<Hub>, Arc<Metrics>, usize) {
    let metrics = Arc::new(Metrics::new());
    let hub = Hub::with_clocks(store, false, metrics.clone(), config, clocks);
    let resumed = hub.recover().await.expect("recovered");
    (hub, metrics, resumed)
}

/// A started Russian game with `tc` on `hub`; returns the instant White's clock started.
async fn started_game(hub: &Arc<Hub>, id: &str, tc: &str) -> Instant {
    let mut settings = GameSettings::new(Variant::Russian);
    settings.time_control = Some(tc.parse().expect("time control"));
    hub.create(meta(id), settings, None, arbiter())
        .await
        .expect("created");
    hub.game(id)
        .await
        .expect("game")
        .command(arbiter(), Command::Start, None, |_, _| ())
        .await
        .expect("started");
    Instant::now()
}

async fn white_ms(game: &GameHandle) -> i64 {
    let ms = game
        .read(|s, now| s.view(now).white_ms)
        .await
        .expect("read")
        .expect("a clock");
    i64::try_from(ms).expect("ms")
}

/// White's clock now, and how far it went down over the next second of real time.
async fn white_and_rate(game: &GameHandle) -> (i64, i64) {
    let a = white_ms(game).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    (a, a - white_ms(game).await)
}

async fn events(store: &dyn EventStore, id: &str) -> Vec<GameEvent> {
    store
        .load(Stream::Game(id), 1)
        .await
        .expect("log")
        .iter()
        .map(|r| serde_json::from_slice(&r.payload).expect("an event"))
        .collect()
}

/// The log's instants never go back, and its seqs are dense from 1.
fn assert_monotone(log: &[GameEvent]) {
    for (i, pair) in log.windows(2).enumerate() {
        assert!(
            pair[1].at.mono_ms >= pair[0].at.mono_ms,
            "seq {} at {} before seq {} at {}",
            pair[1].seq,
            pair[1].at.mono_ms,
            pair[0].seq,
            pair[0].at.mono_ms
        );
        assert_eq!(pair[0].seq, i as u64 + 1);
    }
}

/// The one outage in a log: (from, until, measured).
fn outage(log: &[GameEvent]) -> (u64, u64, Option<OutageMeasure>) {
    let found: Vec<_> = log
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Outage {
                from_ms,
                until_ms,
                charged: false,
                measured,
            } => Some((from_ms, until_ms, measured)),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "one outage, not charged: {log:#?}");
    found[0]
}

/// Waits for the game's flag (at most `within`); returns the real instant it was seen.
async fn flag_seen(game: &GameHandle, within: Duration) -> Instant {
    let until = Instant::now() + within;
    loop {
        let over = game
            .read(|s, _| s.result().map(|r| r.reason))
            .await
            .expect("read");
        if let Some(reason) = over {
            assert_eq!(reason, EndReason::FlagFall);
            return Instant::now();
        }
        assert!(Instant::now() < until, "no flag within {within:?}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).expect("ms")
}

/// One host, one boot: White thinks 1 s, the service stops (SIGTERM: its last alive
/// mark), the wall clock steps by `step_ms` while it is down for 0.5 s, and it starts
/// again. White's clock runs at 1 s a second from the restart, the outage is 0.5 s
/// (±1 s: the bound; measured ±0.1 s here) on the boot clock, the flag falls when
/// White has really used the 4 s, and the log's instants never go back.
async fn a_restart_after_a_wall_clock_step(step_ms: i64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("arbiter.sqlite");
    let clocks = FakeClocks::new(0);
    let clocks_dyn: Arc<dyn Clocks> = clocks.clone();

    let store = Arc::new(SqliteStore::open(&path).expect("store"));
    let (first, _, _) = serving(store.clone(), HubConfig::default(), clocks_dyn.clone()).await;
    let clock_started = started_game(&first, "g", "4s").await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    first.shutdown().await;
    let thought_before = clock_started.elapsed();
    store.close().await.expect("close");
    drop((first, store));

    let down = Instant::now();
    clocks.step(step_ms);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let store = Arc::new(SqliteStore::open(&path).expect("reopen"));
    let restarted = Instant::now();
    let real_down = ms(restarted - down);
    let (second, metrics, resumed) = serving(store.clone(), HubConfig::default(), clocks_dyn).await;
    assert_eq!(resumed, 1);
    let game = second.game("g").await.expect("game");

    // The rate: 1 s a second from the restart.
    let (_, rate) = white_and_rate(&game).await;
    assert!(
        (950..=1_100).contains(&rate),
        "step {step_ms} ms: White's clock went down {rate} ms in a second"
    );

    // The flag falls when White has used 4 s of real time.
    let flag = flag_seen(&game, Duration::from_secs(6)).await;
    let used = ms(thought_before) + ms(flag - restarted);
    assert!(
        (4_000 - 50..=4_000 + 60).contains(&used),
        "step {step_ms} ms: the flag fell after {used} ms of White's real time"
    );

    let log = events(store.as_ref(), "g").await;
    assert_monotone(&log);
    let (from, until, measured) = outage(&log);
    let length = i64::try_from(until - from).expect("ms");
    assert!(
        (length - real_down).abs() <= 100,
        "step {step_ms} ms: outage of {length} ms recorded, {real_down} ms real"
    );
    assert_eq!(measured, Some(OutageMeasure::BootClock));
    // The flag's instant is the charged time: 4 s after the start less the outage.
    let start = log
        .iter()
        .find(|e| matches!(e.kind, EventKind::GameStarted))
        .expect("started")
        .at
        .mono_ms;
    let ended = log.last().expect("events");
    assert!(matches!(
        ended.kind,
        EventKind::GameEnded {
            reason: EndReason::FlagFall,
            ..
        }
    ));
    let charged = ended.at.mono_ms - start - (until - from);
    assert!(
        (4_000..=4_050).contains(&charged),
        "step {step_ms} ms: the flag's instant charges {charged} ms: {log:#?}"
    );
    eprintln!(
        "clock_faults: wall step {step_ms} ms: clock rate {rate} ms/s after the restart, \
         outage {length} ms recorded ({real_down} ms real), White's real time at the flag \
         {used} ms (clock 4,000)"
    );
    // A step of more than a second is reported (logged as an error, and counted).
    assert_eq!(metrics.wall_clock_steps(), u64::from(step_ms.abs() > 1_000));
    second.shutdown().await;
    store.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_clock_an_hour_behind_at_the_restart_freezes_no_clock() {
    a_restart_after_a_wall_clock_step(-3_600_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_clock_30_s_behind_at_the_restart_freezes_no_clock() {
    a_restart_after_a_wall_clock_step(-30_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_clock_30_s_ahead_at_the_restart_adds_nothing_to_the_outage() {
    a_restart_after_a_wall_clock_step(30_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_clock_an_hour_ahead_at_the_restart_adds_nothing_to_the_outage() {
    a_restart_after_a_wall_clock_step(3_600_000).await;
}

/// A crash (no stop mark: the last alive mark, at most a second old) and a reboot with
/// the wall clock 30 s behind: no clock spans both runs, so the outage is recorded as
/// what is certain (the 2 s since the new boot), White keeps the time thought while the
/// service ran, and the clock runs from the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reboot_with_the_wall_clock_behind_records_a_lower_bound_and_runs_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("arbiter.sqlite");
    let clocks = FakeClocks::new(0);
    let clocks_dyn: Arc<dyn Clocks> = clocks.clone();
    let store = Arc::new(SqliteStore::open(&path).expect("store"));
    let (first, _, _) = serving(store.clone(), HubConfig::default(), clocks_dyn.clone()).await;
    started_game(&first, "g", "10m").await;
    // Three alive marks while White thinks, then the crash: no stop mark.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    first.begin_shutdown();
    store.close().await.expect("close");
    drop((first, store));

    clocks.step(-30_000);
    clocks.reboot(2_000);
    let store = Arc::new(SqliteStore::open(&path).expect("reopen"));
    let (second, metrics, resumed) = serving(store.clone(), HubConfig::default(), clocks_dyn).await;
    assert_eq!(resumed, 1);
    let game = second.game("g").await.expect("game");
    let (a, rate) = white_and_rate(&game).await;
    assert!((950..=1_100).contains(&rate), "{rate} ms in a second");
    // White thought about 2.5 s while the service ran; at most the second after the
    // last mark is lost to the outage.
    assert!(
        (600_000 - a) >= 1_400 && (600_000 - a) <= 2_600,
        "White used {} ms",
        600_000 - a
    );
    let log = events(store.as_ref(), "g").await;
    assert_monotone(&log);
    let (from, until, measured) = outage(&log);
    assert_eq!(measured, Some(OutageMeasure::LowerBound));
    assert!(
        (2_000..=2_150).contains(&(until - from)),
        "outage {} ms, the time since the boot",
        until - from
    );
    eprintln!(
        "clock_faults: reboot, wall 30 s behind: clock rate {} ms/s, outage {} ms recorded \
         (lower bound: 2,000 since the boot), White kept {} ms thought before the crash",
        rate,
        until - from,
        600_000 - a
    );
    assert_eq!(metrics.wall_clock_steps(), 1);
    second.shutdown().await;
    store.close().await.expect("close");
}

/// Two PostgreSQL nodes whose wall clocks are 20 s apart: the owner is lost (no release,
/// as `kill -9`) 1.5 s into White's thinking, and the other node takes the game over.
/// The 1.5 s are charged (the owner was alive: its lease renewals say so), only the time
/// after its last renewal is the outage, measured on the database's clock, and the clock
/// runs at 1 s a second on the new owner whatever its own wall clock says.
async fn a_takeover_between_skewed_nodes(owner_skew_ms: i64) {
    let Some(db) = TestDb::create("clock_takeover").await else {
        return;
    };
    let lease = Duration::from_millis(600);
    let config = HubConfig {
        takeover_every: Duration::from_millis(100),
        ..HubConfig::default()
    };
    let store_a = Arc::new(db.store("a", lease).await);
    let store_b = Arc::new(db.store("b", lease).await);
    let (a, _, _) = serving(store_a.clone(), config, FakeClocks::new(owner_skew_ms)).await;
    let (b, _, _) = serving(store_b.clone(), config, FakeClocks::new(0)).await;
    let clock_started = started_game(&a, "g", "5s").await;
    // b follows the game (as a node with a watcher would).
    let follower = b.game("g").await.expect("b follows");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // The owner is lost: it neither renews nor releases.
    a.begin_shutdown();
    store_a.forget("g");
    let lost = Instant::now();
    let thought_before = ms(lost - clock_started);

    // b takes it over once the lease has run out.
    let until = Instant::now() + Duration::from_secs(5);
    let taken = loop {
        if events(store_b.as_ref(), "g")
            .await
            .iter()
            .any(|e| matches!(e.kind, EventKind::Outage { .. }))
        {
            break Instant::now();
        }
        assert!(Instant::now() < until, "no takeover");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let (_, rate) = white_and_rate(&follower).await;
    assert!(
        (950..=1_100).contains(&rate),
        "skew {owner_skew_ms}: {rate} ms in a second on the new owner"
    );
    let flag = flag_seen(&follower, Duration::from_secs(6)).await;

    let log = events(store_b.as_ref(), "g").await;
    assert_monotone(&log);
    let (from, until_ms, measured) = outage(&log);
    assert_eq!(measured, Some(OutageMeasure::DatabaseClock));
    let start = log
        .iter()
        .find(|e| matches!(e.kind, EventKind::GameStarted))
        .expect("started")
        .at
        .mono_ms;
    // Charged before the outage: the thinking up to the owner's last renewal (renewals
    // come every third of the lease).
    let charged_before = i64::try_from(from - start).expect("ms");
    assert!(
        charged_before <= thought_before + 50 && charged_before >= thought_before - 250,
        "skew {owner_skew_ms}: {charged_before} ms charged of {thought_before} ms thought"
    );
    // The outage: from that renewal to the takeover, on the database's clock.
    let length = i64::try_from(until_ms - from).expect("ms");
    let real = ms(taken - lost);
    assert!(
        length >= real - 100 && length <= real + 300,
        "skew {owner_skew_ms}: outage {length} ms, {real} ms from the loss to the takeover"
    );
    // The flag falls when White has used the 5 s: what was charged before, and real
    // time after the takeover.
    let after = i64::try_from(log.last().expect("end").at.mono_ms - until_ms).expect("ms");
    assert!(
        (5_000..=5_050).contains(&(charged_before + after)),
        "skew {owner_skew_ms}: the flag's instant charges {} ms",
        charged_before + after
    );
    let used_after = ms(flag - taken);
    assert!(
        (after - 60..=after + 120).contains(&used_after),
        "skew {owner_skew_ms}: the flag fell {used_after} ms of real time after the takeover, {after} ms of clock"
    );
    eprintln!(
        "clock_faults: takeover, owner skewed {owner_skew_ms} ms: clock rate {} ms/s on the \
         new owner, {charged_before} ms charged of {thought_before} ms thought, outage \
         {length} ms ({real} ms real), flag after {used_after} ms real ({after} ms clock)",
        rate
    );
    b.shutdown().await;
    drop(a);
    db.drop_schema().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_from_a_node_20_s_ahead_freezes_no_clock() {
    a_takeover_between_skewed_nodes(20_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_from_a_node_20_s_behind_charges_the_thinking_and_no_skew() {
    a_takeover_between_skewed_nodes(-20_000).await;
}

// ---------------------------------------------------------------------------------------
// From outside: the release binary, restarted under `faketime`.

/// The `faketime` wrapper, if it is installed (Debian's `faketime`; `.ci/run` installs
/// it).
fn faketime() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join("faketime"))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("SKIPPED (clock_faults, faketime): the faketime command is not installed");
    }
    found
}

fn serve(data: &Path, port: u16, wall: Option<(&Path, &str)>) -> Served {
    let bin = env!("CARGO_BIN_EXE_draughts-arbiter");
    let listen = format!("127.0.0.1:{port}");
    let args = [
        "serve",
        "--data-dir",
        data.to_str().expect("path"),
        "--listen",
        &listen,
    ];
    let mut cmd = match wall {
        // The wall clock only: the monotonic and boot clocks stay true, as after an NTP
        // step (libfaketime fakes CLOCK_MONOTONIC and CLOCK_BOOTTIME too otherwise).
        Some((faketime, offset)) => {
            let mut c = Process::new(faketime);
            c.args(["-m", "-f", offset, bin]).args(args);
            c.env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            c
        }
        None => {
            let mut c = Process::new(bin);
            c.args(args);
            c
        }
    };
    // A group of its own: `faketime` forks the server and waits, so a kill must reach
    // the whole group ([`kill_9`]).
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    Served(
        cmd.env("ARBITER_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn serve"),
    )
}

/// A served process, killed with its process group (`kill -9`) when dropped, so a
/// failing test leaves no server behind.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(pid) = libc::pid_t::try_from(self.0.id()) {
            // SAFETY: kill(2) on the process group of our own child.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.0.wait();
    }
}

/// `kill -9` of a server and of everything in its process group.
fn kill_9(server: Served) {
    drop(server);
}

async fn connect(port: u16) -> Channel {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(ch) = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .expect("url")
            .connect()
            .await
        {
            return ch;
        }
        assert!(Instant::now() < until, "the server did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

async fn game_now(ch: &Channel, id: &str) -> pb::Game {
    GameServiceClient::new(ch.clone())
        .get_game(pb::GetGameRequest { game_id: id.into() })
        .await
        .expect("get")
        .into_inner()
}

fn white_left(g: &pb::Game) -> i64 {
    g.clock.as_ref().expect("a clock").white_ms
}

/// `kill -9` of the server 1 s into White's thinking, then a restart with the wall
/// clock 30 s behind (`faketime -30s`, the monotonic clocks true): the clock runs at
/// once (it stood still for 28 s before), the outage is recorded with its real length,
/// and White has lost the second thought before the crash and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faketime_a_restart_30_s_behind_runs_the_clock_at_once() {
    let Some(faketime) = faketime() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let server = serve(dir.path(), port, None);
    let ch = connect(port).await;
    let games = GameServiceClient::new(ch.clone());
    let id = games
        .clone()
        .create_game(pb::CreateGameRequest {
            variant: pb::Variant::Russian as i32,
            time_control: "5m".into(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
        .id;
    games
        .clone()
        .start_game(pb::StartGameRequest {
            game_id: id.clone(),
            ..Default::default()
        })
        .await
        .expect("start");
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    kill_9(server);
    let down = Instant::now();

    let server = serve(dir.path(), port, Some((&faketime, "-30s")));
    let ch = connect(port).await;
    let up = Instant::now();
    let first = game_now(&ch, &id).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let second = game_now(&ch, &id).await;
    kill_9(server);

    let rate = white_left(&first) - white_left(&second);
    assert!(
        (900..=1_200).contains(&rate),
        "White's clock went down {rate} ms in a second after the restart"
    );
    eprintln!(
        "clock_faults: faketime -30s: clock rate {rate} ms/s after the restart, White used \
         {} ms",
        300_000 - white_left(&first)
    );
    // The crash came at most a second after the last alive mark: White lost between
    // 0 and 1 s of the thinking before it, and none of the downtime.
    let used = 300_000 - white_left(&first);
    assert!((0..=1_200).contains(&used), "White has used {used} ms");
    let log = std::process::Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"))
        .args([
            "export",
            "--data-dir",
            dir.path().to_str().expect("path"),
            "--game",
            &id,
        ])
        .output()
        .expect("export");
    assert!(
        log.status.success(),
        "export: {}",
        String::from_utf8_lossy(&log.stderr)
    );
    let text = String::from_utf8_lossy(&log.stdout);
    let outage: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.to_string().contains("\"outage\""))
        .expect("an outage in the export");
    let s = outage.to_string();
    assert!(s.contains("boot_clock"), "measured on the boot clock: {s}");
    let num = |k: &str| {
        s.split(&format!("\"{k}\":"))
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<i64>().ok())
            .expect(k)
    };
    let length = num("until_ms") - num("from_ms");
    let real = ms(up - down);
    eprintln!("clock_faults: faketime -30s: outage {length} ms recorded, {real} ms real");
    // The outage starts at the last alive mark (up to a second before the kill).
    assert!(
        length >= real - 500 && length <= real + 1_000,
        "outage {length} ms recorded, {real} ms from the kill to the restart"
    );
}
