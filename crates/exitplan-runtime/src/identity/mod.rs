//! Who each part of the runtime acts as, and the least-privilege RBAC it
//! needs: kube-controller-manager's `--use-service-account-credentials`
//! for exitplan's components.
//!
//! Every component runs under its own ServiceAccount in `kube-system`,
//! bound by a ClusterRoleBinding of the same name to a ClusterRole that
//! grants exactly the API calls the component's code makes (its reads come
//! from the shared informers, which have their own identity). The names
//! follow upstream's `controller_policy.go`: ServiceAccount `<name>`,
//! ClusterRole and ClusterRoleBinding `system:controller:<name>`.
//!
//! | identity | ServiceAccount | ClusterRole | upstream analogue |
//! |---|---|---|---|
//! | shared informers | `exitplan-controller-manager` | `system:exitplan-controller-manager` | the `system:kube-controller-manager` user's shared informers |
//! | evictionrequest-controller | `evictionrequest-controller` | `system:controller:evictionrequest-controller` | — |
//! | imperative evictor | `imperative-evictor` | `system:controller:imperative-evictor` | — |
//! | disruption controller | `disruption-controller` | `system:controller:disruption-controller` | same names |
//! | garbage collector | `generic-garbage-collector` | `system:controller:generic-garbage-collector` | same names |
//! | Job controller | `job-controller` | `system:controller:job-controller` | same names |
//! | scheduler | `exitplan-scheduler` | `system:exitplan-scheduler` | the `system:kube-scheduler` user |
//! | simulated nodes | `exitplan-node-simulator` | `system:exitplan-node-simulator` | the `system:node:<name>` users |
//!
//! The scheduler and the simulated nodes are ServiceAccounts (not users
//! like upstream's `system:kube-scheduler` and `system:node:<name>`)
//! because a ServiceAccount token is the one credential the embedded
//! server issues; their roles are not `system:controller:` ones as they are
//! not controllers. All simulated nodes share one account: there is no
//! Node authorizer to confine a kubelet to its own node and pods.
//!
//! Compared with upstream's roles, ours are narrower where the code is:
//! reads (get/list/watch of pods, Jobs, PDBs…) belong to the shared
//! informers, not to each controller; events are granted only to the Job
//! controller, the only component that writes them (`create` in
//! `events.k8s.io`); the garbage collector has no `update` (it patches).
//! `jobs/finalizers` `update` is kept for the Job controller: its pods carry
//! `blockOwnerDeletion: true`, which a real cluster's
//! `OwnerReferencesPermissionEnforcement` admission checks.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::runtime::Component;

pub mod provision;

/// The namespace of every identity's ServiceAccount.
pub const NAMESPACE: &str = "kube-system";

/// The label every object of [`Identity::objects`] carries, as upstream's
/// bootstrap policy carries `kubernetes.io/bootstrapping`.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY_LABEL`].
pub const MANAGED_BY: &str = "exitplan";

/// A part of the runtime that talks to the API server under its own name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Identity {
    /// The shared informers (one list/watch per cached kind for all
    /// components).
    SharedInformers,
    /// One component of [`Component`].
    Component(Component),
    /// The simulated nodes (kubelets), all of them.
    NodeSimulator,
}

/// Every identity, informers first.
pub const ALL: [Identity; 8] = [
    Identity::SharedInformers,
    Identity::Component(Component::EvictionRequest),
    Identity::Component(Component::ImperativeEvictor),
    Identity::Component(Component::Disruption),
    Identity::Component(Component::GarbageCollector),
    Identity::Component(Component::Scheduler),
    Identity::Component(Component::Job),
    Identity::NodeSimulator,
];

/// The objects that give one identity its rights: its ServiceAccount, its
/// ClusterRole and the ClusterRoleBinding of one to the other.
#[derive(Clone, Debug, PartialEq)]
pub struct IdentityObjects {
    /// The ServiceAccount in [`NAMESPACE`].
    pub service_account: ServiceAccount,
    /// The ClusterRole.
    pub cluster_role: ClusterRole,
    /// The ClusterRoleBinding (same name as the role).
    pub cluster_role_binding: ClusterRoleBinding,
}

