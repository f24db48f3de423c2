//! # exitplan-control
//!
//! Pure controller decisions — upstream's `pkg/controller/*` without the
//! informers, queues and clients. Every decision is a function
//! `(object, related objects, now) → plan`: what status to write, which
//! objects to create or patch, which calls to make, when to look again.
//! The runtime (a later layer) feeds these from watches and applies the plans;
//! here nothing does IO and nothing reads a clock.
//!
//! ```text
//!   watch events ─► runtime ─► decide(obj, related, now) ─► Plan ─► runtime ─► API writes
//!                              (this crate: pure, tested exhaustively)
//! ```
//!
//! * [`evictionrequest`] — the evictionrequest-controller (eviction spec §7).
//! * [`imperative`] — the default `imperative-eviction.k8s.io/evictor` responder (§8).
//! * [`job`] — pod failure policy matching and the Job sync decision (job-failure spec §2–§9).
//! * [`disruption`] — PodDisruptionBudget status (job-failure spec §13).
//! * [`gc`] — garbage collection of owner references.
//! * [`simulation`] — the simulated cluster: scheduler, kubelet, node status.
//! * [`conditions`] — `metav1.Condition` bookkeeping shared by all of them.

pub mod conditions;
pub mod disruption;
pub mod evictionrequest;
pub mod gc;
pub mod imperative;
pub mod job;
pub mod simulation;
