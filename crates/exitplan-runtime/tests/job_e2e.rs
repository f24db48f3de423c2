//! The Job controller end to end, in virtual time, with every component
//! (evictionrequest-controller, imperative evictor, disruption controller,
//! GC, scheduler, Job controller) and two simulated nodes. Nothing plays the
//! kubelet: pods run as their `sim.exitplan.io/*` annotations script them
//! (from the Job's pod template; a test that needs one pod to behave
//! differently patches that pod's annotations while it runs, which the
//! simulated kubelet reads on its next sync). Job-failure spec §2, §3, §11.

mod support;

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use exitplan_runtime::runtime::Component;
use support::{Cluster, eventually};

const LIMIT: Duration = Duration::from_secs(40 * 60);
const ALL: &[Component] = &[
    Component::EvictionRequest,
    Component::ImperativeEvictor,
    Component::Disruption,
    Component::GarbageCollector,
    Component::Scheduler,
    Component::Job,
];

/// All components and two simulated nodes, once both nodes are Ready (so
/// the scheduler spreads a Job's pods over both, deterministically).
async fn start() -> Cluster {
    let c = Cluster::start(ALL, &["node-1", "node-2"]).await;
    eventually("both nodes Ready", LIMIT, || async {
        let nodes = c
            .cluster_api::<Node>()
            .list(&ListParams::default())
            .await
            .ok()?;
        let ready = nodes
            .items
            .iter()
            .filter(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
            })
            .count();
        (ready == 2).then_some(())
    })
    .await;
    c
}

/// A Job `name` whose pods run `containers` scripted by `annotations`, with
/// `spec` merged in.
fn job_json(name: &str, annotations: Value, containers: &[&str], spec: Value) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|c| json!({"name": c, "image": "busybox"}))
        .collect();
    let mut full = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {
            "metadata": {"annotations": annotations},
            "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
                     "containers": containers}}}
    });
    if let (Some(dst), Some(src)) = (full["spec"].as_object_mut(), spec.as_object()) {
        for (k, v) in src {
            dst.insert(k.clone(), v.clone());
        }
    }
    full
}

async fn get_job(c: &Cluster, name: &str) -> Job {
    c.api::<Job>().get(name).await.expect("job")
}

/// The Job's pods, oldest first.
async fn pods_of(c: &Cluster, job: &str) -> Vec<Pod> {
    let lp = ListParams::default().labels(&format!("batch.kubernetes.io/job-name={job}"));
    let mut pods = c.api::<Pod>().list(&lp).await.expect("pods").items;
    pods.sort_by_key(|p| {
        (
            p.metadata.creation_timestamp.as_ref().map(|t| t.0),
            p.metadata.name.clone(),
        )
    });
    pods
}

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

fn phase(p: &Pod) -> String {
    p.status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default()
}

fn node_of(p: &Pod) -> String {
    p.spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default()
}

fn index_of(p: &Pod) -> String {
    p.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("batch.kubernetes.io/job-completion-index").cloned())
        .unwrap_or_default()
}

