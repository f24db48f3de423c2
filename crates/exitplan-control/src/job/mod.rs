//! The Job controller's failure handling (job-failure spec §2–§9): pod
//! failure policy matching and the pure Job sync decision.
//!
//! ```text
//!  claim (adopt / release: which pods are the Job's)
//!      │
//!  Job + its pods + back-off record + now
//!      │
//!      ▼
//!  sync::skip_reason ──► classify (§3) ──► counters + back-off (§4, §9)
//!      ──► sync::finished_condition (§5, §6; pod_failure_policy §2;
//!          success_policy: SuccessCriteriaMet when nothing failed)
//!      ──► manage (§7: delete / create pods)
//!      ──► counting (§8: uncounted lists, finalizers, terminal condition)
//!      ▼
//!  plan::SyncPlan: ordered Steps the runtime applies
//! ```
//!
//! [`explain()`] runs the same functions to describe a Job for the CLI.

pub mod backoff;
pub mod claim;
pub mod classify;
pub mod conditions;
pub mod counting;
pub mod explain;
pub mod indexes;
pub mod manage;
pub mod plan;
pub mod pod_failure_policy;
pub mod success_policy;
pub mod sync;

pub use explain::{JobExplanation, explain};
pub use plan::{ManageOutcome, Step, SyncPlan};
pub use pod_failure_policy::{Action, Operator, PolicyMatch, match_pod_failure_policy};
pub use success_policy::{SuccessPolicyMatch, match_success_policy};
pub use sync::{SyncInput, sync_job, sync_job_after_manage};
