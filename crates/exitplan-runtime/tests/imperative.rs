//! The default responder `imperative-eviction.k8s.io/evictor` through
//! kube-rs in virtual time (eviction spec §8). The test plays the
//! evictionrequest-controller (it writes the Eviction's role label,
//! `observedGeneration`, the Active TargetResponder and the ResponderStatus
//! entry with `startTime`, as that controller does) and the kubelet (it
//! deletes terminating pods with grace 0). Every status write of the evictor
//! is recorded with its virtual instant from a watch.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, ResponderStatus};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;
use support::{Cluster, START, eventually};

use exitplan_control::imperative::recorded_attempts;
use exitplan_runtime::runtime::Component;

const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";
const EVICTION: &str = "pod-1-web-0";

/// A pod bound to `node-1` (so deletion is graceful), Running and Ready.
async fn ready_pod(cluster: &Cluster, name: &str, grace: i64) -> Pod {
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {
                "nodeName": "node-1",
                "terminationGracePeriodSeconds": grace,
                "containers": [{"name": "c", "image": "i"}]
            }
        }))
        .await;
    cluster
        .api::<Pod>()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": cluster.now().to_string()}
            ]}})),
        )
        .await
        .expect("pod status")
}

/// Creates the Eviction of `pod` and activates the evictor, as the
/// evictionrequest-controller would (label first, then the status apply).
async fn activated_eviction(cluster: &Cluster, pod: &Pod) -> Eviction {
    let uid = pod.metadata.uid.clone().expect("uid");
    let name = pod.metadata.name.clone().expect("name");
    let _: Eviction = cluster
        .create(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": EVICTION, "namespace": "default",
                         "labels": {EVICTOR: "responder"}},
            "spec": {"target": {"pod": {"name": name, "uid": uid}}}
        }))
        .await;
    let now = cluster.now().to_string();
    cluster
        .api::<Eviction>()
        .patch_status(
            EVICTION,
            &PatchParams::apply("evictionrequest-controller").force(),
            &Patch::Apply(json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
                "metadata": {"name": EVICTION, "namespace": "default"},
                "status": {
                    "observedGeneration": 1,
                    "conditions": [
                        {"type": "TargetEvicted", "status": "False", "reason": "AwaitingEviction",
                         "message": "", "lastTransitionTime": now, "observedGeneration": 1},
                        {"type": "Failed", "status": "False", "reason": "AwaitingEviction",
                         "message": "", "lastTransitionTime": now, "observedGeneration": 1}
                    ],
                    "targetResponders": [{"name": EVICTOR, "priority": 100, "state": "Active"}],
                    "responders": [{"name": EVICTOR, "startTime": now}]
                }
            })),
        )
        .await
        .expect("activate evictor")
}

/// One observed version of the evictor's ResponderStatus entry.
#[derive(Clone, Debug)]
struct Seen {
    /// Virtual time since the cluster started.
    at: Duration,
    entry: ResponderStatus,
}

impl Seen {
    fn message(&self) -> &str {
        self.entry.message.as_deref().unwrap_or("")
    }
}

fn elapsed(now: Timestamp) -> Duration {
    let start: Timestamp = START.parse().expect("start");
    Duration::try_from(now.duration_since(start)).expect("after start")
}

/// Records every distinct version of the evictor's entry of [`EVICTION`].
fn record(cluster: &Cluster) -> Arc<Mutex<Vec<Seen>>> {
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let out = seen.clone();
    let api = cluster.api::<Eviction>();
    let clock = cluster.clock.clone();
    tokio::spawn(async move {
        let config = watcher::Config::default().fields(&format!("metadata.name={EVICTION}"));
        let mut stream = watcher::watcher(api, config).applied_objects().boxed();
        while let Some(Ok(ev)) = stream.next().await {
            let entry = ev
                .status
                .and_then(|s| s.responders)
                .and_then(|r| r.into_iter().find(|r| r.name == EVICTOR));
            if let Some(entry) = entry {
                let mut seen = out.lock().expect("lock");
                if seen.last().map(|s| &s.entry) != Some(&entry) {
                    seen.push(Seen {
                        at: elapsed(clock.now()),
                        entry,
                    });
                }
            }
        }
    });
    seen
}

