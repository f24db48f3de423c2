//! `syncEvictionRequest` (§7.3): early validation, Eviction creation and
//! condition mirroring for one EvictionRequest.
//!
//! ```text
//!  completed and generation unchanged? ──▶ nothing
//!  unsupported / not found / UID mismatch / PodGroup ──▶ Failed=True/EvictionInvalid
//!  relevant Eviction (§7.3-6) ──▶ mirror TargetEvicted + Failed
//!  any Eviction intent && nothing active or succeeded ──▶ create pod-<n>-<pod>
//! ```

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionPodReference, EvictionRequest, EvictionRequestStatus, EvictionSpec,
    EvictionTarget,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, OwnerReference};

use exitplan_api::core::constants::CONDITION_FALSE;
use exitplan_api::lifecycle::constants::{
    CONDITION_FAILED, CONDITION_TARGET_EVICTED, EVICTION_REQUEST_KIND, LIFECYCLE_API_VERSION,
    MSG_SCHEDULING_GROUP, MSG_TARGET_NOT_FOUND, MSG_UNSUPPORTED_TARGET, MSG_WAITING_FOR_EVICTION,
    REASON_AWAITING_EVICTION, ROLE_REQUESTER, msg_uid_mismatch,
};

use super::completion::has_eviction_request_completed;
use super::naming::new_eviction_name;
use super::outcome::Outcome;
use super::relevant::find_relevant_eviction;
use super::requesters::has_eviction_intent;
use super::target::Target;
use crate::conditions::{ConditionSpec, find, set};

/// Everything `sync_eviction_request` looks at.
#[derive(Clone, Copy, Debug)]
pub struct EvictionRequestSyncInput<'a> {
    /// The EvictionRequest to sync.
    pub request: &'a EvictionRequest,
    /// The pod named `spec.target.pod.name` in the request's namespace, if any
    /// (whatever its UID).
    pub pod: Option<&'a Pod>,
    /// All Evictions of the target (index `<ns>/pod/<uid>`).
    pub target_evictions: &'a [&'a Eviction],
    /// All EvictionRequests of the target (index `<ns>/pod/<uid>`), this one included.
    pub target_requests: &'a [&'a EvictionRequest],
    /// Names of all Evictions in the namespace (for §7.6 naming).
    pub namespace_eviction_names: &'a [&'a str],
}

/// What to do after an EvictionRequest sync.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvictionRequestSyncPlan {
    /// The complete new status to write, if anything changed.
    pub status: Option<EvictionRequestStatus>,
    /// An Eviction to create (Server-Side Apply, field manager
    /// `evictionrequest-controller`), created before the status is written.
    pub create_eviction: Option<Eviction>,
}

/// The owner reference an Eviction carries for `request`: apiVersion
/// `lifecycle.k8s.io/v1alpha1`, kind `EvictionRequest`, name, uid; no
/// controller / blockOwnerDeletion flags.
pub fn eviction_request_owner_reference(request: &EvictionRequest) -> OwnerReference {
    OwnerReference {
        api_version: LIFECYCLE_API_VERSION.to_owned(),
        kind: EVICTION_REQUEST_KIND.to_owned(),
        name: request.metadata.name.clone().unwrap_or_default(),
        uid: request.metadata.uid.clone().unwrap_or_default(),
        ..Default::default()
    }
}

