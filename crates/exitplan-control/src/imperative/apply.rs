//! The evictor's status write: its own `status.responders` entry, sent as a
//! server-side apply of the `status` subresource (force, field manager
//! [`super::FIELD_MANAGER`]), plus a helper that merges the entry into an
//! Eviction status the way that apply does (for an update-based runtime and
//! for tests that validate the resulting status).

use k8s_openapi::Resource;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionStatus, ResponderStatus};

/// The apply payload carried over from the last observed entry: `name`,
/// every set time (`startTime`, `heartbeatTime`, `expectedCompletionTime`,
/// `completionTime`) and `message` — the empty string when it was unset
/// (upstream `toResponderStatusApplyConfiguration`).
pub fn apply_payload(last: &ResponderStatus) -> ResponderStatus {
    ResponderStatus {
        name: last.name.clone(),
        start_time: last.start_time.clone(),
        heartbeat_time: last.heartbeat_time.clone(),
        expected_completion_time: last.expected_completion_time.clone(),
        completion_time: last.completion_time.clone(),
        message: Some(last.message.clone().unwrap_or_default()),
    }
}

/// The body of the `ApplyStatus` request for `eviction`: apiVersion, kind,
/// name, namespace and `status.responders` holding only `entry`.
pub fn apply_status_body(eviction: &Eviction, entry: &ResponderStatus) -> serde_json::Value {
    let mut metadata = serde_json::Map::new();
    if let Some(name) = &eviction.metadata.name {
        metadata.insert("name".into(), name.clone().into());
    }
    if let Some(namespace) = &eviction.metadata.namespace {
        metadata.insert("namespace".into(), namespace.clone().into());
    }
    serde_json::json!({
        "apiVersion": Eviction::API_VERSION,
        "kind": Eviction::KIND,
        "metadata": metadata,
        "status": { "responders": [entry] },
    })
}

/// `status` with the same-named `status.responders` entry replaced by
/// `entry` (appended if missing) — what the forced apply results in, since
/// the payload always carries every field the evictor ever set.
pub fn merge_responder_status(status: &EvictionStatus, entry: ResponderStatus) -> EvictionStatus {
    let mut merged = status.clone();
    let responders = merged.responders.get_or_insert_with(Vec::new);
    match responders.iter_mut().find(|r| r.name == entry.name) {
        Some(existing) => *existing = entry,
        None => responders.push(entry),
    }
    merged
}
