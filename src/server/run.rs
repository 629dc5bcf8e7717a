//! Running the service: open the store, recover the games, serve gRPC until shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::codegen::http;
use tonic_reflection::server::{v1 as reflection_v1, v1alpha as reflection_v1alpha};

use super::config::{Config, FileConfig};
use super::conn::{self, ConnLimits, Connections};
use super::edge::{EdgeLayer, framed};
use super::forward::ForwardLayer;
use super::tls::{self, ServerTls};
use super::{memory, probes};
use crate::api::auth::Tokens;
use crate::api::token_table::TokenTable;
use crate::api::{Api, BoardRate, pb};
use crate::hub::metrics::Metrics;
use crate::hub::{Hub, HubConfig, HubError};
use crate::store::{
    EventStore, MemoryStore, PostgresOptions, PostgresStore, SqliteOptions, SqliteStore,
};
use crate::web;

/// Why the server could not start or stopped with an error.
#[derive(Debug)]
pub struct ServeError(pub String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// Opens the configured store: PostgreSQL as one of several nodes, SQLite in the data
/// directory (either with its commits timed into `metrics`), or memory.
///
/// # Errors
/// The database cannot be opened or reached.
pub async fn open_store(
    config: &Config,
    metrics: &Arc<Metrics>,
) -> Result<Arc<dyn EventStore>, ServeError> {
    if let Some(cluster) = &config.cluster {
        let mut options = PostgresOptions::node(&cluster.node_id, &cluster.advertise_addr);
        options.lease = cluster.lease;
        options.commit_observer = Some(metrics.clone());
        let store = PostgresStore::connect(&cluster.database_url, options)
            .await
            .map_err(|e| ServeError(format!("event log on PostgreSQL: {e}")))?;
        tracing::info!(
            node = %cluster.node_id,
            advertise = %cluster.advertise_addr,
            lease_ms = cluster.lease.as_millis() as u64,
            "event log open (PostgreSQL, synchronous_commit=on, leases per game)"
        );
        return Ok(Arc::new(store));
    }
    match &config.data_dir {
        Some(dir) => {
            let path = dir.join("arbiter.sqlite");
            let options = SqliteOptions {
                commit_observer: Some(metrics.clone()),
                init: config.init,
                ..SqliteOptions::default()
            };
            let store = SqliteStore::open_with(&path, options).map_err(|e| {
                let lost = !std::fs::metadata(&path).is_ok_and(|m| m.len() > 0);
                let repair = if e.is_damaged() && !lost {
                    repair_hint(dir)
                } else {
                    String::new()
                };
                ServeError(format!("event log {}: {e}{repair}", path.display()))
            })?;
            tracing::info!(path = %path.display(), "event log open (SQLite, WAL, synchronous=FULL)");
            Ok(Arc::new(store))
        }
        None => {
            tracing::warn!("events kept in memory only: nothing survives a restart");
            Ok(Arc::new(MemoryStore::new()))
        }
    }
}

/// What an operator does about a damaged SQLite log in `dir`, for the start's refusal.
fn repair_hint(dir: &std::path::Path) -> String {
    format!(
        "; the server does not start on a damaged log: run `draughts-arbiter check \
         --data-dir {0}` to see what is damaged and which games, then `export` the games \
         that read and `import` them into a new data directory, or restore a backup \
         (README: Damaged files)",
        dir.display()
    )
}

/// The sockets the server answers on.
#[derive(Debug)]
pub struct Listeners {
    /// gRPC (TLS if configured).
    pub grpc: TcpListener,
    /// Prometheus `/metrics` over plain HTTP, if any.
    pub metrics: Option<TcpListener>,
    /// The gRPC listener's TLS, read from `config.tls` by [`tls_of`] (None: plaintext).
    pub tls: Option<ServerTls>,
}

/// The TLS of `config`, its files read and checked.
///
/// # Errors
/// A TLS file that cannot be read or parsed, named in the message.
pub fn tls_of(config: &Config) -> Result<Option<ServerTls>, ServeError> {
    config
        .tls
        .as_ref()
        .map(tls::server_config)
        .transpose()
        .map_err(|e| ServeError(e.0))
}

/// Serves gRPC on `listener` (with `config.tls`) until `shutdown` resolves, and
/// `/metrics` on `config.metrics_listen` if set; see [`run_with`].
///
/// # Errors
/// A TLS file or the metrics address; as [`run_with`].
pub async fn run(
    config: &Config,
    store: Arc<dyn EventStore>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let listeners = Listeners {
        grpc: listener,
        metrics: bind_metrics(config).await?,
        tls: tls_of(config)?,
    };
    run_with(config, store, listeners, Arc::new(Metrics::new()), shutdown).await
}

/// Binds `config.metrics_listen`, if set.
///
/// # Errors
/// The address cannot be bound.
pub async fn bind_metrics(config: &Config) -> Result<Option<TcpListener>, ServeError> {
    match config.metrics_listen {
        None => Ok(None),
        Some(addr) => TcpListener::bind(addr)
            .await
            .map(Some)
            .map_err(|e| ServeError(format!("metrics_listen {addr}: {e}"))),
    }
}

/// Serves until `shutdown` resolves: `/metrics`, `/healthz` and `/readyz` at once (if a
/// listener is given; `/readyz` says ready with health's SERVING), then lists the
/// unfinished games, reports SERVING and answers RPCs while they load in the background,
/// with `listeners.tls` if any; on shutdown stops accepting on both ports, lets running
/// calls finish and ends the streams.
///
/// # Errors
/// The transport refusing the TLS setting, recovery or the transport failing.
pub async fn run_with(
    config: &Config,
    store: Arc<dyn EventStore>,
    listeners: Listeners,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    // One signal, two listeners: the gRPC server and the metrics one both stop on it.
    let (stop, stopped) = watch::channel(false);
    let draining = metrics.clone();
    let signal = tokio::spawn(async move {
        shutdown.await;
        draining.set_ready(false);
        let _ = stop.send(true);
    });
    let metrics_task = listeners.metrics.map(|listener| {
        tracing::info!(addr = ?listener.local_addr().ok(), "metrics at /metrics");
        tokio::spawn(probes::serve(
            metrics.clone(),
            listener,
            stop_signal(stopped.clone()),
        ))
    });
    // Gives back the memory each crowd of watch streams frees once it has left.
    let keeper = tokio::spawn(memory::keep(metrics.clone(), stop_signal(stopped.clone())));
    let result = serve_grpc(
        config,
        store,
        listeners.grpc,
        listeners.tls,
        metrics,
        stop_signal(stopped),
    )
    .await;
    signal.abort();
    keeper.abort();
    if let Some(task) = metrics_task {
        // Already stopped after a shutdown signal; stopped here after an error.
        task.abort();
        let _ = task.await;
    }
    result
}

async fn stop_signal(mut stopped: watch::Receiver<bool>) {
    // An error means the sender is gone without a signal: the server is ending anyway.
    let _ = stopped.wait_for(|s| *s).await;
}

/// Counts a refused RPC by the grpc-status its response carries at once (a
/// "trailers-only" answer: the handler returned an error before any message).
fn count_refusal(metrics: &Metrics, response: &http::Response<tonic::body::Body>) {
    if let Some(code) = response
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
    {
        metrics.rejected(code);
    }
}

async fn serve_grpc(
    config: &Config,
    store: Arc<dyn EventStore>,
    listener: TcpListener,
    tls: Option<ServerTls>,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let hub = Hub::with_config(
        store.clone(),
        config.charge_outage,
        metrics.clone(),
        HubConfig {
            max_loaded: config.max_loaded_games,
            evict_after: config.evict_after,
            max_watchers_per_game: config.limits.max_watchers_per_game,
            max_watchers: config.limits.max_watchers,
            ..HubConfig::default()
        },
    );
    let table = Arc::new(TokenTable::new(Tokens::new(&config.tokens)));
    let tokens = table.current();
    let addr = listener.local_addr().unwrap_or(config.listen);
    if tokens.is_open() {
        tracing::warn!(
            listen = %config.listen,
            "no tokens configured: every caller is an arbiter (open mode, loopback only unless --insecure)"
        );
    } else if tls.is_none() && !addr.ip().is_loopback() {
        tracing::warn!(
            listen = %addr,
            "bearer tokens travel in plaintext: no TLS on a non-loopback address; \
             configure [tls] or terminate TLS in front of the service"
        );
    }
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    let names = pb::SERVICE_NAMES;
    for name in names.iter().copied().chain([""]) {
        health_reporter
            .set_service_status(name, tonic_health::ServingStatus::NotServing)
            .await;
    }
    // The unfinished games are loaded in the background (a request for one not loaded
    // yet loads it first), then the finished games' logs are checked; a game whose log
    // does not replay is quarantined and the others serve.
    let started = Instant::now();
    let pending = match hub.recover_in_background().await {
        Ok(n) => n,
        Err(e) => {
            hub.shutdown().await;
            // The games cannot even be listed: refused, naming the file and the repair.
            let damaged = matches!(&e, HubError::Store(s) if s.is_damaged());
            return Err(ServeError(match (&config.data_dir, &config.cluster) {
                (Some(dir), None) if damaged => format!(
                    "recovery: event log {}: {e}{}",
                    dir.join("arbiter.sqlite").display(),
                    repair_hint(dir)
                ),
                _ => format!("recovery: {e}"),
            }));
        }
    };
    tracing::info!(games = pending, took = ?started.elapsed(), "recovering unfinished games in the background");
    for name in names.iter().copied().chain([""]) {
        health_reporter
            .set_service_status(name, tonic_health::ServingStatus::Serving)
            .await;
    }
    metrics.set_ready(true);
    let (reflection_v1, reflection_v1alpha) = match reflection() {
        Ok(r) => r,
        Err(e) => {
            hub.shutdown().await;
            return Err(ServeError(format!("reflection: {e}")));
        }
    };
    let limits = config.limits;
    let api = Api::new(hub.clone(), tokens)
        .with_token_table(table.clone())
        .with_event_delays(config.event_delays.clone())
        .with_pairing_engine(config.pairing_engine.clone())
        .with_public_broadcast(config.public_broadcast)
        .with_board_rate(BoardRate {
            per_s: limits.board_messages_per_s,
            burst: limits.board_burst,
        })
        .with_board_silence(limits.board_silence);
    tracing::info!(addr = ?listener.local_addr().ok(), tls = tls.is_some(), "serving");
    let reload = config
        .config_file
        .clone()
        .map(|path| tokio::spawn(reload_tokens_on_hangup(path, table.clone())));
    // Several nodes without TLS: a refused command goes on to its game's owner (with TLS
    // the refusal names the owner and the client sends it there).
    let forward = match (&config.cluster, tls.is_none()) {
        (Some(cluster), true) => Some(ForwardLayer::new(
            &cluster.node_id,
            cluster.lease,
            metrics.clone(),
        )),
        _ => None,
    };
    // TLS, if any, is accepted by `conn::incoming` (ALPN `h2` and `http/1.1`, see
    // server::tls), not by tonic.
    let builder = tonic::transport::Server::builder()
        // grpc-web from browsers and the HTTP routes (src/web) come over HTTP/1.1 too.
        .accept_http1(true)
        .http2_keepalive_interval(limits.keepalive_interval)
        .http2_keepalive_timeout(Some(limits.keepalive_timeout))
        .max_concurrent_streams(limits.max_streams_per_connection)
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW);
    // At the signal the hub ends every watch and board stream at once (UNAVAILABLE
    // "server shutting down") while tonic stops accepting and lets running calls finish.
    let stopping = hub.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.begin_shutdown();
    };
    let max = limits.max_message_bytes;
    let conns = Connections::new(ConnLimits {
        max: limits.max_connections,
        idle: limits.idle_timeout,
    });
    // Each service behind tonic-web checks its requests' framing (`edge::framed`): there
    // grpc-web and grpc-web-text bodies are plain gRPC. tonic's own size check stays
    // behind the edge's (same limit) as a second wall.
    let routes = tonic::service::Routes::builder()
        .add_service(web(framed(health_service, max)))
        .add_service(framed(reflection_v1, max))
        .add_service(framed(reflection_v1alpha, max))
        .add_service(web(framed(
            pb::rules_service_server::RulesServiceServer::new(api.clone())
                .max_decoding_message_size(max),
            max,
        )))
        .add_service(web(framed(
            pb::game_service_server::GameServiceServer::new(api.clone())
                .max_decoding_message_size(max),
            max,
        )))
        .add_service(web(framed(
            pb::board_service_server::BoardServiceServer::new(api.clone())
                .max_decoding_message_size(max),
            max,
        )))
        .add_service(web(framed(
            pb::arbiter_service_server::ArbiterServiceServer::new(api.clone())
                .max_decoding_message_size(max),
            max,
        )))
        .add_service(web(framed(
            pb::tournament_service_server::TournamentServiceServer::new(api.clone())
                .max_decoding_message_size(max),
            max,
        )))
        .add_service(web(framed(
            crate::api::frame::BroadcastServiceServer::new(api.clone())
                .max_decoding_message_size(max),
            max,
        )))
        .clone()
        .routes();
    // The HTTP routes beside the services; anything else is a gRPC call to a method that
    // does not exist (UNIMPLEMENTED) or a request for a page that is not there (404).
    let routes = tonic::service::Routes::from(
        routes
            .into_axum_router()
            .merge(web::routes(api))
            .fallback(web::fallback),
    );
    // Outermost first: CORS answers a browser's preflight; the refusals are counted;
    // the edge drops request trailers and checks gRPC's framing (grpc-web's is checked
    // behind tonic-web, above).
    let served = builder
        .layer(tower::util::option_layer(cors(&config.cors_origins)))
        .layer(tower::util::MapResponseLayer::new(
            move |response: http::Response<tonic::body::Body>| {
                count_refusal(&metrics, &response);
                response
            },
        ))
        .layer(EdgeLayer { max_message: max })
        .layer(tower::util::option_layer(forward))
        .add_routes(routes)
        .serve_with_incoming_shutdown(conn::incoming(listener, conns, tls), shutdown)
        .await
        .map_err(|e| ServeError(format!("transport: {e}")));
    if let Some(reload) = reload {
        reload.abort();
    }
    // Every game's task finishes the commit it is in and stops; then the log is
    // checkpointed and its WAL truncated.
    hub.shutdown().await;
    if let Err(e) = store.close().await {
        tracing::warn!(error = %e, "event log close");
    }
    tracing::info!("stopped");
    served
}

