//! One Job sync, as a pure decision (`syncJob`, job-failure spec §3–§9).
//!
//! Data flow, one function per step:
//! [`skip_reason`] → `SyncCtx::new` (classify pods §3, new finished pods,
//! counters §4, back-off record §9) → `finished_condition` (terminal
//! decision order §5, per-index limits §6, then the success policy of an
//! Indexed Job via [`super::success_policy`]) → pod management (delete active
//! pods of a finishing Job, or `manageJob` §7 via [`super::manage`]) →
//! [`super::counting`] (two-phase counting §8, terminal condition, events) →
//! [`SyncPlan`].
//!
//! All feature gates are on (§15): `FailureTarget` always precedes `Failed`,
//! terminating pods are tracked and published, `FailIndex` is honoured.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::Pod;

use exitplan_api::batch::constants::{
    CONDITION_FAILED, CONDITION_FAILURE_TARGET, CONDITION_SUCCESS_CRITERIA_MET,
    CONDITION_SUSPENDED, JOB_CONTROLLER_NAME, MESSAGE_COMPLETIONS_REACHED,
    REASON_BACKOFF_LIMIT_EXCEEDED, REASON_COMPLETIONS_REACHED, REASON_DEADLINE_EXCEEDED,
    REASON_FAILED_INDEXES, REASON_MAX_FAILED_INDEXES_EXCEEDED, REASON_POD_FAILURE_POLICY,
};
use exitplan_api::core::constants::{
    CONDITION_FALSE, CONDITION_TRUE, PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED,
};
use exitplan_api::core::podutil::{is_ready, phase};
use exitplan_api::time::mtime;

use super::backoff::BackoffRecord;
use super::classify::{
    creation_order, has_tracking_finalizer, has_unknown_completion_mode, is_active, is_indexed,
    is_pod_failed, is_terminating, only_replace_failed_pods, uid, valid_index,
};
use super::conditions::{
    ensure_condition, failure_target, is_finished, new_condition, success_criteria_met,
};
use super::counting::{nonzero, track_status_and_remove_finalizers, uncounted_lists};
use super::indexes::{self, Intervals, indexes_of};
use super::manage::{self, MAX_POD_CREATE_DELETE_PER_SYNC, MIN_REQUEUE_DELAY};
use super::plan::{
    EventType, JobEvent, ManageOutcome, PodRef, SkipReason, Step, SyncPlan, SyncSummary,
};
use super::pod_failure_policy::match_pod_failure_policy;
use super::success_policy::{REASON_SUCCESS_POLICY, match_success_policy};

/// Message of `BackoffLimitExceeded`.
pub const MSG_BACKOFF_LIMIT_EXCEEDED: &str = "Job has reached the specified backoff limit";
/// Message of `DeadlineExceeded`.
pub const MSG_DEADLINE_EXCEEDED: &str = "Job was active longer than specified deadline";
/// Message of `MaxFailedIndexesExceeded`.
pub const MSG_MAX_FAILED_INDEXES_EXCEEDED: &str =
    "Job has exceeded the specified maximal number of failed indexes";
/// Message of `FailedIndexes`.
pub const MSG_FAILED_INDEXES: &str = "Job has failed indexes";

/// What one sync looks at.
#[derive(Clone, Copy, Debug)]
pub struct SyncInput<'a> {
    /// The Job (already defaulted).
    pub job: &'a Job,
    /// The pods the Job controls, in the runtime's (stable) list order.
    pub pods: &'a [Pod],
    /// The Job's in-memory back-off record (default when none).
    pub backoff: &'a BackoffRecord,
    /// UIDs whose finalizer removal was issued but not yet observed.
    pub expected_removed_finalizers: &'a BTreeSet<String>,
    /// Whether pod creation/deletion expectations are satisfied.
    pub expectations_satisfied: bool,
    /// The injected clock.
    pub now: Timestamp,
}

