//! Connections: how many the server holds and how long a slow one may
//! take, so that slow or idle clients cannot take the service from the
//! others (slowloris).
//!
//! - A client has [`Limits::header_timeout`] to send a request's headers,
//!   from the moment the connection opens or the previous answer ends: an
//!   idle keep-alive connection is closed after it too (hyper's header
//!   read timeout).
//! - At most [`Limits::max_connections`] are held. At the limit, the
//!   connection idle the longest (waiting for headers, or following the
//!   event stream, which browsers reopen by themselves) is closed to make
//!   room for the next one. A connection not read from yet is spared for
//!   [`FRESH`]: in a burst, its request is likely waiting unread. When no
//!   connection can be closed, new ones wait in the system's queue until
//!   one ends.
//! - A connection answering a request that makes no progress for
//!   [`Limits::stall_timeout`] (a client that stopped reading) is closed.

use super::snapshot::EVENTS_PATH;
use axum::body::{Body, Bytes, HttpBody};
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt as _;

/// Connections waiting to be accepted that the system keeps.
const BACKLOG: i32 = 1024;

/// How long open connections may take to finish once the server stops.
const GRACE: Duration = Duration::from_secs(3);

/// How long a connection nothing was read from yet is spared eviction:
/// far longer than a request takes to arrive, far shorter than
/// [`Limits::header_timeout`].
const FRESH: Duration = Duration::from_secs(1);

/// How often a server at its limit looks again for a connection to close,
/// when none ended.
const RETRY: Duration = Duration::from_millis(50);

/// Bounds on connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub stall_timeout: Duration,
}

/// The limits `basepress serve` runs with: far more connections than a
/// few browsers open (six per tab, and one event stream), and well below
/// the 1,024 file descriptors most systems give a process.
pub const LIMITS: Limits = Limits {
    max_connections: 512,
    header_timeout: Duration::from_secs(10),
    stall_timeout: Duration::from_secs(30),
};

/// A listening socket on `addr`, with room for [`BACKLOG`] connections
/// waiting to be accepted (the standard library's 128 overflows under a
/// burst, and a client then waits a second to retry).
pub fn listen(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    // As the standard library does on Unix: a restarted server can listen
    // again at once.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// The addresses a server listening on `bound` is reached at, to print:
/// `bound` itself, or for `0.0.0.0` / `::` loopback first and then the
/// machine's addresses of the same family (`::` takes IPv4 too), without
/// IPv6 link-local ones, which need an interface name in a URL.
pub fn reachable(bound: SocketAddr, interfaces: &[IpAddr]) -> Vec<SocketAddr> {
    let ip = bound.ip();
    if !ip.is_unspecified() {
        return vec![bound];
    }
    let mut out = vec![SocketAddr::new(IpAddr::from([127, 0, 0, 1]), bound.port())];
    let mut others: Vec<IpAddr> = interfaces
        .iter()
        .copied()
        .filter(|a| !a.is_loopback() && !a.is_unspecified())
        .filter(|a| match a {
            IpAddr::V4(_) => true,
            IpAddr::V6(v6) => ip.is_ipv6() && (v6.segments()[0] & 0xffc0) != 0xfe80,
        })
        .collect();
    others.sort();
    others.dedup();
    out.extend(others.into_iter().map(|a| SocketAddr::new(a, bound.port())));
    out
}

/// The machine's interface addresses.
pub fn interface_addresses() -> io::Result<Vec<IpAddr>> {
    Ok(if_addrs::get_if_addrs()?
        .into_iter()
        .map(|i| i.ip())
        .collect())
}

/// Accepts connections and answers them with `router` until `stop` turns
/// true, then gives open connections [`GRACE`] to finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: watch::Receiver<bool>,
) {
    let registry = Arc::new(Registry::new());
    let mut tasks = tokio::task::JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        if registry.len() >= limits.max_connections && !registry.evict_one() {
            // Every connection is answering a request or just opened: the
            // next one waits, unaccepted, until one ends or can be closed.
            tokio::select! {
                _ = registry.closed.notified() => {}
                _ = tokio::time::sleep(RETRY) => {}
                _ = stopping.wait_for(|s| *s) => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
            continue;
        }
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let conn = registry.add();
                    tasks.spawn(connection(
                        stream,
                        router.clone(),
                        Arc::clone(&registry),
                        conn,
                        limits,
                        stop.clone(),
                    ));
                }
                // Out of file descriptors, most likely: they come back as
                // connections close.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            _ = stopping.wait_for(|s| *s) => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(GRACE, async { while tasks.join_next().await.is_some() {} }).await;
}

