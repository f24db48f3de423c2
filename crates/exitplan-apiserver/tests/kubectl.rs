//! The real `kubectl` (v1.32, on PATH) against the server over HTTPS with
//! the bearer token: apply, get (table and JSON), patch in three formats,
//! wait, delete, and drain of a node whose pods a PDB protects. The test
//! plays the kubelet: it deletes pods marked for deletion with grace 0.

mod support;

use std::time::Duration;

use futures_util::TryStreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams, WatchEvent, WatchParams};

use support::https::{Cluster, TOKEN};

const MANIFEST: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels: {app: web}
spec:
  containers:
  - name: main
    image: nginx:1
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn kubectl_apply_get_patch_wait_delete() {
    let c = Cluster::start("crud").await;
    let out = c.ok(&["get", "ns"], None).await;
    assert!(out.contains("kube-system"), "{out}");
    let out = c.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;
    assert!(out.contains("pod/web-0 created"), "{out}");
    assert!(
        out.contains("poddisruptionbudget.policy/web created"),
        "{out}"
    );
    let out = c.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;
    assert!(out.contains("pod/web-0 unchanged"), "{out}");

    let table = c.ok(&["get", "pods"], None).await;
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("web-0"), "{table}");
    let json: serde_json::Value =
        serde_json::from_str(&c.ok(&["get", "pod", "web-0", "-o", "json"], None).await)
            .expect("json");
    assert_eq!(json["metadata"]["labels"]["app"], "web");

    c.ok(
        &[
            "patch",
            "pod",
            "web-0",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"tier":"front"}}}"#,
        ],
        None,
    )
    .await;
    c.ok(
        &[
            "patch",
            "pod",
            "web-0",
            "--type",
            "json",
            "-p",
            r#"[{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}]"#,
        ],
        None,
    )
    .await;
    c.ok(
        &[
            "patch",
            "pod",
            "web-0",
            "--type",
            "strategic",
            "-p",
            r#"{"metadata":{"labels":{"track":"stable"}}}"#,
        ],
        None,
    )
    .await;
    let json: serde_json::Value =
        serde_json::from_str(&c.ok(&["get", "pod", "web-0", "-o", "json"], None).await)
            .expect("json");
    assert_eq!(json["metadata"]["labels"]["tier"], "front");
    assert_eq!(json["metadata"]["labels"]["track"], "stable");
    assert_eq!(json["metadata"]["annotations"]["a"], "b");

    // Play the kubelet: the pod becomes Ready; kubectl wait sees it.
    let pods: Api<Pod> = Api::default_namespaced(support::authed_client(&c.server, TOKEN));
    let waiter = c.kubectl(
        &[
            "wait",
            "--for=condition=Ready",
            "pod/web-0",
            "--timeout=30s",
        ],
        None,
    );
    let mark_ready = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut p = pods.get_status("web-0").await.expect("pod");
        p.status = Some(
            serde_json::from_value(serde_json::json!({
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}]
            }))
            .expect("status"),
        );
        pods.replace_status("web-0", &PostParams::default(), &p)
            .await
            .expect("status");
    };
    let (out, ()) = tokio::join!(waiter, mark_ready);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("condition met"));

    let out = c.ok(&["delete", "pdb", "web"], None).await;
    assert!(out.contains("deleted"), "{out}");
    let out = c.ok(&["delete", "pod", "web-0"], None).await;
    assert!(out.contains("pod \"web-0\" deleted"), "{out}");
    let out = c.kubectl(&["get", "pod", "web-0"], None).await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Error from server (NotFound): pods \"web-0\" not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.stop().await;
}

