//! Event handlers (§7.2) as pure functions: given the event's objects and the
//! related objects from the target indexes, which keys go to which queue.
//!
//! | event | queues |
//! |---|---|
//! | Eviction add | eviction, refresh |
//! | Eviction update | eviction; refresh if labels/ownerRefs changed; the target's requests if `TargetEvicted`/`Failed` changed |
//! | Eviction delete | the target's requests |
//! | EvictionRequest add | request; the target's Evictions (eviction + refresh) |
//! | EvictionRequest update | request; the target's Evictions if intent changed or deletion started |
//! | EvictionRequest delete | the target's Evictions (eviction + refresh) |
//! | Pod update | the pod's Evictions if deletionTimestamp changed or the phase became terminal |
//! | Pod delete | the pod's non-final Evictions, after 5 s |

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use exitplan_api::core::podutil::{is_terminal, phase};
use exitplan_api::lifecycle::constants::{
    CONDITION_FAILED, CONDITION_TARGET_EVICTED, GRACEFUL_COMPLETION_DELAY,
};

use super::completion::has_eviction_completed;
use super::keys::queue_key;
use crate::conditions::find;

/// Keys to add to the controller's three queues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enqueue {
    /// Keys for the EvictionRequest queue (`sync_eviction_request`).
    pub eviction_requests: Vec<String>,
    /// Keys for the Eviction queue (`sync_eviction`), now.
    pub evictions: Vec<String>,
    /// Keys for the Eviction queue, after a delay.
    pub evictions_after: Vec<(String, SignedDuration)>,
    /// Keys for the metadata-refresh queue (`sync_eviction_meta_refresh`).
    pub refreshes: Vec<String>,
}

fn eviction_keys(evictions: &[&Eviction]) -> Vec<String> {
    evictions
        .iter()
        .filter_map(|e| queue_key(&e.metadata))
        .collect()
}

fn request_keys(requests: &[&EvictionRequest]) -> Vec<String> {
    requests
        .iter()
        .filter_map(|r| queue_key(&r.metadata))
        .collect()
}

fn condition<'a>(eviction: &'a Eviction, type_: &str) -> Option<&'a Condition> {
    let conditions = eviction.status.as_ref()?.conditions.as_deref()?;
    find(conditions, type_)
}

/// Eviction added: sync it and refresh its metadata. (No request sync: the
/// requests created it.)
pub fn on_eviction_add(eviction: &Eviction) -> Enqueue {
    let key: Vec<String> = queue_key(&eviction.metadata).into_iter().collect();
    Enqueue {
        evictions: key.clone(),
        refreshes: key,
        ..Default::default()
    }
}

/// Eviction updated; `target_requests` = the EvictionRequests of its target.
pub fn on_eviction_update(
    old: &Eviction,
    new: &Eviction,
    target_requests: &[&EvictionRequest],
) -> Enqueue {
    let key: Vec<String> = queue_key(&new.metadata).into_iter().collect();
    let meta_changed = old.metadata.owner_references != new.metadata.owner_references
        || old.metadata.labels != new.metadata.labels;
    let conditions_changed = [CONDITION_TARGET_EVICTED, CONDITION_FAILED]
        .into_iter()
        .any(|t| condition(old, t) != condition(new, t));
    Enqueue {
        evictions: key.clone(),
        refreshes: if meta_changed { key } else { Vec::new() },
        eviction_requests: if conditions_changed {
            request_keys(target_requests)
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

/// Eviction deleted: its requests recreate an active one if still wanted.
pub fn on_eviction_delete(_eviction: &Eviction, target_requests: &[&EvictionRequest]) -> Enqueue {
    Enqueue {
        eviction_requests: request_keys(target_requests),
        ..Default::default()
    }
}

/// EvictionRequest added; `target_evictions` = the Evictions of its target.
pub fn on_eviction_request_add(
    request: &EvictionRequest,
    target_evictions: &[&Eviction],
) -> Enqueue {
    let evictions = eviction_keys(target_evictions);
    Enqueue {
        eviction_requests: queue_key(&request.metadata).into_iter().collect(),
        refreshes: evictions.clone(),
        evictions,
        ..Default::default()
    }
}

/// EvictionRequest updated; Evictions re-sync when the intent changed or
/// the deletion started.
pub fn on_eviction_request_update(
    old: &EvictionRequest,
    new: &EvictionRequest,
    target_evictions: &[&Eviction],
) -> Enqueue {
    let withdrawn_or_changed = old.spec.intent != new.spec.intent
        || (old.metadata.deletion_timestamp.is_none() && new.metadata.deletion_timestamp.is_some());
    Enqueue {
        eviction_requests: queue_key(&new.metadata).into_iter().collect(),
        evictions: if withdrawn_or_changed {
            eviction_keys(target_evictions)
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

/// EvictionRequest deleted: its Evictions re-sync requesters and labels.
pub fn on_eviction_request_delete(
    _request: &EvictionRequest,
    target_evictions: &[&Eviction],
) -> Enqueue {
    let evictions = eviction_keys(target_evictions);
    Enqueue {
        refreshes: evictions.clone(),
        evictions,
        ..Default::default()
    }
}

/// Pod updated; `pod_evictions` = the Evictions indexed under its UID.
pub fn on_pod_update(old: &Pod, new: &Pod, pod_evictions: &[&Eviction]) -> Enqueue {
    let relevant = old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
        || (phase(old) != phase(new) && is_terminal(new));
    Enqueue {
        evictions: if relevant {
            eviction_keys(pod_evictions)
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

/// Pod deleted: its non-final Evictions re-sync after the 5 s grace, giving
/// the Active responder time to report `completionTime`.
pub fn on_pod_delete(_pod: &Pod, pod_evictions: &[&Eviction]) -> Enqueue {
    Enqueue {
        evictions_after: pod_evictions
            .iter()
            .filter(|e| !has_eviction_completed(e))
            .filter_map(|e| queue_key(&e.metadata))
            .map(|k| (k, GRACEFUL_COMPLETION_DELAY))
            .collect(),
        ..Default::default()
    }
}
