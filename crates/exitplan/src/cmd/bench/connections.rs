//! `exitplan bench apiserver`'s connection figure: GET latency from new
//! clients while thousands of idle TCP connections and slow-header clients
//! are held open against a real listening TLS server (loopback only).
//!
//! Each held connection costs two file descriptors in this process (client
//! and server end); the soft `RLIMIT_NOFILE` is raised with `prlimit(1)` when
//! it is too low, else the counts are scaled down and the header says so.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_apiserver::tls::{LocalCa, local_names};

use super::measure::percentile;

const TOKEN: &str = "bench-connections";
/// GETs on fresh connections (TLS handshake included), then on one kept-alive connection.
const FRESH_GETS: usize = 200;
const KEPT_GETS: usize = 1_000;

/// The soft and hard open-file limits (`/proc/self/limits`).
fn nofile() -> Option<(u64, u64)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut fields = line["Max open files".len()..].split_whitespace();
    let parse = |f: Option<&str>| match f? {
        "unlimited" => Some(u64::MAX),
        n => n.parse().ok(),
    };
    Some((parse(fields.next())?, parse(fields.next())?))
}

/// Raises the soft open-file limit to at least `need` (up to the hard
/// limit) with `prlimit(1)`; the soft limit in force afterwards.
fn raise_nofile(need: u64) -> u64 {
    let Some((soft, hard)) = nofile() else {
        return need;
    };
    if soft >= need {
        return soft;
    }
    let target = need.min(hard);
    let _ = std::process::Command::new("prlimit")
        .arg("--pid")
        .arg(std::process::id().to_string())
        .arg(format!("--nofile={target}:"))
        .status();
    nofile().map_or(soft, |(s, _)| s)
}

struct Target {
    addr: std::net::SocketAddr,
    connector: TlsConnector,
}

impl Target {
    async fn tls(&self) -> Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let tcp = TcpStream::connect(self.addr).await?;
        tcp.set_nodelay(true)?;
        let name = ServerName::try_from("127.0.0.1")?;
        Ok(self.connector.connect(name, tcp).await?)
    }
}

fn get(close: bool) -> String {
    format!(
        "GET /api/v1/namespaces/default HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n{}\r\n",
        if close { "Connection: close\r\n" } else { "" }
    )
}

/// Reads one response; fails unless it is a 200.
async fn response<S: AsyncReadExt + Unpin>(s: &mut S) -> Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let (head_end, length) = loop {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            bail!("connection closed before a response");
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
            if !head.starts_with("http/1.1 200") {
                bail!(
                    "unexpected response: {}",
                    head.lines().next().unwrap_or_default()
                );
            }
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .context("no content-length")?;
            break (i + 4, length);
        }
    };
    while buf.len() < head_end + length {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            bail!("connection closed mid-body");
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

/// GET latencies: `FRESH_GETS` on new connections, `KEPT_GETS` on one.
async fn latencies(target: &Target) -> Result<(Vec<Duration>, Vec<Duration>)> {
    let mut fresh = Vec::with_capacity(FRESH_GETS);
    for _ in 0..FRESH_GETS {
        let t = Instant::now();
        let mut s = target.tls().await?;
        s.write_all(get(true).as_bytes()).await?;
        response(&mut s).await?;
        fresh.push(t.elapsed());
    }
    let mut kept = Vec::with_capacity(KEPT_GETS);
    let mut s = target.tls().await?;
    for _ in 0..KEPT_GETS {
        let t = Instant::now();
        s.write_all(get(false).as_bytes()).await?;
        response(&mut s).await?;
        kept.push(t.elapsed());
    }
    fresh.sort();
    kept.sort();
    Ok((fresh, kept))
}

fn line(label: &str, fresh: &[Duration], kept: &[Duration]) {
    println!(
        "  {label}: GET on a new TLS connection p50 {:.2?} p99 {:.2?} max {:.2?}; kept-alive p50 {:.2?} p99 {:.2?}",
        percentile(fresh, 50),
        percentile(fresh, 99),
        fresh.last().copied().unwrap_or_default(),
        percentile(kept, 50),
        percentile(kept, 99),
    );
}

/// Prints GET latency with no other clients, then with `idle` idle TCP
/// connections and `slow` slow-header clients held open.
pub async fn held_connections(idle: usize, slow: usize) -> Result<()> {
    let want = 2 * (idle + slow) as u64 + 256;
    let soft = raise_nofile(want);
    let (idle, slow) = if soft >= want {
        (idle, slow)
    } else {
        let room = (soft.saturating_sub(256) / 2) as usize;
        let scale = room as f64 / (idle + slow) as f64;
        println!(
            "connections: open-file limit {soft} < {want} needed: counts scaled down (raise `ulimit -n`)"
        );
        (
            (idle as f64 * scale) as usize,
            (slow as f64 * scale) as usize,
        )
    };
    let server = Server::builder()
        .store(Store::in_memory()?)
        .token(TOKEN)
        .build()
        .await?;
    let ca = LocalCa::generate(&local_names(None))?;
    let config = ca.server_config()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .serve_tls(listener, config, async {
                    let _ = stopped.await;
                })
                .await
        })
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca.ca_pem.as_bytes()) {
        roots.add(cert?)?;
    }
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let target = Target {
        addr,
        connector: TlsConnector::from(Arc::new(client)),
    };

    println!("connections (real TLS listener on {addr}, in-memory store):");
    let (fresh, kept) = latencies(&target).await?;
    line("no other clients", &fresh, &kept);

    let started = Instant::now();
    let mut held_idle = Vec::with_capacity(idle);
    for _ in 0..idle {
        held_idle.push(TcpStream::connect(addr).await?);
    }
    let mut held_slow = Vec::with_capacity(slow);
    for _ in 0..slow {
        let mut s = target.tls().await?;
        s.write_all(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await?;
        held_slow.push(s);
    }
    let opened = started.elapsed();
    let (fresh, kept) = latencies(&target).await?;
    let measured = started.elapsed();
    line(
        &format!("{idle} idle TCP + {slow} slow-header connections held"),
        &fresh,
        &kept,
    );
    // Still held (within the 32 s handshake and header timeouts)?
    let mut open = 0;
    let mut byte = [0u8; 1];
    for s in &mut held_slow {
        if tokio::time::timeout(Duration::from_millis(1), s.read(&mut byte))
            .await
            .is_err()
        {
            open += 1;
        }
    }
    println!(
        "  (held connections opened in {opened:.2?}; figures taken {:.2?} after the first; {open}/{slow} slow-header clients still open at the end)",
        measured - opened
    );
    drop(held_idle);
    drop(held_slow);
    let _ = stop.send(());
    serving.await??;
    server.shutdown();
    Ok(())
}
