//! `syncEvictionMetaRefresh` (§7.5): role labels and owner references.
//!
//! Labels and ownerReferences live in metadata, which `/status` writes cannot
//! change — hence this separate loop writing the main resource.
//!
//! * Labels: every requester of the target → `requester`; the pod's responders
//!   plus the default one → `responder` (or `requester-responder`). When the
//!   pod is gone the responder labels already on the Eviction are kept (and
//!   re-roled by whether the key is currently a requester). Only `requester`
//!   labels are ever removed; labels the controller did not produce are left
//!   alone.
//! * Owner references: existing ones are never removed (that is the garbage
//!   collector's job); one is added for every EvictionRequest of the target
//!   that is not being deleted and not yet referenced.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest, EvictionTarget};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use exitplan_api::lifecycle::constants::{
    ROLE_REQUESTER, ROLE_REQUESTER_RESPONDER, ROLE_RESPONDER,
};

use super::request_sync::eviction_request_owner_reference;
use super::target::{Target, pod_responders_with_default};

/// Everything `sync_eviction_meta_refresh` looks at.
#[derive(Clone, Copy, Debug)]
pub struct MetaRefreshInput<'a> {
    /// The Eviction to refresh.
    pub eviction: &'a Eviction,
    /// The pod named `spec.target.pod.name` in the Eviction's namespace, if
    /// any (whatever its UID).
    pub pod: Option<&'a Pod>,
    /// All EvictionRequests of the same target, including deleting ones.
    pub target_requests: &'a [&'a EvictionRequest],
}

/// The metadata update to apply to an Eviction's main resource.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetaRefreshPlan {
    /// The labels the controller manages, with their roles — the label set of
    /// a Server-Side Apply by the controller's field manager.
    pub managed_labels: BTreeMap<String, String>,
    /// The complete label map after the update: the current labels, minus
    /// `requester` labels that are no longer wanted, plus `managed_labels`
    /// (for an update or merge patch).
    pub labels: BTreeMap<String, String>,
    /// The complete ownerReferences after the update: every current one, then
    /// the added ones in request order.
    pub owner_references: Vec<OwnerReference>,
    /// `spec.target`, re-stated so an apply never writes a nil immutable field.
    pub target: EvictionTarget,
}

/// The desired role labels (upstream `computeEvictionLabels`, case 81).
pub fn compute_eviction_labels(
    eviction: &Eviction,
    pod: Option<&Pod>,
    requests: &[&EvictionRequest],
) -> BTreeMap<String, String> {
    let requesters: BTreeSet<&str> = requests.iter().map(|r| r.spec.requester.as_str()).collect();
    let role = |key: &str| {
        if requesters.contains(key) {
            ROLE_REQUESTER_RESPONDER
        } else {
            ROLE_RESPONDER
        }
    };
    let mut labels: BTreeMap<String, String> = requesters
        .iter()
        .map(|k| ((*k).to_owned(), ROLE_REQUESTER.to_owned()))
        .collect();
    let target = Target::of_eviction(&eviction.spec.target, pod);
    match pod {
        Some(pod) if !target.is_gone() => {
            for (name, _) in pod_responders_with_default(pod) {
                labels.insert(name.to_owned(), role(name).to_owned());
            }
        }
        _ => {
            // The target is gone: keep the responder labels already set.
            let existing = eviction.metadata.labels.iter().flatten();
            for (key, value) in existing {
                if value == ROLE_RESPONDER || value == ROLE_REQUESTER_RESPONDER {
                    labels.insert(key.clone(), role(key).to_owned());
                }
            }
        }
    }
    labels
}

/// Whether the labels need an update (upstream `evictionLabelsNeedSSAUpdate`):
/// a desired label is missing or different, or a current `requester` label is
/// no longer desired. Removed responder labels alone never trigger an update.
pub fn labels_need_update(
    current: Option<&BTreeMap<String, String>>,
    desired: &BTreeMap<String, String>,
) -> bool {
    let current_value = |k: &str| current.and_then(|c| c.get(k));
    if desired.iter().any(|(k, v)| current_value(k) != Some(v)) {
        return true;
    }
    current
        .into_iter()
        .flatten()
        .any(|(k, v)| v == ROLE_REQUESTER && !desired.contains_key(k))
}

/// One metadata refresh of an Eviction (§7.5); `None` when nothing needs
/// updating or the target is not a pod.
pub fn sync_eviction_meta_refresh(input: &MetaRefreshInput<'_>) -> Option<MetaRefreshPlan> {
    let eviction = input.eviction;
    eviction.spec.target.pod.as_ref()?;
    let managed = compute_eviction_labels(eviction, input.pod, input.target_requests);
    let current_labels = eviction.metadata.labels.as_ref();
    let mut needs_update = labels_need_update(current_labels, &managed);

    let mut owner_references: Vec<OwnerReference> = eviction
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    for request in input.target_requests {
        // Deleting requests are not (re-)added: orphan deletion would race.
        if request.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let wanted = eviction_request_owner_reference(request);
        let present = owner_references.iter().any(|r| {
            r.kind == wanted.kind
                && r.api_version == wanted.api_version
                && r.name == wanted.name
                && r.uid == wanted.uid
        });
        if !present {
            owner_references.push(wanted);
            needs_update = true;
        }
    }
    if !needs_update {
        return None;
    }

    let mut labels: BTreeMap<String, String> = current_labels
        .into_iter()
        .flatten()
        .filter(|(k, v)| *v != ROLE_REQUESTER || managed.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    labels.extend(managed.iter().map(|(k, v)| (k.clone(), v.clone())));
    Some(MetaRefreshPlan {
        managed_labels: managed,
        labels,
        owner_references,
        target: eviction.spec.target.clone(),
    })
}
