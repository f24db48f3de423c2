//! Job status validation on `/status` writes (upstream `validateJobStatus`,
//! `ValidateJobStatusUpdate`, `ValidateJobUpdateStatus`, and the registry's
//! `getStatusValidationOptions` with gate JobManagedBy on; job-failure spec
//! §5 "Status validation interplay").
//!
//! Most rules fire only when a field they inspect changed in this write, so
//! a stored status that already breaks a rule does not block unrelated
//! updates; [`status_validation_options`] decides which rules apply.
//! Consequences for writers: `Failed=True` needs `FailureTarget=True`,
//! `Complete=True` needs `SuccessCriteriaMet=True`; terminal conditions
//! never go away; a finished Job has no active, terminating or uncounted
//! pods and has a startTime; `failed` never decreases.

use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus, UncountedTerminatedPods};

use super::constants::{
    COMPLETION_INDEXED, CONDITION_COMPLETE, CONDITION_FAILED, CONDITION_FAILURE_TARGET,
    CONDITION_SUCCESS_CRITERIA_MET, CONDITION_SUSPENDED,
};
use super::indexes::{failed_indexes_overlap_completed, validate_indexes_format};
use crate::core::constants::{CONDITION_FALSE, CONDITION_TRUE};
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta;
use crate::nonnegative::validate_nonnegative_field;
use crate::render;

/// Which status rules apply to one write (upstream `JobStatusValidationOptions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobStatusValidationOptions {
    /// `status.succeeded` may not decrease.
    pub reject_decreasing_succeeded_counter: bool,
    /// `status.failed` may not decrease.
    pub reject_decreasing_failed_counter: bool,
    /// Failed/Complete/FailureTarget=True may not go away.
    pub reject_disabling_terminal_condition: bool,
    /// `completedIndexes` must be well-formed and below completions.
    pub reject_invalid_completed_indexes: bool,
    /// `failedIndexes` must be well-formed and below completions.
    pub reject_invalid_failed_indexes: bool,
    /// `failedIndexes` may not share an index with `completedIndexes`.
    pub reject_failed_indexes_overlapping_completed: bool,
    /// Only Indexed Jobs have `completedIndexes`.
    pub reject_completed_indexes_for_non_indexed_job: bool,
    /// Only Jobs with `backoffLimitPerIndex` have `failedIndexes`.
    pub reject_failed_indexes_for_no_backoff_limit_per_index: bool,
    /// `Failed=True` needs `FailureTarget=True`.
    pub reject_failed_job_without_failure_target: bool,
    /// `Complete=True` needs `SuccessCriteriaMet=True`.
    pub reject_complete_job_without_success_criteria_met: bool,
    /// A finished Job has `active == 0`.
    pub reject_finished_job_with_active_pods: bool,
    /// A finished Job has a `startTime`.
    pub reject_finished_job_without_start_time: bool,
    /// A finished Job has no uncounted terminated pods.
    pub reject_finished_job_with_uncounted_terminated_pods: bool,
    /// `startTime` may not change while the Job is not suspended.
    pub reject_start_time_update_for_unsuspended_job: bool,
    /// `completionTime` may not precede `startTime`.
    pub reject_completion_time_before_start_time: bool,
    /// A set `completionTime` may not change.
    pub reject_mutating_completion_time: bool,
    /// `Complete=True` needs a `completionTime`.
    pub reject_complete_job_without_completion_time: bool,
    /// A `completionTime` needs `Complete=True`.
    pub reject_not_complete_job_with_completion_time: bool,
    /// `Complete=True` excludes `Failed=True`.
    pub reject_complete_job_with_failed_condition: bool,
    /// `Complete=True` excludes `FailureTarget=True`.
    pub reject_complete_job_with_failure_target_condition: bool,
    /// `SuccessCriteriaMet` is allowed beyond Indexed Jobs with a successPolicy.
    pub allow_for_success_criteria_met_in_extended_scope: bool,
    /// `ready <= active`.
    pub reject_more_ready_than_active_pods: bool,
    /// A finished Job has `terminating == 0`.
    pub reject_finished_job_with_terminating_pods: bool,
}

