//! core/v1 rules: Pod validation ported from upstream ([`validation`]), the
//! Pod strategy used by `exitplan validate` and the API server and the Pod
//! rule exitplan owns, `spec.evictionResponders` (eviction spec §3) ([`pod`]),
//! and the strategies of `pods/ephemeralcontainers` and `pods/resize`
//! ([`pod_subresources`]); the well-known core strings ([`constants`]) and the pod
//! predicates other modules share ([`podutil`]); the strategies of the simple
//! core kinds: [`namespace`] (its deleter's decisions: [`namespace_deletion`]), [`node`], [`event`]; the pod-template kinds:
//! [`replication_controller`], [`pod_template`].

pub mod configmap;
pub mod constants;
pub mod disabled_fields;
pub mod endpoints;
pub mod event;
pub mod limit_range;
pub mod namespace;
pub mod namespace_deletion;
pub mod node;
pub mod persistent_volume;
pub mod persistent_volume_claim;
pub mod pod;
pub mod pod_subresources;
pub mod pod_template;
pub mod podutil;
pub mod replication_controller;
pub mod resource_quota;
pub mod secret;
pub mod service;
pub mod service_account;
pub mod service_alloc;
pub mod service_validation;
pub mod validation;
