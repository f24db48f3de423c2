//! Matching a failed pod against `spec.podFailurePolicy` (job-failure spec §2).
//!
//! Data flow: `(policy, failed pod)` → scan the rules in order → for each rule
//! evaluate `onExitCodes` (regular container statuses, then init container
//! statuses) or else `onPodConditions` → the first matching rule whose action
//! is understood decides the [`PolicyMatch`]. Unknown actions and operators
//! make a rule inapplicable (§2.4); nothing here can fail or panic.
//!
//! All feature gates are treated as on (§15): `FailIndex` matches are always
//! honoured (so the "gate off" variants of cases 9 and 14 are not reachable).

use std::fmt;

use k8s_openapi::api::batch::v1::{
    PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition};
use serde::{Serialize, Serializer};

use exitplan_api::batch::constants::{
    ACTION_COUNT, ACTION_FAIL_INDEX, ACTION_FAIL_JOB, ACTION_IGNORE, OPERATOR_IN, OPERATOR_NOT_IN,
};
use exitplan_api::core::constants::CONDITION_TRUE;

/// A `podFailurePolicy` rule action; values this build does not know are kept verbatim.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Fail the whole Job.
    FailJob,
    /// Fail the pod's index (backoffLimitPerIndex).
    FailIndex,
    /// Do not count the failure.
    Ignore,
    /// Count the failure (default handling, but stops rule evaluation).
    Count,
    /// A value this controller does not understand: the rule never applies.
    Unknown(String),
}

impl Action {
    /// Parses the wire value (exact, case-sensitive).
    pub fn parse(value: &str) -> Self {
        match value {
            ACTION_FAIL_JOB => Self::FailJob,
            ACTION_FAIL_INDEX => Self::FailIndex,
            ACTION_IGNORE => Self::Ignore,
            ACTION_COUNT => Self::Count,
            other => Self::Unknown(other.to_owned()),
        }
    }

    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            Self::FailJob => ACTION_FAIL_JOB,
            Self::FailIndex => ACTION_FAIL_INDEX,
            Self::Ignore => ACTION_IGNORE,
            Self::Count => ACTION_COUNT,
            Self::Unknown(other) => other,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// An `onExitCodes` operator; values this build does not know are kept verbatim.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// The exit code is one of the values.
    In,
    /// The exit code is none of the values.
    NotIn,
    /// A value this controller does not understand: never matches.
    Unknown(String),
}

impl Operator {
    /// Parses the wire value (exact, case-sensitive).
    pub fn parse(value: &str) -> Self {
        match value {
            OPERATOR_IN => Self::In,
            OPERATOR_NOT_IN => Self::NotIn,
            other => Self::Unknown(other.to_owned()),
        }
    }

    /// Whether a (non-zero) exit code satisfies the operator over `values`.
    pub fn matches(&self, exit_code: i32, values: &[i32]) -> bool {
        match self {
            Self::In => values.contains(&exit_code),
            Self::NotIn => !values.contains(&exit_code),
            Self::Unknown(_) => false,
        }
    }
}

/// The outcome of matching one failed pod against the policy (§2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PolicyMatch {
    /// The Job failure message when a `FailJob` rule matched.
    pub fail_job_message: Option<String>,
    /// Whether the failure counts towards `backoffLimit` / `backoffLimitPerIndex`
    /// (false only for `Ignore`).
    pub count_failed: bool,
    /// The action of the matching rule; `None` when no rule matched.
    pub action: Option<Action>,
    /// 0-based position of the matching rule in `rules` (for explanations);
    /// `None` when no rule matched.
    pub rule_index: Option<usize>,
}

impl PolicyMatch {
    /// The default handling: no rule matched, the failure is counted.
    pub fn counted_by_default() -> Self {
        Self {
            fail_job_message: None,
            count_failed: true,
            action: None,
            rule_index: None,
        }
    }
}

