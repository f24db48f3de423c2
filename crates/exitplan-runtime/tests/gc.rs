//! The garbage collector through kube-rs in virtual time: Evictions owned by
//! EvictionRequests (references to deleted owners are stripped, the last one
//! gone deletes the Eviction, orphan propagation keeps it) and Pods owned by
//! Jobs (foreground propagation); the kinds found by discovery: ConfigMaps
//! owned by Deployments and by custom resources of CRDs installed while the
//! collector runs.

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

// ---------------------------------------------------------------------------
// Owner finalizers of every kind: `kubectl delete --cascade=foreground|orphan`
// of pods, nodes, namespaces, leases, events and jobs.
// ---------------------------------------------------------------------------

fn with_policy(policy: PropagationPolicy) -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(policy),
        ..DeleteParams::default()
    }
}

/// Waits until `get` answers `None` (the object left storage).
async fn until_gone<K, F, Fut>(what: &str, get: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<K>>,
    K: std::fmt::Debug,
{
    eventually(&format!("{what} gone"), Duration::from_secs(30), || async {
        get().await.is_none().then_some(())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_pod_deleted_in_the_foreground_goes_after_its_dependents() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let pod: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p2", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let _ = eviction(&cluster, "p2-ev", vec![owner_ref(&pod)]).await;
    let pods = cluster.api::<Pod>();
    let marked = pods
        .delete("p2", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete")
        .left()
        .expect("marked, not removed");
    assert_eq!(marked.finalizers(), ["foregroundDeletion"]);
    until_gone("pod", || async { pods.get_opt("p2").await.expect("get") }).await;
    assert!(
        cluster
            .api::<Eviction>()
            .get_opt("p2-ev")
            .await
            .expect("get")
            .is_none(),
        "the blocking dependent went first"
    );
}

#[tokio::test(start_paused = true)]
async fn a_running_pod_deleted_in_the_foreground_goes() {
    // `exitplan up`'s case: a pod on a simulated node, deleted gracefully
    // with `--cascade=foreground`.
    let cluster = Cluster::start(&[Component::GarbageCollector], &["node-1"]).await;
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p2", "namespace": "default"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let pods = cluster.api::<Pod>();
    eventually("pod running", Duration::from_secs(30), || async {
        let p = pods.get("p2").await.expect("get");
        (p.status.and_then(|s| s.phase).as_deref() == Some("Running")).then_some(())
    })
    .await;
    pods.delete("p2", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete");
    eventually("pod gone", Duration::from_secs(60), || async {
        pods.get_opt("p2")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_pod_deleted_with_orphan_releases_its_dependents() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let pod: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p2", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let _ = eviction(&cluster, "p2-ev", vec![owner_ref(&pod)]).await;
    let pods = cluster.api::<Pod>();
    pods.delete("p2", &with_policy(PropagationPolicy::Orphan))
        .await
        .expect("delete");
    until_gone("pod", || async { pods.get_opt("p2").await.expect("get") }).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let kept = cluster
        .api::<Eviction>()
        .get("p2-ev")
        .await
        .expect("dependent kept");
    assert!(kept.owner_references().is_empty(), "released: {kept:?}");
    assert!(kept.metadata.deletion_timestamp.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_job_deleted_with_orphan_leaves_its_pods_without_the_reference() {
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
    let other: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "other", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    for name in ["j-0", "j-1"] {
        let _: Pod = cluster
            .create(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default",
                    "ownerReferences": [owner_ref(&job), owner_ref(&other)]},
                "spec": {"containers": [{"name": "c", "image": "i"}]}
            }))
            .await;
    }
    let jobs = cluster.api::<Job>();
    jobs.delete("j", &with_policy(PropagationPolicy::Orphan))
        .await
        .expect("delete job");
    until_gone("job", || async { jobs.get_opt("j").await.expect("get") }).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    for name in ["j-0", "j-1"] {
        let pod = cluster.api::<Pod>().get(name).await.expect("pod kept");
        let owners: Vec<&str> = pod
            .owner_references()
            .iter()
            .map(|r| r.kind.as_str())
            .collect();
        assert_eq!(owners, ["Pod"], "only the job's reference went: {pod:?}");
        assert!(pod.metadata.deletion_timestamp.is_none());
    }
}

#[tokio::test(start_paused = true)]
async fn a_node_deleted_in_the_foreground_goes_after_its_pods() {
    use k8s_openapi::api::core::v1::Node;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let node: Node = cluster
        .create_cluster(json!({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}
        }))
        .await;
    // A mirror-pod-like dependent: a namespaced object owned by a
    // cluster-scoped one.
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "static-n1", "namespace": "default",
                "ownerReferences": [owner_ref(&node)]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let nodes = cluster.cluster_api::<Node>();
    nodes
        .delete("n1", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete node");
    until_gone("node", || async { nodes.get_opt("n1").await.expect("get") }).await;
    assert!(
        cluster
            .api::<Pod>()
            .get_opt("static-n1")
            .await
            .expect("get")
            .is_none(),
        "the dependent went first"
    );
}

#[tokio::test(start_paused = true)]
async fn a_namespace_deleted_in_the_foreground_goes() {
    use k8s_openapi::api::core::v1::Namespace;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let _: Namespace = cluster
        .create_cluster(json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}
        }))
        .await;
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "team"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let namespaces = cluster.cluster_api::<Namespace>();
    namespaces
        .delete("team", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete namespace");
    until_gone("namespace", || async {
        namespaces.get_opt("team").await.expect("get")
    })
    .await;
    let pods: kube::Api<Pod> = kube::Api::namespaced(cluster.client.clone(), "team");
    assert!(pods.get_opt("p").await.expect("get").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_lease_deleted_in_the_foreground_goes_after_its_dependent_lease() {
    use k8s_openapi::api::coordination::v1::Lease;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let holder: Lease = cluster
        .create(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "holder", "namespace": "default"}
        }))
        .await;
    // A lease owned by a lease: dependent and owner both light-watched.
    let _: Lease = cluster
        .create(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "held", "namespace": "default",
                "ownerReferences": [owner_ref(&holder)]}
        }))
        .await;
    let leases = cluster.api::<Lease>();
    leases
        .delete("holder", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete lease");
    until_gone("lease", || async {
        leases.get_opt("holder").await.expect("get")
    })
    .await;
    assert!(
        leases.get_opt("held").await.expect("get").is_none(),
        "the dependent lease went first"
    );
}

#[tokio::test(start_paused = true)]
async fn an_event_deleted_with_orphan_goes() {
    use k8s_openapi::api::core::v1::Event;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let _: Event = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Test", "message": "m"
        }))
        .await;
    let events = cluster.api::<Event>();
    events
        .delete("e1", &with_policy(PropagationPolicy::Orphan))
        .await
        .expect("delete event");
    until_gone("event", || async {
        events.get_opt("e1").await.expect("get")
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_restarted_collector_finishes_owners_left_with_its_finalizer() {
    use k8s_openapi::api::coordination::v1::Lease;
    let mut cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    cluster.stop_components().await;
    let _: Lease = cluster
        .create(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l", "namespace": "default"}
        }))
        .await;
    let leases = cluster.api::<Lease>();
    leases
        .delete("l", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete lease");
    tokio::time::sleep(Duration::from_secs(60)).await;
    let stuck = leases.get("l").await.expect("no collector: still there");
    assert_eq!(stuck.finalizers(), ["foregroundDeletion"]);
    // The light watch's first listing finds it.
    cluster.restart_components().await;
    until_gone("lease", || async {
        leases.get_opt("l").await.expect("get")
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_pod_owned_by_a_deleted_lease_is_collected() {
    use k8s_openapi::api::coordination::v1::Lease;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let lease: Lease = cluster
        .create(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l", "namespace": "default"}
        }))
        .await;
    let _: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default",
                "ownerReferences": [owner_ref(&lease)]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let pods = cluster.api::<Pod>();
    // A live owner of a kind without a cache: confirmed live, kept.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(pods.get_opt("p").await.expect("get").is_some());
    cluster
        .api::<Lease>()
        .delete("l", &background())
        .await
        .expect("delete lease");
    until_gone("pod", || async { pods.get_opt("p").await.expect("get") }).await;
}

/// A restarted collector does not act before its light watches have their
/// first listing: an owner left with `orphan` whose only dependent is a
/// lease (a kind without a shared cache) releases it — the reference is
/// stripped and the lease kept — instead of looking dependent-less, going,
/// and then having its lease collected as an orphan of a gone owner.
#[tokio::test(start_paused = true)]
async fn a_restarted_collector_releases_light_dependents_before_finishing_an_orphan_delete() {
    use k8s_openapi::api::coordination::v1::Lease;
    let mut cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    cluster.stop_components().await;
    let owner: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "owner", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        }))
        .await;
    let _: Lease = cluster
        .create(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "held", "namespace": "default",
                "ownerReferences": [owner_ref(&owner)]}
        }))
        .await;
    let pods = cluster.api::<Pod>();
    pods.delete("owner", &with_policy(PropagationPolicy::Orphan))
        .await
        .expect("delete pod");
    let stuck = pods.get("owner").await.expect("no collector: still there");
    assert_eq!(stuck.finalizers(), ["orphan"]);
    cluster.restart_components().await;
    until_gone("pod", || async {
        pods.get_opt("owner").await.expect("get")
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let held = cluster
        .api::<Lease>()
        .get_opt("held")
        .await
        .expect("get")
        .expect("the orphaned lease is kept");
    assert!(
        held.owner_references().is_empty(),
        "released: {:?}",
        held.owner_references()
    );
}

// ---------------------------------------------------------------------------
// Discovered kinds: built-in kinds without an informer (Deployments,
// ConfigMaps) and the custom resources of CRDs installed while running.
// ---------------------------------------------------------------------------

async fn deployment(cluster: &Cluster, name: &str) -> k8s_openapi::api::apps::v1::Deployment {
    cluster
        .create(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}
                }
            }
        }))
        .await
}

