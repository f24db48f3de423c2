//! Invariants of the RBAC authorizer and of `Covers`, on generated rules
//! and requests over small alphabets (so wildcards, subresources and
//! prefixes collide often).

use exitplan_authz::rbac::Policy;
use exitplan_authz::rbac::escalation::covers;
use exitplan_authz::rbac::rule::rules_allow;
use exitplan_authz::{Attributes, UserInfo};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use proptest::prelude::*;

fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(items).prop_map(str::to_owned)
}

fn some_of(items: &'static [&'static str], max: usize) -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(pick(items), 0..=max)
}

fn opt_list(
    items: &'static [&'static str],
    max: usize,
) -> impl Strategy<Value = Option<Vec<String>>> {
    proptest::option::of(some_of(items, max))
}

const VERBS: &[&str] = &["get", "list", "watch", "*"];
const GROUPS: &[&str] = &["", "apps", "*"];
const RESOURCES: &[&str] = &[
    "pods",
    "pods/status",
    "pods/*",
    "*/status",
    "*",
    "deployments",
    "deployments/scale",
];
const NAMES: &[&str] = &["a", "b"];
const URLS: &[&str] = &["/api", "/api/*", "/apis", "/a*", "*", "/healthz"];

fn policy_rule() -> impl Strategy<Value = PolicyRule> {
    (
        some_of(VERBS, 2),
        opt_list(GROUPS, 2),
        opt_list(RESOURCES, 2),
        opt_list(NAMES, 2),
        opt_list(URLS, 2),
    )
        .prop_map(
            |(verbs, api_groups, resources, resource_names, non_resource_urls)| PolicyRule {
                verbs,
                api_groups,
                resources,
                resource_names,
                non_resource_urls,
            },
        )
}

fn rules() -> impl Strategy<Value = Vec<PolicyRule>> {
    proptest::collection::vec(policy_rule(), 0..4)
}

/// A rule of the shape validation accepts and upstream's `Covers` is
/// built for: a resource rule, or a non-resource rule without
/// resourceNames (`Covers` demands the owner have no resourceNames for a
/// broken-down URL rule, so a URL rule with resourceNames does not cover
/// itself upstream either: see `url_rule_with_resource_names_does_not_cover_itself`).
fn shaped_rule() -> impl Strategy<Value = PolicyRule> {
    prop_oneof![
        (
            some_of(VERBS, 2),
            opt_list(GROUPS, 2),
            opt_list(RESOURCES, 2),
            opt_list(NAMES, 2)
        )
            .prop_map(
                |(verbs, api_groups, resources, resource_names)| PolicyRule {
                    verbs,
                    api_groups,
                    resources,
                    resource_names,
                    non_resource_urls: None,
                }
            ),
        (some_of(VERBS, 2), opt_list(URLS, 2)).prop_map(|(verbs, non_resource_urls)| PolicyRule {
            verbs,
            non_resource_urls,
            ..PolicyRule::default()
        }),
    ]
}

fn shaped_rules() -> impl Strategy<Value = Vec<PolicyRule>> {
    proptest::collection::vec(shaped_rule(), 0..4)
}

/// Rules covered by `rules`: some of their broken-down rules, each
/// possibly narrowed (a wildcard replaced by a value it matches, a name
/// added, a URL prefix extended), chosen by the bits of `seed`.
fn narrow(rules: &[PolicyRule], mut seed: u64) -> Vec<PolicyRule> {
    let mut bit = || {
        let b = seed & 1 == 1;
        seed = seed.rotate_right(1) ^ 0x9e37_79b9_7f4a_7c15;
        b
    };
    let mut out = Vec::new();
    for rule in rules {
        for mut sub in exitplan_authz::rbac::escalation::breakdown_rule(rule) {
            if !bit() {
                continue;
            }
            if sub.verbs == ["*"] && bit() {
                sub.verbs = vec!["list".into()];
            }
            if let Some(g) = sub.api_groups.as_mut().filter(|g| g[0] == "*")
                && bit()
            {
                g[0] = "apps".into();
            }
            if let Some(r) = sub.resources.as_mut() {
                if r[0] == "*" && bit() {
                    r[0] = if bit() {
                        "pods".into()
                    } else {
                        "pods/status".into()
                    };
                } else if r[0] == "*/status" && bit() {
                    r[0] = "deployments/status".into();
                }
                if sub.resource_names.is_none() && bit() {
                    sub.resource_names = Some(vec!["a".into()]);
                }
            }
            if let Some(u) = sub.non_resource_urls.as_mut()
                && u[0].ends_with('*')
                && bit()
            {
                u[0] = format!("{}x", u[0].trim_end_matches('*'));
            }
            out.push(sub);
        }
    }
    out
}

