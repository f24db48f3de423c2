//! Escalation prevention: a user may only write a Role or ClusterRole whose
//! rules they already hold (unless allowed to `escalate` it), and may only
//! bind a role whose rules they hold (unless allowed to `bind` it).
//! Upstream: `Covers` (`component-helpers/auth/rbac/validation/policy_comparator.go`),
//! `CompactRules` (`policy_compact.go`), `ConfirmNoEscalation` (`rule.go`),
//! `EscalationAllowed`/`RoleEscalationAuthorized`/`BindingAuthorized`
//! (`pkg/registry/rbac/escalation_check.go`) and the checks the
//! `policybased` REST storages make around them.

use std::collections::BTreeSet;

use k8s_openapi::Metadata;
use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::rbac::policy::{Policy, ResolveError, aggregate_messages, kinds};
use crate::rbac::rule::{ALL, compact_string, go_quote_list, list, non_resource_url_covers};
use crate::{Attributes, UserInfo, groups};

/// The API group of the RBAC resources.
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Splits a rule into rules of one group, resource, verb and (if any) name,
/// plus one per non-resource URL and verb (`BreakdownRule`).
pub fn breakdown_rule(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| Some(vec![s.clone()]);
    let mut out = Vec::new();
    for group in list(&rule.api_groups) {
        for resource in list(&rule.resources) {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: vec![verb.clone()],
                    ..PolicyRule::default()
                };
                let names = list(&rule.resource_names);
                if names.is_empty() {
                    out.push(base);
                } else {
                    out.extend(names.iter().map(|n| PolicyRule {
                        resource_names: one(n),
                        ..base.clone()
                    }));
                }
            }
        }
    }
    for url in list(&rule.non_resource_urls) {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: vec![verb.clone()],
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| has(set, w))
}

fn resource_covers_all(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, ALL) || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        if has(owner, path) {
            return true;
        }
        match path.split_once('/') {
            Some((_, sub)) => has(owner, &format!("*/{sub}")),
            None => false,
        }
    })
}

/// Whether `owner` covers the broken-down `sub` rule (`ruleCovers`).
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &sub.verbs);
    let owner_groups = list(&owner.api_groups);
    let groups = has(owner_groups, ALL) || has_all(owner_groups, list(&sub.api_groups));
    let resources = resource_covers_all(list(&owner.resources), list(&sub.resources));
    let urls = list(&sub.non_resource_urls).iter().all(|path| {
        list(&owner.non_resource_urls)
            .iter()
            .any(|o| non_resource_url_covers(o, path))
    });
    let owner_names = list(&owner.resource_names);
    let sub_names = list(&sub.resource_names);
    let names = if sub_names.is_empty() {
        owner_names.is_empty()
    } else {
        owner_names.is_empty() || has_all(owner_names, sub_names)
    };
    verbs && groups && resources && names && urls
}

/// Whether `owner` rules cover every permission in `servant` rules, and the
/// broken-down servant rules they do not cover (`Covers`).
pub fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let uncovered: Vec<PolicyRule> = servant
        .iter()
        .flat_map(breakdown_rule)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect();
    (uncovered.is_empty(), uncovered)
}

/// Merges rules of one API group, one resource and at most one resource
/// name (nothing else but verbs) into one rule per group/resource/name,
/// appending their verbs (`CompactRules`); other rules are kept as they
/// are, first. Upstream's output order is a Go map's; callers sort.
pub fn compact_rules(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    type Key = (String, String, Option<String>);
    let mut out = Vec::with_capacity(rules.len());
    let mut simple: Vec<(Key, PolicyRule)> = Vec::new();
    for rule in rules {
        let groups = list(&rule.api_groups);
        let resources = list(&rule.resources);
        let names = list(&rule.resource_names);
        let is_simple = names.len() <= 1
            && list(&rule.non_resource_urls).is_empty()
            && groups.len() == 1
            && resources.len() == 1;
        if !is_simple {
            out.push(rule.clone());
            continue;
        }
        let key = (
            groups[0].clone(),
            resources[0].clone(),
            names.first().cloned(),
        );
        match simple.iter_mut().find(|(k, _)| *k == key) {
            Some((_, existing)) => existing.verbs.extend(rule.verbs.iter().cloned()),
            None => simple.push((key, rule.clone())),
        }
    }
    out.extend(simple.into_iter().map(|(_, r)| r));
    out
}

