//! The disruption controller's decisions (job-failure spec §11, §13).
//!
//! * [`sync_pdb`] — one PodDisruptionBudget sync: `(pdb, pods, scale lookup,
//!   now) →` [`PdbPlan`] (status, write-if-changed, events, recheck), with
//!   the `SyncFailed` fail-safe ([`fail_safe`]) on errors.
//! * [`scale`] — controller scale lookup ([`Workloads::lookup`], finder order of upstream).
//! * [`expected`] — `expectedPods` / `desiredHealthy` (percentages round up).
//! * [`disrupted`] — `disruptedPods` expiry and the healthy count.
//! * [`stale`] — flipping stale `DisruptionTarget` pod conditions to `False`.

pub mod disrupted;
pub mod expected;
pub mod plan;
pub mod scale;
pub mod stale;
pub mod sync;

pub use plan::{EventTarget, EventType, PdbEvent, PdbPlan};
pub use scale::{ControllerScale, ScaleError, Workloads, without_scale_subresources};
pub use stale::{StaleCleanup, stale_disruption_target};
pub use sync::{fail_safe, sync_pdb};
