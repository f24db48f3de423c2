//! The default ClusterRoles and ClusterRoleBindings kube-apiserver creates
//! at start-up (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`;
//! rules as in its `testdata/cluster-roles.yaml`). `system:masters` may do
//! everything through the `cluster-admin` binding here, as upstream.
//!
//! `admin`, `edit` and `view` carry only an aggregationRule: their rules are
//! gathered from the `system:aggregate-to-*` roles (and each other) by
//! [`crate::rbac::aggregation`], which the server runs after storing these.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::groups;
use crate::rbac::escalation::RBAC_GROUP;

/// The annotation marking a default object the server may reconcile
/// (`rbac.authorization.kubernetes.io/autoupdate: "true"`).
pub const AUTOUPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";
/// The label on every default object (`kubernetes.io/bootstrapping: rbac-defaults`).
pub const BOOTSTRAPPING_LABEL: &str = "kubernetes.io/bootstrapping";
/// The value of [`BOOTSTRAPPING_LABEL`].
pub const BOOTSTRAPPING_VALUE: &str = "rbac-defaults";
/// Label selecting a ClusterRole into `admin`.
pub const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
/// Label selecting a ClusterRole into `edit`.
pub const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
/// Label selecting a ClusterRole into `view`.
pub const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
const READ_WRITE: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// A resource rule.
fn res(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: strings(verbs),
        api_groups: Some(strings(groups)),
        resources: Some(strings(resources)),
        ..PolicyRule::default()
    }
}

/// A non-resource rule.
fn urls(verbs: &[&str], urls: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: strings(verbs),
        non_resource_urls: Some(strings(urls)),
        ..PolicyRule::default()
    }
}

