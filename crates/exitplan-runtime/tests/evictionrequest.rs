//! The evictionrequest-controller (eviction spec §7) end to end: the embedded
//! API server, the controller on kube-rs, virtual time. The test plays the
//! requesters and the responders (and deletes pods itself) by writing the API.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::{Value, json};

use exitplan_api::time::{format_rfc3339, truncate_to_seconds};
use exitplan_runtime::runtime::Component;
use support::{Cluster, eventually};

const NS: &str = "default";
const REQUESTER: &str = "acme.io/drain";
const OTHER_REQUESTER: &str = "other.io/upgrade";
const DRAIN: &str = "example.com/drain";
const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn mins(n: u64) -> Duration {
    Duration::from_secs(60 * n)
}

async fn start() -> Cluster {
    Cluster::start(&[Component::EvictionRequest], &[]).await
}

/// A pod (unscheduled: a delete removes it at once) declaring `responders`,
/// once the controller's cache has it (a request for a pod the controller
/// has not seen yet fails early validation with "Target pod not found.").
async fn create_pod(cluster: &Cluster, name: &str, responders: &[(&str, i32)]) -> Pod {
    let responders: Vec<Value> = responders
        .iter()
        .map(|(n, p)| json!({"name": n, "priority": p}))
        .collect();
    let pod: Pod = cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "evictionResponders": responders,
            }
        }))
        .await;
    let key = exitplan_runtime::informer::ObjectKey::new(Some(NS), name);
    eventually("pod in the controller's cache", secs(5), || async {
        cluster.ctx.informers.pods.get(&key).map(|_| ())
    })
    .await;
    pod
}

async fn create_request(
    cluster: &Cluster,
    name: &str,
    requester: &str,
    pod: &Pod,
) -> EvictionRequest {
    cluster
        .create(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "target": {"pod": {"name": pod.metadata.name, "uid": pod.metadata.uid}},
                "requester": requester,
                "intent": "Eviction",
            }
        }))
        .await
}

/// The requester changes its intent (merge patch on the main resource).
async fn set_intent(cluster: &Cluster, request: &str, intent: &str) {
    cluster
        .api::<EvictionRequest>()
        .patch(
            request,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"intent": intent}})),
        )
        .await
        .expect("intent patch");
}

/// `now`, as a responder would write it (RFC 3339, whole seconds).
fn stamp(cluster: &Cluster) -> String {
    format_rfc3339(truncate_to_seconds(cluster.now()))
}

/// The responder `responder` writes `fields` into its own
/// `status.responders` entry (Server-Side Apply, its own field manager).
async fn respond(cluster: &Cluster, eviction: &str, responder: &str, fields: Value) -> Eviction {
    let mut entry = json!({"name": responder});
    if let (Value::Object(e), Value::Object(f)) = (&mut entry, fields) {
        e.extend(f);
    }
    let body = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
        "metadata": {"name": eviction, "namespace": NS},
        "status": {"responders": [entry]},
    });
    cluster
        .api::<Eviction>()
        .patch_status(
            eviction,
            &PatchParams::apply(responder).force(),
            &Patch::Apply(body),
        )
        .await
        .expect("responder status write")
}

async fn get_eviction(cluster: &Cluster, name: &str) -> Option<Eviction> {
    cluster
        .api::<Eviction>()
        .get_opt(name)
        .await
        .expect("get eviction")
}

async fn get_request(cluster: &Cluster, name: &str) -> EvictionRequest {
    cluster
        .api::<EvictionRequest>()
        .get(name)
        .await
        .expect("get request")
}

async fn eviction_names(cluster: &Cluster) -> Vec<String> {
    let mut names: Vec<String> = cluster
        .api::<Eviction>()
        .list(&ListParams::default())
        .await
        .expect("list evictions")
        .items
        .into_iter()
        .filter_map(|e| e.metadata.name)
        .collect();
    names.sort();
    names
}

/// Waits (≤ `limit` of virtual time) until Eviction `name` satisfies `pred`.
async fn wait_eviction(
    cluster: &Cluster,
    name: &str,
    what: &str,
    limit: Duration,
    pred: impl Fn(&Eviction) -> bool,
) -> Eviction {
    eventually(what, limit, || async {
        get_eviction(cluster, name).await.filter(|e| pred(e))
    })
    .await
}

/// Waits (≤ `limit`) until EvictionRequest `name` satisfies `pred`.
async fn wait_request(
    cluster: &Cluster,
    name: &str,
    what: &str,
    limit: Duration,
    pred: impl Fn(&EvictionRequest) -> bool,
) -> EvictionRequest {
    eventually(what, limit, || async {
        Some(get_request(cluster, name).await).filter(|r| pred(r))
    })
    .await
}

