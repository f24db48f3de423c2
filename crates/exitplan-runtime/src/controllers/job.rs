//! The Job controller (upstream `pkg/controller/job/job_controller.go`,
//! job-failure spec §3–§9): wiring around the pure decision
//! [`sync_job`](exitplan_control::job::sync_job).
//!
//! Wiring: a queue of Job keys ([`WORKERS`] workers) fed by Job add / update /
//! delete (at once) and by pod add / update / delete of pods controlled by a
//! Job, or of orphans its selector matches (batched by
//! [`SYNC_JOB_BATCH_PERIOD`]). A second queue of pod keys removes the
//! tracking finalizer from orphans (no controller, Job gone or finished).
//!
//! One sync: deferred while the cached Job is older than the controller's
//! last status write of it ([`WrittenVersions`], upstream
//! `StaleControllerConsistencyJob`); read the pod creation/deletion
//! [`Expectations`] (before the pods), claim the pods (`getPodsForJob`: the pure
//! [`claim_pods`](exitplan_control::job::claim::claim_pods) over the
//! namespace's cached pods; orphans the selector matches are adopted with a
//! strategic merge patch adding the controller reference and the tracking
//! finalizer, after a fresh GET confirms the Job is not being deleted;
//! controlled pods the selector no longer matches are released, reference
//! and finalizer removed; a failed claim stops the sync), the
//! finalizer-removal expectations and the
//! in-memory [`BackoffRecord`], ask the pure decision for a plan, then apply
//! its steps strictly in order: the pod-management step (slow-start creates
//! / deletes, with expectations raised before and lowered on failures; a
//! partial failure asks [`sync_job_after_manage`] for the rest of the plan),
//! then status writes (`replace_status` carrying the resourceVersion; 409 →
//! retried), finalizer removals (strategic merge `$deleteFromPrimitiveList`)
//! and events. The first failing write stops the sync; the two-phase
//! counting protocol of the plan makes every step boundary a safe resume
//! point (a crash never double-counts).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use exitplan_api::batch::constants::JOB_TRACKING_FINALIZER;
use exitplan_api::selector::{SelectorError, selects};
use exitplan_control::job::backoff::BackoffRecord;
use exitplan_control::job::claim::{Claim, claim_pods, controller_of};
use exitplan_control::job::classify::has_tracking_finalizer;
use exitplan_control::job::conditions::is_finished;
use exitplan_control::job::plan::{EventType, JobEvent, NewPod, PodRef};
use exitplan_control::job::sync::skip_reason;
use exitplan_control::job::{ManageOutcome, Step, SyncInput, sync_job, sync_job_after_manage};

use crate::context::{Context, Task};
use crate::informer::{Change, Informer, ObjectKey};
use crate::queue::Queue;

/// Index of pods by the UID of their controller owner reference.
const CONTROLLER_UID_INDEX: &str = "job/controller-uid";
/// Index of Jobs by namespace.
const NAMESPACE_INDEX: &str = "job/namespace";
/// Pod index: the namespace of each pod without a controller reference
/// (the orphans a Job may adopt).
const ORPHAN_INDEX: &str = "job/orphans";

/// Name of the Job work queue.
pub const QUEUE_NAME: &str = "job";
/// Name of the orphan-pod work queue.
pub const ORPHAN_QUEUE_NAME: &str = "job_orphan_pod";
/// Number of Job workers (`--concurrent-job-syncs` default).
pub const WORKERS: usize = 5;
/// Pod events are batched into one sync this long after the first
/// (`syncJobBatchPeriod`).
pub const SYNC_JOB_BATCH_PERIOD: Duration = Duration::from_secs(1);
/// Unobserved creations/deletions stop blocking pod management after this
/// long (`ExpectationsTimeout`).
pub const EXPECTATIONS_TIMEOUT: SignedDuration = SignedDuration::from_secs(5 * 60);
/// `reportingController` of the Job's events.
pub const EVENT_REPORTER: &str = "job-controller";
/// `reportingInstance` of the Job's events.
pub const EVENT_INSTANCE: &str = "exitplan-job-controller";
/// Metric counting pods handled by a pod failure policy rule, by action.
pub const POLICY_ACTIONS_METRIC: &str = "job_controller_pod_failures_handled_by_failure_policy";
/// Metric counting Job syncs (of a Job in the cache); exposed with the
/// counter suffix as `job_controller_job_syncs_total`.
pub const SYNCS_METRIC: &str = "job_controller_job_syncs";

/// Metric counting syncs deferred because the Job cache had not yet
/// observed the controller's last status write of the Job (upstream
/// `job_controller_stale_sync_skips_total`); exposed with the counter suffix.
pub const STALE_SYNC_SKIPS_METRIC: &str = "job_controller_stale_sync_skips";

