//! Service configuration, layered: defaults < TOML file < `ARBITER_*` environment < flags.
//! (clap reads each flag's environment variable; the file fills what both leave unset.)

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::api::auth::TokenConfig;

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// The `[tls]` table as written: each path may also come from the environment or a flag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileTls {
    /// Certificate chain (PEM), the server's certificate first.
    pub cert: Option<PathBuf>,
    /// Private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: Option<PathBuf>,
    /// CA certificates (PEM) that client certificates must chain to: mutual TLS.
    pub client_ca: Option<PathBuf>,
}

/// TLS certificate and key (PEM files), resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// Certificate chain.
    pub cert: PathBuf,
    /// Private key.
    pub key: PathBuf,
    /// Require client certificates issued by these CAs (mutual TLS).
    pub client_ca: Option<PathBuf>,
}

/// The TOML file (every field optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// gRPC address.
    pub listen: Option<SocketAddr>,
    /// Where the SQLite event log lives.
    pub data_dir: Option<PathBuf>,
    /// Prometheus metrics address.
    pub metrics_listen: Option<SocketAddr>,
    /// Log format.
    pub log_format: Option<LogFormat>,
    /// Allow listening beyond loopback without tokens.
    pub insecure: Option<bool>,
    /// Charge the side on move for time the service was down.
    pub charge_outage: Option<bool>,
    /// Games in memory at most (default 100,000); one more answers RESOURCE_EXHAUSTED.
    pub max_loaded_games: Option<usize>,
    /// Seconds a finished game with no watcher stays in memory after its last request
    /// (default 60).
    pub evict_after_s: Option<u64>,
    /// TLS.
    pub tls: Option<FileTls>,
    /// Bearer tokens and their roles.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
    /// Per-event defaults, by event name (`[events."Russian Championship 2026"]`).
    #[serde(default)]
    pub events: std::collections::BTreeMap<String, FileEvent>,
}

/// One `[events."<name>"]` table: defaults for the games of that event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEvent {
    /// The public broadcast delay (ms, at most 24 hours) of games created in this event
    /// without one of their own (`GameSettings.broadcast_delay_ms` left unset).
    pub broadcast_delay_ms: Option<u64>,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// gRPC address.
    pub listen: SocketAddr,
    /// Where the event log lives; `None` keeps events in memory only (tests, tries).
    pub data_dir: Option<PathBuf>,
    /// Prometheus metrics address, if any.
    pub metrics_listen: Option<SocketAddr>,
    /// Log format.
    pub log_format: LogFormat,
    /// Allow listening beyond loopback without tokens.
    pub insecure: bool,
    /// Charge the side on move for time the service was down.
    pub charge_outage: bool,
    /// Games in memory at most.
    pub max_loaded_games: usize,
    /// How long a finished, unwatched game stays in memory after its last request.
    pub evict_after: std::time::Duration,
    /// TLS.
    pub tls: Option<TlsConfig>,
    /// Tokens.
    pub tokens: Vec<TokenConfig>,
    /// Each event's default broadcast delay (ms).
    pub event_delays: std::collections::BTreeMap<String, u64>,
}

/// The default gRPC address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:50051";

/// A configuration problem, said plainly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl FileConfig {
    /// Reads a TOML file.
    ///
    /// # Errors
    /// The file cannot be read or is not valid configuration.
    pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("config {}: {e}", path.display())))?;
        toml::from_str(&text).map_err(|e| ConfigError(format!("config {}: {e}", path.display())))
    }

    /// Lays the TLS paths given by flags or the environment over the file's `[tls]`.
    pub fn override_tls(
        &mut self,
        cert: Option<PathBuf>,
        key: Option<PathBuf>,
        client_ca: Option<PathBuf>,
    ) {
        if cert.is_none() && key.is_none() && client_ca.is_none() {
            return;
        }
        let tls = self.tls.get_or_insert_with(FileTls::default);
        tls.cert = cert.or(tls.cert.take());
        tls.key = key.or(tls.key.take());
        tls.client_ca = client_ca.or(tls.client_ca.take());
    }
}

/// A complete TLS setting from the layered paths: a certificate needs its key and the
/// other way round; a client CA needs both.
fn resolve_tls(tls: Option<FileTls>) -> Result<Option<TlsConfig>, ConfigError> {
    let Some(tls) = tls else { return Ok(None) };
    match (tls.cert, tls.key) {
        (Some(cert), Some(key)) => Ok(Some(TlsConfig {
            cert,
            key,
            client_ca: tls.client_ca,
        })),
        (Some(cert), None) => Err(ConfigError(format!(
            "TLS: certificate {} given but no private key: set [tls] key, ARBITER_TLS_KEY or --tls-key",
            cert.display()
        ))),
        (None, Some(key)) => Err(ConfigError(format!(
            "TLS: private key {} given but no certificate: set [tls] cert, ARBITER_TLS_CERT or --tls-cert",
            key.display()
        ))),
        (None, None) => Err(ConfigError(
            "TLS: [tls] needs cert and key (or ARBITER_TLS_CERT/ARBITER_TLS_KEY, --tls-cert/--tls-key); \
             client_ca alone does not enable TLS"
                .into(),
        )),
    }
}