impl Identity {
    /// The ServiceAccount's name (in [`NAMESPACE`]).
    pub fn service_account(self) -> &'static str {
        match self {
            Identity::SharedInformers => "exitplan-controller-manager",
            Identity::Component(c) => match c {
                Component::EvictionRequest => "evictionrequest-controller",
                Component::ImperativeEvictor => "imperative-evictor",
                Component::Disruption => "disruption-controller",
                Component::GarbageCollector => "generic-garbage-collector",
                Component::Scheduler => "exitplan-scheduler",
                Component::Job => "job-controller",
            },
            Identity::NodeSimulator => "exitplan-node-simulator",
        }
    }

    /// The username the server authenticates the account's tokens as.
    pub fn username(self) -> String {
        format!(
            "system:serviceaccount:{NAMESPACE}:{}",
            self.service_account()
        )
    }

    /// The ClusterRole's (and ClusterRoleBinding's) name:
    /// `system:controller:<account>` for controllers, `system:<account>`
    /// for the others.
    pub fn role_name(self) -> String {
        match self {
            Identity::Component(Component::Scheduler)
            | Identity::SharedInformers
            | Identity::NodeSimulator => format!("system:{}", self.service_account()),
            Identity::Component(_) => format!("system:controller:{}", self.service_account()),
        }
    }

    /// The role's rules: exactly the calls the identity's code makes.
    pub fn rules(self) -> Vec<PolicyRule> {
        match self {
            Identity::SharedInformers => vec![
                rule(&["list", "watch"], "", &["nodes", "pods"]),
                rule(&["list", "watch"], "batch", &["jobs"]),
                rule(
                    &["list", "watch"],
                    "lifecycle.k8s.io",
                    &["evictionrequests", "evictions"],
                ),
                rule(&["list", "watch"], "policy", &["poddisruptionbudgets"]),
            ],
            Identity::Component(c) => component_rules(c),
            Identity::NodeSimulator => vec![
                // Registration: create, or adopt (get, then add labels).
                rule(&["create", "get", "patch"], "", &["nodes"]),
                // The heartbeat.
                rule(&["patch"], "", &["nodes/status"]),
                // The kubelet: pod status, and the final grace-0 delete.
                rule(&["update"], "", &["pods/status"]),
                rule(&["delete"], "", &["pods"]),
            ],
        }
    }

    /// The ServiceAccount, ClusterRole and ClusterRoleBinding.
    pub fn objects(self) -> IdentityObjects {
        let account = self.service_account();
        let role = self.role_name();
        let meta = |name: &str, namespace: Option<&str>| ObjectMeta {
            name: Some(name.to_owned()),
            namespace: namespace.map(str::to_owned),
            labels: Some(BTreeMap::from([(
                MANAGED_BY_LABEL.to_owned(),
                MANAGED_BY.to_owned(),
            )])),
            ..ObjectMeta::default()
        };
        IdentityObjects {
            service_account: ServiceAccount {
                metadata: meta(account, Some(NAMESPACE)),
                ..ServiceAccount::default()
            },
            cluster_role: ClusterRole {
                metadata: meta(&role, None),
                rules: Some(self.rules()),
                ..ClusterRole::default()
            },
            cluster_role_binding: ClusterRoleBinding {
                metadata: meta(&role, None),
                role_ref: RoleRef {
                    api_group: Some("rbac.authorization.k8s.io".to_owned()),
                    kind: "ClusterRole".to_owned(),
                    name: role.clone(),
                },
                subjects: Some(vec![Subject {
                    kind: "ServiceAccount".to_owned(),
                    name: account.to_owned(),
                    namespace: Some(NAMESPACE.to_owned()),
                    ..Subject::default()
                }]),
            },
        }
    }
}

/// The rules (for a Role in the Lease's namespace) that leader election on
/// the Lease `lease` needs ([`crate::leader`]: it reads and renews that
/// Lease, and creates it when missing — `create` cannot be limited to a
/// name, as upstream's leader-election roles also grant it unnamed). For
/// `exitplan controller` (its replicas' identity adds these to the roles
/// of the components it runs and to the shared informers').
pub fn leader_election_rules(lease: &str) -> Vec<PolicyRule> {
    vec![
        rule(&["create"], "coordination.k8s.io", &["leases"]),
        PolicyRule {
            resource_names: Some(vec![lease.to_owned()]),
            ..rule(&["get", "update"], "coordination.k8s.io", &["leases"])
        },
    ]
}

