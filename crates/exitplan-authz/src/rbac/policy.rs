//! An immutable snapshot of the RBAC objects, indexed for the per-request
//! walk upstream's `DefaultRuleResolver.VisitRulesFor` does
//! (`pkg/registry/rbac/validation/rule.go`), and the RBAC authorizer's
//! decision (`plugin/pkg/auth/authorizer/rbac/rbac.go`).
//!
//! Bindings are indexed by the user names and groups their subjects name,
//! so a request only looks at the bindings that can apply to its user; the
//! rules are borrowed from the snapshot, never cloned on the hot path.

use std::collections::HashMap;
use std::fmt;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};

use crate::rbac::rule::rule_allows;
use crate::{Attributes, Decision, UserInfo, users};

/// Subject kinds (`rbacv1.UserKind`, `GroupKind`, `ServiceAccountKind`).
pub mod kinds {
    /// A user subject.
    pub const USER: &str = "User";
    /// A group subject.
    pub const GROUP: &str = "Group";
    /// A service account subject (namespace + name).
    pub const SERVICE_ACCOUNT: &str = "ServiceAccount";
    /// A binding's reference to a namespaced Role.
    pub const ROLE: &str = "Role";
    /// A binding's reference to a ClusterRole.
    pub const CLUSTER_ROLE: &str = "ClusterRole";
}

/// Why a binding's role reference could not be resolved; `Display` is the
/// text upstream's listers and resolver give.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The referenced Role does not exist in the binding's namespace.
    #[error("role.rbac.authorization.k8s.io \"{0}\" not found")]
    RoleNotFound(String),
    /// The referenced ClusterRole does not exist.
    #[error("clusterrole.rbac.authorization.k8s.io \"{0}\" not found")]
    ClusterRoleNotFound(String),
    /// The reference names a kind other than Role or ClusterRole.
    #[error("unsupported role reference kind: {}", exitplan_api::field::go_quote(.0))]
    UnsupportedKind(String),
}

/// Joins error messages as upstream's `utilerrors.NewAggregate(...).Error()`:
/// one message as is; several de-duplicated, `, `-joined and bracketed
/// (no brackets when they are all the same).
pub fn aggregate_messages<S: AsRef<str>>(messages: &[S]) -> String {
    if let [one] = messages {
        return one.as_ref().to_owned();
    }
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !seen.contains(&m.as_ref()) {
            seen.push(m.as_ref());
        }
    }
    if seen.len() <= 1 {
        return seen.concat();
    }
    format!("[{}]", seen.join(", "))
}

/// The binding (and its first subject that applied) a rule came from;
/// `Display` is upstream's describer text, e.g. `ClusterRoleBinding "x" of
/// ClusterRole "y" to User "z"` or `RoleBinding "b/ns" of Role "r" to
/// ServiceAccount "sa/ns"`.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A ClusterRoleBinding.
    ClusterRoleBinding {
        /// The binding.
        binding: &'a ClusterRoleBinding,
        /// Its first subject that applies to the user.
        subject: &'a Subject,
    },
    /// A RoleBinding in the request's namespace.
    RoleBinding {
        /// The binding.
        binding: &'a RoleBinding,
        /// Its first subject that applies to the user.
        subject: &'a Subject,
    },
}

fn describe_subject(f: &mut fmt::Formatter<'_>, s: &Subject, binding_ns: &str) -> fmt::Result {
    use exitplan_api::field::go_quote;
    if s.kind == kinds::SERVICE_ACCOUNT {
        let ns = s.namespace.as_deref().filter(|n| !n.is_empty());
        let ns = ns.unwrap_or(binding_ns);
        write!(f, "{} {}", s.kind, go_quote(&format!("{}/{ns}", s.name)))
    } else {
        write!(f, "{} {}", s.kind, go_quote(&s.name))
    }
}

impl fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use exitplan_api::field::go_quote;
        match self {
            Source::ClusterRoleBinding { binding, subject } => {
                write!(
                    f,
                    "ClusterRoleBinding {} of {} {} to ",
                    go_quote(binding.metadata.name.as_deref().unwrap_or_default()),
                    binding.role_ref.kind,
                    go_quote(&binding.role_ref.name),
                )?;
                describe_subject(f, subject, "")
            }
            Source::RoleBinding { binding, subject } => {
                let ns = binding.metadata.namespace.as_deref().unwrap_or_default();
                let name = binding.metadata.name.as_deref().unwrap_or_default();
                write!(
                    f,
                    "RoleBinding {} of {} {} to ",
                    go_quote(&format!("{name}/{ns}")),
                    binding.role_ref.kind,
                    go_quote(&binding.role_ref.name),
                )?;
                describe_subject(f, subject, ns)
            }
        }
    }
}

