//! `exitplan explain job`: why a Job counts, ignores or fails on its pods.
//!
//! Data flow: `(job, pods, now)` → the same [`super::sync::sync_job`] the
//! controller runs (default back-off record, no pending expectations), the
//! same [`match_pod_failure_policy`] per failed pod and, for a Job with a
//! `successPolicy`, the same rule evaluation over the same succeeded indexes
//! ([`super::success_policy`]) → the status the plan would leave behind → a
//! serialisable [`JobExplanation`]. Nothing is re-implemented here; this
//! module only reads the plan and the decision functions' results.

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use exitplan_api::batch::constants::{
    CONDITION_COMPLETE, CONDITION_FAILED, CONDITION_FAILURE_TARGET, CONDITION_SUCCESS_CRITERIA_MET,
};
use exitplan_api::core::constants::CONDITION_TRUE;
use exitplan_api::core::podutil::phase;

use super::backoff::BackoffRecord;
use super::classify::{
    completion_index, has_tracking_finalizer, is_indexed, is_pod_failed, name, uid,
};
use super::conditions::find;
use super::counting::uncounted_lists;
use super::indexes::{self, Intervals};
use super::plan::SkipReason;
use super::pod_failure_policy::{Action, match_pod_failure_policy};
use super::success_policy::{RuleEvaluation, evaluate_rules, match_success_policy};
use super::sync::{SyncInput, sync_job};

/// How one failed pod is handled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodExplanation {
    /// Pod name.
    pub name: String,
    /// Pod UID.
    pub uid: String,
    /// Pod phase.
    pub phase: String,
    /// Completion index (Indexed Jobs).
    pub index: Option<i64>,
    /// Whether the pod still carries the tracking finalizer (not yet counted).
    pub tracked: bool,
    /// 0-based index of the matching rule, if a rule matched.
    pub rule_index: Option<usize>,
    /// Action of the matching rule, if a rule matched.
    pub action: Option<Action>,
    /// Whether the failure counts towards the limits.
    pub counted: bool,
    /// `rule <i> (<action>)`, `no rule — counted` or `… — ignored`.
    pub verdict: String,
    /// The Job failure message when a FailJob rule matched.
    pub fail_job_message: Option<String>,
}

/// Counters after the sync's writes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// `status.failed` plus failures still in `uncountedTerminatedPods`.
    pub failed: i32,
    /// `status.succeeded` plus successes still uncounted.
    pub succeeded: i32,
    /// Failed pods whose failure an `Ignore` rule discarded.
    pub ignored: i32,
}

/// The Job-level outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all_fields = "camelCase")]
pub enum JobDecision {
    /// No terminal decision.
    Running,
    /// Failure decided; pods are being cleaned up (`FailureTarget=True`).
    FailureTarget {
        /// Condition reason.
        reason: String,
        /// Condition message.
        message: String,
    },
    /// The Job failed (`Failed=True`).
    Failed {
        /// Condition reason.
        reason: String,
        /// Condition message.
        message: String,
    },
    /// Success decided; pods are being cleaned up (`SuccessCriteriaMet=True`).
    SuccessCriteriaMet {
        /// Condition reason (`SuccessPolicy` or `CompletionsReached`).
        reason: String,
        /// Condition message (`Matched rules at index N` for a success policy).
        message: String,
    },
    /// The Job completed (`Complete=True`).
    Complete {
        /// Condition reason.
        reason: String,
        /// Condition message.
        message: String,
    },
    /// The controller does not sync this Job.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The explanation of one Job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobExplanation {
    /// `<namespace>/<name>`.
    pub job: String,
    /// Every failed pod, in the given order.
    pub failed_pods: Vec<PodExplanation>,
    /// Resulting counters.
    pub counters: Counters,
    /// `status.failedIndexes` after the sync (backoffLimitPerIndex only).
    pub failed_indexes: Option<String>,
    /// The Job's `successPolicy` against its succeeded indexes (Indexed Jobs
    /// with a policy only).
    pub success_policy: Option<SuccessPolicyExplanation>,
    /// The Job's decision.
    pub decision: JobDecision,
}

/// How the Job's succeeded indexes compare with its `successPolicy`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicyExplanation {
    /// The succeeded indexes the controller sees (compact form, `""` for none).
    pub succeeded_indexes: String,
    /// Every rule, evaluated.
    pub rules: Vec<RuleEvaluation>,
    /// The first matching rule: the one `SuccessCriteriaMet` names, unless a
    /// failure is decided first (a failure decided in the same sync wins).
    pub matched_rule: Option<usize>,
}

