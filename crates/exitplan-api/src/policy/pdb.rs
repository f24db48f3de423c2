//! policy/v1 PodDisruptionBudget: validation (`pkg/apis/policy/validation`:
//! `ValidatePodDisruptionBudget(Spec)`, `ValidatePodDisruptionBudgetStatusUpdate`)
//! and the registry strategy (`pkg/registry/policy/poddisruptionbudget`).
//!
//! Upstream's PDB validation checks only the spec; metadata is checked by
//! the generic registry (`rest.BeforeCreate` / `BeforeUpdate`, with the
//! weak path-segment name rule), which [`PodDisruptionBudgetStrategy`]
//! reproduces so its error lists are kube-apiserver's. Only policy/v1 is
//! served, so the status counters are always validated (upstream skips them
//! for policy/v1beta1).

use k8s_openapi::api::policy::v1::{
    PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::constants::{ALWAYS_ALLOW, IF_HEALTHY_BUDGET};
use crate::absent::Absent;
use crate::conditions::validate_conditions;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::generic::{before_create, validate_common_fields};
use crate::nonnegative::validate_nonnegative_field;
use crate::render;
use crate::selector::validate_label_selector;
use crate::strategy::{Context, Strategy, next_generation};

/// Supported unhealthyPodEvictionPolicy values, sorted as upstream prints them.
const UNHEALTHY_POD_EVICTION_POLICIES: [&str; 2] = [ALWAYS_ALLOW, IF_HEALTHY_BUDGET];

const PERCENT_FMT: &str = "[0-9]+%";
const PERCENT_ERR: &str =
    "a valid percent string must be a numeric string followed by an ending '%'";

/// `IsValidPercent`: digits followed by `%`.
pub fn is_valid_percent(s: &str) -> Vec<String> {
    let valid = s
        .strip_suffix('%')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    if valid {
        Vec::new()
    } else {
        vec![formats::regex_error(
            PERCENT_ERR,
            PERCENT_FMT,
            &["1%", "93%"],
        )]
    }
}

/// An `IntOrString` as the value of a field error (a quoted string or a number).
pub fn int_or_string_value(v: &IntOrString) -> BadValue {
    match v {
        IntOrString::Int(i) => BadValue::Int(i64::from(*i)),
        IntOrString::String(s) => BadValue::Str(s.clone()),
    }
}

/// `ValidatePositiveIntOrPercent`: a non-negative integer or a valid percent.
pub fn validate_positive_int_or_percent(v: &IntOrString, path: &Path) -> ErrorList {
    match v {
        IntOrString::String(s) => is_valid_percent(s)
            .into_iter()
            .map(|m| Error::invalid(path, int_or_string_value(v), m))
            .collect(),
        IntOrString::Int(i) => validate_nonnegative_field(i64::from(*i), path),
    }
}

/// `IsNotMoreThan100Percent`: a valid percent may not exceed 100%.
pub fn is_not_more_than_100_percent(v: &IntOrString, path: &Path) -> ErrorList {
    let IntOrString::String(s) = v else {
        return ErrorList::new();
    };
    if !is_valid_percent(s).is_empty() {
        return ErrorList::new();
    }
    // Go's strconv.Atoi: a value too large for an int fails and reads as 0.
    let value: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
    if value <= 100 {
        return ErrorList::new();
    }
    ErrorList(vec![Error::invalid(
        path,
        int_or_string_value(v),
        "must not be greater than 100%",
    )])
}

/// `ValidatePodDisruptionBudgetSpec`: minAvailable xor maxUnavailable, each
/// a non-negative int or a percent ≤ 100%, a well-formed selector, and a
/// known unhealthyPodEvictionPolicy.
pub fn validate_pod_disruption_budget_spec(
    spec: &PodDisruptionBudgetSpec,
    allow_invalid_label_value_in_selector: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        errs.push(Error::invalid(
            path,
            BadValue::Json(render::pod_disruption_budget_spec(spec)),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (name, value) in [
        ("minAvailable", &spec.min_available),
        ("maxUnavailable", &spec.max_unavailable),
    ] {
        if let Some(v) = value {
            let p = path.child(name);
            errs.append(validate_positive_int_or_percent(v, &p));
            errs.append(is_not_more_than_100_percent(v, &p));
        }
    }
    errs.append(validate_label_selector(
        spec.selector.as_ref(),
        allow_invalid_label_value_in_selector,
        &path.child("selector"),
    ));
    if let Some(policy) = &spec.unhealthy_pod_eviction_policy
        && !UNHEALTHY_POD_EVICTION_POLICIES.contains(&policy.as_str())
    {
        errs.push(Error::not_supported(
            &path.child("unhealthyPodEvictionPolicy"),
            policy.as_str(),
            &UNHEALTHY_POD_EVICTION_POLICIES,
        ));
    }
    errs
}

/// `ValidatePodDisruptionBudget`: the spec at `spec`.
pub fn validate_pod_disruption_budget(
    pdb: &PodDisruptionBudget,
    allow_invalid_label_value_in_selector: bool,
) -> ErrorList {
    validate_pod_disruption_budget_spec(
        &pdb.spec.clone().unwrap_or_default(),
        allow_invalid_label_value_in_selector,
        &Path::new("spec"),
    )
}

/// `ValidatePodDisruptionBudgetStatusUpdate` (policy/v1): the conditions
/// (`metav1.Condition` rules), then every counter ≥ 0.
pub fn validate_pod_disruption_budget_status_update(
    status: &PodDisruptionBudgetStatus,
    path: &Path,
    absent: &Absent,
) -> ErrorList {
    let mut errs = validate_conditions(
        status.conditions.as_deref().unwrap_or_default(),
        &path.child("conditions"),
        absent,
    );
    for (name, value) in [
        ("disruptionsAllowed", status.disruptions_allowed),
        ("currentHealthy", status.current_healthy),
        ("desiredHealthy", status.desired_healthy),
        ("expectedPods", status.expected_pods),
    ] {
        errs.append(validate_nonnegative_field(
            i64::from(value.unwrap_or(0)),
            &path.child(name),
        ));
    }
    errs
}

/// The status a new PDB starts with: the four counters at 0 (they are not
/// `omitempty` in policy/v1), nothing else.
fn initial_status() -> PodDisruptionBudgetStatus {
    PodDisruptionBudgetStatus {
        current_healthy: Some(0),
        desired_healthy: Some(0),
        disruptions_allowed: Some(0),
        expected_pods: Some(0),
        ..Default::default()
    }
}

/// Create, update and status-update rules of policy/v1 PodDisruptionBudgets.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodDisruptionBudgetStrategy;

impl Strategy for PodDisruptionBudgetStrategy {
    type Object = PodDisruptionBudget;

    /// Status cleared, generation 1.
    fn prepare_for_create(obj: &mut PodDisruptionBudget) {
        obj.status = Some(initial_status());
        obj.metadata.generation = Some(1);
    }

    /// The spec; metadata only once the spec passed (`BeforeCreate` order).
    fn validate_create(obj: &PodDisruptionBudget, _ctx: &Context<'_>) -> ErrorList {
        let errs = validate_pod_disruption_budget(obj, false);
        before_create(errs, &obj.metadata)
    }

    /// Status kept; generation bumped when the spec changed.
    fn prepare_for_update(new: &mut PodDisruptionBudget, old: &PodDisruptionBudget) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    /// Common metadata fields, then the spec. Invalid label values already
    /// stored in the selector stay allowed.
    fn validate_update(
        new: &PodDisruptionBudget,
        old: &PodDisruptionBudget,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let old_selector = old.spec.as_ref().and_then(|s| s.selector.as_ref());
        let allow = old_selector.is_some()
            && !validate_label_selector(old_selector, false, &Path::default()).is_empty();
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_pod_disruption_budget(new, allow));
        errs
    }

    /// Spec and metadata reset to the stored object.
    /// Upstream's `podDisruptionBudgetStatusStrategy.PrepareForUpdate`: the spec is the stored one.
    fn prepare_for_status_update(new: &mut PodDisruptionBudget, old: &PodDisruptionBudget) {
        new.spec.clone_from(&old.spec);
    }

    /// Common metadata fields, then the status rules.
    fn validate_status_update(
        new: &PodDisruptionBudget,
        old: &PodDisruptionBudget,
        ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_pod_disruption_budget_status_update(
            &new.status.clone().unwrap_or_default(),
            &Path::new("status"),
            ctx.absent,
        ));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percents() {
        assert!(is_valid_percent("0%").is_empty());
        assert!(is_valid_percent("100%").is_empty());
        for bad in ["%", "1", "1.5%", "-1%", "a%", "1%%"] {
            assert!(!is_valid_percent(bad).is_empty(), "{bad}");
        }
        let p = Path::new("spec").child("minAvailable");
        assert!(is_not_more_than_100_percent(&IntOrString::String("100%".into()), &p).is_empty());
        assert_eq!(
            is_not_more_than_100_percent(&IntOrString::String("101%".into()), &p).to_string(),
            r#"spec.minAvailable: Invalid value: "101%": must not be greater than 100%"#
        );
    }
}
