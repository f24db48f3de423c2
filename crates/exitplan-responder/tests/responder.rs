//! The SDK against the embedded API server, in-process, in virtual time.
//!
//! The evictionrequest-controller is not running: each test plays it, writing
//! the Eviction's labels and status exactly as §7.4/§7.5 say it would (and
//! the server validates those writes as it would the controller's).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{Method, Request, StatusCode};
use futures_util::StreamExt;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, ResponderStatus};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_clock::{SharedClock, TokioClock};
use exitplan_responder::sample::TimedWork;
use exitplan_responder::{ActiveEviction, Error, Responder, StopReason};

const START: &str = "2026-11-29T10:00:00Z";
const ME: &str = "example.com/migrator";
const OTHER: &str = "other.example.com/backup";
const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";
const CONTROLLER: &str = "evictionrequest-controller";

fn at(offset_secs: i64) -> Timestamp {
    START
        .parse::<Timestamp>()
        .expect("start")
        .checked_add(SignedDuration::from_secs(offset_secs))
        .expect("time")
}

/// One request the SDK's client made, and the answer's status.
type Log = Arc<Mutex<Vec<(Method, String, StatusCode)>>>;

struct Env {
    _server: Server,
    /// The test's own client (plays the controller).
    client: kube::Client,
    /// The SDK's client: every request and status is logged.
    sdk_client: kube::Client,
    log: Log,
    clock: SharedClock,
}

