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
//! - [`rule`]: whether one `PolicyRule` allows a request.
//! - [`policy`]: the snapshot, the rule walk and the authorizer decision.
//! - [`escalation`]: `Covers` and the checks on role and binding writes.
//! - [`bootstrap`]: the default ClusterRoles and ClusterRoleBindings.
//! - [`aggregation`]: ClusterRole aggregation (`aggregationRule`).

pub mod aggregation;
pub mod bootstrap;
pub mod escalation;
pub mod policy;
pub mod rule;

#[cfg(test)]
pub(crate) mod testing;

pub use policy::{Policy, ResolveError, Source, Visit};