/// The working state of one sync (upstream `syncJobCtx`).
pub(crate) struct SyncCtx<'a> {
    pub(crate) job: &'a Job,
    pub(crate) pods: Vec<&'a Pod>,
    pub(crate) active: Vec<&'a Pod>,
    pub(crate) expected_rm: &'a BTreeSet<String>,
    pub(crate) uncounted_succeeded: BTreeSet<String>,
    pub(crate) uncounted_failed: BTreeSet<String>,
    pub(crate) ready: i32,
    pub(crate) terminating: i32,
    pub(crate) succeeded: i32,
    pub(crate) failed: i32,
    pub(crate) new_backoff: BackoffRecord,
    pub(crate) indexed: bool,
    pub(crate) per_index: bool,
    pub(crate) prev_succeeded_indexes: Intervals,
    pub(crate) succeeded_indexes: Intervals,
    pub(crate) failed_indexes: Option<Intervals>,
    pub(crate) delayed: BTreeMap<i64, &'a Pod>,
    pub(crate) finished: Option<JobCondition>,
    pub(crate) status: JobStatus,
}

/// Whether the sync does nothing (§5 preamble).
pub fn skip_reason(job: &Job) -> Option<SkipReason> {
    if let Some(by) = job.spec.as_ref().and_then(|s| s.managed_by.as_deref())
        && by != JOB_CONTROLLER_NAME
    {
        return Some(SkipReason::ManagedByOtherController(by.to_owned()));
    }
    if is_finished(job) {
        return Some(SkipReason::Finished);
    }
    if has_unknown_completion_mode(job) {
        let mode = job
            .spec
            .as_ref()
            .and_then(|s| s.completion_mode.clone())
            .unwrap_or_default();
        return Some(SkipReason::UnknownCompletionMode(mode));
    }
    None
}

fn suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
}

fn backoff_limit(job: &Job) -> i32 {
    let spec = job.spec.as_ref();
    spec.and_then(|s| s.backoff_limit).unwrap_or(
        if spec.and_then(|s| s.backoff_limit_per_index).is_some() {
            i32::MAX
        } else {
            6
        },
    )
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

impl<'a> SyncCtx<'a> {
    /// Classification (§3), new finished pods, counters (§4) and the
    /// updated back-off record (§9).
    pub(crate) fn new(input: &SyncInput<'a>) -> Self {
        let job = input.job;
        let pods: Vec<&Pod> = input.pods.iter().collect();
        let active: Vec<&Pod> = pods.iter().copied().filter(|p| is_active(p)).collect();
        let mut status = job.status.clone().unwrap_or_default();
        if status.uncounted_terminated_pods.is_none() {
            status.uncounted_terminated_pods = Some(UncountedTerminatedPods::default());
        }
        let (us, uf) = uncounted_lists(&status);
        let uncounted_succeeded: BTreeSet<String> = us.into_iter().collect();
        let uncounted_failed: BTreeSet<String> = uf.into_iter().collect();
        let mut ctx = Self {
            job,
            ready: count(active.iter().filter(|p| is_ready(p)).count()),
            terminating: count(pods.iter().filter(|p| is_terminating(p)).count()),
            pods,
            active,
            expected_rm: input.expected_removed_finalizers,
            uncounted_succeeded,
            uncounted_failed,
            succeeded: 0,
            failed: 0,
            new_backoff: BackoffRecord::default(),
            indexed: is_indexed(job),
            per_index: indexes::backoff_limit_per_index(job).is_some(),
            prev_succeeded_indexes: Intervals::default(),
            succeeded_indexes: Intervals::default(),
            failed_indexes: None,
            delayed: BTreeMap::new(),
            finished: None,
            status,
        };
        let (new_succeeded, new_failed) = ctx.new_finished_pods();
        let policy = job
            .spec
            .as_ref()
            .and_then(|s| s.pod_failure_policy.as_ref());
        let non_ignored = new_failed
            .iter()
            .filter(|p| match_pod_failure_policy(policy, p).count_failed)
            .count();
        ctx.succeeded = ctx
            .status
            .succeeded
            .unwrap_or(0)
            .saturating_add(count(new_succeeded.len()))
            .saturating_add(count(ctx.uncounted_succeeded.len()));
        ctx.failed = ctx
            .status
            .failed
            .unwrap_or(0)
            .saturating_add(count(non_ignored))
            .saturating_add(count(ctx.uncounted_failed.len()));
        if ctx.status.start_time.is_none() && !suspended(job) {
            ctx.status.start_time = Some(mtime(input.now));
        }
        ctx.new_backoff = input.backoff.updated(&new_succeeded, &new_failed);
        ctx
    }

    /// Pods that count (finalizer, not expected-removed, valid index for
    /// Indexed Jobs) and are not in the given uncounted set.
    fn valid_pods(&self, uncounted: &BTreeSet<String>) -> Vec<&'a Pod> {
        let completions = indexes::completions(self.job);
        self.pods
            .iter()
            .copied()
            .filter(|p| has_tracking_finalizer(p))
            .filter(|p| !uncounted.contains(uid(p)) && !self.expected_rm.contains(uid(p)))
            .filter(|p| !self.indexed || valid_index(p, completions).is_some())
            .collect()
    }

    /// `getNewFinishedPods`: newly succeeded and newly failed pods.
    pub(crate) fn new_finished_pods(&self) -> (Vec<&'a Pod>, Vec<&'a Pod>) {
        let succeeded = self
            .valid_pods(&self.uncounted_succeeded)
            .into_iter()
            .filter(|p| phase(p) == PHASE_SUCCEEDED)
            .collect();
        let failed = self
            .valid_pods(&self.uncounted_failed)
            .into_iter()
            .filter(|p| is_pod_failed(p, self.job))
            .collect();
        (succeeded, failed)
    }
}