/// The rules of a component's own client.
fn component_rules(c: Component) -> Vec<PolicyRule> {
    match c {
        Component::EvictionRequest => vec![
            // Server-side apply creates (hence `create`: upstream authorizes
            // an apply that creates as a create too), refreshes and the
            // UID-preconditioned delete of a superseded Eviction.
            rule(
                &["create", "delete", "patch"],
                "lifecycle.k8s.io",
                &["evictions"],
            ),
            rule(
                &["patch"],
                "lifecycle.k8s.io",
                &["evictionrequests/status", "evictions/status"],
            ),
        ],
        Component::ImperativeEvictor => vec![
            rule(&["create"], "", &["pods/eviction"]),
            rule(&["patch"], "lifecycle.k8s.io", &["evictions/status"]),
        ],
        Component::Disruption => vec![
            rule(&["update"], "policy", &["poddisruptionbudgets/status"]),
            // Resetting a stale DisruptionTarget condition.
            rule(&["update"], "", &["pods/status"]),
        ],
        Component::GarbageCollector => vec![
            // Discovery-driven: every served kind, custom ones included
            // (upstream's role, without `update`).
            rule(&["delete", "get", "list", "patch", "watch"], "*", &["*"]),
        ],
        Component::Scheduler => vec![
            rule(&["create"], "", &["pods/binding"]),
            // `PodScheduled=False` (Unschedulable).
            rule(&["patch"], "", &["pods/status"]),
        ],
        Component::Job => vec![
            // Creates, deletes, adopts/releases (strategic merge patches) and
            // removes the tracking finalizer of its pods.
            rule(&["create", "delete", "patch"], "", &["pods"]),
            // `canAdoptFunc`'s fresh read.
            rule(&["get"], "batch", &["jobs"]),
            rule(&["update"], "batch", &["jobs/status"]),
            // Pods with `blockOwnerDeletion: true` (a real cluster's
            // OwnerReferencesPermissionEnforcement).
            rule(&["update"], "batch", &["jobs/finalizers"]),
            rule(&["create"], "events.k8s.io", &["events"]),
        ],
    }
}

