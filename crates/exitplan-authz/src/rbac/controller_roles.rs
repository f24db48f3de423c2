//! The least-privilege ClusterRoles kube-controller-manager's controllers
//! run under with `--use-service-account-credentials`
//! (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go`;
//! rules as in its `testdata/controller-roles.yaml`), for the controllers
//! exitplan runs in-process, and the scheduler's `system:kube-scheduler`.
//! Each `system:controller:<name>` role is bound to the ServiceAccount
//! `kube-system/<name>`; `system:kube-scheduler` to the user
//! `system:kube-scheduler`.

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};

use crate::rbac::bootstrap::default_meta;
use crate::rbac::escalation::RBAC_GROUP;

/// The namespace of the controllers' ServiceAccounts.
pub const CONTROLLER_NAMESPACE: &str = "kube-system";
/// The prefix of the controller roles and bindings (`system:controller:`).
pub const CONTROLLER_ROLE_PREFIX: &str = "system:controller:";
/// The scheduler's user and role name.
pub const KUBE_SCHEDULER: &str = "system:kube-scheduler";

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: strings(verbs),
        api_groups: Some(strings(groups)),
        resources: Some(strings(resources)),
        ..PolicyRule::default()
    }
}

fn named(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
    PolicyRule {
        resource_names: Some(strings(names)),
        ..rule(verbs, groups, resources)
    }
}

const READ: &[&str] = &["get", "list", "watch"];

/// `eventsRule()`: writing core and events.k8s.io events.
fn events() -> PolicyRule {
    rule(
        &["create", "patch", "update"],
        &["", "events.k8s.io"],
        &["events"],
    )
}

/// The controllers whose roles [`controller_roles`] returns, by name.
pub const CONTROLLERS: &[&str] = &[
    "clusterrole-aggregation-controller",
    "cronjob-controller",
    "deployment-controller",
    "disruption-controller",
    "generic-garbage-collector",
    "job-controller",
    "namespace-controller",
    "replicaset-controller",
    "statefulset-controller",
    "ttl-after-finished-controller",
];

/// The rules of controller `name` (one of [`CONTROLLERS`]).
fn controller_rules(name: &str) -> Vec<PolicyRule> {
    let apps_ext = &["apps", "extensions"];
    match name {
        "clusterrole-aggregation-controller" => vec![rule(
            &["escalate", "get", "list", "patch", "update", "watch"],
            &[RBAC_GROUP],
            &["clusterroles"],
        )],
        "cronjob-controller" => vec![
            rule(
                &["get", "list", "update", "watch"],
                &["batch"],
                &["cronjobs"],
            ),
            rule(
                &[
                    "create", "delete", "get", "list", "patch", "update", "watch",
                ],
                &["batch"],
                &["jobs"],
            ),
            rule(&["update"], &["batch"], &["cronjobs/status"]),
            rule(&["update"], &["batch"], &["cronjobs/finalizers"]),
            rule(&["delete", "list", "watch"], &[""], &["pods"]),
            events(),
        ],
        "deployment-controller" => vec![
            rule(
                &["get", "list", "update", "watch"],
                apps_ext,
                &["deployments"],
            ),
            rule(&["update"], apps_ext, &["deployments/status"]),
            rule(&["update"], apps_ext, &["deployments/finalizers"]),
            rule(
                &[
                    "create", "delete", "get", "list", "patch", "update", "watch",
                ],
                apps_ext,
                &["replicasets"],
            ),
            rule(&["get", "list", "update", "watch"], &[""], &["pods"]),
            events(),
        ],
        "disruption-controller" => vec![
            rule(READ, apps_ext, &["deployments"]),
            rule(READ, apps_ext, &["replicasets"]),
            rule(READ, &[""], &["replicationcontrollers"]),
            rule(READ, &["policy"], &["poddisruptionbudgets"]),
            rule(READ, &["apps"], &["statefulsets"]),
            rule(&["update"], &["policy"], &["poddisruptionbudgets/status"]),
            rule(&["patch", "update"], &[""], &["pods/status"]),
            rule(&["get"], &["*"], &["*/scale"]),
            events(),
        ],
        "generic-garbage-collector" => vec![
            rule(
                &["delete", "get", "list", "patch", "update", "watch"],
                &["*"],
                &["*"],
            ),
            events(),
        ],
        "job-controller" => vec![
            rule(
                &["get", "list", "patch", "update", "watch"],
                &["batch"],
                &["jobs"],
            ),
            rule(&["update"], &["batch"], &["jobs/status"]),
            rule(&["update"], &["batch"], &["jobs/finalizers"]),
            rule(
                &["create", "delete", "list", "patch", "watch"],
                &[""],
                &["pods"],
            ),
            events(),
        ],
        "namespace-controller" => vec![
            rule(&["delete", "get", "list", "watch"], &[""], &["namespaces"]),
            rule(
                &["update"],
                &[""],
                &["namespaces/finalize", "namespaces/status"],
            ),
            rule(
                &["delete", "deletecollection", "get", "list", "watch"],
                &["*"],
                &["*"],
            ),
        ],
        "replicaset-controller" => vec![
            rule(
                &["get", "list", "update", "watch"],
                apps_ext,
                &["replicasets"],
            ),
            rule(&["update"], apps_ext, &["replicasets/status"]),
            rule(&["update"], apps_ext, &["replicasets/finalizers"]),
            rule(
                &["create", "delete", "list", "patch", "watch"],
                &[""],
                &["pods"],
            ),
            events(),
        ],
        "statefulset-controller" => vec![
            rule(&["list", "watch"], &[""], &["pods"]),
            rule(READ, &["apps"], &["statefulsets"]),
            rule(&["update"], &["apps"], &["statefulsets/status"]),
            rule(&["update"], &["apps"], &["statefulsets/finalizers"]),
            rule(
                &["create", "delete", "get", "patch", "update"],
                &[""],
                &["pods"],
            ),
            rule(
                &[
                    "create", "delete", "get", "list", "patch", "update", "watch",
                ],
                &["apps"],
                &["controllerrevisions"],
            ),
            rule(
                &["create", "get", "list", "watch"],
                &[""],
                &["persistentvolumeclaims"],
            ),
            rule(&["delete", "update"], &[""], &["persistentvolumeclaims"]),
            rule(&["update"], &[""], &["pods/finalizers"]),
            events(),
        ],
        "ttl-after-finished-controller" => vec![
            rule(&["delete", "get", "list", "watch"], &["batch"], &["jobs"]),
            events(),
        ],
        _ => Vec::new(),
    }
}