/// One step of [`Policy::visit_rules_for`]: a rule that applies to the
/// user (with where it came from), or a binding whose role is missing.
#[derive(Debug)]
pub enum Visit<'a> {
    /// A rule granted to the user.
    Rule {
        /// The binding that grants it.
        source: Source<'a>,
        /// The rule, borrowed from the snapshot.
        rule: &'a PolicyRule,
    },
    /// A binding applies to the user but its role cannot be resolved.
    Error(ResolveError),
}

/// Whether `subject` names the user (`appliesToUser`); `namespace` is the
/// binding's namespace (`""` for ClusterRoleBindings), the default for a
/// ServiceAccount subject without one.
pub fn subject_applies(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind.as_str() {
        kinds::USER => user.name == subject.name,
        kinds::GROUP => user.in_group(&subject.name),
        kinds::SERVICE_ACCOUNT => {
            service_account_user(subject, namespace).is_some_and(|u| u == user.name)
        }
        _ => false,
    }
}

/// The index of the first of `subjects` that applies to the user
/// (`appliesTo`).
pub fn applies_to(user: &UserInfo, subjects: &[Subject], namespace: &str) -> Option<usize> {
    subjects
        .iter()
        .position(|s| subject_applies(user, s, namespace))
}

/// The user name a ServiceAccount subject stands for
/// (`system:serviceaccount:<ns>:<name>`), `None` without a namespace.
fn service_account_user(subject: &Subject, binding_ns: &str) -> Option<String> {
    let ns = subject
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(binding_ns);
    (!ns.is_empty()).then(|| format!("{}{ns}:{}", users::SERVICE_ACCOUNT_PREFIX, subject.name))
}

/// Bindings with an index from user name and group to the bindings whose
/// subjects may name them.
#[derive(Debug)]
struct BindingIndex<B> {
    bindings: Vec<B>,
    by_user: HashMap<String, Vec<u32>>,
    by_group: HashMap<String, Vec<u32>>,
}

impl<B> Default for BindingIndex<B> {
    fn default() -> Self {
        BindingIndex {
            bindings: Vec::new(),
            by_user: HashMap::new(),
            by_group: HashMap::new(),
        }
    }
}

impl<B> BindingIndex<B> {
    /// Indexes `bindings` (already in visiting order); `subjects` and
    /// `namespace` read a binding's subjects and namespace.
    fn build(
        bindings: Vec<B>,
        subjects: impl Fn(&B) -> &[Subject],
        namespace: impl Fn(&B) -> &str,
    ) -> Self {
        let mut index = BindingIndex {
            by_user: HashMap::new(),
            by_group: HashMap::new(),
            bindings: Vec::new(),
        };
        for (i, b) in bindings.iter().enumerate() {
            let Ok(i) = u32::try_from(i) else { break };
            for s in subjects(b) {
                let key = match s.kind.as_str() {
                    kinds::USER => Some((&mut index.by_user, s.name.clone())),
                    kinds::GROUP => Some((&mut index.by_group, s.name.clone())),
                    kinds::SERVICE_ACCOUNT => {
                        service_account_user(s, namespace(b)).map(|u| (&mut index.by_user, u))
                    }
                    _ => None,
                };
                if let Some((map, key)) = key {
                    let list = map.entry(key).or_default();
                    if list.last() != Some(&i) {
                        list.push(i);
                    }
                }
            }
        }
        index.bindings = bindings;
        index
    }