/// What the server knows of one connection.
struct Activity {
    /// Requests being answered, event streams aside.
    busy: AtomicUsize,
    /// When the connection last became idle (opened, or an answer ended),
    /// in milliseconds from the registry's epoch.
    idle_since: AtomicU64,
    /// When bytes last went in or out.
    last_io: AtomicU64,
    /// Whether any byte came in.
    heard: AtomicBool,
}

struct Conn {
    id: u64,
    activity: Arc<Activity>,
    evict: Arc<Notify>,
}

/// Each open connection, by id: what it is doing, and how to close it.
type Open = HashMap<u64, (Arc<Activity>, Arc<Notify>)>;

/// The open connections.
struct Registry {
    epoch: Instant,
    next: AtomicU64,
    open: Mutex<Open>,
    /// Told each time a connection ends.
    closed: Notify,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            epoch: Instant::now(),
            next: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            closed: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn len(&self) -> usize {
        self.open().len()
    }

    fn add(&self) -> Conn {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let now = self.now();
        let activity = Arc::new(Activity {
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(now),
            last_io: AtomicU64::new(now),
            heard: AtomicBool::new(false),
        });
        let evict = Arc::new(Notify::new());
        self.open()
            .insert(id, (Arc::clone(&activity), Arc::clone(&evict)));
        Conn {
            id,
            activity,
            evict,
        }
    }

    fn remove(&self, id: u64) {
        self.open().remove(&id);
        self.closed.notify_one();
    }