impl Env {
    async fn start() -> Env {
        let clock: SharedClock = Arc::new(TokioClock::starting_at(START.parse().expect("start")));
        let server = Server::builder()
            .store(Store::in_memory().expect("store"))
            .clock(clock.clone())
            .build()
            .await
            .expect("server");
        let client = kube::Client::new(server.router(), "default");
        let log: Log = Arc::default();
        let router = server.router();
        let sdk_log = log.clone();
        let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
            let router = router.clone();
            let log = sdk_log.clone();
            async move {
                let method = req.method().clone();
                let uri = req.uri().to_string();
                let resp = tower::ServiceExt::oneshot(router, req).await?;
                log.lock().expect("log").push((method, uri, resp.status()));
                Ok::<_, std::convert::Infallible>(resp)
            }
        });
        let sdk_client = kube::Client::new(svc, "default");
        Env {
            _server: server,
            client,
            sdk_client,
            log,
            clock,
        }
    }

    fn evictions(&self) -> Api<Eviction> {
        Api::default_namespaced(self.client.clone())
    }

    /// Status PATCHes the SDK made, with their answers.
    fn sdk_writes(&self) -> Vec<(String, StatusCode)> {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|(m, _, _)| *m == Method::PATCH)
            .map(|(_, u, s)| (u.clone(), *s))
            .collect()
    }

    /// Every answer the SDK got was a success (no 422 from validation).
    fn assert_no_sdk_errors(&self) {
        let log = self.log.lock().expect("log");
        let bad: Vec<_> = log.iter().filter(|(_, _, s)| !s.is_success()).collect();
        assert!(bad.is_empty(), "SDK requests failed: {bad:?}");
    }

    fn responder(&self) -> Responder {
        Responder::new(self.sdk_client.clone(), ME, self.clock.clone())
            .namespace(Some("default".into()))
            .heartbeat_interval(Duration::from_secs(60))
    }

    /// A pod listing `ME` as its responder, and an Eviction for it (as the
    /// controller creates it, not yet labelled).
    async fn pod_and_eviction(&self, pod: &str) -> Eviction {
        let p: Pod = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "busybox"}],
                "evictionResponders": [{"name": ME, "priority": 10000}],
            },
        }))
        .expect("pod");
        let p = Api::<Pod>::default_namespaced(self.client.clone())
            .create(&PostParams::default(), &p)
            .await
            .expect("create pod");
        let e: Eviction = serde_json::from_value(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": format!("pod-1-{pod}"), "namespace": "default"},
            "spec": {"target": {"pod": {"name": pod, "uid": p.metadata.uid.expect("uid")}}},
        }))
        .expect("eviction");
        self.evictions()
            .create(&PostParams::default(), &e)
            .await
            .expect("create eviction")
    }

    /// The controller's meta refresh: `<key>: responder` labels.
    async fn label(&self, eviction: &str, keys: &[&str]) {
        let labels: serde_json::Map<_, _> = keys
            .iter()
            .map(|k| ((*k).to_owned(), json!("responder")))
            .collect();
        self.evictions()
            .patch(
                eviction,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": labels}})),
            )
            .await
            .expect("label");
    }

    /// The controller's status apply (§7.4 step 10): `states` for
    /// (ME, evictor), `starts` their startTimes, and the two conditions.
    async fn controller_status(
        &self,
        eviction: &str,
        states: [&str; 2],
        starts: [Option<Timestamp>; 2],
        failed: Option<(&str, &str)>,
    ) {
        let now = self.clock.now();
        let entry = |name: &str, start: Option<Timestamp>| match start {
            Some(t) => json!({"name": name, "startTime": k8s_time(t)}),
            None => json!({"name": name}),
        };
        let cond = |ty: &str, status: &str, reason: &str, message: &str| {
            json!({"type": ty, "status": status, "reason": reason, "message": message,
                   "lastTransitionTime": k8s_time(now)})
        };
        let conditions = match failed {
            None => vec![
                cond("Failed", "False", "AwaitingEviction", ""),
                cond("TargetEvicted", "False", "AwaitingEviction", ""),
            ],
            Some((reason, message)) => vec![
                cond("Failed", "True", reason, message),
                cond("TargetEvicted", "False", "EvictionFailed", ""),
            ],
        };
        let body = json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": eviction, "namespace": "default"},
            "status": {
                "observedGeneration": 1,
                "targetResponders": [
                    {"name": ME, "priority": 10000, "state": states[0]},
                    {"name": EVICTOR, "priority": 100, "state": states[1]},
                ],
                "responders": [entry(ME, starts[0]), entry(EVICTOR, starts[1])],
                "conditions": conditions,
            },
        });
        self.evictions()
            .patch_status(
                eviction,
                &PatchParams::apply(CONTROLLER).force(),
                &Patch::Apply(&body),
            )
            .await
            .unwrap_or_else(|e| panic!("controller status write {states:?} refused: {e}"));
    }

    async fn entry(&self, eviction: &str) -> ResponderStatus {
        let e = self.evictions().get(eviction).await.expect("get");
        e.status
            .and_then(|s| s.responders)
            .and_then(|l| l.into_iter().find(|r| r.name == ME))
            .expect("entry")
    }

    /// Every distinct version of ME's entry, as the server stored them.
    fn record_entries(&self, eviction: &str) -> Arc<Mutex<Vec<ResponderStatus>>> {
        let seen: Arc<Mutex<Vec<ResponderStatus>>> = Arc::default();
        let out = seen.clone();
        let cfg = watcher::Config::default().fields(&format!("metadata.name={eviction}"));
        let mut stream = watcher::watcher(self.evictions(), cfg).boxed();
        tokio::spawn(async move {
            while let Some(ev) = stream.next().await {
                let e = match ev {
                    Ok(watcher::Event::Apply(e) | watcher::Event::InitApply(e)) => e,
                    _ => continue,
                };
                let Some(entry) = e
                    .status
                    .and_then(|s| s.responders)
                    .and_then(|l| l.into_iter().find(|r| r.name == ME))
                else {
                    continue;
                };
                let mut seen = out.lock().expect("seen");
                if seen.last() != Some(&entry) {
                    seen.push(entry);
                }
            }
        });
        seen
    }
}

fn k8s_time(t: Timestamp) -> String {
    jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", t).expect("format")
}

