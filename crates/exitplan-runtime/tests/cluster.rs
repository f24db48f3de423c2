//! The simulated cluster through the real kube-rs path, in virtual time: the
//! scheduler binds pods, simulated nodes register, heartbeat and run their
//! pods as scripted by `sim.exitplan.io/*` annotations, graceful deletion,
//! restart policies, and a node restart that resumes its pods.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ContainerStatus, Node, Pod};
use kube::api::{DeleteParams, Patch, PatchParams, WatchEvent, WatchParams};
use serde_json::json;

use exitplan_runtime::informer::ObjectKey;
use exitplan_runtime::runtime::Component;
use support::{Cluster, START, eventually};

/// Watch events of one pod with the instants they arrived.
type EventLog = Arc<Mutex<Vec<(Timestamp, WatchEvent<Pod>)>>>;

const LIMIT: Duration = Duration::from_secs(600);

fn start() -> Timestamp {
    START.parse().expect("start")
}

fn pod(name: &str, annotations: serde_json::Value, spec: serde_json::Value) -> serde_json::Value {
    let mut spec_obj = json!({"containers": [{"name": "main", "image": "busybox"}]});
    if let (Some(base), Some(extra)) = (spec_obj.as_object_mut(), spec.as_object()) {
        for (k, v) in extra {
            base.insert(k.clone(), v.clone());
        }
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": spec_obj,
    })
}

async fn get(cluster: &Cluster, name: &str) -> Option<Pod> {
    cluster.api::<Pod>().get_opt(name).await.expect("get pod")
}

fn node_of(p: &Pod) -> Option<String> {
    p.spec.as_ref().and_then(|s| s.node_name.clone())
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// `(status, reason)` of the pod condition `type_`.
fn condition(p: &Pod, type_: &str) -> Option<(String, Option<String>)> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

fn container<'a>(p: &'a Pod, name: &str) -> &'a ContainerStatus {
    p.status
        .as_ref()
        .and_then(|s| {
            s.container_statuses
                .iter()
                .chain(s.init_container_statuses.iter())
                .flatten()
                .find(|c| c.name == name)
        })
        .unwrap_or_else(|| panic!("no status of container {name} in {p:?}"))
}

fn started_at(c: &ContainerStatus) -> Timestamp {
    c.state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.as_ref())
        .map(|t| t.0)
        .unwrap_or_else(|| panic!("{} is not running: {c:?}", c.name))
}

/// `(exitCode, startedAt, finishedAt, reason)` of a terminated container.
fn terminated(c: &ContainerStatus) -> Option<(i32, Timestamp, Timestamp, String)> {
    let t = c.state.as_ref()?.terminated.as_ref()?;
    Some((
        t.exit_code,
        t.started_at.as_ref()?.0,
        t.finished_at.as_ref()?.0,
        t.reason.clone().unwrap_or_default(),
    ))
}

fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

async fn ready_nodes(cluster: &Cluster, names: &[&str]) -> Vec<Node> {
    eventually("nodes Ready in the scheduler's cache", LIMIT, || async {
        let nodes: Vec<Node> = names
            .iter()
            .filter_map(|n| {
                cluster
                    .ctx
                    .informers
                    .nodes
                    .get(&ObjectKey::new(None, n))
                    .map(|n| (*n).clone())
            })
            .filter(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
            })
            .collect();
        (nodes.len() == names.len()).then_some(nodes)
    })
    .await
}

async fn running(cluster: &Cluster, name: &str) -> Pod {
    eventually(&format!("{name} Running and Ready"), LIMIT, || async {
        get(cluster, name).await.filter(|p| {
            phase(p) == "Running" && condition(p, "Ready").is_some_and(|c| c.0 == "True")
        })
    })
    .await
}

async fn scheduled(cluster: &Cluster, name: &str) -> String {
    eventually(&format!("{name} bound"), LIMIT, || async {
        get(cluster, name).await.and_then(|p| node_of(&p))
    })
    .await
}

/// Waits until the scheduler's cache sees `node` with `unschedulable`.
async fn cached_cordon(cluster: &Cluster, node: &str, unschedulable: bool) {
    eventually("the cordon in the cache", LIMIT, || async {
        cluster
            .ctx
            .informers
            .nodes
            .get(&ObjectKey::new(None, node))
            .filter(|n| {
                n.spec
                    .as_ref()
                    .and_then(|s| s.unschedulable)
                    .unwrap_or(false)
                    == unschedulable
            })
    })
    .await;
}