#[test]
fn url_rule_with_resource_names_does_not_cover_itself() {
    let rule = PolicyRule {
        verbs: vec!["get".into()],
        non_resource_urls: Some(vec!["/api".into()]),
        resource_names: Some(vec!["a".into()]),
        ..PolicyRule::default()
    };
    let (ok, missing) = covers(std::slice::from_ref(&rule), std::slice::from_ref(&rule));
    assert!(!ok);
    assert_eq!(missing.len(), 1);
}

/// A request from `user`, resource or not.
fn request(user: UserInfo) -> impl Strategy<Value = Attributes> {
    (
        any::<bool>(),
        pick(&["get", "list", "watch", "create"]),
        pick(&["", "apps", "x"]),
        pick(&["pods", "deployments", "x"]),
        pick(&["", "status", "scale", "*"]),
        pick(&["", "a", "c"]),
        pick(&["", "ns1", "ns2"]),
        pick(&["/api", "/api/v1", "/apis", "/a", "/b", "/healthz"]),
    )
        .prop_map(
            move |(
                resource_request,
                verb,
                api_group,
                resource,
                subresource,
                name,
                namespace,
                path,
            )| {
                if resource_request {
                    Attributes {
                        user: user.clone(),
                        verb,
                        resource_request,
                        namespace,
                        api_group,
                        api_version: "v1".into(),
                        resource,
                        subresource,
                        name,
                        path: String::new(),
                    }
                } else {
                    Attributes {
                        user: user.clone(),
                        verb,
                        path,
                        ..Attributes::default()
                    }
                }
            },
        )
}