fn t(v: &Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Timestamp> {
    v.as_ref().map(|t| t.0)
}

async fn settle() {
    // Let watches deliver and tasks react; a few virtual milliseconds.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Sleeps until the clock reads `at(offset_secs)` (virtual time).
async fn until(env: &Env, offset_secs: i64) {
    let d = at(offset_secs).duration_since(env.clock.now());
    tokio::time::sleep(Duration::try_from(d).unwrap_or_default()).await;
    settle().await;
}

/// Picks the Eviction up once Active, heartbeats every interval after the last
/// report, reports progress and completes after the sample's `--work 5m`; stops
/// once the controller marked it Completed. Every write is accepted.
#[tokio::test(start_paused = true)]
async fn works_heartbeats_and_completes() {
    let env = Env::start().await;
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    let sdk = tokio::spawn(env.responder().run(move |work: ActiveEviction| {
        s.fetch_add(1, Ordering::SeqCst);
        TimedWork {
            duration: Duration::from_secs(300),
            fail: false,
        }
        .run(work)
    }));
    let ev = env.pod_and_eviction("web").await;
    let name = ev.metadata.name.clone().expect("name");
    let seen = env.record_entries(&name);
    env.label(&name, &[ME]).await;
    settle().await;
    // Labelled, but not Active yet: nothing to do.
    assert_eq!(started.load(Ordering::SeqCst), 0);
    env.controller_status(&name, ["Active", "Inactive"], [Some(at(0)), None], None)
        .await;
    settle().await;
    assert_eq!(started.load(Ordering::SeqCst), 1, "picked up once Active");

    until(&env, 301).await;
    let entries = seen.lock().expect("seen").clone();
    let heartbeats: Vec<Timestamp> = entries
        .iter()
        .filter_map(|e| t(&e.heartbeat_time))
        .collect();
    let mut distinct = heartbeats.clone();
    distinct.dedup();
    // progress at 0 (start), automatic at 1m and 2m, progress at 2m30s
    // (halfway), automatic 1m after it, and the completion at 5m.
    assert_eq!(
        distinct,
        [0, 60, 120, 150, 210, 270, 300].map(at).to_vec(),
        "heartbeat instants"
    );
    let first = entries
        .iter()
        .find(|e| e.heartbeat_time.is_some())
        .expect("first report");
    assert_eq!(t(&first.expected_completion_time), Some(at(300)));
    assert_eq!(first.message.as_deref(), Some("working on pod web: 0/5m"));
    assert_eq!(t(&first.start_time), Some(at(0)), "startTime kept");
    let halfway = entries
        .iter()
        .find(|e| t(&e.heartbeat_time) == Some(at(150)))
        .expect("halfway report");
    assert_eq!(
        halfway.message.as_deref(),
        Some("working on pod web: 2m30s/5m")
    );
    assert_eq!(t(&halfway.expected_completion_time), Some(at(300)));
    let last = env.entry(&name).await;
    assert_eq!(t(&last.completion_time), Some(at(300)));
    assert_eq!(last.message.as_deref(), Some("done after 5m"));
    assert_eq!(t(&last.expected_completion_time), Some(at(300)));
    assert_eq!(t(&last.start_time), Some(at(0)));
    let writes = env.sdk_writes();
    assert_eq!(writes.len(), 7, "{writes:?}");
    assert!(
        writes[0].0.contains("/evictions/pod-1-web/status")
            && writes[0].0.contains("fieldManager=example.com%2Fmigrator")
            && writes[0].0.contains("force=true"),
        "{writes:?}"
    );

    // The server records the responder as owner of its own entry's four
    // fields, nothing else.
    let stored = env.evictions().get(&name).await.expect("get");
    let mine: Vec<_> = stored
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| m.manager.as_deref() == Some(ME))
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0].operation.as_deref(), Some("Apply"));
    assert_eq!(mine[0].subresource.as_deref(), Some("status"));
    let owned = mine[0].fields_v1.as_ref().expect("fieldsV1").0.clone();
    assert_eq!(
        owned,
        json!({"f:status": {"f:responders": {"k:{\"name\":\"example.com/migrator\"}": {
            ".": {}, "f:name": {}, "f:heartbeatTime": {}, "f:expectedCompletionTime": {},
            "f:completionTime": {}, "f:message": {},
        }}}})
    );
    // The controller sees completionTime: Completed, the evictor is next.
    env.controller_status(
        &name,
        ["Completed", "Active"],
        [Some(at(0)), Some(env.clock.now())],
        None,
    )
    .await;
    until(&env, 1500).await;
    assert_eq!(env.sdk_writes().len(), 7, "no writes after completion");
    assert_eq!(started.load(Ordering::SeqCst), 1, "never started twice");
    // The controller's applies kept the responder's fields.
    let after = env.entry(&name).await;
    assert_eq!(t(&after.completion_time), Some(at(300)));
    assert_eq!(after.message.as_deref(), Some("done after 5m"));
    env.assert_no_sdk_errors();
    sdk.abort();
}

