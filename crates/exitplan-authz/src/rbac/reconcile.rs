//! Reconciling the stored default ClusterRoles and ClusterRoleBindings with
//! [`crate::rbac::bootstrap`] at every start-up, as kube-apiserver's
//! `rbac/bootstrap-roles` hook does (`pkg/registry/rbac/reconciliation`):
//! missing objects are created; existing ones gain the expected labels,
//! annotations, rules, aggregation selectors and subjects they lack
//! (existing values win; nothing is removed unless asked); a binding whose
//! roleRef differs is recreated; objects annotated
//! `rbac.authorization.kubernetes.io/autoupdate: "false"` are protected.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::rbac::bootstrap::AUTOUPDATE_ANNOTATION;
use crate::rbac::escalation::covers;

/// What the server must do to reconcile one object (`ReconcileOperation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Nothing: the stored object already has everything expected.
    None,
    /// Create the object (it is missing).
    Create,
    /// Update the stored object to the reconciled one.
    Update,
    /// Delete the stored binding and create the reconciled one (its roleRef,
    /// which is immutable, differs).
    Recreate,
}

/// The outcome of reconciling one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconciled<T> {
    /// The object to write (when `operation` is not `None`).
    pub object: T,
    /// What to do with it.
    pub operation: Operation,
    /// The stored object opted out (`autoupdate: "false"`): do not write it
    /// (upstream logs that it skipped a reconcile-protected object).
    pub protected: bool,
}

/// `merge(expected, existing)`: existing values win; absent only when both are.
fn merge(
    expected: &Option<BTreeMap<String, String>>,
    existing: &Option<BTreeMap<String, String>>,
) -> Option<BTreeMap<String, String>> {
    if expected.is_none() && existing.is_none() {
        return None;
    }
    let mut out = expected.clone().unwrap_or_default();
    out.extend(existing.clone().unwrap_or_default());
    Some(out)
}

fn is_protected(annotations: &Option<BTreeMap<String, String>>) -> bool {
    annotations
        .as_ref()
        .and_then(|a| a.get(AUTOUPDATE_ANNOTATION))
        .is_some_and(|v| v == "false")
}

/// The expected selectors `owner` lacks (`aggregationRuleCovers`).
fn missing_selectors(
    owner: Option<&AggregationRule>,
    servant: Option<&AggregationRule>,
) -> Vec<LabelSelector> {
    let selectors = |r: Option<&AggregationRule>| {
        r.and_then(|r| r.cluster_role_selectors.clone())
            .unwrap_or_default()
    };
    let Some(servant) = servant else {
        return Vec::new();
    };
    let Some(owner) = owner else {
        return selectors(Some(servant));
    };
    let have = selectors(Some(owner));
    selectors(Some(servant))
        .into_iter()
        .filter(|s| !have.iter().any(|h| same_selector(h, s)))
        .collect()
}

/// Selector equality as `equality.Semantic` sees it (absent == empty).
fn same_selector(a: &LabelSelector, b: &LabelSelector) -> bool {
    a.match_labels.clone().unwrap_or_default() == b.match_labels.clone().unwrap_or_default()
        && a.match_expressions.clone().unwrap_or_default()
            == b.match_expressions.clone().unwrap_or_default()
}