/// A rule granting `verbs` on `resources` of `group`.
fn rule(verbs: &[&str], group: &str, resources: &[&str]) -> PolicyRule {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(owned(resources)),
        verbs: owned(verbs),
        ..PolicyRule::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One API call: verb, group, resource (`<resource>/<subresource>`).
    type Call = (&'static str, &'static str, &'static str);

    /// The calls each identity's code makes (surveyed from the sources;
    /// the integration test `tests/identity.rs` proves them against the
    /// server with RBAC enforced).
    fn calls(id: Identity) -> Vec<Call> {
        match id {
            Identity::SharedInformers => vec![
                ("list", "", "pods"),
                ("watch", "", "pods"),
                ("list", "", "nodes"),
                ("watch", "", "nodes"),
                ("list", "lifecycle.k8s.io", "evictions"),
                ("watch", "lifecycle.k8s.io", "evictions"),
                ("list", "lifecycle.k8s.io", "evictionrequests"),
                ("watch", "lifecycle.k8s.io", "evictionrequests"),
                ("list", "policy", "poddisruptionbudgets"),
                ("watch", "policy", "poddisruptionbudgets"),
                ("list", "batch", "jobs"),
                ("watch", "batch", "jobs"),
            ],
            Identity::Component(Component::EvictionRequest) => vec![
                ("create", "lifecycle.k8s.io", "evictions"),
                ("patch", "lifecycle.k8s.io", "evictions"),
                ("delete", "lifecycle.k8s.io", "evictions"),
                ("patch", "lifecycle.k8s.io", "evictions/status"),
                ("patch", "lifecycle.k8s.io", "evictionrequests/status"),
            ],
            Identity::Component(Component::ImperativeEvictor) => vec![
                ("create", "", "pods/eviction"),
                ("patch", "lifecycle.k8s.io", "evictions/status"),
            ],
            Identity::Component(Component::Disruption) => vec![
                ("update", "policy", "poddisruptionbudgets/status"),
                ("update", "", "pods/status"),
            ],
            Identity::Component(Component::GarbageCollector) => vec![
                ("list", "", "namespaces"),
                ("watch", "coordination.k8s.io", "leases"),
                ("list", "events.k8s.io", "events"),
                ("watch", "apiextensions.k8s.io", "customresourcedefinitions"),
                ("get", "example.com", "widgets"),
                ("patch", "", "pods"),
                ("delete", "batch", "jobs"),
            ],
            Identity::Component(Component::Scheduler) => {
                vec![("create", "", "pods/binding"), ("patch", "", "pods/status")]
            }
            Identity::Component(Component::Job) => vec![
                ("create", "", "pods"),
                ("delete", "", "pods"),
                ("patch", "", "pods"),
                ("get", "batch", "jobs"),
                ("update", "batch", "jobs/status"),
                ("update", "batch", "jobs/finalizers"),
                ("create", "events.k8s.io", "events"),
            ],
            Identity::NodeSimulator => vec![
                ("create", "", "nodes"),
                ("get", "", "nodes"),
                ("patch", "", "nodes"),
                ("patch", "", "nodes/status"),
                ("update", "", "pods/status"),
                ("delete", "", "pods"),
            ],
        }
    }

    /// Whether `rules` allow `call`, as the server's RBAC authorizer
    /// matches one rule (`exitplan_authz::rbac::rule::rules_allow`).
    fn allows(rules: &[PolicyRule], (verb, group, resource): Call) -> bool {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let attrs = exitplan_authz::Attributes {
            verb: verb.to_owned(),
            resource_request: true,
            namespace: "default".to_owned(),
            api_group: group.to_owned(),
            resource: resource.to_owned(),
            subresource: subresource.to_owned(),
            name: "x".to_owned(),
            ..exitplan_authz::Attributes::default()
        };
        exitplan_authz::rbac::rule::rules_allow(&attrs, rules)
    }

    /// The roles the server bootstraps under the same names (upstream's
    /// controller roles) grant everything ours do, so the union the
    /// reconciliation stores is upstream's role.
    #[test]
    fn upstream_roles_cover_ours() {
        let upstream = exitplan_authz::rbac::controller_roles::controller_roles();
        let mut shared = 0;
        for id in ALL {
            let Some(theirs) = upstream
                .iter()
                .find(|r| r.metadata.name.as_deref() == Some(id.role_name().as_str()))
            else {
                continue;
            };
            shared += 1;
            let (covered, missing) = exitplan_authz::rbac::escalation::covers(
                theirs.rules.as_deref().unwrap_or_default(),
                &id.rules(),
            );
            assert!(covered, "{id:?}: upstream's role lacks {missing:?}");
        }
        assert_eq!(
            shared, 3,
            "job-controller, disruption-controller, generic-garbage-collector"
        );
    }

    #[test]
    fn every_call_is_granted() {
        for id in ALL {
            let rules = id.rules();
            for call in calls(id) {
                assert!(allows(&rules, call), "{id:?} may not {call:?}");
            }
        }
    }

    /// Least privilege: every verb × resource a rule names (wildcards
    /// aside) is a call the identity makes.
    #[test]
    fn nothing_beyond_the_calls() {
        for id in ALL {
            let calls = calls(id);
            for r in id.rules() {
                for verb in &r.verbs {
                    for group in r.api_groups.iter().flatten() {
                        for resource in r.resources.iter().flatten() {
                            let used = calls.iter().any(|(v, g, res)| {
                                v == verb
                                    && (group == "*" || g == group)
                                    && (resource == "*" || res == resource)
                            });
                            assert!(used, "{id:?} is granted {verb} {group}/{resource} unused");
                        }
                    }
                }
            }
        }
    }

    /// What each identity must not do (a few probes per role).
    #[test]
    fn denied_calls() {
        let cases: &[(Identity, Call)] = &[
            (Identity::SharedInformers, ("get", "", "pods")),
            (Identity::SharedInformers, ("list", "", "secrets")),
            (
                Identity::Component(Component::EvictionRequest),
                ("create", "", "pods/eviction"),
            ),
            (
                Identity::Component(Component::EvictionRequest),
                ("update", "lifecycle.k8s.io", "evictionrequests"),
            ),
            (
                Identity::Component(Component::ImperativeEvictor),
                ("delete", "", "pods"),
            ),
            (
                Identity::Component(Component::ImperativeEvictor),
                ("patch", "lifecycle.k8s.io", "evictions"),
            ),
            (
                Identity::Component(Component::Disruption),
                ("update", "policy", "poddisruptionbudgets"),
            ),
            (
                Identity::Component(Component::GarbageCollector),
                ("update", "", "pods"),
            ),
            (
                Identity::Component(Component::GarbageCollector),
                ("create", "", "pods"),
            ),
            (
                Identity::Component(Component::Scheduler),
                ("update", "", "pods"),
            ),
            (
                Identity::Component(Component::Job),
                ("update", "batch", "jobs"),
            ),
            (
                Identity::Component(Component::Job),
                ("create", "", "events"),
            ),
            (Identity::NodeSimulator, ("create", "", "pods")),
            (Identity::NodeSimulator, ("delete", "", "nodes")),
        ];
        for (id, call) in cases {
            assert!(!allows(&id.rules(), *call), "{id:?} may {call:?}");
        }
    }

    #[test]
    fn leader_election() {
        let rules = leader_election_rules("exitplan-controller");
        let cases: &[(&str, &str, bool)] = &[
            ("get", "exitplan-controller", true),
            ("update", "exitplan-controller", true),
            ("create", "", true),
            ("get", "someone-else", false),
            ("update", "someone-else", false),
            ("delete", "exitplan-controller", false),
            ("list", "", false),
        ];
        for (verb, name, want) in cases {
            let attrs = exitplan_authz::Attributes {
                verb: (*verb).to_owned(),
                resource_request: true,
                namespace: "kube-system".to_owned(),
                api_group: "coordination.k8s.io".to_owned(),
                resource: "leases".to_owned(),
                name: (*name).to_owned(),
                ..exitplan_authz::Attributes::default()
            };
            assert_eq!(
                exitplan_authz::rbac::rule::rules_allow(&attrs, &rules),
                *want,
                "{verb} {name}"
            );
        }
    }

    #[test]
    fn names() {
        let want = [
            (
                "exitplan-controller-manager",
                "system:exitplan-controller-manager",
            ),
            (
                "evictionrequest-controller",
                "system:controller:evictionrequest-controller",
            ),
            ("imperative-evictor", "system:controller:imperative-evictor"),
            (
                "disruption-controller",
                "system:controller:disruption-controller",
            ),
            (
                "generic-garbage-collector",
                "system:controller:generic-garbage-collector",
            ),
            ("exitplan-scheduler", "system:exitplan-scheduler"),
            ("job-controller", "system:controller:job-controller"),
            ("exitplan-node-simulator", "system:exitplan-node-simulator"),
        ];
        for (id, (account, role)) in ALL.into_iter().zip(want) {
            assert_eq!(
                (id.service_account(), id.role_name().as_str()),
                (account, role)
            );
            let o = id.objects();
            assert_eq!(o.service_account.metadata.name.as_deref(), Some(account));
            assert_eq!(
                o.service_account.metadata.namespace.as_deref(),
                Some(NAMESPACE)
            );
            assert_eq!(o.cluster_role.metadata.name.as_deref(), Some(role));
            assert_eq!(o.cluster_role_binding.metadata.name.as_deref(), Some(role));
            assert_eq!(o.cluster_role_binding.role_ref.name, role);
            let subjects = o.cluster_role_binding.subjects.unwrap_or_default();
            assert_eq!(subjects.len(), 1);
            assert_eq!(subjects[0].name, account);
            assert_eq!(subjects[0].namespace.as_deref(), Some(NAMESPACE));
            assert_eq!(
                id.username(),
                format!("system:serviceaccount:kube-system:{account}")
            );
        }
    }
}
