//! The pod-status half of `addConditionAndDeletePod` (job-failure spec §12
//! step 8): enforcing the delete preconditions on the latest pod (409 texts
//! spell the resource `Pod`) and adding `DisruptionTarget=True`.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions;

use super::answer::{self, Answer};
use crate::core::constants::{CONDITION_TRUE, POD_CONDITION_DISRUPTION_TARGET};
use crate::time::mtime;

/// Reason of the `DisruptionTarget` condition the eviction subresource sets.
pub const REASON_EVICTION_BY_EVICTION_API: &str = "EvictionByEvictionAPI";
/// Message of that condition.
pub const MESSAGE_EVICTION_BY_EVICTION_API: &str = "Eviction API: evicting";

/// Checks `options.preconditions` against `latest`: a non-empty UID or
/// resourceVersion that differs is a 409 Conflict.
pub fn check_preconditions(latest: &Pod, options: &DeleteOptions) -> Result<(), Answer> {
    let Some(pre) = options.preconditions.as_ref() else {
        return Ok(());
    };
    let name = latest.metadata.name.as_deref().unwrap_or_default();
    let uid = latest.metadata.uid.as_deref().unwrap_or_default();
    if let Some(want) = pre.uid.as_deref().filter(|u| !u.is_empty() && *u != uid) {
        return Err(answer::conflict(
            "",
            "Pod",
            name,
            &format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    let rv = latest
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or_default();
    if let Some(want) = pre
        .resource_version
        .as_deref()
        .filter(|r| !r.is_empty() && *r != rv)
    {
        return Err(answer::conflict(
            "",
            "Pod",
            name,
            &format!(
                "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            ),
        ));
    }
    Ok(())
}

/// `pod` with `DisruptionTarget=True EvictionByEvictionAPI "Eviction API:
/// evicting"` (`podutil.UpdatePodCondition`: an existing condition is
/// replaced, keeping its transition time if the status was already `True`),
/// or `None` when that changes nothing.
pub fn with_disruption_target(pod: &Pod, now: Timestamp) -> Option<Pod> {
    let mut condition = PodCondition {
        type_: POD_CONDITION_DISRUPTION_TARGET.to_owned(),
        status: CONDITION_TRUE.to_owned(),
        reason: Some(REASON_EVICTION_BY_EVICTION_API.to_owned()),
        message: Some(MESSAGE_EVICTION_BY_EVICTION_API.to_owned()),
        last_transition_time: Some(mtime(now)),
        last_probe_time: None,
        observed_generation: None,
    };
    let mut updated = pod.clone();
    let conditions = updated
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        None => conditions.push(condition),
        Some(existing) => {
            if existing.status == condition.status {
                condition
                    .last_transition_time
                    .clone_from(&existing.last_transition_time);
            }
            if *existing == condition {
                return None;
            }
            *existing = condition;
        }
    }
    Some(updated)
}