fn snapshot(seen: &Arc<Mutex<Vec<Seen>>>) -> Vec<Seen> {
    seen.lock().expect("lock").clone()
}

async fn wait_message(seen: &Arc<Mutex<Vec<Seen>>>, what: &str, limit: Duration) -> Seen {
    eventually(what, limit, || async {
        snapshot(seen)
            .into_iter()
            .find(|s| s.message().contains(what))
    })
    .await
}

fn condition(pod: &Pod, type_: &str) -> Option<(String, Option<String>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

/// The kubelet confirms the deletion of a terminating pod.
async fn kubelet_removes(cluster: &Cluster, name: &str) {
    cluster
        .api::<Pod>()
        .delete(
            name,
            &DeleteParams {
                grace_period_seconds: Some(0),
                ..DeleteParams::default()
            },
        )
        .await
        .expect("grace-0 delete");
}

const MARKED: &str = "\"web-0\" pod has been been marked for deletion via the /eviction subresource and will be terminated gracefully";
const TERMINATING: &str = "\"web-0\" pod has been been marked for deletion via the /eviction subresource and is being terminated gracefully";
const DELETED: &str = "\"web-0\" pod has been deleted and fully terminated";

#[tokio::test(start_paused = true)]
async fn evicts_an_unprotected_pod_and_completes_when_it_is_gone() {
    let cluster = Cluster::start(&[Component::ImperativeEvictor, Component::Disruption], &[]).await;
    let seen = record(&cluster);
    let pod = ready_pod(&cluster, "web-0", 600).await;
    let _ = activated_eviction(&cluster, &pod).await;
    let started = cluster.elapsed();

    let marked = wait_message(
        &seen,
        "will be terminated gracefully",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(marked.message(), MARKED);
    assert_eq!(marked.at, started, "evicted at once");
    let evicted = cluster.api::<Pod>().get("web-0").await.expect("pod");
    let deletion = evicted
        .metadata
        .deletion_timestamp
        .clone()
        .expect("deletionTimestamp");
    assert_eq!(elapsed(deletion.0), started + Duration::from_secs(600));
    assert_eq!(
        condition(&evicted, "DisruptionTarget"),
        Some(("True".into(), Some("EvictionByEvictionAPI".into())))
    );

    // The pod's deletionTimestamp re-queues the Eviction: terminating, with
    // the deletion as the expected completion.
    let terminating = wait_message(&seen, "is being terminated", Duration::from_secs(10)).await;
    assert_eq!(terminating.message(), TERMINATING);
    assert_eq!(terminating.at, started);
    assert_eq!(terminating.entry.expected_completion_time, Some(deletion));
    assert_eq!(terminating.entry.completion_time, None);

    // Heartbeats every 3 minutes while the pod terminates.
    tokio::time::sleep(Duration::from_secs(7 * 60)).await;
    let beats: Vec<Duration> = snapshot(&seen)
        .iter()
        .filter(|s| s.message() == TERMINATING)
        .map(|s| s.at - started)
        .collect();
    assert_eq!(
        beats,
        [0, 180, 360].map(Duration::from_secs),
        "terminating writes"
    );

    kubelet_removes(&cluster, "web-0").await;
    let removed_at = cluster.elapsed();
    let done = wait_message(
        &seen,
        "deleted and fully terminated",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(done.message(), DELETED);
    assert_eq!(done.at, removed_at);
    let completion = done.entry.completion_time.clone().expect("completionTime");
    assert_eq!(
        done.entry.expected_completion_time,
        Some(completion.clone())
    );
    assert_eq!(done.entry.heartbeat_time, Some(completion.clone()));
    assert_eq!(elapsed(completion.0).as_secs(), removed_at.as_secs());

    // Nothing more is written after completion.
    tokio::time::sleep(Duration::from_secs(10 * 60)).await;
    let all = snapshot(&seen);
    assert_eq!(all.last().map(Seen::message), Some(DELETED));
    let messages: Vec<&str> = all.iter().map(Seen::message).collect();
    assert_eq!(
        messages.first(),
        Some(&""),
        "the controller's initial entry"
    );
    assert_eq!(messages.iter().filter(|m| **m == MARKED).count(), 1);
    assert_eq!(messages.iter().filter(|m| **m == DELETED).count(), 1);
    assert!(
        !cluster
            .ctx
            .metrics
            .encode()
            .contains("failed_evictions_total{"),
        "no failed attempt counted"
    );
}

#[tokio::test(start_paused = true)]
async fn a_budget_blocks_with_back_off_until_another_pod_is_ready() {
    let cluster = Cluster::start(&[Component::ImperativeEvictor, Component::Disruption], &[]).await;
    let seen = record(&cluster);
    let pod = ready_pod(&cluster, "web-0", 30).await;
    let _ = ready_pod(&cluster, "web-1", 30).await;
    let _: PodDisruptionBudget = cluster
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .await;
    let pdbs = cluster.api::<PodDisruptionBudget>();
    eventually("PDB status written", Duration::from_secs(10), || async {
        let s = pdbs.get("web").await.expect("pdb").status?;
        (s.observed_generation == Some(1) && s.current_healthy == Some(2)).then_some(())
    })
    .await;

    let _ = activated_eviction(&cluster, &pod).await;
    let started = cluster.elapsed();
    let refused = "\"web-0\" pod deletion via the /eviction subresource failed (attempts=8): Cannot evict pod as it would violate the pod's disruption budget.";
    wait_message(&seen, "(attempts=8)", Duration::from_secs(700)).await;
    let all = snapshot(&seen);
    // Every write: (seconds after activation, attempts in its message).
    let writes: Vec<(u64, u64)> = all
        .iter()
        .map(|s| ((s.at - started).as_secs(), recorded_attempts(s.message())))
        .collect();
    assert_eq!(
        writes,
        [
            (0, 0),
            (0, 1),
            (5, 2),
            (15, 3),
            (35, 4),
            (75, 5),
            (155, 6),
            (315, 7),
            (495, 7),
            (635, 8)
        ]
    );
    assert_eq!(
        all.iter()
            .find(|s| s.message().contains("(attempts=8)"))
            .map(Seen::message),
        Some(refused)
    );
    // The instant of each failed call, from the first write of its count.
    let attempt_at = |n: u64| {
        all.iter()
            .find(|s| s.message().contains(&format!("(attempts={n})")))
            .map(|s| s.at - started)
            .expect("attempt seen")
    };
    let attempts: Vec<u64> = (1..=8).map(|n| attempt_at(n).as_secs()).collect();
    // Waits 5 s, 10 s, 20 s, 40 s, 80 s, 160 s, 320 s.
    assert_eq!(attempts, [0, 5, 15, 35, 75, 155, 315, 635]);
    for n in 1..=8 {
        assert_eq!(attempt_at(n).subsec_nanos(), 0, "attempt {n} on the second");
    }
    // Heartbeats: no two writes more than 3 min apart; the 320 s wait got one.
    let writes: Vec<Duration> = all.iter().map(|s| s.at - started).collect();
    for pair in writes.windows(2) {
        assert!(pair[1] - pair[0] <= Duration::from_secs(180), "{writes:?}");
    }
    let beat_in_wait: Vec<&Seen> = all
        .iter()
        .filter(|s| s.message().contains("(attempts=7)"))
        .collect();
    assert_eq!(
        beat_in_wait
            .iter()
            .map(|s| (s.at - started).as_secs())
            .collect::<Vec<_>>(),
        [315, 495],
        "attempt 7 written, then one heartbeat 3 min later"
    );
    assert_eq!(
        condition(
            &cluster.api::<Pod>().get("web-0").await.expect("pod"),
            "DisruptionTarget"
        ),
        None,
        "a refused eviction marks nothing"
    );
    let metrics = cluster.ctx.metrics.encode();
    assert!(
        metrics.contains(
            "imperative_eviction_responder_controller_failed_evictions_total{namespace=\"default\",eviction=\"pod-1-web-0\",pod=\"web-0\"} 8"
        ),
        "{metrics}"
    );

    // Another pod becomes ready: the budget allows one disruption, and the
    // next call (after the 10-minute cap... here 5 s × 2^7 = 640 s → 600 s)
    // succeeds.
    let _ = ready_pod(&cluster, "web-2", 30).await;
    eventually("PDB allows one", Duration::from_secs(10), || async {
        let s = pdbs.get("web").await.expect("pdb").status?;
        (s.disruptions_allowed == Some(1)).then_some(())
    })
    .await;
    let marked = wait_message(
        &seen,
        "will be terminated gracefully",
        Duration::from_secs(700),
    )
    .await;
    assert_eq!(marked.message(), MARKED);
    assert_eq!(marked.at - started, Duration::from_secs(635 + 600));
    let evicted = cluster.api::<Pod>().get("web-0").await.expect("pod");
    assert!(evicted.metadata.deletion_timestamp.is_some());
    assert_eq!(
        condition(&evicted, "DisruptionTarget"),
        Some(("True".into(), Some("EvictionByEvictionAPI".into())))
    );
    let metrics = cluster.ctx.metrics.encode();
    assert!(
        metrics.contains("pod=\"web-0\"} 8"),
        "no more failures: {metrics}"
    );

    kubelet_removes(&cluster, "web-0").await;
    let done = wait_message(
        &seen,
        "deleted and fully terminated",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(done.message(), DELETED);
    assert!(done.entry.completion_time.is_some());
}

#[tokio::test(start_paused = true)]
async fn attempts_survive_a_restart_only_in_the_message() {
    let mut cluster =
        Cluster::start(&[Component::ImperativeEvictor, Component::Disruption], &[]).await;
    let seen = record(&cluster);
    let pod = ready_pod(&cluster, "web-0", 30).await;
    let _: PodDisruptionBudget = cluster
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .await;
    let pdbs = cluster.api::<PodDisruptionBudget>();
    eventually("PDB status written", Duration::from_secs(10), || async {
        let s = pdbs.get("web").await.expect("pdb").status?;
        (s.current_healthy == Some(1)).then_some(())
    })
    .await;
    let _ = activated_eviction(&cluster, &pod).await;
    let started = cluster.elapsed();
    wait_message(&seen, "(attempts=3)", Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Restarted before attempt 4 is due (35 s): the in-memory attempt time is lost, the count is not.
    cluster.restart_components().await;
    let restarted = cluster.elapsed() - started;
    wait_message(&seen, "(attempts=5)", Duration::from_secs(120)).await;
    let at = |n: u64| {
        snapshot(&seen)
            .iter()
            .find(|s| recorded_attempts(s.message()) == n)
            .map(|s| s.at - started)
            .expect("attempt seen")
    };
    assert!(
        restarted < Duration::from_secs(35),
        "before the next due call"
    );
    assert_eq!(at(4), restarted, "first retry after a restart is immediate");
    assert_eq!(at(5), restarted + Duration::from_secs(40), "then 5 s × 2^3");
    let metrics = cluster.ctx.metrics.encode();
    assert!(
        metrics.contains("pod=\"web-0\"} 2"),
        "a fresh process counts its own failures: {metrics}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_budget_still_being_processed_suggests_a_delay() {
    // No disruption controller: the budget's status never observes its
    // generation, and the server answers 429 with Retry-After 10 s.
    let cluster = Cluster::start(&[Component::ImperativeEvictor], &[]).await;
    let seen = record(&cluster);
    let pod = ready_pod(&cluster, "web-0", 30).await;
    let _: PodDisruptionBudget = cluster
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .await;
    let _ = activated_eviction(&cluster, &pod).await;
    let started = cluster.elapsed();
    wait_message(&seen, "(attempts=4)", Duration::from_secs(120)).await;
    let all = snapshot(&seen);
    let first = all
        .iter()
        .find(|s| recorded_attempts(s.message()) == 1)
        .expect("attempt 1");
    assert!(
        first.message().ends_with(
            "failed (attempts=1): Cannot evict pod as it would violate the pod's disruption budget."
        ),
        "{}",
        first.message()
    );
    let writes: Vec<(u64, u64)> = all
        .iter()
        .map(|s| ((s.at - started).as_secs(), recorded_attempts(s.message())))
        .collect();
    // The suggested 10 s beats the 5 s back-off once; 20 s beats it after.
    assert_eq!(writes, [(0, 0), (0, 1), (10, 2), (20, 3), (40, 4)]);
}

#[tokio::test(start_paused = true)]
async fn a_canceled_responder_stops_retrying() {
    let cluster = Cluster::start(&[Component::ImperativeEvictor, Component::Disruption], &[]).await;
    let seen = record(&cluster);
    let pod = ready_pod(&cluster, "web-0", 30).await;
    let _: PodDisruptionBudget = cluster
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .await;
    let pdbs = cluster.api::<PodDisruptionBudget>();
    eventually("PDB status written", Duration::from_secs(10), || async {
        let s = pdbs.get("web").await.expect("pdb").status?;
        (s.current_healthy == Some(1)).then_some(())
    })
    .await;
    let _ = activated_eviction(&cluster, &pod).await;
    wait_message(&seen, "(attempts=2)", Duration::from_secs(60)).await;
    // The evictionrequest-controller cancels (no requester with intent
    // Eviction left): the responder is Canceled, Failed=True.
    let now = cluster.now().to_string();
    cluster
        .api::<Eviction>()
        .patch_status(
            EVICTION,
            &PatchParams::apply("evictionrequest-controller").force(),
            &Patch::Apply(json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
                "metadata": {"name": EVICTION, "namespace": "default"},
                "status": {
                    "observedGeneration": 1,
                    "conditions": [
                        {"type": "TargetEvicted", "status": "False", "reason": "AwaitingEviction",
                         "message": "", "lastTransitionTime": now, "observedGeneration": 1},
                        {"type": "Failed", "status": "True", "reason": "CanceledDueToNoRequesters",
                         "message": "No active requesters with eviction intent.",
                         "lastTransitionTime": now, "observedGeneration": 1}
                    ],
                    "targetResponders": [{"name": EVICTOR, "priority": 100, "state": "Canceled"}]
                }
            })),
        )
        .await
        .expect("cancel");
    let before = snapshot(&seen).len();
    tokio::time::sleep(Duration::from_secs(20 * 60)).await;
    let after = snapshot(&seen);
    assert_eq!(after.len(), before, "no write after the cancel: {after:?}");
    assert_eq!(
        after.last().map(|s| recorded_attempts(s.message())),
        Some(2)
    );
    let metrics = cluster.ctx.metrics.encode();
    assert!(metrics.contains("pod=\"web-0\"} 2"), "{metrics}");
    let pod = cluster.api::<Pod>().get("web-0").await.expect("pod");
    assert!(pod.metadata.deletion_timestamp.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_pod_that_terminates_by_itself_completes_the_responder() {
    let cluster = Cluster::start(&[Component::ImperativeEvictor, Component::Disruption], &[]).await;
    let seen = record(&cluster);
    let pod = ready_pod(&cluster, "web-0", 30).await;
    let _: PodDisruptionBudget = cluster
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .await;
    let pdbs = cluster.api::<PodDisruptionBudget>();
    eventually("PDB status written", Duration::from_secs(10), || async {
        let s = pdbs.get("web").await.expect("pdb").status?;
        (s.current_healthy == Some(1)).then_some(())
    })
    .await;
    let _ = activated_eviction(&cluster, &pod).await;
    wait_message(&seen, "(attempts=3)", Duration::from_secs(60)).await;
    // The container exits: the pod turns Succeeded while the evictor waits
    // 20 s for its next call; the phase change re-queues it at once.
    cluster
        .api::<Pod>()
        .patch_status(
            "web-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Succeeded"}})),
        )
        .await
        .expect("pod status");
    let terminal_at = cluster.elapsed();
    let done = wait_message(&seen, "fully terminated", Duration::from_secs(10)).await;
    assert_eq!(
        done.message(),
        "\"web-0\" pod has been fully terminated (pod phase=\"Succeeded\")"
    );
    assert_eq!(done.at, terminal_at);
    assert!(done.entry.completion_time.is_some());
    tokio::time::sleep(Duration::from_secs(10 * 60)).await;
    assert_eq!(
        snapshot(&seen).last().map(Seen::message),
        Some(done.message())
    );
    let metrics = cluster.ctx.metrics.encode();
    assert!(metrics.contains("pod=\"web-0\"} 3"), "{metrics}");
}