async fn cordon(cluster: &Cluster, node: &str, unschedulable: bool) {
    cluster
        .cluster_api::<Node>()
        .patch(
            node,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": unschedulable}})),
        )
        .await
        .expect("cordon");
    cached_cordon(cluster, node, unschedulable).await;
}

/// Records every watch event of pod `name` with the instant it arrived.
fn record(cluster: &Cluster, name: &str) -> EventLog {
    let log = Arc::new(Mutex::new(Vec::new()));
    let api = cluster.api::<Pod>();
    let clock = cluster.clock.clone();
    let params = WatchParams::default().fields(&format!("metadata.name={name}"));
    let sink = log.clone();
    tokio::spawn(async move {
        let mut stream = api.watch(&params, "0").await.expect("watch").boxed();
        while let Some(Ok(event)) = stream.next().await {
            let done = matches!(event, WatchEvent::Deleted(_));
            sink.lock().expect("log").push((clock.now(), event));
            if done {
                break;
            }
        }
    });
    log
}

#[tokio::test(start_paused = true)]
async fn nodes_register_and_pods_are_scheduled_least_loaded_and_run() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2"]).await;
    let nodes = ready_nodes(&cluster, &["node-1", "node-2"]).await;
    for n in &nodes {
        let name = n.metadata.name.as_deref().expect("name");
        let labels = n.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels.get("kubernetes.io/hostname").map(String::as_str),
            Some(name)
        );
        let status = n.status.as_ref().expect("status");
        let pods = |m: &Option<std::collections::BTreeMap<String, _>>| {
            m.as_ref()
                .and_then(|m| m.get("pods"))
                .map(|q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity| q.0.clone())
        };
        assert_eq!(pods(&status.capacity).as_deref(), Some("110"));
        assert_eq!(pods(&status.allocatable).as_deref(), Some("110"));
    }
    for n in &nodes {
        assert_eq!(
            n.metadata.creation_timestamp.as_ref().map(|t| t.0),
            Some(start()),
            "registered at once"
        );
    }

    let t0 = cluster.now();
    let _: Pod = cluster
        .create(pod(
            "a",
            json!({"sim.exitplan.io/ready-after": "5s"}),
            json!({}),
        ))
        .await;
    assert_eq!(
        scheduled(&cluster, "a").await,
        "node-1",
        "tie: first by name"
    );
    let _: Pod = cluster.create(pod("b", json!({}), json!({}))).await;
    assert_eq!(scheduled(&cluster, "b").await, "node-2", "least loaded");
    let _: Pod = cluster.create(pod("c", json!({}), json!({}))).await;
    assert_eq!(scheduled(&cluster, "c").await, "node-1", "tie again");

    let a = running(&cluster, "a").await;
    let main = container(&a, "main");
    assert_eq!(main.restart_count, 0);
    assert!(main.ready);
    assert_eq!(main.image, "busybox");
    let started = started_at(main);
    assert_eq!(started, t0, "started when bound");
    let ready = a
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .and_then(|c| c.last_transition_time.clone())
        .expect("Ready time")
        .0;
    assert_eq!(ready.duration_since(started), secs(5), "ready-after 5s");
    assert_eq!(
        condition(&a, "PodScheduled"),
        Some(("True".to_owned(), None))
    );
    assert_eq!(
        condition(&a, "Initialized"),
        Some(("True".to_owned(), None))
    );
    assert_eq!(
        condition(&a, "ContainersReady"),
        Some(("True".to_owned(), None))
    );
    assert_eq!(
        a.status
            .as_ref()
            .and_then(|s| s.start_time.clone())
            .map(|t| t.0),
        Some(t0)
    );

    // A running pod is not written again; the heartbeat refreshes the node.
    let rv = a.metadata.resource_version.clone();
    tokio::time::sleep(Duration::from_secs(130)).await;
    let later = get(&cluster, "a").await.expect("a");
    assert_eq!(later.metadata.resource_version, rv, "no status churn");
    let node = cluster
        .cluster_api::<Node>()
        .get("node-1")
        .await
        .expect("node");
    let cond = node
        .status
        .and_then(|s| s.conditions)
        .and_then(|cs| cs.into_iter().find(|c| c.type_ == "Ready"))
        .expect("Ready");
    assert_eq!(cond.last_transition_time.map(|t| t.0), Some(start()));
    assert_eq!(
        cond.last_heartbeat_time.map(|t| t.0),
        Some(start() + secs(120)),
        "heartbeats every 40 s"
    );
}

