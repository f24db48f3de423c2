//! The test harness itself: a cluster starts in virtual time, components
//! restart with fresh caches that list what the server already holds.

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;
use support::{Cluster, eventually};

fn pod(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}
    })
}

#[tokio::test(start_paused = true)]
async fn restarted_components_see_existing_objects() {
    let mut cluster = Cluster::start(&[], &[]).await;
    let _: Pod = cluster.create(pod("a")).await;
    cluster.restart_components().await;
    let key = exitplan_runtime::informer::ObjectKey::new(Some("default"), "a");
    assert!(cluster.ctx.informers.pods.get(&key).is_some());
    let before = cluster.elapsed();
    tokio::time::sleep(Duration::from_secs(1200)).await;
    assert_eq!(cluster.elapsed() - before, Duration::from_secs(1200));
    let found = eventually("pod b in the cache", Duration::from_secs(30), || async {
        cluster
            .ctx
            .informers
            .pods
            .get(&exitplan_runtime::informer::ObjectKey::new(
                Some("default"),
                "b",
            ))
    });
    let _: Pod = cluster.create(pod("b")).await;
    assert!(found.await.metadata.name.as_deref() == Some("b"));
}
