//! The Job sync plan: what the runtime writes, in which order (job-failure
//! spec §5, §7, §8).
//!
//! Data flow: [`super::sync::sync_job`] → [`SyncPlan`] → the runtime applies
//! [`Step`]s strictly in order. If a step fails the runtime stops, requeues
//! the Job with its error back-off and syncs again from the persisted state;
//! the two-phase counting protocol makes that safe at every step boundary.
//! The one exception is the pod-management step ([`Step::DeletePods`] /
//! [`Step::CreatePods`]): upstream keeps going after partial failures, so
//! the runtime reports what happened through [`ManageOutcome`] and asks
//! [`super::sync::sync_job_after_manage`] for the remaining steps.

use std::collections::{BTreeMap, BTreeSet};

use jiff::SignedDuration;
use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use serde::Serialize;

use super::backoff::BackoffRecord;
use super::classify;

/// Identifies a pod for a delete or patch.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PodRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID (use as a precondition / for expectations).
    pub uid: String,
}

impl PodRef {
    /// The reference of `pod`.
    pub fn of(pod: &Pod) -> Self {
        Self {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: classify::name(pod).to_owned(),
            uid: classify::uid(pod).to_owned(),
        }
    }
}

/// A pod to create: POST with `metadata.generateName` and the template's
/// metadata and spec (owner reference, finalizer and index fields included).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NewPod {
    /// `metadata.generateName`.
    pub generate_name: String,
    /// Completion index (Indexed Jobs).
    pub index: Option<i64>,
    /// Metadata and spec of the pod.
    pub template: PodTemplateSpec,
}

/// Severity of a Job event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

/// An event to record on the Job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobEvent {
    /// `Normal` or `Warning`.
    pub type_: EventType,
    /// Event reason.
    pub reason: String,
    /// Event message.
    pub message: String,
}

/// One action of the plan; apply in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Step {
    /// DELETE these pods. With `remove_finalizer_first` (excess or suspended
    /// pods) patch the tracking finalizer away before each delete; without it
    /// (a finished condition is pending) the finalizers stay so the pods are
    /// still accounted. NotFound counts as success.
    DeletePods {
        /// Pods to delete.
        pods: Vec<PodRef>,
        /// Remove the tracking finalizer before deleting.
        remove_finalizer_first: bool,
    },
    /// Create pods in slow-start batches (1, 2, 4, …); a failing batch
    /// stops the creation (later batches are skipped).
    CreatePods {
        /// The batches, in order.
        batches: Vec<Vec<NewPod>>,
    },
    /// Replace `.status` of the Job (status subresource update).
    UpdateStatus(Box<JobStatus>),
    /// Store the Job's in-memory back-off record (only ever right after a
    /// status write, as upstream does).
    SaveBackoffRecord(BackoffRecord),
    /// Drop the Job's back-off record (finished Job).
    RemoveBackoffRecord,
    /// Increment `job_controller_pod_failures_handled_by_failure_policy_total{action}`.
    RecordPolicyActions(BTreeMap<String, u32>),
    /// Patch `batch.kubernetes.io/job-tracking` out of these pods'
    /// finalizers (`$deleteFromPrimitiveList`); NotFound counts as success.
    /// Their UIDs become "expected finalizer removals" until the watch
    /// shows the change.
    RemoveFinalizers(Vec<PodRef>),
    /// Record an event on the Job.
    Event(JobEvent),
}

/// Why a sync did nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum SkipReason {
    /// `Complete=True` or `Failed=True` already.
    Finished,
    /// `spec.managedBy` names another controller.
    ManagedByOtherController(String),
    /// `spec.completionMode` is not `NonIndexed`/`Indexed`.
    UnknownCompletionMode(String),
}

/// What the runtime reports after applying the pod-management step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManageOutcome {
    /// UIDs of pods whose deletion failed (other than NotFound).
    pub failed_deletions: BTreeSet<String>,
    /// Number of pods whose creation failed or was skipped after a failing batch.
    pub failed_creations: usize,
}

/// The decision of one sync, for explanations and tests.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SyncSummary {
    /// Failed count of §4 (including uncounted and new, non-ignored failures).
    pub failed: i32,
    /// Succeeded count of this sync.
    pub succeeded: i32,
    /// The finished condition decided before pods were handled (§5), if any.
    pub finished_condition: Option<JobCondition>,
    /// Failed indexes (backoffLimitPerIndex), compact form.
    pub failed_indexes: Option<String>,
}

/// Everything one sync wants done.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SyncPlan {
    /// Set when the sync did nothing but the listed steps.
    pub skipped: Option<SkipReason>,
    /// The steps, in application order.
    pub steps: Vec<Step>,
    /// Sync the Job again after this delay (back-off or active deadline).
    pub requeue_after: Option<SignedDuration>,
    /// The decision, for explanations.
    pub summary: SyncSummary,
}

impl SyncPlan {
    /// The status writes of the plan, in order.
    pub fn status_writes(&self) -> Vec<&JobStatus> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::UpdateStatus(st) => Some(st.as_ref()),
                _ => None,
            })
            .collect()
    }

    /// UIDs whose tracking finalizer the plan removes, in order.
    pub fn removed_finalizers(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::RemoveFinalizers(p) => Some(p),
                _ => None,
            })
            .flatten()
            .map(|p| p.uid.as_str())
            .collect()
    }

    /// Pods the plan creates.
    pub fn created_pods(&self) -> Vec<&NewPod> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::CreatePods { batches } => Some(batches),
                _ => None,
            })
            .flatten()
            .flatten()
            .collect()
    }

    /// Pods the plan deletes.
    pub fn deleted_pods(&self) -> Vec<&PodRef> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::DeletePods { pods, .. } => Some(pods),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Events the plan records.
    pub fn events(&self) -> Vec<&JobEvent> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Event(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    /// Policy-action metric increments, summed over the plan.
    pub fn policy_actions(&self) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        for step in &self.steps {
            if let Step::RecordPolicyActions(m) = step {
                for (k, v) in m {
                    *out.entry(k.clone()).or_insert(0) += v;
                }
            }
        }
        out
    }
}
