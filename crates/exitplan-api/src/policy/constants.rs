//! Well-known strings of policy/v1 PodDisruptionBudgets, shared by PDB
//! validation, the eviction subresource and the disruption controller.

/// `unhealthyPodEvictionPolicy`: evict unhealthy pods only while the budget is healthy.
pub const IF_HEALTHY_BUDGET: &str = "IfHealthyBudget";
/// `unhealthyPodEvictionPolicy`: always allow evicting unhealthy (unready) pods.
pub const ALWAYS_ALLOW: &str = "AlwaysAllow";

/// PDB condition type telling whether disruptions are allowed.
pub const CONDITION_DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
/// `DisruptionAllowed` reason: the controller could not compute the status.
pub const REASON_SYNC_FAILED: &str = "SyncFailed";
/// `DisruptionAllowed` reason: disruptions are allowed.
pub const REASON_SUFFICIENT_PODS: &str = "SufficientPods";
/// `DisruptionAllowed` reason: no disruption is allowed.
pub const REASON_INSUFFICIENT_PODS: &str = "InsufficientPods";