fn has_condition(p: &Pod, type_: &str) -> bool {
    p.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Waits until the Job has `n` pods in phase Running (not being deleted).
async fn wait_running(c: &Cluster, job: &str, n: usize) -> Vec<Pod> {
    eventually(&format!("{n} running pods of {job}"), LIMIT, || async {
        let running: Vec<Pod> = pods_of(c, job)
            .await
            .into_iter()
            .filter(|p| phase(p) == "Running" && p.metadata.deletion_timestamp.is_none())
            .collect();
        (running.len() == n).then_some(running)
    })
    .await
}

/// `(type, status, reason, message)` of the Job's conditions.
fn conditions(job: &Job) -> Vec<(String, String, String, String)> {
    job.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .map(|c| {
            (
                c.type_.clone(),
                c.status.clone(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
        .collect()
}

fn cond(type_: &str, reason: &str, message: &str) -> (String, String, String, String) {
    (
        type_.to_owned(),
        "True".to_owned(),
        reason.to_owned(),
        message.to_owned(),
    )
}

fn condition_time(job: &Job, type_: &str) -> Timestamp {
    job.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .find(|c| c.type_ == type_)
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0)
        .expect("condition time")
}

async fn wait_condition(c: &Cluster, job: &str, type_: &str) -> Job {
    eventually(&format!("{job} has {type_}"), LIMIT, || async {
        let j = get_job(c, job).await;
        conditions(&j).iter().any(|t| t.0 == type_).then_some(j)
    })
    .await
}

/// `(active, succeeded, failed, terminating)`.
fn counters(job: &Job) -> (i32, i32, i32, i32) {
    let s = job.status.clone().unwrap_or_default();
    (
        s.active.unwrap_or(0),
        s.succeeded.unwrap_or(0),
        s.failed.unwrap_or(0),
        s.terminating.unwrap_or(0),
    )
}

/// Patches the scripting annotations of a running pod.
async fn script(c: &Cluster, pod: &str, annotations: Value) {
    c.api::<Pod>()
        .patch(
            pod,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": annotations}})),
        )
        .await
        .expect("script pod");
}

/// `exitplan drain node-1` by hand: cordon (merge patch), then one
/// EvictionRequest per non-terminal pod on the node, as
/// `crates/exitplan/src/cmd/drain.rs` builds them. Returns the pods' names.
async fn drain(c: &Cluster, node: &str) -> Vec<String> {
    c.cluster_api::<Node>()
        .patch(
            node,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": true}})),
        )
        .await
        .expect("cordon");
    let pods = c
        .api::<Pod>()
        .list(&ListParams::default())
        .await
        .expect("pods")
        .items;
    let mut names = Vec::new();
    for p in pods
        .iter()
        .filter(|p| node_of(p) == node && !matches!(phase(p).as_str(), "Succeeded" | "Failed"))
    {
        let _: EvictionRequest = c
            .create(json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
                "metadata": {"name": format!("drain-{}", name(p)), "namespace": "default"},
                "spec": {
                    "target": {"pod": {"name": p.metadata.name, "uid": p.metadata.uid}},
                    "requester": "exitplan.io/drain",
                    "intent": "Eviction",
                }
            }))
            .await;
        names.push(name(p));
    }
    names.sort();
    names
}

/// Waits until every drained pod is gone and its request is `TargetEvicted=True`.
async fn wait_drained(c: &Cluster, pods: &[String]) {
    eventually("drained pods evicted and gone", LIMIT, || async {
        for p in pods {
            if c.api::<Pod>().get_opt(p).await.expect("pod").is_some() {
                return None;
            }
            let er = c
                .api::<EvictionRequest>()
                .get(&format!("drain-{p}"))
                .await
                .expect("request");
            let evicted = er
                .status
                .iter()
                .flat_map(|s| s.conditions.iter().flatten())
                .any(|c| c.type_ == "TargetEvicted" && c.status == "True");
            if !evicted {
                return None;
            }
        }
        Some(())
    })
    .await;
}

// ---- a -------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_drain_under_an_ignore_rule_replaces_pods_without_counting() {
    let c = start().await;
    c.create::<Job>(job_json(
        "ign",
        json!({"sim.exitplan.io/run": "10m"}),
        &["main"],
        json!({"completions": 4, "parallelism": 4, "backoffLimit": 0,
               "podFailurePolicy": {"rules": [
                   {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}),
    ))
    .await;
    let running = wait_running(&c, "ign", 4).await;
    let mut nodes: Vec<String> = running.iter().map(node_of).collect();
    nodes.sort();
    assert_eq!(nodes, ["node-1", "node-1", "node-2", "node-2"]);

    // Watch the evicted pods' last status before they go.
    let evicted = drain(&c, "node-1").await;
    assert_eq!(evicted.len(), 2);
    for p in &evicted {
        let failed = eventually("evicted pod failed", LIMIT, || async {
            let pod = c.api::<Pod>().get_opt(p).await.expect("pod")?;
            (phase(&pod) == "Failed").then_some(pod)
        })
        .await;
        assert!(has_condition(&failed, "DisruptionTarget"), "{failed:?}");
    }
    wait_drained(&c, &evicted).await;

    let done = wait_condition(&c, "ign", "Complete").await;
    assert_eq!(counters(&done), (0, 4, 0, 0));
    assert_eq!(
        conditions(&done)
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>(),
        ["SuccessCriteriaMet", "Complete"]
    );
    let pods = pods_of(&c, "ign").await;
    assert_eq!(pods.len(), 4, "evicted pods removed, replacements kept");
    assert!(
        pods.iter()
            .all(|p| phase(p) == "Succeeded" && node_of(p) == "node-2"),
        "all ran to completion on node-2"
    );
    assert!(pods.iter().all(|p| !evicted.contains(&name(p))));
    let metrics = c.ctx.metrics.encode();
    assert!(
        metrics.contains(
            r#"job_controller_pod_failures_handled_by_failure_policy_total{action="Ignore"} 2"#
        ),
        "{metrics}"
    );
}

// ---- b -------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn b_the_same_drain_without_a_policy_spends_the_backoff_limit() {
    let c = start().await;
    c.create::<Job>(job_json(
        "nopol",
        json!({"sim.exitplan.io/run": "10m"}),
        &["main"],
        json!({"completions": 4, "parallelism": 4, "backoffLimit": 1}),
    ))
    .await;
    wait_running(&c, "nopol", 4).await;
    let evicted = drain(&c, "node-1").await;
    assert_eq!(evicted.len(), 2);
    let failed = wait_condition(&c, "nopol", "Failed").await;
    let msg = "Job has reached the specified backoff limit";
    assert_eq!(
        conditions(&failed),
        vec![
            cond("FailureTarget", "BackoffLimitExceeded", msg),
            cond("Failed", "BackoffLimitExceeded", msg),
        ]
    );
    // The 2 evicted pods exceed backoffLimit 1; the 2 still running on
    // node-2 are deleted and count as failed too (upstream).
    assert_eq!(counters(&failed), (0, 0, 4, 0));
    wait_drained(&c, &evicted).await;
    assert_eq!(counters(&get_job(&c, "nopol").await), (0, 0, 4, 0));
}

// ---- c -------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn c_fail_job_on_exit_code_42_waits_for_the_other_pod_to_stop() {
    let c = start().await;
    c.create::<Job>(job_json(
        "fj",
        // The other pod takes 20 s to stop after SIGTERM.
        json!({"sim.exitplan.io/run": "10m", "sim.exitplan.io/stop": "20s"}),
        &["main"],
        json!({"completions": 2, "parallelism": 2, "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In",
                                                  "values": [42]}}]}}),
    ))
    .await;
    let running = wait_running(&c, "fj", 2).await;
    let (a, b) = (name(&running[0]), name(&running[1]));
    script(
        &c,
        &a,
        json!({"sim.exitplan.io/run": "30s", "sim.exitplan.io/exit-code.main": "42"}),
    )
    .await;
    let msg = format!(
        "Container main for pod default/{a} failed with exit code 42 matching FailJob rule at index 1"
    );
    let target = wait_condition(&c, "fj", "FailureTarget").await;
    assert_eq!(
        conditions(&target),
        vec![cond("FailureTarget", "PodFailurePolicy", &msg)]
    );
    let pod_a = c.api::<Pod>().get(&a).await.expect("a");
    let finished_a = pod_a
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .find_map(|s| s.state.as_ref()?.terminated.as_ref()?.finished_at.clone())
        .expect("a finished")
        .0;
    let target_at = condition_time(&target, "FailureTarget");
    assert!(
        target_at.duration_since(finished_a) < SignedDuration::from_secs(2),
        "FailureTarget at once: {finished_a} → {target_at}"
    );
    let failed = wait_condition(&c, "fj", "Failed").await;
    assert_eq!(
        conditions(&failed),
        vec![
            cond("FailureTarget", "PodFailurePolicy", &msg),
            cond("Failed", "PodFailurePolicy", &msg),
        ]
    );
    let failed_at = condition_time(&failed, "Failed");
    let waited = failed_at.duration_since(target_at);
    assert!(
        waited >= SignedDuration::from_secs(20) && waited < SignedDuration::from_secs(22),
        "Failed once b stopped (20 s after SIGTERM): {waited:?}"
    );
    assert_eq!(counters(&failed), (0, 0, 2, 0));
    // b was deleted and is gone; a stays (Failed); nothing replaced them.
    let left: Vec<String> = pods_of(&c, "fj").await.iter().map(name).collect();
    assert_eq!(left, vec![a], "no replacement, b gone");
    assert!(c.api::<Pod>().get_opt(&b).await.expect("get b").is_none());
}

