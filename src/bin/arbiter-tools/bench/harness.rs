//! What every service benchmark shares: a server started in-process on `127.0.0.1:0`
//! (the real one, or the bare echo of [`super::echo`]), client threads with a
//! single-threaded runtime of their own, the benchmark games, and the closed loop that
//! plays them; and the server's binary for the parts that start it as a process.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Barrier, oneshot};
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Endpoint};

use super::echo;
use super::stats::{SHUFFLE_FEN, Sample, TIME_CONTROL};
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::server::config::{Config, Limits, LogFormat};
use draughts_arbiter::server::run::run as serve;
use draughts_arbiter::store::EventStore;

/// The server's binary, `draughts-arbiter` in this binary's folder (cargo builds both
/// there): the parts that time or kill the real process (restart, failover) start its
/// `serve`.
///
/// # Errors
/// The path of this binary is unknown, or the server's binary is not beside it.
pub(super) fn server_exe() -> Result<std::path::PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("this binary: {e}"))?;
    let exe = me.with_file_name(format!("draughts-arbiter{}", std::env::consts::EXE_SUFFIX));
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!(
            "the server's binary {} is missing (`cargo build --release` builds it beside \
             this one)",
            exe.display()
        ))
    }
}

/// A server under test, listening on a loopback port of its own.
pub(super) struct Running {
    url: String,
    addr: std::net::SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), String>>,
}

impl Running {
    /// The real service (`serve`'s code path) on `store`, without tokens or metrics port.
    pub(super) async fn real(store: Arc<dyn EventStore>) -> Result<Running, String> {
        let (listener, addr) = bind().await?;
        let config = Config {
            listen: addr,
            data_dir: None,
            metrics_listen: None,
            log_format: LogFormat::Text,
            insecure: false,
            charge_outage: false,
            max_loaded_games: 100_000,
            evict_after: std::time::Duration::from_secs(60),
            tls: None,
            tokens: Vec::new(),
            event_delays: Default::default(),
            pairing_engine: None,
            // The fan-out plans put thousands of watch streams on a few connections.
            limits: Limits {
                max_streams_per_connection: u32::MAX,
                max_watchers_per_game: usize::MAX,
                max_watchers: usize::MAX,
                ..Limits::default()
            },
            cors_origins: Vec::new(),
            public_broadcast: true,
            cluster: None,
            init: false,
            config_file: None,
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            serve(&config, store, listener, async {
                let _ = stopped.await;
            })
            .await
            .map_err(|e| e.to_string())
        });
        Ok(Running {
            url: format!("http://{addr}"),
            addr,
            stop,
            task,
        })
    }

    /// A bare tonic server answering `GameService.SubmitMove` with `canned` (and nothing
    /// else): the transport's cost alone, on the same socket settings as the service.
    pub(super) async fn echo(canned: pb::SubmitMoveResponse) -> Result<Running, String> {
        Running::bare(
            tonic::service::Routes::new(pb::game_service_server::GameServiceServer::new(
                echo::Echo::new(canned),
            )),
            "echo",
        )
        .await
    }

    /// The echo of [`Running::echo`] answering from a task per game (the hop).
    pub(super) async fn echo_hop(canned: pb::SubmitMoveResponse) -> Result<Running, String> {
        Running::bare(
            tonic::service::Routes::new(pb::game_service_server::GameServiceServer::new(
                echo::Echo::with_hop(canned),
            )),
            "echo with a hop",
        )
        .await
    }

    /// The echo of [`Running::echo`] that also streams `WatchEvent`: each move publishes
    /// `events` to every stream (the fan-out anchor, see [`super::echo`]).
    pub(super) async fn echo_fanout(
        canned: pb::SubmitMoveResponse,
        events: Vec<pb::GameEvent>,
    ) -> Result<Running, String> {
        let fanout = echo::Fanout::new(events);
        let routes = tonic::service::Routes::new(pb::game_service_server::GameServiceServer::new(
            echo::Echo::publishing(canned, fanout.clone()),
        ))
        .add_service(pb::broadcast_service_server::BroadcastServiceServer::new(
            echo::EchoBroadcast(fanout),
        ));
        Running::bare(routes, "fan-out echo").await
    }

    async fn bare(routes: tonic::service::Routes, what: &'static str) -> Result<Running, String> {
        let (listener, addr) = bind().await?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_routes(routes)
                .serve_with_incoming_shutdown(
                    TcpIncoming::from(listener).with_nodelay(Some(true)),
                    async {
                        let _ = stopped.await;
                    },
                )
                .await
                .map_err(|e| format!("{what} transport: {e}"))
        });
        Ok(Running {
            url: format!("http://{addr}"),
            addr,
            stop,
            task,
        })
    }

    /// Where clients connect.
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// The address it listens on (HTTP clients).
    pub(super) fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Stops the server and waits (at most 10 s) for it.
    pub(super) async fn stop(self) -> Result<(), String> {
        let _ = self.stop.send(());
        match tokio::time::timeout(Duration::from_secs(10), self.task).await {
            Ok(Ok(result)) => result.map_err(|e| format!("server: {e}")),
            Ok(Err(e)) => Err(format!("server task: {e}")),
            Err(_) => Err("server did not shut down within 10 s".into()),
        }
    }
}