/// HTTP/2 flow control of what clients send (SETTINGS_INITIAL_WINDOW_SIZE): how much a
/// stream may send that the server has not read yet. h2 charges every DATA frame under
/// 256 bytes as 256 less its size while it waits unread, and closes the whole connection
/// (`GOAWAY ENHANCE_YOUR_CALM`, "too_many_data_frames") once the charges pass half the
/// connection window; a board sends a frame a message of 10 to 20 bytes. With hyper's
/// 1 MiB stream and connection windows, about 2,100 touches waiting unread (a few
/// boards flooding faster than their streams are read) closed the connection and every
/// board on it (issue 37). A stream now holds at most [`STREAM_WINDOW`] unread: a
/// flooding board at most 16 KiB / 12 bytes ≈ 1,365 touches, charged 0.33 MB.
/// Requests are small (the largest a few KiB), so the small window costs nothing but
/// round trips for a message of many KiB.
pub const STREAM_WINDOW: u32 = 16 * 1024;

/// The connection's window (see [`STREAM_WINDOW`]): h2's budget for small frames waiting
/// unread is half of it, 8 MiB, room for 25 streams flooding with 12-byte touches (10
/// with empty 5-byte messages), which no connection of boards comes near; what waits
/// unread stays bounded by [`STREAM_WINDOW`] a stream.
pub const CONNECTION_WINDOW: u32 = 16 * 1024 * 1024;

