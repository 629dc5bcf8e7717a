//! Service configuration, layered: defaults < TOML file < `ARBITER_*` environment < flags.
//! (clap reads each flag's environment variable; the file fills what both leave unset.)

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Resource limits.
    pub limits: Option<FileLimits>,
    /// Bearer tokens and their roles.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
    /// Per-event defaults, by event name (`[events."Russian Championship 2026"]`).
    #[serde(default)]
    pub events: std::collections::BTreeMap<String, FileEvent>,
    /// `[web]`: the HTTP side of the API port.
    pub web: Option<FileWeb>,
    /// `[tournaments]`: the Swiss pairing engine the server runs.
    pub tournaments: Option<FileTournaments>,
    /// The event store: `sqlite` (the default, in `data_dir`) or `postgres` (several
    /// nodes on one database, `database_url`).
    pub store: Option<StoreKind>,
    /// The PostgreSQL database (`postgres://user@host:5432/db`), for `store = "postgres"`.
    pub database_url: Option<String>,
    /// This node's name among the nodes on the database (default: `$HOSTNAME`).
    pub node_id: Option<String>,
    /// Where clients and other nodes reach this node's gRPC port (default: the listen
    /// address, with `$HOSTNAME` for an unspecified IP).
    pub advertise_addr: Option<String>,
    /// How long a node's lease on a game lasts unrenewed, in ms (default 5000): at most
    /// this long until another node takes over the games of a node that died.
    pub lease_ms: Option<u64>,
}

/// Which event store the server writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// The embedded SQLite file in the data directory.
    Sqlite,
    /// PostgreSQL: several nodes, one owner per game.
    Postgres,
}

/// The PostgreSQL store's settings, resolved.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The database URL (may carry a password: never logged).
    pub database_url: String,
    /// This node's name.
    pub node_id: String,
    /// Where this node is reached.
    pub advertise_addr: String,
    /// The lease.
    pub lease: Duration,
}

/// The shortest and longest lease accepted.
pub const LEASE_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=600_000;

/// The store settings given by flags or the environment, laid over the file's.
#[derive(Debug, Clone, Default)]
pub struct StoreOverride {
    /// `--store`, `ARBITER_STORE`.
    pub store: Option<StoreKind>,
    /// `--database-url`, `ARBITER_DATABASE_URL`.
    pub database_url: Option<String>,
    /// `--node-id`, `ARBITER_NODE_ID`.
    pub node_id: Option<String>,
    /// `--advertise-addr`, `ARBITER_ADVERTISE_ADDR`.
    pub advertise_addr: Option<String>,
    /// `--lease-ms`, `ARBITER_LEASE_MS`.
    pub lease_ms: Option<u64>,
}

/// `[web]`: browsers and relays on the API port.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileWeb {
    /// The origins whose pages may call the API from a browser (grpc-web and the HTTP
    /// routes; CORS), e.g. `["https://live.example.org"]`; `["*"]` for any. Empty (the
    /// default): only pages served by the service itself.
    #[serde(default)]
    pub cors_origins: Vec<String>,
    /// Whether a caller without a token follows broadcasts (BroadcastService, the HTTP PDN
    /// routes, the live page) as the public, behind each game's delay. Default true.
    pub public_broadcast: Option<bool>,
}

/// Refuses a token list with an empty or repeated secret (the second would silently
/// replace the first).
///
/// # Errors
/// Names the token by its place in the list (`tokens[2]`), never by its secret.
pub fn check_tokens(list: &[TokenConfig]) -> Result<(), ConfigError> {
    let mut seen = std::collections::HashMap::new();
    for (i, t) in list.iter().enumerate() {
        if t.token.trim().is_empty() {
            return Err(ConfigError(format!("tokens[{i}]: token is empty")));
        }
        if let Some(first) = seen.insert(t.token.as_str(), i) {
            return Err(ConfigError(format!(
                "tokens[{i}]: the same token as tokens[{first}]; each token is one caller"
            )));
        }
    }
    Ok(())
}

