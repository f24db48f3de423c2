//! Storage figures: durable creates/s with 1 and 16 writers, list of 10,000
//! objects (current and historical), RSS of a store holding 10,000 objects,
//! and watch fan-out. Prints figures; asserts nothing.
//!
//! ```text
//! cargo run --release -p exitplan-apiserver --example storage_bench [-- DIR]
//! ```
//!
//! `DIR` (default: the system temp dir) should be on the disk the server
//! would use: durable writes cost an fsync there.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use exitplan_apiserver::storage::{Attrs, Key, Precondition, Prefix, Store, StoreConfig};
use serde_json::{Value, json};

const OBJECTS: usize = 10_000;

/// A pod of about 2 KB of JSON, as a controller-created pod typically is.
fn pod(name: &str) -> (Value, Attrs) {
    let labels = json!({
        "app.kubernetes.io/name": "bench", "app.kubernetes.io/instance": "bench-7f9c",
        "batch.kubernetes.io/job-name": "bench", "batch.kubernetes.io/controller-uid": "1f0e4a52-5c1b-4d2c-9a57-2f3b7c9d8e61",
        "controller-uid": "1f0e4a52-5c1b-4d2c-9a57-2f3b7c9d8e61", "job-name": "bench",
    });
    let value = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "default", "uid": format!("8d5c7e1a-0b4f-4f7e-9a1d-{name:0>12}"),
            "creationTimestamp": "2026-11-29T10:00:00Z", "labels": labels,
            "annotations": {"kubectl.kubernetes.io/default-container": "main"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "bench",
                "uid": "1f0e4a52-5c1b-4d2c-9a57-2f3b7c9d8e61", "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "restartPolicy": "Never", "nodeName": "node-3", "schedulerName": "default-scheduler",
            "terminationGracePeriodSeconds": 30, "serviceAccountName": "default",
            "containers": [{
                "name": "main", "image": "registry.example.com/team/worker:1.42.7",
                "command": ["/bin/worker"], "args": ["--queue=jobs", "--concurrency=4", "--verbose"],
                "env": [{"name": "QUEUE_URL", "value": "amqp://queue.default.svc:5672"},
                        {"name": "LOG_LEVEL", "value": "info"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.0.3", "podIP": "10.244.3.17", "qosClass": "Burstable",
            "startTime": "2026-11-29T10:00:01Z",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-29T10:00:01Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-29T10:00:04Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-29T10:00:04Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-29T10:00:00Z"}],
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.example.com/team/worker:1.42.7",
                "imageID": "registry.example.com/team/worker@sha256:4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                "containerID": "containerd://4f0d6e2b9c1a7e5d3b8f6a2c4e1d9b7a5c3e8f1d2b4a6c8e0f9d7b5a3c1e2d4f",
                "state": {"running": {"startedAt": "2026-11-29T10:00:03Z"}}}],
        },
    });
    let attrs = Attrs {
        labels: value["metadata"]["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect()
            })
            .unwrap_or_default(),
        fields: [
            ("metadata.name", name),
            ("metadata.namespace", "default"),
            ("spec.nodeName", "node-3"),
            ("status.phase", "Running"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
    };
    (value, attrs)
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn fresh(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("exitplan-bench-{}-{name}.redb", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// `writers` tasks creating `per_writer` pods each; returns creates/s.
async fn creates(store: &Store, writers: usize, per_writer: usize, tag: &str) -> f64 {
    let start = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            let tag = tag.to_owned();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_writer);
                for i in 0..per_writer {
                    let name = format!("{tag}-{w}-{i}");
                    let (value, attrs) = pod(&name);
                    let t = Instant::now();
                    store
                        .put(
                            Key::new("pods", "default", &name),
                            value,
                            attrs,
                            Precondition::Absent,
                        )
                        .await
                        .expect("create");
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.expect("writer"));
    }
    let elapsed = start.elapsed();
    latencies.sort();
    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    let rate = (writers * per_writer) as f64 / elapsed.as_secs_f64();
    println!(
        "creates, {writers:>2} writer(s): {rate:>7.0}/s  ({} in {:.2?}; latency p50 {:.2?} p99 {:.2?})",
        writers * per_writer,
        elapsed,
        pct(50),
        pct(99)
    );
    rate
}

/// Median latency of a 4 KiB write + `fdatasync` in `dir`: the floor under a
/// durable commit on this disk.
fn fsync_latency(dir: &Path) -> Duration {
    let path = fresh(dir, "fsync");
    let mut file = std::fs::File::create(&path).expect("probe file");
    let mut samples: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            std::io::Write::write_all(&mut file, &[0u8; 4096]).expect("write");
            file.sync_data().expect("fdatasync");
            t.elapsed()
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(runs: u32, mut f: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(f());
    }
    start.elapsed() / runs
}

/// Child mode: open the store at `path` and report RSS before and after.
fn rss_child(path: &Path) {
    let before = rss_kib();
    let store = Store::open(path).expect("open");
    let after = rss_kib();
    let (items, _) = store.list(&Prefix::new("pods", None));
    println!(
        "RSS, store of {} pods recovered in a fresh process: {} KiB ({} KiB before opening; +{} KiB)",
        items.len(),
        after,
        before,
        after.saturating_sub(before)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, path] = args.as_slice()
        && flag == "--rss"
    {
        rss_child(Path::new(path));
        return;
    }
    let dir = args
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let (sample, _) = pod("bench-0-00000");
    println!(
        "pod JSON: {} bytes; dir: {}",
        serde_json::to_vec(&sample).expect("json").len(),
        dir.display()
    );

    // Durable creates.
    let fsync = fsync_latency(&dir);
    println!(
        "disk: 4 KiB write + fdatasync median {fsync:.2?} (so at most {:.0} commits/s)",
        1.0 / fsync.as_secs_f64()
    );
    let path = fresh(&dir, "creates");
    {
        let store = Store::open(&path).expect("open");
        creates(&store, 1, 500, "one").await;
        let before = store.stats();
        creates(&store, 16, 625, "many").await;
        let after = store.stats();
        println!(
            "  16 writers: {} commits for {} writes (mean batch {:.1})",
            after.commits - before.commits,
            after.writes - before.writes,
            (after.writes - before.writes) as f64 / (after.commits - before.commits).max(1) as f64
        );
        println!(
            "disk: 4 KiB write + fdatasync median {:.2?} after the runs",
            fsync_latency(&dir)
        );
    }
    let _ = std::fs::remove_file(&path);

    // A store of 10,000 pods: lists, RSS, watch fan-out.
    let path = fresh(&dir, "list");
    let baseline = rss_kib();
    let store = Store::open_with(&path, StoreConfig::default()).expect("open");
    for chunk in 0..OBJECTS / 500 {
        let puts = (0..500).map(|i| {
            let name = format!("pod-{:05}", chunk * 500 + i);
            let (value, attrs) = pod(&name);
            store.put(
                Key::new("pods", "default", &name),
                value,
                attrs,
                Precondition::Absent,
            )
        });
        for r in futures_util::future::join_all(puts).await {
            r.expect("create");
        }
    }
    println!(
        "RSS, after writing {OBJECTS} pods in this process: {} KiB (+{} KiB over {} KiB baseline)",
        rss_kib(),
        rss_kib().saturating_sub(baseline),
        baseline
    );
    let prefix = Prefix::new("pods", Some("default"));
    let created = store.revision();
    println!(
        "list of {OBJECTS} (current):            {:>9.2?}",
        time(50, || store.list(&prefix))
    );
    println!(
        "list_at current revision:             {:>9.2?}",
        time(50, || store.list_at(&prefix, created).expect("list_at"))
    );
    // 1,000 updates, then rewind them.
    for i in 0..1000 {
        let name = format!("pod-{:05}", i * 7);
        let (mut value, attrs) = pod(&name);
        value["status"]["phase"] = json!("Succeeded");
        store
            .put(
                Key::new("pods", "default", &name),
                value,
                attrs,
                Precondition::Exists,
            )
            .await
            .expect("update");
    }
    println!(
        "list_at 1,000 revisions back (memory): {:>9.2?}",
        time(20, || store.list_at(&prefix, created).expect("list_at"))
    );
    let paged = time(10, || {
        let mut next = None;
        let mut n = 0;
        loop {
            let page = store
                .list_page(&prefix, created, next.as_ref(), 500)
                .expect("page");
            n += page.items.len();
            match page.next {
                Some(k) => next = Some(k),
                None => break n,
            }
        }
    });
    println!("  same, in pages of 500 (all 20 pages): {paged:>9.2?}");
    drop(store);
    let store = Store::open(&path).expect("reopen");
    println!(
        "list_at 1,000 revisions back (disk):  {:>9.2?}",
        time(5, || store.list_at(&prefix, created).expect("list_at"))
    );

    // Watch fan-out: 100 watchers, 2,000 updates.
    let watchers = 100;
    let updates = 2000;
    let from = store.revision();
    let tasks: Vec<_> = (0..watchers)
        .map(|_| {
            let mut w = store
                .watch(Prefix::new("pods", None), Some(from))
                .expect("watch");
            tokio::spawn(async move {
                for _ in 0..updates {
                    w.next().await.expect("event");
                }
            })
        })
        .collect();
    let start = Instant::now();
    let puts = (0..updates).map(|i| {
        let name = format!("pod-{:05}", i);
        let (value, attrs) = pod(&name);
        store.put(
            Key::new("pods", "default", &name),
            value,
            attrs,
            Precondition::None,
        )
    });
    for r in futures_util::future::join_all(puts).await {
        r.expect("update");
    }
    for t in tasks {
        t.await.expect("watcher");
    }
    let elapsed = start.elapsed();
    println!(
        "watch fan-out: {watchers} watchers x {updates} events in {elapsed:.2?} ({:.0} deliveries/s)",
        (watchers * updates) as f64 / elapsed.as_secs_f64()
    );
    drop(store);

    // RSS of a freshly recovered store, in a process of its own.
    if let Ok(exe) = std::env::current_exe() {
        match std::process::Command::new(exe)
            .arg("--rss")
            .arg(&path)
            .output()
        {
            Ok(out) => print!("{}", String::from_utf8_lossy(&out.stdout)),
            Err(e) => println!("RSS child failed: {e}"),
        }
    }
    let _ = std::fs::remove_file(&path);
}
