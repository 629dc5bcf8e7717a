//! Running the service: open the store, recover the games, serve gRPC until shutdown.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

use super::auth::Tokens;
use super::config::Config;
use super::registry::Registry;
use crate::api::{Api, pb};
use crate::store::{EventStore, MemoryStore, SqliteStore};

/// Why the server could not start or stopped with an error.
#[derive(Debug)]
pub struct ServeError(pub String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// Opens the configured store: SQLite in the data directory, or memory.
///
/// # Errors
/// The database cannot be opened.
pub fn open_store(config: &Config) -> Result<Arc<dyn EventStore>, ServeError> {
    match &config.data_dir {
        Some(dir) => {
            let path = dir.join("arbiter.sqlite");
            let store = SqliteStore::open(&path)
                .map_err(|e| ServeError(format!("event log {}: {e}", path.display())))?;
            tracing::info!(path = %path.display(), "event log open (SQLite, WAL, synchronous=FULL)");
            Ok(Arc::new(store))
        }
        None => {
            tracing::warn!("events kept in memory only: nothing survives a restart");
            Ok(Arc::new(MemoryStore::new()))
        }
    }
}

/// Serves on `listener` until `shutdown` resolves: recovers every unfinished game first
/// (health reports SERVING only then), then answers RPCs; on shutdown stops accepting,
/// lets running calls finish and ends the streams.
///
/// # Errors
/// Recovery or the transport failing.
pub async fn run(
    config: &Config,
    store: Arc<dyn EventStore>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let registry = Registry::new(store, config.charge_outage);
    let tokens = Arc::new(Tokens::new(&config.tokens));
    if tokens.is_open() {
        tracing::warn!(
            listen = %config.listen,
            "no tokens configured: every caller is an arbiter (open mode, loopback only unless --insecure)"
        );
    }
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    let names = [
        "draughts.arbiter.v1.RulesService",
        "draughts.arbiter.v1.GameService",
        "draughts.arbiter.v1.BoardService",
        "draughts.arbiter.v1.ArbiterService",
        "draughts.arbiter.v1.BroadcastService",
    ];
    for name in names.iter().copied().chain([""]) {
        health_reporter
            .set_service_status(name, tonic_health::ServingStatus::NotServing)
            .await;
    }
    let recovered = registry
        .recover()
        .await
        .map_err(|e| ServeError(format!("recovery: {e}")))?;
    tracing::info!(games = recovered, "recovered unfinished games");
    for name in names.iter().copied().chain([""]) {
        health_reporter
            .set_service_status(name, tonic_health::ServingStatus::Serving)
            .await;
    }
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| ServeError(format!("reflection: {e}")))?;
    let api = Api::new(registry, tokens);
    tracing::info!(addr = ?listener.local_addr().ok(), "serving");
    tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(reflection)
        .add_service(pb::rules_service_server::RulesServiceServer::new(
            api.clone(),
        ))
        .add_service(pb::game_service_server::GameServiceServer::new(api.clone()))
        .add_service(pb::board_service_server::BoardServiceServer::new(
            api.clone(),
        ))
        .add_service(pb::arbiter_service_server::ArbiterServiceServer::new(
            api.clone(),
        ))
        .add_service(pb::broadcast_service_server::BroadcastServiceServer::new(
            api,
        ))
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await
        .map_err(|e| ServeError(format!("transport: {e}")))
}

/// The accepted connections, with Nagle's algorithm off. `Server::tcp_nodelay` only
/// applies to listeners tonic binds itself; on a listener handed in, small answers would
/// wait for the client's delayed ACK (about 40 ms on Linux) before leaving.
fn incoming(listener: TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: no new calls; running calls finish; the log is flushed");
}
