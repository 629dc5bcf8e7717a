//! The gRPC listener's connections: how many may be open, when an idle one is closed, and
//! an accept loop that never spins.
//!
//! - At most [`ConnLimits::max`] connections are open. One more is let in by closing the
//!   connection that has been idle longest (no open stream); when every connection has an
//!   open stream, the new one is closed at once (its client sees UNAVAILABLE and may
//!   retry). nginx reuses idle keep-alive connections the same way when it runs out.
//! - A connection with no open stream for [`ConnLimits::idle`] is closed, whether it ever
//!   spoke HTTP/2 or not (gRPC's `MAX_CONNECTION_IDLE`). Pings do not count as activity.
//! - When `accept` fails for want of file descriptors (or memory), the longest-idle
//!   connection is closed to make room and the loop waits a little before it accepts
//!   again (10 ms, doubling to 1 s while it keeps failing): retrying at once spins, since
//!   the listener stays readable.
//! - With TLS, each connection's handshake runs in a task of its own (at most
//!   `tls::HANDSHAKE_TIMEOUT`), so a slow client holds up no other; a connection counts
//!   from its accept, handshake included. TLS is over the counted connection: its idle
//!   timer and eviction end a TLS connection as they end a plaintext one.

use std::collections::HashMap;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tokio_rustls::server::TlsStream;
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use super::tls::{HANDSHAKE_TIMEOUT, ServerTls};

/// The limits on the gRPC listener's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Connections open at most.
    pub max: usize,
    /// Close a connection after this long with no open stream (`None`: never).
    pub idle: Option<Duration>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Short critical sections that leave nothing half-done: carry on after a panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One connection as the registry and its requests see it.
#[derive(Debug)]
pub struct ConnState {
    streams: AtomicUsize,
    idle_since: Mutex<Instant>,
    closing: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl ConnState {
    fn new() -> ConnState {
        ConnState {
            streams: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            closing: AtomicBool::new(false),
            waker: Mutex::new(None),
        }
    }

    /// Counts a stream (an RPC) open until the guard is dropped.
    pub fn open_stream(self: &Arc<Self>) -> StreamGuard {
        self.streams.fetch_add(1, Ordering::SeqCst);
        StreamGuard(self.clone())
    }

    /// Since when the connection has had no stream open; `None` while one is.
    fn idle_since(&self) -> Option<Instant> {
        (self.streams.load(Ordering::SeqCst) == 0).then(|| *lock(&self.idle_since))
    }

    /// Asks the connection to close: its next read ends it.
    fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.wake();
    }

    fn wake(&self) {
        if let Some(w) = lock(&self.waker).as_ref() {
            w.wake_by_ref();
        }
    }
}

/// An open stream of a connection; dropping it (the RPC's response ended or was
/// abandoned) may leave the connection idle.
#[derive(Debug)]
pub struct StreamGuard(Arc<ConnState>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if self.0.streams.fetch_sub(1, Ordering::SeqCst) == 1 {
            *lock(&self.0.idle_since) = Instant::now();
            // The connection's reader arms its idle timer again.
            self.0.wake();
        }
    }
}

/// The open connections.
#[derive(Debug)]
pub struct Connections {
    limits: ConnLimits,
    open: Mutex<HashMap<u64, Arc<ConnState>>>,
    next_id: AtomicU64,
    refused_logged: Mutex<Option<Instant>>,
}

impl Connections {
    /// No connection yet.
    pub fn new(limits: ConnLimits) -> Arc<Connections> {
        Arc::new(Connections {
            limits: ConnLimits {
                max: limits.max.max(1),
                idle: limits.idle,
            },
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            refused_logged: Mutex::new(None),
        })
    }

    /// How many connections are open (not counting those asked to close).
    pub fn open(&self) -> usize {
        lock(&self.open).len()
    }

    /// Registers a new connection, closing the longest-idle one if the limit is reached;
    /// `None` if it is reached and every connection has a stream open.
    fn admit(&self) -> Option<(u64, Arc<ConnState>)> {
        let mut open = lock(&self.open);
        if open.len() >= self.limits.max && !Self::evict(&mut open) {
            return None;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState::new());
        open.insert(id, state.clone());
        Some((id, state))
    }

    /// Closes the connection idle longest, if one is idle.
    fn evict_idle(&self) -> bool {
        Self::evict(&mut lock(&self.open))
    }

    fn evict(open: &mut HashMap<u64, Arc<ConnState>>) -> bool {
        let oldest = open
            .iter()
            .filter_map(|(id, c)| c.idle_since().map(|t| (t, *id)))
            .min();
        match oldest.and_then(|(_, id)| open.remove(&id)) {
            Some(conn) => {
                conn.close();
                true
            }
            None => false,
        }
    }

    fn log_refused(&self) {
        let mut last = lock(&self.refused_logged);
        if last.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
            *last = Some(Instant::now());
            tracing::warn!(
                max_connections = self.limits.max,
                "connection refused: every connection has an open stream (max_connections)"
            );
        }
    }
}

/// An accepted connection, counted until it is dropped.
#[derive(Debug)]
pub struct Conn {
    io: TcpStream,
    id: u64,
    state: Arc<ConnState>,
    conns: Arc<Connections>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        let mut open = lock(&self.conns.open);
        // Absent if it was evicted (and a newer one took its place in the count).
        if open
            .get(&self.id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.state))
        {
            open.remove(&self.id);
        }
    }
}