fn conditions(job: &Job) -> &[JobCondition] {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

/// Whether the Job has a condition of `type_` with status `True`.
pub fn is_condition_true(job: &Job, type_: &str) -> bool {
    conditions(job)
        .iter()
        .any(|c| c.type_ == type_ && c.status == CONDITION_TRUE)
}

fn is_condition_false(job: &Job, type_: &str) -> bool {
    conditions(job)
        .iter()
        .any(|c| c.type_ == type_ && c.status == CONDITION_FALSE)
}

/// `Complete=True` or `Failed=True`.
pub fn is_job_finished(job: &Job) -> bool {
    is_condition_true(job, CONDITION_COMPLETE) || is_condition_true(job, CONDITION_FAILED)
}

fn status(job: &Job) -> JobStatus {
    job.status.clone().unwrap_or_default()
}

fn is_indexed(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.completion_mode.as_deref()) == Some(COMPLETION_INDEXED)
}

/// `UncountedTerminatedPods` under `Semantic.DeepEqual` (nil list ≡ empty).
fn uncounted_eq(a: Option<&UncountedTerminatedPods>, b: Option<&UncountedTerminatedPods>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => semantic_eq(a, b),
        _ => false,
    }
}

/// `getStatusValidationOptions` (gate JobManagedBy on): which rules apply
/// when `old` is updated to `new` through `/status`.
pub fn status_validation_options(new: &Job, old: &Job) -> JobStatusValidationOptions {
    let (ns, os) = (status(new), status(old));
    let spec = new.spec.clone().unwrap_or_default();
    let changed = |t: &str| is_condition_true(old, t) != is_condition_true(new, t);
    let finished_changed = is_job_finished(old) != is_job_finished(new);
    let complete_changed = changed(CONDITION_COMPLETE);
    let failed_changed = changed(CONDITION_FAILED);
    let failure_target_changed = changed(CONDITION_FAILURE_TARGET);
    let scm_changed = changed(CONDITION_SUCCESS_CRITERIA_MET);
    let completed_indexes_changed = os.completed_indexes.as_deref().unwrap_or_default()
        != ns.completed_indexes.as_deref().unwrap_or_default();
    let failed_indexes_changed = os.failed_indexes != ns.failed_indexes;
    let active_changed = os.active.unwrap_or(0) != ns.active.unwrap_or(0);
    let ready_changed = os.ready != ns.ready;
    let terminating_changed = os.terminating != ns.terminating;
    let start_time_changed = os.start_time != ns.start_time;
    let completion_time_changed = os.completion_time != ns.completion_time;
    let uncounted_changed = !uncounted_eq(
        os.uncounted_terminated_pods.as_ref(),
        ns.uncounted_terminated_pods.as_ref(),
    );
    let suspended_with_zero_completions = spec.suspend == Some(true) && spec.completions == Some(0);
    let resuming =
        is_condition_true(old, CONDITION_SUSPENDED) && is_condition_false(new, CONDITION_SUSPENDED);
    JobStatusValidationOptions {
        // Indexed Jobs with completions == parallelism can be scaled down.
        reject_decreasing_succeeded_counter: !is_indexed(new)
            || spec.completions != spec.parallelism,
        reject_decreasing_failed_counter: true,
        reject_disabling_terminal_condition: true,
        reject_invalid_completed_indexes: completed_indexes_changed,
        reject_invalid_failed_indexes: failed_indexes_changed,
        reject_completed_indexes_for_non_indexed_job: completed_indexes_changed,
        reject_failed_indexes_for_no_backoff_limit_per_index: failed_indexes_changed,
        reject_failed_indexes_overlapping_completed: failed_indexes_changed
            || completed_indexes_changed,
        reject_failed_job_without_failure_target: failed_changed || failed_indexes_changed,
        reject_complete_job_without_success_criteria_met: complete_changed || scm_changed,
        reject_finished_job_with_active_pods: finished_changed || active_changed,
        reject_finished_job_without_start_time: (finished_changed || start_time_changed)
            && !suspended_with_zero_completions,
        reject_finished_job_with_uncounted_terminated_pods: finished_changed || uncounted_changed,
        reject_start_time_update_for_unsuspended_job: start_time_changed && !resuming,
        reject_completion_time_before_start_time: start_time_changed || completion_time_changed,
        reject_mutating_completion_time: true,
        reject_not_complete_job_with_completion_time: complete_changed || completion_time_changed,
        reject_complete_job_without_completion_time: complete_changed || completion_time_changed,
        reject_complete_job_with_failed_condition: complete_changed || failed_changed,
        reject_complete_job_with_failure_target_condition: complete_changed
            || failure_target_changed,
        allow_for_success_criteria_met_in_extended_scope: true,
        reject_more_ready_than_active_pods: ready_changed || active_changed,
        reject_finished_job_with_terminating_pods: finished_changed || terminating_changed,
    }
}

