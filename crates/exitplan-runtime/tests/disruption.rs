//! The disruption controller through kube-rs in virtual time: a
//! PodDisruptionBudget's status follows its pods becoming ready and unready,
//! spec changes and pod deletions; stale `DisruptionTarget` conditions are
//! reset after two minutes.

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;
use support::{Cluster, eventually};

use exitplan_runtime::runtime::Component;

fn pod(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}
    })
}

async fn set_ready(cluster: &Cluster, name: &str, ready: bool) {
    let status = if ready { "True" } else { "False" };
    cluster
        .api::<Pod>()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": status, "lastTransitionTime": cluster.now().to_string()}
            ]}})),
        )
        .await
        .expect("pod status");
}

/// (currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed,
/// observedGeneration, DisruptionAllowed status/reason).
type Summary = (i32, i32, i32, i32, i64, String);

fn summary(pdb: &PodDisruptionBudget) -> Summary {
    let s = pdb.status.clone().unwrap_or_default();
    let cond = s
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "DisruptionAllowed")
        .map(|c| format!("{}/{}", c.status, c.reason))
        .unwrap_or_default();
    (
        s.current_healthy.unwrap_or(-1),
        s.desired_healthy.unwrap_or(-1),
        s.expected_pods.unwrap_or(-1),
        s.disruptions_allowed.unwrap_or(-1),
        s.observed_generation.unwrap_or(0),
        cond,
    )
}

async fn wait_for(cluster: &Cluster, want: (i32, i32, i32, i32, i64, &str)) {
    let want: Summary = (want.0, want.1, want.2, want.3, want.4, want.5.to_owned());
    let api = cluster.api::<PodDisruptionBudget>();
    let mut got = None;
    for _ in 0..30 {
        let now = summary(&api.get("web").await.expect("get pdb"));
        if now == want {
            return;
        }
        got = Some(now);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    panic!("PDB status never became {want:?}; last seen {got:?}");
}

#[tokio::test(start_paused = true)]
async fn pdb_status_follows_pod_readiness() {
    let cluster = Cluster::start(&[Component::Disruption], &[]).await;
    let _: PodDisruptionBudget = cluster
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .await;
    wait_for(&cluster, (0, 2, 0, 0, 1, "False/InsufficientPods")).await;
    for name in ["web-0", "web-1", "web-2"] {
        let _: Pod = cluster.create(pod(name)).await;
    }
    // A pod the selector does not match changes nothing.
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "other", "namespace": "default", "labels": {"app": "db"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    wait_for(&cluster, (0, 2, 3, 0, 1, "False/InsufficientPods")).await;

    set_ready(&cluster, "web-0", true).await;
    set_ready(&cluster, "web-1", true).await;
    set_ready(&cluster, "other", true).await;
    wait_for(&cluster, (2, 2, 3, 0, 1, "False/InsufficientPods")).await;

    set_ready(&cluster, "web-2", true).await;
    wait_for(&cluster, (3, 2, 3, 1, 1, "True/SufficientPods")).await;

    set_ready(&cluster, "web-1", false).await;
    wait_for(&cluster, (2, 2, 3, 0, 1, "False/InsufficientPods")).await;

    // A spec change bumps the generation; the status observes it.
    cluster
        .api::<PodDisruptionBudget>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"minAvailable": 1}})),
        )
        .await
        .expect("patch pdb");
    wait_for(&cluster, (2, 1, 3, 1, 2, "True/SufficientPods")).await;

    // An unscheduled pod is deleted at once: one pod fewer expected.
    cluster
        .api::<Pod>()
        .delete("web-0", &DeleteParams::default())
        .await
        .expect("delete pod");
    wait_for(&cluster, (1, 1, 2, 0, 2, "False/InsufficientPods")).await;
}

#[tokio::test(start_paused = true)]
async fn stale_disruption_target_is_reset_after_two_minutes() {
    let cluster = Cluster::start(&[Component::Disruption], &[]).await;
    let _: Pod = cluster.create(pod("web-0")).await;
    cluster
        .api::<Pod>()
        .patch_status(
            "web-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running", "conditions": [{
                "type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
                "lastTransitionTime": cluster.now().to_string()
            }]}})),
        )
        .await
        .expect("pod status");
    let condition = |p: &Pod| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "DisruptionTarget").cloned())
            .expect("DisruptionTarget condition")
    };
    tokio::time::sleep(Duration::from_secs(119)).await;
    let pod = cluster.api::<Pod>().get("web-0").await.expect("pod");
    assert_eq!(condition(&pod).status, "True", "still standing at 119 s");
    let set = condition(&pod).last_transition_time.expect("set time").0;
    let c = eventually(
        "DisruptionTarget=False",
        Duration::from_secs(10),
        || async {
            let pod = cluster.api::<Pod>().get("web-0").await.expect("pod");
            let c = condition(&pod);
            (c.status == "False").then_some(c)
        },
    )
    .await;
    assert_eq!(c.reason, None);
    assert_eq!(c.message, None);
    let reset = c.last_transition_time.expect("reset time").0;
    assert_eq!(
        reset.duration_since(set),
        jiff::SignedDuration::from_secs(120),
        "reset two minutes after it was set"
    );
}