/// Why a sync failed (retried with the queue's back-off).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A write to the API server failed.
    #[error("{what} {target}: {source}")]
    Api {
        /// What the write was.
        what: &'static str,
        /// The object written.
        target: String,
        /// The client's error.
        source: kube::Error,
    },
    /// The Job's selector cannot be converted (upstream `getPodsForJob`).
    #[error("couldn't convert the selector of Job {job}: {source}")]
    Selector {
        /// The Job.
        job: String,
        /// Why.
        source: SelectorError,
    },
    /// Adopting or releasing pods failed (upstream `ClaimPods`' aggregate
    /// error): nothing else of the sync ran.
    #[error("claiming the pods of Job {job}: {errors}")]
    Claim {
        /// The Job.
        job: String,
        /// Every failed adoption or release, `; `-separated.
        errors: String,
    },
    /// Some pod creations or deletions failed (the rest of the plan was
    /// applied; upstream `manageJob` returns the error for a retry).
    #[error(
        "{failed_creations} pod creation(s) and {failed_deletions} pod deletion(s) of Job {job} failed"
    )]
    Manage {
        /// The Job.
        job: String,
        /// Creations that failed or were skipped.
        failed_creations: usize,
        /// Deletions that failed.
        failed_deletions: usize,
    },
}

fn api_err(what: &'static str, target: impl Into<String>) -> impl FnOnce(kube::Error) -> SyncError {
    let target = target.into();
    move |source| SyncError::Api {
        what,
        target,
        source,
    }
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 404)
}

fn is_invalid(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 422)
}

/// client-go's `ControllerExpectations`: per Job, creations and deletions
/// issued but not yet seen by the pod informer.
#[derive(Debug, Default)]
pub struct Expectations {
    inner: Mutex<HashMap<ObjectKey, Expectation>>,
}

#[derive(Debug, Clone, Copy)]
struct Expectation {
    add: i64,
    del: i64,
    at: Timestamp,
}

impl Expectations {
    /// Whether pod management may run: nothing recorded, everything
    /// observed, or the record is older than [`EXPECTATIONS_TIMEOUT`].
    pub fn satisfied(&self, key: &ObjectKey, now: Timestamp) -> bool {
        let Ok(m) = self.inner.lock() else {
            return true;
        };
        match m.get(key) {
            None => true,
            Some(e) => {
                (e.add <= 0 && e.del <= 0) || now.duration_since(e.at) > EXPECTATIONS_TIMEOUT
            }
        }
    }

    /// Expects `add` creations and `del` deletions (replaces the record).
    pub fn set(&self, key: &ObjectKey, add: usize, del: usize, now: Timestamp) {
        if let Ok(mut m) = self.inner.lock() {
            m.insert(
                key.clone(),
                Expectation {
                    add: i64::try_from(add).unwrap_or(i64::MAX),
                    del: i64::try_from(del).unwrap_or(i64::MAX),
                    at: now,
                },
            );
        }
    }

    /// One creation was observed (or will never happen).
    pub fn creation_observed(&self, key: &ObjectKey) {
        if let Ok(mut m) = self.inner.lock()
            && let Some(e) = m.get_mut(key)
        {
            e.add -= 1;
        }
    }

    /// One deletion was observed (or will never happen).
    pub fn deletion_observed(&self, key: &ObjectKey) {
        if let Ok(mut m) = self.inner.lock()
            && let Some(e) = m.get_mut(key)
        {
            e.del -= 1;
        }
    }

    /// Pending (creations, deletions) of `key`, for tests and logs.
    pub fn pending(&self, key: &ObjectKey) -> Option<(i64, i64)> {
        let m = self.inner.lock().ok()?;
        m.get(key).map(|e| (e.add, e.del))
    }

    /// Forgets `key` (Job deleted).
    pub fn delete(&self, key: &ObjectKey) {
        if let Ok(mut m) = self.inner.lock() {
            m.remove(key);
        }
    }
}

/// Upstream `uidTrackingExpectations`: per Job, the pod UIDs whose tracking
/// finalizer removal was issued but not yet observed.
#[derive(Debug, Default)]
pub struct FinalizerExpectations {
    inner: Mutex<HashMap<ObjectKey, BTreeSet<String>>>,
}

impl FinalizerExpectations {
    /// The expected removals of `key`.
    pub fn expected(&self, key: &ObjectKey) -> BTreeSet<String> {
        self.inner
            .lock()
            .ok()
            .and_then(|m| m.get(key).cloned())
            .unwrap_or_default()
    }

    /// Expects the removal of the finalizers of `uids`.
    pub fn expect(&self, key: &ObjectKey, uids: impl IntoIterator<Item = String>) {
        if let Ok(mut m) = self.inner.lock() {
            m.entry(key.clone()).or_default().extend(uids);
        }
    }