/// Reconciles a stored ClusterRole (`None`: missing) with the expected one
/// (`computeReconciledRole`). The start-up hook passes
/// `remove_extra_permissions: false` (add what is missing, keep the rest).
pub fn reconcile_cluster_role(
    existing: Option<&ClusterRole>,
    expected: &ClusterRole,
    remove_extra_permissions: bool,
) -> Reconciled<ClusterRole> {
    let Some(existing) = existing else {
        return Reconciled {
            object: expected.clone(),
            operation: Operation::Create,
            protected: false,
        };
    };
    let mut op = Operation::None;
    let mut role = existing.clone();
    role.metadata.annotations = merge(
        &expected.metadata.annotations,
        &existing.metadata.annotations,
    );
    if role.metadata.annotations != existing.metadata.annotations {
        op = Operation::Update;
    }
    role.metadata.labels = merge(&expected.metadata.labels, &existing.metadata.labels);
    if role.metadata.labels != existing.metadata.labels {
        op = Operation::Update;
    }

    let expected_rules = expected.rules.as_deref().unwrap_or_default();
    let existing_rules = existing.rules.as_deref().unwrap_or_default();
    // Extra permissions are not computed when both roles are aggregated.
    let extra = if expected.aggregation_rule.is_none() || existing.aggregation_rule.is_none() {
        covers(expected_rules, existing_rules).1
    } else {
        Vec::new()
    };
    let missing = covers(existing_rules, expected_rules).1;
    if !remove_extra_permissions && !missing.is_empty() {
        role.rules.get_or_insert_with(Vec::new).extend(missing);
        op = Operation::Update;
    } else if remove_extra_permissions && (!missing.is_empty() || !extra.is_empty()) {
        role.rules = expected.rules.clone();
        op = Operation::Update;
    }

    let expected_agg = expected.aggregation_rule.as_ref();
    let existing_agg = existing.aggregation_rule.as_ref();
    let extra_selectors = missing_selectors(expected_agg, existing_agg);
    let missing = missing_selectors(existing_agg, expected_agg);
    if expected_agg.is_none() && existing_agg.is_some() {
        role.aggregation_rule = None;
        op = Operation::Update;
    } else if !remove_extra_permissions && !missing.is_empty() {
        role.aggregation_rule
            .get_or_insert_with(AggregationRule::default)
            .cluster_role_selectors
            .get_or_insert_with(Vec::new)
            .extend(missing);
        op = Operation::Update;
    } else if remove_extra_permissions && (!missing.is_empty() || !extra_selectors.is_empty()) {
        role.aggregation_rule = expected.aggregation_rule.clone();
        op = Operation::Update;
    }

    Reconciled {
        object: role,
        operation: op,
        protected: is_protected(&existing.metadata.annotations),
    }
}

fn norm(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or_default()
}

fn same_role_ref(a: &RoleRef, b: &RoleRef) -> bool {
    norm(&a.api_group) == norm(&b.api_group) && a.kind == b.kind && a.name == b.name
}

fn same_subject(a: &Subject, b: &Subject) -> bool {
    a.kind == b.kind
        && a.name == b.name
        && norm(&a.api_group) == norm(&b.api_group)
        && norm(&a.namespace) == norm(&b.namespace)
}

/// The subjects of `a` not in `b`, without duplicates (`diffSubjectLists`).
fn subjects_not_in(a: &[Subject], b: &[Subject]) -> Vec<Subject> {
    let mut out: Vec<Subject> = Vec::new();
    for s in a {
        if !b.iter().any(|x| same_subject(x, s)) && !out.iter().any(|x| same_subject(x, s)) {
            out.push(s.clone());
        }
    }
    out
}

