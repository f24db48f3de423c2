//! The default responder `imperative-eviction.k8s.io/evictor` (eviction spec
//! §8): when it is the Active responder of an Eviction it evicts the target
//! pod through `POST pods/<name>/eviction`, backs off between failed calls,
//! and reports progress in its own `status.responders` entry (server-side
//! apply of the status, forced, field manager
//! [`FIELD_MANAGER`](exitplan_control::imperative::FIELD_MANAGER)) until the
//! pod is gone.
//!
//! Wiring: one queue of Eviction keys, [`DEFAULT_CONCURRENT_SYNCS`] workers.
//! Eviction add/update events and pod update/delete events re-queue as
//! [`exitplan_control::imperative::filter`] decides; pod events find the pod's
//! Evictions through an index by target pod UID. Each sync runs
//! [`decide`] with `clock.now()`, makes the `/eviction` call when told,
//! feeds the result to [`after_evict`], applies the status entry and
//! requeues as planned (at most 3 min later, so heartbeats continue).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::Eviction;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use exitplan_control::imperative::metrics::{FAILED_EVICTIONS, FAILED_EVICTIONS_HELP};
use exitplan_control::imperative::{
    AfterEvictError, AttemptRecords, DEFAULT_CONCURRENT_SYNCS, Decision, EvictCall, EvictOutcome,
    FIELD_MANAGER, PodEvent, Write, active_evictions_for_pod, after_evict, apply_status_body,
    decide, filter,
};

use crate::context::{Context, Task};
use crate::informer::{Change, Informer, ObjectKey};
use crate::queue::Queue;

/// Index of Evictions by `spec.target.pod.uid`.
const POD_UID_INDEX: &str = "imperative-evictor/target-pod-uid";

/// Name of the Eviction work queue.
pub const QUEUE_NAME: &str = "imperative_eviction_responder_controller_eviction";

/// Our own last write of an Eviction: the versions it superseded, and the
/// server's answer.
type Written = (Vec<String>, Arc<Eviction>);

/// Label set of the failed-evictions counter (namespace, eviction, pod).
type Labels = Vec<(String, String)>;