/// `(name, state)` of every target responder, in status order.
fn states(e: &Eviction) -> Vec<(String, String)> {
    e.status
        .iter()
        .flat_map(|s| s.target_responders.iter().flatten())
        .map(|r| (r.name.clone(), r.state.clone()))
        .collect()
}

fn state_of(e: &Eviction, responder: &str) -> Option<String> {
    states(e)
        .into_iter()
        .find(|(n, _)| n == responder)
        .map(|(_, s)| s)
}

fn start_time(e: &Eviction, responder: &str) -> Option<Timestamp> {
    e.status
        .iter()
        .flat_map(|s| s.responders.iter().flatten())
        .find(|r| r.name == responder)
        .and_then(|r| r.start_time.as_ref())
        .map(|t| t.0)
}

fn condition<'a>(conditions: Option<&'a Vec<Condition>>, type_: &str) -> Option<&'a Condition> {
    conditions?.iter().find(|c| c.type_ == type_)
}

/// `(status, reason, message)` of the Eviction's condition `type_`.
fn eviction_condition(e: &Eviction, type_: &str) -> Option<(String, String, String)> {
    condition(e.status.as_ref()?.conditions.as_ref(), type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

/// `(status, reason, message)` of the request's condition `type_`.
fn request_condition(r: &EvictionRequest, type_: &str) -> Option<(String, String, String)> {
    condition(r.status.as_ref()?.conditions.as_ref(), type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

fn cond(status: &str, reason: &str, message: &str) -> Option<(String, String, String)> {
    Some((status.to_owned(), reason.to_owned(), message.to_owned()))
}

fn is_final(e: &Eviction) -> bool {
    ["TargetEvicted", "Failed"]
        .iter()
        .any(|t| eviction_condition(e, t).is_some_and(|(s, _, _)| s == "True"))
}

fn active(e: &Eviction, responder: &str) -> bool {
    state_of(e, responder).as_deref() == Some("Active")
}

/// Every version of every Eviction the server publishes, from a watch that
/// started before the test's first write.
struct Recorder {
    seen: Arc<Mutex<Vec<Eviction>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    async fn start(cluster: &Cluster) -> Recorder {
        let seen: Arc<Mutex<Vec<Eviction>>> = Arc::default();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let api: Api<Eviction> = cluster.api();
        let sink = seen.clone();
        let task = tokio::spawn(async move {
            let mut ready = Some(ready_tx);
            let mut stream = watcher::watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::InitDone) => {
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                    }
                    Ok(watcher::Event::Apply(e) | watcher::Event::InitApply(e)) => {
                        sink.lock().expect("lock").push(e);
                    }
                    _ => {}
                }
            }
        });
        ready_rx.await.expect("recorder ready");
        Recorder { seen, task }
    }

    fn versions(&self, name: &str) -> Vec<Eviction> {
        self.seen
            .lock()
            .expect("lock")
            .iter()
            .filter(|e| e.metadata.name.as_deref() == Some(name))
            .cloned()
            .collect()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn pod_uid(pod: &Pod) -> String {
    pod.metadata.uid.clone().expect("pod uid")
}

// ---------------------------------------------------------------------------
// 1. Creation
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn request_creates_eviction_with_sorted_responders_and_mirrors_conditions() {
    let cluster = start().await;
    let pod = create_pod(
        &cluster,
        "web",
        &[
            ("zeta.example.com/drain", 10000),
            ("example.com/backup", 10000),
            ("mover.acme.io/migrate", 15000),
        ],
    )
    .await;
    let request = create_request(&cluster, "req-a", REQUESTER, &pod).await;
    let created_at = truncate_to_seconds(cluster.now());

    let eviction = wait_eviction(
        &cluster,
        "pod-1-web",
        "pod-1-web initialized",
        secs(30),
        |e| !states(e).is_empty(),
    )
    .await;
    // §7.3-8: one owner reference to the request, no controller flags.
    let owners = eviction.metadata.owner_references.clone().expect("owners");
    assert_eq!(owners.len(), 1);
    assert_eq!(owners[0].api_version, "lifecycle.k8s.io/v1alpha1");
    assert_eq!(owners[0].kind, "EvictionRequest");
    assert_eq!(owners[0].name, "req-a");
    assert_eq!(Some(&owners[0].uid), request.metadata.uid.as_ref());
    assert_eq!(owners[0].controller, None);
    assert_eq!(owners[0].block_owner_deletion, None);
    let target = eviction.spec.target.pod.clone().expect("pod target");
    assert_eq!((target.name.as_str(), target.uid), ("web", pod_uid(&pod)));

    // §6 order: priority desc, then reversed domain; the default responder last.
    assert_eq!(
        states(&eviction),
        vec![
            ("mover.acme.io/migrate".to_owned(), "Active".to_owned()),
            ("example.com/backup".to_owned(), "Inactive".to_owned()),
            ("zeta.example.com/drain".to_owned(), "Inactive".to_owned()),
            (EVICTOR.to_owned(), "Inactive".to_owned()),
        ]
    );
    let status = eviction.status.clone().expect("status");
    let priorities: Vec<i32> = status
        .target_responders
        .iter()
        .flatten()
        .map(|r| r.priority)
        .collect();
    assert_eq!(priorities, vec![15000, 10000, 10000, 100]);
    assert_eq!(
        start_time(&eviction, "mover.acme.io/migrate"),
        Some(created_at)
    );
    assert_eq!(start_time(&eviction, "example.com/backup"), None);
    assert_eq!(status.responders.as_ref().map(Vec::len), Some(4));
    let requesters: Vec<(String, String)> = status
        .requesters
        .iter()
        .flatten()
        .map(|r| (r.name.clone(), r.intent.clone()))
        .collect();
    assert_eq!(
        requesters,
        vec![(REQUESTER.to_owned(), "Eviction".to_owned())]
    );
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(
        eviction_condition(&eviction, "Failed"),
        cond("False", "AwaitingEviction", "")
    );
    assert_eq!(
        eviction_condition(&eviction, "TargetEvicted"),
        cond("False", "AwaitingEviction", "")
    );

    // §7.5: role labels from the refresh loop.
    let eviction = wait_eviction(&cluster, "pod-1-web", "role labels", secs(30), |e| {
        e.metadata.labels.as_ref().map(BTreeMap::len) == Some(5)
    })
    .await;
    let labels = eviction.metadata.labels.clone().expect("labels");
    let expected: BTreeMap<String, String> = [
        (REQUESTER, "requester"),
        ("mover.acme.io/migrate", "responder"),
        ("example.com/backup", "responder"),
        ("zeta.example.com/drain", "responder"),
        (EVICTOR, "responder"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(labels, expected);

    // §7.3-7: the request mirrors the Eviction.
    let request = wait_request(&cluster, "req-a", "mirrored conditions", secs(30), |r| {
        request_condition(r, "TargetEvicted").is_some_and(|(_, _, m)| m.is_empty())
    })
    .await;
    assert_eq!(
        request_condition(&request, "Failed"),
        cond("False", "AwaitingEviction", "")
    );
    assert_eq!(
        request_condition(&request, "TargetEvicted"),
        cond("False", "AwaitingEviction", "")
    );
    assert_eq!(request.status.and_then(|s| s.observed_generation), Some(1));
    assert_eq!(eviction_names(&cluster).await, vec!["pod-1-web".to_owned()]);

    // Settled: no further writes for 10 minutes (no hot loop).
    let eviction_rv = get_eviction(&cluster, "pod-1-web")
        .await
        .and_then(|e| e.metadata.resource_version);
    let request_rv = get_request(&cluster, "req-a")
        .await
        .metadata
        .resource_version;
    tokio::time::sleep(mins(10)).await;
    assert_eq!(
        get_eviction(&cluster, "pod-1-web")
            .await
            .and_then(|e| e.metadata.resource_version),
        eviction_rv
    );
    assert_eq!(
        get_request(&cluster, "req-a")
            .await
            .metadata
            .resource_version,
        request_rv
    );
}

// ---------------------------------------------------------------------------
// 2. Silent responder → Interrupted at 20 min, next Active in the same write
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn silent_responder_is_interrupted_at_20_minutes_and_next_activated_in_the_same_write() {
    let cluster = start().await;
    let recorder = Recorder::start(&cluster).await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;

    let eviction = wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    let started = start_time(&eviction, DRAIN).expect("drain startTime");

    // Still Active shortly before the deadline.
    let deadline = started
        .checked_add(SignedDuration::from_mins(20))
        .expect("deadline");
    let until_before = deadline.duration_since(cluster.now()) - SignedDuration::from_secs(2);
    tokio::time::sleep(Duration::try_from(until_before).expect("positive")).await;
    let e = get_eviction(&cluster, "pod-1-web").await.expect("eviction");
    assert!(active(&e, DRAIN), "interrupted early: {:?}", states(&e));

    let e = wait_eviction(&cluster, "pod-1-web", "drain Interrupted", secs(30), |e| {
        state_of(e, DRAIN).as_deref() == Some("Interrupted")
    })
    .await;
    assert!(active(&e, EVICTOR), "{:?}", states(&e));
    // The next responder started exactly at the deadline (second precision).
    assert_eq!(start_time(&e, EVICTOR), Some(deadline));
    assert!(!is_final(&e));

    // Every published version has exactly one Active responder once initialized.
    let versions = recorder.versions("pod-1-web");
    assert!(versions.len() >= 2, "versions seen: {}", versions.len());
    for v in versions.iter().filter(|v| !states(v).is_empty()) {
        let n = states(v).iter().filter(|(_, s)| s == "Active").count();
        assert_eq!(
            n,
            1,
            "a version without exactly one Active: {:?}",
            states(v)
        );
    }
    let transitions: Vec<Vec<(String, String)>> = versions
        .iter()
        .map(states)
        .filter(|s| !s.is_empty())
        .fold(Vec::new(), |mut acc, s| {
            if acc.last() != Some(&s) {
                acc.push(s);
            }
            acc
        });
    assert_eq!(
        transitions,
        vec![
            vec![
                (DRAIN.to_owned(), "Active".to_owned()),
                (EVICTOR.to_owned(), "Inactive".to_owned())
            ],
            vec![
                (DRAIN.to_owned(), "Interrupted".to_owned()),
                (EVICTOR.to_owned(), "Active".to_owned())
            ],
        ]
    );
}

// ---------------------------------------------------------------------------
// 3. Heartbeats extend the deadline; completionTime → Completed, next Active
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn heartbeating_responder_that_completes_is_completed_and_next_activated() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    let eviction = wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    let started = start_time(&eviction, DRAIN).expect("startTime");

    tokio::time::sleep(mins(10)).await;
    respond(
        &cluster,
        "pod-1-web",
        DRAIN,
        json!({"heartbeatTime": stamp(&cluster), "message": "draining"}),
    )
    .await;

    // Past the original deadline (startTime + 20 min): still Active.
    tokio::time::sleep(mins(11)).await;
    let e = get_eviction(&cluster, "pod-1-web").await.expect("eviction");
    assert!(cluster.now() > started + SignedDuration::from_mins(20));
    assert!(active(&e, DRAIN), "{:?}", states(&e));

    let done_at = stamp(&cluster);
    respond(
        &cluster,
        "pod-1-web",
        DRAIN,
        json!({"heartbeatTime": done_at, "completionTime": done_at, "message": "drained"}),
    )
    .await;
    let e = wait_eviction(&cluster, "pod-1-web", "drain Completed", secs(30), |e| {
        state_of(e, DRAIN).as_deref() == Some("Completed")
    })
    .await;
    assert!(active(&e, EVICTOR), "{:?}", states(&e));
    assert_eq!(
        start_time(&e, EVICTOR).map(format_rfc3339),
        Some(done_at.clone())
    );
    // The responder's own fields survived the controller's applies.
    let drain = e
        .status
        .iter()
        .flat_map(|s| s.responders.iter().flatten())
        .find(|r| r.name == DRAIN)
        .cloned()
        .expect("drain entry");
    assert_eq!(drain.message.as_deref(), Some("drained"));
    assert_eq!(
        drain.completion_time.map(|t| format_rfc3339(t.0)),
        Some(done_at)
    );
    assert_eq!(start_time(&e, DRAIN), Some(started));
    assert!(!is_final(&e));
}

// ---------------------------------------------------------------------------
// 4. All requesters withdraw → Canceled
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn withdrawal_of_every_requester_cancels_the_active_responder() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    create_request(&cluster, "req-b", OTHER_REQUESTER, &pod).await;
    wait_eviction(&cluster, "pod-1-web", "both requesters", secs(30), |e| {
        active(e, DRAIN)
            && e.status
                .as_ref()
                .and_then(|s| s.requesters.as_ref())
                .is_some_and(|r| r.len() == 2)
    })
    .await;

    // One requester withdraws: the other still wants the eviction.
    set_intent(&cluster, "req-a", "Withdrawn").await;
    let e = wait_eviction(&cluster, "pod-1-web", "req-a Withdrawn", secs(30), |e| {
        e.status
            .iter()
            .flat_map(|s| s.requesters.iter().flatten())
            .any(|r| r.name == REQUESTER && r.intent == "Withdrawn")
    })
    .await;
    assert!(active(&e, DRAIN), "{:?}", states(&e));
    assert!(!is_final(&e));

    // The last one deletes its request.
    cluster
        .api::<EvictionRequest>()
        .delete("req-b", &DeleteParams::default())
        .await
        .expect("delete req-b");
    let e = wait_eviction(&cluster, "pod-1-web", "canceled", secs(30), is_final).await;
    assert_eq!(
        states(&e),
        vec![
            (DRAIN.to_owned(), "Canceled".to_owned()),
            (EVICTOR.to_owned(), "Inactive".to_owned())
        ]
    );
    assert_eq!(
        eviction_condition(&e, "Failed"),
        cond(
            "True",
            "CanceledDueToNoRequesters",
            "No active requesters with eviction intent."
        )
    );
    assert_eq!(
        eviction_condition(&e, "TargetEvicted"),
        cond("False", "EvictionFailed", "")
    );
    let requesters: BTreeMap<String, String> = e
        .status
        .iter()
        .flat_map(|s| s.requesters.iter().flatten())
        .map(|r| (r.name.clone(), r.intent.clone()))
        .collect();
    assert_eq!(
        requesters,
        BTreeMap::from([
            (REQUESTER.to_owned(), "Withdrawn".to_owned()),
            (OTHER_REQUESTER.to_owned(), "Withdrawn".to_owned()),
        ])
    );

    let r = wait_request(&cluster, "req-a", "cancel mirrored", secs(30), |r| {
        request_condition(r, "Failed").is_some_and(|(s, _, _)| s == "True")
    })
    .await;
    assert_eq!(
        request_condition(&r, "Failed"),
        cond(
            "True",
            "CanceledDueToNoRequesters",
            "No active requesters with eviction intent."
        )
    );
    assert_eq!(
        request_condition(&r, "TargetEvicted"),
        cond("False", "EvictionFailed", "")
    );
    // The request's generation moved to 2 with the intent change.
    assert_eq!(r.status.and_then(|s| s.observed_generation), Some(2));
    assert_eq!(eviction_names(&cluster).await, vec!["pod-1-web".to_owned()]);
}

// ---------------------------------------------------------------------------
// 5. Re-request after failure → pod-2-<name>
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn re_request_after_cancellation_creates_the_next_eviction() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    let request = create_request(&cluster, "req-a", REQUESTER, &pod).await;
    wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    set_intent(&cluster, "req-a", "Withdrawn").await;
    let canceled = wait_eviction(&cluster, "pod-1-web", "canceled", secs(30), is_final).await;
    wait_request(&cluster, "req-a", "failure mirrored", secs(30), |r| {
        request_condition(r, "Failed").is_some_and(|(s, _, _)| s == "True")
    })
    .await;

    tokio::time::sleep(secs(5)).await;
    set_intent(&cluster, "req-a", "Eviction").await;
    let second = wait_eviction(&cluster, "pod-2-web", "pod-2-web Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    let owners = second.metadata.owner_references.clone().expect("owners");
    assert_eq!(owners.len(), 1);
    assert_eq!(Some(&owners[0].uid), request.metadata.uid.as_ref());
    assert_eq!(
        second.spec.target.pod.as_ref().map(|p| p.uid.clone()),
        Some(pod_uid(&pod))
    );
    assert_eq!(
        eviction_names(&cluster).await,
        vec!["pod-1-web".to_owned(), "pod-2-web".to_owned()]
    );
    // The failed one stays frozen.
    let first = get_eviction(&cluster, "pod-1-web")
        .await
        .expect("pod-1-web");
    assert_eq!(first.status, canceled.status);

    // The request follows the new Eviction (Failed=True may flip back).
    // (Right after the creation it may briefly say "waiting for an Eviction
    // to report on progress", until pod-2-web has conditions to mirror.)
    let r = wait_request(&cluster, "req-a", "mirroring pod-2-web", secs(30), |r| {
        request_condition(r, "Failed") == cond("False", "AwaitingEviction", "")
    })
    .await;
    assert_eq!(
        request_condition(&r, "Failed"),
        cond("False", "AwaitingEviction", "")
    );
    assert_eq!(
        request_condition(&r, "TargetEvicted"),
        cond("False", "AwaitingEviction", "")
    );
    assert_eq!(r.status.and_then(|s| s.observed_generation), Some(3));
}

// ---------------------------------------------------------------------------
// 6. Pod deleted mid-responder
// ---------------------------------------------------------------------------

/// Deletes the pod and waits until the controller's cache no longer has it;
/// returns the virtual instant of the delete.
async fn delete_pod(cluster: &Cluster, name: &str) -> tokio::time::Instant {
    cluster
        .api::<Pod>()
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete pod");
    let deleted = tokio::time::Instant::now();
    let key = exitplan_runtime::informer::ObjectKey::new(Some(NS), name);
    eventually("pod gone from the cache", secs(3), || async {
        cluster.ctx.informers.pods.get(&key).is_none().then_some(())
    })
    .await;
    assert!(
        cluster
            .api::<Pod>()
            .get_opt(name)
            .await
            .expect("get")
            .is_none(),
        "the unscheduled pod is removed at once"
    );
    deleted
}

async fn assert_pod_deleted_mirrored(cluster: &Cluster) {
    let r = wait_request(cluster, "req-a", "TargetEvicted mirrored", secs(30), |r| {
        request_condition(r, "TargetEvicted").is_some_and(|(s, _, _)| s == "True")
    })
    .await;
    assert_eq!(
        request_condition(&r, "TargetEvicted"),
        cond("True", "PodDeleted", "Target pod has been deleted.")
    );
    assert_eq!(
        request_condition(&r, "Failed"),
        cond("False", "Succeeded", "")
    );
}

#[tokio::test(start_paused = true)]
async fn pod_deleted_with_completion_reported_within_grace_completes_the_responder() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    tokio::time::sleep(mins(1)).await;

    let deleted = delete_pod(&cluster, "web").await;
    // The controller waits for the responder's report.
    let e = get_eviction(&cluster, "pod-1-web").await.expect("eviction");
    assert!(!is_final(&e) && active(&e, DRAIN), "{:?}", states(&e));
    let now = stamp(&cluster);
    respond(
        &cluster,
        "pod-1-web",
        DRAIN,
        json!({"heartbeatTime": now, "completionTime": now}),
    )
    .await;
    let e = wait_eviction(&cluster, "pod-1-web", "final", secs(30), is_final).await;
    assert!(deleted.elapsed() < secs(5), "took {:?}", deleted.elapsed());
    assert_eq!(
        states(&e),
        vec![
            (DRAIN.to_owned(), "Completed".to_owned()),
            (EVICTOR.to_owned(), "Inactive".to_owned())
        ]
    );
    assert_eq!(
        eviction_condition(&e, "TargetEvicted"),
        cond("True", "PodDeleted", "Target pod has been deleted.")
    );
    assert_eq!(
        eviction_condition(&e, "Failed"),
        cond("False", "Succeeded", "")
    );
    assert_pod_deleted_mirrored(&cluster).await;
}

#[tokio::test(start_paused = true)]
async fn pod_deleted_without_completion_interrupts_the_responder_after_the_grace() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    tokio::time::sleep(mins(1)).await;

    let deleted = delete_pod(&cluster, "web").await;
    tokio::time::sleep_until(deleted + secs(4)).await;
    let e = get_eviction(&cluster, "pod-1-web").await.expect("eviction");
    assert!(!is_final(&e) && active(&e, DRAIN), "{:?}", states(&e));

    let e = wait_eviction(&cluster, "pod-1-web", "final", secs(30), is_final).await;
    assert!(deleted.elapsed() >= secs(5), "took {:?}", deleted.elapsed());
    assert!(deleted.elapsed() < secs(7), "took {:?}", deleted.elapsed());
    assert_eq!(
        states(&e),
        vec![
            (DRAIN.to_owned(), "Interrupted".to_owned()),
            (EVICTOR.to_owned(), "Inactive".to_owned())
        ]
    );
    assert_eq!(
        eviction_condition(&e, "TargetEvicted"),
        cond("True", "PodDeleted", "Target pod has been deleted.")
    );
    assert_pod_deleted_mirrored(&cluster).await;
}

// ---------------------------------------------------------------------------
// 7. A second active Eviction for the same target fails as a duplicate
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn duplicate_third_party_eviction_fails() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    tokio::time::sleep(secs(2)).await;

    // Sorts before pod-1-web by name: only its age makes it the duplicate.
    let _: Eviction = cluster
        .create(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": "a-third-party", "namespace": NS},
            "spec": {"target": {"pod": {"name": "web", "uid": pod_uid(&pod)}}},
        }))
        .await;
    let dup = wait_eviction(
        &cluster,
        "a-third-party",
        "duplicate failed",
        secs(30),
        is_final,
    )
    .await;
    assert_eq!(
        eviction_condition(&dup, "Failed"),
        cond(
            "True",
            "EvictionInvalid",
            "Active Eviction already exists for the same target."
        )
    );
    assert_eq!(
        eviction_condition(&dup, "TargetEvicted"),
        cond("False", "EvictionFailed", "")
    );
    assert!(states(&dup).is_empty());

    let first = get_eviction(&cluster, "pod-1-web")
        .await
        .expect("pod-1-web");
    assert!(active(&first, DRAIN) && !is_final(&first));
    let r = get_request(&cluster, "req-a").await;
    assert_eq!(
        request_condition(&r, "Failed"),
        cond("False", "AwaitingEviction", "")
    );
}

