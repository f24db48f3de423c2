//! `spec.podFailurePolicy` validation (job-failure spec §10.1–§10.4;
//! upstream `validatePodFailurePolicy`, `validatePodFailurePolicyRule`,
//! `validatePodFailurePolicyRuleOnExitCodes`,
//! `validatePodFailurePolicyRuleOnPodConditions`). One function per rule
//! family, errors appended in upstream's order.

use std::collections::BTreeSet;

use k8s_openapi::api::batch::v1::{
    JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};

use super::constants::{
    ACTION_COUNT, ACTION_FAIL_INDEX, ACTION_FAIL_JOB, ACTION_IGNORE, OPERATOR_IN, OPERATOR_NOT_IN,
};
use crate::core::constants::{CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::render;

/// At most this many rules (P1).
pub const MAX_RULES: usize = 20;
/// At most this many exit codes in one `onExitCodes` (E5).
pub const MAX_ON_EXIT_CODES_VALUES: usize = 255;
/// At most this many patterns in one `onPodConditions` (C1).
pub const MAX_ON_POD_CONDITIONS_PATTERNS: usize = 20;

/// Supported actions, sorted as upstream's `sets.List` prints them.
const ACTIONS: [&str; 4] = [
    ACTION_COUNT,
    ACTION_FAIL_INDEX,
    ACTION_FAIL_JOB,
    ACTION_IGNORE,
];
/// Supported operators, sorted.
const OPERATORS: [&str; 2] = [OPERATOR_IN, OPERATOR_NOT_IN];
/// Supported pattern statuses, sorted.
const STATUSES: [&str; 3] = [CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN];

/// Go's `fmt.Sprintf("valid values: %q", list)`: `valid values: ["a" "b"]`.
fn valid_values(list: &[&str]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| crate::field::go_quote(s)).collect();
    format!("valid values: [{}]", quoted.join(" "))
}

/// §10.1: the rule count (P1), then every rule, even when P1 fired. The
/// legal container names are the template's containers and init containers.
pub fn validate_pod_failure_policy(
    spec: &JobSpec,
    policy: &PodFailurePolicy,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let rules_path = path.child("rules");
    if policy.rules.len() > MAX_RULES {
        errs.push(Error::too_many(&rules_path, policy.rules.len(), MAX_RULES));
    }
    let pod_spec = spec.template.spec.as_ref();
    let container_names: BTreeSet<&str> = pod_spec
        .map(|s| s.containers.iter())
        .into_iter()
        .flatten()
        .chain(
            pod_spec
                .and_then(|s| s.init_containers.as_ref())
                .into_iter()
                .flatten(),
        )
        .map(|c| c.name.as_str())
        .collect();
    for (i, rule) in policy.rules.iter().enumerate() {
        errs.append(validate_pod_failure_policy_rule(
            spec,
            rule,
            &rules_path.index(i),
            &container_names,
        ));
    }
    errs
}

/// §10.2 (R1–R7): the action, the selector(s), and that exactly one
/// selector kind is used.
pub fn validate_pod_failure_policy_rule(
    spec: &JobSpec,
    rule: &PodFailurePolicyRule,
    path: &Path,
    container_names: &BTreeSet<&str>,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let action_path = path.child("action");
    if rule.action.is_empty() {
        errs.push(Error::required(&action_path, valid_values(&ACTIONS)));
    } else if rule.action == ACTION_FAIL_INDEX {
        if spec.backoff_limit_per_index.is_none() {
            errs.push(Error::invalid(
                &action_path,
                rule.action.as_str(),
                "requires the backoffLimitPerIndex to be set",
            ));
        }
    } else if !ACTIONS.contains(&rule.action.as_str()) {
        errs.push(Error::not_supported(
            &action_path,
            rule.action.as_str(),
            &ACTIONS,
        ));
    }
    let patterns = rule.on_pod_conditions.as_deref().unwrap_or_default();
    if let Some(on_exit_codes) = &rule.on_exit_codes {
        errs.append(validate_on_exit_codes(
            on_exit_codes,
            &path.child("onExitCodes"),
            container_names,
        ));
    }
    if !patterns.is_empty() {
        errs.append(validate_on_pod_conditions(
            patterns,
            &path.child("onPodConditions"),
        ));
    }
    if rule.on_exit_codes.is_some() && !patterns.is_empty() {
        errs.push(Error::invalid(
            path,
            BadValue::Omit,
            "specifying both OnExitCodes and OnPodConditions is not supported",
        ));
    }
    if rule.on_exit_codes.is_none() && patterns.is_empty() {
        errs.push(Error::invalid(
            path,
            BadValue::Omit,
            "specifying one of OnExitCodes and OnPodConditions is required",
        ));
    }
    errs
}

/// §10.3 (E1–E8): operator, container name, the value list's size, then per
/// value "not 0 for In" and duplicates, and finally the ordering.
pub fn validate_on_exit_codes(
    req: &PodFailurePolicyOnExitCodesRequirement,
    path: &Path,
    container_names: &BTreeSet<&str>,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let operator_path = path.child("operator");
    if req.operator.is_empty() {
        errs.push(Error::required(&operator_path, valid_values(&OPERATORS)));
    } else if !OPERATORS.contains(&req.operator.as_str()) {
        errs.push(Error::not_supported(
            &operator_path,
            req.operator.as_str(),
            &OPERATORS,
        ));
    }
    if let Some(name) = &req.container_name
        && !container_names.contains(name.as_str())
    {
        errs.push(Error::invalid(
            &path.child("containerName"),
            name.as_str(),
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = path.child("values");
    if req.values.is_empty() {
        errs.push(Error::invalid(
            &values_path,
            req.values.as_slice(),
            "at least one value is required",
        ));
    } else if req.values.len() > MAX_ON_EXIT_CODES_VALUES {
        errs.push(Error::too_many(
            &values_path,
            req.values.len(),
            MAX_ON_EXIT_CODES_VALUES,
        ));
    }
    let mut ordered = true;
    let mut seen = BTreeSet::new();
    for (j, &value) in req.values.iter().enumerate() {
        let value_path = values_path.index(j);
        // E6 looks at the literal operator: "" or unknown never triggers it.
        if req.operator == OPERATOR_IN && value == 0 {
            errs.push(Error::invalid(
                &value_path,
                value,
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(value) {
            errs.push(Error::duplicate(&value_path, value));
        }
        if j > 0 && req.values.get(j - 1).is_some_and(|prev| *prev > value) {
            ordered = false;
        }
    }
    if !ordered {
        errs.push(Error::invalid(
            &values_path,
            BadValue::Json(render::int32s(&req.values)),
            "must be ordered",
        ));
    }
    errs
}

/// §10.4 (C1–C4): the pattern count, then each pattern's type (a qualified
/// name) and status.
pub fn validate_on_pod_conditions(
    patterns: &[PodFailurePolicyOnPodConditionsPattern],
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if patterns.len() > MAX_ON_POD_CONDITIONS_PATTERNS {
        errs.push(Error::too_many(
            path,
            patterns.len(),
            MAX_ON_POD_CONDITIONS_PATTERNS,
        ));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let pattern_path = path.index(j);
        let status_path = pattern_path.child("status");
        errs.append(formats::validate_qualified_name(
            &pattern_path.child("type"),
            &pattern.type_,
        ));
        let status = pattern.status.as_deref().unwrap_or_default();
        if status.is_empty() {
            errs.push(Error::required(&status_path, valid_values(&STATUSES)));
        } else if !STATUSES.contains(&status) {
            errs.push(Error::not_supported(&status_path, status, &STATUSES));
        }
    }
    errs
}
