//! Is an Eviction or EvictionRequest finished? (§5.3, §7.3-4, §7.4-1)

use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use exitplan_api::core::constants::CONDITION_TRUE;
use exitplan_api::lifecycle::constants::{
    CONDITION_FAILED, CONDITION_TARGET_EVICTED, REASON_EVICTION_INVALID,
};

use crate::conditions::{find, is_true};

fn eviction_conditions(eviction: &Eviction) -> &[Condition] {
    eviction
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

fn request_conditions(request: &EvictionRequest) -> &[Condition] {
    request
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

/// `TargetEvicted=True`: the eviction succeeded.
pub fn has_eviction_succeeded(eviction: &Eviction) -> bool {
    is_true(eviction_conditions(eviction), CONDITION_TARGET_EVICTED)
}

/// `Failed=True`: the eviction failed or was canceled.
pub fn has_eviction_failed(eviction: &Eviction) -> bool {
    is_true(eviction_conditions(eviction), CONDITION_FAILED)
}

/// A final Eviction (`TargetEvicted=True` or `Failed=True`): never touched again.
pub fn has_eviction_completed(eviction: &Eviction) -> bool {
    has_eviction_succeeded(eviction) || has_eviction_failed(eviction)
}

/// A completed EvictionRequest (case 83): `TargetEvicted=True`, or
/// `Failed=True` with reason `EvictionInvalid`. `Failed=True` for any other
/// reason is *not* completed, which is what lets a requester re-request.
pub fn has_eviction_request_completed(request: &EvictionRequest) -> bool {
    let conditions = request_conditions(request);
    if is_true(conditions, CONDITION_TARGET_EVICTED) {
        return true;
    }
    find(conditions, CONDITION_FAILED)
        .is_some_and(|c| c.status == CONDITION_TRUE && c.reason == REASON_EVICTION_INVALID)
}