    /// Closes the connection idle the longest, to make room for a new one;
    /// `false` when every connection is answering a request or was opened
    /// less than [`FRESH`] ago with nothing read from it yet.
    fn evict_one(&self) -> bool {
        let now = self.now();
        let fresh = FRESH.as_millis() as u64;
        let mut open = self.open();
        let oldest = open
            .iter()
            .filter(|(_, (a, _))| {
                a.busy.load(Ordering::Acquire) == 0
                    && (a.heard.load(Ordering::Acquire)
                        || now.saturating_sub(a.idle_since.load(Ordering::Acquire)) >= fresh)
            })
            .min_by_key(|(id, (a, _))| (a.idle_since.load(Ordering::Acquire), **id))
            .map(|(id, _)| *id);
        match oldest.and_then(|id| open.remove(&id)) {
            Some((_, evict)) => {
                // Stored if the connection is not waiting yet: it still
                // closes.
                evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// One connection, until it ends, is evicted, stalls or the server stops.
async fn connection(
    stream: TcpStream,
    router: Router,
    registry: Arc<Registry>,
    conn: Conn,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let io = TokioIo::new(Tracked {
        stream,
        activity: Arc::clone(&conn.activity),
        registry: Arc::clone(&registry),
    });
    let service = {
        let activity = Arc::clone(&conn.activity);
        let registry = Arc::clone(&registry);
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let router = router.clone();
            // An event stream lasts as long as its page: it does not keep
            // the connection from being evicted.
            let busy = (request.uri().path() != EVENTS_PATH)
                .then(|| Busy::new(Arc::clone(&activity), Arc::clone(&registry)));
            async move {
                let response = match router.oneshot(request).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                Ok::<_, Infallible>(response.map(|body| Body::new(Guarded { body, busy })))
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let served = http.serve_connection(io, service);
    tokio::pin!(served);
    let stall_ms = limits.stall_timeout.as_millis() as u64;
    let mut tick = tokio::time::interval(limits.stall_timeout / 4);
    let mut stopping = *stop.borrow();
    if stopping {
        served.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            _ = served.as_mut() => break,
            _ = conn.evict.notified() => break,
            changed = stop.changed(), if !stopping => {
                if changed.is_err() || *stop.borrow() {
                    stopping = true;
                    served.as_mut().graceful_shutdown();
                }
            }
            _ = tick.tick() => {
                let a = &conn.activity;
                let quiet = registry.now().saturating_sub(a.last_io.load(Ordering::Acquire));
                if a.busy.load(Ordering::Acquire) > 0 && quiet > stall_ms {
                    break;
                }
            }
        }
    }
    registry.remove(conn.id);
}

/// Marks a connection as answering a request, from its headers to the
/// end of the answer's body.
struct Busy {
    activity: Arc<Activity>,
    registry: Arc<Registry>,
}

impl Busy {
    fn new(activity: Arc<Activity>, registry: Arc<Registry>) -> Busy {
        activity.busy.fetch_add(1, Ordering::AcqRel);
        Busy { activity, registry }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.activity
            .idle_since
            .store(self.registry.now(), Ordering::Release);
        self.activity.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that ends its request's [`Busy`] when it ends or is
/// dropped.
struct Guarded {
    body: Body,
    busy: Option<Busy>,
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.busy = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket, noting when bytes go in or out.
struct Tracked {
    stream: TcpStream,
    activity: Arc<Activity>,
    registry: Arc<Registry>,
}

impl Tracked {
    fn touch(&self) {
        self.activity
            .last_io
            .store(self.registry.now(), Ordering::Release);
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.touch();
            this.activity.heard.store(true, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachable_addresses_are_real_ones() {
        let ifs: Vec<IpAddr> = [
            "127.0.0.1",
            "192.168.1.7",
            "10.0.0.2",
            "fe80::1",
            "fd00::7",
            "::1",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        let v4 = reachable("0.0.0.0:1111".parse().unwrap(), &ifs);
        let got: Vec<String> = v4.iter().map(|a| a.to_string()).collect();
        assert_eq!(got, ["127.0.0.1:1111", "10.0.0.2:1111", "192.168.1.7:1111"]);
        let v6 = reachable("[::]:1111".parse().unwrap(), &ifs);
        let got: Vec<String> = v6.iter().map(|a| a.to_string()).collect();
        assert_eq!(
            got,
            [
                "127.0.0.1:1111",
                "10.0.0.2:1111",
                "192.168.1.7:1111",
                "[fd00::7]:1111"
            ]
        );
        let one = reachable("192.168.1.7:1111".parse().unwrap(), &ifs);
        assert_eq!(one, vec!["192.168.1.7:1111".parse().unwrap()]);
    }

    #[test]
    fn eviction_takes_the_connection_idle_the_longest_and_spares_busy_ones() {
        let r = Registry::new();
        let a = r.add();
        let b = r.add();
        let c = r.add();
        for conn in [&a, &b, &c] {
            conn.activity.heard.store(true, Ordering::Release);
        }
        a.activity.idle_since.store(5, Ordering::Release);
        b.activity.idle_since.store(1, Ordering::Release);
        c.activity.idle_since.store(9, Ordering::Release);
        b.activity.busy.store(1, Ordering::Release);
        assert!(r.evict_one());
        assert_eq!(r.len(), 2);
        assert!(
            !r.open().contains_key(&a.id),
            "a was idle the longest of the idle ones"
        );
        assert!(r.evict_one());
        assert!(!r.evict_one(), "b is busy: it stays");
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn a_connection_not_read_from_yet_is_spared_for_a_moment() {
        let r = Registry::new();
        let new = r.add();
        assert!(!r.evict_one(), "just opened, its request may be waiting");
        new.activity.heard.store(true, Ordering::Release);
        assert!(r.evict_one(), "read from and idle");
        let r2 = Registry {
            epoch: Instant::now() - FRESH,
            ..Registry::new()
        };
        let old = r2.add();
        old.activity.idle_since.store(0, Ordering::Release);
        assert!(r2.evict_one(), "silent for longer than FRESH");
    }

    /// A burst of many more connections than the limit, each sending a
    /// whole request at once: every one is answered (the ones over the
    /// limit wait to be accepted), none is closed unanswered.
    #[test]
    fn a_burst_over_the_limit_is_answered_in_full() {
        use std::io::{Read as _, Write as _};
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let (stop_tx, stop) = watch::channel(false);
        let limits = Limits {
            max_connections: 4,
            ..LIMITS
        };
        let router = Router::new().route("/", axum::routing::get(|| async { "ok" }));
        let server = std::thread::spawn(move || {
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                serve(listener, router, limits, stop).await;
            })
        });
        let clients: Vec<_> = (0..40)
            .map(|_| {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .unwrap();
                s
            })
            .collect();
        for mut s in clients {
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            assert!(answer.starts_with("HTTP/1.1 200"), "answer: {answer:?}");
        }
        stop_tx.send(true).unwrap();
        server.join().unwrap();
    }
}
