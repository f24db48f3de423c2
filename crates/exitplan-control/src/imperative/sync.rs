//! One sync of an Eviction (spec §8 "Per sync"), as two pure steps around
//! the only IO in the middle, the `POST pods/<name>/eviction` call:
//!
//! ```text
//!   decide(eviction, pod, attempt, now) ─┬─ Skip
//!                                        ├─ Write { responder_status?, requeue_after? }
//!                                        └─ Evict(call) ─► runtime POSTs ─► after_evict(eviction, outcome, now)
//!                                                                            └─ AfterEvict { attempt, write, failed_eviction? }
//! ```

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, ResponderStatus};
use k8s_openapi::api::policy::v1::Eviction as PolicyEviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, ObjectMeta, Preconditions};

use exitplan_api::core::podutil::is_terminal;
use exitplan_api::lifecycle::constants::STATE_ACTIVE;
use exitplan_api::time::{add, mtime, truncate_to_seconds};

use super::HEARTBEAT_INTERVAL;
use super::HEARTBEAT_SLACK;
use super::apply::apply_payload;
use super::backoff::{AttemptRecord, AttemptUpdate, backoff_remaining, requeue_after_failure};
use super::filter::{own_responder_status, own_target_responder, should_handle};
use super::messages::{self, recorded_attempts};
use super::metrics::FailedEvictionLabels;

/// Why a sync does nothing (no write, no call, no requeue).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// No pod target or no evictor role label ([`should_handle`] is false).
    NotHandled,
    /// `status.observedGeneration` is unset: the evictionrequest-controller
    /// has not processed the Eviction yet.
    NotObserved,
    /// There is no `status.targetResponders` entry for the evictor.
    NoTargetResponder,
    /// The evictor's TargetResponder is not `Active`.
    NotActive {
        /// Its current state.
        state: String,
    },
    /// There is no `status.responders` entry for the evictor yet.
    NoResponderStatus,
    /// The evictor already reported `completionTime`.
    AlreadyCompleted,
}

/// The status write (if any) and the requeue (if any) of a sync.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    /// The evictor's full `status.responders` entry to apply; `None` when
    /// nothing changed and the last heartbeat is still fresh.
    pub responder_status: Option<ResponderStatus>,
    /// Sync again after this long: at most [`HEARTBEAT_INTERVAL`], and
    /// without a write at most until the last heartbeat is that old; `None`
    /// leaves it to watch events.
    pub requeue_after: Option<SignedDuration>,
}

/// The `/eviction` call to make.
#[derive(Clone, Debug, PartialEq)]
pub struct EvictCall {
    /// Namespace of the pod.
    pub namespace: String,
    /// Name of the pod (`pods/<pod_name>/eviction`).
    pub pod_name: String,
    /// UID of the pod, also set as the delete precondition.
    pub pod_uid: String,
    /// The `policy/v1` Eviction body to POST.
    pub body: PolicyEviction,
}

/// The outcome of one sync before any IO.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nothing to do.
    Skip(SkipReason),
    /// Write status and/or requeue; no `/eviction` call.
    Write(Write),
    /// Call `/eviction`, then finish the sync with [`after_evict`].
    Evict(Box<EvictCall>),
}

/// What the `/eviction` call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvictOutcome {
    /// 2xx: the pod was marked for deletion.
    Ok,
    /// Any error (429 from a blocking PDB, webhook denial, 500 with several
    /// PDBs, transport errors …).
    Failed {
        /// The error as Go's `%v` prints it (a `StatusError` prints its
        /// `status.message`).
        error_message: String,
        /// The server's suggested delay (`status.details.retryAfterSeconds`
        /// when positive, or set with reason `ServerTimeout`).
        retry_after: Option<SignedDuration>,
    },
}

/// The rest of a sync after the `/eviction` call.
#[derive(Clone, Debug, PartialEq)]
pub struct AfterEvict {
    /// Record the failed attempt, or clear the record after a success.
    pub attempt: AttemptUpdate,
    /// The status write and requeue.
    pub write: Write,
    /// On failure: the failed-evictions counter label set to increment.
    pub failed_eviction: Option<FailedEvictionLabels>,
}