/// A Canceled responder: `canceled()` resolves with the reason, writes are
/// refused locally (no request), heartbeats stop; a work future that ignores
/// it is dropped after the stop grace.
#[tokio::test(start_paused = true)]
async fn canceled_stops_the_work() {
    let env = Env::start().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let dropped = Arc::new(AtomicUsize::new(0));
    struct OnDrop(Arc<AtomicUsize>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let d = dropped.clone();
    let sdk = tokio::spawn(env.responder().run(move |work: ActiveEviction| {
        let tx = tx.clone();
        let d = d.clone();
        async move {
            if work.target().name == "stubborn" {
                // Ignores cancellation: only dropping stops it.
                let _guard = OnDrop(d);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return Err("never".into());
            }
            let reason = work.canceled().await;
            let at = work.now();
            let write = work.heartbeat().await;
            tx.send((reason, at, write)).expect("send");
            Err("canceled".into())
        }
    }));
    for pod in ["web", "stubborn"] {
        let name = format!("pod-1-{pod}");
        env.pod_and_eviction(pod).await;
        env.label(&name, &[ME]).await;
        env.controller_status(&name, ["Active", "Inactive"], [Some(at(0)), None], None)
            .await;
    }
    until(&env, 90).await;
    assert_eq!(env.sdk_writes().len(), 2, "one heartbeat each at 1m");
    let canceled_at = env.clock.now();
    for pod in ["web", "stubborn"] {
        env.controller_status(
            &format!("pod-1-{pod}"),
            ["Canceled", "Inactive"],
            [Some(at(0)), None],
            Some((
                "CanceledDueToNoRequesters",
                "No active requesters with eviction intent.",
            )),
        )
        .await;
    }
    let (reason, when, write) = rx.recv().await.expect("work saw the cancellation");
    assert_eq!(reason, StopReason::Canceled);
    assert_eq!(when, canceled_at, "at once (no virtual time passed)");
    assert!(
        matches!(
            write,
            Err(Error::NotActive {
                reason: StopReason::Canceled,
                ..
            })
        ),
        "{write:?}"
    );
    until(&env, 99).await;
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "grace not over yet");
    until(&env, 101).await;
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "dropped after the 10 s grace"
    );
    until(&env, 1200).await;
    assert_eq!(
        env.sdk_writes().len(),
        2,
        "no heartbeats after cancellation"
    );
    let entry = env.entry("pod-1-web").await;
    assert_eq!(t(&entry.heartbeat_time), Some(at(60)));
    assert_eq!(entry.completion_time, None);
    env.assert_no_sdk_errors();
    sdk.abort();
}

/// Evictions not labelled for this responder are never worked on, even with
/// the responder Active in their status; labelling one for it starts the work.
#[tokio::test(start_paused = true)]
async fn ignores_evictions_not_labelled_for_it() {
    let env = Env::start().await;
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    let sdk = tokio::spawn(env.responder().run(move |work: ActiveEviction| {
        s.fetch_add(1, Ordering::SeqCst);
        async move { Ok(work.complete("nothing to do").await?) }
    }));
    env.pod_and_eviction("web").await;
    env.controller_status(
        "pod-1-web",
        ["Active", "Inactive"],
        [Some(at(0)), None],
        None,
    )
    .await;
    until(&env, 60).await;
    env.label("pod-1-web", &[OTHER]).await;
    until(&env, 120).await;
    assert_eq!(started.load(Ordering::SeqCst), 0, "not labelled for it");
    assert!(env.sdk_writes().is_empty());
    assert_eq!(env.entry("pod-1-web").await.heartbeat_time, None);

    env.label("pod-1-web", &[ME]).await;
    until(&env, 121).await;
    assert_eq!(started.load(Ordering::SeqCst), 1);
    let entry = env.entry("pod-1-web").await;
    assert_eq!(t(&entry.completion_time), Some(at(120)));
    assert_eq!(entry.message.as_deref(), Some("nothing to do"));
    env.assert_no_sdk_errors();
    sdk.abort();
}