/// Why a sync failed (it is retried with the queue's back-off).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The status apply failed.
    #[error("applying the responder status of {key}: {source}")]
    Apply {
        /// The Eviction.
        key: ObjectKey,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The `/eviction` request could not be built.
    #[error("building the /eviction request: {0}")]
    Request(String),
    /// The decision after the call was refused.
    #[error(transparent)]
    AfterEvict(#[from] AfterEvictError),
}

/// The responder's shared state.
#[derive(Clone)]
struct Evictor {
    client: kube::Client,
    clock: exitplan_clock::SharedClock,
    evictions: Informer<Eviction>,
    pods: Informer<Pod>,
    queue: Queue<ObjectKey>,
    attempts: Arc<Mutex<AttemptRecords>>,
    /// Our last status write per Eviction: the resourceVersions it
    /// superseded and the object the server answered. While the cache still
    /// shows a superseded version, the answer is the newer truth (our own
    /// write has not come back through the watch yet).
    written: Arc<Mutex<HashMap<ObjectKey, Written>>>,
    failed_evictions: Family<Labels, Counter>,
}

/// Registers the evictor's index and handlers and returns its workers.
pub fn register(ctx: &Context) -> Vec<Task> {
    let failed_evictions = Family::<Labels, Counter>::default();
    ctx.metrics.registry(|r| {
        r.register(
            FAILED_EVICTIONS,
            FAILED_EVICTIONS_HELP,
            failed_evictions.clone(),
        )
    });
    let evictor = Evictor {
        client: ctx.client.clone(),
        clock: ctx.clock.clone(),
        evictions: ctx.informers.evictions.clone(),
        pods: ctx.informers.pods.clone(),
        queue: Queue::new(QUEUE_NAME),
        attempts: Arc::new(Mutex::new(AttemptRecords::default())),
        written: Arc::new(Mutex::new(HashMap::new())),
        failed_evictions,
    };
    evictor.evictions.add_index(POD_UID_INDEX, |e: &Eviction| {
        e.spec
            .target
            .pod
            .as_ref()
            .map(|p| vec![p.uid.clone()])
            .unwrap_or_default()
    });
    let e = evictor.clone();
    evictor
        .evictions
        .on_change(move |change: &Change<Eviction>| match change {
            Change::Added(new) => {
                if filter::on_eviction_add(new) {
                    e.queue.add(ObjectKey::of(new.as_ref()));
                }
            }
            Change::Updated { old, new } => {
                if filter::on_eviction_update(old, new) {
                    e.queue.add(ObjectKey::of(new.as_ref()));
                }
            }
            Change::Deleted(old) => {
                if let Some(update) = filter::on_eviction_delete(old) {
                    e.update_attempts(update);
                }
                if let Ok(mut w) = e.written.lock() {
                    w.remove(&ObjectKey::of(old.as_ref()));
                }
            }
        });
    let e = evictor.clone();
    evictor.pods.on_change(move |change: &Change<Pod>| {
        let (pod, event) = match change {
            Change::Added(_) => return,
            Change::Updated { old, new } => match filter::on_pod_update(old, new) {
                Some(event) => (new, event),
                None => return,
            },
            Change::Deleted(old) => (old, filter::on_pod_delete(old)),
        };
        e.pod_event(pod, &event);
    });
    (0..DEFAULT_CONCURRENT_SYNCS)
        .map(|_| {
            let e = evictor.clone();
            Box::pin(async move { e.work().await }) as Task
        })
        .collect()
}

fn std_duration(d: SignedDuration) -> Duration {
    Duration::try_from(d).unwrap_or_default()
}

impl Evictor {
    fn update_attempts(&self, update: exitplan_control::imperative::AttemptUpdate) {
        if let Ok(mut a) = self.attempts.lock() {
            a.apply(update);
        }
    }

    fn pod_event(&self, pod: &Pod, event: &PodEvent) {
        self.update_attempts(event.attempt_update());
        let candidates = self.evictions.by_index(POD_UID_INDEX, &event.pod_uid);
        let active = active_evictions_for_pod(pod, candidates.iter().map(Arc::as_ref));
        if let Some(err) = &active.error {
            tracing::error!(error = %err, "several active Evictions for one pod");
        }
        for eviction in active.evictions {
            self.queue.add(ObjectKey::of(eviction));
        }
    }

    async fn work(self) {
        self.queue
            .run_worker("imperative eviction sync", |key| {
                let this = &self;
                async move { this.sync(&key).await }
            })
            .await;
    }

    /// The freshest Eviction we know of at `key`.
    fn current(&self, key: &ObjectKey) -> Option<Arc<Eviction>> {
        let cached = self.evictions.get(key)?;
        let mut written = self.written.lock().ok()?;
        match written.get(key) {
            Some((superseded, ours))
                if cached
                    .resource_version()
                    .is_some_and(|rv| superseded.contains(&rv)) =>
            {
                Some(ours.clone())
            }
            Some(_) => {
                written.remove(key);
                Some(cached)
            }
            None => Some(cached),
        }
    }

    async fn sync(&self, key: &ObjectKey) -> Result<(), SyncError> {
        let Some(eviction) = self.current(key) else {
            return Ok(());
        };
        let Some(target) = eviction.spec.target.pod.as_ref() else {
            return Ok(());
        };
        let pod_key = ObjectKey::new(key.namespace.as_deref(), &target.name);
        let pod = self.pods.get(&pod_key);
        let attempt = self.attempts.lock().ok().and_then(|a| a.get(&target.uid));
        let now = self.clock.now();
        match decide(&eviction, pod.as_deref(), attempt.as_ref(), now) {
            Decision::Skip(reason) => {
                tracing::debug!(eviction = %key, ?reason, "nothing to do");
                Ok(())
            }
            Decision::Write(write) => self.write(key, &eviction, write).await,
            Decision::Evict(call) => {
                let outcome = self.evict(&call).await?;
                tracing::info!(eviction = %key, pod = %call.pod_name, ?outcome, "called /eviction");
                let after = after_evict(&eviction, outcome, self.clock.now())?;
                self.update_attempts(after.attempt);
                if let Some(labels) = after.failed_eviction {
                    let labels: Labels = ["namespace", "eviction", "pod"]
                        .iter()
                        .zip(labels.values())
                        .map(|(k, v)| ((*k).to_owned(), v.to_owned()))
                        .collect();
                    self.failed_evictions.get_or_create(&labels).inc();
                }
                self.write(key, &eviction, after.write).await
            }
        }
    }

    /// `POST pods/<name>/eviction` with the decision's body (its delete
    /// options carry the UID precondition). kube-rs' `Api::evict` is not
    /// used: it sends the options under `delete_options`, a key the API
    /// server ignores, so the precondition would be lost.
    async fn evict(&self, call: &EvictCall) -> Result<EvictOutcome, SyncError> {
        let url = format!(
            "/api/v1/namespaces/{}/pods/{}/eviction",
            call.namespace, call.pod_name
        );
        let body = serde_json::to_vec(&call.body).map_err(|e| SyncError::Request(e.to_string()))?;
        let request = kube::core::Request::new(url)
            .create(&PostParams::default(), body)
            .map_err(|e| SyncError::Request(e.to_string()))?;
        Ok(
            match self.client.request::<kube::core::Status>(request).await {
                Ok(_) => EvictOutcome::Ok,
                Err(kube::Error::Api(status)) => {
                    let seconds = status.details.as_ref().map_or(0, |d| d.retry_after_seconds);
                    let suggests = seconds > 0
                        || matches!(status.reason.as_str(), "ServerTimeout" | "Timeout");
                    EvictOutcome::Failed {
                        error_message: status.message.clone(),
                        retry_after: suggests
                            .then(|| SignedDuration::from_secs(i64::from(seconds))),
                    }
                }
                Err(other) => EvictOutcome::Failed {
                    error_message: other.to_string(),
                    retry_after: None,
                },
            },
        )
    }

    async fn write(
        &self,
        key: &ObjectKey,
        eviction: &Eviction,
        write: Write,
    ) -> Result<(), SyncError> {
        if let Some(entry) = write.responder_status {
            let api: Api<Eviction> = Api::namespaced(
                self.client.clone(),
                key.namespace.as_deref().unwrap_or_default(),
            );
            let body = apply_status_body(eviction, &entry);
            let written = api
                .patch_status(
                    &key.name,
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(body),
                )
                .await
                .map_err(|source| SyncError::Apply {
                    key: key.clone(),
                    source,
                })?;
            tracing::debug!(eviction = %key, message = ?entry.message, "responder status applied");
            if let (Some(base), Ok(mut w)) = (eviction.resource_version(), self.written.lock()) {
                let mut superseded = match w.get(key) {
                    Some((before, ours)) if ours.resource_version().as_ref() == Some(&base) => {
                        before.clone()
                    }
                    _ => Vec::new(),
                };
                superseded.push(base);
                w.insert(key.clone(), (superseded, Arc::new(written)));
            }
        }
        if let Some(after) = write.requeue_after {
            self.queue.add_after(key.clone(), std_duration(after));
        }
        Ok(())
    }
}
