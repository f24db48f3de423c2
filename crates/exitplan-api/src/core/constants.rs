//! Well-known core/v1 strings used across exitplan: pod phases, pod
//! condition types and condition statuses (shared with `metav1.Condition`).

/// Pod phase: accepted, not all containers running yet.
pub const PHASE_PENDING: &str = "Pending";
/// Pod phase: bound to a node, at least one container running.
pub const PHASE_RUNNING: &str = "Running";
/// Pod phase (terminal): all containers exited successfully.
pub const PHASE_SUCCEEDED: &str = "Succeeded";
/// Pod phase (terminal): all containers exited, at least one in failure.
pub const PHASE_FAILED: &str = "Failed";
/// Pod phase: the state could not be obtained.
pub const PHASE_UNKNOWN: &str = "Unknown";

/// Pod condition type: the pod can serve (`podutil.IsPodReady`).
pub const POD_CONDITION_READY: &str = "Ready";
/// Pod condition type: the pod is about to be terminated by a disruption.
pub const POD_CONDITION_DISRUPTION_TARGET: &str = "DisruptionTarget";

/// Condition status `True`.
pub const CONDITION_TRUE: &str = "True";
/// Condition status `False`.
pub const CONDITION_FALSE: &str = "False";
/// Condition status `Unknown`.
pub const CONDITION_UNKNOWN: &str = "Unknown";