fn meta(ns: Option<&str>, name: &str) -> ObjectMeta {
    ObjectMeta {
        namespace: ns.map(str::to_owned),
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

/// How the grant reaches the user.
#[derive(Clone, Copy, Debug)]
enum Grant {
    ClusterRoleBinding,
    RoleBindingOfRole,
    RoleBindingOfClusterRole,
}

/// A subject naming the test user (`system:serviceaccount:ns1:sa`, in
/// groups `devs` and `system:authenticated`).
fn subject(kind: u8) -> Subject {
    let rbac = Some("rbac.authorization.k8s.io".to_owned());
    match kind % 3 {
        0 => Subject {
            kind: "User".into(),
            name: "system:serviceaccount:ns1:sa".into(),
            api_group: rbac,
            namespace: None,
        },
        1 => Subject {
            kind: "Group".into(),
            name: "devs".into(),
            api_group: rbac,
            namespace: None,
        },
        _ => Subject {
            kind: "ServiceAccount".into(),
            name: "sa".into(),
            api_group: Some(String::new()),
            namespace: Some("ns1".into()),
        },
    }
}

fn the_user() -> UserInfo {
    let mut u = UserInfo::service_account("ns1", "sa", "uid");
    u.groups.push("devs".into());
    u
}

/// A policy granting `granted` to the test user by `grant` (in `ns1` for
/// RoleBindings), plus noise: other users' bindings to everything.
fn policy(granted: &[PolicyRule], grant: Grant, subject_kind: u8) -> Policy {
    let everything = vec![PolicyRule {
        verbs: vec!["*".into()],
        api_groups: Some(vec!["*".into()]),
        resources: Some(vec!["*".into()]),
        non_resource_urls: Some(vec!["*".into()]),
        resource_names: None,
    }];
    let role_ref = |kind: &str, name: &str| RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
    };
    let other = Subject {
        kind: "User".into(),
        name: "someone-else".into(),
        api_group: None,
        namespace: None,
    };
    let mut roles = vec![];
    let mut role_bindings = vec![RoleBinding {
        metadata: meta(Some("ns1"), "noise"),
        role_ref: role_ref("ClusterRole", "everything"),
        subjects: Some(vec![other.clone()]),
    }];
    let mut cluster_roles = vec![ClusterRole {
        metadata: meta(None, "everything"),
        rules: Some(everything),
        aggregation_rule: None,
    }];
    let mut cluster_role_bindings = vec![ClusterRoleBinding {
        metadata: meta(None, "noise"),
        role_ref: role_ref("ClusterRole", "everything"),
        subjects: Some(vec![other]),
    }];
    let subjects = Some(vec![subject(subject_kind)]);
    match grant {
        Grant::ClusterRoleBinding => {
            cluster_roles.push(ClusterRole {
                metadata: meta(None, "granted"),
                rules: Some(granted.to_vec()),
                aggregation_rule: None,
            });
            cluster_role_bindings.push(ClusterRoleBinding {
                metadata: meta(None, "grant"),
                role_ref: role_ref("ClusterRole", "granted"),
                subjects,
            });
        }
        Grant::RoleBindingOfRole => {
            roles.push(Role {
                metadata: meta(Some("ns1"), "granted"),
                rules: Some(granted.to_vec()),
            });
            role_bindings.push(RoleBinding {
                metadata: meta(Some("ns1"), "grant"),
                role_ref: role_ref("Role", "granted"),
                subjects,
            });
        }
        Grant::RoleBindingOfClusterRole => {
            cluster_roles.push(ClusterRole {
                metadata: meta(None, "granted"),
                rules: Some(granted.to_vec()),
                aggregation_rule: None,
            });
            role_bindings.push(RoleBinding {
                metadata: meta(Some("ns1"), "grant"),
                role_ref: role_ref("ClusterRole", "granted"),
                subjects,
            });
        }
    }
    Policy::new(roles, role_bindings, cluster_roles, cluster_role_bindings)
}

fn grant() -> impl Strategy<Value = Grant> {
    prop_oneof![
        Just(Grant::ClusterRoleBinding),
        Just(Grant::RoleBindingOfRole),
        Just(Grant::RoleBindingOfClusterRole),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A user granted rules R is allowed exactly the requests R allows
    /// (cluster-wide for a ClusterRoleBinding; only in the binding's
    /// namespace for a RoleBinding), whatever subject form names them.
    #[test]
    fn allowed_exactly_what_the_granted_rules_allow(
        granted in rules(),
        grant in grant(),
        subject_kind in 0u8..3,
        attrs in request(the_user()),
    ) {
        let policy = policy(&granted, grant, subject_kind);
        let in_scope = match grant {
            Grant::ClusterRoleBinding => true,
            _ => attrs.namespace == "ns1",
        };
        let want = in_scope && rules_allow(&attrs, &granted);
        prop_assert_eq!(policy.authorize(&attrs).allowed(), want);
        let (rules, errors) = policy.rules_for(&attrs.user, &attrs.namespace);
        prop_assert!(errors.is_empty());
        prop_assert_eq!(rules_allow(&attrs, &rules), want);
    }

    /// Nobody else is allowed anything by the grant.
    #[test]
    fn others_get_nothing(granted in rules(), grant in grant(), subject_kind in 0u8..3,
        attrs in request(UserInfo { name: "system:serviceaccount:ns2:sa".into(), groups: vec!["ops".into()], ..UserInfo::default() })) {
        prop_assert!(!policy(&granted, grant, subject_kind).authorize(&attrs).allowed());
    }

    /// Rules cover themselves.
    #[test]
    fn covers_is_reflexive(r in shaped_rules()) {
        let (ok, missing) = covers(&r, &r);
        prop_assert!(ok, "uncovered: {:?}", missing);
    }

    /// Covering is transitive (on unrelated rule sets, where it is mostly
    /// vacuous).
    #[test]
    fn covers_is_transitive(a in shaped_rules(), b in shaped_rules(), c in shaped_rules()) {
        if covers(&a, &b).0 && covers(&b, &c).0 {
            prop_assert!(covers(&a, &c).0);
        }
    }

    /// Covering is transitive along chains of narrowed rules: B narrows
    /// A's broken-down rules, C narrows B's; A covers B, B covers C, and
    /// A covers C.
    #[test]
    fn covers_is_transitive_along_narrowing(a in shaped_rules(), seed1 in any::<u64>(), seed2 in any::<u64>()) {
        let b = narrow(&a, seed1);
        let c = narrow(&b, seed2);
        prop_assert!(covers(&a, &b).0, "a={:?} b={:?}", a, b);
        prop_assert!(covers(&b, &c).0, "b={:?} c={:?}", b, c);
        prop_assert!(covers(&a, &c).0);
    }

    /// What the owner's rules cover, they allow: every request the covered
    /// rules allow, the owner's rules allow too (escalation prevention is
    /// sound).
    #[test]
    fn covered_rules_allow_nothing_more(owner in rules(), servant in rules(), attrs in request(the_user())) {
        if covers(&owner, &servant).0 && rules_allow(&attrs, &servant) {
            prop_assert!(rules_allow(&attrs, &owner));
        }
    }

    /// Whatever is not covered is reported, and the reported rules are not
    /// covered one by one.
    #[test]
    fn uncovered_rules_are_not_covered(owner in rules(), servant in rules()) {
        let (ok, missing) = covers(&owner, &servant);
        prop_assert_eq!(ok, missing.is_empty());
        for m in &missing {
            prop_assert!(!covers(&owner, std::slice::from_ref(m)).0);
        }
    }
}
