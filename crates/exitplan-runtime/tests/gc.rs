//! The garbage collector through kube-rs in virtual time: Evictions owned by
//! EvictionRequests (references to deleted owners are stripped, the last one
//! gone deletes the Eviction, orphan propagation keeps it) and Pods owned by
//! Jobs (foreground propagation).

mod support;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use kube::api::{DeleteParams, PropagationPolicy};
use kube::{Resource, ResourceExt};
use serde_json::json;
use support::{Cluster, eventually};

use exitplan_runtime::runtime::Component;

const POD_UID: &str = "6b1f3f4e-2c4d-4b8a-9e4f-1d2c3b4a5f60";

async fn request(cluster: &Cluster, name: &str, requester: &str) -> EvictionRequest {
    cluster
        .create(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "requester": requester,
                "intent": "Eviction",
                "target": {"pod": {"name": "web-0", "uid": POD_UID}}
            }
        }))
        .await
}

fn owner_ref<K: Resource<DynamicType = ()>>(owner: &K) -> serde_json::Value {
    json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "name": owner.name_any(),
        "uid": owner.uid().expect("uid"),
        "blockOwnerDeletion": true,
    })
}

async fn eviction(cluster: &Cluster, name: &str, owners: Vec<serde_json::Value>) -> Eviction {
    cluster
        .create(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owners},
            "spec": {"target": {"pod": {"name": "web-0", "uid": POD_UID}}}
        }))
        .await
}