async fn config_map(
    cluster: &Cluster,
    name: &str,
    owners: Vec<serde_json::Value>,
) -> k8s_openapi::api::core::v1::ConfigMap {
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owners},
            "data": {"k": "v"}
        }))
        .await
}

/// Waits until the ConfigMap `name` is gone.
async fn config_map_gone(cluster: &Cluster, name: &str) {
    let cms = cluster.api::<k8s_openapi::api::core::v1::ConfigMap>();
    until_gone(&format!("configmap {name}"), || async {
        cms.get_opt(name).await.expect("get")
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_config_map_owned_by_a_deployment_goes_with_it() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let d = deployment(&cluster, "web").await;
    let cm = config_map(&cluster, "web-config", vec![owner_ref(&d)]).await;
    // Its owner live: untouched.
    tokio::time::sleep(Duration::from_secs(40)).await;
    let cms = cluster.api::<k8s_openapi::api::core::v1::ConfigMap>();
    let now = cms.get("web-config").await.expect("configmap");
    assert_eq!(now.resource_version(), cm.resource_version(), "untouched");

    cluster
        .api::<Deployment>()
        .delete("web", &background())
        .await
        .expect("delete deployment");
    config_map_gone(&cluster, "web-config").await;
}

#[tokio::test(start_paused = true)]
async fn a_deployment_deleted_in_the_foreground_goes_after_its_config_map() {
    use k8s_openapi::api::apps::v1::Deployment;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    let d = deployment(&cluster, "web").await;
    let _ = config_map(&cluster, "web-config", vec![owner_ref(&d)]).await;
    let deployments = cluster.api::<Deployment>();
    let marked = deployments
        .delete("web", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete")
        .left()
        .expect("marked, not removed");
    assert_eq!(marked.finalizers(), ["foregroundDeletion"]);
    until_gone("deployment", || async {
        deployments.get_opt("web").await.expect("get")
    })
    .await;
    let cms = cluster.api::<k8s_openapi::api::core::v1::ConfigMap>();
    assert!(
        cms.get_opt("web-config").await.expect("get").is_none(),
        "the blocking dependent went first"
    );
}

/// The `widgets.example.com` resource (namespaced, `v1`).
fn widgets() -> kube::api::ApiResource {
    kube::api::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    }
}

/// Installs the Widget CRD (served at once).
async fn install_widgets(cluster: &Cluster) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let _: CustomResourceDefinition = cluster
        .create_cluster(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
                    }}
                }]
            }
        }))
        .await;
}