/// The kubelet's part of a graceful deletion: a pod marked for deletion is
/// removed with grace 0 (its node confirms).
async fn kubelet(pods: Api<Pod>) {
    let mut stream = Box::pin(
        pods.watch(&WatchParams::default().timeout(120), "0")
            .await
            .expect("watch"),
    );
    while let Ok(Some(event)) = stream.try_next().await {
        if let WatchEvent::Added(p) | WatchEvent::Modified(p) = event
            && p.metadata.deletion_timestamp.is_some()
        {
            let name = p.metadata.name.clone().unwrap_or_default();
            let _ = pods
                .delete(&name, &DeleteParams::default().grace_period(0))
                .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn kubectl_drain_waits_for_the_disruption_budget() {
    let c = Cluster::start("drain").await;
    let client = support::authed_client(&c.server, TOKEN);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    c.ok(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"),
    )
    .await;
    for name in ["web-0", "web-1"] {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "nginx:1"}]},
        }))
        .expect("pod");
        pods.create(&PostParams::default(), &pod)
            .await
            .expect("pod");
        let mut p = pods.get_status(name).await.expect("pod");
        p.status = Some(
            serde_json::from_value(serde_json::json!({
                "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]
            }))
            .expect("status"),
        );
        pods.replace_status(name, &PostParams::default(), &p)
            .await
            .expect("status");
    }
    c.ok(&["apply", "-f", "-"], Some(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 2\n  selector:\n    matchLabels: {app: web}\n",
    ))
    .await;
    let pdbs: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> =
        Api::default_namespaced(client.clone());
    let set_allowed =
        |allowed: i32| {
            let pdbs = pdbs.clone();
            async move {
                let mut pdb = pdbs.get_status("web").await.expect("pdb");
                pdb.status = Some(serde_json::from_value(serde_json::json!({
                "observedGeneration": pdb.metadata.generation, "disruptionsAllowed": allowed,
                "currentHealthy": 2, "desiredHealthy": 2 - allowed.min(2), "expectedPods": 2
            })).expect("status"));
                pdbs.replace_status("web", &PostParams::default(), &pdb)
                    .await
                    .expect("pdb status");
            }
        };
    set_allowed(0).await;
    let kubelet = tokio::spawn(kubelet(pods.clone()));
    let drain = c.kubectl(
        &[
            "drain",
            "n1",
            "--force",
            "--timeout=60s",
            "--grace-period=1",
        ],
        None,
    );
    // The budget blocks at first; once the drain has been refused, allow both.
    let unblock = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        set_allowed(2).await;
    };
    let (out, ()) = tokio::join!(drain, unblock);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "drain failed: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "the PDB blocked first: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("node/n1 cordoned"), "{stdout}");
    assert!(
        stdout.contains("pod/web-0 evicted") && stdout.contains("pod/web-1 evicted"),
        "{stdout}"
    );
    assert!(stdout.contains("node/n1 drained"), "{stdout}");
    assert!(pods.get("web-0").await.is_err());
    kubelet.abort();
    c.stop().await;
}

const JOB: &str = r#"
apiVersion: batch/v1
kind: Job
metadata:
  name: j2
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
"#;

/// An Event the Job controller writes through events.k8s.io/v1 shows in
/// `kubectl get events` (core/v1, OBJECT and MESSAGE filled) and in
/// `kubectl describe job` (a core/v1 list by `involvedObject.*` fields).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_events_k8s_io_events() {
    let c = Cluster::start("events").await;
    c.ok(&["apply", "-f", "-"], Some(JOB)).await;
    let job: serde_json::Value =
        serde_json::from_str(&c.ok(&["get", "job", "j2", "-o", "json"], None).await).expect("json");
    let client = support::authed_client(&c.server, TOKEN);
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::default_namespaced(client);
    let event = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "j2.1", "namespace": "default"},
        "eventTime": "2026-11-29T10:00:00.000000Z",
        "regarding": {"apiVersion": "batch/v1", "kind": "Job", "name": "j2", "namespace": "default",
                      "uid": job["metadata"]["uid"], "resourceVersion": job["metadata"]["resourceVersion"]},
        "note": "Created pod: j2-abcde",
        "reason": "SuccessfulCreate",
        "type": "Normal",
        "action": "Create",
        "reportingController": "job-controller",
        "reportingInstance": "job-controller-node-1"
    }))
    .expect("event");
    events
        .create(&PostParams::default(), &event)
        .await
        .expect("event");

    let table = c.ok(&["get", "events"], None).await;
    let row = table
        .lines()
        .find(|l| l.contains("SuccessfulCreate"))
        .unwrap_or_else(|| panic!("no event row: {table}"));
    assert!(row.contains("job/j2"), "OBJECT: {table}");
    assert!(row.contains("Created pod: j2-abcde"), "MESSAGE: {table}");
    let json: serde_json::Value = serde_json::from_str(
        &c.ok(&["get", "events.v1.", "j2.1", "-o", "json"], None)
            .await,
    )
    .expect("json");
    assert_eq!(json["apiVersion"], "v1");
    assert_eq!(json["involvedObject"]["name"], "j2");
    assert_eq!(json["message"], "Created pod: j2-abcde");
    assert!(json.get("note").is_none(), "{json}");

    let describe = c.ok(&["describe", "job", "j2"], None).await;
    let events_section = describe
        .split("Events:")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events section: {describe}"));
    assert!(
        events_section.contains("SuccessfulCreate")
            && events_section.contains("job-controller")
            && events_section.contains("Created pod: j2-abcde"),
        "{describe}"
    );
    c.stop().await;
}
