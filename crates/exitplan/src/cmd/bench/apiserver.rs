//! `exitplan bench apiserver`: the embedded API server's figures — durable
//! (or, `--in-memory`, in-memory) pod creates/s with 1 and 16 concurrent clients, LIST of 10,000 pods,
//! custom resource creates/s with a CEL-validated schema against the pods'
//! ([`super::apiserver_crd`]), creates/s under a ServiceAccount token bound
//! by RBAC and the latency one admission webhook adds
//! ([`super::apiserver_auth`]),
//! events/s delivered to 100 concurrent watchers (and whether each got every
//! event in order), RSS idle and with 10,000 pods, and GET latency on a real
//! TLS listener with 2,000 idle and 100 slow-header connections held
//! ([`super::connections`]).
//!
//! Clients are kube-rs clients on the server's router in the same process
//! (`kube::Client::new(router)`): every request goes through the whole REST
//! path — decoding, admission (defaulting, strategy, validation), durable
//! storage (each create acknowledged only after its commit is on disk),
//! encoding — without sockets or TLS.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use tower::ServiceExt;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;

use super::measure::{mib, peak_rss_kib, percentile, rss_kib, runtime};

/// Arguments of `exitplan bench apiserver`.
#[derive(Debug, Args)]
pub struct ApiserverArgs {
    /// Directory for the database (on the disk a server would use: a
    /// durable write costs an fsync there). Default: a fresh temporary
    /// directory, removed afterwards.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Pods to create with 16 clients (and then LIST).
    #[arg(long, default_value_t = 10_000)]
    pub pods: usize,
    /// Concurrent watchers for the fan-out figure.
    #[arg(long, default_value_t = 100)]
    pub watchers: usize,
    /// Events (pod creates) delivered to every watcher.
    #[arg(long, default_value_t = 2_000)]
    pub events: usize,
    /// Keep the store in memory (no commit reaches a disk): the server's
    /// ceiling without durability.
    #[arg(long)]
    pub in_memory: bool,
    /// The update-loop and Table-LIST figures.
    #[command(flatten)]
    pub memory: super::apiserver_memory::MemoryArgs,
    /// Idle TCP connections held open for the connection figure.
    #[arg(long, default_value_t = 2_000)]
    pub idle_connections: usize,
    /// Slow-header clients (TLS done, header never finished) held open for
    /// the connection figure.
    #[arg(long, default_value_t = 100)]
    pub slow_clients: usize,
}

/// A pod of about 1.5 KB of JSON, as a controller-created pod typically is.
pub(super) fn pod(namespace: &str, name: &str) -> Pod {
    let value = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "bench", "job-name": "bench",
                       "batch.kubernetes.io/controller-uid": "1f0e4a52-5c1b-4d2c-9a57-2f3b7c9d8e61"},
            "annotations": {"kubectl.kubernetes.io/default-container": "main"},
        },
        "spec": {
            "restartPolicy": "Never", "nodeName": "node-3", "terminationGracePeriodSeconds": 30,
            "containers": [{
                "name": "main", "image": "registry.example.com/team/worker:1.42.7",
                "command": ["/bin/worker"], "args": ["--queue=jobs", "--concurrency=4"],
                "env": [{"name": "QUEUE_URL", "value": "amqp://queue.default.svc:5672"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
                "imagePullPolicy": "IfNotPresent",
            }],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        },
    });
    // The literal above is a valid Pod; a failure here is a bug in this file.
    serde_json::from_value(value).unwrap_or_default()
}

/// `clients` tasks creating `total` pods in `namespace`; prints and returns creates/s.
async fn creates(
    client: &kube::Client,
    namespace: &str,
    clients: usize,
    total: usize,
) -> Result<f64> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    timed_creates("creates", &api, clients, total, |ns, i| {
        pod(ns, &format!("pod-{i:05}"))
    })
    .await
}

