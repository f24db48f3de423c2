//! Serving connections: each accepted connection runs in its own task
//! (its TLS handshake too, so a client that sends nothing delays no other),
//! under the time and size limits of kube-apiserver's `http.Server`
//! (`staging/src/k8s.io/apiserver/pkg/server/secure_serving.go`) and its
//! request timeout filter, with a bound on open connections.
//!
//! Per connection, in order:
//! * the TLS handshake must finish within [`ConnectionLimits::handshake_timeout`];
//! * each request's header must arrive within [`ConnectionLimits::header_timeout`]
//!   (counted from the handshake for the first request, from the request's
//!   first byte after that), else the connection is closed;
//! * a request body must arrive within [`ConnectionLimits::body_timeout`] of
//!   its header, else 504 `Timeout` and the connection is closed;
//! * a connection with no request for [`ConnectionLimits::idle_timeout`] is
//!   closed.
//!
//! Responses are never timed: a watch streams for as long as it lasts, and
//! a client that stops reading keeps its connection (kube-apiserver sets no
//! write timeout either). Only once the server stops, a response still
//! unfinished after [`ConnectionLimits::body_timeout`] (kube-apiserver's
//! shutdown timeout is its request timeout) has its connection closed.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use axum::response::IntoResponse;
use bytes::{Bytes, BytesMut};
use hyper::body::{Body as _, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::rest::errors::failure;
use crate::rest::router::MAX_BODY;

/// Time and size limits of client connections. The defaults are
/// kube-apiserver's (see `docs/apiserver.md`, "Connections").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Longest TLS handshake (Go's `http.Server` uses its
    /// `ReadHeaderTimeout`: 32 s).
    pub handshake_timeout: Duration,
    /// Longest wait for a request's header (`ReadHeaderTimeout`: 32 s).
    pub header_timeout: Duration,
    /// Longest wait for a request's body after its header (the request
    /// timeout of non-long-running requests, `--request-timeout`: 60 s).
    pub body_timeout: Duration,
    /// How long a connection may wait for its next request (`IdleTimeout`: 90 s).
    pub idle_timeout: Duration,
    /// Largest request header, request line included (`MaxHeaderBytes`:
    /// 1 MiB; larger is answered 431).
    pub max_header_bytes: usize,
    /// Most connections open at once; at the bound, new connections wait
    /// in the kernel's backlog until one closes.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            handshake_timeout: Duration::from_secs(32),
            header_timeout: Duration::from_secs(32),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(90),
            max_header_bytes: 1 << 20,
            max_connections: 10_000,
        }
    }
}

/// hyper's smallest read buffer bound.
const MIN_BUF: usize = 8192;

/// Serves `router` on `listener` (TLS with `tls`, if given) until `signal`
/// completes, then stops accepting, calls `on_shutdown`, closes idle
/// connections and waits for in-flight requests.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: ConnectionLimits,
    signal: impl Future<Output = ()> + Send + 'static,
    on_shutdown: impl FnOnce() + Send + 'static,
) -> io::Result<()> {
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let permits = Arc::new(Semaphore::new(max));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut signal = std::pin::pin!(signal);
    loop {
        let permit = tokio::select! {
            () = &mut signal => break,
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, addr) = tokio::select! {
            () = &mut signal => break,
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(e) => {
                    // EMFILE and the like: back off rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let tls = tls.clone();
        let stop = stop_rx.clone();
        tokio::spawn(async move {
            connection(stream, tls, router, limits, stop).await;
            tracing::trace!(%addr, "connection closed");
            drop(permit);
        });
    }
    tracing::info!("shutting down: ending watches, finishing in-flight requests");
    on_shutdown();
    stop_tx.send_replace(true);
    drop(listener);
    // Every connection holds a permit until it ends.
    let _all = permits.acquire_many(max as u32).await;
    Ok(())
}

/// One connection: handshake, then HTTP/1.1 until it ends.
async fn connection(
    stream: TcpStream,
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: ConnectionLimits,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let addr = stream.peer_addr().ok();
    let Some(acceptor) = tls else {
        return http(stream, router, limits, stop).await;
    };
    let mut stopping = stop.clone();
    let handshake = tokio::time::timeout(limits.handshake_timeout, acceptor.accept(stream));
    tokio::select! {
        done = handshake => match done {
            Ok(Ok(tls)) => http(tls, router, limits, stop).await,
            Ok(Err(e)) => tracing::debug!(?addr, error = %e, "TLS handshake failed"),
            Err(_) => tracing::debug!(?addr, "TLS handshake timed out"),
        },
        () = stopped(&mut stopping) => {}
    }
}

/// Completes when the server stops.
async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        if stop.changed().await.is_err() {
            return;
        }
    }
}

/// What a connection is doing, for its timers. Times are milliseconds since
/// the connection's start, plus one (0: unset).
struct Activity {
    start: Instant,
    /// Requests whose response has not been written yet.
    in_flight: AtomicUsize,
    /// When the header being awaited started (0: none awaited).
    header_since: AtomicU64,
    /// When the connection went idle (0: not idle).
    idle_since: AtomicU64,
    changed: Notify,
}

