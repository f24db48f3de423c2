//! # exitplan-responder
//!
//! A small SDK for writing **eviction responders** (`lifecycle.k8s.io/v1alpha1`,
//! spec `eviction.md` §5, §7.4): programs that do something before a pod is
//! evicted — migrate a workload, drain a connection, hand over a lease — and
//! report on it in the pod's `Eviction`.
//!
//! A pod names its responders in `spec.evictionResponders`. When an
//! EvictionRequest asks for the pod's eviction, the evictionrequest-controller
//! creates an `Eviction`, labels it `<responderName>: responder` for each of
//! them, and activates them one at a time, highest priority first. The Active
//! responder works and reports in its own `status.responders[name]` entry;
//! when it reports `completionTime` the controller marks it `Completed` and
//! activates the next one (in the end the default
//! `imperative-eviction.k8s.io/evictor`, which evicts the pod).
//!
//! ## Lifecycle of one responder on one Eviction
//!
//! ```text
//!                       controller                         this SDK / your work
//!   Inactive ──(its turn: state Active, ─────▶ Active ──▶ work(ActiveEviction) starts
//!                entry {name, startTime})        │          heartbeat every interval (≤ 3 min)
//!                                                │          progress(message, expectedCompletion)
//!                                                │
//!                  completionTime reported ◀─────┼───────── complete(message)
//!                  ──▶ Completed (next responder)│
//!                                                │
//!   no requester wants the eviction ─────────────┼──▶ Canceled     ┐
//!   no heartbeat for 20 min (§7.4) ──────────────┼──▶ Interrupted  ├─▶ canceled() resolves,
//!   pod gone without completionTime ─────────────┴──▶ Interrupted  │   heartbeats stop, writes
//!   Eviction final / deleted ───────────────────────────────────── ┘   refused, work dropped
//!                                                                      after the stop grace
//! ```
//!
//! What a responder may write (§5.4), and all this SDK writes: its own entry's
//! `heartbeatTime`, `expectedCompletionTime`, `completionTime` and `message`,
//! while it is Active, by server-side apply with `force` and the responder name
//! as field manager (cut to the 128 bytes kube-rs and kube-apiserver accept).
//! Every apply restates all four fields the responder owns — fields a manager
//! owns and omits are removed by server-side apply — and leaves the
//! controller's `name`/`startTime` and every other entry alone. Times come from
//! the injected [`exitplan_clock::Clock`], truncated to whole seconds, and are
//! kept inside the server's rules: `heartbeatTime` never before `startTime`
//! nor decreasing, `expectedCompletionTime` not in the past nor more than 10
//! years ahead, `completionTime` once. The server also allows only 30 s of
//! clock skew between the responder's clock and its own.
//!
//! ## Writing a responder
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use exitplan_responder::{ActiveEviction, Responder, WorkResult};
//!
//! async fn migrate(work: ActiveEviction) -> WorkResult {
//!     let pod = work.target().name.clone();
//!     let eta = work.now() + jiff::SignedDuration::from_mins(5);
//!     work.progress(format!("migrating {pod}"), Some(eta)).await?;
//!     tokio::select! {
//!         // Heartbeats are automatic while this runs.
//!         () = tokio::time::sleep(Duration::from_secs(300)) => {}
//!         reason = work.canceled() => return Err(format!("stopped: {reason}").into()),
//!     }
//!     Ok(work.complete(format!("migrated {pod}")).await?)
//! }
//!
//! # async fn main_() -> Result<(), exitplan_responder::Error> {
//! let client = kube::Client::try_default().await?;
//! Responder::new(client, "example.com/migrator", Arc::new(exitplan_clock::SystemClock))
//!     .heartbeat_interval(Duration::from_secs(60))
//!     .run(migrate)
//!     .await
//! # }
//! ```
//!
//! `examples/migrator.rs` is a complete program to copy. [`sample::TimedWork`]
//! is the work of `exitplan responder`.

mod error;
mod handle;
pub mod names;
mod responder;
pub mod sample;
mod view;

pub use error::Error;
pub use handle::{ActiveEviction, Completed};
pub use responder::{BoxError, DEFAULT_STOP_GRACE, Responder, WorkResult};
pub use view::{StopReason, Target};
