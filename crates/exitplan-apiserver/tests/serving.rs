//! Serving over real sockets: clients that open connections and send
//! nothing, or send their header or body slowly, delay no other client and
//! are cut off at the configured timeouts; watches are never cut; the
//! connection bound holds new clients back until a slot frees.
//!
//! The timeouts are set short here through the builder; every wait in these
//! tests is a generous safety bound on an outcome, not a speed assertion.

use std::sync::Arc;
use std::time::Duration;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::serving::ConnectionLimits;
use exitplan_apiserver::storage::Store;
use exitplan_apiserver::tls::{LocalCa, local_names};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

const TOKEN: &str = "serving-test-token";
/// Upper bound on any wait that should end (far above every timeout used).
const SAFETY: Duration = Duration::from_secs(30);

struct Served {
    addr: std::net::SocketAddr,
    connector: TlsConnector,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Served {
    async fn start(limits: ConnectionLimits) -> Served {
        let server = Server::builder()
            .store(Store::in_memory().expect("store"))
            .token(TOKEN)
            .connection_limits(limits)
            .build()
            .await
            .expect("server");
        let ca = LocalCa::generate(&local_names(None)).expect("ca");
        let config = ca.server_config().expect("tls");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            server
                .serve_tls(listener, config, async {
                    let _ = rx.await;
                })
                .await
        });
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca.ca_pem.as_bytes()) {
            roots.add(cert.expect("ca pem")).expect("root");
        }
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        Served {
            addr,
            connector: TlsConnector::from(Arc::new(client)),
            stop: Some(tx),
            serving: Some(serving),
        }
    }

    /// A TCP connection that sends nothing.
    async fn idle(&self) -> TcpStream {
        TcpStream::connect(self.addr).await.expect("connect")
    }

    /// A connection with its TLS handshake done.
    async fn tls(&self) -> TlsStream<TcpStream> {
        let tcp = TcpStream::connect(self.addr).await.expect("connect");
        let name = ServerName::try_from("127.0.0.1").expect("name");
        tokio::time::timeout(SAFETY, self.connector.connect(name, tcp))
            .await
            .expect("handshake in time")
            .expect("handshake")
    }

    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(serving) = self.serving.take() {
            let _ = tokio::time::timeout(SAFETY, serving).await;
        }
    }
}

/// Long timeouts, so that nothing is cut while a test holds connections.
fn patient() -> ConnectionLimits {
    ConnectionLimits {
        handshake_timeout: Duration::from_secs(600),
        header_timeout: Duration::from_secs(600),
        body_timeout: Duration::from_secs(600),
        idle_timeout: Duration::from_secs(600),
        ..ConnectionLimits::default()
    }
}

fn get(path: &str, close: bool) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n{}\r\n",
        if close { "Connection: close\r\n" } else { "" }
    )
}

/// One response's status line and body, read up to its `Content-Length`.
async fn response<S: AsyncRead + Unpin>(s: &mut S) -> (String, String) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).await.expect("read");
        assert!(n > 0, "connection closed mid-header: {buf:?}");
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().expect("length"))
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).await.expect("body");
    let status = head.lines().next().unwrap_or_default().to_owned();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// A GET on a new TLS connection.
async fn fresh_get(served: &Served, path: &str) -> (String, String) {
    let mut s = served.tls().await;
    s.write_all(get(path, true).as_bytes()).await.expect("send");
    response(&mut s).await
}