/// `--fail`: heartbeats until halfway, reports why, then stays silent — so
/// the controller may interrupt it 20 min after the last heartbeat (the
/// server refuses that write earlier, §5.4 rule 6).
#[tokio::test(start_paused = true)]
async fn failing_work_goes_silent_until_interrupted() {
    let env = Env::start().await;
    let sdk = tokio::spawn(env.responder().run(move |work: ActiveEviction| {
        TimedWork {
            duration: Duration::from_secs(300),
            fail: true,
        }
        .run(work)
    }));
    env.pod_and_eviction("web").await;
    env.label("pod-1-web", &[ME]).await;
    env.controller_status(
        "pod-1-web",
        ["Active", "Inactive"],
        [Some(at(0)), None],
        None,
    )
    .await;
    until(&env, 151).await;
    let entry = env.entry("pod-1-web").await;
    // progress at 0, heartbeats at 1m and 2m, then the failure message only.
    assert_eq!(t(&entry.heartbeat_time), Some(at(120)));
    assert_eq!(
        entry.message.as_deref(),
        Some("work failed: simulated failure after 150s: going silent")
    );
    assert_eq!(env.sdk_writes().len(), 4);
    // 19 min after the last heartbeat the server still refuses the interruption.
    until(&env, 120 + 19 * 60).await;
    let early = env
        .evictions()
        .patch_status(
            "pod-1-web",
            &PatchParams::apply(CONTROLLER).force(),
            &Patch::Apply(&json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
                "metadata": {"name": "pod-1-web", "namespace": "default"},
                "status": {"targetResponders": [
                    {"name": ME, "priority": 10000, "state": "Interrupted"},
                    {"name": EVICTOR, "priority": 100, "state": "Active"},
                ], "responders": [
                    {"name": ME, "startTime": k8s_time(at(0))},
                    {"name": EVICTOR, "startTime": k8s_time(env.clock.now())},
                ]},
            })),
        )
        .await;
    assert!(
        early.is_err(),
        "interrupting before the deadline is refused"
    );
    until(&env, 120 + 20 * 60).await;
    env.controller_status(
        "pod-1-web",
        ["Interrupted", "Active"],
        [Some(at(0)), Some(env.clock.now())],
        None,
    )
    .await;
    until(&env, 120 + 25 * 60).await;
    assert_eq!(env.sdk_writes().len(), 4, "silent after the failure");
    env.assert_no_sdk_errors();
    sdk.abort();
}

/// A restarted responder resumes the Active Eviction: its first heartbeat is
/// due one interval after the last one written before the restart, and its
/// earlier message and estimate survive (every apply restates them).
#[tokio::test(start_paused = true)]
async fn restarted_responder_resumes_and_keeps_its_fields() {
    let env = Env::start().await;
    let first = tokio::spawn(env.responder().run(move |work: ActiveEviction| {
        TimedWork {
            duration: Duration::from_secs(300),
            fail: false,
        }
        .run(work)
    }));
    env.pod_and_eviction("web").await;
    env.label("pod-1-web", &[ME]).await;
    env.controller_status(
        "pod-1-web",
        ["Active", "Inactive"],
        [Some(at(0)), None],
        None,
    )
    .await;
    until(&env, 90).await;
    first.abort();
    assert_eq!(env.sdk_writes().len(), 2, "progress at 0, heartbeat at 1m");
    until(&env, 100).await;
    let resumed = Arc::new(AtomicUsize::new(0));
    let r = resumed.clone();
    let second = tokio::spawn(env.responder().run(move |work: ActiveEviction| {
        r.fetch_add(1, Ordering::SeqCst);
        async move {
            work.canceled().await;
            Err("stopped".into())
        }
    }));
    until(&env, 101).await;
    assert_eq!(resumed.load(Ordering::SeqCst), 1);
    assert_eq!(env.sdk_writes().len(), 2, "nothing due before 2m");
    until(&env, 121).await;
    let entry = env.entry("pod-1-web").await;
    assert_eq!(t(&entry.heartbeat_time), Some(at(120)));
    assert_eq!(entry.message.as_deref(), Some("working on pod web: 0/5m"));
    assert_eq!(t(&entry.expected_completion_time), Some(at(300)));
    assert_eq!(env.sdk_writes().len(), 3);
    env.assert_no_sdk_errors();
    second.abort();
}