// ---- d -------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn d_count_not_in_looks_at_main_not_the_sidecar() {
    let c = start().await;
    c.create::<Job>(job_json(
        "sc",
        json!({"sim.exitplan.io/run": "30s", "sim.exitplan.io/exit-code.sidecar": "1"}),
        &["main", "sidecar"],
        json!({"backoffLimit": 3, "podFailurePolicy": {"rules": [
            {"action": "Count", "onExitCodes": {"containerName": "main", "operator": "NotIn",
                                                "values": [0]}},
            // Any other non-zero container (the sidecar) is ignored.
            {"action": "Ignore", "onExitCodes": {"operator": "NotIn", "values": [0]}}]}}),
    ))
    .await;
    // 1: the sidecar exits 1, main 0: rule 0 does not match, rule 1 ignores it.
    let first = wait_running(&c, "sc", 1).await.remove(0);
    let second = eventually("replacement of the first pod", LIMIT, || async {
        let pods = pods_of(&c, "sc").await;
        pods.into_iter()
            .find(|p| name(p) != name(&first) && phase(p) == "Running")
    })
    .await;
    let j = get_job(&c, "sc").await;
    assert_eq!(counters(&j).2, 0, "sidecar failure not counted");
    // 2: main exits 3: rule 0 counts it.
    script(
        &c,
        &name(&second),
        json!({"sim.exitplan.io/exit-code.main": "3"}),
    )
    .await;
    let third = eventually("replacement of the second pod", LIMIT, || async {
        let pods = pods_of(&c, "sc").await;
        pods.into_iter()
            .find(|p| name(p) != name(&first) && name(p) != name(&second) && phase(p) == "Running")
    })
    .await;
    assert_eq!(
        counters(&get_job(&c, "sc").await).2,
        1,
        "main failure counted"
    );
    // 3: everything exits 0.
    script(
        &c,
        &name(&third),
        json!({"sim.exitplan.io/exit-code.sidecar": "0"}),
    )
    .await;
    let done = wait_condition(&c, "sc", "Complete").await;
    assert_eq!(counters(&done), (0, 1, 1, 0));
    let metrics = c.ctx.metrics.encode();
    for action in ["Ignore", "Count"] {
        let line = format!(
            r#"job_controller_pod_failures_handled_by_failure_policy_total{{action="{action}"}} 1"#
        );
        assert!(metrics.contains(&line), "{line}\n{metrics}");
    }
}

