//! GET of one object (and of its `status` subresource).

use std::sync::Arc;

use axum::response::Response;
use serde_json::{Value, json};

use super::errors::{ApiError, not_found};
use super::meta::served;
use super::negotiate::{Output, output};
use super::respond;
use super::state::{Call, State};
use crate::discovery;
use crate::registry::ResourceDef;
use crate::storage::StoredObject;

/// The stored object `name`, or 404, with the object as `def` serves it.
pub fn current(
    state: &State,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
) -> Result<(Arc<StoredObject>, Value), ApiError> {
    let key = def.key(namespace, name);
    if let Some(damage) = state.store.damage(&key) {
        return Err(damage.into());
    }
    let stored = state
        .store
        .get(&key)
        .ok_or_else(|| not_found(def.group, def.plural, name))?;
    let value = served(def, stored.value()?);
    Ok((stored, value))
}

/// Renders one object as JSON or a one-row Table.
pub fn render(call: &Call, code: u16, object: &Value) -> Result<Response, ApiError> {
    match output(&call.headers, &call.query)? {
        Output::Json => Ok(respond::json(code, object)),
        Output::Table(include) => {
            let rv = object
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            let table = discovery::table(
                call.def,
                std::slice::from_ref(object),
                json!({"resourceVersion": rv}),
                include,
                call.state.clock.now(),
            );
            Ok(respond::json(code, &table))
        }
    }
}

/// Renders a stored object: as JSON, its stored bytes when they already
/// are what [`render`] would write (typed: `apiVersion` and `kind` first).
pub fn render_stored(call: &Call, code: u16, stored: &StoredObject) -> Result<Response, ApiError> {
    if matches!(output(&call.headers, &call.query)?, Output::Json)
        && is_typed(call.def, &stored.json)
    {
        return Ok(respond::json_bytes(code, stored.json.clone()));
    }
    render(call, code, &served(call.def, stored.value()?))
}

/// Whether stored JSON starts with `def`'s `apiVersion` and `kind`: stored
/// objects are serialized with sorted keys and every write path types them,
/// so such bytes are the object exactly as an answer shows it. Never for a
/// resource whose objects are stored in another shape (its `conversion`):
/// those are converted for every answer.
pub fn is_typed(def: &ResourceDef, json: &[u8]) -> bool {
    if def.conversion.is_some() {
        return false;
    }
    let api_version = def.api_version();
    let fields: [&[u8]; 5] = [
        b"{\"apiVersion\":\"",
        api_version.as_bytes(),
        b"\",\"kind\":\"",
        def.kind.as_bytes(),
        b"\",",
    ];
    let mut rest = json;
    for f in fields {
        match rest.strip_prefix(f) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    true
}

/// `GET …/<name>` and `GET …/<name>/status`.
pub async fn get(call: &Call) -> Result<Response, ApiError> {
    output(&call.headers, &call.query)?;
    // With a resourceVersion the watch cache serves the read: the value must
    // be a number (else the storage error passes through as a 500), and at
    // least as new as the object is wanted (504 `Too large resource version`
    // when the store has not reached it).
    if let Some(rv) = call.query.non_empty("resourceVersion") {
        let wanted = super::resourceversion::parse_cached(rv)?;
        let current = call.state.store.revision();
        if wanted > current {
            return Err(super::errors::too_large_resource_version(wanted, current));
        }
    }
    let key = call.def.key(call.ns(), call.name());
    if let Some(damage) = call.state.store.damage(&key) {
        return Err(damage.into());
    }
    let stored = call
        .state
        .store
        .get(&key)
        .ok_or_else(|| not_found(call.def.group, call.def.plural, call.name()))?;
    render_stored(call, 200, &stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn stored_bytes_are_the_answer_only_without_a_conversion() {
        let core = find("", "v1", "events").expect("core events");
        let events = find("events.k8s.io", "v1", "events").expect("events.k8s.io");
        let stored = br#"{"apiVersion":"v1","kind":"Event","message":"m"}"#;
        assert!(is_typed(core, stored));
        assert!(!is_typed(events, stored));
        // Even bytes that look like the view are converted (never spliced).
        let view = br#"{"apiVersion":"events.k8s.io/v1","kind":"Event","note":"m"}"#;
        assert!(!is_typed(events, view));
        let value: Value = serde_json::from_slice(stored).expect("json");
        let served = super::super::meta::served(events, value);
        assert_eq!(served["note"], "m");
        assert_eq!(served["apiVersion"], "events.k8s.io/v1");
        assert!(served.get("message").is_none());
    }
}