async fn bind() -> Result<(tokio::net::TcpListener, std::net::SocketAddr), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("listen: {e}"))?;
    let addr = listener.local_addr().map_err(|e| format!("listen: {e}"))?;
    Ok((listener, addr))
}

/// Runs `f` on a new thread named `name` with a single-threaded runtime of its own, as a
/// load generator's event loop does (on two cores its tasks never wake each other across
/// threads). The thread starts at once; the future returned resolves to its result.
pub(super) fn on_client_thread<T, F, Fut>(
    name: &str,
    f: F,
) -> impl Future<Output = Result<T, String>> + use<T, F, Fut>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, String>>,
    T: Send + 'static,
{
    let (done, finished) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("client runtime: {e}"))
                .and_then(|rt| rt.block_on(f()));
            let _ = done.send(result);
        })
        .map_err(|e| format!("client thread: {e}"));
    async move {
        spawned?;
        finished
            .await
            .unwrap_or_else(|_| Err("the client thread ended without a result".into()))
    }
}

/// Connects to `url`, retrying for about a second while the server starts.
pub(super) async fn connect(url: &str) -> Result<Channel, String> {
    let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| format!("{url}: {e}"))?;
    let mut last = String::new();
    for _ in 0..50 {
        match endpoint.connect().await {
            Ok(channel) => return Ok(channel),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(format!("cannot reach {url}: {last}"))
}

/// A benchmark game as its client sees it.
pub(super) struct Game {
    /// Its connection.
    pub client: GameServiceClient<Channel>,
    /// Its id.
    pub id: String,
    /// The last seq the client knows of (sent as `expected_seq`).
    pub seq: u64,
    /// Moves played so far: the next one is `cycle[ply % 4]`.
    pub ply: usize,
    /// Each move's `monotonic_ms` (its first event's), by ply from the first move the
    /// bench played: when the server published it (the relays' latency is measured
    /// against it).
    pub stamps: Vec<i64>,
}

impl Game {
    /// Plays the next move of `cycle` (`expected_seq` set as a careful client would).
    /// Returns how many events it recorded.
    pub(super) async fn play(&mut self, cycle: &[String]) -> Result<usize, String> {
        Ok(self.submit(cycle).await?.events.len())
    }

    /// [`Game::play`], giving the service's whole answer.
    pub(super) async fn submit(
        &mut self,
        cycle: &[String],
    ) -> Result<pb::SubmitMoveResponse, String> {
        let request = pb::SubmitMoveRequest {
            game_id: self.id.clone(),
            r#move: cycle[self.ply % cycle.len()].clone(),
            expected_seq: self.seq,
            side: 0,
            offer_draw: false,
        };
        let reply = self
            .client
            .submit_move(request)
            .await
            .map_err(|s| {
                format!(
                    "{} move {}: {:?}: {}",
                    self.id,
                    self.ply,
                    s.code(),
                    s.message()
                )
            })?
            .into_inner();
        self.seq = reply.game.as_ref().map_or(0, |g| g.last_seq);
        self.ply += 1;
        self.stamps
            .push(reply.events.first().map_or(0, |e| e.monotonic_ms));
        Ok(reply)
    }
}

/// Creates and starts `games` benchmark games, one connection each (for the echo server,
/// `real` false: only the connections, with made-up ids).
pub(super) async fn setup(url: &str, games: usize, real: bool) -> Result<Vec<Game>, String> {
    let mut out = Vec::with_capacity(games);
    for i in 0..games {
        let mut client = GameServiceClient::new(connect(url).await?);
        if !real {
            out.push(Game {
                client,
                id: format!("echo{i}"),
                seq: 0,
                ply: 0,
                stamps: Vec::new(),
            });
            continue;
        }
        let created = client
            .create_game(create_request(i))
            .await
            .map_err(|s| format!("CreateGame: {}", s.message()))?
            .into_inner();
        let started = client
            .start_game(pb::StartGameRequest {
                game_id: created.id.clone(),
                expected_seq: created.last_seq,
            })
            .await
            .map_err(|s| format!("StartGame: {}", s.message()))?
            .into_inner();
        let seq = started.game.map_or(0, |g| g.last_seq);
        out.push(Game {
            client,
            id: created.id,
            seq,
            ply: 0,
            stamps: Vec::new(),
        });
    }
    Ok(out)
}

/// A benchmark game: the king shuffle under [`TIME_CONTROL`], move-count draws referred
/// to the arbiter and repetitions by claim only, so it never ends.
pub(super) fn create_request(i: usize) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: pb::Variant::Russian as i32,
        time_control: TIME_CONTROL.into(),
        white: None,
        black: None,
        event: "Bench".into(),
        round: "1".into(),
        board: i as u32 + 1,
        start_fen: SHUFFLE_FEN.into(),
        settings: Some(pb::GameSettings {
            repetition_mode: pb::RepetitionMode::Claim as i32,
            move_count_draws: pb::MoveCountDraws::ReferredToArbiter as i32,
            ..Default::default()
        }),
        game_id: String::new(),
        site: String::new(),
        time_zone: String::new(),
    }
}