/// A write that would grant permissions the user does not hold; `Display`
/// is upstream's text: `user "x" (groups=["a" "b"]) is attempting to grant
/// RBAC permissions not currently held:\n{APIGroups:[""], ...}` (one
/// compacted rule a line, sorted), then `; resolution errors: [...]` when
/// some of the user's bindings could not be resolved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct EscalationError {
    /// The user's name.
    pub user: String,
    /// The user's groups.
    pub groups: Vec<String>,
    /// The permissions not held (broken down, as `Covers` returns them).
    pub missing: Vec<PolicyRule>,
    /// Errors met resolving the user's own rules.
    pub resolution_errors: Vec<ResolveError>,
}

impl std::fmt::Display for EscalationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let descriptions: BTreeSet<String> = compact_rules(&self.missing)
            .iter()
            .map(compact_string)
            .collect();
        let lines: Vec<&str> = descriptions.iter().map(String::as_str).collect();
        write!(
            f,
            "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
            exitplan_api::field::go_quote(&self.user),
            go_quote_list(&self.groups),
            lines.join("\n"),
        )?;
        if !self.resolution_errors.is_empty() {
            // Upstream prints a one-element []error holding the aggregate.
            let errs: Vec<String> = self
                .resolution_errors
                .iter()
                .map(ToString::to_string)
                .collect();
            write!(f, "; resolution errors: [{}]", aggregate_messages(&errs))?;
        }
        Ok(())
    }
}

/// Checks that `user`'s rules in `namespace` (`""` for cluster scope) cover
/// `rules` (`ConfirmNoEscalation`).
pub fn confirm_no_escalation(
    policy: &Policy,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), EscalationError> {
    let (owner, resolution_errors) = policy.rules_for(user, namespace);
    let (ok, missing) = covers(&owner, rules);
    if ok {
        return Ok(());
    }
    Err(EscalationError {
        user: user.name.clone(),
        groups: user.groups.clone(),
        missing,
        resolution_errors,
    })
}

/// Whether the user may write any role or binding without checks: members
/// of `system:masters` (`EscalationAllowed`).
pub fn escalation_allowed(user: &UserInfo) -> bool {
    user.in_group(groups::SYSTEM_MASTERS)
}

/// Whether the user is allowed the `escalate` verb on the role the request
/// writes (`RoleEscalationAuthorized`); `request` is the Role or ClusterRole
/// create/update request's own attributes (group, resource, namespace and
/// the name from the URL: empty on create, as upstream's RequestInfo, so
/// `escalate` limited by resourceNames does not allow creates).
pub fn role_escalation_authorized(policy: &Policy, request: &Attributes) -> bool {
    let is_role = request.resource == "roles" || request.resource == "clusterroles";
    if !request.resource_request || request.api_group != RBAC_GROUP || !is_role {
        return false;
    }
    let attrs = Attributes {
        user: request.user.clone(),
        verb: "escalate".into(),
        resource_request: true,
        namespace: request.namespace.clone(),
        api_group: request.api_group.clone(),
        api_version: "*".into(),
        resource: request.resource.clone(),
        subresource: String::new(),
        name: request.name.clone(),
        path: String::new(),
    };
    policy.authorize(&attrs).allowed()
}