    /// The removal for `uid` was observed (or will never happen).
    pub fn observed(&self, key: &ObjectKey, uid: &str) {
        if let Ok(mut m) = self.inner.lock()
            && let Some(set) = m.get_mut(key)
        {
            set.remove(uid);
            if set.is_empty() {
                m.remove(key);
            }
        }
    }

    /// Forgets `key` (Job deleted).
    pub fn delete(&self, key: &ObjectKey) {
        if let Ok(mut m) = self.inner.lock() {
            m.remove(key);
        }
    }
}

/// Upstream's `ConsistencyStore` for Jobs (`StaleControllerConsistencyJob`,
/// kubernetes#130103): per Job, the resourceVersion its last status write
/// returned. A sync on a cached Job older than that would read counters
/// from before the write — e.g. a succeeded pod whose finalizer the write's
/// sync removed, counted neither in `succeeded` nor as uncounted — and
/// create a pod too many; it is deferred instead until the Job informer
/// delivers the write (its update event queues the Job again).
///
/// Pod writes need no entry: creations, deletions and finalizer removals
/// are already guarded by [`Expectations`] and [`FinalizerExpectations`].
#[derive(Debug, Default)]
pub struct WrittenVersions {
    inner: Mutex<HashMap<ObjectKey, (String, u64)>>,
}

impl WrittenVersions {
    /// Records that the Job `key` (UID `uid`) was written at `rv`.
    pub fn wrote(&self, key: &ObjectKey, uid: &str, rv: &str) {
        let Ok(rv) = rv.parse::<u64>() else {
            return;
        };
        if let Ok(mut m) = self.inner.lock() {
            m.insert(key.clone(), (uid.to_owned(), rv));
        }
    }

    /// Whether `cached` (the informer's Job at `key`) includes the last
    /// recorded write: no record, another Job of the same name, a
    /// resourceVersion at least the written one, or versions that cannot
    /// be compared.
    pub fn observed(&self, key: &ObjectKey, cached: &Job) -> bool {
        let Ok(mut m) = self.inner.lock() else {
            return true;
        };
        let Some((uid, written)) = m.get(key) else {
            return true;
        };
        let same_job = cached.metadata.uid.as_deref() == Some(uid.as_str());
        let cached_rv = cached
            .metadata
            .resource_version
            .as_deref()
            .and_then(|rv| rv.parse::<u64>().ok());
        match cached_rv {
            Some(rv) if same_job && rv < *written => false,
            _ => {
                m.remove(key);
                true
            }
        }
    }

    /// Forgets `key` (Job deleted).
    pub fn delete(&self, key: &ObjectKey) {
        if let Ok(mut m) = self.inner.lock() {
            m.remove(key);
        }
    }
}

type Labels = Vec<(String, String)>;

#[derive(Clone)]
struct JobController {
    client: kube::Client,
    clock: exitplan_clock::SharedClock,
    pods: Informer<Pod>,
    jobs: Informer<Job>,
    queue: Queue<ObjectKey>,
    orphan_queue: Queue<ObjectKey>,
    expectations: Arc<Expectations>,
    finalizers: Arc<FinalizerExpectations>,
    written: Arc<WrittenVersions>,
    backoff: Arc<Mutex<HashMap<ObjectKey, BackoffRecord>>>,
    policy_actions: Family<Labels, Counter>,
    syncs: Counter,
    stale_skips: Counter,
}

fn controller_ref(pod: &Pod) -> Option<&OwnerReference> {
    controller_of(pod)
}

fn namespace_of(meta: &ObjectMeta) -> Vec<String> {
    vec![meta.namespace.clone().unwrap_or_default()]
}

fn std_duration(d: SignedDuration) -> Duration {
    Duration::try_from(d).unwrap_or_default()
}

