//! Exponential back-off between pod recreations (job-failure spec §9, A1).
//!
//! Data flow: newly finished pods → their finish times → the Job's
//! [`BackoffRecord`] (failures since the last success, last failure time) →
//! remaining delay before pods may be created again; for Jobs with
//! `backoffLimitPerIndex` the same delay is computed per index from the
//! retained failed pod's annotations instead.

use exitplan_api::core::constants::CONDITION_FALSE;
use exitplan_api::core::podutil::ready_condition;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use super::indexes::index_absolute_failure_count;

/// First recreation delay (`DefaultJobPodFailureBackOff`).
pub const DEFAULT_POD_FAILURE_BACKOFF: SignedDuration = SignedDuration::from_secs(10);
/// Delay cap (`MaxJobPodFailureBackOff`, 600 s in v1.36.2 — A1).
pub const MAX_POD_FAILURE_BACKOFF: SignedDuration = SignedDuration::from_secs(600);

/// The in-memory back-off record kept per Job (upstream `backoffRecord`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BackoffRecord {
    /// Consecutive failures since the last success.
    pub failures_after_last_success: i32,
    /// Finish time of the latest of those failures.
    pub last_failure_time: Option<Timestamp>,
}

impl BackoffRecord {
    /// The record after this sync's newly succeeded / failed pods (§9):
    /// failures only → add them; any success → restart counting from the
    /// failures that finished strictly after the latest success.
    pub fn updated(&self, new_succeeded: &[&Pod], new_failed: &[&Pod]) -> Self {
        let latest = |pods: &[&Pod]| pods.iter().map(|p| finished_time(p)).max();
        let Some(last_success) = latest(new_succeeded) else {
            if new_failed.is_empty() {
                return self.clone();
            }
            let added = i32::try_from(new_failed.len()).unwrap_or(i32::MAX);
            return Self {
                failures_after_last_success: self.failures_after_last_success.saturating_add(added),
                last_failure_time: latest(new_failed),
            };
        };
        let after: Vec<Timestamp> = new_failed
            .iter()
            .map(|p| finished_time(p))
            .filter(|t| *t > last_success)
            .collect();
        Self {
            failures_after_last_success: i32::try_from(after.len()).unwrap_or(i32::MAX),
            last_failure_time: after.iter().max().copied(),
        }
    }

    /// Remaining delay before creating pods again (global, non-per-index).
    pub fn remaining(&self, now: Timestamp) -> SignedDuration {
        remaining_for_failures(
            now,
            DEFAULT_POD_FAILURE_BACKOFF,
            MAX_POD_FAILURE_BACKOFF,
            self.failures_after_last_success,
            self.last_failure_time,
        )
    }
}

/// Delay for `failures` consecutive failures: `base` doubled `failures − 1`
/// times, capped at `max` as soon as it reaches it; zero for no failure.
pub fn delay_for_failures(
    base: SignedDuration,
    max: SignedDuration,
    failures: i32,
) -> SignedDuration {
    if failures <= 0 {
        return SignedDuration::ZERO;
    }
    let mut delay = base;
    if !delay.is_positive() {
        return delay.max(SignedDuration::ZERO);
    }
    for _ in 1..failures {
        delay = delay.saturating_mul(2);
        if delay >= max {
            delay = max;
            break;
        }
    }
    delay
}

/// `delay − (now − last_failure)`, floored at zero; zero without failures
/// or without a failure time (`getRemainingTimeForFailuresCount`).
pub fn remaining_for_failures(
    now: Timestamp,
    base: SignedDuration,
    max: SignedDuration,
    failures: i32,
    last_failure: Option<Timestamp>,
) -> SignedDuration {
    let Some(last) = last_failure else {
        return SignedDuration::ZERO;
    };
    if failures <= 0 {
        return SignedDuration::ZERO;
    }
    let delay = delay_for_failures(base, max, failures);
    let elapsed = now.duration_since(last);
    if delay < elapsed {
        SignedDuration::ZERO
    } else {
        delay.saturating_sub(elapsed)
    }
}

/// Remaining delay for an index whose last failed (retained) pod is
/// `last_failed`: failures = failure + ignored annotations + 1, reference
/// time = its finish time; no retained pod → no delay.
pub fn remaining_for_index(now: Timestamp, last_failed: Option<&Pod>) -> SignedDuration {
    remaining_for_index_with(
        now,
        DEFAULT_POD_FAILURE_BACKOFF,
        MAX_POD_FAILURE_BACKOFF,
        last_failed,
    )
}

/// [`remaining_for_index`] with explicit base delay and cap.
pub fn remaining_for_index_with(
    now: Timestamp,
    base: SignedDuration,
    max: SignedDuration,
    last_failed: Option<&Pod>,
) -> SignedDuration {
    let Some(pod) = last_failed else {
        return SignedDuration::ZERO;
    };
    let failures =
        i32::try_from(index_absolute_failure_count(pod).saturating_add(1)).unwrap_or(i32::MAX);
    remaining_for_failures(now, base, max, failures, Some(finished_time(pod)))
}

/// A pod's finish time (§9): containers (regular, then sidecars), else the
/// `Ready=False` transition time, else `deletionTimestamp − grace`, else the
/// creation timestamp (the Unix epoch when even that is missing).
pub fn finished_time(pod: &Pod) -> Timestamp {
    finish_time_from_containers(pod)
        .or_else(|| finish_time_from_ready_false(pod))
        .or_else(|| finish_time_from_deletion(pod))
        .or_else(|| pod.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

fn terminated_at(cs: &k8s_openapi::api::core::v1::ContainerStatus) -> Option<Timestamp> {
    let t = cs
        .state
        .as_ref()?
        .terminated
        .as_ref()?
        .finished_at
        .as_ref()?
        .0;
    (t != Timestamp::UNIX_EPOCH).then_some(t)
}

/// Pass (a): every regular container terminated with a finish time → the
/// latest; pass (b): every restartable init container (sidecar) terminated →
/// the latest of (a) and them; a running sidecar voids the result.
fn finish_time_from_containers(pod: &Pod) -> Option<Timestamp> {
    let status = pod.status.as_ref()?;
    let regular = status.container_statuses.as_deref().unwrap_or_default();
    let mut result: Option<Timestamp> = if regular.is_empty() {
        None
    } else {
        regular
            .iter()
            .map(terminated_at)
            .collect::<Option<Vec<_>>>()
            .and_then(|ts| ts.into_iter().max())
    };
    let sidecars: Vec<&str> = pod
        .spec
        .as_ref()
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default()
        .iter()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .map(|c| c.name.as_str())
        .collect();
    for cs in status
        .init_container_statuses
        .as_deref()
        .unwrap_or_default()
    {
        if !sidecars.contains(&cs.name.as_str()) {
            continue;
        }
        let t = terminated_at(cs)?;
        result = Some(result.map_or(t, |r| r.max(t)));
    }
    result
}

fn finish_time_from_ready_false(pod: &Pod) -> Option<Timestamp> {
    let c = ready_condition(pod)?;
    let t = c.last_transition_time.as_ref()?.0;
    (c.status == CONDITION_FALSE && t != Timestamp::UNIX_EPOCH).then_some(t)
}

fn finish_time_from_deletion(pod: &Pod) -> Option<Timestamp> {
    let deleted = pod.metadata.deletion_timestamp.as_ref()?.0;
    let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0);
    // Saturating: a stored grace period can be any i64 (`-i64::MIN` overflows).
    Some(exitplan_api::time::add(
        deleted,
        SignedDuration::from_secs(grace.saturating_neg()),
    ))
}