/// The metadata of a default object: its name, the autoupdate annotation,
/// the bootstrapping label and the given labels set to `"true"`.
pub(crate) fn default_meta(name: &str, extra_labels: &[&str]) -> ObjectMeta {
    let mut labels = BTreeMap::from([(
        BOOTSTRAPPING_LABEL.to_owned(),
        BOOTSTRAPPING_VALUE.to_owned(),
    )]);
    for l in extra_labels {
        labels.insert((*l).to_owned(), "true".to_owned());
    }
    ObjectMeta {
        name: Some(name.to_owned()),
        annotations: Some(BTreeMap::from([(
            AUTOUPDATE_ANNOTATION.to_owned(),
            "true".to_owned(),
        )])),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

fn role(name: &str, labels: &[&str], rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: default_meta(name, labels),
        rules: Some(rules),
        aggregation_rule: None,
    }
}

/// A role whose rules are aggregated from the roles labelled `from`.
fn aggregated(name: &str, labels: &[&str], from: &str) -> ClusterRole {
    ClusterRole {
        metadata: default_meta(name, labels),
        rules: None,
        aggregation_rule: Some(AggregationRule {
            cluster_role_selectors: Some(vec![LabelSelector {
                match_labels: Some(BTreeMap::from([(from.to_owned(), "true".to_owned())])),
                match_expressions: None,
            }]),
        }),
    }
}

/// The default ClusterRoles: `cluster-admin`, `system:discovery`,
/// `system:monitoring`, `system:basic-user`, `system:public-info-viewer`,
/// `admin`, `edit`, `view`, `system:aggregate-to-admin`,
/// `system:aggregate-to-edit`, `system:aggregate-to-view`,
/// `system:auth-delegator` and `system:service-account-issuer-discovery`.
pub fn cluster_roles() -> Vec<ClusterRole> {
    vec![
        // A "root" role which can do absolutely anything.
        role(
            "cluster-admin",
            &[],
            vec![res(&["*"], &["*"], &["*"]), urls(&["*"], &["*"])],
        ),
        // Just enough power to discover API versions for negotiation.
        role(
            "system:discovery",
            &[],
            vec![urls(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        role(
            "system:monitoring",
            &[],
            vec![urls(
                &["get"],
                &[
                    "/healthz",
                    "/healthz/*",
                    "/livez",
                    "/livez/*",
                    "/metrics",
                    "/metrics/slis",
                    "/readyz",
                    "/readyz/*",
                ],
            )],
        ),
        // Lets a user learn about themselves.
        role(
            "system:basic-user",
            &[],
            vec![
                res(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                res(
                    &["create"],
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        // Public cluster information, for everyone.
        role(
            "system:public-info-viewer",
            &[],
            vec![urls(
                &["get"],
                &["/healthz", "/livez", "/readyz", "/version", "/version/"],
            )],
        ),
        aggregated("admin", &[], AGGREGATE_TO_ADMIN),
        aggregated("edit", &[AGGREGATE_TO_ADMIN], AGGREGATE_TO_EDIT),
        aggregated("view", &[AGGREGATE_TO_EDIT], AGGREGATE_TO_VIEW),
        role(
            "system:aggregate-to-admin",
            &[AGGREGATE_TO_ADMIN],
            vec![
                res(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["localsubjectaccessreviews"],
                ),
                res(READ_WRITE, &[RBAC_GROUP], &["rolebindings", "roles"]),
            ],
        ),
        role(
            "system:aggregate-to-edit",
            &[AGGREGATE_TO_EDIT],
            aggregate_to_edit(),
        ),
        role(
            "system:aggregate-to-view",
            &[AGGREGATE_TO_VIEW],
            aggregate_to_view(),
        ),
        role(
            "system:auth-delegator",
            &[],
            vec![
                res(&["create"], &["authentication.k8s.io"], &["tokenreviews"]),
                res(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["subjectaccessreviews"],
                ),
            ],
        ),
        role(
            "system:service-account-issuer-discovery",
            &[],
            vec![urls(
                &["get"],
                &["/.well-known/openid-configuration", "/openid/v1/jwks"],
            )],
        ),
    ]
}

/// `system:aggregate-to-edit`: writing user-level resources, reading the
/// escalating ones (secrets, exec, ...), no `/status` writes, quotas or
/// limits.
fn aggregate_to_edit() -> Vec<PolicyRule> {
    vec![
        res(
            READ,
            &[""],
            &[
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
        ),
        res(&["impersonate"], &[""], &["serviceaccounts"]),
        res(
            WRITE,
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
            ],
        ),
        res(&["create"], &[""], &["pods/eviction"]),
        res(
            WRITE,
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
        ),
        res(&["create"], &[""], &["serviceaccounts/token"]),
        res(
            WRITE,
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        res(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        res(WRITE, &["batch"], &["cronjobs", "jobs"]),
        res(
            WRITE,
            &["extensions"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "ingresses",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicationcontrollers/scale",
            ],
        ),
        res(WRITE, &["policy"], &["poddisruptionbudgets"]),
        res(
            WRITE,
            &["networking.k8s.io"],
            &["ingresses", "networkpolicies"],
        ),
        res(READ_WRITE, &["coordination.k8s.io"], &["leases"]),
    ]
}

/// `system:aggregate-to-view`: reading non-escalating resources.
fn aggregate_to_view() -> Vec<PolicyRule> {
    vec![
        res(
            READ,
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
        ),
        res(
            READ,
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
        ),
        res(READ, &[""], &["namespaces"]),
        res(READ, &["discovery.k8s.io"], &["endpointslices"]),
        res(
            READ,
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
        ),
        res(
            READ,
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        res(
            READ,
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
        ),
        res(
            READ,
            &["extensions"],
            &[
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "ingresses",
                "ingresses/status",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "replicationcontrollers/scale",
            ],
        ),
        res(
            READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        res(
            READ,
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
        ),
    ]
}

/// A ClusterRoleBinding of the same-named ClusterRole to groups.
fn binding(name: &str, to_groups: &[&str]) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: default_meta(name, &[]),
        role_ref: RoleRef {
            api_group: Some(RBAC_GROUP.to_owned()),
            kind: "ClusterRole".to_owned(),
            name: name.to_owned(),
        },
        subjects: Some(
            to_groups
                .iter()
                .map(|g| Subject {
                    api_group: Some(RBAC_GROUP.to_owned()),
                    kind: "Group".to_owned(),
                    name: (*g).to_owned(),
                    namespace: None,
                })
                .collect(),
        ),
    }
}

/// The default ClusterRoleBindings: `cluster-admin` to `system:masters`,
/// `system:monitoring` to `system:monitoring`, `system:discovery` and
/// `system:basic-user` to `system:authenticated`,
/// `system:public-info-viewer` to `system:authenticated` and
/// `system:unauthenticated`, and `system:service-account-issuer-discovery`
/// to `system:serviceaccounts`.
pub fn cluster_role_bindings() -> Vec<ClusterRoleBinding> {
    vec![
        binding("cluster-admin", &[groups::SYSTEM_MASTERS]),
        binding("system:monitoring", &["system:monitoring"]),
        binding("system:discovery", &[groups::AUTHENTICATED]),
        binding("system:basic-user", &[groups::AUTHENTICATED]),
        binding(
            "system:public-info-viewer",
            &[groups::AUTHENTICATED, groups::UNAUTHENTICATED],
        ),
        binding(
            "system:service-account-issuer-discovery",
            &[groups::SERVICE_ACCOUNTS],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Decision;
    use crate::rbac::Policy;
    use crate::rbac::aggregation::aggregate;
    use crate::rbac::testing::{non_resource, resource, user};

    /// The bootstrap roles with their aggregated rules filled in, as the
    /// server stores them after start-up.
    fn settled_roles() -> Vec<ClusterRole> {
        let mut roles = cluster_roles();
        for (name, rules) in aggregate(&roles) {
            if let Some(r) = roles
                .iter_mut()
                .find(|r| r.metadata.name.as_deref() == Some(&name))
            {
                r.rules = Some(rules);
            }
        }
        roles
    }

    fn policy_with(bindings: Vec<k8s_openapi::api::rbac::v1::RoleBinding>) -> Policy {
        Policy::new(vec![], bindings, settled_roles(), cluster_role_bindings())
    }

    #[test]
    fn every_default_object_is_labelled_and_autoupdated() {
        let metas = cluster_roles()
            .into_iter()
            .map(|r| r.metadata)
            .chain(cluster_role_bindings().into_iter().map(|b| b.metadata));
        for m in metas {
            let labels = m.labels.unwrap_or_default();
            let annotations = m.annotations.unwrap_or_default();
            assert_eq!(
                labels.get(BOOTSTRAPPING_LABEL).map(String::as_str),
                Some("rbac-defaults"),
                "{:?}",
                m.name
            );
            assert_eq!(
                annotations.get(AUTOUPDATE_ANNOTATION).map(String::as_str),
                Some("true"),
                "{:?}",
                m.name
            );
        }
    }

    #[test]
    fn aggregation_fills_admin_edit_and_view() {
        let roles = settled_roles();
        let rules_of = |name: &str| {
            roles
                .iter()
                .find(|r| r.metadata.name.as_deref() == Some(name))
                .and_then(|r| r.rules.clone())
                .unwrap_or_default()
        };
        let view = rules_of("view");
        let edit = rules_of("edit");
        let admin = rules_of("admin");
        assert_eq!(view, aggregate_to_view());
        assert_eq!(edit, [aggregate_to_edit(), aggregate_to_view()].concat());
        let mut want_admin = edit.clone();
        want_admin.extend(rules_of("system:aggregate-to-admin"));
        assert_eq!(admin, want_admin);
    }

    #[test]
    fn masters_may_do_everything_through_cluster_admin() {
        let policy = policy_with(vec![]);
        let root = user("kubernetes-admin", "system:masters,system:authenticated");
        for attrs in [
            resource(root.clone(), "delete", "nodes", "", "", ""),
            resource(root.clone(), "escalate", "clusterroles", "", "", RBAC_GROUP),
            resource(root.clone(), "create", "pods", "eviction", "ns", ""),
            non_resource(root.clone(), "get", "/metrics"),
        ] {
            assert_eq!(
                policy.authorize(&attrs),
                Decision::Allow(
                    "RBAC: allowed by ClusterRoleBinding \"cluster-admin\" of ClusterRole \"cluster-admin\" to Group \"system:masters\"".into()
                )
            );
        }
    }

    #[test]
    fn default_bindings_for_everyone() {
        let policy = policy_with(vec![]);
        let bob = user("bob", "system:authenticated");
        let anon = user("system:anonymous", "system:unauthenticated");
        let cases = [
            (non_resource(bob.clone(), "get", "/apis/apps/v1"), true),
            (non_resource(bob.clone(), "get", "/version"), true),
            (non_resource(bob.clone(), "get", "/metrics"), false),
            (
                resource(
                    bob.clone(),
                    "create",
                    "selfsubjectaccessreviews",
                    "",
                    "",
                    "authorization.k8s.io",
                ),
                true,
            ),
            (
                resource(
                    bob.clone(),
                    "create",
                    "selfsubjectrulesreviews",
                    "",
                    "",
                    "authorization.k8s.io",
                ),
                true,
            ),
            (
                resource(
                    bob.clone(),
                    "create",
                    "selfsubjectreviews",
                    "",
                    "",
                    "authentication.k8s.io",
                ),
                true,
            ),
            (
                resource(bob.clone(), "list", "pods", "", "default", ""),
                false,
            ),
            (non_resource(anon.clone(), "get", "/version"), true),
            (non_resource(anon.clone(), "get", "/healthz"), true),
            (non_resource(anon.clone(), "get", "/apis"), false),
            (
                resource(
                    anon,
                    "create",
                    "selfsubjectaccessreviews",
                    "",
                    "",
                    "authorization.k8s.io",
                ),
                false,
            ),
        ];
        for (attrs, want) in cases {
            assert_eq!(policy.authorize(&attrs).allowed(), want, "{attrs:?}");
        }
    }

    #[test]
    fn view_edit_admin_in_a_namespace() {
        use crate::rbac::testing::binding;
        let policy = policy_with(vec![
            binding("ns", "v", "ClusterRole", "view", &["User:viewer"]),
            binding("ns", "e", "ClusterRole", "edit", &["User:editor"]),
            binding("ns", "a", "ClusterRole", "admin", &["User:admin"]),
        ]);
        let can = |who: &str, verb: &str, res: &str, sub: &str, group: &str| {
            policy
                .authorize(&resource(
                    user(who, "system:authenticated"),
                    verb,
                    res,
                    sub,
                    "ns",
                    group,
                ))
                .allowed()
        };
        // view: reads, no secrets, no writes.
        assert!(can("viewer", "list", "pods", "", ""));
        assert!(can("viewer", "get", "jobs", "status", "batch"));
        assert!(!can("viewer", "get", "secrets", "", ""));
        assert!(!can("viewer", "create", "pods", "", ""));
        // edit: writes, secrets, evictions and tokens, but no roles.
        assert!(can("editor", "create", "pods", "eviction", ""));
        assert!(can("editor", "create", "serviceaccounts", "token", ""));
        assert!(can("editor", "get", "secrets", "", ""));
        assert!(can("editor", "deletecollection", "jobs", "", "batch"));
        assert!(can("editor", "watch", "deployments", "", "apps"));
        assert!(!can("editor", "create", "roles", "", RBAC_GROUP));
        assert!(!can("editor", "update", "pods", "status", ""));
        // admin: edit plus roles and bindings.
        assert!(can("admin", "create", "rolebindings", "", RBAC_GROUP));
        assert!(can("admin", "create", "pods", "eviction", ""));
        assert!(!can("admin", "delete", "namespaces", "", ""));
        // Only in that namespace.
        let other = resource(user("admin", ""), "list", "pods", "", "other", "");
        assert!(!policy.authorize(&other).allowed());
    }
}
