//! `batch/v1 JobCondition` bookkeeping (job-failure spec §5, A9).
//!
//! Data flow: the Job's condition list + a wanted `(type, status, reason,
//! message)` → [`ensure_condition`] (append / replace / leave alone) and the
//! small lookups the sync decision needs (finished, FailureTarget=True, …).
//! Job conditions are not `metav1.Condition`s, hence these helpers beside
//! [`crate::conditions`].

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobCondition};

use exitplan_api::batch::constants::{
    CONDITION_COMPLETE, CONDITION_FAILED, CONDITION_FAILURE_TARGET, CONDITION_SUCCESS_CRITERIA_MET,
};
use exitplan_api::core::constants::{CONDITION_FALSE, CONDITION_TRUE};
use exitplan_api::time::mtime;

/// A condition built from scratch, both probe and transition time `now`
/// (upstream `newCondition`; written times are whole seconds).
pub fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> JobCondition {
    JobCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()).filter(|r| !r.is_empty()),
        message: Some(message.to_owned()).filter(|m| !m.is_empty()),
        last_probe_time: Some(mtime(now)),
        last_transition_time: Some(mtime(now)),
    }
}

/// The condition of type `type_`, if present.
pub fn find<'a>(conditions: &'a [JobCondition], type_: &str) -> Option<&'a JobCondition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// The Job's conditions (empty when unset).
pub fn job_conditions(job: &Job) -> &[JobCondition] {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

/// Whether a condition of `type_` is present with status `True`.
pub fn is_true(conditions: &[JobCondition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == CONDITION_TRUE)
}

/// Whether the Job is finished (`Complete=True` or `Failed=True`).
pub fn is_finished(job: &Job) -> bool {
    let conditions = job_conditions(job);
    conditions.iter().any(|c| {
        (c.type_ == CONDITION_COMPLETE || c.type_ == CONDITION_FAILED) && c.status == CONDITION_TRUE
    })
}

/// The `FailureTarget=True` condition, if any (`False` is ignored, §5 step 2).
pub fn failure_target(job: &Job) -> Option<&JobCondition> {
    find(job_conditions(job), CONDITION_FAILURE_TARGET).filter(|c| c.status == CONDITION_TRUE)
}

/// The `SuccessCriteriaMet=True` condition, if any.
pub fn success_criteria_met(job: &Job) -> Option<&JobCondition> {
    find(job_conditions(job), CONDITION_SUCCESS_CRITERIA_MET).filter(|c| c.status == CONDITION_TRUE)
}

/// `ensureJobConditionStatus` (A9): append if missing (never a `False`
/// condition), replace if status, reason or message differ (new times),
/// otherwise leave the existing condition and its timestamps alone.
/// Returns whether the list changed.
pub fn ensure_condition(
    conditions: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> bool {
    if let Some(existing) = conditions.iter_mut().find(|c| c.type_ == type_) {
        let differs = existing.status != status
            || existing.reason.as_deref().unwrap_or_default() != reason
            || existing.message.as_deref().unwrap_or_default() != message;
        if differs {
            *existing = new_condition(type_, status, reason, message, now);
        }
        return differs;
    }
    if status == CONDITION_FALSE {
        return false;
    }
    conditions.push(new_condition(type_, status, reason, message, now));
    true
}
