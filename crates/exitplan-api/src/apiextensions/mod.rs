//! `apiextensions.k8s.io/v1` CustomResourceDefinitions and the custom
//! resources they define — the pure parts of upstream's
//! `apiextensions-apiserver`.
//!
//! ```text
//!   CRD write ──► defaults::default_crd ──► strategy::CrdStrategy
//!                   (validation: names, versions, structural schema rules)
//!   CRD status ◄── naming::naming_status / naming::establishing_status
//!
//!   CR write ──► Structural::from_crd_version (once per CRD version)
//!            ──► pruning::prune ──► defaulting::apply_defaults
//!            ──► custom_resource::validate_custom_resource
//!   CR read  ──► defaulting::apply_defaults
//! ```
//!
//! * [`defaults`] — `SetDefaults_CustomResourceDefinition`.
//! * [`validation`] — `ValidateCustomResourceDefinition*`; its schema rules
//!   in [`schema_rules`], the conversion webhook's in [`webhook`].
//! * [`structural`] — the structural schema (`NewStructural`,
//!   `ValidateStructural`).
//! * [`strategy`] — the CRD registry strategy (main resource and `/status`).
//! * [`naming`] — the `NamesAccepted` and `Established` conditions.
//! * [`defaulting`], [`pruning`], [`schema_validation`], [`listtype`],
//!   [`custom_resource`], [`scale`] — serving custom resources.

pub mod custom_resource;
pub mod defaulting;
pub mod defaults;
pub mod go_regex;
pub mod listtype;
pub mod naming;
pub mod pruning;
pub mod scale;
pub mod schema_rules;
pub mod schema_validation;
pub mod strategy;
pub mod string_formats;
pub mod structural;
pub mod validation;
pub mod webhook;

pub use strategy::CrdStrategy;
pub use structural::Structural;
