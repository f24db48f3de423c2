//! `status.requesters` of an Eviction (§7.4-6, cases 61–67).
//!
//! Candidates are the target's live EvictionRequests plus the entries already
//! in `status.requesters`, the latter as pseudo-requests without a
//! creationTimestamp. They are stably sorted by relevance (case 64) and walked
//! in order; names already emitted are skipped, and the walk stops at the
//! 100th **position** of the merged list. Skipped duplicates consume
//! positions — upstream's quirk, kept: with many status-only leftovers fewer
//! than 100 names can result, but live requesters always sort first, so up to
//! 100 live ones are never affected.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use k8s_openapi::api::lifecycle::v1alpha1::{EvictionRequest, EvictionRequestSpec, Requester};

use exitplan_api::lifecycle::constants::{INTENT_EVICTION, INTENT_WITHDRAWN};

/// Whether any of the target's EvictionRequests wants the eviction: intent
/// `Eviction` and no deletionTimestamp (a deleting request counts as withdrawn).
pub fn has_eviction_intent(requests: &[&EvictionRequest]) -> bool {
    requests
        .iter()
        .any(|r| r.metadata.deletion_timestamp.is_none() && r.spec.intent == INTENT_EVICTION)
}

/// An object that exists has a creationTimestamp; status-only pseudo-requests do not.
fn exists(request: &EvictionRequest) -> bool {
    request.metadata.creation_timestamp.is_some()
}

/// Not existing, or being deleted: counts as withdrawn.
fn deleted(request: &EvictionRequest) -> bool {
    !exists(request) || request.metadata.deletion_timestamp.is_some()
}

/// Upstream `sortEvictionRequestsByRelevance`'s comparator.
fn by_relevance(a: &EvictionRequest, b: &EvictionRequest) -> Ordering {
    let (a_exists, b_exists) = (exists(a), exists(b));
    let (a_deleted, b_deleted) = (deleted(a), deleted(b));
    // Existing objects before old status.requesters entries.
    match (a_exists, b_exists) {
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    // Non-deleting before deleting (deleting ones count as withdrawn).
    match (a_deleted, b_deleted) {
        (false, true) => return Ordering::Less,
        (true, false) => return Ordering::Greater,
        _ => {}
    }
    // Eviction intent before any other intent (only for non-deleting ones).
    if a.spec.intent != b.spec.intent {
        if a.spec.intent == INTENT_EVICTION && !a_deleted {
            return Ordering::Less;
        }
        if b.spec.intent == INTENT_EVICTION && !b_deleted {
            return Ordering::Greater;
        }
    }
    // Oldest first (already listed, fewer updates), then by requester name.
    let created = |r: &EvictionRequest| r.metadata.creation_timestamp.as_ref().map(|t| t.0);
    created(a)
        .cmp(&created(b))
        .then_with(|| a.spec.requester.cmp(&b.spec.requester))
}

/// Stably sorts EvictionRequests by relevance (case 64): existing before
/// status-only, non-deleting before deleting, intent `Eviction` before
/// `Withdrawn`, older before newer, then by requester name.
pub fn sort_eviction_requests_by_relevance(requests: &mut [&EvictionRequest]) {
    requests.sort_by(|a, b| by_relevance(a, b));
}

/// The aggregated requesters and whether they differ from the current ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestersUpdate {
    /// The new `status.requesters`, in relevance order.
    pub requesters: Vec<Requester>,
    /// A requester is new or its intent changed (pure removals do not count).
    pub changed: bool,
}

/// Aggregates `status.requesters` from the current list and the target's
/// EvictionRequests, capped at `limit` positions (§7.4-6).
pub fn aggregate_requesters(
    current: &[Requester],
    requests: &[&EvictionRequest],
    limit: usize,
) -> RequestersUpdate {
    // Later duplicates win, like upstream's map.
    let original: HashMap<&str, &str> = current
        .iter()
        .map(|r| (r.name.as_str(), r.intent.as_str()))
        .collect();
    let pseudo: Vec<EvictionRequest> = current
        .iter()
        .map(|r| EvictionRequest {
            spec: EvictionRequestSpec {
                requester: r.name.clone(),
                intent: r.intent.clone(),
                ..Default::default()
            },
            ..Default::default()
        })
        .collect();
    let mut candidates: Vec<&EvictionRequest> = requests.to_vec();
    candidates.extend(pseudo.iter());
    sort_eviction_requests_by_relevance(&mut candidates);

    let mut out = RequestersUpdate::default();
    let mut emitted: HashSet<&str> = HashSet::new();
    for request in candidates.into_iter().take(limit) {
        let name = request.spec.requester.as_str();
        if !emitted.insert(name) {
            continue;
        }
        let intent = if exists(request) && request.metadata.deletion_timestamp.is_none() {
            request.spec.intent.as_str()
        } else {
            INTENT_WITHDRAWN
        };
        if original.get(name) != Some(&intent) {
            out.changed = true;
        }
        out.requesters.push(Requester {
            name: name.to_owned(),
            intent: intent.to_owned(),
        });
    }
    out
}