/// The `[tournaments]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileTournaments {
    /// The Swiss pairing engine's command (`/usr/local/bin/bbpPairings`,
    /// `caissify-pairings`); unset: Swiss rounds take their pairings from the request.
    pub pairing_engine: Option<String>,
    /// `trf` (bbpPairings' `--dutch IN.trf -p OUT`) or `caissify` (JSON on stdin and
    /// stdout); unset: `caissify` for a program named caissify…, `trf` otherwise.
    pub pairing_engine_protocol: Option<crate::hub::EngineProtocol>,
    /// How long the engine may take, in seconds (default 60).
    pub pairing_engine_timeout_s: Option<u64>,
}

/// One `[events."<name>"]` table: defaults for the games of that event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEvent {
    /// The public broadcast delay (ms, at most 24 hours) of games created in this event
    /// without one of their own (`GameSettings.broadcast_delay_ms` left unset).
    pub broadcast_delay_ms: Option<u64>,
}

/// The `[limits]` table as written (each also from an `ARBITER_*` variable or a flag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLimits {
    /// Connections open at most.
    pub max_connections: Option<usize>,
    /// Seconds a connection may stay with no open stream (0: no limit).
    pub idle_timeout_s: Option<u64>,
    /// Seconds between HTTP/2 pings on a connection (0: no pings).
    pub keepalive_interval_s: Option<u64>,
    /// Seconds a ping may go unanswered before the connection is closed.
    pub keepalive_timeout_s: Option<u64>,
    /// Streams (RPCs) open at once on one connection.
    pub max_streams_per_connection: Option<u32>,
    /// The longest request message, bytes.
    pub max_message_bytes: Option<usize>,
    /// Watch streams of one game at most (WatchGame, WatchEvent, bound boards).
    pub max_watchers_per_game: Option<usize>,
    /// Watch streams at most, all games together.
    pub max_watchers: Option<usize>,
    /// Messages a second one board stream may send, on average.
    pub board_messages_per_s: Option<u32>,
    /// Messages a board may send at once above that rate.
    pub board_burst: Option<u32>,
    /// Seconds of silence, while the clock runs, after which a bound board is recorded
    /// as not responding.
    pub board_silence_s: Option<u64>,
}

impl FileLimits {
    /// Each of `self`'s settings, else `under`'s.
    pub fn or(self, under: FileLimits) -> FileLimits {
        FileLimits {
            max_connections: self.max_connections.or(under.max_connections),
            idle_timeout_s: self.idle_timeout_s.or(under.idle_timeout_s),
            keepalive_interval_s: self.keepalive_interval_s.or(under.keepalive_interval_s),
            keepalive_timeout_s: self.keepalive_timeout_s.or(under.keepalive_timeout_s),
            max_streams_per_connection: self
                .max_streams_per_connection
                .or(under.max_streams_per_connection),
            max_message_bytes: self.max_message_bytes.or(under.max_message_bytes),
            max_watchers_per_game: self.max_watchers_per_game.or(under.max_watchers_per_game),
            max_watchers: self.max_watchers.or(under.max_watchers),
            board_messages_per_s: self.board_messages_per_s.or(under.board_messages_per_s),
            board_burst: self.board_burst.or(under.board_burst),
            board_silence_s: self.board_silence_s.or(under.board_silence_s),
        }
    }
}