/// `getFailJobMessage` (§5 step 3): the FailJob message of the first failed
/// pod that matches a FailJob rule. Finalizer presence is not required
/// (A6). Order (A5): creation time, then namespace, name, UID — so the
/// choice does not depend on the lister.
pub fn fail_job_message(job: &Job, pods: &[&Pod]) -> Option<String> {
    let policy = job.spec.as_ref()?.pod_failure_policy.as_ref()?;
    let mut failed: Vec<&Pod> = pods
        .iter()
        .copied()
        .filter(|p| is_pod_failed(p, job))
        .collect();
    failed.sort_by(|a, b| creation_order(a, b));
    failed
        .into_iter()
        .find_map(|p| match_pod_failure_policy(Some(policy), p).fail_job_message)
}

/// `pastBackoffLimitOnFailure` (§4): restart counts of Running/Pending pods
/// under `restartPolicy: OnFailure`.
pub fn past_backoff_limit_on_failure(job: &Job, pods: &[&Pod]) -> bool {
    let restart_policy = job
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.restart_policy.as_deref());
    if restart_policy != Some("OnFailure") {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(phase(p), PHASE_RUNNING | PHASE_PENDING))
        .filter_map(|p| p.status.as_ref())
        .flat_map(|s| {
            let init = s.init_container_statuses.iter().flatten();
            init.chain(s.container_statuses.iter().flatten())
        })
        .map(|c| i64::from(c.restart_count))
        .sum();
    let limit = backoff_limit(job);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= i64::from(limit)
    }
}

/// Elapsed `activeDeadlineSeconds`: `Some(true)` past it, `Some(false)` with
/// the remaining time for a requeue, `None` without a deadline (or suspended).
fn active_deadline(
    job: &Job,
    start: Option<Timestamp>,
    now: Timestamp,
) -> Option<(bool, SignedDuration)> {
    let seconds = job.spec.as_ref()?.active_deadline_seconds?;
    if suspended(job) {
        return None;
    }
    let allowed = SignedDuration::from_secs(seconds);
    let Some(start) = start else {
        return Some((false, allowed));
    };
    let elapsed = now.duration_since(start);
    Some((elapsed >= allowed, allowed.saturating_sub(elapsed)))
}

