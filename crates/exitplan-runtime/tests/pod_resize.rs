//! The simulated kubelet against the server's pod status rules: its whole
//! status writes keep the QoS class the server stored on create, it reports
//! the resources its containers run with, so `pods/resize` accepts an
//! in-place resize of a running pod, and it then reports the new values.

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use exitplan_runtime::runtime::Component;
use support::{Cluster, eventually};

const LIMIT: Duration = Duration::from_secs(600);

fn reported_cpu(p: &Pod) -> Option<String> {
    let s = p.status.as_ref()?.container_statuses.as_ref()?.first()?;
    let r = s.resources.as_ref()?;
    Some(r.requests.as_ref()?.get("cpu")?.0.clone())
}

#[tokio::test(start_paused = true)]
async fn running_pods_keep_their_qos_class_and_resize_in_place() {
    let cluster = Cluster::start(&[Component::Scheduler], &["node-1"]).await;
    let created: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "sized", "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "busybox",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                              "limits": {"cpu": "200m", "memory": "128Mi"}}}]}
        }))
        .await;
    let qos = |p: &Pod| p.status.as_ref().and_then(|s| s.qos_class.clone());
    assert_eq!(qos(&created).as_deref(), Some("Burstable"));

    let api = cluster.api::<Pod>();
    let running = eventually("sized Running with reported resources", LIMIT, || async {
        api.get_opt("sized").await.expect("get").filter(|p| {
            p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                && reported_cpu(p).is_some()
        })
    })
    .await;
    assert_eq!(qos(&running).as_deref(), Some("Burstable"));
    assert_eq!(reported_cpu(&running).as_deref(), Some("100m"));

    let patch = json!({"spec": {"containers": [{"name": "main",
        "resources": {"requests": {"cpu": "150m"}}}]}});
    let resized = api
        .patch_subresource(
            "resize",
            "sized",
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
        .expect("resize accepted");
    assert_eq!(
        resized
            .spec
            .as_ref()
            .map(|s| s.containers[0].resources.clone()),
        Some(Some(
            serde_json::from_value(json!({
                "requests": {"cpu": "150m", "memory": "64Mi"},
                "limits": {"cpu": "200m", "memory": "128Mi"}
            }))
            .expect("resources")
        ))
    );
    let after = eventually("the kubelet reports the new cpu request", LIMIT, || async {
        api.get_opt("sized")
            .await
            .expect("get")
            .filter(|p| reported_cpu(p).as_deref() == Some("150m"))
    })
    .await;
    assert_eq!(qos(&after).as_deref(), Some("Burstable"));
}
