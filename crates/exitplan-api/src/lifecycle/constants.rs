//! Names, enum values, limits and durations of `lifecycle.k8s.io/v1alpha1`
//! (spec §1–§5, §7.9). User-visible strings live here once.

use jiff::SignedDuration;
use k8s_openapi::Resource;
use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;

/// `apiVersion` of both lifecycle kinds (`lifecycle.k8s.io/v1alpha1`).
pub const LIFECYCLE_API_VERSION: &str = EvictionRequest::API_VERSION;
/// Kind of the owner references the controller puts on Evictions.
pub const EVICTION_REQUEST_KIND: &str = EvictionRequest::KIND;
/// The only target type of v1alpha1, as upstream renders it in messages,
/// metrics and names.
pub const TARGET_TYPE_POD: &str = "pod";
/// Prefix of the names of Evictions of pod targets (`pod-<n>-<podName>`, §7.6).
pub const EVICTION_NAME_POD_PREFIX: &str = "pod-";

/// The default responder the controller appends to every pod target (§5.1).
pub const DEFAULT_RESPONDER_NAME: &str = "imperative-eviction.k8s.io/evictor";
/// The default responder's priority (§5.1).
pub const DEFAULT_RESPONDER_PRIORITY: i32 = 100;

/// `spec.intent` / `requesters[].intent`: the requester wants the target evicted.
pub const INTENT_EVICTION: &str = "Eviction";
/// `spec.intent` / `requesters[].intent`: the requester withdrew.
pub const INTENT_WITHDRAWN: &str = "Withdrawn";
/// Every supported intent, in upstream's order.
pub const INTENTS: &[&str] = &[INTENT_EVICTION, INTENT_WITHDRAWN];

/// Responder state: not yet asked to act.
pub const STATE_INACTIVE: &str = "Inactive";
/// Responder state: the one responder currently working.
pub const STATE_ACTIVE: &str = "Active";
/// Responder state (final): missed its heartbeat or the target vanished mid-work.
pub const STATE_INTERRUPTED: &str = "Interrupted";
/// Responder state (final): canceled because no requester wants the eviction.
pub const STATE_CANCELED: &str = "Canceled";
/// Responder state (final): reported `completionTime`.
pub const STATE_COMPLETED: &str = "Completed";
/// Every responder state, in upstream's enum order.
pub const STATES: &[&str] = &[
    STATE_INACTIVE,
    STATE_ACTIVE,
    STATE_INTERRUPTED,
    STATE_CANCELED,
    STATE_COMPLETED,
];

/// Whether `state` is final (Interrupted, Canceled or Completed).
pub fn is_final_state(state: &str) -> bool {
    matches!(state, STATE_INTERRUPTED | STATE_CANCELED | STATE_COMPLETED)
}

/// Condition type: the target has been evicted.
pub const CONDITION_TARGET_EVICTED: &str = "TargetEvicted";
/// Condition type: the eviction is no longer being processed.
pub const CONDITION_FAILED: &str = "Failed";

/// Reason: in progress (both conditions False).
pub const REASON_AWAITING_EVICTION: &str = "AwaitingEviction";
/// Reason of `TargetEvicted=True`: the pod is gone or was replaced.
pub const REASON_POD_DELETED: &str = "PodDeleted";
/// Reason of `TargetEvicted=True`: the pod reached Succeeded/Failed.
pub const REASON_POD_TERMINAL: &str = "PodTerminal";
/// Reason of `Failed=False` next to `TargetEvicted=True`.
pub const REASON_SUCCEEDED: &str = "Succeeded";
/// Reason of `Failed=True`: no requester with Eviction intent.
pub const REASON_CANCELED_NO_REQUESTERS: &str = "CanceledDueToNoRequesters";
/// Reason of `Failed=True`: every responder finished without evicting.
pub const REASON_NO_FURTHER_RESPONDER: &str = "NoFurtherResponder";
/// Reason of `Failed=True`: early validation failed.
pub const REASON_EVICTION_INVALID: &str = "EvictionInvalid";
/// Reason of `TargetEvicted=False` next to `Failed=True`.
pub const REASON_EVICTION_FAILED: &str = "EvictionFailed";

