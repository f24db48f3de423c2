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
