//! `draughts-arbiter serve`: the gRPC service on its embedded SQLite event log, or as one
//! of several nodes on PostgreSQL.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use crate::hub::metrics::Metrics;
use crate::server::config::{Config, FileConfig, FileLimits, LogFormat, StoreKind, StoreOverride};
use crate::server::run::{
    Listeners, ServeError, bind_metrics, open_store, run_with, shutdown_signal, tls_of,
};

/// Arguments of `serve`. Each flag can also come from its `ARBITER_*` environment variable;
/// the config file fills what both leave unset.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// gRPC address [default: 127.0.0.1:50051].
    #[arg(long, env = "ARBITER_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Directory of the SQLite event log [default: ./data].
    #[arg(long, env = "ARBITER_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// TOML config file (tokens, TLS, defaults for the flags).
    #[arg(long, env = "ARBITER_CONFIG")]
    pub config: Option<PathBuf>,
    /// Start an empty event log where the SQLite database is missing or empty (0 bytes)
    /// although its WAL, shared-memory index or marker shows a log was there: refused
    /// without it. The files found are set aside (renamed), not deleted. A new, empty
    /// directory needs no --init.
    #[arg(long, env = "ARBITER_INIT")]
    pub init: bool,
    /// Keep events in memory only (a try-out; nothing survives a restart).
    #[arg(long, env = "ARBITER_MEMORY")]
    pub memory: bool,
    /// The event store: sqlite (in the data directory) or postgres (several nodes on one
    /// database) [default: sqlite].
    #[arg(long, env = "ARBITER_STORE", value_enum)]
    pub store: Option<StoreKind>,
    /// The PostgreSQL database, for --store postgres (postgres://user@host:5432/db).
    #[arg(long, env = "ARBITER_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// This node's name among the nodes on the database [default: $HOSTNAME].
    #[arg(long, env = "ARBITER_NODE_ID")]
    pub node_id: Option<String>,
    /// host:port where clients and other nodes reach this node [default: --listen].
    #[arg(long, env = "ARBITER_ADVERTISE_ADDR")]
    pub advertise_addr: Option<String>,
    /// How long a lease on a game lasts unrenewed, ms [default: 5000].
    #[arg(long, env = "ARBITER_LEASE_MS")]
    pub lease_ms: Option<u64>,
    /// Log format.
    #[arg(long, env = "ARBITER_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
    /// Allow listening beyond loopback with no tokens configured.
    #[arg(long, env = "ARBITER_INSECURE")]
    pub insecure: bool,
    /// Prometheus metrics address, serving GET /metrics [default: none, no metrics port].
    #[arg(long, env = "ARBITER_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// TLS certificate chain (PEM); with --tls-key turns TLS on.
    #[arg(long, env = "ARBITER_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, env = "ARBITER_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM) client certificates must chain to (mutual TLS).
    #[arg(long, env = "ARBITER_TLS_CLIENT_CA")]
    pub tls_client_ca: Option<PathBuf>,
    /// Connections open at most [default: 10000]; one more closes the longest-idle one.
    #[arg(long, env = "ARBITER_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Close a connection with no open stream after this many seconds, 0 never [default: 300].
    #[arg(long, env = "ARBITER_IDLE_TIMEOUT_S")]
    pub idle_timeout_s: Option<u64>,
    /// Seconds between HTTP/2 keep-alive pings, 0 none [default: 60].
    #[arg(long, env = "ARBITER_KEEPALIVE_INTERVAL_S")]
    pub keepalive_interval_s: Option<u64>,
    /// Seconds a keep-alive ping may go unanswered [default: 20].
    #[arg(long, env = "ARBITER_KEEPALIVE_TIMEOUT_S")]
    pub keepalive_timeout_s: Option<u64>,
    /// Streams (RPCs) open at once on one connection [default: 200].
    #[arg(long, env = "ARBITER_MAX_STREAMS_PER_CONNECTION")]
    pub max_streams_per_connection: Option<u32>,
    /// The longest request message in bytes [default: 4194304].
    #[arg(long, env = "ARBITER_MAX_MESSAGE_BYTES")]
    pub max_message_bytes: Option<usize>,
    /// Watch streams of one game at most [default: 5000].
    #[arg(long, env = "ARBITER_MAX_WATCHERS_PER_GAME")]
    pub max_watchers_per_game: Option<usize>,
    /// Watch streams at most, all games together [default: 50000].
    #[arg(long, env = "ARBITER_MAX_WATCHERS")]
    pub max_watchers: Option<usize>,
    /// Messages a second one board stream may send on average [default: 20].
    #[arg(long, env = "ARBITER_BOARD_MESSAGES_PER_S")]
    pub board_messages_per_s: Option<u32>,
    /// Messages a board may send at once above that rate [default: 100].
    #[arg(long, env = "ARBITER_BOARD_BURST")]
    pub board_burst: Option<u32>,
    /// A bound board silent this many seconds while its game's clock runs is recorded as
    /// not responding [default: 10].
    #[arg(long, env = "ARBITER_BOARD_SILENCE_S")]
    pub board_silence_s: Option<u64>,
}

impl ServeArgs {
    /// The limits the flags (or their variables) set.
    fn limits(&self) -> FileLimits {
        FileLimits {
            max_connections: self.max_connections,
            idle_timeout_s: self.idle_timeout_s,
            keepalive_interval_s: self.keepalive_interval_s,
            keepalive_timeout_s: self.keepalive_timeout_s,
            max_streams_per_connection: self.max_streams_per_connection,
            max_message_bytes: self.max_message_bytes,
            max_watchers_per_game: self.max_watchers_per_game,
            max_watchers: self.max_watchers,
            board_messages_per_s: self.board_messages_per_s,
            board_burst: self.board_burst,
            board_silence_s: self.board_silence_s,
        }
    }
}

pub(super) fn run_serve(args: &ServeArgs) -> ExitCode {
    let mut file = match &args.config {
        Some(path) => match FileConfig::load(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => FileConfig::default(),
    };
    file.override_tls(
        args.tls_cert.clone(),
        args.tls_key.clone(),
        args.tls_client_ca.clone(),
    );
    file.override_limits(args.limits());
    file.override_store(StoreOverride {
        store: args.store,
        database_url: args.database_url.clone(),
        node_id: args.node_id.clone(),
        advertise_addr: args.advertise_addr.clone(),
        lease_ms: args.lease_ms,
    });
    let mut config = match Config::resolve(
        file,
        args.listen,
        args.data_dir.clone(),
        args.memory,
        args.metrics_listen,
        args.log_format,
        args.insecure,
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    config.init = args.init;
    config.config_file = args.config.clone();
    init_logs(config.log_format);
    // Read and check the TLS files now: a bad file is a configuration error (exit 2),
    // said before anything is opened or bound.
    let tls = match tls_of(&config) {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match super::runtime(true) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let result = runtime.block_on(async {
        let metrics = Arc::new(Metrics::new());
        let store = open_store(&config, &metrics).await?;
        let grpc = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| ServeError(format!("listen {}: {e}", config.listen)))?;
        let listeners = Listeners {
            grpc,
            metrics: bind_metrics(&config).await?,
            tls,
        };
        run_with(&config, store, listeners, metrics, shutdown_signal()).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "server stopped");
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ARBITER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