#[tokio::test(start_paused = true)]
async fn cordoned_and_full_nodes_get_no_pods_until_room_appears() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2"]).await;
    ready_nodes(&cluster, &["node-1", "node-2"]).await;
    cordon(&cluster, "node-1", true).await;
    // node-2 takes two pods.
    cluster
        .cluster_api::<Node>()
        .patch_status(
            "node-2",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"allocatable": {"pods": "2"}}})),
        )
        .await
        .expect("limit node-2");
    eventually("node-2's limit in the cache", LIMIT, || async {
        cluster
            .ctx
            .informers
            .nodes
            .get(&ObjectKey::new(None, "node-2"))
            .filter(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.allocatable.as_ref())
                    .and_then(|a| a.get("pods"))
                    .is_some_and(|q| q.0 == "2")
            })
    })
    .await;

    for name in ["p1", "p2"] {
        let _: Pod = cluster.create(pod(name, json!({}), json!({}))).await;
        assert_eq!(scheduled(&cluster, name).await, "node-2");
    }
    let _: Pod = cluster.create(pod("p3", json!({}), json!({}))).await;
    let p3 = eventually("p3 Unschedulable", LIMIT, || async {
        get(&cluster, "p3").await.filter(|p| {
            condition(p, "PodScheduled")
                == Some(("False".to_owned(), Some("Unschedulable".to_owned())))
        })
    })
    .await;
    let message = p3
        .status
        .and_then(|s| s.conditions)
        .and_then(|cs| cs.into_iter().find(|c| c.type_ == "PodScheduled"))
        .and_then(|c| c.message);
    assert_eq!(message.as_deref(), Some("0/2 nodes are available."));
    // Past two heartbeats: still pending, and node-2 keeps its limit.
    tokio::time::sleep(Duration::from_secs(90)).await;
    let p3 = get(&cluster, "p3").await.expect("p3");
    assert_eq!(node_of(&p3), None, "no room anywhere");
    assert_eq!(phase(&p3), "Pending");
    let node2 = cluster
        .cluster_api::<Node>()
        .get("node-2")
        .await
        .expect("node-2");
    let status = node2.status.expect("status");
    assert_eq!(
        status
            .allocatable
            .and_then(|a| a.get("pods").cloned())
            .map(|q| q.0)
            .as_deref(),
        Some("2")
    );
    assert!(
        status
            .conditions
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Ready"
                && c.last_heartbeat_time.map(|t| t.0) == Some(start() + secs(80))),
        "heartbeats went on"
    );

    // Uncordoning makes room.
    let uncordoned = cluster.now();
    cordon(&cluster, "node-1", false).await;
    assert_eq!(scheduled(&cluster, "p3").await, "node-1");
    let p3 = running(&cluster, "p3").await;
    assert_eq!(
        condition(&p3, "PodScheduled"),
        Some(("True".to_owned(), None))
    );
    assert!(
        cluster.now().duration_since(uncordoned) <= secs(1),
        "scheduled as soon as the node was uncordoned"
    );

    // A pod leaving a full node makes room too.
    cordon(&cluster, "node-1", true).await;
    let _: Pod = cluster.create(pod("p4", json!({}), json!({}))).await;
    eventually("p4 Unschedulable", LIMIT, || async {
        get(&cluster, "p4")
            .await
            .filter(|p| condition(p, "PodScheduled").is_some_and(|c| c.0 == "False"))
    })
    .await;
    cluster
        .api::<Pod>()
        .delete("p1", &DeleteParams::default())
        .await
        .expect("delete p1");
    assert_eq!(scheduled(&cluster, "p4").await, "node-2");
    // p1 went first: terminal (its removal is confirmed 1 s after the
    // terminal status, nodes::CONFIRM_AFTER_TERMINAL) or already gone.
    let p1 = get(&cluster, "p1").await;
    assert!(
        p1.as_ref().is_none_or(|p| {
            matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            )
        }),
        "p1 went first: {p1:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn deleted_pods_get_sigterm_and_go_after_stopping_or_at_the_end_of_grace() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2"]).await;
    ready_nodes(&cluster, &["node-1", "node-2"]).await;
    let _: Pod = cluster
        .create(pod(
            "gentle",
            json!({"sim.exitplan.io/stop": "3s"}),
            json!({}),
        ))
        .await;
    let _: Pod = cluster
        .create(pod(
            "stubborn",
            json!({"sim.exitplan.io/stop": "60s"}),
            json!({"terminationGracePeriodSeconds": 10}),
        ))
        .await;
    running(&cluster, "gentle").await;
    running(&cluster, "stubborn").await;
    // Another component marks "gentle" as disrupted; the node keeps that.
    cluster
        .api::<Pod>()
        .patch_status(
            "gentle",
            &PatchParams::default(),
            &Patch::Strategic(json!({"status": {"conditions": [{
                "type": "DisruptionTarget", "status": "True",
                "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting",
            }]}})),
        )
        .await
        .expect("DisruptionTarget");
    tokio::time::sleep(Duration::from_secs(7)).await;
    let gentle_log = record(&cluster, "gentle");
    let stubborn_log = record(&cluster, "stubborn");
    tokio::time::sleep(Duration::from_secs(1)).await;

    let deleted_at = cluster.now();
    for name in ["gentle", "stubborn"] {
        cluster
            .api::<Pod>()
            .delete(name, &DeleteParams::default())
            .await
            .expect("delete");
    }
    for name in ["gentle", "stubborn"] {
        eventually(&format!("{name} removed"), LIMIT, || async {
            get(&cluster, name).await.is_none().then_some(())
        })
        .await;
    }

    for (log, grace, stop_after, code) in [(&gentle_log, 30, 3, 143), (&stubborn_log, 10, 10, 137)]
    {
        let log = log.lock().expect("log");
        let modified: Vec<(Timestamp, &Pod)> = log
            .iter()
            .filter_map(|(t, e)| match e {
                WatchEvent::Modified(p) => Some((*t, p)),
                _ => None,
            })
            .collect();
        // The deletion request: the grace period.
        let (_, marked) = modified
            .iter()
            .find(|(_, p)| p.metadata.deletion_timestamp.is_some())
            .expect("marked for deletion");
        assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(grace));
        assert_eq!(
            marked.metadata.deletion_timestamp.as_ref().map(|t| t.0),
            Some(deleted_at + secs(grace))
        );
        // The exit, recorded before the removal.
        let (exited_at, exited) = modified
            .iter()
            .find(|(_, p)| terminated(container(p, "main")).is_some())
            .expect("an exit was reported");
        let (exit_code, _, finished, reason) =
            terminated(container(exited, "main")).expect("terminated");
        assert_eq!(exit_code, code);
        assert_eq!(reason, "Error");
        assert_eq!(finished, deleted_at + secs(stop_after));
        assert_eq!(*exited_at, deleted_at + secs(stop_after));
        assert_eq!(phase(exited), "Failed");
        if grace == 30 {
            assert_eq!(
                condition(exited, "DisruptionTarget"),
                Some(("True".to_owned(), Some("EvictionByEvictionAPI".to_owned()))),
                "a condition set by another component survives the kubelet's writes"
            );
        }
        assert_eq!(
            condition(exited, "Ready"),
            Some(("False".to_owned(), Some("PodCompleted".to_owned())))
        );
        let (removed_at, last) = log.last().expect("events");
        assert!(matches!(last, WatchEvent::Deleted(_)), "{last:?}");
        // The kubelet confirms the deletion 1 s after writing the terminal
        // status (nodes::CONFIRM_AFTER_TERMINAL), so watchers see it first.
        assert_eq!(*removed_at, deleted_at + secs(stop_after) + secs(1));
        // Nothing was written between the deletion request and the exit.
        let writes_before_exit = modified
            .iter()
            .filter(|(t, p)| *t < *exited_at && p.metadata.deletion_timestamp.is_some())
            .count();
        assert_eq!(writes_before_exit, 1, "only the deletion mark");
    }
}