/// The resource limits, resolved (see the README's Configuration for the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at most; one more closes the longest-idle connection, or itself
    /// if every connection has an open stream.
    pub max_connections: usize,
    /// A connection with no open stream this long is closed.
    pub idle_timeout: Option<Duration>,
    /// HTTP/2 pings this often.
    pub keepalive_interval: Option<Duration>,
    /// A ping unanswered this long closes the connection.
    pub keepalive_timeout: Duration,
    /// Streams open at once on one connection.
    pub max_streams_per_connection: u32,
    /// The longest request message, bytes.
    pub max_message_bytes: usize,
    /// Watch streams of one game at most.
    pub max_watchers_per_game: usize,
    /// Watch streams at most.
    pub max_watchers: usize,
    /// A board stream's average rate, messages a second.
    pub board_messages_per_s: u32,
    /// A board stream's burst above it.
    pub board_burst: u32,
    /// A bound board silent this long while its clock runs is not responding.
    pub board_silence: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 10_000,
            idle_timeout: Some(Duration::from_secs(300)),
            keepalive_interval: Some(Duration::from_secs(60)),
            keepalive_timeout: Duration::from_secs(20),
            max_streams_per_connection: 200,
            max_message_bytes: 4 << 20,
            max_watchers_per_game: 5_000,
            max_watchers: 50_000,
            board_messages_per_s: 20,
            board_burst: 100,
            board_silence: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// The file's (or flags') settings over the defaults.
    ///
    /// # Errors
    /// A limit of 0 where 0 means nothing (connections, streams, message size, watchers,
    /// board rate or burst, keep-alive timeout).
    pub fn resolve(file: FileLimits) -> Result<Limits, ConfigError> {
        fn positive<T: PartialEq + Default + Copy>(
            name: &str,
            v: Option<T>,
            default: T,
        ) -> Result<T, ConfigError> {
            match v {
                Some(v) if v == T::default() => {
                    Err(ConfigError(format!("limits.{name}: must be at least 1")))
                }
                Some(v) => Ok(v),
                None => Ok(default),
            }
        }
        let d = Limits::default();
        let seconds = |v: Option<u64>, default: Option<Duration>| match v {
            Some(0) => None,
            Some(s) => Some(Duration::from_secs(s)),
            None => default,
        };
        Ok(Limits {
            max_connections: positive("max_connections", file.max_connections, d.max_connections)?,
            idle_timeout: seconds(file.idle_timeout_s, d.idle_timeout),
            keepalive_interval: seconds(file.keepalive_interval_s, d.keepalive_interval),
            keepalive_timeout: Duration::from_secs(positive(
                "keepalive_timeout_s",
                file.keepalive_timeout_s,
                d.keepalive_timeout.as_secs(),
            )?),
            max_streams_per_connection: positive(
                "max_streams_per_connection",
                file.max_streams_per_connection,
                d.max_streams_per_connection,
            )?,
            max_message_bytes: positive(
                "max_message_bytes",
                file.max_message_bytes,
                d.max_message_bytes,
            )?,
            max_watchers_per_game: positive(
                "max_watchers_per_game",
                file.max_watchers_per_game,
                d.max_watchers_per_game,
            )?,
            max_watchers: positive("max_watchers", file.max_watchers, d.max_watchers)?,
            board_messages_per_s: positive(
                "board_messages_per_s",
                file.board_messages_per_s,
                d.board_messages_per_s,
            )?,
            board_burst: positive("board_burst", file.board_burst, d.board_burst)?,
            board_silence: Duration::from_secs(positive(
                "board_silence_s",
                file.board_silence_s,
                d.board_silence.as_secs(),
            )?),
        })
    }
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
    /// The Swiss pairing engine, if one is configured.
    pub pairing_engine: Option<crate::hub::PairingEngine>,
    /// Resource limits.
    pub limits: Limits,
    /// The CORS origins allowed (`*`: any; empty: none).
    pub cors_origins: Vec<String>,
    /// Whether callers without a token follow broadcasts as the public.
    pub public_broadcast: bool,
    /// `store = "postgres"`: the database and this node (`data_dir` is then unused).
    pub cluster: Option<Cluster>,
    /// `serve --init` (`ARBITER_INIT`): start an empty SQLite log where the database file
    /// is missing or empty but its WAL, shared-memory index or marker shows a log was
    /// there (refused otherwise). Not a config file key on purpose: left on, it would start
    /// empty after every loss without a word.
    pub init: bool,
    /// The file the configuration was read from: read again for its `[[tokens]]` on
    /// SIGHUP (`None`: no file, nothing to reload).
    pub config_file: Option<PathBuf>,
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

    /// The `[[tokens]]` of the file at `path`, checked as at start: what SIGHUP reloads.
    ///
    /// # Errors
    /// The file cannot be read, is not valid configuration, or a token is refused.
    pub fn load_tokens(path: &Path) -> Result<Vec<TokenConfig>, ConfigError> {
        let file = FileConfig::load(path)?;
        check_tokens(&file.tokens)?;
        Ok(file.tokens)
    }

    /// Lays the limits given by flags or the environment over the file's `[limits]`.
    pub fn override_limits(&mut self, over: FileLimits) {
        self.limits = Some(over.or(self.limits.unwrap_or_default()));
    }

    /// Lays the store settings given by flags or the environment over the file's.
    pub fn override_store(&mut self, over: StoreOverride) {
        self.store = over.store.or(self.store);
        self.database_url = over.database_url.or(self.database_url.take());
        self.node_id = over.node_id.or(self.node_id.take());
        self.advertise_addr = over.advertise_addr.or(self.advertise_addr.take());
        self.lease_ms = over.lease_ms.or(self.lease_ms);
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

/// The PostgreSQL settings, checked, if the store is `postgres`.
fn resolve_cluster(file: &FileConfig, listen: SocketAddr) -> Result<Option<Cluster>, ConfigError> {
    if file.store != Some(StoreKind::Postgres) {
        for (key, given) in [
            ("database_url", file.database_url.is_some()),
            ("node_id", file.node_id.is_some()),
            ("advertise_addr", file.advertise_addr.is_some()),
            ("lease_ms", file.lease_ms.is_some()),
        ] {
            if given {
                return Err(ConfigError(format!(
                    "{key} is for store = \"postgres\" (ARBITER_STORE=postgres, --store postgres); \
                     the store is sqlite"
                )));
            }
        }
        return Ok(None);
    }
    let database_url = file.database_url.clone().ok_or_else(|| {
        ConfigError(
            "store = \"postgres\" needs database_url (ARBITER_DATABASE_URL, --database-url), \
             e.g. postgres://arbiter@db:5432/arbiter"
                .into(),
        )
    })?;
    let hostname = std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty());
    let node_id = match file.node_id.clone().or_else(|| hostname.clone()) {
        Some(id) => id,
        None => {
            return Err(ConfigError(
                "store = \"postgres\" needs node_id (ARBITER_NODE_ID, --node-id): a name unique \
                 among the nodes ($HOSTNAME is not set)"
                    .into(),
            ));
        }
    };
    if node_id.len() > 128 || !node_id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ConfigError(format!(
            "node_id {node_id:?}: at most 128 printable ASCII characters, no spaces"
        )));
    }
    let advertise_addr = match file.advertise_addr.clone() {
        Some(a) => a,
        None if listen.ip().is_unspecified() => match &hostname {
            Some(h) => format!("{h}:{}", listen.port()),
            None => {
                return Err(ConfigError(format!(
                    "listening on {listen}: set advertise_addr (ARBITER_ADVERTISE_ADDR, \
                     --advertise-addr), the host:port other nodes and clients reach this one at"
                )));
            }
        },
        None => listen.to_string(),
    };
    if advertise_addr.is_empty() || !advertise_addr.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ConfigError(format!(
            "advertise_addr {advertise_addr:?}: host:port, printable ASCII"
        )));
    }
    let lease_ms = file.lease_ms.unwrap_or(5_000);
    if !LEASE_MS_RANGE.contains(&lease_ms) {
        return Err(ConfigError(format!(
            "lease_ms {lease_ms}: from {} to {} ms",
            LEASE_MS_RANGE.start(),
            LEASE_MS_RANGE.end()
        )));
    }
    Ok(Some(Cluster {
        database_url,
        node_id,
        advertise_addr,
        lease: Duration::from_millis(lease_ms),
    }))
}