/// grpc-web around a service: a browser's call (HTTP/1.1 or HTTP/2) becomes gRPC for
/// it. Each service is wrapped, not the server: tonic-web answers anything that is not
/// gRPC with 400, and the HTTP routes (src/web) are not gRPC.
fn web<S>(svc: S) -> tonic_web::GrpcWebService<S> {
    tower::Layer::layer(&tonic_web::GrpcWebLayer::new(), svc)
}

/// CORS for pages on the origins of `[web] cors_origins` (none: no CORS layer; the
/// service's own pages are same-origin): grpc-web's headers allowed in, its status
/// headers exposed.
fn cors(origins: &[String]) -> Option<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        // Checked by the config: printable ASCII.
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| http::HeaderValue::from_str(o).ok()),
        )
    };
    let names = |list: &[&'static str]| {
        list.iter()
            .map(|n| http::HeaderName::from_static(n))
            .collect::<Vec<_>>()
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([http::Method::GET, http::Method::POST, http::Method::OPTIONS])
            .allow_headers(names(&[
                "authorization",
                "content-type",
                "x-grpc-web",
                "x-user-agent",
                "grpc-timeout",
                "connect-protocol-version",
                "connect-timeout-ms",
            ]))
            .expose_headers(names(&[
                "grpc-status",
                "grpc-message",
                "grpc-status-details-bin",
            ]))
            .max_age(std::time::Duration::from_secs(24 * 3600)),
    )
}