impl Activity {
    fn new() -> Self {
        Activity {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            // The first request's header is awaited from the start.
            header_since: AtomicU64::new(1),
            idle_since: AtomicU64::new(0),
            changed: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    }

    fn at(&self, stamp: u64) -> Instant {
        self.start + Duration::from_millis(stamp.saturating_sub(1))
    }

    /// Bytes arrived: between requests they start the next header.
    fn read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self.header_since.load(Ordering::Acquire) == 0
        {
            self.header_since.store(self.now(), Ordering::Release);
            self.idle_since.store(0, Ordering::Release);
            self.changed.notify_one();
        }
    }

    /// A request's header was read.
    fn request(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.header_since.store(0, Ordering::Release);
        self.idle_since.store(0, Ordering::Release);
        self.changed.notify_one();
        InFlight(self.clone())
    }

    /// The next deadline: closing at the header timeout, or going away at
    /// the idle timeout (`Some(true)`: close at once).
    fn deadline(&self, limits: &ConnectionLimits) -> Option<(Instant, bool)> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let header = self.header_since.load(Ordering::Acquire);
        if header > 0 {
            return Some((self.at(header) + limits.header_timeout, true));
        }
        let idle = self.idle_since.load(Ordering::Acquire);
        (idle > 0).then(|| (self.at(idle) + limits.idle_timeout, false))
    }
}

/// A request in flight until its response body is written or dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let a = &self.0;
        if a.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            a.idle_since.store(a.now(), Ordering::Release);
            a.changed.notify_one();
        }
    }
}

/// A stream that reports reads to its connection's [`Activity`].
struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A response body that keeps its request in flight until it is written.
struct Tracked {
    inner: Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// 504 `Timeout`, as kube-apiserver's timeout filter answers a request that
/// did not complete within the request timeout.
fn body_timeout() -> Response<Body> {
    let mut response = failure(
        504,
        "Timeout",
        "Timeout: request did not complete within the allotted timeout",
        Some(Default::default()),
    )
    .into_response();
    response.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    response
}

/// Reads a request body within `limit`: all of it, or (too large) its first
/// `MAX_BODY + 1` bytes for the router to refuse; `None` when it did not
/// arrive in time or the client failed.
async fn read_body(mut body: Incoming, limit: Duration) -> Option<Bytes> {
    let read = async {
        let mut buf = BytesMut::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame: Frame<Bytes> = frame.ok()?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            buf.extend_from_slice(&data);
            if buf.len() > MAX_BODY {
                break;
            }
        }
        Some(buf.freeze())
    };
    tokio::time::timeout(limit, read).await.ok().flatten()
}

async fn handle(
    req: Request<Incoming>,
    router: Router,
    limits: ConnectionLimits,
    in_flight: InFlight,
) -> Response<Tracked> {
    let (parts, body) = req.into_parts();
    let response = match read_body(body, limits.body_timeout).await {
        Some(bytes) => match router
            .oneshot(Request::from_parts(parts, Body::from(bytes)))
            .await
        {
            Ok(r) => r,
            Err(never) => match never {},
        },
        None => {
            tracing::debug!(method = %parts.method, path = %parts.uri.path(), "request body timed out");
            body_timeout()
        }
    };
    response.map(|inner| Tracked {
        inner,
        _in_flight: in_flight,
    })
}

/// HTTP/1.1 on an established stream, under the header, body and idle timeouts.
async fn http<S>(
    stream: S,
    router: Router,
    limits: ConnectionLimits,
    mut stop: tokio::sync::watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let io = Watched {
        inner: stream,
        activity: activity.clone(),
    };
    let service = {
        let activity = activity.clone();
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let in_flight = activity.request();
            let router = router.clone();
            async move { Ok::<_, Infallible>(handle(req, router, limits, in_flight).await) }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // The header timeout is ours (hyper's would also cut idle
        // keep-alive connections at the header timeout).
        .header_read_timeout(None)
        .max_buf_size(limits.max_header_bytes.max(MIN_BUF))
        .max_header_size(limits.max_header_bytes);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    let mut conn = std::pin::pin!(conn);
    // Since when the connection is closing: the response in flight gets the
    // request timeout to finish, as kube-apiserver's shutdown gives its
    // in-flight requests (a client that never reads would hold it forever).
    let mut closing: Option<Instant> = None;
    loop {
        let deadline = match closing {
            Some(since) => Some((since + limits.body_timeout, true)),
            None => activity.deadline(&limits),
        };
        if let Some((at, close)) = deadline
            && at <= Instant::now()
        {
            if close {
                if closing.is_some() {
                    tracing::debug!(
                        "response unfinished at the request timeout after shutdown: closing the connection"
                    );
                } else {
                    tracing::debug!("request header timed out: closing the connection");
                }
                return;
            }
            closing = Some(Instant::now());
            conn.as_mut().graceful_shutdown();
            continue;
        }
        let sleep = async {
            match deadline {
                Some((at, _)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            done = conn.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            () = activity.changed.notified() => {}
            () = sleep => {}
            changed = stop.changed(), if closing.is_none() => {
                if changed.is_err() || *stop.borrow() {
                    // Between requests: close now; else once the
                    // response in flight is written.
                    if activity.in_flight.load(Ordering::Acquire) == 0 {
                        return;
                    }
                    closing = Some(Instant::now());
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}