// ---------------------------------------------------------------------------
// 8. Restart mid-eviction
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn restarted_controller_resumes_with_the_same_responder_and_deadline() {
    let mut cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    let e = wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    let started = start_time(&e, DRAIN).expect("startTime");

    tokio::time::sleep(mins(5)).await;
    cluster.stop_components().await;
    // Work arriving while the controller is down.
    let late = create_request(&cluster, "req-b", OTHER_REQUESTER, &pod).await;
    tokio::time::sleep(mins(5)).await;
    cluster.restart_components().await;

    let e = wait_eviction(&cluster, "pod-1-web", "req-b picked up", secs(30), |e| {
        e.status
            .iter()
            .flat_map(|s| s.requesters.iter().flatten())
            .any(|r| r.name == OTHER_REQUESTER)
            && e.metadata
                .owner_references
                .as_ref()
                .is_some_and(|o| o.iter().any(|o| Some(&o.uid) == late.metadata.uid.as_ref()))
    })
    .await;
    assert!(active(&e, DRAIN), "{:?}", states(&e));
    assert_eq!(start_time(&e, DRAIN), Some(started));
    wait_request(&cluster, "req-b", "req-b mirrored", secs(30), |r| {
        request_condition(r, "Failed") == cond("False", "AwaitingEviction", "")
    })
    .await;

    // The deadline is the persisted startTime + 20 min.
    let e = wait_eviction(&cluster, "pod-1-web", "drain Interrupted", mins(15), |e| {
        state_of(e, DRAIN).as_deref() == Some("Interrupted")
    })
    .await;
    let deadline = started + SignedDuration::from_mins(20);
    assert_eq!(start_time(&e, EVICTOR), Some(deadline));
    assert!(active(&e, EVICTOR));
    assert_eq!(eviction_names(&cluster).await, vec!["pod-1-web".to_owned()]);
}