/// Server reflection in both protocol versions: `grpc.reflection.v1` (grpcurl 1.9+, buf
/// curl) and `grpc.reflection.v1alpha` (older grpcurl, Python grpcio-reflection, many
/// other clients). Both serve the same descriptors, so both list the same services: the
/// API's five, `grpc.health.v1.Health` and the two reflection services. A file given
/// twice (each builder adds its own version's file again) is kept once.
///
/// # Errors
/// A descriptor set that does not decode (a build error, tested in `tests/it/api_contract.rs`).
pub fn reflection() -> Result<
    (
        reflection_v1::ServerReflectionServer<impl reflection_v1::ServerReflection>,
        reflection_v1alpha::ServerReflectionServer<impl reflection_v1alpha::ServerReflection>,
    ),
    tonic_reflection::server::Error,
> {
    fn descriptors() -> tonic_reflection::server::Builder<'static> {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(
                tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
            )
    }
    Ok((descriptors().build_v1()?, descriptors().build_v1alpha()?))
}

/// Reads the configuration file's `[[tokens]]` again at each SIGHUP and replaces the
/// server's list: new requests see the new list at once, and the streams of a token
/// that is gone (or whose role or label changed) end with UNAUTHENTICATED. A file that
/// does not read, parse or check is refused with its error logged and the old list kept;
/// so is a list that would switch between open mode and tokens. Only the tokens are
/// reloaded: the rest of the file takes a restart.
pub async fn reload_tokens_on_hangup(path: std::path::PathBuf, table: Arc<TokenTable>) {
    #[cfg(unix)]
    {
        let mut hangups =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "no SIGHUP handler: tokens reload only at restart");
                    return;
                }
            };
        while hangups.recv().await.is_some() {
            let replaced = FileConfig::load_tokens(&path)
                .map_err(|e| e.to_string())
                .and_then(|list| table.replace(&list));
            match replaced {
                Ok(r) => tracing::info!(
                    config = %path.display(),
                    tokens = r.tokens,
                    added_or_changed = r.added,
                    revoked = r.revoked,
                    "SIGHUP: tokens reloaded"
                ),
                Err(e) => tracing::error!(
                    config = %path.display(),
                    error = %e,
                    "SIGHUP: tokens not reloaded; the previous tokens stay in force"
                ),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (path, table);
        std::future::pending::<()>().await;
    }
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