fn widget_api(cluster: &Cluster) -> kube::Api<kube::api::DynamicObject> {
    kube::Api::namespaced_with(cluster.client.clone(), "default", &widgets())
}

/// Creates the Widget `name` in `default`, with its owner reference.
async fn widget(cluster: &Cluster, name: &str) -> (kube::api::DynamicObject, serde_json::Value) {
    let obj: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": 1}
    }))
    .expect("widget");
    let created = widget_api(cluster)
        .create(&kube::api::PostParams::default(), &obj)
        .await
        .expect("create widget");
    let reference = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "name": name, "uid": created.uid().expect("uid"), "blockOwnerDeletion": true,
    });
    (created, reference)
}

#[tokio::test(start_paused = true)]
async fn custom_resources_of_a_crd_installed_while_running_own_their_dependents() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    // The controllers run (and discovered the served kinds) before the CRD.
    tokio::time::sleep(Duration::from_secs(5)).await;
    install_widgets(&cluster).await;
    let widgets = widget_api(&cluster);

    // Background: the dependent goes with its owner.
    let (_, w1) = widget(&cluster, "w1").await;
    let _ = config_map(&cluster, "w1-config", vec![w1]).await;
    widgets
        .delete("w1", &background())
        .await
        .expect("delete w1");
    config_map_gone(&cluster, "w1-config").await;

    // Orphan: the dependent stays, without the reference; the owner goes.
    let (_, w2) = widget(&cluster, "w2").await;
    let _ = config_map(&cluster, "w2-config", vec![w2]).await;
    let marked = widgets
        .delete("w2", &with_policy(PropagationPolicy::Orphan))
        .await
        .expect("delete w2")
        .left()
        .expect("marked, not removed");
    assert_eq!(marked.finalizers(), ["orphan"]);
    until_gone("widget w2", || async {
        widgets.get_opt("w2").await.expect("get")
    })
    .await;
    let cm = cluster
        .api::<k8s_openapi::api::core::v1::ConfigMap>()
        .get("w2-config")
        .await
        .expect("the orphan stays");
    assert!(cm.owner_references().is_empty(), "released: {cm:?}");

    // Foreground: the dependent first, then the owner.
    let (_, w3) = widget(&cluster, "w3").await;
    let _ = config_map(&cluster, "w3-config", vec![w3]).await;
    widgets
        .delete("w3", &with_policy(PropagationPolicy::Foreground))
        .await
        .expect("delete w3");
    until_gone("widget w3", || async {
        widgets.get_opt("w3").await.expect("get")
    })
    .await;
    assert!(
        cluster
            .api::<k8s_openapi::api::core::v1::ConfigMap>()
            .get_opt("w3-config")
            .await
            .expect("get")
            .is_none(),
        "the blocking dependent went first"
    );
}