/// One sync of an EvictionRequest (§7.3) at `now`.
pub fn sync_eviction_request(
    input: &EvictionRequestSyncInput<'_>,
    now: Timestamp,
) -> EvictionRequestSyncPlan {
    let request = input.request;
    let target = Target::of_request(&request.spec.target, input.pod);
    let target_evictions: &[&Eviction] = if target.is_pod() {
        input.target_evictions
    } else {
        &[]
    };
    let current = request.status.clone().unwrap_or_default();
    let generation = request.metadata.generation;
    let generation_changed = generation.is_some() && current.observed_generation != generation;

    // 4. Completed requests are skipped unless their spec changed.
    if has_eviction_request_completed(request) && !generation_changed {
        return EvictionRequestSyncPlan::default();
    }
    let mut conditions = current.conditions.clone().unwrap_or_default();
    let observed_generation = generation.or(current.observed_generation);

    // 5. Early validation: no Eviction is created.
    if let Some(message) = early_validation(&target, !target_evictions.is_empty()) {
        let changed = Outcome::Invalid(&message).apply(&mut conditions, now);
        return EvictionRequestSyncPlan {
            status: (changed || generation_changed).then_some(EvictionRequestStatus {
                conditions: Some(conditions),
                observed_generation,
            }),
            create_eviction: None,
        };
    }

    // 6.–7. Mirror the relevant Eviction.
    let relevant = find_relevant_eviction(target_evictions);
    let source = relevant
        .eviction
        .and_then(|e| e.status.as_ref())
        .and_then(|s| s.conditions.as_deref());
    let mut changed = generation_changed;
    for type_ in [CONDITION_FAILED, CONDITION_TARGET_EVICTED] {
        changed |= mirror(&mut conditions, source, type_, now);
    }

    // 8. Create a new Eviction when someone wants one and none is active.
    let create_eviction = (relevant.should_create && has_eviction_intent(input.target_requests))
        .then(|| new_eviction(request, input.namespace_eviction_names))
        .flatten();

    EvictionRequestSyncPlan {
        status: changed.then_some(EvictionRequestStatus {
            conditions: Some(conditions),
            observed_generation,
        }),
        create_eviction,
    }
}

/// §7.3-5: the first failing rule's message. "Not found" and "UID mismatch"
/// apply only while no Eviction exists for the target UID; the PodGroup check
/// reads the pod found by name, like upstream.
fn early_validation(target: &Target<'_>, has_evictions: bool) -> Option<String> {
    if !target.is_pod() {
        return Some(MSG_UNSUPPORTED_TARGET.to_owned());
    }
    if !has_evictions && target.found_pod().is_none() {
        return Some(MSG_TARGET_NOT_FOUND.to_owned());
    }
    let want = target.uid().unwrap_or_default();
    if !has_evictions && want != target.found_uid() {
        return Some(msg_uid_mismatch(want, target.found_uid()));
    }
    if target.has_scheduling_group() {
        return Some(MSG_SCHEDULING_GROUP.to_owned());
    }
    None
}

/// Copies status/reason/message of the Eviction's `type_` condition into the
/// request's conditions (own transition time), or False/`AwaitingEviction`
/// while no Eviction reports one.
fn mirror(
    conditions: &mut Vec<Condition>,
    source: Option<&[Condition]>,
    type_: &str,
    now: Timestamp,
) -> bool {
    let spec = match source.and_then(|s| find(s, type_)) {
        Some(c) => ConditionSpec {
            type_,
            status: &c.status,
            reason: &c.reason,
            message: &c.message,
            observed_generation: None,
        },
        None => ConditionSpec {
            type_,
            status: CONDITION_FALSE,
            reason: REASON_AWAITING_EVICTION,
            message: MSG_WAITING_FOR_EVICTION,
            observed_generation: None,
        },
    };
    set(conditions, &spec, now)
}

/// The Eviction to create for `request` (§7.3-8).
fn new_eviction(request: &EvictionRequest, namespace_names: &[&str]) -> Option<Eviction> {
    let pod = request.spec.target.pod.as_ref()?;
    let name = new_eviction_name(&pod.name, namespace_names.iter().copied())?;
    Some(Eviction {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: request.metadata.namespace.clone(),
            owner_references: Some(vec![eviction_request_owner_reference(request)]),
            labels: Some(BTreeMap::from([(
                request.spec.requester.clone(),
                ROLE_REQUESTER.to_owned(),
            )])),
            ..Default::default()
        },
        spec: EvictionSpec {
            target: EvictionTarget {
                pod: Some(EvictionPodReference {
                    name: pod.name.clone(),
                    uid: pod.uid.clone(),
                }),
            },
        },
        status: None,
    })
}
