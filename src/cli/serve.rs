//! `draughts-arbiter serve`: the gRPC service on its embedded SQLite event log.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::server::config::{Config, FileConfig, LogFormat};
use crate::server::run::{open_store, run, shutdown_signal};

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
}

pub(super) fn run_serve(args: &ServeArgs) -> ExitCode {
    let file = match &args.config {
        Some(path) => match FileConfig::load(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => FileConfig::default(),
    };
    let config = match Config::resolve(
        file,
        args.listen,
        args.data_dir.clone(),
        args.memory,
        None,
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
    if config.tls.is_some() {
        eprintln!("error: TLS is not implemented yet; terminate TLS in front of the service");
        return ExitCode::from(2);
    }
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
        let store = open_store(&config)?;
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| {
                crate::server::run::ServeError(format!("listen {}: {e}", config.listen))
            })?;
        run(&config, store, listener, shutdown_signal()).await
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