/// [`after_evict`] was given an Eviction [`decide`] would not have evicted for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AfterEvictError {
    /// `spec.target.pod` is unset.
    #[error("eviction has no pod target")]
    NoPodTarget,
    /// The evictor has no `status.responders` entry.
    #[error("eviction has no status.responders entry for the evictor")]
    NoResponderStatus,
}

/// What a sync found out about the pod, before the write rules.
struct Step {
    message: String,
    completed: bool,
    expected_completion: Option<Timestamp>,
    requeue_after: Option<SignedDuration>,
}

/// Decides one sync of `eviction`. `pod` is the pod named by the target in
/// the Eviction's namespace (whatever its UID), `attempt` the in-memory
/// record of the last failed call for the target pod UID.
pub fn decide(
    eviction: &Eviction,
    pod: Option<&Pod>,
    attempt: Option<&AttemptRecord>,
    now: Timestamp,
) -> Decision {
    let Some(target) = eviction
        .spec
        .target
        .pod
        .as_ref()
        .filter(|_| should_handle(eviction))
    else {
        return Decision::Skip(SkipReason::NotHandled);
    };
    if eviction
        .status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .is_none()
    {
        return Decision::Skip(SkipReason::NotObserved);
    }
    let Some(own) = own_target_responder(eviction) else {
        return Decision::Skip(SkipReason::NoTargetResponder);
    };
    if own.state != STATE_ACTIVE {
        return Decision::Skip(SkipReason::NotActive {
            state: own.state.clone(),
        });
    }
    let Some(last) = own_responder_status(eviction) else {
        return Decision::Skip(SkipReason::NoResponderStatus);
    };
    if last.completion_time.is_some() {
        return Decision::Skip(SkipReason::AlreadyCompleted);
    }
    let last_message = last.message.as_deref().unwrap_or("");

    let pod = pod.filter(|p| p.metadata.uid.as_deref().unwrap_or("") == target.uid);
    let step = match pod {
        None => Step::completed(messages::pod_deleted(&target.name)),
        Some(pod) => {
            let name = pod.metadata.name.as_deref().unwrap_or(&target.name);
            let phase = pod
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .unwrap_or("");
            match &pod.metadata.deletion_timestamp {
                Some(_) if is_terminal(pod) => {
                    Step::completed(messages::pod_deleted_terminal(name, phase))
                }
                Some(deletion) => Step {
                    message: messages::pod_terminating(
                        name,
                        last_message.contains(messages::MARKED_VIA_EVICTION),
                    ),
                    completed: false,
                    expected_completion: Some(deletion.0),
                    requeue_after: Some(HEARTBEAT_INTERVAL),
                },
                None if is_terminal(pod) => Step::completed(messages::pod_terminal(name, phase)),
                None => match backoff_remaining(
                    attempt.filter(|a| a.pod_uid == target.uid),
                    last_message,
                    now,
                ) {
                    Some(remaining) => Step {
                        message: last_message.to_owned(),
                        completed: false,
                        expected_completion: None,
                        requeue_after: Some(remaining),
                    },
                    None => {
                        let namespace = pod
                            .metadata
                            .namespace
                            .clone()
                            .or_else(|| eviction.metadata.namespace.clone())
                            .unwrap_or_default();
                        return Decision::Evict(Box::new(evict_call(namespace, name, &target.uid)));
                    }
                },
            }
        }
    };
    Decision::Write(finish(last, step, now))
}

