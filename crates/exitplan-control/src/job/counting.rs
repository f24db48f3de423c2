//! Exactly-once counting: the tracking finalizer and
//! `status.uncountedTerminatedPods` (job-failure spec §8, A7).
//!
//! Data flow: the sync context (pods, finished condition, counters) →
//! phase 1: finished pods whose finalizer may go are recorded in the
//! uncounted lists (policy-matched; `Ignore`d pods are released uncounted)
//! and written together with interim conditions → phase 2: finalizers are
//! removed → phase 3: UIDs whose pods lost the finalizer move from the
//! uncounted lists into `succeeded` / `failed`, written together with the
//! terminal condition once nothing is uncounted or terminating.
//!
//! Every intermediate state is a valid resume point: a crash between two
//! steps leaves UIDs either uncounted-with-finalizer (phase 2 is redone,
//! the UID is not appended twice) or uncounted-without-finalizer (phase 3
//! counts it on the next sync); a persisted `FailureTarget` turns into
//! `Failed` on the next sync (§5 step 2).

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{JobCondition, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::Pod;

use exitplan_api::batch::constants::{
    CONDITION_COMPLETE, CONDITION_FAILED, CONDITION_FAILURE_TARGET, CONDITION_SUCCESS_CRITERIA_MET,
};
use exitplan_api::core::constants::{CONDITION_TRUE, PHASE_SUCCEEDED};
use exitplan_api::core::podutil::phase;

use super::classify::{completion_index, has_tracking_finalizer, is_pod_failed, uid, valid_index};
use super::conditions::{ensure_condition, new_condition, success_criteria_met};
use super::plan::{EventType, JobEvent, PodRef, Step};
use super::pod_failure_policy::match_pod_failure_policy;
use super::sync::SyncCtx;

/// Bound on `newSucceededIndexes + uncounted.succeeded + uncounted.failed`
/// per sync (`MaxUncountedPods`).
pub const MAX_UNCOUNTED_PODS: usize = 500;

/// The uncounted lists of a status, as vectors (missing → empty).
pub fn uncounted_lists(status: &JobStatus) -> (Vec<String>, Vec<String>) {
    let u = status.uncounted_terminated_pods.as_ref();
    (
        u.and_then(|u| u.succeeded.clone()).unwrap_or_default(),
        u.and_then(|u| u.failed.clone()).unwrap_or_default(),
    )
}

fn set_uncounted(status: &mut JobStatus, succeeded: Vec<String>, failed: Vec<String>) {
    status.uncounted_terminated_pods = Some(UncountedTerminatedPods {
        succeeded: (!succeeded.is_empty()).then_some(succeeded),
        failed: (!failed.is_empty()).then_some(failed),
    });
}

/// A counter as the wire shows it: Go's `omitempty` drops 0.
pub fn nonzero(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

/// `cleanUncountedPodsWithoutFinalizers`: UIDs no longer carrying the
/// finalizer leave the uncounted lists and are added to the counters.
/// Returns whether anything changed.
pub fn clean_uncounted(status: &mut JobStatus, with_finalizer: &BTreeSet<String>) -> bool {
    let (succeeded, failed) = uncounted_lists(status);
    let keep = |list: &[String]| -> Vec<String> {
        list.iter()
            .filter(|u| with_finalizer.contains(*u))
            .cloned()
            .collect()
    };
    let (ks, kf) = (keep(&succeeded), keep(&failed));
    let moved_s = succeeded.len() - ks.len();
    let moved_f = failed.len() - kf.len();
    let add = |c: Option<i32>, n: usize| {
        nonzero(
            c.unwrap_or(0)
                .saturating_add(i32::try_from(n).unwrap_or(i32::MAX)),
        )
    };
    if moved_s > 0 {
        status.succeeded = add(status.succeeded, moved_s);
    }
    if moved_f > 0 {
        status.failed = add(status.failed, moved_f);
    }
    set_uncounted(status, ks, kf);
    moved_s > 0 || moved_f > 0
}

/// `canRemoveFinalizer`: the Job is being deleted, a finished condition is
/// pending, the pod succeeded, or it failed and is not the pod retained for
/// its index (§6 delayed removal).
fn can_remove_finalizer(ctx: &SyncCtx<'_>, pod: &Pod, failed: bool) -> bool {
    if ctx.job.metadata.deletion_timestamp.is_some()
        || ctx.finished.is_some()
        || phase(pod) == PHASE_SUCCEEDED
    {
        return true;
    }
    if !failed {
        return false;
    }
    if ctx.per_index
        && let Some(ix) = completion_index(pod)
        && ctx
            .delayed
            .get(&ix)
            .is_some_and(|kept| uid(kept) == uid(pod))
    {
        return false;
    }
    true
}

fn is_success_criteria(c: &JobCondition) -> bool {
    c.type_ == CONDITION_SUCCESS_CRITERIA_MET
}

/// `trackJobStatusAndRemoveFinalizers` (§8): the status writes, finalizer
/// removals, metric increments and the finish event, in order.
pub(crate) fn track_status_and_remove_finalizers(
    ctx: &mut SyncCtx<'_>,
    mut needs_flush: bool,
    now: Timestamp,
) -> Vec<Step> {
    let job = ctx.job;
    let policy = job
        .spec
        .as_ref()
        .and_then(|s| s.pod_failure_policy.as_ref());
    let completions = super::indexes::completions(job);
    let mut pods: Vec<&Pod> = ctx.pods.clone();
    if ctx.indexed {
        pods.sort_by_key(|p| completion_index(p).unwrap_or(-1));
    }
    let mut with_finalizer: BTreeSet<String> = pods
        .iter()
        .filter(|p| has_tracking_finalizer(p) && !ctx.expected_rm.contains(uid(p)))
        .map(|p| uid(p).to_owned())
        .collect();

    if clean_uncounted(&mut ctx.status, &with_finalizer) {
        needs_flush = true;
    }
    let (mut unc_succeeded, mut unc_failed) = uncounted_lists(&ctx.status);
    let mut to_remove: Vec<&Pod> = Vec::new();
    let mut new_succeeded_indexes: Vec<i64> = Vec::new();
    let mut actions: BTreeMap<String, u32> = BTreeMap::new();
    let mut reached_max = false;
    let failing = ctx
        .finished
        .as_ref()
        .is_some_and(|c| !is_success_criteria(c));
    for pod in &pods {
        let pod_uid = uid(pod);
        if !has_tracking_finalizer(pod) || ctx.expected_rm.contains(pod_uid) {
            continue;
        }
        let failed = is_pod_failed(pod, job);
        if !can_remove_finalizer(ctx, pod, failed) {
            continue;
        }
        to_remove.push(pod);
        if phase(pod) == PHASE_SUCCEEDED && !ctx.uncounted_failed.contains(pod_uid) {
            if ctx.indexed {
                if let Some(ix) = valid_index(pod, completions)
                    && !ctx.prev_succeeded_indexes.has(ix)
                {
                    new_succeeded_indexes.push(ix);
                    needs_flush = true;
                }
            } else if !ctx.uncounted_succeeded.contains(pod_uid) {
                needs_flush = true;
                unc_succeeded.push(pod_uid.to_owned());
            }
        } else if (failed || failing)
            && !ctx.uncounted_failed.contains(pod_uid)
            && (!ctx.indexed || valid_index(pod, completions).is_some())
        {
            let m = match_pod_failure_policy(policy, pod);
            if let Some(action) = &m.action {
                *actions.entry(action.as_str().to_owned()).or_insert(0) += 1;
            }
            if m.count_failed {
                needs_flush = true;
                unc_failed.push(pod_uid.to_owned());
            }
        }
        if new_succeeded_indexes.len() + unc_succeeded.len() + unc_failed.len()
            >= MAX_UNCOUNTED_PODS
        {
            reached_max = true;
            break;
        }
    }
    let status = &mut ctx.status;
    set_uncounted(status, unc_succeeded, unc_failed);

    if ctx.indexed {
        ctx.succeeded_indexes = ctx.succeeded_indexes.with_indexes(new_succeeded_indexes);
        let rendered = ctx.succeeded_indexes.render();
        let completed = (!rendered.is_empty()).then_some(rendered);
        if completed != status.completed_indexes {
            needs_flush = true;
        }
        status.succeeded =
            nonzero(i32::try_from(ctx.succeeded_indexes.total()).unwrap_or(i32::MAX));
        status.completed_indexes = completed;
        let failed_str = ctx
            .failed_indexes
            .as_ref()
            .map(super::indexes::Intervals::render);
        if failed_str != status.failed_indexes {
            status.failed_indexes = failed_str;
            needs_flush = true;
        }
    }

    if let Some(target) = ctx.finished.take() {
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        let next = if target.type_ == CONDITION_FAILURE_TARGET {
            // A7: the interim condition is persisted before finalizers go.
            conditions.push(target.clone());
            needs_flush = true;
            retype(&target, CONDITION_FAILED, now)
        } else if is_success_criteria(&target) {
            if success_criteria_met(job).is_none() {
                conditions.push(target.clone());
                needs_flush = true;
            }
            retype(&target, CONDITION_COMPLETE, now)
        } else {
            target
        };
        ctx.finished = Some(next);
    }

    let mut steps = Vec::new();
    if needs_flush {
        steps.push(Step::UpdateStatus(Box::new(status.clone())));
        steps.push(Step::SaveBackoffRecord(ctx.new_backoff.clone()));
        needs_flush = false;
    }
    if !actions.is_empty() {
        steps.push(Step::RecordPolicyActions(actions));
    }
    if !to_remove.is_empty() {
        for pod in &to_remove {
            with_finalizer.remove(uid(pod));
        }
        steps.push(Step::RemoveFinalizers(
            to_remove.iter().map(|p| PodRef::of(p)).collect(),
        ));
    }
    if clean_uncounted(status, &with_finalizer) {
        needs_flush = true;
    }
    let finished_now = !reached_max && enact_job_finished(ctx, now);
    if finished_now {
        needs_flush = true;
    }
    if needs_flush {
        steps.push(Step::UpdateStatus(Box::new(ctx.status.clone())));
        if finished_now && let Some(cond) = &ctx.finished {
            steps.extend(finish_events(ctx, cond));
        }
    }
    steps
}

fn retype(c: &JobCondition, type_: &str, now: Timestamp) -> JobCondition {
    new_condition(
        type_,
        CONDITION_TRUE,
        c.reason.as_deref().unwrap_or_default(),
        c.message.as_deref().unwrap_or_default(),
        now,
    )
}

/// `enactJobFinished`: add the terminal condition once nothing is uncounted
/// and nothing terminates (§5); `Complete` also sets `completionTime`.
fn enact_job_finished(ctx: &mut SyncCtx<'_>, now: Timestamp) -> bool {
    let Some(cond) = ctx.finished.clone() else {
        return false;
    };
    let (s, f) = uncounted_lists(&ctx.status);
    if !s.is_empty() || !f.is_empty() || ctx.terminating > 0 {
        return false;
    }
    let conditions = ctx.status.conditions.get_or_insert_with(Vec::new);
    ensure_condition(
        conditions,
        &cond.type_,
        &cond.status,
        cond.reason.as_deref().unwrap_or_default(),
        cond.message.as_deref().unwrap_or_default(),
        now,
    );
    if cond.type_ == CONDITION_COMPLETE {
        ctx.status.completion_time = cond.last_transition_time.clone();
    }
    true
}

/// Events for the terminal condition (`recordJobFinished`).
fn finish_events(ctx: &SyncCtx<'_>, cond: &JobCondition) -> Vec<Step> {
    if cond.type_ != CONDITION_COMPLETE {
        return vec![Step::Event(JobEvent {
            type_: EventType::Warning,
            reason: cond.reason.clone().unwrap_or_default(),
            message: cond.message.clone().unwrap_or_default(),
        })];
    }
    let mut out = Vec::new();
    let completions = ctx.job.spec.as_ref().and_then(|s| s.completions);
    if let Some(c) = completions
        && ctx.status.succeeded.unwrap_or(0) > c
    {
        out.push(Step::Event(JobEvent {
            type_: EventType::Warning,
            reason: "TooManySucceededPods".to_owned(),
            message: "Too many succeeded pods running after completion count reached".to_owned(),
        }));
    }
    out.push(Step::Event(JobEvent {
        type_: EventType::Normal,
        reason: "Completed".to_owned(),
        message: "Job completed".to_owned(),
    }));
    out
}