/// Registers the Job controller's index and handlers and returns its workers.
pub fn register(ctx: &Context) -> Vec<Task> {
    let policy_actions = Family::<Labels, Counter>::default();
    ctx.metrics.registry(|r| {
        r.register(
            POLICY_ACTIONS_METRIC,
            "The number of failed Pods handled by the Pod failure policy, by action",
            policy_actions.clone(),
        )
    });
    let syncs = Counter::default();
    ctx.metrics
        .registry(|r| r.register(SYNCS_METRIC, "The number of Job syncs", syncs.clone()));
    let stale_skips = Counter::default();
    ctx.metrics.registry(|r| {
        r.register(
            STALE_SYNC_SKIPS_METRIC,
            "The number of Job syncs deferred because the Job cache was older than the controller's last write",
            stale_skips.clone(),
        )
    });
    let c = JobController {
        client: ctx.client.clone(),
        clock: ctx.clock.clone(),
        pods: ctx.informers.pods.clone(),
        jobs: ctx.informers.jobs.clone(),
        queue: Queue::new(QUEUE_NAME),
        orphan_queue: Queue::new(ORPHAN_QUEUE_NAME),
        expectations: Arc::new(Expectations::default()),
        finalizers: Arc::new(FinalizerExpectations::default()),
        written: Arc::new(WrittenVersions::default()),
        backoff: Arc::new(Mutex::new(HashMap::new())),
        policy_actions,
        syncs,
        stale_skips,
    };
    c.pods.add_index(CONTROLLER_UID_INDEX, |p: &Pod| {
        controller_ref(p)
            .map(|r| vec![r.uid.clone()])
            .unwrap_or_default()
    });
    c.pods.add_index(ORPHAN_INDEX, |p: &Pod| {
        if controller_ref(p).is_none() {
            namespace_of(&p.metadata)
        } else {
            Vec::new()
        }
    });
    c.jobs
        .add_index(NAMESPACE_INDEX, |j: &Job| namespace_of(&j.metadata));
    let h = c.clone();
    c.jobs.on_change(move |change: &Change<Job>| match change {
        Change::Added(j) => h.queue.add(ObjectKey::of(j.as_ref())),
        Change::Updated { new, .. } => h.queue.add(ObjectKey::of(new.as_ref())),
        Change::Deleted(j) => h.delete_job(j),
    });
    let h = c.clone();
    c.pods.on_change(move |change: &Change<Pod>| match change {
        Change::Added(p) => h.add_pod(p),
        Change::Updated { old, new } => h.update_pod(old, new),
        Change::Deleted(p) => h.delete_pod(p, true),
    });
    let mut tasks: Vec<Task> = (0..WORKERS)
        .map(|_| {
            let w = c.clone();
            Box::pin(async move { w.work().await }) as Task
        })
        .collect();
    tasks.push(Box::pin(async move { c.orphan_work().await }));
    tasks
}

impl JobController {
    /// `resolveControllerRef`: the cached Job `r` names, if its UID matches.
    fn resolve(&self, namespace: Option<&str>, r: &OwnerReference) -> Option<Arc<Job>> {
        if r.kind != "Job" || r.api_version != "batch/v1" {
            return None;
        }
        let job = self.jobs.get(&ObjectKey::new(namespace, &r.name))?;
        (job.metadata.uid.as_deref() == Some(r.uid.as_str())).then_some(job)
    }

    fn enqueue_batched(&self, job: &Job) {
        self.queue
            .add_after(ObjectKey::of(job), SYNC_JOB_BATCH_PERIOD);
    }

    fn enqueue_orphan(&self, pod: &Pod) {
        self.orphan_queue.add(ObjectKey::of(pod));
    }

    fn add_pod(&self, pod: &Pod) {
        if pod.metadata.deletion_timestamp.is_some() {
            // A pod already being deleted (seen after a restart) is no creation.
            self.delete_pod(pod, false);
            return;
        }
        let Some(r) = controller_ref(pod) else {
            if has_tracking_finalizer(pod) {
                self.enqueue_orphan(pod);
            }
            // An orphan: the Jobs selecting it may adopt it (no creation
            // observed: no Job waits for an orphan).
            for job in self.pod_jobs(pod) {
                self.enqueue_batched(&job);
            }
            return;
        };
        let Some(job) = self.resolve(pod.metadata.namespace.as_deref(), r) else {
            if has_tracking_finalizer(pod) {
                self.enqueue_orphan(pod);
            }
            return;
        };
        self.expectations
            .creation_observed(&ObjectKey::of(job.as_ref()));
        self.enqueue_batched(&job);
    }

    fn update_pod(&self, old: &Pod, new: &Pod) {
        if new.metadata.deletion_timestamp.is_some() {
            // Graceful deletion started: the Job may replace the pod now.
            self.delete_pod(new, false);
            return;
        }
        let finalizer_removed = !has_tracking_finalizer(new);
        let new_ref = controller_ref(new);
        let old_ref = controller_ref(old);
        let ns = new.metadata.namespace.as_deref();
        let uid = new.metadata.uid.as_deref().unwrap_or_default();
        if new_ref != old_ref
            && let Some(r) = old_ref
            && let Some(job) = self.resolve(ns, r)
        {
            if finalizer_removed {
                self.finalizers.observed(&ObjectKey::of(job.as_ref()), uid);
            }
            self.enqueue_batched(&job);
        }
        let job = new_ref.and_then(|r| self.resolve(ns, r));
        match job {
            Some(job) => {
                if finalizer_removed {
                    self.finalizers.observed(&ObjectKey::of(job.as_ref()), uid);
                }
                if is_finished(&job) && has_tracking_finalizer(new) {
                    self.enqueue_orphan(new);
                }
                self.enqueue_batched(&job);
            }
            None => {
                if has_tracking_finalizer(new) {
                    self.enqueue_orphan(new);
                }
                // An orphan whose labels or controller changed: the Jobs
                // selecting it now may adopt it.
                if new_ref.is_none()
                    && (new.metadata.labels != old.metadata.labels || new_ref != old_ref)
                {
                    for job in self.pod_jobs(new) {
                        self.enqueue_batched(&job);
                    }
                }
            }
        }
    }