/// The `system:kube-scheduler` rules (without the feature-gated
/// resource.k8s.io ones).
fn kube_scheduler_rules() -> Vec<PolicyRule> {
    vec![
        events(),
        rule(&["create"], &["coordination.k8s.io"], &["leases"]),
        named(
            &["get", "update"],
            &["coordination.k8s.io"],
            &["leases"],
            &["kube-scheduler"],
        ),
        rule(READ, &[""], &["nodes"]),
        rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
        rule(&["create"], &[""], &["bindings", "pods/binding"]),
        rule(&["patch", "update"], &[""], &["pods/status"]),
        rule(READ, &[""], &["replicationcontrollers", "services"]),
        rule(READ, &["apps", "extensions"], &["replicasets"]),
        rule(READ, &["apps"], &["statefulsets"]),
        rule(READ, &["policy"], &["poddisruptionbudgets"]),
        rule(
            READ,
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
        ),
        rule(&["create"], &["authentication.k8s.io"], &["tokenreviews"]),
        rule(
            &["create"],
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
        ),
        rule(READ, &["storage.k8s.io"], &["csinodes"]),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &["storage.k8s.io"], &["csidrivers"]),
        rule(READ, &["storage.k8s.io"], &["csistoragecapacities"]),
    ]
}

/// The controller roles (`system:controller:<name>` for each of
/// [`CONTROLLERS`]) and `system:kube-scheduler`, labelled and annotated as
/// every default object.
pub fn controller_roles() -> Vec<ClusterRole> {
    let mut roles: Vec<ClusterRole> = CONTROLLERS
        .iter()
        .map(|name| ClusterRole {
            metadata: default_meta(&format!("{CONTROLLER_ROLE_PREFIX}{name}"), &[]),
            rules: Some(controller_rules(name)),
            aggregation_rule: None,
        })
        .collect();
    roles.push(ClusterRole {
        metadata: default_meta(KUBE_SCHEDULER, &[]),
        rules: Some(kube_scheduler_rules()),
        aggregation_rule: None,
    });
    roles
}

fn binding(name: &str, subject: Subject) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: default_meta(name, &[]),
        role_ref: RoleRef {
            api_group: Some(RBAC_GROUP.to_owned()),
            kind: "ClusterRole".to_owned(),
            name: name.to_owned(),
        },
        subjects: Some(vec![subject]),
    }
}