// ---------------------------------------------------------------------------
// 9. Metrics
// ---------------------------------------------------------------------------

fn series_line(metrics: &str, name: &str, labels: &str) -> Option<String> {
    let prefix = format!("{name}{{{labels}}} ");
    metrics
        .lines()
        .find(|l| l.starts_with(&prefix))
        .map(|l| l[prefix.len()..].to_owned())
}

#[tokio::test(start_paused = true)]
async fn metrics_report_responder_states_and_drop_stale_series() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN)
    })
    .await;
    let base =
        r#"namespace="default",evictionrequest="pod-1-web",target_name="web",target_type="pod""#;
    let state =
        |responder: &str, state: &str| format!(r#"{base},responder="{responder}",state="{state}""#);
    let m = eventually("responder_state series", secs(10), || async {
        let m = cluster.ctx.metrics.encode();
        m.contains("evictionrequest_controller_responder_state{")
            .then_some(m)
    })
    .await;
    let gauge = "evictionrequest_controller_responder_state";
    assert_eq!(
        series_line(&m, gauge, &state(DRAIN, "Active")).as_deref(),
        Some("1"),
        "{m}"
    );
    assert_eq!(
        series_line(&m, gauge, &state(EVICTOR, "Inactive")).as_deref(),
        Some("1")
    );
    assert_eq!(
        series_line(&m, "evictionrequest_controller_target_responders", base).as_deref(),
        Some("2")
    );
    let intent = r#"namespace="default",evictionrequest="req-a",target_name="web",target_type="pod",requester="acme.io/drain",intent="Eviction""#;
    assert_eq!(
        series_line(&m, "evictionrequest_controller_requester_intent", intent).as_deref(),
        Some("1")
    );
    let adds = series_line(
        &m,
        "workqueue_adds_total",
        r#"name="evictionrequest_controller_eviction""#,
    )
    .expect("eviction queue adds");
    assert!(adds.parse::<u64>().expect("count") >= 1);
    assert!(
        series_line(
            &m,
            "workqueue_depth",
            r#"name="evictionrequest_controller_eviction_request""#
        )
        .is_some()
    );

    // Withdrawn: the old state and intent series go, the new ones appear.
    set_intent(&cluster, "req-a", "Withdrawn").await;
    wait_eviction(&cluster, "pod-1-web", "canceled", secs(30), is_final).await;
    let m = eventually("Canceled series", secs(10), || async {
        let m = cluster.ctx.metrics.encode();
        series_line(&m, gauge, &state(DRAIN, "Canceled")).map(|_| m)
    })
    .await;
    assert_eq!(series_line(&m, gauge, &state(DRAIN, "Active")), None);
    assert_eq!(
        series_line(
            &m,
            "evictionrequest_controller_requester_intent",
            &intent.replace("Eviction", "Withdrawn")
        )
        .as_deref(),
        Some("1")
    );
    assert_eq!(
        series_line(&m, "evictionrequest_controller_requester_intent", intent),
        None
    );

    // Deleted objects take their series along.
    cluster
        .api::<EvictionRequest>()
        .delete("req-a", &DeleteParams::default())
        .await
        .expect("delete request");
    cluster
        .api::<Eviction>()
        .delete("pod-1-web", &DeleteParams::default())
        .await
        .expect("delete eviction");
    let m = eventually("series deleted", secs(10), || async {
        let m = cluster.ctx.metrics.encode();
        (!m.contains(r#"evictionrequest="pod-1-web""#) && !m.contains(r#"evictionrequest="req-a""#))
            .then_some(m)
    })
    .await;
    assert!(m.contains("workqueue_adds_total"));
}

// ---------------------------------------------------------------------------
// 10. What the stale-cache guard relies on: a pinned resourceVersion
// ---------------------------------------------------------------------------

/// The controller pins `metadata.resourceVersion` in every apply so that a
/// decision taken on an outdated cache is refused. Checks that the server
/// honours the pin on `/status` and on the main resource, and that the
/// controller's next sync (on the current object) goes through.
#[tokio::test(start_paused = true)]
async fn applies_pinned_to_an_outdated_resource_version_are_refused() {
    let cluster = start().await;
    let pod = create_pod(&cluster, "web", &[(DRAIN, 10000)]).await;
    create_request(&cluster, "req-a", REQUESTER, &pod).await;
    let before = wait_eviction(&cluster, "pod-1-web", "drain Active", secs(30), |e| {
        active(e, DRAIN) && e.metadata.labels.as_ref().map(BTreeMap::len) == Some(3)
    })
    .await;
    let stale_rv = before.metadata.resource_version.clone().expect("rv");
    // A responder moves the object on.
    respond(
        &cluster,
        "pod-1-web",
        DRAIN,
        json!({"heartbeatTime": stamp(&cluster)}),
    )
    .await;

    let api = cluster.api::<Eviction>();
    let params = PatchParams::apply("evictionrequest-controller").force();
    let status_body = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
        "metadata": {"name": "pod-1-web", "namespace": NS, "resourceVersion": stale_rv},
        "status": {"observedGeneration": 1},
    });
    let err = api
        .patch_status("pod-1-web", &params, &Patch::Apply(status_body))
        .await
        .expect_err("stale status apply");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err}"
    );
    let main_body = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
        "metadata": {"name": "pod-1-web", "namespace": NS, "resourceVersion": stale_rv,
                     "labels": {}},
        "spec": {"target": {"pod": {"name": "web", "uid": pod_uid(&pod)}}},
    });
    let err = api
        .patch("pod-1-web", &params, &Patch::Apply(main_body))
        .await
        .expect_err("stale main apply");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err}"
    );

    // Nothing was lost: labels and the Active responder as before, the
    // heartbeat kept, and the controller still drives the Eviction.
    let after = get_eviction(&cluster, "pod-1-web").await.expect("eviction");
    assert_eq!(after.metadata.labels, before.metadata.labels);
    assert!(active(&after, DRAIN));
    set_intent(&cluster, "req-a", "Withdrawn").await;
    let e = wait_eviction(&cluster, "pod-1-web", "canceled", secs(30), is_final).await;
    assert_eq!(state_of(&e, DRAIN).as_deref(), Some("Canceled"));
    let heartbeat = e
        .status
        .iter()
        .flat_map(|s| s.responders.iter().flatten())
        .find(|r| r.name == DRAIN)
        .and_then(|r| r.heartbeat_time.clone());
    assert!(heartbeat.is_some());
}