/// The success-policy view of an Indexed Job with a policy.
fn explain_success_policy(job: &Job, pods: &[Pod]) -> Option<SuccessPolicyExplanation> {
    let policy = job.spec.as_ref()?.success_policy.as_ref()?;
    if !is_indexed(job) {
        return None;
    }
    let completions = indexes::completions(job);
    let refs: Vec<&Pod> = pods.iter().collect();
    let (_, succeeded): (Intervals, Intervals) = indexes::succeeded_indexes(job, &refs);
    Some(SuccessPolicyExplanation {
        succeeded_indexes: succeeded.render(),
        rules: evaluate_rules(policy, completions, &succeeded),
        matched_rule: match_success_policy(Some(policy), completions, &succeeded)
            .map(|m| m.rule_index),
    })
}

/// Explains `job` given its `pods` at `now`, using the controller's own
/// decision functions.
pub fn explain(job: &Job, pods: &[Pod], now: Timestamp) -> JobExplanation {
    let policy = job
        .spec
        .as_ref()
        .and_then(|s| s.pod_failure_policy.as_ref());
    let failed_pods: Vec<PodExplanation> = pods
        .iter()
        .filter(|p| is_pod_failed(p, job))
        .map(|p| {
            let m = match_pod_failure_policy(policy, p);
            let verdict = match (&m.rule_index, &m.action) {
                (Some(i), Some(a)) if !m.count_failed => format!("rule {i} ({a}) — ignored"),
                (Some(i), Some(a)) => format!("rule {i} ({a}) — counted"),
                _ => "no rule — counted".to_owned(),
            };
            PodExplanation {
                name: name(p).to_owned(),
                uid: uid(p).to_owned(),
                phase: phase(p).to_owned(),
                index: completion_index(p),
                tracked: has_tracking_finalizer(p),
                rule_index: m.rule_index,
                action: m.action,
                counted: m.count_failed,
                verdict,
                fail_job_message: m.fail_job_message,
            }
        })
        .collect();
    let ignored =
        i32::try_from(failed_pods.iter().filter(|p| !p.counted).count()).unwrap_or(i32::MAX);
    let backoff = BackoffRecord::default();
    let expected = BTreeSet::new();
    let plan = sync_job(&SyncInput {
        job,
        pods,
        backoff: &backoff,
        expected_removed_finalizers: &expected,
        expectations_satisfied: true,
        now,
    });
    let status: JobStatus = plan
        .status_writes()
        .last()
        .map(|s| (*s).clone())
        .or_else(|| job.status.clone())
        .unwrap_or_default();
    let (us, uf) = uncounted_lists(&status);
    let counters = Counters {
        failed: status.failed.unwrap_or(0).saturating_add(len(&uf)),
        succeeded: status.succeeded.unwrap_or(0).saturating_add(len(&us)),
        ignored,
    };
    let decision = match &plan.skipped {
        Some(SkipReason::Finished) | None => decision_of(&status),
        Some(other) => JobDecision::Skipped {
            reason: format!("{other:?}"),
        },
    };
    JobExplanation {
        job: format!(
            "{}/{}",
            job.metadata.namespace.as_deref().unwrap_or_default(),
            job.metadata.name.as_deref().unwrap_or_default()
        ),
        failed_pods,
        counters,
        failed_indexes: status.failed_indexes.clone(),
        success_policy: explain_success_policy(job, pods),
        decision,
    }
}

fn len(v: &[String]) -> i32 {
    i32::try_from(v.len()).unwrap_or(i32::MAX)
}

fn decision_of(status: &JobStatus) -> JobDecision {
    let conditions = status.conditions.as_deref().unwrap_or_default();
    let truthy = |t: &str| find(conditions, t).filter(|c| c.status == CONDITION_TRUE);
    let parts = |t: &str| {
        truthy(t).map(|c| {
            (
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
    };
    if let Some((reason, message)) = parts(CONDITION_FAILED) {
        JobDecision::Failed { reason, message }
    } else if let Some((reason, message)) = parts(CONDITION_COMPLETE) {
        JobDecision::Complete { reason, message }
    } else if let Some((reason, message)) = parts(CONDITION_FAILURE_TARGET) {
        JobDecision::FailureTarget { reason, message }
    } else if let Some((reason, message)) = parts(CONDITION_SUCCESS_CRITERIA_MET) {
        JobDecision::SuccessCriteriaMet { reason, message }
    } else {
        JobDecision::Running
    }
}
