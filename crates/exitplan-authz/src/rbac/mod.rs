//! kube-apiserver's RBAC authorizer and the pure checks around it.
//!
//! ```text
//! Roles, ClusterRoles, bindings ──▶ Policy::new ──▶ Policy (indexed snapshot)
//!                                                   │
//!   request Attributes ─────────────────────────────┼─▶ authorize ─▶ Decision
//!   user + namespace ───────────────────────────────┼─▶ rules_for ─▶ SelfSubjectRulesReview
//!   role / binding writes ──────────────────────────┴─▶ escalation checks ─▶ Forbidden
//! ```
//!
//! ```
//! use exitplan_authz::rbac::{Policy, aggregation, bootstrap};
//! use exitplan_authz::{Attributes, Forbidden, UserInfo};
//!
//! // At start-up: store the defaults, then fill in the aggregated roles.
//! let mut roles = bootstrap::cluster_roles();
//! for (name, rules) in aggregation::aggregate(&roles) {
//!     if let Some(r) = roles.iter_mut().find(|r| r.metadata.name.as_deref() == Some(name.as_str())) {
//!         r.rules = Some(rules);
//!     }
//! }
//! // On every change of a Role, ClusterRole or binding: a new snapshot.
//! let policy = Policy::new(vec![], vec![], roles, bootstrap::cluster_role_bindings());
//!
//! // On every request.
//! let attrs = Attributes {
//!     user: UserInfo::service_account("default", "x", "uid"),
//!     verb: "list".into(),
//!     resource_request: true,
//!     namespace: "default".into(),
//!     resource: "pods".into(),
//!     ..Attributes::default()
//! };
//! let decision = policy.authorize(&attrs);
//! assert!(!decision.allowed());
//! assert_eq!(
//!     Forbidden::for_request(&attrs, decision.reason()).message(),
//!     r#"pods is forbidden: User "system:serviceaccount:default:x" cannot list resource "pods" in API group "" in the namespace "default""#,
//! );
//! ```
//!
//! - [`rule`]: whether one `PolicyRule` allows a request.
//! - [`policy`]: the snapshot, the rule walk and the authorizer decision.
//! - [`escalation`]: `Covers` and the checks on role and binding writes.
//! - [`bootstrap`]: the default ClusterRoles and ClusterRoleBindings.
//! - [`controller_roles`]: the controllers' least-privilege roles.
//! - [`aggregation`]: ClusterRole aggregation (`aggregationRule`).
//! - [`reconcile`]: bringing stored defaults up to date at start-up.

pub mod aggregation;
pub mod bootstrap;
pub mod controller_roles;
pub mod escalation;
pub mod policy;
pub mod reconcile;
pub mod rule;

#[cfg(test)]
pub(crate) mod testing;

pub use policy::{Policy, ResolveError, Source, Visit};