#[tokio::test(start_paused = true)]
async fn scripted_exits_and_restart_policies() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2"]).await;
    ready_nodes(&cluster, &["node-1", "node-2"]).await;
    let t0 = cluster.now();
    let _: Pod = cluster
        .create(pod(
            "fails",
            json!({"sim.exitplan.io/run": "30s", "sim.exitplan.io/exit-code": "42"}),
            json!({"restartPolicy": "Never"}),
        ))
        .await;
    let _: Pod = cluster
        .create(pod(
            "init-fails",
            json!({"sim.exitplan.io/run.setup": "5s", "sim.exitplan.io/exit-code.setup": "3"}),
            json!({"restartPolicy": "Never", "initContainers": [{"name": "setup", "image": "busybox"}]}),
        ))
        .await;
    let _: Pod = cluster
        .create(pod(
            "init-ok",
            json!({"sim.exitplan.io/run.setup": "5s", "sim.exitplan.io/run.main": "10s"}),
            json!({"restartPolicy": "Never", "initContainers": [{"name": "setup", "image": "busybox"}]}),
        ))
        .await;
    let _: Pod = cluster
        .create(pod(
            "flaky",
            json!({"sim.exitplan.io/run": "10s", "sim.exitplan.io/exit-code": "1"}),
            json!({"restartPolicy": "OnFailure"}),
        ))
        .await;
    let fails_log = record(&cluster, "fails");

    let fails = eventually("fails Failed", LIMIT, || async {
        get(&cluster, "fails")
            .await
            .filter(|p| phase(p) == "Failed")
    })
    .await;
    let failed_at = fails_log
        .lock()
        .expect("log")
        .iter()
        .find_map(|(t, e)| match e {
            WatchEvent::Modified(p) if phase(p) == "Failed" => Some(*t),
            _ => None,
        });
    assert_eq!(failed_at, Some(t0 + secs(30)), "failed at t+30s");
    let (code, started, finished, reason) =
        terminated(container(&fails, "main")).expect("terminated");
    assert_eq!((code, reason.as_str()), (42, "Error"));
    assert_eq!((started, finished), (t0, t0 + secs(30)));
    assert_eq!(container(&fails, "main").restart_count, 0);

    let init_fails = get(&cluster, "init-fails").await.expect("init-fails");
    assert_eq!(phase(&init_fails), "Failed");
    let (code, _, finished, _) =
        terminated(container(&init_fails, "setup")).expect("setup terminated");
    assert_eq!((code, finished), (3, t0 + secs(5)));
    let main = container(&init_fails, "main");
    assert_eq!(
        main.state
            .as_ref()
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| w.reason.as_deref()),
        Some("PodInitializing"),
        "never started"
    );
    assert_eq!(
        condition(&init_fails, "Initialized"),
        Some((
            "False".to_owned(),
            Some("ContainersNotInitialized".to_owned())
        ))
    );

    let init_ok = get(&cluster, "init-ok").await.expect("init-ok");
    assert_eq!(phase(&init_ok), "Succeeded");
    let (code, _, setup_done, reason) =
        terminated(container(&init_ok, "setup")).expect("setup terminated");
    assert_eq!(
        (code, setup_done, reason.as_str()),
        (0, t0 + secs(5), "Completed")
    );
    let (code, main_started, main_done, _) =
        terminated(container(&init_ok, "main")).expect("main terminated");
    assert_eq!(
        (code, main_started, main_done),
        (0, t0 + secs(5), t0 + secs(15)),
        "main starts when setup is done"
    );
    assert_eq!(
        condition(&init_ok, "Initialized"),
        Some(("True".to_owned(), None))
    );

    // OnFailure: exit at 10 s, back-off 10 s, again at 20 s, exit at 30 s,
    // back-off 20 s, again at 50 s.
    let flaky = eventually("flaky restarted twice", LIMIT, || async {
        get(&cluster, "flaky")
            .await
            .filter(|p| container(p, "main").restart_count == 2)
    })
    .await;
    assert_eq!(phase(&flaky), "Running");
    let main = container(&flaky, "main");
    let last = main
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("last state");
    assert_eq!(last.exit_code, 1);
    assert_eq!(last.finished_at.as_ref().map(|t| t.0), Some(t0 + secs(30)));
    let flaky = eventually("flaky running again", LIMIT, || async {
        get(&cluster, "flaky").await.filter(|p| {
            container(p, "main")
                .state
                .as_ref()
                .is_some_and(|s| s.running.is_some())
                && container(p, "main").restart_count == 2
        })
    })
    .await;
    assert_eq!(started_at(container(&flaky, "main")), t0 + secs(50));
}