/// The bindings of [`controller_roles`]: each controller role to the
/// ServiceAccount `kube-system/<name>`, `system:kube-scheduler` to the user
/// of that name.
pub fn controller_role_bindings() -> Vec<ClusterRoleBinding> {
    let mut bindings: Vec<ClusterRoleBinding> = CONTROLLERS
        .iter()
        .map(|name| {
            binding(
                &format!("{CONTROLLER_ROLE_PREFIX}{name}"),
                Subject {
                    kind: "ServiceAccount".to_owned(),
                    name: (*name).to_owned(),
                    namespace: Some(CONTROLLER_NAMESPACE.to_owned()),
                    api_group: None,
                },
            )
        })
        .collect();
    bindings.push(binding(
        KUBE_SCHEDULER,
        Subject {
            kind: "User".to_owned(),
            name: KUBE_SCHEDULER.to_owned(),
            namespace: None,
            api_group: Some(RBAC_GROUP.to_owned()),
        },
    ));
    bindings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UserInfo;
    use crate::rbac::Policy;
    use crate::rbac::testing::resource;

    fn policy() -> Policy {
        Policy::new(
            vec![],
            vec![],
            controller_roles(),
            controller_role_bindings(),
        )
    }

    #[test]
    fn every_controller_has_rules_and_a_binding() {
        let roles = controller_roles();
        let bindings = controller_role_bindings();
        assert_eq!(roles.len(), CONTROLLERS.len() + 1);
        for (role, binding) in roles.iter().zip(&bindings) {
            assert!(
                role.rules.as_ref().is_some_and(|r| !r.is_empty()),
                "{:?}",
                role.metadata.name
            );
            assert_eq!(role.metadata.name, binding.metadata.name);
            assert_eq!(
                Some(binding.role_ref.name.as_str()),
                role.metadata.name.as_deref()
            );
        }
    }

    #[test]
    fn controllers_may_do_their_job_and_nothing_else() {
        let policy = policy();
        let sa = |name: &str| UserInfo::service_account(CONTROLLER_NAMESPACE, name, "uid");
        let cases = [
            (sa("job-controller"), "create", "pods", "", "", true),
            (
                sa("job-controller"),
                "update",
                "jobs",
                "status",
                "batch",
                true,
            ),
            (
                sa("job-controller"),
                "update",
                "jobs",
                "finalizers",
                "batch",
                true,
            ),
            (
                sa("job-controller"),
                "create",
                "events",
                "",
                "events.k8s.io",
                true,
            ),
            (sa("job-controller"), "get", "secrets", "", "", false),
            (
                sa("disruption-controller"),
                "update",
                "poddisruptionbudgets",
                "status",
                "policy",
                true,
            ),
            (
                sa("disruption-controller"),
                "get",
                "deployments",
                "scale",
                "apps",
                true,
            ),
            (
                sa("disruption-controller"),
                "update",
                "deployments",
                "scale",
                "apps",
                false,
            ),
            (sa("disruption-controller"), "delete", "pods", "", "", false),
            (
                sa("generic-garbage-collector"),
                "delete",
                "widgets",
                "",
                "example.com",
                true,
            ),
            (
                sa("generic-garbage-collector"),
                "create",
                "pods",
                "",
                "",
                false,
            ),
            (
                sa("clusterrole-aggregation-controller"),
                "escalate",
                "clusterroles",
                "",
                RBAC_GROUP,
                true,
            ),
            (
                sa("namespace-controller"),
                "update",
                "namespaces",
                "finalize",
                "",
                true,
            ),
            (
                sa("namespace-controller"),
                "deletecollection",
                "pods",
                "",
                "",
                true,
            ),
            (
                UserInfo {
                    name: KUBE_SCHEDULER.into(),
                    ..UserInfo::default()
                },
                "create",
                "pods",
                "binding",
                "",
                true,
            ),
            (
                UserInfo::service_account("default", "job-controller", "u"),
                "create",
                "pods",
                "",
                "",
                false,
            ),
        ];
        for (user, verb, res, sub, group, want) in cases {
            let name = user.name.clone();
            let attrs = resource(user, verb, res, sub, "ns", group);
            assert_eq!(
                policy.authorize(&attrs).allowed(),
                want,
                "{name} {verb} {res}/{sub}"
            );
        }
    }
}