fn owner_names(e: &Eviction) -> Vec<String> {
    e.owner_references()
        .iter()
        .map(|r| r.name.clone())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn an_eviction_goes_once_all_its_requests_are_gone() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let a = request(&cluster, "a", "drain.example.com/a").await;
    let b = request(&cluster, "b", "drain.example.com/b").await;
    let ev = eviction(&cluster, "pod-1-web-0", vec![owner_ref(&a), owner_ref(&b)]).await;
    // Both owners live: nothing happens.
    tokio::time::sleep(Duration::from_secs(30)).await;
    let api = cluster.api::<Eviction>();
    let now = api.get("pod-1-web-0").await.expect("eviction");
    assert_eq!(now.resource_version(), ev.resource_version(), "untouched");

    let requests = cluster.api::<EvictionRequest>();
    requests
        .delete("a", &DeleteParams::default())
        .await
        .expect("delete a");
    let stripped = eventually(
        "reference to a stripped",
        Duration::from_secs(30),
        || async {
            let e = api.get("pod-1-web-0").await.expect("eviction");
            (owner_names(&e) == ["b"]).then_some(e)
        },
    )
    .await;
    assert_eq!(stripped.owner_references()[0].uid, b.uid().expect("uid"));

    requests
        .delete("b", &DeleteParams::default())
        .await
        .expect("delete b");
    eventually("eviction deleted", Duration::from_secs(30), || async {
        api.get_opt("pod-1-web-0")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn replaced_missing_and_unknown_owners() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let api = cluster.api::<Eviction>();
    // An owner that never existed (same name, other UID than any object).
    let a = request(&cluster, "a", "drain.example.com/a").await;
    let mut stale = owner_ref(&a);
    stale["uid"] = "00000000-0000-0000-0000-000000000000".into();
    let _ = eviction(&cluster, "stale", vec![stale]).await;
    // Owners of kinds the collector does not know, and no owners at all.
    let unknown =
        json!({"apiVersion": "example.com/v1", "kind": "Thing", "name": "t", "uid": "u-1"});
    let _ = eviction(&cluster, "unknown", vec![unknown]).await;
    let _ = eviction(&cluster, "ownerless", vec![]).await;
    eventually(
        "stale-owned eviction deleted",
        Duration::from_secs(30),
        || async {
            api.get_opt("stale")
                .await
                .expect("get")
                .is_none()
                .then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(api.get_opt("unknown").await.expect("get").is_some());
    assert!(api.get_opt("ownerless").await.expect("get").is_some());
}

#[tokio::test(start_paused = true)]
async fn orphan_propagation_keeps_the_dependent() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let a = request(&cluster, "a", "drain.example.com/a").await;
    let _ = eviction(&cluster, "pod-1-web-0", vec![owner_ref(&a)]).await;
    let requests = cluster.api::<EvictionRequest>();
    requests
        .delete(
            "a",
            &DeleteParams {
                propagation_policy: Some(PropagationPolicy::Orphan),
                ..DeleteParams::default()
            },
        )
        .await
        .expect("delete a");
    eventually("request gone", Duration::from_secs(30), || async {
        requests
            .get_opt("a")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
    let api = cluster.api::<Eviction>();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let kept = api.get("pod-1-web-0").await.expect("eviction kept");
    assert!(kept.owner_references().is_empty(), "released: {kept:?}");
    assert!(kept.metadata.deletion_timestamp.is_none());
}

#[tokio::test(start_paused = true)]
async fn foreground_deletion_deletes_dependents_first() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let job: Job = cluster
        .create(json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox"}]
            }}}
        }))
        .await;
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "j-0", "namespace": "default", "ownerReferences": [owner_ref(&job)]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let jobs = cluster.api::<Job>();
    jobs.delete(
        "j",
        &DeleteParams {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..DeleteParams::default()
        },
    )
    .await
    .expect("delete job");
    eventually("job gone", Duration::from_secs(30), || async {
        jobs.get_opt("j")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
    assert!(
        cluster
            .api::<Pod>()
            .get_opt("j-0")
            .await
            .expect("get")
            .is_none(),
        "the dependent went first"
    );
}

// ---------------------------------------------------------------------------
// End to end: the evictionrequest-controller creates the Eviction (owned by
// the requests), the garbage collector removes it once they are all deleted.
// ---------------------------------------------------------------------------

/// Every change to Evictions a watch sees: (name, "apply"/"delete",
/// deletionTimestamp set, finalizers).
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, &'static str, bool, Vec<String>)>>>;

fn watch_evictions(cluster: &Cluster) -> Seen {
    use futures_util::StreamExt;
    use kube::runtime::watcher;
    let seen: Seen = Seen::default();
    let api = cluster.api::<Eviction>();
    let out = seen.clone();
    tokio::spawn(async move {
        let mut stream = watcher::watcher(api, watcher::Config::default()).boxed();
        while let Some(event) = stream.next().await {
            let (e, kind) = match event {
                Ok(watcher::Event::Apply(e) | watcher::Event::InitApply(e)) => (e, "apply"),
                Ok(watcher::Event::Delete(e)) => (e, "delete"),
                _ => continue,
            };
            out.lock().expect("seen").push((
                e.name_any(),
                kind,
                e.metadata.deletion_timestamp.is_some(),
                e.finalizers().to_vec(),
            ));
        }
    });
    seen
}

async fn live_pod(cluster: &Cluster, name: &str) -> Pod {
    let pod: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "evictionResponders": [{"name": "example.com/drain", "priority": 10000}],
            }
        }))
        .await;
    let key = exitplan_runtime::informer::ObjectKey::new(Some("default"), name);
    eventually(
        "pod in the controller's cache",
        Duration::from_secs(5),
        || async { cluster.ctx.informers.pods.get(&key).map(|_| ()) },
    )
    .await;
    pod
}

async fn request_for(cluster: &Cluster, name: &str, requester: &str, pod: &Pod) -> EvictionRequest {
    cluster
        .create(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "requester": requester,
                "intent": "Eviction",
                "target": {"pod": {"name": pod.name_any(), "uid": pod.uid().expect("uid")}}
            }
        }))
        .await
}

/// The owners (name, uid) of Eviction `name`, once they are `want`.
async fn owners_become(cluster: &Cluster, name: &str, want: &[&EvictionRequest]) -> Eviction {
    let want: Vec<(String, String)> = want
        .iter()
        .map(|r| (r.name_any(), r.uid().expect("uid")))
        .collect();
    let api = cluster.api::<Eviction>();
    eventually(
        &format!("{name} owned by {want:?}"),
        Duration::from_secs(30),
        || async {
            let e = api.get_opt(name).await.expect("get")?;
            let mut have: Vec<(String, String)> = e
                .owner_references()
                .iter()
                .map(|r| (r.name.clone(), r.uid.clone()))
                .collect();
            have.sort();
            (have == want).then_some(e)
        },
    )
    .await
}

