//! Where a pod may run: node and pod affinity (`validateAffinity`),
//! tolerations (`ValidateTolerations`), topology spread constraints,
//! scheduling and readiness gates.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm,
    PodReadinessGate, PodSchedulingGate, Toleration, TopologySpreadConstraint,
    WeightedPodAffinityTerm,
};

use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::selector::validate_label_selector;

fn validate_label_name(key: &str, path: &Path) -> ErrorList {
    formats::validate_qualified_name(path, key)
}

/// `ValidateNodeSelectorRequirement`.
fn validate_node_selector_requirement(
    rq: &NodeSelectorRequirement,
    check_values: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let n = rq.values.as_ref().map_or(0, Vec::len);
    match rq.operator.as_str() {
        "In" | "NotIn" => {
            if n == 0 {
                errs.push(Error::required(
                    &path.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if n > 0 {
                errs.push(Error::forbidden(
                    &path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        "Gt" | "Lt" => {
            if n != 1 {
                errs.push(Error::required(
                    &path.child("values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                ));
            }
        }
        other => errs.push(Error::invalid(
            &path.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    errs.append(validate_label_name(&rq.key, &path.child("key")));
    if check_values {
        for (i, v) in rq.values.iter().flatten().enumerate() {
            for msg in formats::is_label_value(v) {
                errs.push(Error::invalid(
                    &path.child("values").index(i),
                    v.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

/// `ValidateNodeFieldSelectorRequirement`.
fn validate_node_field_selector_requirement(
    rq: &NodeSelectorRequirement,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    match rq.operator.as_str() {
        "In" | "NotIn" => {
            if rq.values.as_ref().map_or(0, Vec::len) != 1 {
                errs.push(Error::required(
                    &path.child("values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                ));
            }
        }
        other => errs.push(Error::invalid(
            &path.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    if rq.key != "metadata.name" {
        errs.push(Error::invalid(
            &path.child("key"),
            rq.key.as_str(),
            "not a valid field selector key",
        ));
    } else {
        for (i, v) in rq.values.iter().flatten().enumerate() {
            for msg in formats::is_dns1123_subdomain(v) {
                errs.push(Error::invalid(
                    &path.child("values").index(i),
                    v.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

fn validate_node_selector_term(
    term: &NodeSelectorTerm,
    check_values: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    for (j, rq) in term.match_expressions.iter().flatten().enumerate() {
        errs.append(validate_node_selector_requirement(
            rq,
            check_values,
            &path.child("matchExpressions").index(j),
        ));
    }
    for (j, rq) in term.match_fields.iter().flatten().enumerate() {
        errs.append(validate_node_field_selector_requirement(
            rq,
            &path.child("matchFields").index(j),
        ));
    }
    errs
}

/// `ValidateNodeSelector`: at least one term, each valid.
pub fn validate_node_selector(ns: &NodeSelector, path: &Path) -> ErrorList {
    let terms_path = path.child("nodeSelectorTerms");
    if ns.node_selector_terms.is_empty() {
        return ErrorList(vec![Error::required(
            &terms_path,
            "must have at least one node selector term",
        )]);
    }
    let mut errs = ErrorList::new();
    for (i, t) in ns.node_selector_terms.iter().enumerate() {
        errs.append(validate_node_selector_term(t, true, &terms_path.index(i)));
    }
    errs
}

fn validate_weight(weight: i32, path: &Path) -> ErrorList {
    if weight <= 0 || weight > 100 {
        ErrorList(vec![Error::invalid(
            &path.child("weight"),
            weight,
            "must be in the range 1-100",
        )])
    } else {
        ErrorList::new()
    }
}

fn validate_pod_affinity_term(t: &PodAffinityTerm, allow_invalid: bool, path: &Path) -> ErrorList {
    let mut errs = validate_label_selector(
        t.label_selector.as_ref(),
        allow_invalid,
        &path.child("labelSelector"),
    );
    errs.append(validate_label_selector(
        t.namespace_selector.as_ref(),
        allow_invalid,
        &path.child("namespaceSelector"),
    ));
    for name in t.namespaces.iter().flatten() {
        for msg in formats::is_dns1123_label(name) {
            errs.push(Error::invalid(&path.child("namespace"), name.as_str(), msg));
        }
    }
    errs.append(validate_match_label_keys(t, path));
    if t.topology_key.is_empty() {
        errs.push(Error::required(
            &path.child("topologyKey"),
            "can not be empty",
        ));
    }
    errs.append(validate_label_name(
        &t.topology_key,
        &path.child("topologyKey"),
    ));
    errs
}

/// `validateMatchLabelKeysAndMismatchLabelKeys` (the key formats and the
/// overlap between the two lists).
fn validate_match_label_keys(t: &PodAffinityTerm, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let match_keys = t.match_label_keys.as_deref().unwrap_or_default();
    let mismatch_keys = t.mismatch_label_keys.as_deref().unwrap_or_default();
    if (!match_keys.is_empty() || !mismatch_keys.is_empty()) && t.label_selector.is_none() {
        errs.push(Error::forbidden(
            &path.child("labelSelector"),
            "must be specified when matchLabelKeys or mismatchLabelKeys is set",
        ));
    }
    for (i, k) in match_keys.iter().enumerate() {
        errs.append(validate_label_name(
            k,
            &path.child("matchLabelKeys").index(i),
        ));
    }
    for (i, k) in mismatch_keys.iter().enumerate() {
        errs.append(validate_label_name(
            k,
            &path.child("mismatchLabelKeys").index(i),
        ));
    }
    for (i, k) in match_keys.iter().enumerate() {
        if mismatch_keys.contains(k) {
            errs.push(Error::invalid(
                &path.child("matchLabelKeys").index(i),
                k.as_str(),
                "exists in both matchLabelKeys and mismatchLabelKeys",
            ));
        }
    }
    errs
}

fn validate_pod_affinity_terms(
    required: Option<&Vec<PodAffinityTerm>>,
    preferred: Option<&Vec<WeightedPodAffinityTerm>>,
    allow_invalid: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let rp = path.child("requiredDuringSchedulingIgnoredDuringExecution");
    for (i, t) in required.into_iter().flatten().enumerate() {
        errs.append(validate_pod_affinity_term(t, allow_invalid, &rp.index(i)));
    }
    let pp = path.child("preferredDuringSchedulingIgnoredDuringExecution");
    for (j, w) in preferred.into_iter().flatten().enumerate() {
        errs.append(validate_weight(w.weight, &pp.index(j)));
        errs.append(validate_pod_affinity_term(
            &w.pod_affinity_term,
            allow_invalid,
            &pp.index(j).child("podAffinityTerm"),
        ));
    }
    errs
}

/// `validateAffinity`.
pub fn validate_affinity(a: Option<&Affinity>, allow_invalid: bool, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(a) = a else {
        return errs;
    };
    if let Some(na) = &a.node_affinity {
        let p = path.child("nodeAffinity");
        if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
            errs.append(validate_node_selector(
                req,
                &p.child("requiredDuringSchedulingIgnoredDuringExecution"),
            ));
        }
        let pp = p.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in na
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
        {
            errs.append(validate_weight(t.weight, &pp.index(i)));
            errs.append(validate_node_selector_term(
                &t.preference,
                false,
                &pp.index(i).child("preference"),
            ));
        }
    }
    if let Some(pa) = &a.pod_affinity {
        errs.append(validate_pod_affinity_terms(
            pa.required_during_scheduling_ignored_during_execution
                .as_ref(),
            pa.preferred_during_scheduling_ignored_during_execution
                .as_ref(),
            allow_invalid,
            &path.child("podAffinity"),
        ));
    }
    if let Some(pa) = &a.pod_anti_affinity {
        errs.append(validate_pod_affinity_terms(
            pa.required_during_scheduling_ignored_during_execution
                .as_ref(),
            pa.preferred_during_scheduling_ignored_during_execution
                .as_ref(),
            allow_invalid,
            &path.child("podAntiAffinity"),
        ));
    }
    errs
}

/// `ValidateTolerations`.
pub fn validate_tolerations(tolerations: &[Toleration], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, t) in tolerations.iter().enumerate() {
        let p = path.index(i);
        let key = t.key.as_deref().unwrap_or_default();
        let op = t.operator.as_deref().unwrap_or_default();
        let effect = t.effect.as_deref().unwrap_or_default();
        let value = t.value.as_deref().unwrap_or_default();
        if !key.is_empty() {
            errs.append(validate_label_name(key, &p.child("key")));
        }
        if key.is_empty() && op != "Exists" {
            errs.push(Error::invalid(
                &p.child("operator"),
                op,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            errs.push(Error::invalid(
                &p.child("effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "Equal" | "" => {
                let msgs = formats::is_label_value(value);
                if !msgs.is_empty() {
                    errs.push(Error::invalid(&p.child("operator"), value, msgs.join(";")));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(Error::invalid(
                        &p.child("operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(Error::not_supported(
                &p.child("operator"),
                other,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errs.push(Error::not_supported(
                &p.child("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errs
}

/// `validateOnlyAddedTolerations`: existing tolerations stay (only their
/// `tolerationSeconds` may change), new ones are valid.
pub fn validate_only_added_tolerations(
    new: &[Toleration],
    old: &[Toleration],
    path: &Path,
) -> ErrorList {
    for o in old {
        let found = new.iter().any(|n| {
            let mut o = o.clone();
            o.toleration_seconds = n.toleration_seconds;
            &o == n
        });
        if !found {
            return ErrorList(vec![Error::forbidden(
                path,
                "existing toleration can not be modified except its tolerationSeconds",
            )]);
        }
    }
    validate_tolerations(new, path)
}

/// `validateTopologySpreadConstraints`.
pub fn validate_topology_spread(
    constraints: &[TopologySpreadConstraint],
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, c) in constraints.iter().enumerate() {
        let p = path.index(i);
        if c.max_skew <= 0 {
            errs.push(Error::invalid(
                &p.child("maxSkew"),
                c.max_skew,
                "must be greater than zero",
            ));
        }
        if c.topology_key.is_empty() {
            errs.push(Error::required(&p.child("topologyKey"), "can not be empty"));
        }
        let action = c.when_unsatisfiable.as_str();
        if action != "DoNotSchedule" && action != "ScheduleAnyway" {
            errs.push(Error::not_supported(
                &p.child("whenUnsatisfiable"),
                action,
                &["DoNotSchedule", "ScheduleAnyway"],
            ));
        }
        if constraints[i + 1..].iter().any(|r| {
            r.topology_key == c.topology_key && r.when_unsatisfiable == c.when_unsatisfiable
        }) {
            errs.push(Error::duplicate(
                &p.child("{topologyKey, whenUnsatisfiable}"),
                format!("{{{}, {}}}", c.topology_key, action),
            ));
        }
        if let Some(m) = c.min_domains {
            let mp = p.child("minDomains");
            if m <= 0 {
                errs.push(Error::invalid(&mp, m, "must be greater than zero"));
            }
            if action != "DoNotSchedule" {
                errs.push(Error::invalid(
                    &mp,
                    m,
                    format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        for (name, v) in [
            ("nodeAffinityPolicy", &c.node_affinity_policy),
            ("nodeTaintsPolicy", &c.node_taints_policy),
        ] {
            if let Some(v) = v.as_deref()
                && v != "Honor"
                && v != "Ignore"
            {
                errs.push(Error::not_supported(
                    &p.child(name),
                    v,
                    &["Honor", "Ignore"],
                ));
            }
        }
        let keys_path = p.child("matchLabelKeys");
        let keys = c.match_label_keys.as_deref().unwrap_or_default();
        if !keys.is_empty() && c.label_selector.is_none() {
            errs.push(Error::forbidden(
                &keys_path,
                "must not be specified when labelSelector is not set",
            ));
        }
        for (j, k) in keys.iter().enumerate() {
            errs.append(validate_label_name(k, &keys_path.index(j)));
        }
        errs.append(validate_label_selector(
            c.label_selector.as_ref(),
            false,
            &p.child("labelSelector"),
        ));
    }
    errs
}

/// `validateSchedulingGates`: qualified names, no duplicates.
pub fn validate_scheduling_gates(gates: &[PodSchedulingGate], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, g) in gates.iter().enumerate() {
        errs.append(
            formats::validate_qualified_name(&path.index(i), &g.name)
                .with_origin("format=qualified-name"),
        );
        if !seen.insert(g.name.as_str()) {
            errs.push(Error::duplicate(&path.index(i), g.name.as_str()));
        }
    }
    errs
}

/// `validateReadinessGates`.
pub fn validate_readiness_gates(gates: &[PodReadinessGate], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, g) in gates.iter().enumerate() {
        errs.append(
            formats::validate_qualified_name(
                &path.index(i).child("conditionType"),
                &g.condition_type,
            )
            .with_origin("format=qualified-name"),
        );
    }
    errs
}
