//! Pod predicates of upstream's `podutil` (`pkg/api/v1/pod`) that several
//! parts of exitplan ask: the phase, terminal phases, readiness.

use k8s_openapi::api::core::v1::{Pod, PodCondition};

use super::constants::{CONDITION_TRUE, PHASE_FAILED, PHASE_SUCCEEDED, POD_CONDITION_READY};

/// The pod's phase, `""` when unset.
pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// `podutil.IsPodTerminal`: phase `Succeeded` or `Failed`.
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(phase(pod), PHASE_SUCCEEDED | PHASE_FAILED)
}

/// `podutil.GetPodReadyCondition`: the pod's `Ready` condition, if any.
pub fn ready_condition(pod: &Pod) -> Option<&PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == POD_CONDITION_READY)
}

/// `podutil.IsPodReady`: condition `Ready` is `True`.
pub fn is_ready(pod: &Pod) -> bool {
    ready_condition(pod).is_some_and(|c| c.status == CONDITION_TRUE)
}