async fn gone(cluster: &Cluster, name: &str) {
    let api = cluster.api::<Eviction>();
    eventually(
        &format!("{name} deleted"),
        Duration::from_secs(30),
        || async {
            api.get_opt(name)
                .await
                .expect("get")
                .is_none()
                .then_some(())
        },
    )
    .await;
}

fn background() -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    }
}

#[tokio::test(start_paused = true)]
async fn the_controllers_eviction_is_collected_once_its_only_request_is_deleted() {
    let cluster = Cluster::start(
        &[Component::EvictionRequest, Component::GarbageCollector],
        &[],
    )
    .await;
    let seen = watch_evictions(&cluster);
    let pod = live_pod(&cluster, "web").await;
    let a = request_for(&cluster, "req-a", "acme.io/drain", &pod).await;
    // The controller's Eviction, owned by the request (an ownerReference
    // without controller/blockOwnerDeletion, §7.3).
    let e = owners_become(&cluster, "pod-1-web", &[&a]).await;
    let owner = &e.owner_references()[0];
    assert_eq!(
        (owner.api_version.as_str(), owner.kind.as_str()),
        ("lifecycle.k8s.io/v1alpha1", "EvictionRequest")
    );
    // Owned and live: the collector leaves it alone.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(
        cluster
            .api::<Eviction>()
            .get_opt("pod-1-web")
            .await
            .expect("get")
            .is_some()
    );

    let requests = cluster.api::<EvictionRequest>();
    requests
        .delete("req-a", &background())
        .await
        .expect("delete req-a");
    // Background: the request goes at once, its dependent after it.
    assert!(requests.get_opt("req-a").await.expect("get").is_none());
    gone(&cluster, "pod-1-web").await;

    // Deleted outright (no foregroundDeletion/orphan stage), not recreated,
    // and the pod itself untouched.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let seen = seen.lock().expect("seen").clone();
    assert!(
        seen.iter()
            .all(|(_, _, deleting, finalizers)| !deleting && finalizers.is_empty()),
        "{seen:?}"
    );
    assert_eq!(
        seen.last().map(|s| (s.0.as_str(), s.1)),
        Some(("pod-1-web", "delete")),
        "{seen:?}"
    );
    assert!(
        cluster
            .api::<Eviction>()
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
    let still = cluster.api::<Pod>().get("web").await.expect("pod kept");
    assert_eq!(still.uid(), pod.uid());
    assert!(still.metadata.deletion_timestamp.is_none());
}

#[tokio::test(start_paused = true)]
async fn two_requests_for_one_pod_share_the_eviction_until_both_are_deleted() {
    let cluster = Cluster::start(
        &[Component::EvictionRequest, Component::GarbageCollector],
        &[],
    )
    .await;
    let pod = live_pod(&cluster, "web").await;
    let a = request_for(&cluster, "req-a", "acme.io/drain", &pod).await;
    let b = request_for(&cluster, "req-b", "other.io/upgrade", &pod).await;
    // One Eviction for the pod, owned by both requests.
    let e = owners_become(&cluster, "pod-1-web", &[&a, &b]).await;
    let uid = e.uid();

    // The first one deleted: the Eviction stays (the same object), owned by
    // the other request only.
    let requests = cluster.api::<EvictionRequest>();
    requests
        .delete("req-a", &background())
        .await
        .expect("delete req-a");
    let kept = owners_become(&cluster, "pod-1-web", &[&b]).await;
    assert_eq!(kept.uid(), uid);
    tokio::time::sleep(Duration::from_secs(60)).await;
    let kept = cluster
        .api::<Eviction>()
        .get("pod-1-web")
        .await
        .expect("kept");
    assert_eq!(kept.uid(), uid);
    assert!(kept.metadata.deletion_timestamp.is_none());
    assert_eq!(owner_names(&kept), ["req-b"]);

    // The second one deleted: the Eviction goes, and no other appears.
    requests
        .delete("req-b", &background())
        .await
        .expect("delete req-b");
    gone(&cluster, "pod-1-web").await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(
        cluster
            .api::<Eviction>()
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
    assert!(
        cluster
            .api::<Pod>()
            .get_opt("web")
            .await
            .expect("get")
            .is_some()
    );
}
