//! `bench --only postgres`: several nodes on PostgreSQL (issue 15).
//!
//! - **Durable acked moves**: the closed loop of `submit` (one connection per game, the
//!   king shuffle) on the real service over the PostgreSQL store and, in the same run,
//!   over SQLite, at each `--games`: moves/s, p50 and p99 submit -> ack.
//! - **Failover**: two `serve` processes (the server's binary, `draughts-arbiter`, beside
//!   this one) on the database with a lease of `--lease-ms`; the owner of a running game
//!   takes a move and is killed (`kill -9`), and the client sends the next move to the
//!   other node until it is accepted; that time, p50 and max over `--failovers` runs (the
//!   killed node is restarted each time).
//!
//! Each run uses a schema of its own (`bench_<pid>_<time>`), dropped at the end.

use std::net::TcpListener as StdListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::transport::Channel;

use super::harness::{Running, closed_loop_run, connect, create_request, server_exe};
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::store::{PostgresOptions, PostgresStore, SqliteStore};

/// What the PostgreSQL part measures.
pub(super) struct PostgresPlan<'a> {
    /// The database (`postgres://...`).
    pub url: &'a str,
    /// Concurrent games, one run each.
    pub games: &'a [usize],
    /// Moves per game per run.
    pub moves: usize,
    /// Kill-and-take-over runs.
    pub failovers: usize,
    /// The nodes' lease in the failover runs.
    pub lease_ms: u64,
    /// Where the SQLite files of the comparison go.
    pub scratch: &'a Path,
}

/// A schema of its own for the bench, dropped when done.
struct Schema {
    base: String,
    name: String,
}

impl Schema {
    async fn create(base: &str) -> Result<Schema, String> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let schema = Schema {
            base: base.to_string(),
            name: format!("bench_{}_{stamp}", std::process::id()),
        };
        schema
            .execute(&format!("CREATE SCHEMA {}", schema.name), false)
            .await?;
        Ok(schema)
    }

    fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-csearch_path%3D{}", self.base, self.name)
    }

    async fn execute(&self, sql: &str, in_schema: bool) -> Result<(), String> {
        let url = if in_schema {
            self.url()
        } else {
            self.base.clone()
        };
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("database: {e}"))?;
        let task = tokio::spawn(connection);
        let done = client
            .batch_execute(sql)
            .await
            .map_err(|e| format!("{sql}: {e}"));
        drop(client);
        let _ = task.await;
        done
    }

    async fn drop_it(self) {
        if let Err(e) = self
            .execute(&format!("DROP SCHEMA {} CASCADE", self.name), false)
            .await
        {
            eprintln!("bench: schema {} not dropped: {e}", self.name);
        }
    }
}

/// Runs the plan; prints its lines.
pub(super) async fn postgres(
    plan: &PostgresPlan<'_>,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    let schema = Schema::create(plan.url).await?;
    let result = run(plan, &schema, cycle).await;
    schema.drop_it().await;
    result
}

async fn run(
    plan: &PostgresPlan<'_>,
    schema: &Schema,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    println!(
        "postgres: schema {} (synchronous_commit=on); SQLite beside it in {}",
        schema.name,
        plan.scratch.display()
    );
    for &n in plan.games {
        let path = plan.scratch.join(format!("pg-compare-{n}.sqlite"));
        let sqlite = SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let server = Running::real(Arc::new(sqlite)).await?;
        let on_sqlite = closed_loop_run(server, (n, plan.moves, 0), cycle, true).await?;
        println!("{}", on_sqlite.line("service sqlite", n, "moves"));

        schema
            .execute("DROP TABLE IF EXISTS events, games, arbiter_schema", true)
            .await?;
        let store =
            PostgresStore::connect(&schema.url(), PostgresOptions::node("bench", "127.0.0.1:0"))
                .await
                .map_err(|e| format!("postgres: {e}"))?;
        let server = Running::real(Arc::new(store)).await?;
        let on_pg = closed_loop_run(server, (n, plan.moves, 0), cycle, true).await?;
        println!(
            "{}  = {:.2}x sqlite",
            on_pg.line("service postgres", n, "moves"),
            on_pg.per_second() / on_sqlite.per_second().max(1e-9)
        );
    }
    if plan.failovers > 0 {
        schema
            .execute("DROP TABLE IF EXISTS events, games, arbiter_schema", true)
            .await?;
        failover(plan, schema, cycle).await?;
    }
    Ok(())
}