/// The closed loop: every game plays `moves` moves, each waiting for the previous
/// answer, all games at once from a common start. Gives the games back.
pub(super) async fn play(
    games: Vec<Game>,
    moves: usize,
    cycle: &Arc<Vec<String>>,
) -> Result<(Sample, Vec<Game>), String> {
    let barrier = Arc::new(Barrier::new(games.len() + 1));
    let mut tasks = Vec::with_capacity(games.len());
    for mut game in games {
        let barrier = barrier.clone();
        let cycle = cycle.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(moves);
            barrier.wait().await;
            for _ in 0..moves {
                let t = Instant::now();
                game.play(&cycle).await?;
                latencies.push(t.elapsed());
            }
            Ok::<_, String>((latencies, game))
        }));
    }
    barrier.wait().await;
    let began = Instant::now();
    let mut latencies = Vec::new();
    let mut games = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (l, g) = task.await.map_err(|e| format!("task: {e}"))??;
        latencies.extend(l);
        games.push(g);
    }
    let sample = Sample {
        latencies,
        elapsed: began.elapsed(),
    };
    Ok((sample, games))
}

/// The service (or the echo) at `url`, as `bench` has always driven it: `games` games on
/// their own connections, `moves` moves each, closed loop; after `warmup` moves per game
/// not measured.
pub(super) async fn drive(
    url: &str,
    games: usize,
    moves: usize,
    warmup: usize,
    cycle: &Arc<Vec<String>>,
    real: bool,
) -> Result<Sample, String> {
    let mut games = setup(url, games, real).await?;
    if warmup > 0 {
        games = play(games, warmup, cycle).await?.1;
    }
    Ok(play(games, moves, cycle).await?.0)
}

/// Starts `server`, drives it from a client thread as [`drive`] does, stops it.
pub(super) async fn closed_loop_run(
    server: Running,
    (games, moves, warmup): (usize, usize, usize),
    cycle: &Arc<Vec<String>>,
    real: bool,
) -> Result<Sample, String> {
    let url = server.url().to_string();
    let cycle = cycle.clone();
    let sample = on_client_thread("bench-clients", move || async move {
        drive(&url, games, moves, warmup, &cycle, real).await
    })
    .await;
    let stopped = server.stop().await;
    let sample = sample?;
    stopped?;
    Ok(sample)
}

/// Nanoseconds on the CPU of the server's threads: every thread of the process but the
/// bench's own clients (named `bench-…`, [`on_client_thread`]), from
/// `/proc/self/task/*/schedstat`. A client thread that ends meanwhile is no part of it.
pub(super) fn server_cpu_ns() -> Result<u64, String> {
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).ok();
    let mut all = 0;
    for entry in
        std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?
    {
        let entry = entry.map_err(|e| format!("/proc/self/task: {e}"))?;
        if read(entry.path().join("comm")).is_some_and(|name| name.starts_with("bench-")) {
            continue;
        }
        // A thread that ended meanwhile is skipped.
        all += read(entry.path().join("schedstat"))
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Ok(all)
}