/// Whether the server closed `s` (EOF or reset) within `wait`.
async fn closed_within<S: AsyncRead + Unpin>(s: &mut S, wait: Duration) -> bool {
    let mut buf = [0u8; 256];
    loop {
        match tokio::time::timeout(wait, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_header_connections_do_not_delay_a_new_client() {
    let served = Served::start(patient()).await;
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(served.idle().await);
    }
    let mut slow = Vec::new();
    for _ in 0..10 {
        let mut s = served.tls().await;
        s.write_all(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127")
            .await
            .expect("partial header");
        slow.push(s);
    }
    let (status, body) = tokio::time::timeout(SAFETY, fresh_get(&served, "/api/v1/namespaces"))
        .await
        .expect("served while idle connections are held");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(body.contains("\"kube-system\""), "{body}");
    // They were all still open: the client was served beside them.
    for s in &mut idle {
        assert!(!closed_within(s, Duration::from_millis(10)).await);
    }
    for s in &mut slow {
        assert!(!closed_within(s, Duration::from_millis(10)).await);
    }
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_after_the_handshake_timeout() {
    let served = Served::start(ConnectionLimits {
        handshake_timeout: Duration::from_millis(500),
        ..patient()
    })
    .await;
    let mut silent = served.idle().await;
    assert!(closed_within(&mut silent, SAFETY).await);
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_are_cut_off_after_the_header_timeout() {
    let served = Served::start(ConnectionLimits {
        header_timeout: Duration::from_millis(500),
        ..patient()
    })
    .await;
    // Nothing sent after the handshake.
    let mut quiet = served.tls().await;
    // Part of a header, then nothing.
    let mut slow = served.tls().await;
    slow.write_all(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127")
        .await
        .expect("partial header");
    assert!(closed_within(&mut slow, SAFETY).await);
    assert!(closed_within(&mut quiet, SAFETY).await);
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_waits_for_its_next_request_until_the_idle_timeout() {
    let served = Served::start(ConnectionLimits {
        header_timeout: Duration::from_millis(300),
        ..patient()
    })
    .await;
    let mut s = served.tls().await;
    s.write_all(get("/api/v1/namespaces/default", false).as_bytes())
        .await
        .expect("send");
    assert_eq!(response(&mut s).await.0, "HTTP/1.1 200 OK");
    // Idle far beyond the header timeout: the idle timeout applies.
    assert!(!closed_within(&mut s, Duration::from_millis(1500)).await);
    s.write_all(get("/api/v1/namespaces/default", false).as_bytes())
        .await
        .expect("send");
    assert_eq!(response(&mut s).await.0, "HTTP/1.1 200 OK");
    served.stop().await;

    let served = Served::start(ConnectionLimits {
        idle_timeout: Duration::from_millis(300),
        ..patient()
    })
    .await;
    let mut s = served.tls().await;
    s.write_all(get("/api/v1/namespaces/default", false).as_bytes())
        .await
        .expect("send");
    assert_eq!(response(&mut s).await.0, "HTTP/1.1 200 OK");
    assert!(closed_within(&mut s, SAFETY).await);
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_is_answered_504_and_the_connection_closed() {
    let served = Served::start(ConnectionLimits {
        body_timeout: Duration::from_millis(500),
        ..patient()
    })
    .await;
    let mut s = served.tls().await;
    s.write_all(
        format!(
            "POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{{\"apiVersion\""
        )
        .as_bytes(),
    )
    .await
    .expect("send");
    let (status, body) = tokio::time::timeout(SAFETY, response(&mut s))
        .await
        .expect("answered");
    assert_eq!(status, "HTTP/1.1 504 Gateway Timeout");
    let status: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(status["code"], 504);
    assert_eq!(
        status["message"],
        "Timeout: request did not complete within the allotted timeout"
    );
    assert!(closed_within(&mut s, SAFETY).await);
    // Nothing was created.
    let (_, list) = fresh_get(&served, "/api/v1/namespaces").await;
    let list: serde_json::Value = serde_json::from_str(&list).expect("json");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(4));
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_outlives_every_timeout() {
    let short = Duration::from_millis(200);
    let served = Served::start(ConnectionLimits {
        handshake_timeout: short,
        header_timeout: short,
        body_timeout: short,
        idle_timeout: short,
        ..ConnectionLimits::default()
    })
    .await;
    let mut watch = served.tls().await;
    watch
        .write_all(get("/api/v1/namespaces?watch=1&timeoutSeconds=60", false).as_bytes())
        .await
        .expect("send");
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    // The four system namespaces arrive as ADDED events at once.
    while seen.matches("\"ADDED\"").count() < 4 {
        let n = watch.read(&mut buf).await.expect("read");
        assert!(n > 0, "watch closed: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    // Well past every timeout, a new namespace still reaches the watch.
    tokio::time::sleep(short * 5).await;
    let mut s = served.tls().await;
    let body = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"late"}}"#;
    s.write_all(
        format!(
            "POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .expect("send");
    assert_eq!(response(&mut s).await.0, "HTTP/1.1 201 Created");
    while !seen.contains("\"late\"") {
        let n = tokio::time::timeout(SAFETY, watch.read(&mut buf))
            .await
            .expect("event in time")
            .expect("read");
        assert!(n > 0, "watch closed: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_header_is_refused_431() {
    let served = Served::start(ConnectionLimits {
        max_header_bytes: 16 * 1024,
        ..patient()
    })
    .await;
    let mut s = served.tls().await;
    let big = "x".repeat(32 * 1024);
    let request =
        format!("GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {big}\r\n\r\n");
    // The server may answer and close before reading all of it.
    let _ = s.write_all(request.as_bytes()).await;
    let (status, _) = tokio::time::timeout(SAFETY, response(&mut s))
        .await
        .expect("answered");
    assert_eq!(status, "HTTP/1.1 431 Request Header Fields Too Large");
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_bound_a_new_client_waits_for_a_free_slot() {
    let served = Served::start(ConnectionLimits {
        max_connections: 2,
        ..patient()
    })
    .await;
    let first = served.idle().await;
    let _second = served.idle().await;
    // The kernel accepts the third connection, the server does not take it
    // up: its handshake does not complete while both slots are held.
    let tcp = TcpStream::connect(served.addr).await.expect("connect");
    let name = ServerName::try_from("127.0.0.1").expect("name");
    let connector = served.connector.clone();
    let mut third = tokio::spawn(async move { connector.connect(name, tcp).await });
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut third)
            .await
            .is_err(),
        "served beyond the bound"
    );
    drop(first);
    let mut tls = tokio::time::timeout(SAFETY, third)
        .await
        .expect("served once a slot is free")
        .expect("join")
        .expect("handshake");
    tls.write_all(get("/api/v1/namespaces/default", true).as_bytes())
        .await
        .expect("send");
    assert_eq!(response(&mut tls).await.0, "HTTP/1.1 200 OK");
    served.stop().await;
}
