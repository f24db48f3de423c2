//! Pod classification for the Job controller (job-failure spec §3).
//!
//! Data flow: one pod (+ the Job's spec) → predicates used by every later
//! step: active / terminating, `isPodFailed`, tracking-finalizer presence,
//! completion index, deletion order. The generic pod predicates (phase,
//! terminal, ready) are `exitplan_api::core::podutil`'s. All gates are on
//! (§15), so terminating pods are always tracked and the terminal condition
//! is always delayed until nothing terminates.

use std::cmp::Ordering;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use exitplan_api::batch::constants::{
    COMPLETION_INDEXED, COMPLETION_NON_INDEXED, JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER,
    REPLACEMENT_FAILED,
};
use exitplan_api::core::constants::{
    CONDITION_TRUE, PHASE_FAILED, PHASE_RUNNING, PHASE_SUCCEEDED, PHASE_UNKNOWN,
};
use exitplan_api::core::podutil::{is_ready, is_terminal, phase, ready_condition};

/// The pod's UID, `""` when unset.
pub fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or_default()
}

/// The pod's name, `""` when unset.
pub fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or_default()
}

/// Not terminal and not being deleted (`controller.FilterActivePods`).
pub fn is_active(pod: &Pod) -> bool {
    !is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// Not terminal but being deleted (`controller.CountTerminatingPods`).
pub fn is_terminating(pod: &Pod) -> bool {
    !is_terminal(pod) && pod.metadata.deletion_timestamp.is_some()
}

/// Whether the pod carries `batch.kubernetes.io/job-tracking`.
pub fn has_tracking_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|f| f == JOB_TRACKING_FINALIZER)
}

/// When the pod became ready (`lastTransitionTime` of `Ready=True`), if it is.
pub fn ready_since(pod: &Pod) -> Option<Timestamp> {
    ready_condition(pod)
        .filter(|c| c.status == CONDITION_TRUE)
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0)
}

/// Whether the Job uses a pod failure policy.
pub fn has_policy(job: &Job) -> bool {
    job.spec
        .as_ref()
        .is_some_and(|s| s.pod_failure_policy.is_some())
}

/// `onlyReplaceFailedPods`: policy present or `podReplacementPolicy: Failed`.
pub fn only_replace_failed_pods(job: &Job) -> bool {
    has_policy(job)
        || job
            .spec
            .as_ref()
            .and_then(|s| s.pod_replacement_policy.as_deref())
            == Some(REPLACEMENT_FAILED)
}

/// `isPodFailed` (§3): phase `Failed`; or, unless only failed pods are
/// replaced, deleted and not `Succeeded`.
pub fn is_pod_failed(pod: &Pod, job: &Job) -> bool {
    if phase(pod) == PHASE_FAILED {
        return true;
    }
    if only_replace_failed_pods(job) {
        return false;
    }
    pod.metadata.deletion_timestamp.is_some() && phase(pod) != PHASE_SUCCEEDED
}

/// Whether `spec.completionMode` is `Indexed`.
pub fn is_indexed(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.completion_mode.as_deref()) == Some(COMPLETION_INDEXED)
}

/// Whether `spec.completionMode` is set to a value this controller does not know.
pub fn has_unknown_completion_mode(job: &Job) -> bool {
    job.spec
        .as_ref()
        .and_then(|s| s.completion_mode.as_deref())
        .is_some_and(|m| m != COMPLETION_INDEXED && m != COMPLETION_NON_INDEXED)
}

/// The pod's completion index from its annotation; `None` when absent,
/// unparsable or negative ("unknown index", §3).
pub fn completion_index(pod: &Pod) -> Option<i64> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(JOB_COMPLETION_INDEX)?
        .parse::<i64>()
        .ok()
        .filter(|i| *i >= 0)
}

/// The completion index when it is valid for `completions` (`< completions`).
pub fn valid_index(pod: &Pod, completions: i32) -> Option<i64> {
    completion_index(pod).filter(|i| *i < i64::from(completions))
}

/// Highest `restartCount` over the pod's regular containers.
pub fn max_container_restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
}

/// The deterministic pod order used where upstream relies on lister order
/// for a *choice* (A5, which FailJob message wins): creation timestamp
/// (missing first), then namespace, name, UID.
pub fn creation_order(a: &Pod, b: &Pod) -> Ordering {
    let ct = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    ct(a)
        .cmp(&ct(b))
        .then_with(|| a.metadata.namespace.cmp(&b.metadata.namespace))
        .then_with(|| name(a).cmp(name(b)))
        .then_with(|| uid(a).cmp(uid(b)))
}

/// `controller.ActivePods` order: pods earlier in this order are deleted
/// first — unassigned < assigned, Pending < Unknown < Running, not ready <
/// ready, ready for less time < more time, more restarts < fewer, newer <
/// older (missing timestamps first).
pub fn deletion_preference(a: &Pod, b: &Pod) -> Ordering {
    let node = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or_default()
            .to_owned()
    };
    let (na, nb) = (node(a), node(b));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let ordinal = |p: &Pod| match phase(p) {
        PHASE_UNKNOWN => 1,
        PHASE_RUNNING => 2,
        _ => 0,
    };
    let by_phase = ordinal(a).cmp(&ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    let (ra, rb) = (is_ready(a), is_ready(b));
    if ra != rb {
        return if ra {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    if ra {
        let by_ready = after_or_zero(ready_since(a), ready_since(b));
        if by_ready != Ordering::Equal {
            return by_ready;
        }
    }
    let by_restarts = max_container_restarts(b).cmp(&max_container_restarts(a));
    if by_restarts != Ordering::Equal {
        return by_restarts;
    }
    let ct = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    after_or_zero(ct(a), ct(b))
}

/// Go's `afterOrZero` as an ordering: a missing time sorts first, otherwise
/// the later time sorts first.
fn after_or_zero(a: Option<Timestamp>, b: Option<Timestamp>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x),
    }
}