/// A `serve` process of the server's binary on the database.
struct Node {
    id: &'static str,
    port: u16,
    child: Option<Child>,
}

impl Node {
    fn start(&mut self, url: &str, lease_ms: u64) -> Result<(), String> {
        let exe = server_exe()?;
        let child = Command::new(exe)
            .args(["serve", "--listen", &format!("127.0.0.1:{}", self.port)])
            .env("ARBITER_STORE", "postgres")
            .env("ARBITER_DATABASE_URL", url)
            .env("ARBITER_NODE_ID", self.id)
            .env("ARBITER_LEASE_MS", lease_ms.to_string())
            .env("ARBITER_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("serve: {e}"))?;
        self.child = Some(child);
        Ok(())
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> Result<u16, String> {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("a free port: {e}"))
}

/// Kill -> first accepted move on the other node, `plan.failovers` times.
async fn failover(
    plan: &PostgresPlan<'_>,
    schema: &Schema,
    cycle: &Arc<Vec<String>>,
) -> Result<(), String> {
    let url = schema.url();
    let mut nodes = [
        Node {
            id: "bench-a",
            port: free_port()?,
            child: None,
        },
        Node {
            id: "bench-b",
            port: free_port()?,
            child: None,
        },
    ];
    for n in &mut nodes {
        n.start(&url, plan.lease_ms)?;
    }
    let mut channels: Vec<Channel> = Vec::new();
    for n in &nodes {
        channels.push(connect(&n.url()).await?);
    }
    let mut owner = 0usize;
    let mut client = GameServiceClient::new(channels[owner].clone());
    let game = client
        .create_game(create_request(0))
        .await
        .map_err(|s| format!("create: {s}"))?
        .into_inner();
    client
        .start_game(pb::StartGameRequest {
            game_id: game.id.clone(),
            expected_seq: 0,
        })
        .await
        .map_err(|s| format!("start: {s}"))?;
    let mut ply = 0usize;
    let mut times = Vec::with_capacity(plan.failovers);
    for _ in 0..plan.failovers {
        submit(&channels[owner], &game.id, &cycle[ply % cycle.len()])
            .await
            .map_err(|s| format!("move on the owner: {s}"))?;
        ply += 1;
        nodes[owner].kill();
        let killed = Instant::now();
        let other = 1 - owner;
        loop {
            match submit(&channels[other], &game.id, &cycle[ply % cycle.len()]).await {
                Ok(()) => break,
                Err(s) if s.code() == tonic::Code::Unavailable => {
                    if killed.elapsed() > Duration::from_secs(30) {
                        return Err(format!("no takeover after 30 s: {s}"));
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Err(s) => return Err(format!("move after the kill: {s}")),
            }
        }
        times.push(killed.elapsed());
        ply += 1;
        nodes[owner].start(&url, plan.lease_ms)?;
        channels[owner] = connect(&nodes[owner].url()).await?;
        owner = other;
    }
    times.sort();
    println!(
        "postgres: {} failovers, lease {} ms: kill -9 -> first accepted move on the other node \
         p50 {:.0} ms  max {:.0} ms",
        times.len(),
        plan.lease_ms,
        times[times.len() / 2].as_secs_f64() * 1e3,
        times.last().map_or(0.0, |t| t.as_secs_f64() * 1e3)
    );
    Ok(())
}

/// One move of the game, with no seq check (the takeover's outage event moves the seq).
async fn submit(ch: &Channel, game_id: &str, notation: &str) -> Result<(), tonic::Status> {
    GameServiceClient::new(ch.clone())
        .submit_move(pb::SubmitMoveRequest {
            game_id: game_id.to_string(),
            r#move: notation.to_string(),
            expected_seq: 0,
            side: 0,
            offer_draw: false,
        })
        .await
        .map(|_| ())
}
