//! The accept loop: every socket a stranger opens is bounded in number and in time.
//!
//! `axum::serve` gives hyper no timer, so hyper's own header timeout never runs, and it caps
//! nothing: a peer that opens sockets and sends nothing (or one header byte a second) keeps them
//! forever, and enough of them exhaust the process's file descriptors for everyone. This loop
//! serves HTTP/1.1 (what MCP clients and load balancers speak to a backend) with:
//!
//! - a cap on open connections in total and per peer address — over it, the socket is answered
//!   `503` and closed at once, so one peer cannot take the descriptors another needs;
//! - a watchdog per connection that closes it when, with no request in flight, a request's head
//!   has not arrived within [`ConnectionLimits::header_read_timeout`] of its first byte (or of
//!   the connection's start: a socket that never speaks), or nothing at all has arrived for
//!   [`ConnectionLimits::keep_alive_timeout`]. A request in flight — an SSE stream a client holds
//!   open, a slow tool call — is never timed out here;
//! - accept errors (`EMFILE` among them) answered with a growing pause, never a spin;
//! - the peer's address as axum's [`ConnectInfo`], for per-peer limits further in.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::idle_clock::now;

/// How many connections, and for how long (`[server]`).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub keep_alive_timeout: Duration,
    pub max_connections: usize,
    pub max_connections_per_peer: usize,
}

/// The routes a listener serves, swapped whole by a reload (`crate::reload`).
pub type Routes = Arc<arc_swap::ArcSwap<Router>>;

/// Serves `app` on `listener` until `shutdown` is cancelled; then stops accepting, asks every
/// connection to finish its request in flight, and waits for them up to `drain`.
pub async fn serve(
    listener: TcpListener,
    app: Routes,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
    drain: Duration,
) -> std::io::Result<()> {
    raise_descriptor_limit();
    warn_if_descriptors_are_fewer(&limits);
    let peers = Arc::new(Peers::default());
    let tracker = TaskTracker::new();
    let mut pause = AcceptPause::default();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    pause.after(&error).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        pause.reset();
        let Some(slot) = peers.admit(peer.ip(), &limits) else {
            refuse(stream);
            continue;
        };
        let app = app.clone();
        let stop = shutdown.clone();
        tracker.spawn(async move {
            serve_connection(stream, peer, app, limits, stop).await;
            drop(slot);
        });
    }
    tracker.close();
    if tokio::time::timeout(drain, tracker.wait()).await.is_err() {
        tracing::warn!(
            open = tracker.len(),
            "shutdown: connections still open after the drain time are dropped"
        );
    }
    Ok(())
}

/// Raises the soft limit on open files to the hard one, as servers do (Go's runtime does it for
/// every program): the soft default (often 1,024) is a guard for desktop programs, far below
/// what a server that holds one descriptor per connection needs.
#[cfg(unix)]
fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max.min(1 << 20);
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[cfg(not(unix))]
fn raise_descriptor_limit() {}

/// Every connection takes a file descriptor; with fewer than the cap allows (plus room for
/// files and upstream sockets), accept fails before the cap is reached. Said once, at start.
fn warn_if_descriptors_are_fewer(limits: &ConnectionLimits) {
    let Ok(text) = std::fs::read_to_string("/proc/self/limits") else {
        return;
    };
    let soft = text
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(soft) = soft
        && soft < limits.max_connections + 64
    {
        tracing::warn!(
            open_files = soft,
            max_connections = limits.max_connections,
            "the process may open fewer files than [server] max_connections needs: raise `ulimit -n` or lower max_connections"
        );
    }
}