#[tokio::test(start_paused = true)]
async fn a_crd_deleted_while_watched_leaves_the_collector_working() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    install_widgets(&cluster).await;
    let (_, w) = widget(&cluster, "w").await;
    let _ = config_map(&cluster, "w-config", vec![w]).await;
    // Watched: the collector acts on widgets.
    let widgets = widget_api(&cluster);
    widgets.delete("w", &background()).await.expect("delete w");
    config_map_gone(&cluster, "w-config").await;
    let _ = widget(&cluster, "w2").await;

    let crds = cluster.cluster_api::<CustomResourceDefinition>();
    crds.delete("widgets.example.com", &background())
        .await
        .expect("delete crd");
    until_gone("crd", || async {
        crds.get_opt("widgets.example.com").await.expect("get")
    })
    .await;
    assert!(
        !matches!(widgets.get_opt("w2").await, Ok(Some(_))),
        "its custom resources went with it"
    );
    // Past a rediscovery and a few watch retries.
    tokio::time::sleep(Duration::from_secs(90)).await;

    let d = deployment(&cluster, "web").await;
    let _ = config_map(&cluster, "web-config", vec![owner_ref(&d)]).await;
    cluster
        .api::<Deployment>()
        .delete("web", &background())
        .await
        .expect("delete deployment");
    config_map_gone(&cluster, "web-config").await;

    // Installed again: served and collected again.
    install_widgets(&cluster).await;
    let (_, w3) = widget(&cluster, "w3").await;
    let _ = config_map(&cluster, "w3-config", vec![w3]).await;
    widgets
        .delete("w3", &background())
        .await
        .expect("delete w3");
    config_map_gone(&cluster, "w3-config").await;
}

