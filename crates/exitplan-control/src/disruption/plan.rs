//! What one PodDisruptionBudget sync decides: the status, whether to write
//! it, events, and when to look again.

use jiff::SignedDuration;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};

/// Event type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

/// The object an event is recorded on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventTarget {
    /// The PodDisruptionBudget being synced.
    Pdb,
    /// A pod of its namespace, by name.
    Pod(String),
}

/// One event to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdbEvent {
    /// Object the event is about.
    pub target: EventTarget,
    /// `Normal` or `Warning`.
    pub type_: EventType,
    /// Machine-readable reason (`NoPods`, `UnmanagedPods`, …).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
}

/// The outcome of [`sync_pdb`](super::sync_pdb).
#[derive(Clone, Debug, PartialEq)]
pub struct PdbPlan {
    /// The status the budget has after this sync (written or already stored).
    pub status: PodDisruptionBudgetStatus,
    /// The object to send with `UpdateStatus` (it carries the read
    /// resourceVersion), or `None` when the stored status is already right.
    /// On a 409 requeue the budget; on any other write error apply
    /// [`fail_safe`](super::fail_safe) with the error text.
    pub write: Option<PodDisruptionBudget>,
    /// Events to record, in order.
    pub events: Vec<PdbEvent>,
    /// Sync again after this long (earliest `disruptedPods` expiry) once the
    /// write, if any, succeeded.
    pub recheck_after: Option<SignedDuration>,
    /// The error that made this the fail-safe plan (`SyncFailed`), if any.
    pub sync_error: Option<String>,
}