#[tokio::test(start_paused = true)]
async fn a_restarted_node_resumes_its_pods_where_they_were() {
    let mut cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2"]).await;
    let before = ready_nodes(&cluster, &["node-1", "node-2"]).await;
    let t0 = cluster.now();
    let _: Pod = cluster.create(pod("steady", json!({}), json!({}))).await;
    let _: Pod = cluster
        .create(pod(
            "timed",
            json!({"sim.exitplan.io/run": "30s"}),
            json!({"restartPolicy": "Never"}),
        ))
        .await;
    let steady = running(&cluster, "steady").await;
    running(&cluster, "timed").await;
    let started = started_at(container(&steady, "main"));
    let steady_rv = steady.metadata.resource_version.clone();

    // The nodes are down while "timed" ends.
    tokio::time::sleep(Duration::from_secs(10)).await;
    cluster.stop_components().await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let timed = get(&cluster, "timed").await.expect("timed");
    assert_eq!(phase(&timed), "Running", "nobody reported the exit yet");
    cluster.restart_components().await;

    let timed = eventually("timed Succeeded", LIMIT, || async {
        get(&cluster, "timed")
            .await
            .filter(|p| phase(p) == "Succeeded")
    })
    .await;
    let (code, timed_started, finished, _) =
        terminated(container(&timed, "main")).expect("terminated");
    assert_eq!(
        (code, timed_started, finished),
        (0, t0, t0 + secs(30)),
        "exited when scripted, not when the node came back"
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    let steady = get(&cluster, "steady").await.expect("steady");
    assert_eq!(phase(&steady), "Running");
    let main = container(&steady, "main");
    assert_eq!(main.restart_count, 0, "no restart counted");
    assert_eq!(started_at(main), started, "the same container");
    assert_eq!(
        steady.metadata.resource_version, steady_rv,
        "nothing to write for a pod that kept running"
    );
    let after = ready_nodes(&cluster, &["node-1", "node-2"]).await;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.metadata.uid, a.metadata.uid, "the same Node, adopted");
        let since = |n: &Node| {
            n.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
                .and_then(|c| c.last_transition_time.clone())
        };
        assert_eq!(since(b), since(a), "Ready since registration");
    }
}