impl Config {
    /// Layers the file under the command line (flags and environment already merged by
    /// clap) and checks the result.
    ///
    /// # Errors
    /// An open server (no tokens) on a non-loopback address without `insecure`; an
    /// incomplete TLS setting (certificate without key, key without certificate). TLS does
    /// not lift the open-server rule: tokens decide who may act, TLS only hides them.
    pub fn resolve(
        file: FileConfig,
        listen: Option<SocketAddr>,
        data_dir: Option<PathBuf>,
        memory: bool,
        metrics_listen: Option<SocketAddr>,
        log_format: Option<LogFormat>,
        insecure: bool,
    ) -> Result<Config, ConfigError> {
        let mut event_delays = std::collections::BTreeMap::new();
        for (event, defaults) in file.events {
            if let Some(ms) = defaults.broadcast_delay_ms {
                if ms > crate::game::MAX_BROADCAST_DELAY_MS {
                    return Err(ConfigError(format!(
                        "events.\"{event}\".broadcast_delay_ms: at most {} (24 hours), got {ms}",
                        crate::game::MAX_BROADCAST_DELAY_MS
                    )));
                }
                event_delays.insert(event, ms);
            }
        }
        let config = Config {
            listen: listen
                .or(file.listen)
                .unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("valid default")),
            data_dir: if memory {
                None
            } else {
                Some(
                    data_dir
                        .or(file.data_dir)
                        .unwrap_or_else(|| PathBuf::from("./data")),
                )
            },
            metrics_listen: metrics_listen.or(file.metrics_listen),
            log_format: log_format.or(file.log_format).unwrap_or_default(),
            insecure: insecure || file.insecure.unwrap_or(false),
            charge_outage: file.charge_outage.unwrap_or(false),
            max_loaded_games: file.max_loaded_games.unwrap_or(100_000).max(1),
            evict_after: std::time::Duration::from_secs(file.evict_after_s.unwrap_or(60)),
            tls: resolve_tls(file.tls)?,
            tokens: file.tokens,
            event_delays,
        };
        if config.tokens.is_empty() && !config.listen.ip().is_loopback() && !config.insecure {
            return Err(ConfigError(format!(
                "refusing to listen on {} with no tokens configured: anyone could act as arbiter; \
                 add [[tokens]] to the config file or pass --insecure",
                config.listen
            )));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::auth::Role;

    #[test]
    fn file_then_flags() {
        let file: FileConfig = toml::from_str(
            r#"
            listen = "0.0.0.0:6000"
            data_dir = "/var/lib/arbiter"
            [[tokens]]
            token = "a"
            role = "arbiter"
            event = "Open"
            [[tokens]]
            token = "w"
            role = "player"
            event = "Open"
            game = "g1"
            side = "white"
            "#,
        )
        .expect("toml");
        assert_eq!(
            file.tokens[1].role,
            Role::Player {
                event: "Open".into(),
                game: "g1".into(),
                side: crate::rules::Color::White
            }
        );
        let c = Config::resolve(file.clone(), None, None, false, None, None, false)
            .expect("tokens set");
        assert_eq!(c.listen.port(), 6000);
        let c = Config::resolve(
            file,
            Some("127.0.0.1:7000".parse().expect("addr")),
            None,
            true,
            None,
            None,
            false,
        )
        .expect("flags win");
        assert_eq!(c.listen.port(), 7000);
        assert_eq!(c.data_dir, None);
    }

    /// `[events."<name>"] broadcast_delay_ms`: each event's default, at most 24 hours.
    #[test]
    fn event_defaults_are_read_and_bounded() {
        let file: FileConfig = toml::from_str(
            r#"
            [events."Russian Championship 2026"]
            broadcast_delay_ms = 900000
            [events."Open"]
            "#,
        )
        .expect("toml");
        let c = Config::resolve(file, None, None, true, None, None, false).expect("valid");
        assert_eq!(
            c.event_delays.into_iter().collect::<Vec<_>>(),
            vec![("Russian Championship 2026".to_string(), 900_000)]
        );
        let file: FileConfig = toml::from_str(
            r#"
            [events."Open"]
            broadcast_delay_ms = 86400001
            "#,
        )
        .expect("toml");
        let e = Config::resolve(file, None, None, true, None, None, false).expect_err("too long");
        assert_eq!(
            e.0,
            "events.\"Open\".broadcast_delay_ms: at most 86400000 (24 hours), got 86400001"
        );
        let unknown = toml::from_str::<FileConfig>("[events.\"Open\"]\ndelay = 5\n");
        assert!(unknown.is_err(), "unknown keys are refused");
    }

    #[test]
    fn open_server_only_on_loopback_unless_insecure() {
        let any: SocketAddr = "0.0.0.0:50051".parse().expect("addr");
        let e = Config::resolve(
            FileConfig::default(),
            Some(any),
            None,
            true,
            None,
            None,
            false,
        )
        .expect_err("refused");
        assert!(e.0.contains("--insecure"));
        assert!(
            Config::resolve(
                FileConfig::default(),
                Some(any),
                None,
                true,
                None,
                None,
                true
            )
            .is_ok()
        );
        assert!(
            Config::resolve(FileConfig::default(), None, None, true, None, None, false).is_ok()
        );
        assert!(
            toml::from_str::<FileConfig>("lisen = 1").is_err(),
            "unknown keys are refused"
        );
    }
}