/// Terminal decision (§5 steps 1–7): returns the finished condition and a
/// deadline requeue, if any. The failure type is always `FailureTarget`
/// (delayTerminalCondition is on).
pub(crate) fn finished_condition(ctx: &mut SyncCtx<'_>, now: Timestamp) -> Option<SignedDuration> {
    let job = ctx.job;
    let mut requeue = None;
    let target = |reason: &str, message: &str| {
        Some(new_condition(
            CONDITION_FAILURE_TARGET,
            CONDITION_TRUE,
            reason,
            message,
            now,
        ))
    };
    ctx.finished = success_criteria_met(job).cloned();
    if ctx.finished.is_none() {
        if let Some(ft) = failure_target(job) {
            ctx.finished = Some(new_condition(
                CONDITION_FAILED,
                CONDITION_TRUE,
                ft.reason.as_deref().unwrap_or_default(),
                ft.message.as_deref().unwrap_or_default(),
                now,
            ));
        } else if let Some(msg) = fail_job_message(job, &ctx.pods) {
            ctx.finished = target(REASON_POD_FAILURE_POLICY, &msg);
        }
    }
    if ctx.finished.is_none() {
        let start = ctx.status.start_time.as_ref().map(|t| t.0);
        if ctx.failed > backoff_limit(job) || past_backoff_limit_on_failure(job, &ctx.pods) {
            ctx.finished = target(REASON_BACKOFF_LIMIT_EXCEEDED, MSG_BACKOFF_LIMIT_EXCEEDED);
        } else if let Some((past, remaining)) = active_deadline(job, start, now) {
            if past {
                ctx.finished = target(REASON_DEADLINE_EXCEEDED, MSG_DEADLINE_EXCEEDED);
            } else {
                requeue = Some(remaining);
            }
        }
    }
    if ctx.indexed {
        let (prev, all) = indexes::succeeded_indexes(job, &ctx.pods);
        ctx.prev_succeeded_indexes = prev;
        ctx.succeeded_indexes = all;
        ctx.succeeded = count_i64(ctx.succeeded_indexes.total());
        if ctx.per_index {
            let failed = indexes::failed_indexes(job, &ctx.pods);
            let completions = i64::from(indexes::completions(job));
            if ctx.finished.is_none() {
                let max = job.spec.as_ref().and_then(|s| s.max_failed_indexes);
                if max.is_some_and(|m| failed.total() > i64::from(m)) {
                    ctx.finished = target(
                        REASON_MAX_FAILED_INDEXES_EXCEEDED,
                        MSG_MAX_FAILED_INDEXES_EXCEEDED,
                    );
                } else if failed.total() > 0
                    && failed.total() + ctx.succeeded_indexes.total() >= completions
                {
                    ctx.finished = target(REASON_FAILED_INDEXES, MSG_FAILED_INDEXES);
                }
            }
            let eligible = ctx.valid_pods(&BTreeSet::new());
            ctx.delayed = indexes::pods_with_delayed_deletion(
                job,
                &eligible,
                &ctx.active,
                &ctx.succeeded_indexes,
                &failed,
            );
            ctx.failed_indexes = Some(failed);
        }
        // §5 step 7: only when no failure was decided above.
        if ctx.finished.is_none() {
            let policy = job.spec.as_ref().and_then(|s| s.success_policy.as_ref());
            let completions = indexes::completions(job);
            if let Some(m) = match_success_policy(policy, completions, &ctx.succeeded_indexes) {
                ctx.finished = Some(new_condition(
                    CONDITION_SUCCESS_CRITERIA_MET,
                    CONDITION_TRUE,
                    REASON_SUCCESS_POLICY,
                    &m.message,
                    now,
                ));
            }
        }
    }
    requeue
}

