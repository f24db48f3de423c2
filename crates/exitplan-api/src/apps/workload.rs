//! Rules the workload kinds share (upstream `pkg/apis/apps/validation` and
//! the ReplicationController part of `pkg/apis/core/validation`): the
//! selector a workload must carry, the pod template it stamps pods from
//! (the full Pod rules from [`crate::core::validation`], `restartPolicy`
//! `Always`, no `activeDeadlineSeconds`), int-or-percent rollout limits and
//! status counters.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::absent::Absent;
use crate::batch::pod_template::validate_template_eviction_responders;
use crate::core::validation::PodValidationOptions;
use crate::core::validation::pod_spec::validate_pod_template_spec;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::FIELD_IMMUTABLE;
use crate::nonnegative::validate_nonnegative_field;
use crate::policy::pdb::{int_or_string_value, is_valid_percent};
use crate::render;
use crate::selector::{Selector, as_selector, validate_label_selector};

/// The only restart policy a workload's pods may have.
pub const RESTART_POLICY_ALWAYS: &str = "Always";
/// The detail of a template whose labels the selector does not select.
pub const SELECTOR_MISMATCH: &str = "`selector` does not match template `labels`";
/// The detail of a status counter above `status.replicas`.
pub const ABOVE_REPLICAS: &str = "cannot be greater than status.replicas";

/// The spec's selector as upstream sees it: `None` when the submitted
/// object had none (k8s-openapi reads a missing selector as `{}`).
pub fn selector_of<'a>(selector: &'a LabelSelector, absent: &Absent) -> Option<&'a LabelSelector> {
    if absent.contains(&Path::new("spec").child("selector")) {
        None
    } else {
        Some(selector)
    }
}

/// The labels of a template's metadata.
pub fn template_labels(template: &PodTemplateSpec) -> Option<&BTreeMap<String, String>> {
    template.metadata.as_ref().and_then(|m| m.labels.as_ref())
}

/// A label map as the value of a field error (`null` when absent).
pub fn labels_value(labels: Option<&BTreeMap<String, String>>) -> BadValue {
    labels.map_or(BadValue::Null, |l| BadValue::Json(render::string_map(l)))
}

/// A label selector as the value of a field error.
pub fn selector_value(selector: &LabelSelector) -> BadValue {
    BadValue::Json(render::label_selector(selector))
}

/// The selector rules of Deployments, ReplicaSets and StatefulSets:
/// required, well-formed (strictly), not empty (`empty selector is invalid
/// for <kind>`), then converted. A conversion failure is reported at
/// `path` with `invalid_detail`; the converted selector is returned when
/// there is one (a missing selector converts to "nothing").
pub fn validate_required_selector(
    selector: Option<&LabelSelector>,
    kind: &str,
    invalid_detail: &str,
    path: &Path,
) -> (ErrorList, Option<Selector>) {
    let mut errs = ErrorList::new();
    match selector {
        None => errs.push(Error::required(path, "")),
        Some(s) => {
            errs.append(validate_label_selector(Some(s), false, path));
            if is_empty_selector(s) {
                errs.push(Error::invalid(
                    path,
                    selector_value(s),
                    format!("empty selector is invalid for {kind}"),
                ));
            }
        }
    }
    match as_selector(selector) {
        Ok(sel) => (errs, Some(sel)),
        Err(_) => {
            errs.push(Error::invalid(
                path,
                selector.map_or(BadValue::Null, selector_value),
                invalid_detail,
            ));
            (errs, None)
        }
    }
}