    /// `getPodJobs`: the cached Jobs of the pod's namespace whose selector
    /// matches its labels (none for a pod without labels).
    fn pod_jobs(&self, pod: &Pod) -> Vec<Arc<Job>> {
        let labels = pod.metadata.labels.as_ref();
        if labels.is_none_or(|l| l.is_empty()) {
            return Vec::new();
        }
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        self.jobs
            .by_index(NAMESPACE_INDEX, &ns)
            .into_iter()
            .filter(|j| selects(j.spec.as_ref().and_then(|s| s.selector.as_ref()), labels))
            .collect()
    }

    /// `deletePod`: `last` is the final delete (not a deletionTimestamp update).
    fn delete_pod(&self, pod: &Pod, last: bool) {
        let has_finalizer = has_tracking_finalizer(pod);
        let job =
            controller_ref(pod).and_then(|r| self.resolve(pod.metadata.namespace.as_deref(), r));
        let Some(job) = job.filter(|j| !is_finished(j)) else {
            // syncJob will not remove this finalizer.
            if has_finalizer && !last {
                self.enqueue_orphan(pod);
            }
            return;
        };
        let key = ObjectKey::of(job.as_ref());
        self.expectations.deletion_observed(&key);
        if last || !has_finalizer {
            self.finalizers
                .observed(&key, pod.metadata.uid.as_deref().unwrap_or_default());
        }
        self.enqueue_batched(&job);
    }

    fn delete_job(&self, job: &Job) {
        self.queue.add(ObjectKey::of(job));
        let Some(uid) = job.metadata.uid.as_deref() else {
            return;
        };
        for pod in self.pods.by_index(CONTROLLER_UID_INDEX, uid) {
            if has_tracking_finalizer(&pod) {
                self.enqueue_orphan(&pod);
            }
        }
    }

    async fn work(self) {
        self.queue
            .run_worker("Job sync", |key| {
                let this = &self;
                async move { this.sync(&key).await }
            })
            .await;
    }

