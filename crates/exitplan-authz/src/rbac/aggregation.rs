//! ClusterRole aggregation (upstream's `pkg/controller/clusterroleaggregation`):
//! a ClusterRole with an aggregationRule gets the union of the rules of the
//! ClusterRoles its label selectors match. The server runs [`aggregate`]
//! whenever ClusterRoles change and writes back the roles it returns.

use exitplan_api::selector::{SelectorError, as_selector};
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};

use crate::rbac::rule::rules_equal;

/// The rules `target` aggregates from `all` (`syncClusterRole`): for each
/// selector in order, the matching roles other than `target` in name order,
/// each of their rules not already gathered. `Ok(None)` when `target` has
/// no aggregationRule; an invalid selector is an error (the role is left
/// as it is).
pub fn aggregated_rules(
    target: &ClusterRole,
    all: &[ClusterRole],
) -> Result<Option<Vec<PolicyRule>>, SelectorError> {
    let Some(rule) = &target.aggregation_rule else {
        return Ok(None);
    };
    let name = target.metadata.name.as_deref().unwrap_or_default();
    let mut sorted: Vec<&ClusterRole> = all.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut rules: Vec<PolicyRule> = Vec::new();
    for selector in rule.cluster_role_selectors.as_deref().unwrap_or_default() {
        let selector = as_selector(Some(selector))?;
        for role in &sorted {
            if role.metadata.name.as_deref().unwrap_or_default() == name
                || !selector.matches(role.metadata.labels.as_ref())
            {
                continue;
            }
            for r in role.rules.as_deref().unwrap_or_default() {
                if !rules.iter().any(|have| rules_equal(have, r)) {
                    rules.push(r.clone());
                }
            }
        }
    }
    Ok(Some(rules))
}

/// Whether two rule lists are equal as `equality.Semantic` sees them.
fn same_rules(a: &[PolicyRule], b: &[PolicyRule]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| rules_equal(x, y))
}