// ---- e -------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn e_a_scripted_custom_condition_fails_the_job() {
    let c = start().await;
    c.create::<Job>(job_json(
        "cfg",
        json!({"sim.exitplan.io/run": "30s", "sim.exitplan.io/exit-code": "1",
               "sim.exitplan.io/conditions": "ConfigIssue=True:BadConfig"}),
        &["main"],
        json!({"backoffLimit": 6, "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue"}]}]}}),
    ))
    .await;
    let pod = wait_running(&c, "cfg", 1).await.remove(0);
    let failed = wait_condition(&c, "cfg", "Failed").await;
    let msg = format!(
        "Pod default/{} has condition ConfigIssue matching FailJob rule at index 1",
        name(&pod)
    );
    assert_eq!(
        conditions(&failed),
        vec![
            cond("FailureTarget", "PodFailurePolicy", &msg),
            cond("Failed", "PodFailurePolicy", &msg),
        ]
    );
    assert_eq!(counters(&failed), (0, 0, 1, 0));
    let pods = pods_of(&c, "cfg").await;
    assert_eq!(pods.len(), 1, "no retry despite backoffLimit 6");
    assert!(has_condition(&pods[0], "ConfigIssue"));
}

// ---- f -------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn f_fail_index_then_max_failed_indexes_exceeded() {
    let c = start().await;
    c.create::<Job>(job_json(
        "idx",
        json!({"sim.exitplan.io/run": "10m"}),
        &["main"],
        json!({"completionMode": "Indexed", "completions": 3, "parallelism": 3,
               "backoffLimitPerIndex": 1, "maxFailedIndexes": 1,
               "podFailurePolicy": {"rules": [
                   {"action": "FailIndex", "onExitCodes": {"containerName": "main",
                                                           "operator": "In", "values": [42]}}]}}),
    ))
    .await;
    let running = wait_running(&c, "idx", 3).await;
    let pod = |i: &str| {
        running
            .iter()
            .find(|p| index_of(p) == i)
            .map(name)
            .expect("pod of index")
    };
    script(
        &c,
        &pod("0"),
        json!({"sim.exitplan.io/run": "30s", "sim.exitplan.io/exit-code.main": "42"}),
    )
    .await;
    script(
        &c,
        &pod("1"),
        json!({"sim.exitplan.io/run": "60s", "sim.exitplan.io/exit-code.main": "42"}),
    )
    .await;
    // Index 0 fails at 30 s: failed at once (no per-index retry), not replaced.
    // (failedIndexes and the failed counter may land in two writes.)
    let one = eventually("index 0 failed and counted", LIMIT, || async {
        let j = get_job(&c, "idx").await;
        (j.status.as_ref().and_then(|s| s.failed_indexes.as_deref()) == Some("0")
            && counters(&j).2 == 1)
            .then_some(j)
    })
    .await;
    assert!(conditions(&one).is_empty(), "{:?}", conditions(&one));
    assert_eq!(counters(&one).2, 1);
    // Index 1 fails at 60 s: 2 failed indexes > maxFailedIndexes 1.
    let failed = wait_condition(&c, "idx", "Failed").await;
    let msg = "Job has exceeded the specified maximal number of failed indexes";
    assert_eq!(
        conditions(&failed),
        vec![
            cond("FailureTarget", "MaxFailedIndexesExceeded", msg),
            cond("Failed", "MaxFailedIndexesExceeded", msg),
        ]
    );
    let status = failed.status.clone().unwrap_or_default();
    assert_eq!(status.failed_indexes.as_deref(), Some("0,1"));
    assert_eq!(status.completed_indexes.unwrap_or_default(), "");
    // Index 2 was still running: deleted and counted as failed.
    assert_eq!(counters(&failed), (0, 0, 3, 0));
    // Index 2's pod is removed by its node a second after its terminal
    // status (which the Failed condition waited for); no index is retried.
    let indexes = eventually("index 2's pod removed", LIMIT, || async {
        let mut indexes: Vec<String> = pods_of(&c, "idx").await.iter().map(index_of).collect();
        indexes.sort();
        (!indexes.iter().any(|i| i == "2")).then_some(indexes)
    })
    .await;
    assert_eq!(
        indexes,
        ["0", "1"],
        "one pod per failed index, none retried"
    );
}
