//! # exitplan-api
//!
//! The pure API layer of exitplan — what upstream keeps in `pkg/apis/*/validation`
//! and `pkg/registry/*/strategy.go`. No IO, no async, no clock of its own: the
//! caller passes `now`.
//!
//! ```text
//!   submitted JSON ──► absent::find_absent ──┐
//!         │                                  ▼
//!         └─► typed object ──► strategy::admit_{create,update,status_update}
//!                                 │  default → prepare → validate
//!                                 ▼
//!                      Ok(()) or status::InvalidError (422 Status)
//! ```
//!
//! * [`field`] — field errors rendered exactly like apimachinery's; [`render`]
//!   — their non-scalar values as Go's JSON; [`printable`] — Go's
//!   `unicode.IsPrint`.
//! * Shared rules: [`formats`] (names, label keys, UUIDs, reserved domains),
//!   [`meta`] (ObjectMeta, and the generic registry's checks in
//!   [`meta::generic`]), [`conditions`] (`metav1.Condition`), [`selector`]
//!   (`metav1.LabelSelector`), [`nonnegative`], [`keyed_list`] (lists keyed
//!   by name) and [`equality`] (upstream's semantic deep-equality).
//! * [`lifecycle`] — EvictionRequest and Eviction (`lifecycle.k8s.io/v1alpha1`):
//!   validation, strategies, the responder sort.
//! * [`core`] — Pod rules exitplan owns (`spec.evictionResponders`), core/v1
//!   strings and the shared pod predicates.
//! * [`core`] also holds the Namespace, Node and Event strategies; [`events`]
//!   — `events.k8s.io/v1` Events (a view of core Events) and [`coordination`]
//!   — Leases.
//! * [`apps`] — apps/v1 workloads (Deployment, ReplicaSet, StatefulSet,
//!   DaemonSet, ControllerRevision) and the `scale` subresource.
//! * [`batch`] — Job validation and defaulting for failure handling.
//! * [`policy`] — PodDisruptionBudget validation and the pod eviction
//!   subresource decision.
//! * [`rbac`] — Role, ClusterRole, RoleBinding, ClusterRoleBinding validation
//!   and strategies.
//! * [`openapi`] — the embedded OpenAPI definitions of the served kinds;
//!   [`patch`] derives each kind's merge behaviour from them.

pub mod absent;
pub mod apiextensions;
pub mod apps;
pub mod batch;
pub mod conditions;
pub mod coordination;
pub mod core;
pub mod default_class;
pub mod discovery;
pub mod equality;
pub mod events;
pub mod field;
pub mod formats;
pub mod keyed_list;
pub mod lifecycle;
pub mod meta;
pub mod networking;
pub mod nonnegative;
pub mod openapi;
pub mod patch;
pub mod policy;
pub mod printable;
pub mod quantities;
pub mod rbac;
pub mod render;
pub mod scheduling;
pub mod selector;
pub mod status;
pub mod storage;
pub mod strategy;
pub mod time;