/// Aggregates every ClusterRole with an aggregationRule until nothing
/// changes (roles may aggregate aggregated roles, as `admin` gathers `edit`
/// which gathers `view`), visiting them in name order as the controller's
/// queue would converge. Returns the roles whose rules changed, by name,
/// with their new rules; roles with an invalid selector are left out.
pub fn aggregate(cluster_roles: &[ClusterRole]) -> Vec<(String, Vec<PolicyRule>)> {
    let mut roles: Vec<ClusterRole> = cluster_roles.to_vec();
    roles.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let aggregating: Vec<usize> = (0..roles.len())
        .filter(|&i| roles[i].aggregation_rule.is_some())
        .collect();
    // Each pass settles at least one more level of nesting; a cycle settles
    // too (a role never gathers its own rules), so this bound is generous.
    for _ in 0..=aggregating.len() {
        let mut changed = false;
        for &i in &aggregating {
            let Ok(Some(new)) = aggregated_rules(&roles[i], &roles) else {
                continue;
            };
            if !same_rules(&new, rule_list_of(&roles[i])) {
                roles[i].rules = Some(new);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = Vec::new();
    for role in roles.iter().filter(|r| r.aggregation_rule.is_some()) {
        let name = role.metadata.name.clone().unwrap_or_default();
        let before = cluster_roles
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name.as_str()))
            .map(rule_list_of)
            .unwrap_or_default();
        let after = rule_list_of(role);
        if !same_rules(before, after) {
            out.push((name, after.to_vec()));
        }
    }
    out
}

fn rule_list_of(role: &ClusterRole) -> &[PolicyRule] {
    role.rules.as_deref().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::rbac::v1::AggregationRule;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
    use std::collections::BTreeMap;

    fn rule(verb: &str, resource: &str) -> PolicyRule {
        PolicyRule {
            verbs: vec![verb.into()],
            resources: Some(vec![resource.into()]),
            ..PolicyRule::default()
        }
    }
    fn hammer() -> Vec<PolicyRule> {
        vec![rule("hammer", "nails"), rule("hammer", "wedges")]
    }
    fn chisel() -> Vec<PolicyRule> {
        vec![rule("chisel", "mortises")]
    }
    fn saw() -> Vec<PolicyRule> {
        vec![rule("saw", "boards")]
    }
    fn role(name: &str, foo: &str, rules: Vec<PolicyRule>) -> ClusterRole {
        ClusterRole {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(BTreeMap::from([("foo".to_owned(), foo.to_owned())])),
                ..ObjectMeta::default()
            },
            rules: Some(rules),
            aggregation_rule: None,
        }
    }
    fn combined(selectors: &[&str], rules: Vec<PolicyRule>) -> ClusterRole {
        ClusterRole {
            metadata: ObjectMeta {
                name: Some("combined".into()),
                ..ObjectMeta::default()
            },
            rules: Some(rules),
            aggregation_rule: Some(AggregationRule {
                cluster_role_selectors: Some(
                    selectors
                        .iter()
                        .map(|v| LabelSelector {
                            match_labels: Some(BTreeMap::from([(
                                "foo".to_owned(),
                                (*v).to_owned(),
                            )])),
                            match_expressions: None,
                        })
                        .collect(),
                ),
            }),
        }
    }

    /// Upstream's `TestSyncClusterRole`.
    #[test]
    fn sync_cluster_role() {
        // (name, starting roles, new rules of "combined" or None for no write)
        type Case = (&'static str, Vec<ClusterRole>, Option<Vec<PolicyRule>>);
        let cases: Vec<Case> = vec![
            (
                "remove dead rules",
                vec![role("hammer", "bar", hammer()), combined(&["bar"], saw())],
                Some(hammer()),
            ),
            (
                "strip rules",
                vec![
                    role("hammer", "not-bar", hammer()),
                    combined(&["bar"], hammer()),
                ],
                Some(vec![]),
            ),
            (
                "select properly and put in order",
                vec![
                    role("hammer", "bar", hammer()),
                    role("chisel", "bar", chisel()),
                    role("saw", "not-bar", saw()),
                    combined(&["bar"], vec![]),
                ],
                Some([chisel(), hammer()].concat()),
            ),
            (
                "select properly with multiple selectors",
                vec![
                    role("hammer", "bar", hammer()),
                    role("chisel", "bar", chisel()),
                    role("saw", "not-bar", saw()),
                    combined(&["bar", "not-bar"], vec![]),
                ],
                Some([chisel(), hammer(), saw()].concat()),
            ),
            (
                "select properly remove duplicates",
                vec![
                    role("hammer", "bar", hammer()),
                    role("chisel", "bar", chisel()),
                    role("saw", "bar", saw()),
                    role("other-saw", "not-bar", saw()),
                    combined(&["bar", "not-bar"], vec![]),
                ],
                Some([chisel(), hammer(), saw()].concat()),
            ),
            (
                "no diff skip",
                vec![
                    role("hammer", "bar", hammer()),
                    combined(&["bar"], hammer()),
                ],
                None,
            ),
        ];
        for (name, roles, want) in cases {
            let got = aggregate(&roles);
            match want {
                None => assert!(got.is_empty(), "{name}: {got:?}"),
                Some(rules) => assert_eq!(got, vec![("combined".to_owned(), rules)], "{name}"),
            }
        }
    }

    #[test]
    fn absent_rules_equal_no_aggregated_rules() {
        let mut c = combined(&["bar"], vec![]);
        c.rules = None;
        assert!(aggregate(&[c.clone(), role("x", "other", saw())]).is_empty());
        assert_eq!(aggregated_rules(&c, &[]), Ok(Some(vec![])));
        assert_eq!(aggregated_rules(&role("x", "bar", saw()), &[]), Ok(None));
    }

    #[test]
    fn invalid_selector_leaves_the_role_alone() {
        let mut c = combined(&["bar"], vec![]);
        if let Some(sel) = c
            .aggregation_rule
            .as_mut()
            .and_then(|a| a.cluster_role_selectors.as_mut())
        {
            sel[0].match_labels = Some(BTreeMap::from([("bad key!".to_owned(), "v".to_owned())]));
        }
        assert!(aggregated_rules(&c, &[role("hammer", "bar", hammer())]).is_err());
        assert!(aggregate(&[c, role("hammer", "bar", hammer())]).is_empty());
    }

    #[test]
    fn nested_aggregation_converges() {
        // outer gathers middle (labelled) which gathers leaf.
        let mut leaf = role("leaf", "leaf", saw());
        leaf.metadata.labels = Some(BTreeMap::from([(
            "to-middle".to_owned(),
            "true".to_owned(),
        )]));
        let sel = |k: &str| AggregationRule {
            cluster_role_selectors: Some(vec![LabelSelector {
                match_labels: Some(BTreeMap::from([(k.to_owned(), "true".to_owned())])),
                match_expressions: None,
            }]),
        };
        let mut middle = role("b-middle", "", vec![]);
        middle.metadata.labels = Some(BTreeMap::from([("to-outer".to_owned(), "true".to_owned())]));
        middle.aggregation_rule = Some(sel("to-middle"));
        let mut outer = role("a-outer", "", vec![]);
        outer.aggregation_rule = Some(sel("to-outer"));
        let got = aggregate(&[outer, middle, leaf]);
        assert_eq!(
            got,
            vec![
                ("a-outer".to_owned(), saw()),
                ("b-middle".to_owned(), saw())
            ]
        );
    }
}
