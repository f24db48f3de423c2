//! What the controller knows about an eviction target (upstream `target_info.go`).
//!
//! A target is the `spec.target` reference plus the pod the caller found **by
//! name** in the same namespace — which may be a different pod (a replacement
//! with the same name and another UID). Every question the syncs ask about
//! the target goes through here, so the "pod found by name" quirks of §7.4-8
//! and §7.8 live in one place.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{EvictionRequestTarget, EvictionTarget};

use exitplan_api::core::podutil;
use exitplan_api::lifecycle::constants::{DEFAULT_RESPONDER_NAME, DEFAULT_RESPONDER_PRIORITY};

/// `spec.target` (pod name and UID) together with the pod found by name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target<'a> {
    /// `(name, uid)` of `spec.target.pod`; `None` for an unknown target type.
    pod_ref: Option<(&'a str, &'a str)>,
    /// The pod of that name, if the caller found one (any UID).
    pod: Option<&'a Pod>,
}

impl<'a> Target<'a> {
    /// The target of an Eviction.
    pub(crate) fn of_eviction(target: &'a EvictionTarget, pod: Option<&'a Pod>) -> Self {
        Target {
            pod_ref: target
                .pod
                .as_ref()
                .map(|p| (p.name.as_str(), p.uid.as_str())),
            pod,
        }
    }

    /// The target of an EvictionRequest.
    pub(crate) fn of_request(target: &'a EvictionRequestTarget, pod: Option<&'a Pod>) -> Self {
        Target {
            pod_ref: target
                .pod
                .as_ref()
                .map(|p| (p.name.as_str(), p.uid.as_str())),
            pod,
        }
    }

    /// Whether the target is a pod (the only supported type).
    pub(crate) fn is_pod(&self) -> bool {
        self.pod_ref.is_some()
    }

    /// `spec.target.pod.name`.
    pub(crate) fn name(&self) -> Option<&'a str> {
        self.pod_ref.map(|(name, _)| name)
    }

    /// `spec.target.pod.uid`.
    pub(crate) fn uid(&self) -> Option<&'a str> {
        self.pod_ref.map(|(_, uid)| uid)
    }

    /// The pod found by name, only for a pod target (upstream `GetObjectMeta`).
    pub(crate) fn found_pod(&self) -> Option<&'a Pod> {
        self.pod_ref.and(self.pod)
    }

    /// UID of the pod found by name (`""` when unset, like Go's zero value).
    pub(crate) fn found_uid(&self) -> &'a str {
        self.found_pod()
            .and_then(|p| p.metadata.uid.as_deref())
            .unwrap_or("")
    }

    /// The original target no longer exists: no pod of that name, or the pod
    /// of that name has another UID (it was replaced).
    pub(crate) fn is_gone(&self) -> bool {
        match self.pod_ref {
            Some((_, uid)) => self.pod.is_none() || self.found_uid() != uid,
            None => false,
        }
    }

    /// The pod found by name (whatever its UID) is in a PodGroup.
    pub(crate) fn has_scheduling_group(&self) -> bool {
        self.pod
            .and_then(|p| p.spec.as_ref())
            .is_some_and(|s| s.scheduling_group.is_some())
    }

    /// The pod found by name (whatever its UID) is Succeeded or Failed.
    pub(crate) fn is_terminal(&self) -> bool {
        self.pod.is_some_and(podutil::is_terminal)
    }

    /// The pod found by name, whatever its UID.
    pub(crate) fn pod_by_name(&self) -> Option<&'a Pod> {
        self.pod
    }
}

/// `(name, priority)` of the responders declared on `pod`, in declaration
/// order, followed by the default responder (§7.4-8, §7.5).
pub fn pod_responders_with_default(pod: &Pod) -> Vec<(&str, i32)> {
    let declared = pod
        .spec
        .as_ref()
        .and_then(|s| s.eviction_responders.as_deref())
        .unwrap_or_default();
    let mut out: Vec<(&str, i32)> = declared
        .iter()
        .map(|r| (r.name.as_str(), r.priority))
        .collect();
    out.push((DEFAULT_RESPONDER_NAME, DEFAULT_RESPONDER_PRIORITY));
    out
}
