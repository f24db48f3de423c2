//! `exitplan bench drain`: end-to-end evictions/s of the whole control loop,
//! in one process, on the real clock.
//!
//! An embedded API server (its store on disk in a fresh temporary directory,
//! as `exitplan up` runs it, or `--in-memory`), a kube-rs client on its router, and the runtime with
//! the evictionrequest-controller, the default imperative evictor, the
//! disruption controller, the garbage collector, the scheduler and `--nodes`
//! simulated nodes. `--pods` pods (no responders declared, so only the default
//! evictor acts; scripted to stop at once) are created, bound round-robin
//! (`--schedule`: placed by the scheduler instead), and left to run; then
//! one EvictionRequest per pod is created, all at once by concurrent clients,
//! and a watch on EvictionRequests times each one until it reports
//! `TargetEvicted=True`.
//!
//! Figures: evictions/s from the first EvictionRequest created to the last
//! one observed evicted, per-request latency (create call → observed
//! `TargetEvicted=True`), writes per eviction (store commits, and the
//! modifications the shared informers saw per kind), setup time, peak RSS.
//! A `result: key=value …` line repeats the counts for scripts and tests.
//! Exits 1 when the drain stalls (not every request `TargetEvicted=True`).
//! A progress line goes to stderr every second; `RUST_LOG=info` (or
//! `debug`) adds the components' logs.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;
use kube::api::{Api, PostParams};
use kube::runtime::watcher;
use serde_json::json;

use exitplan_clock::{SharedClock, SystemClock};
use exitplan_runtime::context::Context;
use exitplan_runtime::informer::Change;
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};

use super::measure::{in_process, mib, peak_rss_kib, percentile, rss_kib, runtime, storage_label};

/// The namespace of the pods and requests.
const NAMESPACE: &str = "default";
/// `spec.requester` of the requests.
const REQUESTER: &str = "bench.exitplan.io/drain";
/// Give up when nothing progresses for this long.
const STALL: Duration = Duration::from_secs(60);

/// Arguments of `exitplan bench drain`.
#[derive(Debug, Args)]
pub struct DrainArgs {
    /// Pods to create, then evict (one EvictionRequest each).
    #[arg(long, default_value_t = 10_000)]
    pub pods: usize,
    /// Simulated nodes (`node-1` … `node-N`) the scheduler spreads them over.
    #[arg(long, default_value_t = 100)]
    pub nodes: usize,
    /// Keep the store in memory instead of on disk (a fresh temporary
    /// directory; every write acknowledged after its commit is durable). The
    /// in-memory store's watch history is its in-memory event window.
    #[arg(long)]
    pub in_memory: bool,
    /// Concurrent client tasks creating the pods and the requests.
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// Add the evictionrequest-controller's work-queue depths to the
    /// progress line (encodes the metrics registry every second).
    #[arg(long)]
    pub queues: bool,
    /// Leave the pods unbound for the simulated scheduler to place (by
    /// default each is created bound, `spec.nodeName` round-robin: the
    /// scheduler looks at every pod per decision, so placing 10,000 takes
    /// minutes and is not what this measures).
    #[arg(long)]
    pub schedule: bool,
}

/// Informer modifications seen per kind during the drain (roughly the writes).
#[derive(Default)]
struct Seen {
    pods: AtomicUsize,
    evictions: AtomicUsize,
    requests: AtomicUsize,
}

impl Seen {
    fn reset(&self) {
        self.pods.store(0, Ordering::Relaxed);
        self.evictions.store(0, Ordering::Relaxed);
        self.requests.store(0, Ordering::Relaxed);
    }
}

fn counter<K>(n: &Arc<Seen>, pick: fn(&Seen) -> &AtomicUsize) -> impl Fn(&Change<K>) + use<K> {
    let n = n.clone();
    move |_| {
        pick(&n).fetch_add(1, Ordering::Relaxed);
    }
}

fn pod(index: usize, node: Option<String>) -> Result<Pod> {
    let mut pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("pod-{index:05}"), "namespace": NAMESPACE,
            "labels": {"app": "bench"},
            "annotations": {"sim.exitplan.io/stop": "0s"},
        },
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": "registry.example.com/bench:1"}],
        },
    }))?;
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = node;
    }
    Ok(pod)
}