/// Over a cap: a short readable answer if the socket takes it without waiting, then close.
fn refuse(stream: TcpStream) {
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 34\r\nretry-after: 1\r\nconnection: close\r\n\r\ntoo many connections; retry later\n";
    let _ = stream.try_write(BUSY);
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Routes,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) {
    // Without TCP_NODELAY every small SSE answer waits ~40 ms for Nagle's algorithm.
    let _ = stream.set_nodelay(true);
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });
    let service_activity = activity.clone();
    let service = hyper::service::service_fn(move |mut request: http::Request<_>| {
        // The routes serving now: a reload swaps them between two requests, never within one.
        let app = Router::clone(&app.load());
        let in_flight = service_activity.request_started();
        request.extensions_mut().insert(ConnectInfo(peer));
        async move {
            let response = app.oneshot(request.map(Body::new)).await?;
            Ok::<_, std::convert::Infallible>(response.map(|body| {
                Body::new(InFlightBody {
                    inner: body,
                    _in_flight: in_flight,
                })
            }))
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        // The watchdog below times heads out; hyper's own timer would also end idle keep-alive
        // connections at the header timeout, which is shorter than the keep-alive timeout.
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::pin!(connection);
    loop {
        let wake = activity.deadline(&limits);
        tokio::select! {
            // The connection first: bytes already there are read before a deadline is judged.
            biased;
            _ = connection.as_mut() => return,
            _ = shutdown.cancelled() => break,
            _ = activity.head_began.notified() => {}
            _ = tokio::time::sleep_until(wake) => {
                if activity.expired(&limits) {
                    // Nothing in flight: dropping the connection closes the socket.
                    return;
                }
            }
        }
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// What the watchdog reads: requests in flight, when the connection last went quiet, and
/// whether bytes of a next request have started to arrive since.
struct Activity {
    origin: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds since `origin` when the last request finished (0: the connection's start).
    quiet_since: AtomicU64,
    /// Milliseconds since `origin`, plus one, of the first byte read while quiet; 0: none yet.
    head_started: AtomicU64,
    /// Wakes the watchdog when a head starts: its header deadline is sooner than the
    /// keep-alive deadline it may be sleeping towards.
    head_began: tokio::sync::Notify,
}

impl Activity {
    fn new() -> Self {
        Self {
            origin: now(),
            in_flight: AtomicUsize::new(0),
            quiet_since: AtomicU64::new(0),
            head_started: AtomicU64::new(0),
            head_began: tokio::sync::Notify::new(),
        }
    }

    fn now_ms(&self) -> u64 {
        now().saturating_duration_since(self.origin).as_millis() as u64
    }

    fn at(&self, ms: u64) -> Instant {
        self.origin + Duration::from_millis(ms)
    }

    fn bytes_read(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_started.load(Ordering::Relaxed) == 0
        {
            let began = self.head_started.compare_exchange(
                0,
                self.now_ms() + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            if began.is_ok() {
                self.head_began.notify_one();
            }
        }
    }

    fn request_started(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_started.store(0, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// When the watchdog should look again.
    fn deadline(&self, limits: &ConnectionLimits) -> Instant {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return now() + limits.keep_alive_timeout;
        }
        let quiet_since = self.quiet_since.load(Ordering::Relaxed);
        let quiet = self.at(quiet_since);
        // A new connection's first request head must be in within the header time of the
        // connection; a later head within the header time of its first byte.
        let head = match self.head_started.load(Ordering::Relaxed) {
            _ if quiet_since == 0 => Some(quiet),
            0 => None,
            started => Some(self.at(started - 1)),
        };
        match head {
            Some(head) => {
                (head + limits.header_read_timeout).min(quiet + limits.keep_alive_timeout)
            }
            None => quiet + limits.keep_alive_timeout,
        }
    }

    fn expired(&self, limits: &ConnectionLimits) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0 && now() >= self.deadline(limits)
    }
}

/// One request in flight; dropped when its response body has been sent or abandoned.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        // 0 means "no request yet": a request that ends in the first millisecond counts as 1.
        let now = self.0.now_ms().max(1);
        self.0.quiet_since.store(now, Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted as in flight until it ends.
struct InFlightBody {
    inner: Body,
    _in_flight: InFlight,
}

impl http_body::Body for InFlightBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, telling [`Activity`] when bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.bytes_read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Connections open and refused by this process, for `/metrics` (every listener together).
pub struct Counts {
    pub open: usize,
    pub refused: u64,
}

static OPEN: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

pub fn counts() -> Counts {
    Counts {
        open: OPEN.load(Ordering::Relaxed),
        refused: REFUSED.load(Ordering::Relaxed),
    }
}

/// Open connections, in total and per peer address.
struct Peers {
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
    refused: AtomicU64,
    started: std::time::Instant,
    /// The second (since `started`, plus one) of the last refusal logged.
    last_logged: AtomicU64,
}

impl Default for Peers {
    fn default() -> Self {
        Self {
            open: Mutex::default(),
            refused: AtomicU64::new(0),
            started: std::time::Instant::now(),
            last_logged: AtomicU64::new(0),
        }
    }
}

/// The address a per-peer cap counts by: IPv4-mapped IPv6 as IPv4, and IPv6 by its /64 (one
/// subscriber's network: a host can take any address in it).
fn peer_key(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(std::net::Ipv6Addr::from(bits))
        }
        v4 => v4,
    }
}

impl Peers {
    fn admit(self: &Arc<Self>, peer: IpAddr, limits: &ConnectionLimits) -> Option<Slot> {
        let peer = peer_key(peer);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, by_peer) = &mut *open;
        let mine = by_peer.get(&peer).copied().unwrap_or(0);
        if *total >= limits.max_connections || mine >= limits.max_connections_per_peer {
            // One line a second at most: a peer hammering at its cap must not flood the log.
            REFUSED.fetch_add(1, Ordering::Relaxed);
            let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
            let now = self.started.elapsed().as_secs() + 1;
            if self.last_logged.swap(now, Ordering::Relaxed) != now {
                tracing::warn!(%peer, open = *total, from_peer = mine, refused_so_far = refused, "connection refused: over the cap");
            }
            return None;
        }
        *total += 1;
        OPEN.fetch_add(1, Ordering::Relaxed);
        by_peer.insert(peer, mine + 1);
        Some(Slot {
            peers: self.clone(),
            peer,
        })
    }
}

/// One admitted connection; dropped when it closes.
struct Slot {
    peers: Arc<Peers>,
    peer: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.peers.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, by_peer) = &mut *open;
        *total -= 1;
        OPEN.fetch_sub(1, Ordering::Relaxed);
        if let Some(count) = by_peer.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                by_peer.remove(&self.peer);
            }
        }
    }
}

