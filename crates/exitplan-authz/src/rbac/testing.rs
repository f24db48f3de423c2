//! Builders for the RBAC unit tests (upstream's `newRole`,
//! `newClusterRoleBinding`, ... in `rbac_test.go`).

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{Attributes, UserInfo};

const GROUP: &str = "rbac.authorization.k8s.io";

/// `newRule("verbs", "groups", "resources", "urls")`: comma-separated lists.
pub fn rule(verbs: &str, groups: &str, resources: &str, urls: &str) -> PolicyRule {
    let split = |s: &str| Some(s.split(',').map(str::to_owned).collect::<Vec<_>>());
    PolicyRule {
        verbs: verbs.split(',').map(str::to_owned).collect(),
        api_groups: split(groups),
        resources: split(resources),
        non_resource_urls: split(urls),
        resource_names: None,
    }
}

/// A Role.
pub fn role(ns: &str, name: &str, rules: Vec<PolicyRule>) -> Role {
    Role {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        rules: Some(rules),
    }
}

/// A ClusterRole.
pub fn cluster_role(name: &str, rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        rules: Some(rules),
        aggregation_rule: None,
    }
}

/// Subjects from `Kind:name` strings (`ServiceAccount:ns:name` for
/// namespaced service accounts, `ServiceAccount:name` without namespace).
pub fn subjects(specs: &[&str]) -> Vec<Subject> {
    specs
        .iter()
        .map(|s| {
            let (kind, name) = s.split_once(':').unwrap_or((s, ""));
            if kind == "ServiceAccount" {
                let (ns, name) = match name.split_once(':') {
                    Some((ns, n)) => (Some(ns.to_owned()), n),
                    None => (None, name),
                };
                return Subject {
                    kind: kind.into(),
                    name: name.into(),
                    namespace: ns,
                    api_group: Some(String::new()),
                };
            }
            Subject {
                kind: kind.into(),
                name: name.into(),
                namespace: None,
                api_group: Some(GROUP.into()),
            }
        })
        .collect()
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some(GROUP.into()),
        kind: kind.into(),
        name: name.into(),
    }
}

/// A ClusterRoleBinding named `name` of ClusterRole `role`.
pub fn cluster_binding(name: &str, role: &str, subj: &[&str]) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        role_ref: role_ref("ClusterRole", role),
        subjects: Some(subjects(subj)),
    }
}

/// A RoleBinding in `ns` named `name` of `kind` (`Role`/`ClusterRole`) `role`.
pub fn binding(ns: &str, name: &str, kind: &str, role: &str, subj: &[&str]) -> RoleBinding {
    RoleBinding {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        role_ref: role_ref(kind, role),
        subjects: Some(subjects(subj)),
    }
}

/// A user with comma-separated groups (`""`: none).
pub fn user(name: &str, groups: &str) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups
            .split(',')
            .filter(|g| !g.is_empty())
            .map(str::to_owned)
            .collect(),
        ..UserInfo::default()
    }
}

/// A resource request (upstream's `defaultAttributes`).
pub fn resource(
    user: UserInfo,
    verb: &str,
    res: &str,
    sub: &str,
    ns: &str,
    group: &str,
) -> Attributes {
    Attributes {
        user,
        verb: verb.into(),
        resource_request: true,
        namespace: ns.into(),
        api_group: group.into(),
        resource: res.into(),
        subresource: sub.into(),
        ..Attributes::default()
    }
}

/// A non-resource request.
pub fn non_resource(user: UserInfo, verb: &str, path: &str) -> Attributes {
    Attributes {
        user,
        verb: verb.into(),
        path: path.into(),
        ..Attributes::default()
    }
}