fn request(index: usize, pod: &str, uid: &str) -> Result<EvictionRequest> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
        "metadata": {"name": format!("drain-{index:05}"), "namespace": NAMESPACE},
        "spec": {
            "target": {"pod": {"name": pod, "uid": uid}},
            "requester": REQUESTER,
            "intent": "Eviction",
        },
    }))?)
}

/// The index in a `drain-NNNNN` name.
fn index_of(name: &str) -> Option<usize> {
    name.strip_prefix("drain-")?.parse().ok()
}

fn target_evicted(r: &EvictionRequest) -> bool {
    r.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "TargetEvicted" && c.status == "True")
        })
}

/// `workqueue_depth` per queue, from the metrics registry.
fn queue_depths(ctx: &Context) -> String {
    ctx.metrics
        .encode()
        .lines()
        .filter_map(|l| l.strip_prefix("workqueue_depth{name=\""))
        .filter_map(|l| l.split_once("\"} "))
        .map(|(name, depth)| {
            let short = name
                .strip_prefix("evictionrequest_controller_")
                .unwrap_or(name);
            format!("{short}={depth}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn running(ctx: &Context) -> usize {
    ctx.informers
        .pods
        .list()
        .iter()
        .filter(|p| {
            p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                && p.metadata.deletion_timestamp.is_none()
        })
        .count()
}

/// Runs the benchmark and prints its figures.
pub fn run(args: DrainArgs) -> Result<ExitCode> {
    // Logs only when asked for (they cost throughput).
    if std::env::var_os("RUST_LOG").is_some() {
        crate::process::init_logging();
    }
    let dir = (!args.in_memory)
        .then(|| std::env::temp_dir().join(format!("exitplan-bench-drain-{}", std::process::id())));
    if let Some(d) = &dir {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let result = runtime()?.block_on(bench(dir.as_deref(), &args));
    if let Some(d) = &dir {
        let _ = std::fs::remove_dir_all(d);
    }
    result.map(|all_evicted| {
        if all_evicted {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    })
}

/// `clients` tasks creating `total` pods; the (name, uid) of each.
async fn create_pods(
    client: &kube::Client,
    clients: usize,
    total: usize,
    nodes: Option<usize>,
) -> Result<Vec<(String, String)>> {
    let per_client = total.div_ceil(clients.max(1));
    let tasks: Vec<_> = (0..clients.max(1))
        .map(|c| {
            let api: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
            tokio::spawn(async move {
                let mut out = Vec::with_capacity(per_client);
                for i in (c * per_client)..((c + 1) * per_client).min(total) {
                    let node = nodes.map(|n| format!("node-{}", i % n.max(1) + 1));
                    let created = api.create(&PostParams::default(), &pod(i, node)?).await?;
                    out.push((
                        i,
                        created.metadata.name.unwrap_or_default(),
                        created.metadata.uid.unwrap_or_default(),
                    ));
                }
                Ok::<_, anyhow::Error>(out)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(total);
    for t in tasks {
        all.extend(t.await??);
    }
    all.sort();
    Ok(all.into_iter().map(|(_, n, u)| (n, u)).collect())
}

/// Runs the drain; whether every request was observed `TargetEvicted=True`.
async fn bench(dir: Option<&std::path::Path>, args: &DrainArgs) -> Result<bool> {
    let profile = if cfg!(debug_assertions) {
        "debug build: figures are not meaningful, use --release"
    } else {
        "release build"
    };
    let storage = storage_label(dir);
    println!(
        "exitplan bench drain ({profile}; 2 tokio workers; {storage}; {} pods on {} nodes, {} clients)",
        args.pods, args.nodes, args.clients
    );
    let setup_start = Instant::now();
    let clock: SharedClock = Arc::new(SystemClock);
    let (server, client, ctx) = in_process(dir, clock).await?;
    let seen = Arc::new(Seen::default());
    ctx.informers.pods.on_change(counter(&seen, |s| &s.pods));
    ctx.informers
        .evictions
        .on_change(counter(&seen, |s| &s.evictions));
    ctx.informers
        .eviction_requests
        .on_change(counter(&seen, |s| &s.requests));
    let config = RuntimeConfig {
        components: [
            Component::EvictionRequest,
            Component::ImperativeEvictor,
            Component::Disruption,
            Component::GarbageCollector,
            Component::Scheduler,
        ]
        .into_iter()
        .collect(),
        nodes: (1..=args.nodes).map(|i| format!("node-{i}")).collect(),
        clients: None,
    };
    let rt = Runtime::start(ctx.clone(), config).await;

    // Setup: the pods, until every one is Running.
    let bind = (!args.schedule).then_some(args.nodes);
    let pods = create_pods(&client, args.clients, args.pods, bind).await?;
    eprintln!(
        "[setup {:>6.1?}] {} pods created",
        setup_start.elapsed(),
        pods.len()
    );
    let mut last_progress = (Instant::now(), 0usize);
    let mut last_line = Instant::now();
    loop {
        let n = running(&ctx);
        if n >= args.pods {
            break;
        }
        if n > last_progress.1 {
            last_progress = (Instant::now(), n);
        } else if last_progress.0.elapsed() > STALL {
            bail!(
                "only {n}/{} pods Running after {STALL:?} without progress",
                args.pods
            );
        }
        if last_line.elapsed() >= Duration::from_secs(1) {
            eprintln!(
                "[setup {:>6.1?}] {n}/{} pods Running",
                setup_start.elapsed(),
                args.pods
            );
            last_line = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let setup = setup_start.elapsed();
    println!(
        "setup: {} pods Running on {} nodes in {setup:.2?} (RSS {})",
        args.pods,
        args.nodes,
        mib(rss_kib())
    );

    // The observer: a watch on EvictionRequests (as a drain tool would).
    let evicted_at: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; args.pods]));
    let evicted = Arc::new(AtomicUsize::new(0));
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let watch = tokio::spawn({
        let api: Api<EvictionRequest> = Api::namespaced(client.clone(), NAMESPACE);
        let evicted_at = evicted_at.clone();
        let evicted = evicted.clone();
        async move {
            let mut ready = Some(ready_tx);
            let mut stream = watcher::watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                let r = match event {
                    Ok(watcher::Event::InitDone) => {
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                        continue;
                    }
                    Ok(watcher::Event::Apply(r) | watcher::Event::InitApply(r)) => r,
                    _ => continue,
                };
                if !target_evicted(&r) {
                    continue;
                }
                let Some(i) = r.metadata.name.as_deref().and_then(index_of) else {
                    continue;
                };
                if let Ok(mut at) = evicted_at.lock()
                    && let Some(slot) = at.get_mut(i)
                    && slot.is_none()
                {
                    *slot = Some(Instant::now());
                    evicted.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    });
    ready_rx
        .await
        .context("the EvictionRequest watch ended before it started")?;

    // The drain: one EvictionRequest per pod, all at once.
    let writes_before = server.store().stats();
    seen.reset();
    let created = Arc::new(AtomicUsize::new(0));
    let created_at: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; args.pods]));
    let pods = Arc::new(pods);
    let start = Instant::now();
    let clients = args.clients.max(1);
    let creators: Vec<_> = (0..clients)
        .map(|c| {
            let api: Api<EvictionRequest> = Api::namespaced(client.clone(), NAMESPACE);
            let pods = pods.clone();
            let created = created.clone();
            let created_at = created_at.clone();
            tokio::spawn(async move {
                // Interleaved, so the requests hit every node at once.
                for i in (c..pods.len()).step_by(clients) {
                    let (name, uid) = &pods[i];
                    let t = Instant::now();
                    api.create(&PostParams::default(), &request(i, name, uid)?)
                        .await?;
                    if let Ok(mut at) = created_at.lock() {
                        at[i] = Some(t);
                    }
                    created.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<_, anyhow::Error>(())
            })
        })
        .collect();

    let mut last_line = Instant::now();
    let mut last_count = 0usize;
    let mut last_progress = (Instant::now(), 0usize);
    let mut all_created: Option<Duration> = None;
    let stalled = loop {
        let done = evicted.load(Ordering::Relaxed);
        if done >= args.pods {
            break false;
        }
        let made = created.load(Ordering::Relaxed);
        if all_created.is_none() && made >= args.pods {
            all_created = Some(start.elapsed());
        }
        if done + made > last_progress.1 {
            last_progress = (Instant::now(), done + made);
        } else if last_progress.0.elapsed() > STALL {
            break true;
        }
        if last_line.elapsed() >= Duration::from_secs(1) {
            let rate = (done - last_count) as f64 / last_line.elapsed().as_secs_f64();
            let writes = server.store().stats().writes - writes_before.writes;
            let queues = if args.queues {
                format!("; queues {}", queue_depths(&ctx))
            } else {
                String::new()
            };
            eprintln!(
                "[drain {:>6.1?}] requests {made}/{n}, evicted {done}/{n} ({rate:.0}/s), pods left {}, store writes {writes}; \
                 seen pods {} evictions {} requests {}{queues}; RSS {}",
                start.elapsed(),
                ctx.informers.pods.list().len(),
                seen.pods.load(Ordering::Relaxed),
                seen.evictions.load(Ordering::Relaxed),
                seen.requests.load(Ordering::Relaxed),
                mib(rss_kib()),
                n = args.pods,
            );
            last_line = Instant::now();
            last_count = done;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for c in creators {
        c.await??;
    }
    let writes_after = server.store().stats();
    watch.abort();

    let created_at = created_at.lock().map(|v| v.clone()).unwrap_or_default();
    let evicted_at = evicted_at.lock().map(|v| v.clone()).unwrap_or_default();
    let mut latencies: Vec<Duration> = created_at
        .iter()
        .zip(&evicted_at)
        .filter_map(|(c, e)| Some(e.as_ref()?.saturating_duration_since(*c.as_ref()?)))
        .collect();
    latencies.sort();
    let last = evicted_at.iter().flatten().max().copied();
    let done = evicted_at.iter().flatten().count();
    let elapsed = last.map_or(start.elapsed(), |l| l.saturating_duration_since(start));
    if stalled {
        println!(
            "STALLED: {done}/{} requests TargetEvicted=True; nothing progressed for {STALL:?}",
            args.pods
        );
    }
    let writes = writes_after.writes - writes_before.writes;
    let commits = writes_after.commits - writes_before.commits;
    let per = |n: usize| n as f64 / done.max(1) as f64;
    println!(
        "drain: {done} evictions in {elapsed:.2?}: {:.0} evictions/s end to end \
         (first EvictionRequest created → last observed TargetEvicted=True; all {} created after {:.2?})",
        done as f64 / elapsed.as_secs_f64().max(1e-9),
        args.pods,
        all_created.unwrap_or(elapsed),
    );
    println!(
        "  per request (create call → observed TargetEvicted=True): p50 {:.2?}, p99 {:.2?}, max {:.2?}",
        percentile(&latencies, 50),
        percentile(&latencies, 99),
        latencies.last().copied().unwrap_or_default(),
    );
    println!(
        "  writes per eviction: {:.1} store writes ({:.1} per commit); informer modifications seen: \
         pods {:.1}, evictions {:.1}, eviction requests {:.1}",
        per(writes as usize),
        writes as f64 / commits.max(1) as f64,
        per(seen.pods.load(Ordering::Relaxed)),
        per(seen.evictions.load(Ordering::Relaxed)),
        per(seen.requests.load(Ordering::Relaxed)),
    );
    println!(
        "setup {setup:.2?}; RSS now {}, peak {}",
        mib(rss_kib()),
        mib(peak_rss_kib())
    );
    println!(
        "  result: pods={} nodes={} created={} evicted={done} stalled={} store_writes={writes} \
         store_commits={commits} seen_pods={} seen_evictions={} seen_requests={}",
        args.pods,
        args.nodes,
        created.load(Ordering::Relaxed),
        u8::from(stalled),
        seen.pods.load(Ordering::Relaxed),
        seen.evictions.load(Ordering::Relaxed),
        seen.requests.load(Ordering::Relaxed),
    );
    rt.shutdown().await;
    server.shutdown();
    Ok(!stalled && done == args.pods)
}