/// Whether a selector has neither matchLabels nor matchExpressions.
pub fn is_empty_selector(s: &LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && s.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

/// The template's labels must be selected by `selector` (an empty
/// selector is not checked); reported at `<path>.metadata.labels`.
pub fn validate_template_labels_match(
    template: &PodTemplateSpec,
    selector: &Selector,
    path: &Path,
) -> ErrorList {
    let labels = template_labels(template);
    if *selector == Selector::Everything || selector.matches(labels) {
        return ErrorList::new();
    }
    ErrorList(vec![Error::invalid(
        &path.child("metadata").child("labels"),
        labels_value(labels),
        SELECTOR_MISMATCH,
    )])
}

/// `restartPolicy` must be `Always` and `activeDeadlineSeconds` unset —
/// the checks every workload adds after the Pod rules. `kind` names the
/// workload in the activeDeadlineSeconds message (Deployments say
/// `ReplicaSet`, as upstream).
pub fn validate_workload_pod_policies(
    template: &PodTemplateSpec,
    kind: &str,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let spec = template.spec.as_ref();
    let policy = spec
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or_default();
    if policy != RESTART_POLICY_ALWAYS {
        errs.push(Error::not_supported(
            &path.child("spec").child("restartPolicy"),
            policy,
            &[RESTART_POLICY_ALWAYS],
        ));
    }
    if spec.is_some_and(|s| s.active_deadline_seconds.is_some()) {
        errs.push(Error::forbidden(
            &path.child("spec").child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errs
}

/// `ValidatePodTemplateSpecForReplicaSet` (and `…ForRC`): the labels
/// match the selector, the template passes the Pod rules, and the
/// workload's pod policies hold. `kind` is `ReplicaSet` or
/// `ReplicationController`.
pub fn validate_pod_template_for_replicas(
    template: &PodTemplateSpec,
    selector: &Selector,
    kind: &str,
    path: &Path,
) -> ErrorList {
    let mut errs = validate_template_labels_match(template, selector, path);
    errs.append(validate_pod_template_spec(
        template,
        path,
        PodValidationOptions::default(),
    ));
    errs.append(validate_workload_pod_policies(template, kind, path));
    errs
}

/// The template's `evictionResponders` (exitplan's own Pod rule), checked
/// on create (`old` is `None`) and when they changed on update.
pub fn validate_template_responders(
    template: &PodTemplateSpec,
    old: Option<&PodTemplateSpec>,
    absent: &Absent,
) -> ErrorList {
    validate_template_eviction_responders(
        template,
        old,
        &Path::new("spec").child("template"),
        absent,
    )
}

/// A non-negative optional counter (unset reads as 0, as Go's zero value).
pub fn nonnegative(errs: &mut ErrorList, value: Option<i32>, path: &Path) {
    errs.append(validate_nonnegative_field(
        i64::from(value.unwrap_or(0)),
        path,
    ));
}

/// `value > limit` is reported at `path` with `detail`.
pub fn not_above(
    errs: &mut ErrorList,
    value: Option<i32>,
    limit: Option<i32>,
    path: &Path,
    detail: &str,
) {
    let value = value.unwrap_or(0);
    if value > limit.unwrap_or(0) {
        errs.push(Error::invalid(path, value, detail));
    }
}

/// `IsDecremented` on `status.collisionCount`: a set count may not drop
/// or be removed.
pub fn validate_collision_count(new: Option<i32>, old: Option<i32>) -> ErrorList {
    let decremented = match (new, old) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(n), Some(o)) => n < o,
    };
    if !decremented {
        return ErrorList::new();
    }
    ErrorList(vec![Error::invalid(
        &Path::new("status").child("collisionCount"),
        new.unwrap_or(0),
        "cannot be decremented",
    )])
}

/// `spec.selector` may not change (apps/v1).
pub fn validate_selector_immutable(
    new: Option<&LabelSelector>,
    old: Option<&LabelSelector>,
) -> ErrorList {
    if semantic_eq(&new, &old) {
        return ErrorList::new();
    }
    ErrorList(vec![
        Error::invalid(
            &Path::new("spec").child("selector"),
            BadValue::Json(render::label_selector_opt(new)),
            FIELD_IMMUTABLE,
        )
        .with_origin("immutable"),
    ])
}

/// `getIntOrPercentValue`: a valid percent's number, else the integer
/// (a string that is not a percent reads as Go's `Atoi`, 0 on failure).
pub fn int_or_percent_value(v: &IntOrString) -> i64 {
    match v {
        IntOrString::Int(i) => i64::from(*i),
        IntOrString::String(s) => {
            let digits = if is_valid_percent(s).is_empty() {
                s.trim_end_matches('%')
            } else {
                s.as_str()
            };
            digits.parse().unwrap_or(0)
        }
    }
}

/// An optional `IntOrString` of a v1 object as the internal value it
/// converts to (unset is the integer 0).
pub fn int_or_zero(v: Option<&IntOrString>) -> IntOrString {
    v.cloned().unwrap_or(IntOrString::Int(0))
}

/// An `IntOrString` as the value of a field error.
pub fn int_or_string(v: &IntOrString) -> BadValue {
    int_or_string_value(v)
}

/// An internal `{Type, RollingUpdate}` update strategy rendered with Go's
/// field names (internal types carry no JSON tags).
pub fn strategy_json(type_: Option<&str>, rolling_update: Option<String>) -> String {
    format!(
        "{{\"Type\":{},\"RollingUpdate\":{}}}",
        render::string(type_.unwrap_or_default()),
        rolling_update.unwrap_or_else(|| "null".to_owned())
    )
}

/// The replica counters of a ReplicaSet or ReplicationController status.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicaCounts {
    /// `replicas`.
    pub replicas: i32,
    /// `fullyLabeledReplicas`.
    pub fully_labeled: Option<i32>,
    /// `readyReplicas`.
    pub ready: Option<i32>,
    /// `availableReplicas`.
    pub available: Option<i32>,
    /// `terminatingReplicas` (ReplicaSets only).
    pub terminating: Option<i32>,
    /// `observedGeneration`.
    pub observed_generation: Option<i64>,
}

/// `ValidateReplicaSetStatus` / `ValidateReplicationControllerStatus`,
/// which check the same counters alike, at `path` (`status`).
pub fn validate_replica_counts(c: &ReplicaCounts, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    nonnegative(&mut errs, Some(c.replicas), &path.child("replicas"));
    for (name, value) in [
        ("fullyLabeledReplicas", c.fully_labeled),
        ("readyReplicas", c.ready),
        ("availableReplicas", c.available),
    ] {
        nonnegative(&mut errs, value, &path.child(name));
    }
    if let Some(t) = c.terminating {
        nonnegative(&mut errs, Some(t), &path.child("terminatingReplicas"));
    }
    errs.append(validate_nonnegative_field(
        c.observed_generation.unwrap_or(0),
        &path.child("observedGeneration"),
    ));
    for (name, value) in [
        ("fullyLabeledReplicas", c.fully_labeled),
        ("readyReplicas", c.ready),
        ("availableReplicas", c.available),
    ] {
        not_above(
            &mut errs,
            value,
            Some(c.replicas),
            &path.child(name),
            ABOVE_REPLICAS,
        );
    }
    not_above(
        &mut errs,
        c.available,
        c.ready,
        &path.child("availableReplicas"),
        "cannot be greater than readyReplicas",
    );
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_or_percent_values() {
        for (v, want) in [
            (IntOrString::Int(3), 3),
            (IntOrString::String("25%".into()), 25),
            (IntOrString::String("0%".into()), 0),
            (IntOrString::String("7".into()), 7),
            (IntOrString::String("abc".into()), 0),
        ] {
            assert_eq!(int_or_percent_value(&v), want, "{v:?}");
        }
    }

    #[test]
    fn collision_count_may_not_drop() {
        assert!(validate_collision_count(Some(2), Some(1)).is_empty());
        assert!(validate_collision_count(None, None).is_empty());
        assert!(validate_collision_count(Some(1), None).is_empty());
        assert_eq!(
            validate_collision_count(Some(0), Some(1)).to_string(),
            "status.collisionCount: Invalid value: 0: cannot be decremented"
        );
        assert_eq!(
            validate_collision_count(None, Some(1)).to_string(),
            "status.collisionCount: Invalid value: 0: cannot be decremented"
        );
    }
}