/// Reconciles a stored ClusterRoleBinding (`None`: missing) with the
/// expected one (`computeReconciledRoleBinding`). The start-up hook passes
/// `remove_extra_subjects: false`.
pub fn reconcile_cluster_role_binding(
    existing: Option<&ClusterRoleBinding>,
    expected: &ClusterRoleBinding,
    remove_extra_subjects: bool,
) -> Reconciled<ClusterRoleBinding> {
    let Some(existing) = existing else {
        return Reconciled {
            object: expected.clone(),
            operation: Operation::Create,
            protected: false,
        };
    };
    let protected = is_protected(&existing.metadata.annotations);
    if !same_role_ref(&expected.role_ref, &existing.role_ref) {
        return Reconciled {
            object: expected.clone(),
            operation: Operation::Recreate,
            protected,
        };
    }
    let mut op = Operation::None;
    let mut binding = existing.clone();
    binding.metadata.annotations = merge(
        &expected.metadata.annotations,
        &existing.metadata.annotations,
    );
    if binding.metadata.annotations != existing.metadata.annotations {
        op = Operation::Update;
    }
    binding.metadata.labels = merge(&expected.metadata.labels, &existing.metadata.labels);
    if binding.metadata.labels != existing.metadata.labels {
        op = Operation::Update;
    }
    let expected_subjects = expected.subjects.as_deref().unwrap_or_default();
    let existing_subjects = existing.subjects.as_deref().unwrap_or_default();
    let missing = subjects_not_in(expected_subjects, existing_subjects);
    let extra = subjects_not_in(existing_subjects, expected_subjects);
    if !remove_extra_subjects && !missing.is_empty() {
        binding
            .subjects
            .get_or_insert_with(Vec::new)
            .extend(missing);
        op = Operation::Update;
    } else if remove_extra_subjects && (!missing.is_empty() || !extra.is_empty()) {
        binding.subjects = expected.subjects.clone();
        op = Operation::Update;
    }
    Reconciled {
        object: binding,
        operation: op,
        protected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::rbac::v1::PolicyRule;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn rules(resources: &[&str]) -> Vec<PolicyRule> {
        resources
            .iter()
            .map(|r| PolicyRule {
                api_groups: Some(vec![String::new()]),
                verbs: vec!["get".into()],
                resources: Some(vec![(*r).to_owned()]),
                ..PolicyRule::default()
            })
            .collect()
    }

    fn ss(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        (!pairs.is_empty()).then(|| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        })
    }

    fn role(r: &[&str], labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> ClusterRole {
        ClusterRole {
            rules: Some(rules(r)),
            metadata: ObjectMeta {
                labels: ss(labels),
                annotations: ss(annotations),
                ..ObjectMeta::default()
            },
            aggregation_rule: None,
        }
    }

    /// Upstream's `TestComputeReconciledRoleRules`: (name, expected,
    /// actual, remove extra, reconciled role or None when nothing to do).
    #[test]
    fn reconciled_role_rules() {
        type Case = (
            &'static str,
            ClusterRole,
            ClusterRole,
            bool,
            Option<ClusterRole>,
        );
        let cases: Vec<Case> = vec![
            (
                "empty",
                role(&[], &[], &[]),
                role(&[], &[], &[]),
                true,
                None,
            ),
            (
                "match without union",
                role(&["a"], &[], &[]),
                role(&["a"], &[], &[]),
                true,
                None,
            ),
            (
                "match with union",
                role(&["a"], &[], &[]),
                role(&["a"], &[], &[]),
                false,
                None,
            ),
            (
                "different rules without union",
                role(&["a"], &[], &[]),
                role(&["b"], &[], &[]),
                true,
                Some(role(&["a"], &[], &[])),
            ),
            (
                "different rules with union",
                role(&["a"], &[], &[]),
                role(&["b"], &[], &[]),
                false,
                Some(role(&["b", "a"], &[], &[])),
            ),
            (
                "match labels with union",
                role(&["a"], &[("1", "a")], &[]),
                role(&["a"], &[("1", "a")], &[]),
                false,
                None,
            ),
            (
                "different labels without union",
                role(&["a"], &[("1", "a")], &[]),
                role(&["a"], &[("2", "b")], &[]),
                true,
                Some(role(&["a"], &[("1", "a"), ("2", "b")], &[])),
            ),
            (
                "conflicting labels and rules without union",
                role(&["a"], &[("1", "a")], &[]),
                role(&["b"], &[("1", "b")], &[]),
                true,
                Some(role(&["a"], &[("1", "b")], &[])),
            ),
            (
                "conflicting labels and rules with union",
                role(&["a"], &[("1", "a")], &[]),
                role(&["b"], &[("1", "b")], &[]),
                false,
                Some(role(&["b", "a"], &[("1", "b")], &[])),
            ),
            (
                "different annotations with union",
                role(&["a"], &[], &[("1", "a")]),
                role(&["a"], &[], &[("2", "b")]),
                false,
                Some(role(&["a"], &[], &[("1", "a"), ("2", "b")])),
            ),
            (
                "conflicting labels/annotations and rules without union",
                role(&["a"], &[("3", "d")], &[("1", "a")]),
                role(&["b"], &[("4", "e")], &[("1", "b")]),
                true,
                Some(role(&["a"], &[("3", "d"), ("4", "e")], &[("1", "b")])),
            ),
            (
                "complex labels/annotations and rules with union",
                role(
                    &["pods", "nodes", "secrets"],
                    &[("env", "prod"), ("color", "blue"), ("manager", "randy")],
                    &[("description", "fancy"), ("system", "true"), ("up", "true")],
                ),
                role(
                    &["nodes", "images", "projects"],
                    &[("color", "red"), ("team", "pm")],
                    &[
                        ("system", "false"),
                        ("owner", "admin"),
                        ("vip", "yes"),
                        ("rate", "down"),
                    ],
                ),
                false,
                Some(role(
                    &["nodes", "images", "projects", "pods", "secrets"],
                    &[
                        ("env", "prod"),
                        ("manager", "randy"),
                        ("color", "red"),
                        ("team", "pm"),
                    ],
                    &[
                        ("description", "fancy"),
                        ("system", "false"),
                        ("owner", "admin"),
                        ("vip", "yes"),
                        ("rate", "down"),
                        ("up", "true"),
                    ],
                )),
            ),
        ];
        for (name, expected, actual, remove, want) in cases {
            let got = reconcile_cluster_role(Some(&actual), &expected, remove);
            match want {
                None => assert_eq!(got.operation, Operation::None, "{name}"),
                Some(want) => {
                    assert_eq!(got.operation, Operation::Update, "{name}");
                    assert_eq!(got.object, want, "{name}");
                }
            }
        }
    }

    fn aggregated(selectors: Option<&[&str]>) -> ClusterRole {
        ClusterRole {
            aggregation_rule: selectors.map(|s| AggregationRule {
                cluster_role_selectors: (!s.is_empty()).then(|| {
                    s.iter()
                        .map(|kv| {
                            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                            LabelSelector {
                                match_labels: ss(&[(k, v)]),
                                match_expressions: None,
                            }
                        })
                        .collect()
                }),
            }),
            ..ClusterRole::default()
        }
    }

    /// Upstream's `TestComputeReconciledRoleAggregationRules`.
    #[test]
    fn reconciled_role_aggregation_rules() {
        let mut unexpected_with_rules = aggregated(Some(&["alpha=bravo"]));
        unexpected_with_rules.rules = Some(rules(&["deployments"]));
        let plain = |r: &[&str]| ClusterRole {
            rules: Some(rules(r)),
            ..ClusterRole::default()
        };
        type Case = (
            &'static str,
            ClusterRole,
            ClusterRole,
            bool,
            Option<ClusterRole>,
        );
        let cases: Vec<Case> = vec![
            ("empty", aggregated(Some(&[])), aggregated(None), true, None),
            (
                "empty-2",
                aggregated(Some(&[])),
                aggregated(Some(&[])),
                true,
                None,
            ),
            (
                "match without union",
                aggregated(Some(&["foo=bar"])),
                aggregated(Some(&["foo=bar"])),
                true,
                None,
            ),
            (
                "match with union",
                aggregated(Some(&["foo=bar"])),
                aggregated(Some(&["foo=bar"])),
                false,
                None,
            ),
            (
                "different rules without union",
                aggregated(Some(&["foo=bar"])),
                aggregated(Some(&["alpha=bravo"])),
                true,
                Some(aggregated(Some(&["foo=bar"]))),
            ),
            (
                "different rules with union",
                aggregated(Some(&["foo=bar"])),
                aggregated(Some(&["alpha=bravo"])),
                false,
                Some(aggregated(Some(&["alpha=bravo", "foo=bar"]))),
            ),
            (
                "unexpected aggregation",
                plain(&["pods", "nodes", "secrets"]),
                aggregated(Some(&["alpha=bravo"])),
                false,
                Some(plain(&["pods", "nodes", "secrets"])),
            ),
            (
                "unexpected aggregation with differing permissions",
                plain(&["pods", "nodes", "secrets"]),
                unexpected_with_rules,
                false,
                Some(plain(&["deployments", "pods", "nodes", "secrets"])),
            ),
        ];
        for (name, expected, actual, remove, want) in cases {
            let got = reconcile_cluster_role(Some(&actual), &expected, remove);
            match want {
                None => assert_eq!(got.operation, Operation::None, "{name}"),
                Some(want) => {
                    assert_eq!(got.operation, Operation::Update, "{name}");
                    assert_eq!(got.object, want, "{name}");
                }
            }
        }
    }

    #[test]
    fn missing_objects_are_created_and_protected_ones_flagged() {
        let expected = role(&["a"], &[], &[]);
        let got = reconcile_cluster_role(None, &expected, false);
        assert_eq!((got.operation, got.protected), (Operation::Create, false));
        let stored = role(&["b"], &[], &[(AUTOUPDATE_ANNOTATION, "false")]);
        let got = reconcile_cluster_role(Some(&stored), &expected, false);
        assert_eq!((got.operation, got.protected), (Operation::Update, true));
    }

    fn crb(
        role: &str,
        subjects: &[(&str, &str)],
        annotations: &[(&str, &str)],
    ) -> ClusterRoleBinding {
        ClusterRoleBinding {
            metadata: ObjectMeta {
                name: Some("b".into()),
                annotations: ss(annotations),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: "ClusterRole".into(),
                name: role.into(),
            },
            subjects: Some(
                subjects
                    .iter()
                    .map(|(kind, name)| Subject {
                        kind: (*kind).into(),
                        name: (*name).into(),
                        api_group: Some("rbac.authorization.k8s.io".into()),
                        namespace: None,
                    })
                    .collect(),
            ),
        }
    }

    #[test]
    fn reconciled_bindings() {
        let expected = crb("r", &[("Group", "g1"), ("User", "u")], &[("a", "1")]);
        // Same: nothing to do.
        let got = reconcile_cluster_role_binding(Some(&expected), &expected, false);
        assert_eq!(got.operation, Operation::None);
        // Missing subject and annotation: added, extra subject kept.
        let stored = crb("r", &[("Group", "g2"), ("User", "u")], &[]);
        let got = reconcile_cluster_role_binding(Some(&stored), &expected, false);
        assert_eq!(got.operation, Operation::Update);
        assert_eq!(
            got.object,
            crb(
                "r",
                &[("Group", "g2"), ("User", "u"), ("Group", "g1")],
                &[("a", "1")]
            )
        );
        // Removing extras: the expected subjects.
        let got = reconcile_cluster_role_binding(Some(&stored), &expected, true);
        assert_eq!(got.object.subjects, expected.subjects);
        // A different roleRef: recreate as expected.
        let other = crb(
            "other",
            &[("User", "u")],
            &[(AUTOUPDATE_ANNOTATION, "false")],
        );
        let got = reconcile_cluster_role_binding(Some(&other), &expected, false);
        assert_eq!((got.operation, got.protected), (Operation::Recreate, true));
        assert_eq!(got.object, expected);
        let got = reconcile_cluster_role_binding(None, &expected, false);
        assert_eq!(got.operation, Operation::Create);
    }

    #[test]
    fn bootstrap_objects_reconcile_to_nothing_once_stored() {
        use crate::rbac::aggregation::aggregate;
        use crate::rbac::bootstrap::{cluster_role_bindings, cluster_roles};
        let mut stored = cluster_roles();
        for (name, rules) in aggregate(&stored) {
            if let Some(r) = stored
                .iter_mut()
                .find(|r| r.metadata.name.as_deref() == Some(name.as_str()))
            {
                r.rules = Some(rules);
            }
        }
        for (expected, existing) in cluster_roles().iter().zip(&stored) {
            let got = reconcile_cluster_role(Some(existing), expected, false);
            assert_eq!(
                got.operation,
                Operation::None,
                "{:?}",
                expected.metadata.name
            );
        }
        for b in cluster_role_bindings() {
            assert_eq!(
                reconcile_cluster_role_binding(Some(&b), &b, false).operation,
                Operation::None
            );
        }
    }
}