#[tokio::test(start_paused = true)]
async fn a_dependent_of_a_kind_not_yet_served_is_collected_once_it_is() {
    let cluster = Cluster::start(&[Component::GarbageCollector], &[]).await;
    // Owned by a Widget that does not exist, before widgets are served:
    // an unknown kind, never collected.
    let missing = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "name": "gone", "uid": "00000000-0000-0000-0000-000000000001",
    });
    let cm = config_map(&cluster, "early", vec![missing]).await;
    tokio::time::sleep(Duration::from_secs(40)).await;
    let cms = cluster.api::<k8s_openapi::api::core::v1::ConfigMap>();
    let now = cms.get("early").await.expect("configmap");
    assert_eq!(now.resource_version(), cm.resource_version(), "untouched");
    // Widgets served: its owner is known to be absent.
    install_widgets(&cluster).await;
    config_map_gone(&cluster, "early").await;
}

#[tokio::test(start_paused = true)]
async fn a_kind_that_fails_to_list_does_not_stall_the_collector() {
    use axum::http::{Request, Response};
    use k8s_openapi::api::apps::v1::Deployment;
    use tower::ServiceExt;
    // Every list and watch of widgets fails (discovery still lists them).
    let mut cluster = Cluster::start_wrapped(&[Component::GarbageCollector], &[], |router| {
        let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
            let router = router.clone();
            async move {
                if req.uri().path().contains("/widgets") {
                    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Failure", "message": "injected fault",
                        "reason": "InternalError", "code": 500});
                    return Ok::<_, std::convert::Infallible>(
                        Response::builder()
                            .status(500)
                            .header("content-type", "application/json")
                            .body(axum::body::Body::from(body.to_string()))
                            .expect("response"),
                    );
                }
                Ok(router.oneshot(req).await.unwrap_or_else(|e| match e {}))
            }
        });
        kube::Client::new(svc, "default")
    })
    .await;
    install_widgets(&cluster).await;
    // A collector whose first discovery finds widgets, which never list.
    cluster.restart_components().await;
    let d = deployment(&cluster, "web").await;
    let _ = config_map(&cluster, "web-config", vec![owner_ref(&d)]).await;
    cluster
        .api::<Deployment>()
        .delete("web", &background())
        .await
        .expect("delete deployment");
    // Within the first discovery's sync timeout (30 s), and a margin.
    tokio::time::sleep(Duration::from_secs(30)).await;
    config_map_gone(&cluster, "web-config").await;
}