    /// `getPodsForJob`: the Job's pods after adopting the orphans its
    /// selector matches and releasing the controlled pods it no longer
    /// matches. An adopted pod is the patched object (reference and
    /// tracking finalizer set). Every claim is attempted; any failure
    /// fails the sync (retried), as upstream's aggregate error.
    async fn claim(&self, key: &ObjectKey, job: &Job) -> Result<Vec<Pod>, SyncError> {
        let ns = key.namespace.clone().unwrap_or_default();
        // The only pods a claim can keep, adopt or release: those the Job
        // controls and the namespace's orphans (a pod with another
        // controller is never claimed), not every pod of the namespace.
        let uid = job.metadata.uid.as_deref().unwrap_or_default();
        let cached: Vec<Pod> = self
            .pods
            .by_index(CONTROLLER_UID_INDEX, uid)
            .iter()
            .chain(self.pods.by_index(ORPHAN_INDEX, &ns).iter())
            .map(|p| Pod::clone(p))
            .collect();
        let claims = claim_pods(job, &cached).map_err(|source| SyncError::Selector {
            job: key.to_string(),
            source,
        })?;
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
        let mut can_adopt: Option<Result<(), String>> = None;
        let mut pods = Vec::new();
        let mut errors = Vec::new();
        for (pod, claim) in claims {
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            let uid = pod.metadata.uid.as_deref().unwrap_or_default();
            match claim {
                Claim::Owned => pods.push(pod.clone()),
                Claim::Adopt => {
                    if can_adopt.is_none() {
                        can_adopt = Some(self.can_adopt(key, job).await);
                    }
                    if let Some(Err(why)) = &can_adopt {
                        errors.push(format!("can't adopt Pod {ns}/{name} ({uid}): {why}"));
                        continue;
                    }
                    match api
                        .patch(
                            name,
                            &PatchParams::default(),
                            &Patch::Strategic(adopt_patch(job, pod)),
                        )
                        .await
                    {
                        Ok(adopted) => {
                            tracing::info!(job = %key, pod = %name, "adopted pod");
                            pods.push(adopted);
                        }
                        Err(err) if is_not_found(&err) => {}
                        Err(err) => errors.push(format!("adopting Pod {ns}/{name}: {err}")),
                    }
                }
                Claim::Release => {
                    let patch = Patch::Strategic(release_patch(job, pod));
                    match api.patch(name, &PatchParams::default(), &patch).await {
                        Ok(_) => tracing::info!(job = %key, pod = %name, "released pod"),
                        // Gone, or no longer ours / recreated (uid mismatch).
                        Err(err) if is_not_found(&err) || is_invalid(&err) => {}
                        Err(err) => errors.push(format!("releasing Pod {ns}/{name}: {err}")),
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(pods)
        } else {
            Err(SyncError::Claim {
                job: key.to_string(),
                errors: errors.join("; "),
            })
        }
    }

    /// `canAdoptFunc` (`RecheckDeletionTimestamp`): a fresh GET of the Job,
    /// which must be the same object (UID) and not being deleted.
    async fn can_adopt(&self, key: &ObjectKey, job: &Job) -> Result<(), String> {
        let ns = key.namespace.as_deref().unwrap_or_default();
        let api: Api<Job> = Api::namespaced(self.client.clone(), ns);
        let fresh = api
            .get(&key.name)
            .await
            .map_err(|e| format!("can't recheck DeletionTimestamp: {e}"))?;
        let (got, want) = (
            fresh.metadata.uid.as_deref().unwrap_or_default(),
            job.metadata.uid.as_deref().unwrap_or_default(),
        );
        if got != want {
            return Err(format!(
                "can't recheck DeletionTimestamp: original Job {key} is gone: got uid {got}, wanted {want}"
            ));
        }
        if let Some(at) = &fresh.metadata.deletion_timestamp {
            return Err(format!("{key} has just been deleted at {}", at.0));
        }
        Ok(())
    }

    fn backoff_of(&self, key: &ObjectKey) -> BackoffRecord {
        self.backoff
            .lock()
            .ok()
            .and_then(|m| m.get(key).cloned())
            .unwrap_or_default()
    }

    fn set_backoff(&self, key: &ObjectKey, record: Option<BackoffRecord>) {
        if let Ok(mut m) = self.backoff.lock() {
            match record {
                Some(r) => m.insert(key.clone(), r),
                None => m.remove(key),
            };
        }
    }

    /// One `syncJob`.
    async fn sync(&self, key: &ObjectKey) -> Result<(), SyncError> {
        let Some(job) = self.jobs.get(key) else {
            self.expectations.delete(key);
            self.finalizers.delete(key);
            self.written.delete(key);
            self.set_backoff(key, None);
            return Ok(());
        };
        if !self.written.observed(key, &job) {
            // The Job's update event for that write queues it again.
            self.stale_skips.inc();
            tracing::debug!(job = %key, cached = ?job.metadata.resource_version, "Job cache older than the last status write; sync deferred");
            return Ok(());
        }
        self.syncs.inc();
        // Expectations first, then the pods: an observation racing with the
        // read can only make the sync more conservative. The informer
        // updates its cache before it calls the handlers that lower them,
        // so an expectation already gone here is a change the pods read
        // below include. Read after the pods (as upstream does), a finalizer
        // removal observed in between (e.g. during an adoption's requests)
        // would leave a counted pod in the pods with its finalizer but no
        // longer expected: counted again.
        let now = self.clock.now();
        let satisfied = self.expectations.satisfied(key, now);
        let expected_rm = self.finalizers.expected(key);
        // A skipped sync (finished, managed elsewhere) claims nothing.
        let pods = if skip_reason(&job).is_none() {
            self.claim(key, &job).await?
        } else {
            Vec::new()
        };
        let backoff = self.backoff_of(key);
        let input = SyncInput {
            job: &job,
            pods: &pods,
            backoff: &backoff,
            expected_removed_finalizers: &expected_rm,
            expectations_satisfied: satisfied,
            now,
        };
        let plan = sync_job(&input);
        if let Some(skipped) = &plan.skipped {
            tracing::debug!(job = %key, reason = ?skipped, "Job sync skipped");
        }
        let mut steps = plan.steps.clone();
        let manage_first = matches!(
            steps.first(),
            Some(Step::DeletePods { .. } | Step::CreatePods { .. })
        );
        let mut outcome = ManageOutcome::default();
        if manage_first {
            let first = steps.remove(0);
            outcome = self.manage(key, &job, &first).await;
            if outcome != ManageOutcome::default() {
                steps = sync_job_after_manage(&input, &outcome, false).steps;
            }
        }
        let mut current = Job::clone(&job);
        for step in &steps {
            self.apply(key, &mut current, step).await?;
        }
        if let Some(after) = plan.requeue_after {
            self.queue.add_after(key.clone(), std_duration(after));
        }
        if outcome != ManageOutcome::default() {
            return Err(SyncError::Manage {
                job: key.to_string(),
                failed_creations: outcome.failed_creations,
                failed_deletions: outcome.failed_deletions.len(),
            });
        }
        Ok(())
    }

    /// The pod-management step: deletes or slow-start creates.
    async fn manage(&self, key: &ObjectKey, job: &Job, step: &Step) -> ManageOutcome {
        let mut outcome = ManageOutcome::default();
        let ns = key.namespace.clone().unwrap_or_default();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
        match step {
            Step::DeletePods {
                pods,
                remove_finalizer_first,
            } => {
                self.expectations.set(key, 0, pods.len(), self.clock.now());
                for p in pods {
                    if let Err(err) = self.delete_one(&api, p, *remove_finalizer_first).await {
                        self.expectations.deletion_observed(key);
                        if !is_not_found(&err) {
                            tracing::warn!(job = %key, pod = %p.name, error = %err, "deleting pod failed");
                            outcome.failed_deletions.insert(p.uid.clone());
                        }
                    }
                }
            }
            Step::CreatePods { batches } => {
                let total: usize = batches.iter().map(Vec::len).sum();
                self.expectations.set(key, total, 0, self.clock.now());
                let mut failed = false;
                for batch in batches {
                    if failed {
                        // Skipped after a failing batch: these will never be observed.
                        for _ in batch {
                            self.expectations.creation_observed(key);
                        }
                        outcome.failed_creations += batch.len();
                        continue;
                    }
                    for np in batch {
                        match api.create(&PostParams::default(), &pod_from(job, np)).await {
                            Ok(pod) => {
                                tracing::info!(job = %key, pod = pod.metadata.name.as_deref().unwrap_or_default(), "created pod")
                            }
                            Err(err) => {
                                tracing::warn!(job = %key, error = %err, "creating pod failed");
                                self.expectations.creation_observed(key);
                                outcome.failed_creations += 1;
                                failed = true;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        outcome
    }

    async fn delete_one(
        &self,
        api: &Api<Pod>,
        p: &PodRef,
        remove_finalizer_first: bool,
    ) -> Result<(), kube::Error> {
        if remove_finalizer_first {
            remove_finalizer(api, &p.name).await?;
        }
        api.delete(&p.name, &DeleteParams::default()).await?;
        tracing::info!(pod = %p.name, "deleted pod");
        Ok(())
    }

    /// Applies one non-management step.
    async fn apply(
        &self,
        key: &ObjectKey,
        current: &mut Job,
        step: &Step,
    ) -> Result<(), SyncError> {
        let ns = key.namespace.clone().unwrap_or_default();
        match step {
            Step::DeletePods { .. } | Step::CreatePods { .. } => {}
            Step::UpdateStatus(status) => self.write_status(key, current, status).await?,
            Step::SaveBackoffRecord(r) => self.set_backoff(key, Some(r.clone())),
            Step::RemoveBackoffRecord => self.set_backoff(key, None),
            Step::RecordPolicyActions(actions) => {
                for (action, n) in actions {
                    self.policy_actions
                        .get_or_create(&vec![("action".to_owned(), action.clone())])
                        .inc_by(u64::from(*n));
                }
            }
            Step::RemoveFinalizers(pods) => {
                self.finalizers
                    .expect(key, pods.iter().map(|p| p.uid.clone()));
                let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
                let mut first_err = None;
                for p in pods {
                    match remove_finalizer(&api, &p.name).await {
                        Ok(()) => {}
                        Err(err) if is_not_found(&err) => self.finalizers.observed(key, &p.uid),
                        Err(err) => {
                            self.finalizers.observed(key, &p.uid);
                            first_err.get_or_insert((p.name.clone(), err));
                        }
                    }
                }
                if let Some((name, err)) = first_err {
                    return Err(api_err("removing the tracking finalizer of pod", name)(err));
                }
            }
            Step::Event(event) => self.record_event(current, event).await,
        }
        Ok(())
    }

    async fn write_status(
        &self,
        key: &ObjectKey,
        current: &mut Job,
        status: &JobStatus,
    ) -> Result<(), SyncError> {
        let api: Api<Job> = Api::namespaced(
            self.client.clone(),
            key.namespace.as_deref().unwrap_or_default(),
        );
        let mut body = current.clone();
        body.status = Some(status.clone());
        body.metadata.managed_fields = None;
        let written = api
            .replace_status(&key.name, &PostParams::default(), &body)
            .await
            .map_err(api_err("writing the status of Job", key.to_string()))?;
        tracing::debug!(job = %key, status = ?written.status, "wrote Job status");
        self.written.wrote(
            key,
            written.metadata.uid.as_deref().unwrap_or_default(),
            written
                .metadata
                .resource_version
                .as_deref()
                .unwrap_or_default(),
        );
        *current = written;
        Ok(())
    }

    /// Writes an `events.k8s.io/v1` Event about the Job, stamped with the
    /// injected clock. Failures are logged only (events are best effort).
    async fn record_event(&self, job: &Job, event: &JobEvent) {
        let ns = job.metadata.namespace.clone().unwrap_or_default();
        let name = job.metadata.name.clone().unwrap_or_default();
        let type_ = match event.type_ {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        let now = self.clock.now();
        let mut ev = Event {
            metadata: ObjectMeta {
                // As client-go's events recorder: `<regarding>.<hex nanoseconds>`.
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                namespace: Some(ns.clone()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            action: Some("Sync".to_owned()),
            reason: Some(event.reason.clone()),
            note: Some(event.message.clone()),
            type_: Some(type_.to_owned()),
            reporting_controller: Some(EVENT_REPORTER.to_owned()),
            reporting_instance: Some(EVENT_INSTANCE.to_owned()),
            regarding: Some(ObjectReference {
                api_version: Some("batch/v1".to_owned()),
                kind: Some("Job".to_owned()),
                name: Some(name.clone()),
                namespace: Some(ns.clone()),
                uid: job.metadata.uid.clone(),
                resource_version: job.metadata.resource_version.clone(),
                field_path: None,
            }),
            ..Event::default()
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &ns);
        let mut result = api.create(&PostParams::default(), &ev).await;
        if matches!(&result, Err(kube::Error::Api(s)) if s.code == 409) {
            // Two events at the same instant: let the server pick a suffix.
            ev.metadata.generate_name = ev.metadata.name.take().map(|n| format!("{n}-"));
            result = api.create(&PostParams::default(), &ev).await;
        }
        match result {
            Ok(_) => {
                tracing::info!(job = %format!("{ns}/{name}"), reason = %event.reason, message = %event.message, "event")
            }
            Err(err) => {
                tracing::warn!(job = %format!("{ns}/{name}"), reason = %event.reason, error = %err, "writing event failed")
            }
        }
    }

    async fn orphan_work(self) {
        self.orphan_queue
            .run_worker("orphan pod finalizer removal", |key| {
                let this = &self;
                async move { this.sync_orphan(&key).await }
            })
            .await;
    }

    /// `syncOrphanPod`: removes the tracking finalizer of a pod whose Job is
    /// gone or finished (or that has no controller), unless the controller
    /// is not a `batch/v1` Job or the Job is managed by another controller.
    async fn sync_orphan(&self, key: &ObjectKey) -> Result<(), SyncError> {
        let Some(pod) = self.pods.get(key) else {
            return Ok(());
        };
        if !has_tracking_finalizer(&pod) {
            return Ok(());
        }
        if let Some(r) = controller_ref(&pod) {
            if r.kind != "Job" || r.api_version != "batch/v1" {
                return Ok(());
            }
            if let Some(job) = self.resolve(key.namespace.as_deref(), r) {
                let external = job
                    .spec
                    .as_ref()
                    .and_then(|s| s.managed_by.as_deref())
                    .is_some_and(|m| m != exitplan_api::batch::constants::JOB_CONTROLLER_NAME);
                if external || !is_finished(&job) {
                    return Ok(());
                }
            }
        }
        let api: Api<Pod> = Api::namespaced(
            self.client.clone(),
            key.namespace.as_deref().unwrap_or_default(),
        );
        match remove_finalizer(&api, &key.name).await {
            Ok(()) => {
                tracing::info!(pod = %key, "removed the tracking finalizer of an orphan pod");
                Ok(())
            }
            Err(err) if is_not_found(&err) => Ok(()),
            Err(err) => Err(api_err(
                "removing the tracking finalizer of orphan pod",
                key.to_string(),
            )(err)),
        }
    }
}

/// Strategic merge patch deleting the tracking finalizer (upstream
/// `removeTrackingFinalizerPatch`).
async fn remove_finalizer(api: &Api<Pod>, name: &str) -> Result<(), kube::Error> {
    let patch = serde_json::json!({
        "metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}
    });
    api.patch(name, &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .map(|_| ())
}

/// Strategic merge patch adopting `pod` (upstream `ownerRefControllerPatch`
/// with the tracking finalizer): the metadata `uid` makes it fail (422) on
/// a recreated pod; another controller reference fails validation.
fn adopt_patch(job: &Job, pod: &Pod) -> serde_json::Value {
    serde_json::json!({
        "metadata": {
            "ownerReferences": [exitplan_control::job::claim::controller_ref(job)],
            "uid": pod.metadata.uid,
            "finalizers": [JOB_TRACKING_FINALIZER],
        }
    })
}

/// Strategic merge patch releasing `pod` (upstream
/// `GenerateDeleteOwnerRefStrategicMergeBytes` with the tracking finalizer).
fn release_patch(job: &Job, pod: &Pod) -> serde_json::Value {
    serde_json::json!({
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": job.metadata.uid}],
            "uid": pod.metadata.uid,
            "$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
        }
    })
}

/// The pod to POST for `np`: the template's metadata (labels, annotations,
/// finalizer, owner reference) with `generateName`, and its spec.
fn pod_from(job: &Job, np: &NewPod) -> Pod {
    let mut metadata = np.template.metadata.clone().unwrap_or_default();
    metadata.generate_name = Some(np.generate_name.clone());
    metadata.name = None;
    metadata.namespace = job.metadata.namespace.clone();
    Pod {
        metadata,
        spec: np.template.spec.clone(),
        status: None,
    }
}
