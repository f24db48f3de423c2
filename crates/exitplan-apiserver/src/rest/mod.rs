//! The HTTP API: routing, authentication, handlers for every verb and
//! subresource, and `Status` errors — kube-apiserver's
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers` over
//! [`crate::storage`] and [`crate::registry`].
//!
//! * [`router`] — path resolution and dispatch; [`auth`] — bearer token
//!   parsing and public paths (the authenticator is [`crate::authn`]).
//! * [`review`] — create-only reviews (TokenReview, SelfSubjectReview).
//! * Verbs: [`get`], [`list`], [`watch`], [`create`], [`update`],
//!   [`patch`], [`delete`] (with deletecollection).
//! * Subresources: `status` (through get/update/patch), [`binding`],
//!   [`eviction`], [`scale`], [`token`].
//! * [`crd`] — the CRD controllers, run after every CRD write.
//! * [`rbac`] — the RBAC policy snapshot, default roles, ClusterRole aggregation.
//! * [`namespace`] — the namespace lifecycle: DELETE, `/finalize` and the
//!   deleter, run at DELETE, after removals in terminating namespaces and
//!   at start-up.
//! * Shared: [`errors`] (Status texts), [`query`], [`request`], [`request_info`],
//!   [`negotiate`] (JSON or Table), [`openapi`] (the OpenAPI documents), [`fieldvalidation`] (unknown and repeated fields; [`duplicates`] scans raw bodies), [`resourceversion`] (the `resourceVersion` parameters), [`meta`] (UIDs, managers), [`respond`],
//!   [`state`].

pub mod access_review;
pub mod auth;
pub mod binding;
pub mod crd;
pub mod create;
pub mod delete;
pub mod duplicates;
pub mod errors;
pub mod eviction;
pub mod fieldvalidation;
pub mod get;
pub mod list;
pub mod meta;
pub mod metrics;
pub mod namespace;
pub mod negotiate;
pub mod openapi;
pub mod patch;
pub mod priority;
pub mod protobuf;
pub mod query;
pub mod rbac;
pub mod request;
pub mod request_info;
pub mod resourceversion;
pub mod respond;
pub mod review;
pub mod router;
pub mod scale;
pub mod service_alloc;
pub mod state;
pub mod token;
pub mod update;
pub mod watch;

pub use errors::ApiError;
pub use state::State;
