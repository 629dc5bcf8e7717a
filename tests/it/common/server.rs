//! A real server on 127.0.0.1:0 over a SQLite log in a temporary folder (or a memory
//! store), open mode (every caller an arbiter) unless a config file's text is given, for
//! the tests that call it from outside over gRPC and HTTP.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::store::{EventStore, MemoryStore, SqliteStore};
use tonic::transport::{Channel, Endpoint};

/// A running server; [`TestServer::stop`] stops it and waits.
pub struct TestServer {
    pub addr: SocketAddr,
    pub channel: Channel,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
    dir: Option<tempfile::TempDir>,
    data: PathBuf,
}

impl TestServer {
    /// A server over a fresh log, with the config file `toml` (empty: the defaults).
    pub async fn start(toml: &str) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().to_path_buf();
        let mut s = TestServer::start_in(&data, toml, None).await;
        s.dir = Some(dir);
        s
    }

    /// A server over an in-memory store (no fsync: for tests that play thousands of
    /// moves), with the config file `toml`.
    pub async fn start_memory(toml: &str) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().to_path_buf();
        let mut s = TestServer::start_on(Arc::new(MemoryStore::new()), &data, toml, None).await;
        s.dir = Some(dir);
        s
    }

    /// A server over the log in `data`, listening on `addr` (else a free port).
    pub async fn start_in(data: &Path, toml: &str, addr: Option<SocketAddr>) -> TestServer {
        let store = Arc::new(SqliteStore::open(data.join("arbiter.sqlite")).expect("store"));
        TestServer::start_on(store, data, toml, addr).await
    }

    async fn start_on(
        store: Arc<dyn EventStore>,
        data: &Path,
        toml: &str,
        addr: Option<SocketAddr>,
    ) -> TestServer {
        let listener = tokio::net::TcpListener::bind(addr.unwrap_or(([127, 0, 0, 1], 0).into()))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let file: FileConfig = toml::from_str(toml).expect("config file");
        let config =
            Config::resolve(file, Some(addr), None, true, None, None, false).expect("config");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            run(&config, store, listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("server runs");
        });
        let endpoint = Endpoint::from_shared(format!("http://{addr}")).expect("url");
        for _ in 0..200 {
            if let Ok(channel) = endpoint.connect().await {
                return TestServer {
                    addr,
                    channel,
                    stop: Some(stop),
                    done,
                    dir: None,
                    data: data.to_path_buf(),
                };
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("server did not come up");
    }

    /// The folder of its log.
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// Stops it (as at SIGTERM) and waits until it has; returns the temporary folder,
    /// if it made one, so a test can start another server over the same log.
    pub async fn stop(mut self) -> Option<tempfile::TempDir> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        (&mut self.done).await.expect("server task");
        self.dir.take()
    }
}