/// `clients` tasks creating `total` objects (`object(namespace, i)`) through
/// `api`; prints `<label>, N client(s): …/s` with latencies and returns
/// creates/s. Pods and custom resources are measured by this one loop.
pub(super) async fn timed_creates<K>(
    label: &str,
    api: &Api<K>,
    clients: usize,
    total: usize,
    object: fn(&str, usize) -> K,
) -> Result<f64>
where
    K: kube::Resource
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let per_client = total.div_ceil(clients);
    let namespace = api.namespace().unwrap_or_default().to_owned();
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let api = api.clone();
            let namespace = namespace.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_client);
                for i in (c * per_client)..((c + 1) * per_client).min(total) {
                    let t = Instant::now();
                    api.create(&PostParams::default(), &object(&namespace, i))
                        .await?;
                    latencies.push(t.elapsed());
                }
                Ok::<_, kube::Error>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(total);
    for t in tasks {
        latencies.extend(t.await??);
    }
    let elapsed = start.elapsed();
    latencies.sort();
    let rate = total as f64 / elapsed.as_secs_f64();
    println!(
        "{label}, {clients:>2} client(s): {rate:>7.0}/s   ({total} in {elapsed:.2?}; latency p50 {:.2?}, p99 {:.2?})",
        percentile(&latencies, 50),
        percentile(&latencies, 99),
    );
    Ok(rate)
}

/// Median of `runs` LISTs of `namespace`'s pods, as raw bytes from the router
/// (the server's work: read, filter, encode) and through kube-rs (plus the
/// client's decoding into typed pods).
async fn lists(
    server: &Server,
    client: &kube::Client,
    namespace: &str,
    expect: usize,
) -> Result<()> {
    const RUNS: usize = 10;
    let mut raw = Vec::with_capacity(RUNS);
    let mut bytes = 0;
    for _ in 0..RUNS {
        let request = axum::http::Request::get(format!("/api/v1/namespaces/{namespace}/pods"))
            .body(axum::body::Body::empty())?;
        let t = Instant::now();
        let response = server.router().oneshot(request).await?;
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
        raw.push(t.elapsed());
        bytes = body.len();
    }
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut typed = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let list = api.list(&ListParams::default()).await?;
        typed.push(t.elapsed());
        if list.items.len() != expect {
            bail!("LIST returned {} pods, expected {expect}", list.items.len());
        }
    }
    raw.sort();
    typed.sort();
    println!(
        "LIST of {expect} pods: {:.1?} median, {:.1?} max (server, {:.1} MB of JSON); {:.1?} median with kube-rs decoding",
        percentile(&raw, 50),
        raw.last().copied().unwrap_or_default(),
        bytes as f64 / 1e6,
        percentile(&typed, 50),
    );
    Ok(())
}

