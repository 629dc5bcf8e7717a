//! `draughts-arbiter serve`: the gRPC service on its embedded SQLite event log.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use crate::hub::metrics::Metrics;
use crate::server::config::{Config, FileConfig, LogFormat};
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
    /// Keep events in memory only (a try-out; nothing survives a restart).
    #[arg(long, env = "ARBITER_MEMORY")]
    pub memory: bool,
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
    let config = match Config::resolve(
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
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let metrics = Arc::new(Metrics::new());
        let store = open_store(&config, &metrics)?;
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
