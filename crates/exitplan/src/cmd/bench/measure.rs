//! Measuring helpers shared by the benchmarks: resident memory, percentiles,
//! a multi-threaded runtime the size of the machine's budget, the in-process
//! API server.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_clock::SharedClock;
use exitplan_runtime::context::Context;

/// How the figures' header names the store [`in_process`] runs on `dir`.
pub fn storage_label(dir: Option<&Path>) -> String {
    match dir {
        Some(d) => format!("durable store in {}", d.display()),
        None => "in-memory store".to_owned(),
    }
}

/// An embedded API server — its store durable in `dir`, or in memory — with
/// a kube-rs client on its router and a runtime context on `clock`.
pub async fn in_process(
    dir: Option<&Path>,
    clock: SharedClock,
) -> anyhow::Result<(Server, kube::Client, Context)> {
    let store = match dir {
        Some(d) => {
            let db = d.join("exitplan.redb");
            Store::open(&db).with_context(|| format!("opening {}", db.display()))?
        }
        None => Store::in_memory()?,
    };
    let server = Server::builder()
        .store(store)
        .clock(clock.clone())
        .build()
        .await?;
    let client = kube::Client::new(server.router(), "default");
    let ctx = Context::new(client.clone(), clock);
    Ok((server, client, ctx))
}

/// The process's resident set size in KiB (`VmRSS`; 0 where /proc is absent).
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The peak resident set size in KiB (`VmHWM`).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The `p`-th percentile of sorted `samples` (zero when empty).
pub fn percentile(samples: &[Duration], p: usize) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// Formats KiB as MiB with one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// A multi-threaded tokio runtime with two workers (this machine's cores).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}