fn cond_err(path: &Path, detail: &str) -> Error {
    Error::invalid(&path.child("conditions"), BadValue::Omit, detail)
}

fn validate_uncounted_uids(u: &UncountedTerminatedPods, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, uids) in [("succeeded", &u.succeeded), ("failed", &u.failed)] {
        for (i, uid) in uids.iter().flatten().enumerate() {
            let p = path.child(name).index(i);
            if uid.is_empty() {
                errs.push(Error::invalid(&p, uid.as_str(), "must not be empty"));
            } else if !seen.insert(uid.as_str()) {
                errs.push(Error::duplicate(&p, uid.as_str()));
            }
        }
    }
    errs
}

/// `validateJobStatus`: counters, uncounted UIDs, then the option-gated
/// consistency rules, in upstream's order.
pub fn validate_job_status(job: &Job, path: &Path, opts: &JobStatusValidationOptions) -> ErrorList {
    let s = status(job);
    let spec = job.spec.clone().unwrap_or_default();
    let active = s.active.unwrap_or(0);
    let mut errs = ErrorList::new();
    errs.append(validate_nonnegative_field(
        i64::from(active),
        &path.child("active"),
    ));
    errs.append(validate_nonnegative_field(
        i64::from(s.succeeded.unwrap_or(0)),
        &path.child("succeeded"),
    ));
    errs.append(validate_nonnegative_field(
        i64::from(s.failed.unwrap_or(0)),
        &path.child("failed"),
    ));
    if let Some(ready) = s.ready {
        errs.append(validate_nonnegative_field(
            i64::from(ready),
            &path.child("ready"),
        ));
    }
    if let Some(t) = s.terminating {
        errs.append(validate_nonnegative_field(
            i64::from(t),
            &path.child("terminating"),
        ));
    }
    if let Some(u) = &s.uncounted_terminated_pods {
        errs.append(validate_uncounted_uids(
            u,
            &path.child("uncountedTerminatedPods"),
        ));
    }
    let complete = is_condition_true(job, CONDITION_COMPLETE);
    let failed = is_condition_true(job, CONDITION_FAILED);
    let failure_target = is_condition_true(job, CONDITION_FAILURE_TARGET);
    let scm = is_condition_true(job, CONDITION_SUCCESS_CRITERIA_MET);
    if opts.reject_complete_job_with_failed_condition && complete && failed {
        errs.push(cond_err(
            path,
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if opts.reject_complete_job_with_failure_target_condition && complete && failure_target {
        errs.push(cond_err(
            path,
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    if opts.reject_not_complete_job_with_completion_time
        && !complete
        && let Some(t) = &s.completion_time
    {
        errs.push(Error::invalid(
            &path.child("completionTime"),
            t,
            "cannot set completionTime when there is no Complete=True condition",
        ));
    }
    if opts.reject_complete_job_without_completion_time && complete && s.completion_time.is_none() {
        errs.push(Error::required(
            &path.child("completionTime"),
            "completionTime is required for Complete jobs",
        ));
    }
    if opts.reject_completion_time_before_start_time
        && let (Some(start), Some(done)) = (&s.start_time, &s.completion_time)
        && done.0 < start.0
    {
        errs.push(Error::invalid(
            &path.child("completionTime"),
            done,
            "completionTime cannot be set before startTime",
        ));
    }
    if opts.reject_failed_job_without_failure_target && failed && !failure_target {
        errs.push(cond_err(
            path,
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if opts.reject_complete_job_without_success_criteria_met && complete && !scm {
        errs.push(cond_err(
            path,
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    let finished = complete || failed;
    if opts.reject_finished_job_with_active_pods && active > 0 && finished {
        errs.push(Error::invalid(
            &path.child("active"),
            active,
            "active>0 is invalid for finished job",
        ));
    }
    if opts.reject_finished_job_without_start_time && s.start_time.is_none() && finished {
        errs.push(Error::required(
            &path.child("startTime"),
            "startTime is required for finished job",
        ));
    }
    if opts.reject_finished_job_with_uncounted_terminated_pods
        && finished
        && let Some(u) = &s.uncounted_terminated_pods
        && u.failed.iter().flatten().count() + u.succeeded.iter().flatten().count() > 0
    {
        errs.push(Error::invalid(
            &path.child("uncountedTerminatedPods"),
            BadValue::Json(render::uncounted_terminated_pods(u)),
            "uncountedTerminatedPods needs to be empty for finished job",
        ));
    }
    let completed_indexes = s.completed_indexes.clone().unwrap_or_default();
    if opts.reject_invalid_completed_indexes
        && let Some(c) = spec.completions
        && let Err(e) = validate_indexes_format(&completed_indexes, c)
    {
        errs.push(Error::invalid(
            &path.child("completedIndexes"),
            completed_indexes.as_str(),
            format!("error parsing completedIndexes: {e}"),
        ));
    }
    if opts.reject_invalid_failed_indexes
        && let (Some(c), Some(_), Some(fi)) = (
            spec.completions,
            spec.backoff_limit_per_index,
            &s.failed_indexes,
        )
        && let Err(e) = validate_indexes_format(fi, c)
    {
        errs.push(Error::invalid(
            &path.child("failedIndexes"),
            fi.as_str(),
            format!("error parsing failedIndexes: {e}"),
        ));
    }
    if opts.reject_completed_indexes_for_non_indexed_job
        && !completed_indexes.is_empty()
        && !is_indexed(job)
    {
        errs.push(Error::invalid(
            &path.child("completedIndexes"),
            completed_indexes.as_str(),
            "cannot set non-empty completedIndexes when non-indexed completion mode",
        ));
    }
    // Also covers NonIndexed Jobs: they never have backoffLimitPerIndex.
    if opts.reject_failed_indexes_for_no_backoff_limit_per_index
        && spec.backoff_limit_per_index.is_none()
        && let Some(fi) = &s.failed_indexes
    {
        errs.push(Error::invalid(
            &path.child("failedIndexes"),
            fi.as_str(),
            "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
        ));
    }
    if opts.reject_failed_indexes_overlapping_completed
        && let (Some(c), Some(fi)) = (spec.completions, &s.failed_indexes)
        && let Err(e) = failed_indexes_overlap_completed(&completed_indexes, fi, c)
    {
        errs.push(Error::invalid(&path.child("failedIndexes"), fi.as_str(), e));
    }
    if opts.reject_finished_job_with_terminating_pods
        && finished
        && let Some(t) = s.terminating.filter(|t| *t > 0)
    {
        errs.push(Error::invalid(
            &path.child("terminating"),
            t,
            "terminating>0 is invalid for finished job",
        ));
    }
    if opts.reject_more_ready_than_active_pods
        && let Some(ready) = s.ready.filter(|r| *r > active)
    {
        errs.push(Error::invalid(
            &path.child("ready"),
            ready,
            "cannot set more ready pods than active",
        ));
    }
    if !opts.allow_for_success_criteria_met_in_extended_scope && !is_indexed(job) && scm {
        errs.push(cond_err(
            path,
            "cannot set SuccessCriteriaMet to NonIndexed Job",
        ));
    }
    if scm && failed {
        errs.push(cond_err(
            path,
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if scm && failure_target {
        errs.push(cond_err(
            path,
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    if !opts.allow_for_success_criteria_met_in_extended_scope
        && spec.success_policy.is_none()
        && scm
    {
        errs.push(cond_err(
            path,
            "cannot set SuccessCriteriaMet=True for Job without SuccessPolicy",
        ));
    }
    if spec.success_policy.is_some() && !scm && complete {
        errs.push(cond_err(
            path,
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    errs
}

/// `ValidateJobStatusUpdate`: [`validate_job_status`] on `new`, then the
/// transition rules against `old`.
pub fn validate_job_status_update(
    new: &Job,
    old: &Job,
    opts: &JobStatusValidationOptions,
) -> ErrorList {
    let path = Path::new("status");
    let mut errs = validate_job_status(new, &path, opts);
    let (ns, os) = (status(new), status(old));
    if opts.reject_disabling_terminal_condition {
        for t in [
            CONDITION_FAILED,
            CONDITION_COMPLETE,
            CONDITION_FAILURE_TARGET,
        ] {
            if is_condition_true(old, t) && !is_condition_true(new, t) {
                errs.push(cond_err(
                    &path,
                    &format!("cannot disable the terminal {t}=True condition"),
                ));
            }
        }
    }
    let (new_failed, old_failed) = (ns.failed.unwrap_or(0), os.failed.unwrap_or(0));
    if opts.reject_decreasing_failed_counter && new_failed < old_failed {
        errs.push(Error::invalid(
            &path.child("failed"),
            new_failed,
            "cannot decrease the failed counter",
        ));
    }
    let (new_succeeded, old_succeeded) = (ns.succeeded.unwrap_or(0), os.succeeded.unwrap_or(0));
    if opts.reject_decreasing_succeeded_counter && new_succeeded < old_succeeded {
        errs.push(Error::invalid(
            &path.child("succeeded"),
            new_succeeded,
            "cannot decrease the succeeded counter",
        ));
    }
    // Only a change between two set values: clearing completionTime of a
    // running Job is allowed (a Complete Job without one is caught above).
    if opts.reject_mutating_completion_time
        && let (Some(n), Some(o)) = (&ns.completion_time, &os.completion_time)
        && n != o
    {
        errs.push(Error::invalid(
            &path.child("completionTime"),
            n,
            "completionTime cannot be mutated",
        ));
    }
    let suspended = new.spec.as_ref().and_then(|s| s.suspend) == Some(true);
    if opts.reject_start_time_update_for_unsuspended_job
        && os.start_time.is_some()
        && os.start_time != ns.start_time
        && !suspended
    {
        errs.push(Error::required(
            &path.child("startTime"),
            "startTime cannot be removed for unsuspended job",
        ));
    }
    let scm = |j: &Job| is_condition_true(j, CONDITION_SUCCESS_CRITERIA_MET);
    if scm(old) && !scm(new) {
        errs.push(cond_err(
            &path,
            "cannot disable the SuccessCriteriaMet=True condition",
        ));
    }
    if is_condition_true(old, CONDITION_COMPLETE) && !scm(old) && scm(new) {
        errs.push(cond_err(
            &path,
            "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
        ));
    }
    errs
}

/// `ValidateJobUpdateStatus`: metadata update rules, then
/// [`validate_job_status_update`].
pub fn validate_job_update_status(
    new: &Job,
    old: &Job,
    opts: &JobStatusValidationOptions,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_job_status_update(new, old, opts));
    errs
}
