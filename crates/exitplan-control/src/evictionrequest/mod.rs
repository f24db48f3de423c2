//! The evictionrequest-controller (eviction spec §7), as pure decisions.
//!
//! Three loops, each a function `(object, related objects, now) → plan`; the
//! runtime feeds them from informers and applies the plans (Server-Side Apply,
//! field manager `evictionrequest-controller`).
//!
//! ```text
//!                 events::on_*  (which keys go to which queue, §7.2)
//!   Pod ─────────────┐   │
//!   EvictionRequest ─┼───┼──▶ request queue ──▶ sync_eviction_request ──▶ ER status
//!   Eviction ────────┘   │        (§7.3)       early validation,          + create Eviction
//!                        │                     mirror TargetEvicted/Failed  pod-<n>-<pod>
//!                        │
//!                        ├──▶ eviction queue ─▶ sync_eviction ───────────▶ Eviction status
//!                        │      (§7.4)         requesters, responder walk,  + requeue_after
//!                        │                     conditions
//!                        │
//!                        └──▶ refresh queue ──▶ sync_eviction_meta_refresh ▶ labels,
//!                               (§7.5)         role labels, owner refs       ownerReferences
//! ```
//!
//! Files, one job each:
//!
//! * [`request_sync`] — §7.3; [`eviction_sync`] — §7.4; [`meta_refresh`] — §7.5.
//! * [`relevant`] — which Eviction of a target counts (§7.3-6);
//!   [`completion`] — final / completed predicates.
//! * [`requesters`] — `status.requesters` aggregation and relevance sort.
//! * [`responders`] — responder list initialization and the one-step walk.
//! * [`outcome`] — the `Failed`/`TargetEvicted` condition pair.
//! * [`naming`] — `pod-<n>-<pod>` names (§7.6).
//! * [`events`], [`keys`] — event wiring and queue/index keys (§7.1–§7.2).
//! * [`metrics`] — gauge hints (§9).
//!
//! Every timestamp written is truncated to whole seconds; durations are
//! computed from the untruncated `now`, as upstream does.

pub mod completion;
pub mod events;
pub mod eviction_sync;
pub mod keys;
pub mod meta_refresh;
pub mod metrics;
pub mod naming;
pub mod outcome;
pub mod relevant;
pub mod request_sync;
pub mod requesters;
pub mod responders;
mod target;

pub use completion::{
    has_eviction_completed, has_eviction_failed, has_eviction_request_completed,
    has_eviction_succeeded,
};
pub use events::Enqueue;
pub use eviction_sync::{EvictionSyncInput, EvictionSyncPlan, sync_eviction};
pub use meta_refresh::{MetaRefreshInput, MetaRefreshPlan, sync_eviction_meta_refresh};
pub use metrics::EvictionMetrics;
pub use naming::{eviction_name_index_key, name_index_keys, new_eviction_name};
pub use relevant::{RelevantEviction, find_relevant_eviction};
pub use request_sync::{EvictionRequestSyncInput, EvictionRequestSyncPlan, sync_eviction_request};
pub use requesters::sort_eviction_requests_by_relevance;
pub use responders::should_defer_completion;
pub use target::pod_responders_with_default;
