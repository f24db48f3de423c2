//! Which Evictions the evictor handles and which watch events re-queue them
//! (spec §8 "Which Evictions it handles" and "Re-queue triggers").

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, ResponderStatus, TargetResponder};

use exitplan_api::core::podutil::{is_terminal, phase};
use exitplan_api::lifecycle::constants::{
    DEFAULT_RESPONDER_NAME, ROLE_REQUESTER_RESPONDER, ROLE_RESPONDER,
};

use super::backoff::AttemptUpdate;

/// Whether the evictor handles this Eviction at all: it targets a pod and
/// carries the label `imperative-eviction.k8s.io/evictor` with value
/// `responder` or `requester-responder` (upstream `shouldHandleEviction`;
/// its final-condition check is unreachable and therefore absent).
pub fn should_handle(eviction: &Eviction) -> bool {
    eviction.spec.target.pod.is_some()
        && matches!(
            role_label(eviction),
            Some(ROLE_RESPONDER | ROLE_REQUESTER_RESPONDER)
        )
}

/// The evictor's role label value, if the label is present.
fn role_label(eviction: &Eviction) -> Option<&str> {
    eviction
        .metadata
        .labels
        .as_ref()?
        .get(DEFAULT_RESPONDER_NAME)
        .map(String::as_str)
}

/// Whether the label `key` was added, removed or changed its value.
pub fn has_label_changed(old: &Eviction, new: &Eviction, key: &str) -> bool {
    let get = |e: &Eviction| e.metadata.labels.as_ref().and_then(|l| l.get(key).cloned());
    get(old) != get(new)
}

/// The evictor's own `status.targetResponders` entry.
pub fn own_target_responder(eviction: &Eviction) -> Option<&TargetResponder> {
    eviction
        .status
        .as_ref()?
        .target_responders
        .as_ref()?
        .iter()
        .find(|r| r.name == DEFAULT_RESPONDER_NAME)
}

/// The evictor's own `status.responders` entry.
pub fn own_responder_status(eviction: &Eviction) -> Option<&ResponderStatus> {
    eviction
        .status
        .as_ref()?
        .responders
        .as_ref()?
        .iter()
        .find(|r| r.name == DEFAULT_RESPONDER_NAME)
}

fn responders_len(eviction: &Eviction) -> usize {
    eviction
        .status
        .as_ref()
        .and_then(|s| s.responders.as_ref())
        .map_or(0, Vec::len)
}

/// Eviction add event: enqueue iff [`should_handle`].
pub fn on_eviction_add(eviction: &Eviction) -> bool {
    should_handle(eviction)
}

/// Eviction update event: enqueue the new object iff it is handled and its
/// own TargetResponder entry changed, its role label changed, or the number
/// of ResponderStatus entries changed. (Its own ResponderStatus changing —
/// e.g. by its own write — does not re-queue.)
pub fn on_eviction_update(old: &Eviction, new: &Eviction) -> bool {
    should_handle(new)
        && (own_target_responder(old) != own_target_responder(new)
            || has_label_changed(old, new, DEFAULT_RESPONDER_NAME)
            || responders_len(old) != responders_len(new))
}

/// Eviction delete event: nothing is enqueued; the attempt record of the
/// targeted pod UID is dropped (when the deleted object is known and
/// targets a pod).
pub fn on_eviction_delete(eviction: &Eviction) -> Option<AttemptUpdate> {
    let pod = eviction.spec.target.pod.as_ref()?;
    Some(AttemptUpdate::Clear {
        pod_uid: pod.uid.clone(),
    })
}

/// A pod event that matters to the evictor: drop the attempt record of
/// `pod_uid` and enqueue [`active_evictions_for_pod`] of that pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodEvent {
    /// UID of the pod the event is about.
    pub pod_uid: String,
}

impl PodEvent {
    /// The attempt-record change this event implies.
    pub fn attempt_update(&self) -> AttemptUpdate {
        AttemptUpdate::Clear {
            pod_uid: self.pod_uid.clone(),
        }
    }
}

fn uid(pod: &Pod) -> String {
    pod.metadata.uid.clone().unwrap_or_default()
}

/// Pod update event: relevant iff the deletionTimestamp changed, or the
/// phase changed and the new phase is terminal.
pub fn on_pod_update(old: &Pod, new: &Pod) -> Option<PodEvent> {
    let deletion_changed = old.metadata.deletion_timestamp != new.metadata.deletion_timestamp;
    let became_terminal = phase(old) != phase(new) && is_terminal(new);
    (deletion_changed || became_terminal).then(|| PodEvent { pod_uid: uid(new) })
}

/// Pod delete event (with the last known object): always relevant.
pub fn on_pod_delete(pod: &Pod) -> PodEvent {
    PodEvent { pod_uid: uid(pod) }
}

/// More than one handled Eviction targets the same pod (logged upstream;
/// all of them are still enqueued).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("found more than 1 active eviction matching pod {pod}, evictions {count}")]
pub struct MultipleActiveEvictions {
    /// The pod as klog renders it (`namespace/name`).
    pub pod: String,
    /// How many handled Evictions were found.
    pub count: usize,
}

/// The Evictions to enqueue for a pod event.
#[derive(Clone, Debug, PartialEq)]
pub struct ActiveEvictions<'a> {
    /// Handled Evictions whose target pod UID is the pod's.
    pub evictions: Vec<&'a Eviction>,
    /// Set when there is more than one (to be logged).
    pub error: Option<MultipleActiveEvictions>,
}

/// The handled Evictions targeting `pod`'s UID among `evictions` (upstream
/// `listActiveEvictionsForPod`, with the index lookup done by filtering).
/// Quirk kept from upstream: if any Eviction for that UID has no
/// `status.observedGeneration` yet, nothing is returned (its own add/update
/// event will enqueue it).
pub fn active_evictions_for_pod<'a>(
    pod: &Pod,
    evictions: impl IntoIterator<Item = &'a Eviction>,
) -> ActiveEvictions<'a> {
    let pod_uid = uid(pod);
    let mut found = Vec::new();
    for eviction in evictions {
        let Some(target) = eviction.spec.target.pod.as_ref() else {
            continue;
        };
        if target.uid != pod_uid {
            continue;
        }
        if eviction
            .status
            .as_ref()
            .and_then(|s| s.observed_generation)
            .is_none()
        {
            return ActiveEvictions {
                evictions: Vec::new(),
                error: None,
            };
        }
        if should_handle(eviction) {
            found.push(eviction);
        }
    }
    let error = (found.len() > 1).then(|| MultipleActiveEvictions {
        pod: klog_kobj(pod),
        count: found.len(),
    });
    ActiveEvictions {
        evictions: found,
        error,
    }
}

/// `klog.KObj(pod).String()`: `namespace/name`, or `name` without namespace.
fn klog_kobj(pod: &Pod) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or("");
    match pod.metadata.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}