/// Finishes a sync that called `/eviction` with `outcome` (at `now`, after
/// the call). `eviction` is the same object [`decide`] saw.
pub fn after_evict(
    eviction: &Eviction,
    outcome: EvictOutcome,
    now: Timestamp,
) -> Result<AfterEvict, AfterEvictError> {
    let target = eviction
        .spec
        .target
        .pod
        .as_ref()
        .ok_or(AfterEvictError::NoPodTarget)?;
    let last = own_responder_status(eviction).ok_or(AfterEvictError::NoResponderStatus)?;
    let pod_uid = target.uid.clone();
    let (attempt, step, failed_eviction) = match outcome {
        EvictOutcome::Ok => (
            AttemptUpdate::Clear { pod_uid },
            Step {
                message: messages::eviction_succeeded(&target.name),
                completed: false,
                expected_completion: None,
                requeue_after: None,
            },
            None,
        ),
        EvictOutcome::Failed {
            error_message,
            retry_after,
        } => {
            let previous = recorded_attempts(last.message.as_deref().unwrap_or(""));
            // Go's uint64 addition wraps; so does the count here.
            let attempts = previous.wrapping_add(1);
            (
                AttemptUpdate::Record(AttemptRecord { pod_uid, at: now }),
                Step {
                    message: messages::eviction_failed(&target.name, attempts, &error_message),
                    completed: false,
                    expected_completion: None,
                    requeue_after: Some(requeue_after_failure(previous, retry_after)),
                },
                FailedEvictionLabels::for_eviction(eviction),
            )
        }
    };
    Ok(AfterEvict {
        attempt,
        write: finish(last, step, now),
        failed_eviction,
    })
}

impl Step {
    fn completed(message: String) -> Self {
        Step {
            message,
            completed: true,
            expected_completion: None,
            requeue_after: None,
        }
    }
}

fn evict_call(namespace: String, pod_name: &str, pod_uid: &str) -> EvictCall {
    let body = PolicyEviction {
        metadata: ObjectMeta {
            name: Some(pod_name.to_owned()),
            namespace: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        delete_options: Some(DeleteOptions {
            preconditions: Some(Preconditions {
                uid: Some(pod_uid.to_owned()),
                ..Preconditions::default()
            }),
            ..DeleteOptions::default()
        }),
    };
    EvictCall {
        namespace,
        pod_name: pod_name.to_owned(),
        pod_uid: pod_uid.to_owned(),
        body,
    }
}

/// Whether the last heartbeat is missing or older than
/// `HEARTBEAT_INTERVAL − HEARTBEAT_SLACK` (2 m 59 s) at `now`.
pub fn heartbeat_due(last: &ResponderStatus, now: Timestamp) -> bool {
    last.heartbeat_time
        .as_ref()
        .is_none_or(|hb| hb.0 < add(now, HEARTBEAT_SLACK - HEARTBEAT_INTERVAL))
}

/// The write rules of spec §8 steps 2–4.
fn finish(last: &ResponderStatus, step: Step, now: Timestamp) -> Write {
    let requeue_after = step.requeue_after.map(|d| d.min(HEARTBEAT_INTERVAL));
    // Not before now (API validation), in whole seconds as stored.
    let expected = step
        .expected_completion
        .map(|e| truncate_to_seconds(e.max(now)));
    let message = messages::truncate_message(step.message);

    let expected_changed =
        expected.is_some_and(|e| last.expected_completion_time.as_ref().map(|t| t.0) != Some(e));
    let completes = step.completed && last.completion_time.is_none();
    let message_changed = last.message.as_deref().unwrap_or("") != message;

    let responder_status =
        (heartbeat_due(last, now) || expected_changed || completes || message_changed).then(|| {
            let mut entry = apply_payload(last);
            entry.message = Some(message);
            entry.heartbeat_time = Some(mtime(now));
            if let (true, Some(e)) = (expected_changed, expected) {
                entry.expected_completion_time = Some(mtime(e));
            }
            if completes {
                entry.expected_completion_time = Some(mtime(now));
                entry.completion_time = Some(mtime(now));
            }
            entry
        });
    // Without a write, also look again when the last heartbeat turns 3 min
    // old (deviation from upstream, which always requeues 3 min from now): a
    // work queue that keeps only the earliest pending requeue (client-go's
    // delaying queue, kube-runtime's scheduler) may already hold an earlier
    // one and drop the one a previous write asked for.
    let requeue_after = match (&responder_status, &last.heartbeat_time) {
        (None, Some(hb)) => {
            let next_heartbeat = add(hb.0, HEARTBEAT_INTERVAL).duration_since(now);
            requeue_after.map(|d| d.min(next_heartbeat))
        }
        _ => requeue_after,
    };
    Write {
        responder_status,
        requeue_after,
    }
}
