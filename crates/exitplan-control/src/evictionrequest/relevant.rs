//! The relevant Eviction of a target (§7.3-6, case 79; upstream `findRelevantEviction`).
//!
//! 1. any Eviction with `TargetEvicted=True` — the one with the latest
//!    `TargetEvicted` transition time; else
//! 2. the **oldest** (creationTimestamp) Eviction with neither final condition; else
//! 3. the `Failed=True` Eviction with the latest `Failed` transition time; else none.
//!
//! `should_create` is true unless case 1 or 2 matched. Upstream keeps the first
//! candidate it meets on ties, which depends on informer iteration order; here
//! ties are broken by name, then UID (lowest wins), so the result never depends
//! on input order.

use std::cmp::Ordering;

use jiff::Timestamp;
use k8s_openapi::api::lifecycle::v1alpha1::Eviction;

use exitplan_api::lifecycle::constants::{CONDITION_FAILED, CONDITION_TARGET_EVICTED};

use super::completion::{has_eviction_failed, has_eviction_succeeded};
use crate::conditions::find;

/// The outcome of [`find_relevant_eviction`].
#[derive(Clone, Copy, Debug)]
pub struct RelevantEviction<'a> {
    /// The Eviction whose conditions the target's EvictionRequests mirror.
    pub eviction: Option<&'a Eviction>,
    /// No succeeded and no active Eviction exists: a new one may be created.
    pub should_create: bool,
}

/// Orders two Evictions by the transition time of their `condition_type`
/// condition; a missing condition sorts first (upstream `compareConditionTransitionTime`).
pub fn compare_condition_transition_time(
    a: &Eviction,
    b: &Eviction,
    condition_type: &str,
) -> Ordering {
    transition_time(a, condition_type).cmp(&transition_time(b, condition_type))
}

fn transition_time(eviction: &Eviction, condition_type: &str) -> Option<Timestamp> {
    let conditions = eviction.status.as_ref()?.conditions.as_deref()?;
    find(conditions, condition_type).map(|c| c.last_transition_time.0)
}

/// Name, then UID: the deterministic tie-break.
fn identity(eviction: &Eviction) -> (&str, &str) {
    (
        eviction.metadata.name.as_deref().unwrap_or_default(),
        eviction.metadata.uid.as_deref().unwrap_or_default(),
    )
}

/// The relevant Eviction among all Evictions of one target (any order).
pub fn find_relevant_eviction<'a>(evictions: &[&'a Eviction]) -> RelevantEviction<'a> {
    let mut succeeded: Option<&'a Eviction> = None;
    let mut active: Option<&'a Eviction> = None;
    let mut failed: Option<&'a Eviction> = None;

    // `better(candidate, current)`: whether `candidate` replaces `current`.
    let latest = |kind: &str, candidate: &Eviction, current: &Eviction| {
        compare_condition_transition_time(candidate, current, kind)
            .then_with(|| identity(current).cmp(&identity(candidate)))
            == Ordering::Greater
    };
    for &eviction in evictions {
        if has_eviction_succeeded(eviction) {
            if succeeded.is_none_or(|s| latest(CONDITION_TARGET_EVICTED, eviction, s)) {
                succeeded = Some(eviction);
            }
        } else if has_eviction_failed(eviction) {
            if failed.is_none_or(|f| latest(CONDITION_FAILED, eviction, f)) {
                failed = Some(eviction);
            }
        } else if active.is_none_or(|a| older(eviction, a)) {
            active = Some(eviction);
        }
    }
    match (succeeded, active) {
        (Some(s), _) => RelevantEviction {
            eviction: Some(s),
            should_create: false,
        },
        (None, Some(a)) => RelevantEviction {
            eviction: Some(a),
            should_create: false,
        },
        (None, None) => RelevantEviction {
            eviction: failed,
            should_create: true,
        },
    }
}

/// Whether `candidate` was created before `current` (a missing timestamp is
/// Go's zero time, the earliest); ties go to the lower name/UID.
fn older(candidate: &Eviction, current: &Eviction) -> bool {
    let created = |e: &Eviction| e.metadata.creation_timestamp.as_ref().map(|t| t.0);
    created(candidate)
        .cmp(&created(current))
        .then_with(|| identity(candidate).cmp(&identity(current)))
        == Ordering::Less
}