/// What a rule's selector matched: the container status or the pod condition.
enum RuleHit<'a> {
    ExitCode(&'a ContainerStatus, i32),
    Condition(&'a PodCondition),
}

/// Matches a failed pod against the pod failure policy (§2.1–§2.4):
/// first applicable rule wins; no policy or no match → counted by default.
pub fn match_pod_failure_policy(policy: Option<&PodFailurePolicy>, pod: &Pod) -> PolicyMatch {
    let Some(policy) = policy else {
        return PolicyMatch::counted_by_default();
    };
    for (index, rule) in policy.rules.iter().enumerate() {
        let Some(hit) = rule_hit(rule, pod) else {
            continue;
        };
        let action = Action::parse(&rule.action);
        let decided = match &action {
            Action::Ignore => Some((None, false)),
            Action::Count | Action::FailIndex => Some((None, true)),
            Action::FailJob => Some((Some(fail_job_message(&hit, pod, &action, index)), true)),
            // Forward compatibility: a rule whose action is not understood is skipped.
            Action::Unknown(_) => None,
        };
        if let Some((fail_job_message, count_failed)) = decided {
            return PolicyMatch {
                fail_job_message,
                count_failed,
                action: Some(action),
                rule_index: Some(index),
            };
        }
    }
    PolicyMatch::counted_by_default()
}

/// Evaluates a rule's selector: `onExitCodes` if present (preferred even when
/// `onPodConditions` is also set, A4), else `onPodConditions` if non-nil.
fn rule_hit<'a>(rule: &PodFailurePolicyRule, pod: &'a Pod) -> Option<RuleHit<'a>> {
    let status = pod.status.as_ref()?;
    if let Some(requirement) = &rule.on_exit_codes {
        let regular = status.container_statuses.as_deref().unwrap_or_default();
        let init = status
            .init_container_statuses
            .as_deref()
            .unwrap_or_default();
        return matching_container(regular, requirement)
            .or_else(|| matching_container(init, requirement))
            .map(|(cs, code)| RuleHit::ExitCode(cs, code));
    }
    if let Some(patterns) = &rule.on_pod_conditions {
        let conditions = status.conditions.as_deref().unwrap_or_default();
        return matching_condition(conditions, patterns).map(RuleHit::Condition);
    }
    None
}

/// The first terminated status (list order) passing the name filter whose
/// non-zero exit code satisfies the operator (§2.2). Exit code 0 never
/// reaches the operator.
fn matching_container<'a>(
    statuses: &'a [ContainerStatus],
    requirement: &PodFailurePolicyOnExitCodesRequirement,
) -> Option<(&'a ContainerStatus, i32)> {
    let operator = Operator::parse(&requirement.operator);
    statuses.iter().find_map(|cs| {
        let terminated = cs.state.as_ref()?.terminated.as_ref()?;
        let name_ok = requirement
            .container_name
            .as_deref()
            .is_none_or(|name| name == cs.name);
        let code = terminated.exit_code;
        (name_ok && code != 0 && operator.matches(code, &requirement.values)).then_some((cs, code))
    })
}

/// The first pod condition (outer loop) equal in type and status to any
/// pattern (inner loop) (§2.3). A pattern without a status is read as `True`,
/// the value v1 defaulting gives it.
fn matching_condition<'a>(
    conditions: &'a [PodCondition],
    patterns: &[PodFailurePolicyOnPodConditionsPattern],
) -> Option<&'a PodCondition> {
    conditions.iter().find(|condition| {
        patterns.iter().any(|pattern| {
            pattern.type_ == condition.type_
                && pattern.status.as_deref().unwrap_or(CONDITION_TRUE) == condition.status
        })
    })
}

/// The literal FailJob messages of §2.4.
fn fail_job_message(hit: &RuleHit<'_>, pod: &Pod, action: &Action, index: usize) -> String {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    match hit {
        RuleHit::ExitCode(cs, code) => format!(
            "Container {} for pod {namespace}/{name} failed with exit code {code} matching {action} rule at index {index}",
            cs.name
        ),
        RuleHit::Condition(condition) => format!(
            "Pod {namespace}/{name} has condition {} matching {action} rule at index {index}",
            condition.type_
        ),
    }
}
