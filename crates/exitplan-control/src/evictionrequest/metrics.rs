//! Metric hints of an Eviction sync (§9).
//!
//! The runtime owns the registry; a sync only reports what it saw so the
//! runtime can set `evictionrequest_controller_responder_state{…, responder,
//! state} = 1` and `evictionrequest_controller_target_responders`. Following
//! the recommended revision, the runtime deletes an Eviction's series when the
//! Eviction is deleted (it knows the key from the delete event).

/// What an Eviction sync observed, for the gauges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvictionMetrics {
    /// `spec.target.pod.name` (label `target_name`).
    pub target_name: String,
    /// Target type (label `target_type`): always `pod` in v1alpha1.
    pub target_type: &'static str,
    /// `(responder, state)` for every target responder after this sync, in
    /// activation order.
    pub responder_states: Vec<(String, String)>,
}

impl EvictionMetrics {
    /// Value of the `target_responders` gauge.
    pub fn target_responders(&self) -> usize {
        self.responder_states.len()
    }
}
