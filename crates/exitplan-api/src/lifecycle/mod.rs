//! `lifecycle.k8s.io/v1alpha1`: EvictionRequest and Eviction (spec `eviction.md`).
//!
//! * [`constants`] — names, enum values, limits, durations (§1–§5, §7.9).
//! * [`sort`] — the responder order (§6).
//! * [`evictionrequest`] — EvictionRequest validation and strategy (§4).
//! * [`eviction`] — Eviction validation and strategy (§5.4), with the
//!   order-independent responder state machine in [`eviction_status`].

pub mod constants;
pub mod eviction;
pub mod eviction_status;
pub mod evictionrequest;
pub mod sort;

pub use eviction::{
    EvictionStrategy, validate_eviction_create, validate_eviction_status,
    validate_eviction_status_declarative, validate_eviction_update,
};
pub use eviction_status::validate_eviction_status_update;
pub use evictionrequest::{
    EvictionRequestStrategy, validate_eviction_request_create,
    validate_eviction_request_status_update, validate_eviction_request_update,
};