/// `[web] cors_origins`: `*` alone, or origins as a browser sends them
/// (`scheme://host[:port]`, no path).
fn resolve_origins(origins: Vec<String>) -> Result<Vec<String>, ConfigError> {
    if origins.iter().any(|o| o == "*") {
        if origins.len() > 1 {
            return Err(ConfigError(
                "web.cors_origins: \"*\" allows every origin; list it alone".into(),
            ));
        }
        return Ok(origins);
    }
    for o in &origins {
        let (scheme, rest) = o.split_once("://").unwrap_or(("", ""));
        let valid = matches!(scheme, "http" | "https")
            && !rest.is_empty()
            && !rest.contains('/')
            && o.bytes().all(|b| b.is_ascii_graphic());
        if !valid {
            return Err(ConfigError(format!(
                "web.cors_origins: {o:?} is not an origin (scheme://host[:port], e.g. \"https://live.example.org\")"
            )));
        }
    }
    Ok(origins)
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
        check_tokens(&file.tokens)?;
        let listen = listen
            .or(file.listen)
            .unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("valid default"));
        let cluster = resolve_cluster(&file, listen)?;
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
        let pairing_engine = match &file.tournaments {
            Some(FileTournaments {
                pairing_engine: Some(command),
                pairing_engine_protocol,
                pairing_engine_timeout_s,
            }) => {
                if command.trim().is_empty() {
                    return Err(ConfigError(
                        "tournaments.pairing_engine: empty; leave it out for none".into(),
                    ));
                }
                let mut engine = crate::hub::PairingEngine::new(command, *pairing_engine_protocol);
                if let Some(s) = pairing_engine_timeout_s {
                    if *s == 0 {
                        return Err(ConfigError(
                            "tournaments.pairing_engine_timeout_s: at least 1".into(),
                        ));
                    }
                    engine.timeout = std::time::Duration::from_secs(*s);
                }
                Some(engine)
            }
            _ => None,
        };
        if cluster.is_some() && memory {
            return Err(ConfigError(
                "--memory and store = \"postgres\" exclude each other".into(),
            ));
        }
        let web = file.web.unwrap_or_default();
        let config = Config {
            listen,
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
            evict_after: Duration::from_secs(file.evict_after_s.unwrap_or(60)),
            tls: resolve_tls(file.tls)?,
            tokens: file.tokens,
            event_delays,
            pairing_engine,
            limits: Limits::resolve(file.limits.unwrap_or_default())?,
            public_broadcast: web.public_broadcast.unwrap_or(true),
            cors_origins: resolve_origins(web.cors_origins)?,
            cluster,
            init: false,
            config_file: None,
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
            name = "Chief arbiter I. Petrov"
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
            file.tokens[0].name.as_deref(),
            Some("Chief arbiter I. Petrov")
        );
        assert_eq!(file.tokens[1].name, None);
        assert_eq!(
            file.tokens[1].role,
            Role::Player {
                event: "Open".into(),
                place: crate::api::auth::Place::Game("g1".into()),
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

    /// `[web] cors_origins`: `*` alone or real origins.
    #[test]
    fn cors_origins_are_origins() {
        let resolve = |text: &str| {
            let file: FileConfig = toml::from_str(text).expect("toml");
            Config::resolve(file, None, None, true, None, None, false)
        };
        let c = resolve(
            "[web]\ncors_origins = [\"https://live.example.org\", \"http://127.0.0.1:8080\"]",
        )
        .expect("valid");
        assert_eq!(c.cors_origins.len(), 2);
        assert!(resolve("").expect("none").cors_origins.is_empty());
        assert_eq!(
            resolve("[web]\ncors_origins = [\"*\"]")
                .expect("any")
                .cors_origins,
            ["*"]
        );
        for bad in [
            "\"*\", \"https://a.org\"",
            "\"live.example.org\"",
            "\"https://a.org/page\"",
            "\"ftp://a.org\"",
        ] {
            let e = resolve(&format!("[web]\ncors_origins = [{bad}]")).expect_err(bad);
            assert!(e.0.starts_with("web.cors_origins: "), "{}", e.0);
        }
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

    /// `[limits]`: defaults, the file's values, flags over the file, 0 refused where it
    /// means nothing and "off" where it may.
    #[test]
    fn limits_are_layered_and_checked() {
        let c = Config::resolve(FileConfig::default(), None, None, true, None, None, false)
            .expect("defaults");
        assert_eq!(c.limits, Limits::default());
        let mut file: FileConfig = toml::from_str(
            "[limits]\nmax_connections = 64\nidle_timeout_s = 0\nboard_messages_per_s = 5\n\
             board_silence_s = 3\n",
        )
        .expect("toml");
        file.override_limits(FileLimits {
            max_connections: Some(32),
            ..FileLimits::default()
        });
        let c = Config::resolve(file, None, None, true, None, None, false).expect("valid");
        assert_eq!(c.limits.max_connections, 32, "the flag wins");
        assert_eq!(c.limits.idle_timeout, None, "0: no idle timeout");
        assert_eq!(c.limits.board_messages_per_s, 5);
        assert_eq!(c.limits.board_silence, Duration::from_secs(3));
        assert_eq!(c.limits.max_watchers, Limits::default().max_watchers);
        let file: FileConfig = toml::from_str("[limits]\nmax_watchers = 0\n").expect("toml");
        let e = Config::resolve(file, None, None, true, None, None, false).expect_err("0");
        assert_eq!(e.0, "limits.max_watchers: must be at least 1");
        assert!(toml::from_str::<FileConfig>("[limits]\nmax_conections = 1\n").is_err());
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

    fn resolve_store(toml: &str, over: StoreOverride) -> Result<Config, ConfigError> {
        let mut file: FileConfig = toml::from_str(toml).expect("toml");
        file.override_store(over);
        Config::resolve(file, None, None, false, None, None, false)
    }

    #[test]
    fn postgres_settings_are_layered_and_checked() {
        let c = resolve_store(
            r#"
            store = "postgres"
            database_url = "postgres://file@db/arbiter"
            node_id = "from-file"
            lease_ms = 2000
            "#,
            StoreOverride {
                node_id: Some("from-env".into()),
                ..StoreOverride::default()
            },
        )
        .expect("valid");
        let cluster = c.cluster.expect("postgres");
        assert_eq!(cluster.database_url, "postgres://file@db/arbiter");
        assert_eq!(cluster.node_id, "from-env", "the environment over the file");
        assert_eq!(
            cluster.advertise_addr, "127.0.0.1:50051",
            "the listen address"
        );
        assert_eq!(cluster.lease, Duration::from_millis(2000));

        let sqlite = resolve_store("", StoreOverride::default()).expect("default");
        assert!(sqlite.cluster.is_none() && sqlite.data_dir.is_some());

        let no_url = resolve_store(
            "",
            StoreOverride {
                store: Some(StoreKind::Postgres),
                node_id: Some("a".into()),
                ..StoreOverride::default()
            },
        )
        .expect_err("no url");
        assert!(no_url.0.contains("database_url"), "{no_url}");

        let stray = resolve_store("lease_ms = 100", StoreOverride::default()).expect_err("sqlite");
        assert!(stray.0.contains("lease_ms is for store"), "{stray}");

        for (lease, ok) in [(99, false), (100, true), (600_000, true), (600_001, false)] {
            let r = resolve_store(
                &format!(
                    "store = \"postgres\"\ndatabase_url = \"postgres://x@y/z\"\nnode_id = \"a\"\nlease_ms = {lease}"
                ),
                StoreOverride::default(),
            );
            assert_eq!(r.is_ok(), ok, "lease_ms {lease}: {r:?}");
        }
        let bad_node = resolve_store(
            "store = \"postgres\"\ndatabase_url = \"postgres://x@y/z\"\nnode_id = \"a b\"",
            StoreOverride::default(),
        )
        .expect_err("space");
        assert!(bad_node.0.contains("node_id"), "{bad_node}");
        assert!(toml::from_str::<FileConfig>("store = \"mysql\"").is_err());
    }
}
