//! The memory figures of `exitplan bench apiserver`:
//!
//! * **update loop** — RSS while one pod's 100 KB annotation is merge-patched
//!   N times (each patch a new 100 KB version: the watch history, the
//!   watchers and the caches must not grow with update volume × object size);
//! * **Table LISTs** — the RSS rise while 1 (and then several concurrent)
//!   `Accept: application/json;as=Table` LISTs of many pods are read, and the
//!   latency of unrelated GETs meanwhile.
//!
//! Requests go straight to the server's router (no client decoding); RSS is
//! sampled every 5 ms by a thread of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use clap::Args;
use futures_util::StreamExt;
use tower::ServiceExt;

use exitplan_apiserver::server::Server;

use super::measure::{mib, percentile, rss_kib};

/// The memory figures' arguments.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// Merge patches of a 100 KB annotation on one pod for the update-loop
    /// figure (0: skip it).
    #[arg(long, default_value_t = 100_000)]
    pub update_loop: usize,
    /// Pods listed as a Table for the Table-LIST figure (0: skip it).
    #[arg(long, default_value_t = 20_000)]
    pub table_pods: usize,
    /// Most concurrent Table LISTs (measured with 1 and with this many).
    #[arg(long, default_value_t = 4)]
    pub table_lists: usize,
}

/// Samples the process's RSS until stopped; keeps the largest.
struct RssSampler {
    stop: Arc<AtomicBool>,
    max: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let max = Arc::new(AtomicU64::new(rss_kib()));
        let thread = {
            let (stop, max) = (stop.clone(), max.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    max.fetch_max(rss_kib(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        RssSampler {
            stop,
            max,
            thread: Some(thread),
        }
    }

    /// Stops sampling; the largest RSS seen, in KiB.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.max.load(Ordering::Relaxed).max(rss_kib())
    }
}

/// Sends `request` to the router; reads the body in chunks as a client
/// would, keeping only its length.
async fn send(server: &Server, request: Request<Body>) -> Result<(StatusCode, usize)> {
    let response = server.router().oneshot(request).await?;
    let status = response.status();
    let mut body = response.into_body().into_data_stream();
    let mut len = 0;
    while let Some(chunk) = body.next().await {
        len += chunk?.len();
    }
    Ok((status, len))
}

fn pod_json(namespace: &str, name: &str) -> String {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "registry.example.com/worker:1"}]},
    })
    .to_string()
}

async fn create(server: &Server, namespace: &str, name: &str) -> Result<()> {
    let request = Request::post(format!("/api/v1/namespaces/{namespace}/pods"))
        .header("content-type", "application/json")
        .body(Body::from(pod_json(namespace, name)))?;
    let (status, _) = send(server, request).await?;
    if status != StatusCode::CREATED {
        bail!("creating pod {namespace}/{name}: {status}");
    }
    Ok(())
}

async fn namespace(server: &Server, name: &str) -> Result<()> {
    let request = Request::post("/api/v1/namespaces")
        .header("content-type", "application/json")
        .body(Body::from(
            serde_json::json!({"metadata": {"name": name}}).to_string(),
        ))?;
    let (status, _) = send(server, request).await?;
    if status != StatusCode::CREATED {
        bail!("creating namespace {name}: {status}");
    }
    Ok(())
}

/// The update-loop figure: `n` merge patches, one after the other, each
/// writing a new 100 KB annotation on one pod.
pub async fn update_loop(server: &Server, n: usize) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let ns = "bench-update";
    namespace(server, ns).await?;
    create(server, ns, "big").await?;
    let before = rss_kib();
    let sampler = RssSampler::start();
    let start = Instant::now();
    let filler = "x".repeat(100_000);
    for i in 0..n {
        let patch = format!(r#"{{"metadata":{{"annotations":{{"blob":"{i:08}{filler}"}}}}}}"#);
        let request = Request::patch(format!("/api/v1/namespaces/{ns}/pods/big"))
            .header("content-type", "application/merge-patch+json")
            .body(Body::from(patch))?;
        let (status, _) = send(server, request).await?;
        if status != StatusCode::OK {
            bail!("patch {i}: {status}");
        }
    }
    let elapsed = start.elapsed();
    let peak = sampler.stop();
    println!(
        "update loop: {n} merge patches of a 100 KB annotation on one pod in {elapsed:.1?} ({:.0}/s); \
         RSS {} before, {} peak, {} after (target < 300 MB)",
        n as f64 / elapsed.as_secs_f64(),
        mib(before),
        mib(peak),
        mib(rss_kib()),
    );
    Ok(())
}

/// The Table-LIST figure: `pods` pods, then 1 and `concurrency` concurrent
/// Table LISTs of them while a client GETs one pod in a loop.
pub async fn table_lists(server: &Server, pods: usize, concurrency: usize) -> Result<()> {
    if pods == 0 {
        return Ok(());
    }
    let ns = "bench-table";
    namespace(server, ns).await?;
    let clients = 16;
    let per_client = pods.div_ceil(clients);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let server = server.clone();
            tokio::spawn(async move {
                for i in (c * per_client)..((c + 1) * per_client).min(pods) {
                    create(&server, ns, &format!("t-{i:05}")).await?;
                }
                Ok::<_, anyhow::Error>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    let mut rounds = vec![1];
    if concurrency > 1 {
        rounds.push(concurrency);
    }
    for lists in rounds {
        let before = rss_kib();
        let sampler = RssSampler::start();
        let stop = Arc::new(AtomicBool::new(false));
        let getter = {
            let (server, stop) = (server.clone(), stop.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let request = Request::get(format!("/api/v1/namespaces/{ns}/pods/t-00000"))
                        .body(Body::empty())?;
                    let t = Instant::now();
                    let (status, _) = send(&server, request).await?;
                    latencies.push(t.elapsed());
                    if status != StatusCode::OK {
                        bail!("GET: {status}");
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                Ok(latencies)
            })
        };
        let start = Instant::now();
        let listers: Vec<_> = (0..lists)
            .map(|_| {
                let server = server.clone();
                tokio::spawn(async move {
                    let request = Request::get(format!("/api/v1/namespaces/{ns}/pods"))
                        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                        .body(Body::empty())?;
                    let t = Instant::now();
                    let (status, len) = send(&server, request).await?;
                    if status != StatusCode::OK {
                        bail!("Table LIST: {status}");
                    }
                    Ok((t.elapsed(), len))
                })
            })
            .collect();
        let mut each = Vec::new();
        let mut bytes = 0;
        for l in listers {
            let (took, len) = l.await??;
            each.push(took);
            bytes = len;
        }
        let elapsed = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        let mut latencies = getter.await??;
        let peak = sampler.stop();
        latencies.sort();
        each.sort();
        let rise = peak.saturating_sub(before);
        println!(
            "Table LIST of {pods} pods x{lists} concurrent ({:.1} MB each): {elapsed:.2?} in all, \
             slowest {:.2?}; RSS +{} (+{} per LIST; target +100 MB); unrelated GETs meanwhile: \
             p50 {:.2?}, p99 {:.2?}, max {:.2?} over {} (target p99 < 50 ms)",
            bytes as f64 / 1e6,
            each.last().copied().unwrap_or_default(),
            mib(rise),
            mib(rise / lists as u64),
            percentile(&latencies, 50),
            percentile(&latencies, 99),
            latencies.last().copied().unwrap_or_default(),
            latencies.len(),
        );
    }
    Ok(())
}
