//! `admissionregistration.k8s.io/v1`: what upstream keeps in
//! `pkg/apis/admissionregistration` (validation, defaulting),
//! `pkg/registry/admissionregistration` (strategies) and the pure predicates
//! of `k8s.io/apiserver/pkg/admission/plugin/webhook/predicates`.
//!
//! ```text
//!  ValidatingWebhookConfiguration ─┐  defaults::{validating,mutating}_webhook
//!  MutatingWebhookConfiguration  ──┴► webhook::validate_*  (CEL via cel::AdmissionCel)
//!                                     strategy::{Validating,Mutating}WebhookConfigurationStrategy
//!
//!  a request (Attributes) ──► matching::rule_matches        (operations, groups, versions,
//!                             matching::matching_rules      resources/subresources, scope;
//!                             matching::selectors_match     matchPolicy Equivalent;
//!                                                           namespaceSelector, objectSelector)
//! ```
//!
//! * [`webhook`] — webhook configuration validation (create and update);
//! * [`policy`] — ValidatingAdmissionPolicy and binding validation;
//! * [`defaults`] — `SetDefaults_*` of the v1 types;
//! * [`cel`] — the seam through which the CEL engine (crate `exitplan-cel`,
//!   which depends on this crate) compiles `matchConditions`;
//! * [`strategy`] — the registry strategies;
//! * [`matching`] — which webhooks a request calls.

pub mod cel;
pub mod defaults;
pub mod matching;
pub mod policy;
pub mod strategy;
pub mod webhook;

#[cfg(test)]
mod webhook_tests;

#[cfg(test)]
mod policy_tests;

pub use strategy::{
    MutatingWebhookConfigurationStrategy, ValidatingAdmissionPolicyBindingStrategy,
    ValidatingAdmissionPolicyStrategy, ValidatingWebhookConfigurationStrategy,
};
