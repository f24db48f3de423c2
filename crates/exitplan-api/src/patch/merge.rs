//! RFC 7386 JSON merge patch as `jsonpatch.MergePatch` (evanphx v4) does
//! it: `null` deletes, objects merge recursively, anything else (arrays
//! included) replaces; `null`s inside a value that lands where there was no
//! object are pruned. A patch that is not JSON, or is `null` or a scalar, is
//! `Invalid JSON Patch` (400, `handlers/patch.go`).

use serde_json::{Map, Value};

use super::error::PatchError;

/// `jsonpatch.ErrBadJSONPatch`.
const BAD_PATCH: &str = "Invalid JSON Patch";

/// Applies the merge patch `patch` to `original`.
pub fn apply(original: &Value, patch: &[u8]) -> Result<Value, PatchError> {
    let patch: Value =
        serde_json::from_slice(patch).map_err(|_| PatchError::bad_request(BAD_PATCH))?;
    match patch {
        Value::Object(p) => {
            let mut doc = original.clone();
            match &mut doc {
                Value::Object(d) => merge_docs(d, p),
                _ => doc = Value::Object(prune_doc(p)),
            }
            Ok(doc)
        }
        // "Not an error, just not a doc": an array patch becomes the result.
        Value::Array(items) => Ok(Value::Array(prune_array(items))),
        _ => Err(PatchError::bad_request(BAD_PATCH)),
    }
}

/// Merges `patch` into `doc` (`mergeDocs` without merge-merge).
pub fn merge_docs(doc: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            doc.remove(&k);
            continue;
        }
        match doc.get_mut(&k) {
            Some(cur) if !cur.is_null() => merge_value(cur, v),
            _ => {
                doc.insert(k, prune(v));
            }
        }
    }
}

fn merge_value(cur: &mut Value, patch: Value) {
    match (cur, patch) {
        (Value::Object(c), Value::Object(p)) => merge_docs(c, p),
        (cur @ Value::Object(_), p) => *cur = p,
        (cur, p) => *cur = prune(p),
    }
}

fn prune(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(prune_doc(m)),
        Value::Array(items) => Value::Array(prune_array(items)),
        other => other,
    }
}

fn prune_doc(m: Map<String, Value>) -> Map<String, Value> {
    m.into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k, prune(v)))
        .collect()
}

/// `pruneAryNulls`: keeps `null` items, prunes inside the others.
fn prune_array(items: Vec<Value>) -> Vec<Value> {
    items.into_iter().map(prune).collect()
}