/// The pause after a failed accept: 10 ms doubling to 1 s while errors repeat. Out of file
/// descriptors, accept fails at once every time it is called; retrying without a pause would
/// spin a core while nothing can be served anyway.
#[derive(Default)]
struct AcceptPause {
    next: Option<Duration>,
}

impl AcceptPause {
    async fn after(&mut self, error: &std::io::Error) {
        // A peer that reset before we accepted it says nothing about us.
        if matches!(
            error.kind(),
            std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
        ) {
            return;
        }
        let pause = self.next.unwrap_or(Duration::from_millis(10));
        if pause == Duration::from_millis(10) || pause == Duration::from_secs(1) {
            tracing::error!(%error, pause_ms = pause.as_millis() as u64, "accept failed; pausing");
        }
        tokio::time::sleep(pause).await;
        self.next = Some((pause * 2).min(Duration::from_secs(1)));
    }

    fn reset(&mut self) {
        self.next = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idle_clock::advance;

    fn limits() -> ConnectionLimits {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(60),
            max_connections: 3,
            max_connections_per_peer: 2,
        }
    }

    #[test]
    fn ipv6_peers_count_by_their_network_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        assert_eq!(peer_key(a), peer_key(b));
        assert_ne!(peer_key(a), peer_key("2001:db8:1:3::1".parse().unwrap()));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(peer_key(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn peers_are_capped_each_and_in_total_and_slots_come_back() {
        let peers = Arc::new(Peers::default());
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let first = peers.admit(a, &limits()).unwrap();
        let _second = peers.admit(a, &limits()).unwrap();
        assert!(peers.admit(a, &limits()).is_none(), "per-peer cap");
        let _third = peers.admit(b, &limits()).unwrap();
        assert!(peers.admit(b, &limits()).is_none(), "total cap");
        drop(first);
        assert!(peers.admit(b, &limits()).is_some());
    }

    #[test]
    fn a_silent_socket_expires_at_the_header_time_an_idle_one_at_keep_alive() {
        let limits = limits();
        let activity = Arc::new(Activity::new());
        advance(Duration::from_secs(9));
        assert!(!activity.expired(&limits));
        advance(Duration::from_secs(2));
        assert!(activity.expired(&limits), "never sent a request");

        let activity = Arc::new(Activity::new());
        advance(Duration::from_secs(8));
        activity.bytes_read();
        advance(Duration::from_secs(3));
        assert!(
            activity.expired(&limits),
            "the first head counts from the connection"
        );

        let activity = Arc::new(Activity::new());
        drop(activity.request_started());
        advance(Duration::from_secs(59));
        assert!(
            !activity.expired(&limits),
            "idle keep-alive is allowed a minute"
        );
        // A byte of the next head starts the header clock.
        activity.bytes_read();
        advance(Duration::from_millis(900));
        assert!(!activity.expired(&limits));
        advance(Duration::from_secs(10));
        assert!(activity.expired(&limits), "a head that trickles in");
    }

    #[test]
    fn a_request_in_flight_never_expires() {
        let limits = limits();
        let activity = Arc::new(Activity::new());
        let stream = activity.request_started();
        advance(Duration::from_secs(3600));
        assert!(!activity.expired(&limits));
        drop(stream);
        assert!(!activity.expired(&limits));
        advance(Duration::from_secs(61));
        assert!(activity.expired(&limits));
    }
}