fn count_i64(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// What pod management decided before anything was applied.
struct Managed {
    step: Option<Step>,
    /// Requeue for the recreation back-off.
    requeue: Option<SignedDuration>,
    manage_called: bool,
}

/// Pod management for this sync: delete all active pods when finishing,
/// otherwise `manageJob` (§7). Updates the counts in `ctx` as if every
/// request succeeded, adjusted by `outcome` when the runtime reports
/// failures.
fn manage_pods(
    ctx: &mut SyncCtx<'_>,
    input: &SyncInput<'_>,
    outcome: &ManageOutcome,
) -> (Managed, i32) {
    let job = ctx.job;
    let mut active = count(ctx.active.len());
    if ctx.finished.is_some() {
        let pods: Vec<&Pod> = ctx.active.clone();
        let deleted: Vec<&Pod> = pods
            .iter()
            .copied()
            .filter(|p| !outcome.failed_deletions.contains(uid(p)))
            .collect();
        let n = count(deleted.len());
        if n != active || !input.expectations_satisfied {
            ctx.finished = None;
        }
        active -= n;
        ctx.terminating = ctx.terminating.saturating_add(n);
        ctx.ready -= count(deleted.iter().filter(|p| is_ready(p)).count());
        let step = (!pods.is_empty()).then(|| Step::DeletePods {
            pods: pods.iter().map(|p| PodRef::of(p)).collect(),
            remove_finalizer_first: false,
        });
        return (
            Managed {
                step,
                requeue: None,
                manage_called: false,
            },
            active,
        );
    }
    if !input.expectations_satisfied || job.metadata.deletion_timestamp.is_some() {
        return (
            Managed {
                step: None,
                requeue: None,
                manage_called: false,
            },
            active,
        );
    }
    let (step, requeue, active) = manage_job(ctx, input.now, outcome);
    (
        Managed {
            step,
            requeue,
            manage_called: true,
        },
        active,
    )
}

fn delete_step(
    ctx: &mut SyncCtx<'_>,
    pods: &[&Pod],
    outcome: &ManageOutcome,
    active: &mut i32,
) -> Step {
    let removed: Vec<&&Pod> = pods
        .iter()
        .filter(|p| !outcome.failed_deletions.contains(uid(p)))
        .collect();
    *active -= count(removed.len());
    ctx.terminating = ctx.terminating.saturating_add(count(removed.len()));
    ctx.ready -= count(removed.iter().filter(|p| is_ready(p)).count());
    Step::DeletePods {
        pods: pods.iter().map(|p| PodRef::of(p)).collect(),
        remove_finalizer_first: true,
    }
}

/// `manageJob` (§6, §7, §9): returns the step, a requeue and the new `active`.
fn manage_job(
    ctx: &mut SyncCtx<'_>,
    now: Timestamp,
    outcome: &ManageOutcome,
) -> (Option<Step>, Option<SignedDuration>, i32) {
    let job = ctx.job;
    let mut active = count(ctx.active.len());
    let active_pods = ctx.active.clone();
    if suspended(job) {
        let rm = manage::active_pods_for_removal(job, &active_pods, active_pods.len());
        let step = (!rm.is_empty()).then(|| delete_step(ctx, &rm, outcome, &mut active));
        return (step, None, active);
    }
    let want = manage::want_active(job, active, ctx.succeeded);
    let rm_at_least = usize::try_from(active.saturating_sub(want)).unwrap_or(0);
    let mut rm = manage::active_pods_for_removal(job, &active_pods, rm_at_least);
    rm.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
    if !rm.is_empty() {
        let step = delete_step(ctx, &rm, outcome, &mut active);
        return (Some(step), None, active);
    }
    let terminating = if only_replace_failed_pods(job) {
        ctx.terminating
    } else {
        0
    };
    let diff = want.saturating_sub(terminating).saturating_sub(active);
    if diff <= 0 {
        return (None, None, active);
    }
    // While a back-off holds creations back, nothing was created or deleted:
    // `active` stays what it is (upstream kubernetes#139428: returning 0 made
    // `ready > active`, which status validation refuses).
    if !ctx.per_index {
        let remaining = ctx.new_backoff.remaining(now);
        if remaining.is_positive() {
            return (None, Some(remaining.max(MIN_REQUEUE_DELAY)), active);
        }
    }
    let mut n = usize::try_from(diff)
        .unwrap_or(0)
        .min(MAX_POD_CREATE_DELETE_PER_SYNC);
    let mut to_add = Vec::new();
    if ctx.indexed {
        let mut non_pending = ctx.succeeded_indexes.with_indexes(indexes_of(&active_pods));
        if only_replace_failed_pods(job) {
            let terminating_pods: Vec<&Pod> = ctx
                .pods
                .iter()
                .copied()
                .filter(|p| is_terminating(p))
                .collect();
            non_pending = non_pending.with_indexes(indexes_of(&terminating_pods));
        }
        if let Some(failed) = &ctx.failed_indexes {
            non_pending = non_pending.merge(failed);
        }
        to_add = manage::pending_indexes(&non_pending, n, job);
        if ctx.per_index {
            let (ready, remaining) = manage::indexes_ready_now(&to_add, &ctx.delayed, now);
            if remaining.is_positive() {
                return (None, Some(remaining.max(MIN_REQUEUE_DELAY)), active);
            }
            to_add = ready;
        }
        n = to_add.len();
    }
    if n == 0 {
        return (None, None, active);
    }
    let batches = manage::new_pods(job, n, &to_add, ctx.per_index, &ctx.delayed);
    active = active
        .saturating_add(count(n))
        .saturating_sub(count(outcome.failed_creations));
    (Some(Step::CreatePods { batches }), None, active)
}

/// The whole sync, assuming every pod create/delete succeeds.
pub fn sync_job(input: &SyncInput<'_>) -> SyncPlan {
    sync_job_after_manage(input, &ManageOutcome::default(), true)
}

/// The sync given what the runtime reports about the pod-management step.
/// With `include_manage` the management step itself is part of the plan
/// (as in [`sync_job`]); without it the plan holds only what follows it.
pub fn sync_job_after_manage(
    input: &SyncInput<'_>,
    outcome: &ManageOutcome,
    include_manage: bool,
) -> SyncPlan {
    if let Some(reason) = skip_reason(input.job) {
        let steps = match &reason {
            SkipReason::Finished => vec![Step::RemoveBackoffRecord],
            SkipReason::ManagedByOtherController(_) => Vec::new(),
            SkipReason::UnknownCompletionMode(_) => vec![Step::Event(JobEvent {
                type_: EventType::Warning,
                reason: "UnknownCompletionMode".to_owned(),
                message: "Skipped Job sync because completion mode is unknown".to_owned(),
            })],
        };
        return SyncPlan {
            skipped: Some(reason),
            steps,
            ..SyncPlan::default()
        };
    }
    let now = input.now;
    let mut ctx = SyncCtx::new(input);
    let mut requeue = finished_condition(&mut ctx, now);
    let mut summary = SyncSummary {
        failed: ctx.failed,
        succeeded: ctx.succeeded,
        finished_condition: ctx.finished.clone(),
        failed_indexes: ctx.failed_indexes.as_ref().map(Intervals::render),
    };
    let (managed, active) = manage_pods(&mut ctx, input, outcome);
    requeue = min_requeue(requeue, managed.requeue);
    let mut steps = Vec::new();
    if include_manage && let Some(step) = managed.step {
        steps.push(step);
    }
    let mut suspend_changed = false;
    if ctx.finished.is_none() {
        let job = ctx.job;
        let completions = job.spec.as_ref().and_then(|s| s.completions);
        let complete = match completions {
            None => ctx.succeeded > 0 && active == 0,
            Some(c) => ctx.succeeded >= c && active == 0,
        };
        if complete {
            ctx.finished = Some(new_condition(
                CONDITION_SUCCESS_CRITERIA_MET,
                CONDITION_TRUE,
                REASON_COMPLETIONS_REACHED,
                MESSAGE_COMPLETIONS_REACHED,
                now,
            ));
        } else if managed.manage_called {
            let conditions = ctx.status.conditions.get_or_insert_with(Vec::new);
            let (status, reason, message, ev_reason) = if suspended(job) {
                (CONDITION_TRUE, "JobSuspended", "Job suspended", "Suspended")
            } else {
                (CONDITION_FALSE, "JobResumed", "Job resumed", "Resumed")
            };
            if ensure_condition(
                conditions,
                CONDITION_SUSPENDED,
                status,
                reason,
                message,
                now,
            ) {
                suspend_changed = true;
                steps.push(Step::Event(JobEvent {
                    type_: EventType::Normal,
                    reason: ev_reason.to_owned(),
                    message: message.to_owned(),
                }));
                if !suspended(job) {
                    ctx.status.start_time = Some(mtime(now));
                }
            }
            if ctx.status.conditions.as_ref().is_some_and(Vec::is_empty) {
                ctx.status.conditions = None;
            }
        }
    }
    summary.finished_condition = summary.finished_condition.or_else(|| ctx.finished.clone());
    let old = input.job.status.clone().unwrap_or_default();
    let needs_update = suspend_changed
        || active != old.active.unwrap_or(0)
        || Some(ctx.ready) != old.ready
        || Some(ctx.terminating) != old.terminating;
    ctx.status.active = nonzero(active);
    ctx.status.ready = Some(ctx.ready);
    ctx.status.terminating = Some(ctx.terminating);
    steps.extend(track_status_and_remove_finalizers(
        &mut ctx,
        needs_update,
        now,
    ));
    SyncPlan {
        skipped: None,
        steps,
        requeue_after: requeue,
        summary,
    }
}

fn min_requeue(a: Option<SignedDuration>, b: Option<SignedDuration>) -> Option<SignedDuration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}