    /// The positions of the bindings that may apply to `user`, in order.
    fn candidates(&self, user: &UserInfo) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        if let Some(l) = self.by_user.get(&user.name) {
            out.extend_from_slice(l);
        }
        for g in &user.groups {
            if let Some(l) = self.by_group.get(g) {
                out.extend_from_slice(l);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// What the policy holds for one namespace.
#[derive(Debug, Default)]
struct NamespacePolicy {
    roles: HashMap<String, Vec<PolicyRule>>,
    bindings: BindingIndex<RoleBinding>,
}

/// An immutable snapshot of all Roles, ClusterRoles, RoleBindings and
/// ClusterRoleBindings, ready to answer authorization questions. Build a
/// new one when any of them changes (building is linear in their number).
#[derive(Debug, Default)]
pub struct Policy {
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
    cluster_bindings: BindingIndex<ClusterRoleBinding>,
    namespaces: HashMap<String, NamespacePolicy>,
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

fn ns_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or_default()
}

impl Policy {
    /// A snapshot of the given objects. Bindings are visited in name order
    /// (upstream visits its informer cache's order, which is unspecified).
    pub fn new(
        roles: Vec<Role>,
        role_bindings: Vec<RoleBinding>,
        cluster_roles: Vec<ClusterRole>,
        mut cluster_role_bindings: Vec<ClusterRoleBinding>,
    ) -> Policy {
        let cluster_roles = cluster_roles
            .into_iter()
            .map(|r| (name_of(&r.metadata).to_owned(), r.rules.unwrap_or_default()))
            .collect();
        cluster_role_bindings.sort_by(|a, b| name_of(&a.metadata).cmp(name_of(&b.metadata)));
        let cluster_bindings = BindingIndex::build(
            cluster_role_bindings,
            |b| b.subjects.as_deref().unwrap_or_default(),
            |_| "",
        );

        let mut namespaces: HashMap<String, NamespacePolicy> = HashMap::new();
        for r in roles {
            let ns = namespaces.entry(ns_of(&r.metadata).to_owned()).or_default();
            ns.roles
                .insert(name_of(&r.metadata).to_owned(), r.rules.unwrap_or_default());
        }
        let mut by_ns: HashMap<String, Vec<RoleBinding>> = HashMap::new();
        for b in role_bindings {
            by_ns
                .entry(ns_of(&b.metadata).to_owned())
                .or_default()
                .push(b);
        }
        for (ns, mut bindings) in by_ns {
            bindings.sort_by(|a, b| name_of(&a.metadata).cmp(name_of(&b.metadata)));
            namespaces.entry(ns).or_default().bindings = BindingIndex::build(
                bindings,
                |b| b.subjects.as_deref().unwrap_or_default(),
                |b| ns_of(&b.metadata),
            );
        }
        Policy {
            cluster_roles,
            cluster_bindings,
            namespaces,
        }
    }

    /// The rules a binding's role reference grants (`GetRoleReferenceRules`);
    /// `binding_namespace` is the binding's namespace (`""` for a
    /// ClusterRoleBinding).
    pub fn role_reference_rules(
        &self,
        role_ref: &RoleRef,
        binding_namespace: &str,
    ) -> Result<&[PolicyRule], ResolveError> {
        match role_ref.kind.as_str() {
            kinds::ROLE => self
                .namespaces
                .get(binding_namespace)
                .and_then(|ns| ns.roles.get(&role_ref.name))
                .map(Vec::as_slice)
                .ok_or_else(|| ResolveError::RoleNotFound(role_ref.name.clone())),
            kinds::CLUSTER_ROLE => self
                .cluster_roles
                .get(&role_ref.name)
                .map(Vec::as_slice)
                .ok_or_else(|| ResolveError::ClusterRoleNotFound(role_ref.name.clone())),
            other => Err(ResolveError::UnsupportedKind(other.to_owned())),
        }
    }

    /// Calls `visitor` with each rule that applies to `user` in `namespace`
    /// and each resolution error, in upstream's order: ClusterRoleBindings
    /// first, then (for a non-empty namespace) that namespace's
    /// RoleBindings. Stops when `visitor` returns `false`.
    pub fn visit_rules_for<'a>(
        &'a self,
        user: &UserInfo,
        namespace: &str,
        mut visitor: impl FnMut(Visit<'a>) -> bool,
    ) {
        for i in self.cluster_bindings.candidates(user) {
            let Some(binding) = self.cluster_bindings.bindings.get(i as usize) else {
                continue;
            };
            let subjects = binding.subjects.as_deref().unwrap_or_default();
            let Some(subject) = applies_to(user, subjects, "").and_then(|s| subjects.get(s)) else {
                continue;
            };
            match self.role_reference_rules(&binding.role_ref, "") {
                Err(e) => {
                    if !visitor(Visit::Error(e)) {
                        return;
                    }
                }
                Ok(rules) => {
                    let source = Source::ClusterRoleBinding { binding, subject };
                    for rule in rules {
                        if !visitor(Visit::Rule { source, rule }) {
                            return;
                        }
                    }
                }
            }
        }
        if namespace.is_empty() {
            return;
        }
        let Some(ns) = self.namespaces.get(namespace) else {
            return;
        };
        for i in ns.bindings.candidates(user) {
            let Some(binding) = ns.bindings.bindings.get(i as usize) else {
                continue;
            };
            let subjects = binding.subjects.as_deref().unwrap_or_default();
            let Some(subject) = applies_to(user, subjects, namespace).and_then(|s| subjects.get(s))
            else {
                continue;
            };
            match self.role_reference_rules(&binding.role_ref, namespace) {
                Err(e) => {
                    if !visitor(Visit::Error(e)) {
                        return;
                    }
                }
                Ok(rules) => {
                    let source = Source::RoleBinding { binding, subject };
                    for rule in rules {
                        if !visitor(Visit::Rule { source, rule }) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Every rule that applies to `user` in `namespace`, and the errors met
    /// resolving bindings (`RulesFor`); the rules found are valid even when
    /// there are errors (rules only ever add permissions).
    pub fn rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<PolicyRule>, Vec<ResolveError>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit_rules_for(user, namespace, |v| {
            match v {
                Visit::Rule { rule, .. } => rules.push(rule.clone()),
                Visit::Error(e) => errors.push(e),
            }
            true
        });
        (rules, errors)
    }

    /// The RBAC authorizer's decision (`RBACAuthorizer.Authorize`): allowed
    /// with reason `RBAC: allowed by <source>` by the first rule that allows
    /// the request; otherwise no opinion, with reason `RBAC: <errors>` when
    /// some binding's role could not be resolved (empty otherwise).
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        let mut allowed = None;
        let mut errors: Vec<String> = Vec::new();
        self.visit_rules_for(&attrs.user, &attrs.namespace, |v| match v {
            Visit::Rule { source, rule } => {
                if rule_allows(attrs, rule) {
                    allowed = Some(format!("RBAC: allowed by {source}"));
                    return false;
                }
                true
            }
            Visit::Error(e) => {
                errors.push(e.to_string());
                true
            }
        });
        if let Some(reason) = allowed {
            return Decision::Allow(reason);
        }
        if errors.is_empty() {
            return Decision::NoOpinion(String::new());
        }
        Decision::NoOpinion(format!("RBAC: {}", aggregate_messages(&errors)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::testing::*;

    /// Upstream's `TestAuthorizer` (rbac_test.go).
    #[test]
    fn authorizer() {
        struct Case {
            name: &'static str,
            roles: Vec<Role>,
            role_bindings: Vec<RoleBinding>,
            cluster_roles: Vec<ClusterRole>,
            cluster_role_bindings: Vec<ClusterRoleBinding>,
            pass: Vec<Attributes>,
            fail: Vec<Attributes>,
        }
        let da = |u: &str, g: &str, verb: &str, res: &str, sub: &str, ns: &str| {
            resource(user(u, g), verb, res, sub, ns, "")
        };
        let nr = |u: &str, g: &str, verb: &str, path: &str| non_resource(user(u, g), verb, path);
        let cases = vec![
            Case {
                name: "cluster role bound in a namespace",
                roles: vec![],
                role_bindings: vec![binding(
                    "ns1",
                    "b",
                    "ClusterRole",
                    "admin",
                    &["User:admin", "Group:admins"],
                )],
                cluster_roles: vec![cluster_role("admin", vec![rule("*", "*", "*", "*")])],
                cluster_role_bindings: vec![],
                pass: vec![
                    da("admin", "", "get", "Pods", "", "ns1"),
                    da("admin", "", "watch", "Pods", "", "ns1"),
                    da("admin", "group1", "watch", "Foobar", "", "ns1"),
                    da("joe", "admins", "watch", "Foobar", "", "ns1"),
                    da("joe", "group1,admins", "watch", "Foobar", "", "ns1"),
                ],
                fail: vec![
                    da("admin", "", "GET", "Pods", "", "ns2"),
                    da("admin", "", "GET", "Nodes", "", ""),
                    da("admin", "admins", "GET", "Pods", "", "ns2"),
                    da("admin", "admins", "GET", "Nodes", "", ""),
                ],
            },
            Case {
                name: "non-resource-url tests",
                roles: vec![],
                role_bindings: vec![],
                cluster_roles: vec![
                    cluster_role(
                        "non-resource-url-getter",
                        vec![rule("get", "", "", "/apis")],
                    ),
                    cluster_role("non-resource-url", vec![rule("*", "", "", "/apis")]),
                    cluster_role(
                        "non-resource-url-prefix",
                        vec![rule("get", "", "", "/apis/*")],
                    ),
                ],
                cluster_role_bindings: vec![
                    cluster_binding("b1", "non-resource-url-getter", &["User:foo", "Group:bar"]),
                    cluster_binding("b2", "non-resource-url", &["User:admin", "Group:admin"]),
                    cluster_binding(
                        "b3",
                        "non-resource-url-prefix",
                        &["User:prefixed", "Group:prefixed"],
                    ),
                ],
                pass: vec![
                    nr("foo", "", "get", "/apis"),
                    nr("", "bar", "get", "/apis"),
                    nr("admin", "", "get", "/apis"),
                    nr("", "admin", "get", "/apis"),
                    nr("admin", "", "watch", "/apis"),
                    nr("", "admin", "watch", "/apis"),
                    nr("prefixed", "", "get", "/apis/v1"),
                    nr("", "prefixed", "get", "/apis/v1"),
                    nr("prefixed", "", "get", "/apis/v1/foobar"),
                    nr("", "prefixed", "get", "/apis/v1/foorbar"),
                ],
                fail: vec![
                    nr("foo", "", "watch", "/apis"),
                    nr("", "bar", "watch", "/apis"),
                    nr("foo", "", "get", "/api/v1"),
                    nr("", "bar", "get", "/api/v1"),
                    nr("admin", "", "get", "/api/v1"),
                    nr("", "admin", "get", "/api/v1"),
                    nr("prefixed", "", "get", "/api/v1"),
                    nr("", "prefixed", "get", "/api/v1"),
                ],
            },
            Case {
                name: "test subresource resolution: resource rule",
                roles: vec![],
                role_bindings: vec![binding(
                    "ns1",
                    "b",
                    "ClusterRole",
                    "admin",
                    &["User:admin", "Group:admins"],
                )],
                cluster_roles: vec![cluster_role("admin", vec![rule("*", "*", "pods", "*")])],
                cluster_role_bindings: vec![],
                pass: vec![da("admin", "", "get", "pods", "", "ns1")],
                fail: vec![da("admin", "", "get", "pods", "status", "ns1")],
            },
            Case {
                name: "test subresource resolution: subresource rule",
                roles: vec![],
                role_bindings: vec![binding(
                    "ns1",
                    "b",
                    "ClusterRole",
                    "admin",
                    &["User:admin", "Group:admins"],
                )],
                cluster_roles: vec![cluster_role(
                    "admin",
                    vec![rule("*", "*", "pods/status", "*")],
                )],
                cluster_role_bindings: vec![],
                pass: vec![da("admin", "", "get", "pods", "status", "ns1")],
                fail: vec![da("admin", "", "get", "pods", "", "ns1")],
            },
            Case {
                name: "namespaced role and service accounts",
                roles: vec![role(
                    "ns1",
                    "pod-reader",
                    vec![rule("get,list", "", "pods", "")],
                )],
                role_bindings: vec![
                    binding(
                        "ns1",
                        "local-sa",
                        "Role",
                        "pod-reader",
                        &["ServiceAccount:sa1"],
                    ),
                    binding(
                        "ns1",
                        "other-ns-sa",
                        "Role",
                        "pod-reader",
                        &["ServiceAccount:ns2:sa2"],
                    ),
                ],
                cluster_roles: vec![],
                cluster_role_bindings: vec![],
                pass: vec![
                    da(
                        "system:serviceaccount:ns1:sa1",
                        "",
                        "list",
                        "pods",
                        "",
                        "ns1",
                    ),
                    da(
                        "system:serviceaccount:ns2:sa2",
                        "",
                        "get",
                        "pods",
                        "",
                        "ns1",
                    ),
                ],
                fail: vec![
                    da(
                        "system:serviceaccount:ns1:sa1",
                        "",
                        "list",
                        "pods",
                        "",
                        "ns2",
                    ),
                    da("system:serviceaccount:ns1:sa1", "", "list", "pods", "", ""),
                    da(
                        "system:serviceaccount:ns1:sa1",
                        "",
                        "delete",
                        "pods",
                        "",
                        "ns1",
                    ),
                    da(
                        "system:serviceaccount:ns2:sa1",
                        "",
                        "list",
                        "pods",
                        "",
                        "ns1",
                    ),
                    da("sa1", "", "list", "pods", "", "ns1"),
                ],
            },
        ];
        for c in cases {
            let policy = Policy::new(
                c.roles,
                c.role_bindings,
                c.cluster_roles,
                c.cluster_role_bindings,
            );
            for a in &c.pass {
                assert!(
                    policy.authorize(a).allowed(),
                    "{}: incorrectly restricted {a:?}",
                    c.name
                );
            }
            for a in &c.fail {
                assert!(
                    !policy.authorize(a).allowed(),
                    "{}: incorrectly passed {a:?}",
                    c.name
                );
            }
        }
    }

    /// Upstream's `TestDefaultRuleResolver` (rule_test.go).
    #[test]
    fn default_rule_resolver() {
        let read_pods = rule("GET,WATCH", "v1", "pods", "");
        let read_services = rule("GET,WATCH", "v1", "services", "");
        let write_nodes = rule("PUT,CREATE,UPDATE", "v1", "nodes", "");
        let admin = rule("*", "*", "*", "");
        let policy = Policy::new(
            vec![role(
                "namespace1",
                "readthings",
                vec![read_pods.clone(), read_services.clone()],
            )],
            vec![binding(
                "namespace1",
                "b",
                "Role",
                "readthings",
                &["User:foobar", "Group:group1"],
            )],
            vec![
                cluster_role("cluster-admin", vec![admin.clone()]),
                cluster_role("write-nodes", vec![write_nodes]),
            ],
            vec![cluster_binding(
                "c",
                "cluster-admin",
                &["User:admin", "Group:admin"],
            )],
        );
        let cases = [
            (
                user("foobar", ""),
                "namespace1",
                vec![read_pods, read_services],
            ),
            (user("foobar", ""), "namespace2", vec![]),
            (user("foobar", "admin"), "", vec![admin]),
            (user("", ""), "", vec![]),
        ];
        for (u, ns, want) in cases {
            let (rules, errors) = policy.rules_for(&u, ns);
            assert!(errors.is_empty(), "{u:?} {ns}: {errors:?}");
            assert_eq!(rules, want, "{u:?} in {ns:?}");
        }
    }

    /// Upstream's `TestAppliesTo` (rule_test.go).
    #[test]
    fn applies_to_subjects() {
        let cases: [(&str, &[&str], UserInfo, &str, bool); 10] = [
            (
                "single subject that matches username",
                &["User:foobar"],
                user("foobar", ""),
                "",
                true,
            ),
            (
                "multiple subjects, one that matches username",
                &["User:barfoo", "User:foobar"],
                user("foobar", ""),
                "",
                true,
            ),
            (
                "multiple subjects, none that match username",
                &["User:barfoo", "User:foobar"],
                user("zimzam", ""),
                "",
                false,
            ),
            (
                "multiple subjects, one that match group",
                &["User:barfoo", "Group:foobar"],
                user("zimzam", "foobar"),
                "",
                true,
            ),
            (
                "multiple subjects, one that match group, should ignore namespace",
                &["User:barfoo", "Group:foobar"],
                user("zimzam", "foobar"),
                "namespace1",
                true,
            ),
            (
                "multiple subjects with a service account that matches",
                &[
                    "User:barfoo",
                    "Group:foobar",
                    "ServiceAccount:kube-system:default",
                ],
                user("system:serviceaccount:kube-system:default", ""),
                "default",
                true,
            ),
            (
                "* user subject name doesn't match all users",
                &["User:*"],
                user("foobar", ""),
                "default",
                false,
            ),
            (
                "binding to all authenticated and unauthenticated subjects matches authenticated user",
                &["Group:system:authenticated", "Group:system:unauthenticated"],
                user("foobar", "system:authenticated"),
                "default",
                true,
            ),
            (
                "binding to all authenticated and unauthenticated subjects matches anonymous user",
                &["Group:system:authenticated", "Group:system:unauthenticated"],
                user("system:anonymous", "system:unauthenticated"),
                "default",
                true,
            ),
            (
                "service account without namespace in a cluster binding matches nobody",
                &["ServiceAccount:default"],
                user("system:serviceaccount::default", ""),
                "",
                false,
            ),
        ];
        for (name, subj, u, ns, want) in cases {
            assert_eq!(
                applies_to(&u, &subjects(subj), ns).is_some(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn reasons_name_the_binding_role_and_subject() {
        let policy = Policy::new(
            vec![role("ns1", "r", vec![rule("get", "", "pods", "")])],
            vec![
                binding("ns1", "rb", "Role", "r", &["ServiceAccount:sa"]),
                binding("ns1", "rb2", "ClusterRole", "view", &["Group:g", "User:u"]),
            ],
            vec![cluster_role("view", vec![rule("list", "", "pods", "")])],
            vec![cluster_binding("crb", "view", &["User:bob", "Group:g"])],
        );
        let cases = [
            (
                resource(user("bob", "g"), "list", "pods", "", "", ""),
                r#"RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "view" to User "bob""#,
            ),
            (
                resource(
                    user("system:serviceaccount:ns1:sa", ""),
                    "get",
                    "pods",
                    "",
                    "ns1",
                    "",
                ),
                r#"RBAC: allowed by RoleBinding "rb/ns1" of Role "r" to ServiceAccount "sa/ns1""#,
            ),
            (
                resource(user("u", ""), "list", "pods", "", "ns1", ""),
                r#"RBAC: allowed by RoleBinding "rb2/ns1" of ClusterRole "view" to User "u""#,
            ),
        ];
        for (attrs, want) in cases {
            assert_eq!(policy.authorize(&attrs), Decision::Allow(want.to_owned()));
        }
    }

    #[test]
    fn unresolvable_roles_are_the_reason_when_nothing_allows() {
        let policy = Policy::new(
            vec![],
            vec![
                binding("ns1", "a", "Role", "missing", &["User:bob"]),
                binding("ns1", "b", "ClusterRole", "gone", &["User:bob"]),
                binding("ns1", "c", "ClusterRole", "gone", &["User:bob"]),
            ],
            vec![cluster_role("view", vec![rule("list", "", "pods", "")])],
            vec![
                cluster_binding("crb", "view", &["User:bob"]),
                cluster_binding("weird", "view", &["User:bob"]),
            ],
        );
        // A roleRef of an unknown kind (validation forbids it; stored data may not).
        let mut policy_objs = cluster_binding("odd", "x", &["User:carol"]);
        policy_objs.role_ref.kind = "Other".into();
        let odd = Policy::new(vec![], vec![], vec![], vec![policy_objs]);

        let get = resource(user("bob", ""), "get", "pods", "", "ns1", "");
        assert_eq!(
            policy.authorize(&get),
            Decision::NoOpinion(
                "RBAC: [role.rbac.authorization.k8s.io \"missing\" not found, clusterrole.rbac.authorization.k8s.io \"gone\" not found]"
                    .into()
            )
        );
        let list = resource(user("bob", ""), "list", "pods", "", "ns1", "");
        assert!(
            policy.authorize(&list).allowed(),
            "errors do not hide valid rules"
        );
        let other = resource(user("alice", ""), "get", "pods", "", "ns1", "");
        assert_eq!(policy.authorize(&other), Decision::NoOpinion(String::new()));
        let carol = resource(user("carol", ""), "get", "pods", "", "", "");
        assert_eq!(
            odd.authorize(&carol),
            Decision::NoOpinion("RBAC: unsupported role reference kind: \"Other\"".into())
        );
        let (rules, errors) = policy.rules_for(&user("bob", ""), "ns1");
        assert_eq!(rules.len(), 2);
        assert_eq!(errors.len(), 3);
    }

    #[test]
    fn first_applying_subject_is_described() {
        // Bob is both the user and in the group; the user subject comes first.
        let policy = Policy::new(
            vec![],
            vec![],
            vec![cluster_role("view", vec![rule("get", "", "pods", "")])],
            vec![cluster_binding("crb", "view", &["Group:devs", "User:bob"])],
        );
        let attrs = resource(user("bob", "devs"), "get", "pods", "", "", "");
        assert_eq!(
            policy.authorize(&attrs).reason(),
            r#"RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "view" to Group "devs""#
        );
    }

    #[test]
    fn aggregate_messages_like_utilerrors() {
        assert_eq!(aggregate_messages::<&str>(&[]), "");
        assert_eq!(aggregate_messages(&["a"]), "a");
        assert_eq!(aggregate_messages(&["a", "a"]), "a");
        assert_eq!(aggregate_messages(&["a", "b", "a"]), "[a, b]");
    }
}