/// Whether the user is allowed the `bind` verb on the role `role_ref`
/// names, in the binding's namespace (`""` for a ClusterRoleBinding)
/// (`BindingAuthorized`).
pub fn binding_authorized(
    policy: &Policy,
    user: &UserInfo,
    role_ref: &RoleRef,
    binding_namespace: &str,
) -> bool {
    let resource = match role_ref.kind.as_str() {
        kinds::CLUSTER_ROLE => "clusterroles",
        kinds::ROLE => "roles",
        _ => return false,
    };
    let attrs = Attributes {
        user: user.clone(),
        verb: "bind".into(),
        resource_request: true,
        namespace: binding_namespace.to_owned(),
        api_group: role_ref.api_group.clone().unwrap_or_default(),
        api_version: "*".into(),
        resource: resource.into(),
        subresource: String::new(),
        name: role_ref.name.clone(),
        path: String::new(),
    };
    policy.authorize(&attrs).allowed()
}

/// Why a role or binding write is refused. The REST layer answers 403 with
/// `apierrors.NewForbidden(<resource>.rbac.authorization.k8s.io, name, err)`
/// ([`crate::Forbidden::new`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WriteError {
    /// The write grants permissions the user does not hold.
    #[error("{0}")]
    Escalation(#[from] EscalationError),
    /// A ClusterRole with an aggregationRule written by a user without
    /// every permission.
    #[error("must have cluster-admin privileges to use an aggregationRule")]
    AggregationRule,
    /// The binding's role reference cannot be resolved.
    #[error("{0}")]
    Resolve(#[from] ResolveError),
}

/// Every permission (`fullAuthority`): what using an aggregationRule needs.
fn full_authority() -> [PolicyRule; 2] {
    [
        PolicyRule {
            verbs: vec![ALL.into()],
            api_groups: Some(vec![ALL.into()]),
            resources: Some(vec![ALL.into()]),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: vec![ALL.into()],
            non_resource_urls: Some(vec![ALL.into()]),
            ..PolicyRule::default()
        },
    ]
}

/// The check on creating or updating a Role or ClusterRole (the role
/// `policybased` storages): allowed for `system:masters` and for users
/// allowed to `escalate` it; otherwise the new `rules` must be held by the
/// user in the request's namespace, and (ClusterRoles) a new or old
/// aggregationRule (`uses_aggregation`) needs every permission. On update,
/// skip the check when only GC fields change ([`is_only_mutating_gc_fields`]).
pub fn check_role_write(
    policy: &Policy,
    request: &Attributes,
    rules: &[PolicyRule],
    uses_aggregation: bool,
) -> Result<(), WriteError> {
    if escalation_allowed(&request.user) || role_escalation_authorized(policy, request) {
        return Ok(());
    }
    confirm_no_escalation(policy, &request.user, &request.namespace, rules)?;
    if uses_aggregation
        && confirm_no_escalation(policy, &request.user, &request.namespace, &full_authority())
            .is_err()
    {
        return Err(WriteError::AggregationRule);
    }
    Ok(())
}

/// The check on creating or updating a RoleBinding or ClusterRoleBinding
/// (the binding `policybased` storages): allowed for `system:masters` and
/// for users allowed to `bind` the referenced role; otherwise the role must
/// resolve and its rules be held by the user in `binding_namespace` (`""`
/// for a ClusterRoleBinding). On update, skip the check when only GC fields
/// change ([`is_only_mutating_gc_fields`]).
pub fn check_binding_write(
    policy: &Policy,
    user: &UserInfo,
    role_ref: &RoleRef,
    binding_namespace: &str,
) -> Result<(), WriteError> {
    if escalation_allowed(user) || binding_authorized(policy, user, role_ref, binding_namespace) {
        return Ok(());
    }
    let rules = policy.role_reference_rules(role_ref, binding_namespace)?;
    confirm_no_escalation(policy, user, binding_namespace, rules)?;
    Ok(())
}

/// Whether an update changes only what the garbage collector needs
/// (ownerReferences, finalizers; selfLink and managedFields are ignored
/// too), so that no escalation check applies (`IsOnlyMutatingGCFields`).
pub fn is_only_mutating_gc_fields<T>(new: &T, old: &T) -> bool
where
    T: Metadata<Ty = ObjectMeta> + Clone + PartialEq,
{
    let mut copied = new.clone();
    let old_meta = old.metadata();
    let meta = copied.metadata_mut();
    meta.owner_references = old_meta.owner_references.clone();
    meta.finalizers = old_meta.finalizers.clone();
    meta.self_link = old_meta.self_link.clone();
    meta.managed_fields = old_meta.managed_fields.clone();
    copied == *old
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::testing::*;
    use k8s_openapi::api::rbac::v1::ClusterRole;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    /// A resource rule: comma-separated verbs, groups, resources, names.
    fn r(verbs: &str, groups: &str, resources: &str, names: &str) -> PolicyRule {
        let split = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
        PolicyRule {
            verbs: split(verbs),
            api_groups: Some(split(groups)),
            resources: Some(split(resources)),
            resource_names: (!names.is_empty()).then(|| split(names)),
            non_resource_urls: None,
        }
    }

    /// A non-resource rule.
    fn u(verbs: &str, urls: &str) -> PolicyRule {
        PolicyRule {
            verbs: verbs.split(',').map(str::to_owned).collect(),
            non_resource_urls: Some(urls.split(',').map(str::to_owned).collect()),
            ..PolicyRule::default()
        }
    }

    /// Upstream's `TestCovers*` (policy_comparator_test.go).
    #[test]
    fn covers_tables() {
        let with_urls = |mut rule: PolicyRule, urls: &str| {
            rule.non_resource_urls = Some(urls.split(',').map(str::to_owned).collect());
            rule
        };
        // (name, owner rules, servant rules, uncovered rules)
        type Case = (
            &'static str,
            Vec<PolicyRule>,
            Vec<PolicyRule>,
            Vec<PolicyRule>,
        );
        let cases: Vec<Case> = vec![
            (
                "ExactMatch",
                vec![r("get", "v1", "builds", "")],
                vec![r("get", "v1", "builds", "")],
                vec![],
            ),
            (
                "SubresourceWildcard",
                vec![r("get", "v1", "*/scale", "")],
                vec![r("get", "v1", "foo/scale", "")],
                vec![],
            ),
            (
                "MultipleRulesCoveringSingleRule",
                vec![
                    r("delete", "v1", "deployments", ""),
                    r("delete", "v1", "builds", ""),
                    r("update", "v1", "builds,deployments", ""),
                ],
                vec![r("delete,update", "v1", "builds,deployments", "")],
                vec![],
            ),
            (
                "MultipleAPIGroupsCoveringSingleRule",
                vec![
                    r("delete", "group1", "deployments", ""),
                    r("delete", "group1", "builds", ""),
                    r("update", "group1", "builds,deployments", ""),
                    r("delete", "group2", "deployments", ""),
                    r("delete", "group2", "builds", ""),
                    r("update", "group2", "builds,deployments", ""),
                ],
                vec![r(
                    "delete,update",
                    "group1,group2",
                    "builds,deployments",
                    "",
                )],
                vec![],
            ),
            (
                "SingleAPIGroupsCoveringMultiple",
                vec![r(
                    "delete,update",
                    "group1,group2",
                    "builds,deployments",
                    "",
                )],
                vec![
                    r("delete", "group1", "deployments", ""),
                    r("delete", "group1", "builds", ""),
                    r("update", "group1", "builds,deployments", ""),
                    r("delete", "group2", "deployments", ""),
                    r("delete", "group2", "builds", ""),
                    r("update", "group2", "builds,deployments", ""),
                ],
                vec![],
            ),
            (
                "MultipleRulesMissingSingleVerbResourceCombination",
                vec![
                    r("delete,update", "v1", "builds,deployments", ""),
                    r("delete", "v1", "pods", ""),
                ],
                vec![r("delete,update", "v1", "builds,deployments,pods", "")],
                vec![r("update", "v1", "pods", "")],
            ),
            (
                "APIGroupStarCoveringMultiple",
                vec![r("get", "*", "roles", "")],
                vec![r("get", "group1,group2", "roles", "")],
                vec![],
            ),
            (
                "EnumerationNotCoveringAPIGroupStar",
                vec![r("get", "dummy-group", "roles", "")],
                vec![r("get", "*", "roles", "")],
                vec![r("get", "*", "roles", "")],
            ),
            (
                "APIGroupStarCoveringStar",
                vec![r("get", "*", "roles", "")],
                vec![r("get", "*", "roles", "")],
                vec![],
            ),
            (
                "VerbStarCoveringMultiple",
                vec![r("*", "v1", "roles", "")],
                vec![r("watch,list", "v1", "roles", "")],
                vec![],
            ),
            (
                "EnumerationNotCoveringVerbStar",
                vec![r(
                    "get,list,watch,create,update,delete,exec",
                    "v1",
                    "roles",
                    "",
                )],
                vec![r("*", "v1", "roles", "")],
                vec![r("*", "v1", "roles", "")],
            ),
            (
                "VerbStarCoveringStar",
                vec![r("*", "v1", "roles", "")],
                vec![r("*", "v1", "roles", "")],
                vec![],
            ),
            (
                "ResourceStarCoveringMultiple",
                vec![r("get", "v1", "*", "")],
                vec![r("get", "v1", "resourcegroup:deployments", "")],
                vec![],
            ),
            (
                "EnumerationNotCoveringResourceStar",
                vec![r("get", "v1", "roles,resourcegroup:deployments", "")],
                vec![r("get", "v1", "*", "")],
                vec![r("get", "v1", "*", "")],
            ),
            (
                "ResourceStarCoveringStar",
                vec![r("get", "v1", "*", "")],
                vec![r("get", "v1", "*", "")],
                vec![],
            ),
            (
                "ResourceNameEmptyCoveringMultiple",
                vec![r("get", "v1", "pods", "")],
                vec![r("get", "v1", "pods", "foo,bar")],
                vec![],
            ),
            (
                "EnumerationNotCoveringResourceNameEmpty",
                vec![r("get", "v1", "pods", "foo,bar")],
                vec![r("get", "v1", "pods", "")],
                vec![r("get", "v1", "pods", "")],
            ),
            (
                "NonResourceURLs",
                vec![u("*", "/apis")],
                vec![u("*", "/apis")],
                vec![],
            ),
            (
                "NonResourceURLsStar",
                vec![u("*", "*")],
                vec![u("*", "/apis,/apis/v1,/")],
                vec![],
            ),
            (
                "NonResourceURLsStarAfterPrefixDoesntCover",
                vec![u("*", "/apis/*")],
                vec![u("get", "/apis,/apis/v1")],
                vec![u("get", "/apis")],
            ),
            (
                "NonResourceURLsStarAfterPrefix",
                vec![u("*", "/apis/*")],
                vec![u("get", "/apis/v1/foo,/apis/v1")],
                vec![],
            ),
            (
                "NonResourceURLsWithOtherFields",
                vec![with_urls(r("get", "v1", "builds", ""), "/apis")],
                vec![with_urls(r("get", "v1", "builds", ""), "/apis")],
                vec![],
            ),
            (
                "NonResourceURLsWithOtherFieldsFailure",
                vec![r("get", "v1", "builds", "")],
                vec![with_urls(r("get", "v1", "builds", ""), "/apis")],
                vec![u("get", "/apis")],
            ),
        ];
        for (name, owner, servant, want_uncovered) in cases {
            let (ok, uncovered) = covers(&owner, &servant);
            assert_eq!(ok, want_uncovered.is_empty(), "{name}");
            assert_eq!(uncovered, want_uncovered, "{name}");
        }
    }

    /// Upstream's `TestNonResourceURLCovers`.
    #[test]
    fn non_resource_url_covers_table() {
        let cases = [
            ("*", "", true),
            ("*", "/", true),
            ("*", "/api", true),
            ("/*", "", false),
            ("/*", "/", true),
            ("/*", "/foo", true),
            ("/api", "/api", true),
            ("/apis", "/api", false),
            ("/api/v1", "/api", false),
            ("/api/v1", "/api/v1", true),
            ("/api/*", "/api/v1", true),
            ("/api/*", "/api", false),
            ("/api/*/*", "/api/v1", false),
            ("/*/v1/*", "/api/v1", false),
        ];
        for (owner, requested, want) in cases {
            let (ok, _) = covers(&[u("get", owner)], &[u("get", requested)]);
            assert_eq!(ok, want, "{owner:?} covers {requested:?}");
        }
    }

    /// Upstream's `TestCompactRules` (policy_compact_test.go): the output
    /// as a sorted list, and covering the input both ways.
    #[test]
    fn compact_rules_table() {
        let with_urls = |mut rule: PolicyRule, urls: &str| {
            rule.non_resource_urls = Some(urls.split(',').map(str::to_owned).collect());
            rule
        };
        let no_verbs = |mut rule: PolicyRule| {
            rule.verbs = vec![];
            rule
        };
        let cases: Vec<(&str, Vec<PolicyRule>, Vec<PolicyRule>)> = vec![
            ("empty", vec![], vec![]),
            (
                "simple",
                vec![
                    r("get", "", "builds", ""),
                    r("list", "", "builds", ""),
                    r("update,patch", "", "builds", ""),
                    r("create", "extensions", "daemonsets", ""),
                    r("delete", "extensions", "daemonsets", ""),
                    PolicyRule {
                        resource_names: Some(vec![String::new()]),
                        ..r("patch", "extensions", "daemonsets", "")
                    },
                    r("get", "extensions", "daemonsets", "foo"),
                    r("list", "extensions", "daemonsets", "foo"),
                    r("educate", "", "dolphins", ""),
                    no_verbs(r("x", "", "pirates", "")),
                    no_verbs(r("x", "", "pods", "")),
                    r("create", "", "pods", ""),
                ],
                vec![
                    r("create,delete", "extensions", "daemonsets", ""),
                    PolicyRule {
                        resource_names: Some(vec![String::new()]),
                        ..r("patch", "extensions", "daemonsets", "")
                    },
                    r("get,list", "extensions", "daemonsets", "foo"),
                    r("get,list,update,patch", "", "builds", ""),
                    r("educate", "", "dolphins", ""),
                    no_verbs(r("x", "", "pirates", "")),
                    r("create", "", "pods", ""),
                ],
            ),
            (
                "complex multi-group",
                vec![
                    r("get", ",builds.openshift.io", "builds", ""),
                    r("list", ",builds.openshift.io", "builds", ""),
                ],
                vec![
                    r("get", ",builds.openshift.io", "builds", ""),
                    r("list", ",builds.openshift.io", "builds", ""),
                ],
            ),
            (
                "complex multi-resource",
                vec![
                    r("get", "", "builds,images", ""),
                    r("list", "", "builds,images", ""),
                ],
                vec![
                    r("get", "", "builds,images", ""),
                    r("list", "", "builds,images", ""),
                ],
            ),
            (
                "complex named-resource",
                vec![
                    r("get", "", "builds", "mybuild"),
                    r("list", "", "builds", "mybuild2"),
                ],
                vec![
                    r("get", "", "builds", "mybuild"),
                    r("list", "", "builds", "mybuild2"),
                ],
            ),
            (
                "complex non-resource",
                vec![
                    with_urls(r("get", "", "builds", ""), "/"),
                    with_urls(r("get", "", "builds", ""), "/foo"),
                ],
                vec![
                    with_urls(r("get", "", "builds", ""), "/"),
                    with_urls(r("get", "", "builds", ""), "/foo"),
                ],
            ),
        ];
        let sorted = |mut rules: Vec<PolicyRule>| {
            rules.sort_by_key(compact_string);
            rules
        };
        for (name, rules, want) in cases {
            let compacted = compact_rules(&rules);
            assert!(
                covers(&compacted, &rules).0,
                "{name}: compacted covers input"
            );
            assert!(
                covers(&rules, &compacted).0,
                "{name}: input covers compacted"
            );
            assert_eq!(sorted(compacted), sorted(want), "{name}");
        }
    }

    fn escalation_policy() -> Policy {
        Policy::new(
            vec![role(
                "ns1",
                "pod-reader",
                vec![r("get,list", "", "pods", "")],
            )],
            vec![
                binding("ns1", "bob-reads", "Role", "pod-reader", &["User:bob"]),
                binding("ns1", "bob-missing", "Role", "missing", &["User:bob"]),
            ],
            vec![
                cluster_role("node-reader", vec![r("get", "", "nodes", "")]),
                cluster_role("admin", vec![r("*", "*", "*", ""), u("*", "*")]),
                cluster_role(
                    "role-escalator",
                    vec![r("escalate", RBAC_GROUP, "roles", "")],
                ),
                cluster_role(
                    "admin-binder",
                    vec![r("bind", RBAC_GROUP, "clusterroles", "admin")],
                ),
            ],
            vec![
                cluster_binding("bob-nodes", "node-reader", &["User:bob"]),
                cluster_binding("escalators", "role-escalator", &["Group:escalators"]),
                cluster_binding("binders", "admin-binder", &["Group:binders"]),
                cluster_binding("root", "admin", &["User:root"]),
            ],
        )
    }

    #[test]
    fn confirm_no_escalation_message() {
        let policy = escalation_policy();
        let bob = user("bob", "system:authenticated,devs");
        assert_eq!(
            confirm_no_escalation(&policy, &bob, "ns1", &[r("get,list", "", "pods", "")]),
            Ok(())
        );
        let err = confirm_no_escalation(
            &policy,
            &bob,
            "ns1",
            &[
                r("get,list,watch,delete", "", "pods", ""),
                r("get", "", "secrets", "s1"),
                u("get", "/metrics"),
            ],
        )
        .expect_err("bob does not hold these");
        assert_eq!(
            err.to_string(),
            "user \"bob\" (groups=[\"system:authenticated\" \"devs\"]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"watch\" \"delete\"]}\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"s1\"], Verbs:[\"get\"]}\n\
             {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}; resolution errors: [role.rbac.authorization.k8s.io \"missing\" not found]"
        );
        let err = confirm_no_escalation(&policy, &user("eve", ""), "", &[r("get", "", "pods", "")])
            .expect_err("eve holds nothing");
        assert_eq!(
            err.to_string(),
            "user \"eve\" (groups=[]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}"
        );
    }

    fn role_request(user: UserInfo, resource: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            user,
            verb: "create".into(),
            resource_request: true,
            namespace: ns.into(),
            api_group: RBAC_GROUP.into(),
            resource: resource.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn role_writes() {
        let policy = escalation_policy();
        let pods = [r("get", "", "pods", "")];
        let secrets = [r("get", "", "secrets", "")];
        // (name, request, new rules, uses aggregation, expected)
        type Case<'a> = (
            &'a str,
            Attributes,
            &'a [PolicyRule],
            bool,
            Result<(), &'a str>,
        );
        let cases: [Case<'_>; 8] = [
            (
                "held rules",
                role_request(user("bob", ""), "roles", "ns1", "x"),
                &pods,
                false,
                Ok(()),
            ),
            (
                "rules held only in another namespace",
                role_request(user("bob", ""), "roles", "ns2", "x"),
                &pods,
                false,
                Err("escalation"),
            ),
            (
                "not held",
                role_request(user("bob", ""), "roles", "ns1", "x"),
                &secrets,
                false,
                Err("escalation"),
            ),
            (
                "system:masters",
                role_request(user("m", "system:masters"), "clusterroles", "", "x"),
                &secrets,
                true,
                Ok(()),
            ),
            (
                "escalate verb on roles",
                role_request(user("e", "escalators"), "roles", "ns1", "x"),
                &secrets,
                false,
                Ok(()),
            ),
            (
                "escalate on roles is not on clusterroles",
                role_request(user("e", "escalators"), "clusterroles", "", "x"),
                &secrets,
                false,
                Err("escalation"),
            ),
            (
                "aggregation needs everything",
                role_request(user("bob", ""), "clusterroles", "", "x"),
                &[],
                true,
                Err("aggregation"),
            ),
            (
                "root may aggregate",
                role_request(user("root", ""), "clusterroles", "", "x"),
                &[],
                true,
                Ok(()),
            ),
        ];
        for (name, request, rules, aggregation, want) in cases {
            let got = check_role_write(&policy, &request, rules, aggregation);
            match (want, got) {
                (Ok(()), Ok(())) => {}
                (Err("escalation"), Err(WriteError::Escalation(_))) => {}
                (Err("aggregation"), Err(e @ WriteError::AggregationRule)) => assert_eq!(
                    e.to_string(),
                    "must have cluster-admin privileges to use an aggregationRule"
                ),
                (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn binding_writes() {
        let policy = escalation_policy();
        let cr = |name: &str| RoleRef {
            api_group: Some(RBAC_GROUP.into()),
            kind: "ClusterRole".into(),
            name: name.into(),
        };
        let role_ref = |name: &str| RoleRef {
            kind: "Role".into(),
            ..cr(name)
        };
        let bob = user("bob", "");
        assert_eq!(
            check_binding_write(&policy, &bob, &role_ref("pod-reader"), "ns1"),
            Ok(())
        );
        assert_eq!(
            check_binding_write(&policy, &bob, &cr("node-reader"), ""),
            Ok(())
        );
        assert!(matches!(
            check_binding_write(&policy, &bob, &cr("admin"), "ns1"),
            Err(WriteError::Escalation(_))
        ));
        assert_eq!(
            check_binding_write(&policy, &bob, &role_ref("nope"), "ns1").map_err(|e| e.to_string()),
            Err("role.rbac.authorization.k8s.io \"nope\" not found".to_owned())
        );
        let binder = user("carol", "binders");
        assert_eq!(
            check_binding_write(&policy, &binder, &cr("admin"), "ns1"),
            Ok(())
        );
        assert_eq!(
            check_binding_write(&policy, &binder, &cr("admin"), ""),
            Ok(())
        );
        assert!(check_binding_write(&policy, &binder, &cr("node-reader"), "").is_err());
        let masters = user("m", "system:masters");
        assert_eq!(
            check_binding_write(&policy, &masters, &cr("nope"), ""),
            Ok(())
        );
        let mut odd = cr("admin");
        odd.kind = "Other".into();
        assert!(!binding_authorized(&policy, &binder, &odd, ""));
    }

    #[test]
    fn gc_only_updates() {
        let old = cluster_role("x", vec![r("get", "", "pods", "")]);
        let mut new = old.clone();
        new.metadata.finalizers = Some(vec!["f".into()]);
        new.metadata.owner_references = Some(vec![OwnerReference {
            name: "o".into(),
            ..OwnerReference::default()
        }]);
        assert!(is_only_mutating_gc_fields(&new, &old));
        new.rules = Some(vec![]);
        assert!(!is_only_mutating_gc_fields(&new, &old));
        let mut labelled: ClusterRole = old.clone();
        labelled.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
        assert!(!is_only_mutating_gc_fields(&labelled, &old));
    }
}