/// Message of `TargetEvicted=True/PodDeleted`.
pub const MSG_POD_DELETED: &str = "Target pod has been deleted.";
/// Message of `TargetEvicted=True/PodTerminal`.
pub const MSG_POD_TERMINAL: &str = "Pod has reached terminal state.";
/// Message of `Failed=True/CanceledDueToNoRequesters`.
pub const MSG_NO_REQUESTERS: &str = "No active requesters with eviction intent.";
/// Message of `Failed=True/NoFurtherResponder`.
pub const MSG_NO_FURTHER_RESPONDER: &str =
    "All responders have completed without evicting the target.";
/// Mirrored message while no Eviction reports yet.
pub const MSG_WAITING_FOR_EVICTION: &str = "waiting for an Eviction to report on progress";
/// Early validation: the target is not a pod.
pub const MSG_UNSUPPORTED_TARGET: &str = "Unsupported target type.";
/// Early validation: no pod of that name and no Eviction for its UID.
pub const MSG_TARGET_NOT_FOUND: &str = "Target pod not found.";
/// Early validation: the pod is part of a PodGroup.
pub const MSG_SCHEDULING_GROUP: &str =
    "Target pod references a SchedulingGroup. Eviction is currently not supported.";
/// Early validation: an older active Eviction exists for the target.
pub const MSG_DUPLICATE_EVICTION: &str = "Active Eviction already exists for the same target.";

/// Early validation: the pod's UID differs from the requested one.
pub fn msg_uid_mismatch(want: &str, have: &str) -> String {
    format!("Target pod UID mismatch: expected {want}, got {have}.")
}

/// Role label value on an Eviction for a requester.
pub const ROLE_REQUESTER: &str = "requester";
/// Role label value on an Eviction for a responder.
pub const ROLE_RESPONDER: &str = "responder";
/// Role label value on an Eviction for a name that is both.
pub const ROLE_REQUESTER_RESPONDER: &str = "requester-responder";

/// Maximum `status.requesters` (§5.1).
pub const MAX_REQUESTERS: usize = 100;
/// Maximum `status.targetResponders` / `status.responders` (10 declared + the default).
pub const MAX_TARGET_RESPONDERS: usize = 11;
/// Maximum `pod.spec.evictionResponders` (§3).
pub const MAX_POD_RESPONDERS: usize = 10;
/// Maximum `status.conditions` of both kinds.
pub const MAX_CONDITIONS: usize = 100;
/// Maximum `status.responders[].message` length.
pub const MAX_RESPONDER_MESSAGE: usize = 4000;
/// Lowest priority a responder may declare (`0..=999` is reserved for `*.k8s.io`).
pub const MIN_USER_PRIORITY: i32 = 1000;
/// Highest responder priority.
pub const MAX_PRIORITY: i32 = 100_000;

/// A silent Active responder is interrupted after this long (§7.4-9).
pub const HEARTBEAT_DEADLINE: SignedDuration = SignedDuration::from_mins(20);
/// Tolerated clock skew for responder-written timestamps (§5.4).
pub const ALLOWED_CLOCK_SKEW: SignedDuration = SignedDuration::from_secs(30);
/// How far ahead `expectedCompletionTime` may lie (10 × 365 days).
pub const MAX_EXPECTED_COMPLETION: SignedDuration = SignedDuration::from_hours(24 * 365 * 10);
/// Grace for a responder to report completion after the pod is gone (§7.4 notes).
pub const GRACEFUL_COMPLETION_DELAY: SignedDuration = SignedDuration::from_secs(5);

/// The apiserver lets a silent Active responder be moved on once
/// `now ≥ last + 20m − 30s` (the heartbeat deadline minus the clock skew, §5.4-6).
pub const HEARTBEAT_VALIDATION_DEADLINE: SignedDuration = SignedDuration::from_secs(20 * 60 - 30);

/// Validation detail: priorities 0–999 belong to `*.k8s.io` responders (§3, §5.4-4).
pub const MSG_RESERVED_PRIORITY: &str =
    "priorities 0-999 are reserved for responders with *.k8s.io suffix";
/// Validation detail: the default responder must keep its assigned priority (§5.4-4).
pub const MSG_CORE_RESPONDER_PRIORITY: &str =
    "core k8s responder is expected to have priority: 100";
/// Validation detail: a silent Active responder is still within its deadline (§5.4-6).
pub const MSG_HEARTBEAT_IN_PROGRESS: &str = "must stay Active because the responder is in progress and it should report status.responders.heartbeatTime or status.responders.completionTime";
/// Validation detail: `Completed` needs the responder's `completionTime` (§5.4-6).
pub const MSG_MISSING_COMPLETION_TIME: &str =
    "cannot become Completed because the responder didn't report status.responders.completionTime";
