//! Stale `DisruptionTarget` cleanup (job-failure spec §11): a pod marked for
//! disruption that was never deleted gets the condition flipped to `False`
//! two minutes after it was set.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Pod, PodCondition};

use exitplan_api::core::constants::{
    CONDITION_FALSE, CONDITION_TRUE, POD_CONDITION_DISRUPTION_TARGET,
};
use exitplan_api::core::podutil::is_terminal;
use exitplan_api::time::mtime;

/// How long a `DisruptionTarget=True` condition may stand on a pod that is
/// not being deleted (`stalePodDisruptionTimeout`).
pub const STALE_POD_DISRUPTION_TIMEOUT: SignedDuration = SignedDuration::from_secs(120);
/// Reason of kubelet-set disruption conditions, which never go stale.
pub const REASON_TERMINATION_BY_KUBELET: &str = "TerminationByKubelet";

/// What to do about a pod's `DisruptionTarget` condition.
#[derive(Clone, Debug, PartialEq)]
pub enum StaleCleanup {
    /// Write this pod (status update): the condition is now `False` with no
    /// reason or message (`UpdatePodCondition` with a bare condition).
    UpdateStatus(Box<Pod>),
    /// Look again after this long.
    RequeueAfter(SignedDuration),
}

/// `nonTerminatingPodHasStaleDisruptionCondition` + `syncStalePodDisruption`:
/// `None` unless the pod has `DisruptionTarget=True` with a reason other than
/// `TerminationByKubelet`, no deletionTimestamp and a non-terminal phase.
pub fn stale_disruption_target(pod: &Pod, now: Timestamp) -> Option<StaleCleanup> {
    if pod.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let status = pod.status.as_ref()?;
    let cond = status
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == POD_CONDITION_DISRUPTION_TARGET)?;
    let terminal = is_terminal(pod);
    if cond.status != CONDITION_TRUE
        || cond.reason.as_deref() == Some(REASON_TERMINATION_BY_KUBELET)
        || terminal
    {
        return None;
    }
    // A missing transition time is Go's zero time: long past.
    let wait = match cond.last_transition_time.as_ref() {
        Some(t) => STALE_POD_DISRUPTION_TIMEOUT.saturating_sub(now.duration_since(t.0)),
        None => SignedDuration::ZERO,
    };
    if wait > SignedDuration::ZERO {
        return Some(StaleCleanup::RequeueAfter(wait));
    }
    let mut updated = pod.clone();
    let conditions = updated
        .status
        .as_mut()
        .and_then(|s| s.conditions.as_mut())?;
    let slot = conditions
        .iter_mut()
        .find(|c| c.type_ == POD_CONDITION_DISRUPTION_TARGET)?;
    *slot = PodCondition {
        type_: POD_CONDITION_DISRUPTION_TARGET.to_owned(),
        status: CONDITION_FALSE.to_owned(),
        last_transition_time: Some(mtime(now)),
        ..PodCondition::default()
    };
    Some(StaleCleanup::UpdateStatus(Box::new(updated)))
}