#[tokio::test(start_paused = true)]
async fn the_example_scripted_pod_behaves_as_documented() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2"]).await;
    ready_nodes(&cluster, &["node-1", "node-2"]).await;
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/pods/scripted-pod.yaml"
    ))
    .expect("examples/pods/scripted-pod.yaml");
    let manifest: serde_json::Value = serde_saphyr::from_str(&yaml).expect("YAML");
    let t0 = cluster.now();
    let _: Pod = cluster.create(manifest).await;
    let p = running(&cluster, "scripted").await;
    let (code, _, setup_done, _) = terminated(container(&p, "setup")).expect("setup done");
    assert_eq!((code, setup_done), (0, t0 + secs(5)));
    assert_eq!(started_at(container(&p, "main")), t0 + secs(5));
    let failed = eventually("scripted Failed", LIMIT, || async {
        get(&cluster, "scripted")
            .await
            .filter(|p| phase(p) == "Failed")
    })
    .await;
    let (code, _, finished, _) = terminated(container(&failed, "main")).expect("main done");
    assert_eq!((code, finished), (42, t0 + secs(605)));
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_pods_spreads_evenly() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1", "node-2", "node-3"]).await;
    ready_nodes(&cluster, &["node-1", "node-2", "node-3"]).await;
    // All at once, so the scheduler binds faster than its cache learns.
    let creates = (0..60).map(|i| {
        let cluster = &cluster;
        async move {
            let _: Pod = cluster
                .create(pod(&format!("p{i:02}"), json!({}), json!({})))
                .await;
        }
    });
    futures_util::future::join_all(creates).await;
    let placed = eventually("60 pods bound", LIMIT, || async {
        let pods = cluster
            .api::<Pod>()
            .list(&Default::default())
            .await
            .expect("list");
        let nodes: Vec<String> = pods.items.iter().filter_map(node_of).collect();
        (nodes.len() == 60).then_some(nodes)
    })
    .await;
    for node in ["node-1", "node-2", "node-3"] {
        assert_eq!(
            placed.iter().filter(|n| *n == node).count(),
            20,
            "{node}: {placed:?}"
        );
    }
}