/// `watchers` watches from the current revision, then `events` pod creates by
/// 16 clients; prints deliveries/s and whether every watcher saw every event
/// in order.
async fn fan_out(client: &kube::Client, watchers: usize, events: usize) -> Result<()> {
    let namespace = "bench-watch";
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let from = api
        .list(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(watchers);
    let tasks: Vec<_> = (0..watchers)
        .map(|_| {
            let api = api.clone();
            let from = from.clone();
            let ready = ready_tx.clone();
            tokio::spawn(async move {
                let mut stream = api
                    .watch(&WatchParams::default().timeout(290), &from)
                    .await?
                    .boxed();
                let _ = ready.send(()).await;
                let mut seen = 0usize;
                let mut last: u64 = 0;
                let mut in_order = true;
                while seen < events {
                    match stream.next().await {
                        Some(Ok(WatchEvent::Added(p))) => {
                            let rv: u64 = p
                                .metadata
                                .resource_version
                                .as_deref()
                                .unwrap_or("0")
                                .parse()
                                .unwrap_or(0);
                            in_order &= rv > last;
                            last = rv;
                            seen += 1;
                        }
                        Some(Ok(_)) => {}
                        Some(Err(e)) => return Err(anyhow::Error::from(e)),
                        None => break,
                    }
                }
                Ok::<_, anyhow::Error>((seen, in_order))
            })
        })
        .collect();
    drop(ready_tx);
    for _ in 0..watchers {
        ready_rx.recv().await.context("a watcher failed to start")?;
    }
    let start = Instant::now();
    creates_quiet(client, namespace, 16, events).await?;
    let mut complete = 0;
    let mut ordered = 0;
    for t in tasks {
        let (seen, in_order) = t.await??;
        complete += usize::from(seen == events);
        ordered += usize::from(in_order && seen == events);
    }
    let elapsed = start.elapsed();
    println!(
        "watch fan-out: {watchers} watchers x {events} events in {elapsed:.2?} ({:.0} events/s delivered); \
         {complete}/{watchers} got every event, {ordered}/{watchers} in order",
        (watchers * events) as f64 / elapsed.as_secs_f64(),
    );
    Ok(())
}

async fn creates_quiet(
    client: &kube::Client,
    namespace: &str,
    clients: usize,
    total: usize,
) -> Result<()> {
    let per_client = total.div_ceil(clients);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
            let namespace = namespace.to_owned();
            tokio::spawn(async move {
                for i in (c * per_client)..((c + 1) * per_client).min(total) {
                    api.create(
                        &PostParams::default(),
                        &pod(&namespace, &format!("w-{i:05}")),
                    )
                    .await?;
                }
                Ok::<_, kube::Error>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(())
}

pub(super) async fn namespace(client: &kube::Client, name: &str) -> Result<()> {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    Ok(())
}

/// Median latency of a 4 KiB write + `fdatasync` in `dir`: the floor under
/// one durable commit on this disk.
fn fsync_latency(dir: &std::path::Path) -> Result<Duration> {
    use std::io::Write;
    let path = dir.join("fsync-probe");
    let mut file = std::fs::File::create(&path)?;
    let mut samples = Vec::with_capacity(50);
    for _ in 0..50 {
        let t = Instant::now();
        file.write_all(&[0u8; 4096])?;
        file.sync_data()?;
        samples.push(t.elapsed());
    }
    std::fs::remove_file(&path)?;
    samples.sort();
    Ok(percentile(&samples, 50))
}

/// Runs the benchmark and prints its figures.
pub fn run(args: ApiserverArgs) -> Result<ExitCode> {
    let (dir, temporary) = match args.data.clone() {
        Some(d) => (d, false),
        None => (
            std::env::temp_dir().join(format!("exitplan-bench-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = runtime()?.block_on(bench(&dir, &args));
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result.map(|()| ExitCode::SUCCESS)
}

async fn bench(dir: &std::path::Path, args: &ApiserverArgs) -> Result<()> {
    let profile = if cfg!(debug_assertions) {
        "debug build: figures are not meaningful, use --release"
    } else {
        "release build"
    };
    let store = if args.in_memory {
        println!("exitplan bench apiserver ({profile}; 2 tokio workers; in-memory store)");
        Store::in_memory()?
    } else {
        println!(
            "exitplan bench apiserver ({profile}; 2 tokio workers; durable store in {})",
            dir.display()
        );
        let fsync = fsync_latency(dir)?;
        println!(
            "disk: 4 KiB write + fdatasync {fsync:.2?} median (one client's durable creates are bounded by ~{:.0}/s)",
            1.0 / fsync.as_secs_f64().max(1e-9)
        );
        let db = dir.join("exitplan.redb");
        let _ = std::fs::remove_file(&db);
        Store::open(&db).with_context(|| format!("opening {}", db.display()))?
    };
    let server = Server::builder().store(store).build().await?;
    let client = kube::Client::new(server.router(), "default");
    println!("RSS idle (server started, empty store): {}", mib(rss_kib()));
    super::apiserver_memory::update_loop(&server, args.memory.update_loop).await?;

    namespace(&client, "bench-one").await?;
    namespace(&client, "bench-watch").await?;
    super::apiserver_crd::install(&client).await?;
    let one = creates(&client, "bench-one", 1, 1_000).await?;
    let before = server.store().stats();
    let sixteen = creates(&client, "default", 16, args.pods).await?;
    let after = server.store().stats();
    println!(
        "  group commit with 16 clients: {} commits for {} writes (mean batch {:.1})",
        after.commits - before.commits,
        after.writes - before.writes,
        (after.writes - before.writes) as f64 / (after.commits - before.commits).max(1) as f64
    );
    println!(
        "RSS with {} pods stored: {}",
        args.pods + 1_000,
        mib(rss_kib())
    );
    lists(&server, &client, "default", args.pods).await?;
    let pods = super::apiserver_crd::PodRates { one, sixteen };
    super::apiserver_crd::creates(&client, "bench-one", "default", args.pods, pods).await?;
    if let Err(e) = super::apiserver_auth::service_account(&server, &client, args.pods).await {
        println!("ServiceAccount creates: not measured: {e:#}");
    }
    if let Err(e) = super::apiserver_auth::webhook(&client, 500).await {
        println!("webhook latency: not measured: {e:#}");
    }
    fan_out(&client, args.watchers, args.events).await?;
    super::apiserver_memory::table_lists(&server, args.memory.table_pods, args.memory.table_lists)
        .await?;
    super::connections::held_connections(args.idle_connections, args.slow_clients).await?;
    println!("peak RSS: {}", mib(peak_rss_kib()));
    server.shutdown();
    Ok(())
}
