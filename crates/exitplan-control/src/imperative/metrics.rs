//! The evictor's metric (spec §9): a counter of failed `/eviction` calls,
//! `imperative_eviction_responder_controller_failed_evictions`. Named in the
//! KEP only (no upstream code registers it); labels `namespace`, `eviction`,
//! `pod` as the spec recommends. The runtime registers it and increments it
//! with [`FailedEvictionLabels`] from each failed call
//! ([`super::AfterEvict::failed_eviction`]).

use k8s_openapi::api::lifecycle::v1alpha1::Eviction;

/// Metric subsystem (component-base style `subsystem_name`).
pub const SUBSYSTEM: &str = "imperative_eviction_responder_controller";
/// Metric name within [`SUBSYSTEM`].
pub const FAILED_EVICTIONS_NAME: &str = "failed_evictions";
/// Fully qualified metric name.
pub const FAILED_EVICTIONS: &str = "imperative_eviction_responder_controller_failed_evictions";
/// Help text.
pub const FAILED_EVICTIONS_HELP: &str =
    "Number of failed imperative evictions (pods/<name>/eviction calls) per Eviction and pod.";
/// Stability level (component-base `ALPHA`).
pub const FAILED_EVICTIONS_STABILITY: &str = "ALPHA";
/// Label names, in the order of [`FailedEvictionLabels::values`].
pub const FAILED_EVICTIONS_LABELS: [&str; 3] = ["namespace", "eviction", "pod"];

/// One label set of the failed-evictions counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FailedEvictionLabels {
    /// Namespace of the Eviction (and pod).
    pub namespace: String,
    /// Name of the Eviction.
    pub eviction: String,
    /// Name of the target pod.
    pub pod: String,
}

impl FailedEvictionLabels {
    /// The label set for a pod-targeting Eviction; `None` without a pod target.
    pub fn for_eviction(eviction: &Eviction) -> Option<Self> {
        let pod = eviction.spec.target.pod.as_ref()?;
        Some(Self {
            namespace: eviction.metadata.namespace.clone().unwrap_or_default(),
            eviction: eviction.metadata.name.clone().unwrap_or_default(),
            pod: pod.name.clone(),
        })
    }

    /// Label values in the order of [`FAILED_EVICTIONS_LABELS`].
    pub fn values(&self) -> [&str; 3] {
        [&self.namespace, &self.eviction, &self.pod]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_name_is_subsystem_and_name() {
        assert_eq!(
            FAILED_EVICTIONS,
            format!("{SUBSYSTEM}_{FAILED_EVICTIONS_NAME}")
        );
    }
}
