//! The default responder `imperative-eviction.k8s.io/evictor` (eviction spec
//! §8; upstream `pkg/controller/imperativeevictionresponder`): when it is the
//! Active responder of an Eviction it evicts the target pod through
//! `pods/<name>/eviction` — honouring PodDisruptionBudgets, backing off
//! between failed calls — and reports progress in its own
//! `status.responders` entry until the pod is gone.
//!
//! Pure decisions only; the runtime watches Evictions and pods, keeps the
//! [`AttemptRecords`], makes the calls and the status applies:
//!
//! * [`filter`] — which Evictions are handled and which watch events
//!   re-queue them or clear attempt records.
//! * [`sync`] — [`decide`] a sync, and [`after_evict`] once the `/eviction`
//!   call returned.
//! * [`backoff`] — the back-off between calls and the attempt records.
//! * [`messages`] — the status messages, `(attempts=N)` parsing, truncation.
//! * [`apply`] — the status apply payload.
//! * [`metrics`] — the failed-evictions counter's name and labels.

use jiff::SignedDuration;

pub mod apply;
pub mod backoff;
pub mod filter;
pub mod messages;
pub mod metrics;
pub mod sync;

pub use apply::{apply_payload, apply_status_body, merge_responder_status};
pub use backoff::{
    AttemptRecord, AttemptRecords, AttemptUpdate, backoff_remaining, exponential_backoff,
    requeue_after_failure, wait_after_attempts,
};
pub use filter::{
    ActiveEvictions, MultipleActiveEvictions, PodEvent, active_evictions_for_pod, should_handle,
};
pub use messages::{recorded_attempts, truncate_message};
pub use sync::{
    AfterEvict, AfterEvictError, Decision, EvictCall, EvictOutcome, SkipReason, Write, after_evict,
    decide, heartbeat_due,
};

/// The responder name this controller answers for.
pub const RESPONDER_NAME: &str = exitplan_api::lifecycle::constants::DEFAULT_RESPONDER_NAME;

/// Controller name, used as the field manager of its status applies
/// (upstream passes `names.ImperativeEvictionResponderController`; the value
/// follows kube-controller-manager's naming convention).
pub const FIELD_MANAGER: &str = "imperative-eviction-responder-controller";

/// Longest time between two heartbeats, and the cap of every requeue
/// (upstream `heartbeatMaxDurationBetweenUpdates`).
pub const HEARTBEAT_INTERVAL: SignedDuration = SignedDuration::from_mins(3);

/// A heartbeat is refreshed once it is older than
/// `HEARTBEAT_INTERVAL − HEARTBEAT_SLACK` (2 m 59 s), so a requeue after
/// exactly [`HEARTBEAT_INTERVAL`] always writes one.
pub const HEARTBEAT_SLACK: SignedDuration = SignedDuration::from_secs(1);

/// First back-off between failed `/eviction` calls (upstream
/// `heartbeatMinDurationBetweenUpdates`).
pub const BACKOFF_BASE: SignedDuration = SignedDuration::from_secs(5);

/// Longest back-off between failed `/eviction` calls
/// (upstream `maxImperativeEvictionBackoff`).
pub const MAX_BACKOFF: SignedDuration = SignedDuration::from_mins(10);

/// Default number of concurrent syncs
/// (`--concurrent-imperative-eviction-responder-controller-syncs`).
pub const DEFAULT_CONCURRENT_SYNCS: u32 = 5;

/// Allowed range of the concurrent-syncs setting.
pub const CONCURRENT_SYNCS_RANGE: std::ops::RangeInclusive<u32> = 1..=50;