impl Conn {
    /// Whether the connection is to end now: asked to close, or idle too long. Arms the
    /// idle timer (and remembers the waker) otherwise.
    fn over(&mut self, cx: &mut Context<'_>) -> bool {
        if self.state.closing.load(Ordering::SeqCst) {
            return true;
        }
        {
            let mut waker = lock(&self.state.waker);
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        let (Some(idle), Some(since)) = (self.conns.limits.idle, self.state.idle_since()) else {
            return false;
        };
        let deadline = since + idle;
        if Instant::now() >= deadline {
            return true;
        }
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx).is_ready()
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.over(cx) {
            // End of stream: hyper ends the connection and the socket is closed.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// What a request knows of its connection (in its extensions).
#[derive(Debug, Clone)]
pub struct ConnInfo {
    /// The addresses.
    pub tcp: TcpConnectInfo,
    /// The connection's stream count.
    pub state: Arc<ConnState>,
}

impl Connected for Conn {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        ConnInfo {
            tcp: self.io.connect_info(),
            state: self.state.clone(),
        }
    }
}

/// Errors of one connection that went away before it was accepted: accept the next.
fn per_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::ConnectionRefused | K::ConnectionAborted | K::ConnectionReset
    )
}

/// A connection as it is served: plaintext, or TLS over it.
#[derive(Debug)]
pub enum Served {
    /// Plaintext.
    Plain(Conn),
    /// TLS, its handshake done.
    Tls(Box<TlsStream<Conn>>),
}

impl AsyncRead for Served {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Served::Plain(c) => Pin::new(c).poll_read(cx, buf),
            Served::Tls(t) => Pin::new(t.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Served {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Served::Plain(c) => Pin::new(c).poll_write(cx, buf),
            Served::Tls(t) => Pin::new(t.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Served::Plain(c) => Pin::new(c).poll_flush(cx),
            Served::Tls(t) => Pin::new(t.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Served::Plain(c) => Pin::new(c).poll_shutdown(cx),
            Served::Tls(t) => Pin::new(t.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Served::Plain(c) => Pin::new(c).poll_write_vectored(cx, bufs),
            Served::Tls(t) => Pin::new(t.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Served::Plain(c) => c.is_write_vectored(),
            Served::Tls(t) => t.is_write_vectored(),
        }
    }
}

impl Connected for Served {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        match self {
            Served::Plain(c) => c.connect_info(),
            Served::Tls(t) => t.get_ref().0.connect_info(),
        }
    }
}

/// What the accept loop waits for next.
enum Next {
    Accepted(std::io::Result<TcpStream>),
    Handshake(Option<Box<TlsStream<Conn>>>),
}

/// The connections `listener` accepts, within `conns`' limits, with Nagle's algorithm off
/// (small answers would otherwise wait for the client's delayed ACK, about 40 ms on
/// Linux), each through its TLS handshake if `tls` is given. Never yields an error: see
/// the module's comment.
pub fn incoming(
    listener: TcpListener,
    conns: Arc<Connections>,
    tls: Option<ServerTls>,
) -> impl Stream<Item = Result<Served, std::io::Error>> + Send {
    const FIRST_PAUSE: Duration = Duration::from_millis(10);
    async_stream::stream! {
        let mut pause = FIRST_PAUSE;
        // Handshakes under way; dropped with the stream (at shutdown), they end.
        let mut handshakes: JoinSet<Option<Box<TlsStream<Conn>>>> = JoinSet::new();
        loop {
            let next = tokio::select! {
                accepted = listener.accept() => Next::Accepted(accepted.map(|(io, _)| io)),
                Some(done) = handshakes.join_next(), if !handshakes.is_empty() => {
                    // A failed or slow handshake, or its task ended: the connection is
                    // gone (and uncounted).
                    Next::Handshake(done.ok().flatten())
                }
            };
            match next {
                Next::Handshake(Some(stream)) => yield Ok(Served::Tls(stream)),
                Next::Handshake(None) => {}
                Next::Accepted(Ok(io)) => {
                    pause = FIRST_PAUSE;
                    let _ = io.set_nodelay(true);
                    match conns.admit() {
                        Some((id, state)) => {
                            let conn = Conn { io, id, state, conns: conns.clone(), timer: None };
                            match &tls {
                                None => yield Ok(Served::Plain(conn)),
                                Some(tls) => {
                                    let acceptor = tls.acceptor();
                                    handshakes.spawn(async move {
                                        match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(conn)).await {
                                            Ok(Ok(stream)) => Some(Box::new(stream)),
                                            Ok(Err(e)) => {
                                                tracing::debug!(error = %e, "TLS handshake failed");
                                                None
                                            }
                                            Err(_) => {
                                                tracing::debug!("TLS handshake timed out");
                                                None
                                            }
                                        }
                                    });
                                }
                            }
                        }
                        None => {
                            conns.log_refused();
                            drop(io);
                        }
                    }
                }
                Next::Accepted(Err(e)) if per_connection(&e) => {}
                Next::Accepted(Err(e)) => {
                    let evicted = conns.evict_idle();
                    if pause == FIRST_PAUSE {
                        tracing::warn!(error = %e, evicted, open = conns.open(), "accept failed (out of file descriptors?): closing the longest-idle connection, pausing");
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }
}
