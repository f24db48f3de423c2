//! RFC 6902 JSON Patch with the semantics and error texts of
//! `gopkg.in/evanphx/json-patch.v4` (v4.12), which kube-apiserver uses:
//!
//! * paths are split on `/` and the first segment ignored; `~1` → `/`,
//!   then `~0` → `~`; a path without a `/` does not resolve;
//! * array indexes are `strconv.Atoi` numbers and may be negative (counted
//!   from the end); `-` appends for `add`;
//! * `replace` of a missing *object* key adds it (only array indexes are
//!   checked); `copy` of a missing object key copies `null`;
//! * `test` compares JSON values (`1` and `1.0` differ); a missing value
//!   equals an absent or `null` `value`.
//!
//! kube-apiserver (`handlers/patch.go`) answers an undecodable patch with
//! 400, more than 10000 operations with 413, and every failing operation with
//! `NewGenericServerResponse(422, …)`: reason `Invalid`, message `the server
//! rejected our request due to an error in our request`. That includes
//! `copy` operations whose copied values add up to more than
//! kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB, armed as the library's
//! `AccumulatedCopySizeLimit`), so a small patch cannot grow an object
//! without bound.

use serde_json::{Map, Value};

use super::error::PatchError;
use super::gofmt;

/// `maxJSONPatchOperations` in `handlers/patch.go`.
const MAX_OPERATIONS: usize = 10000;

/// `JSONPatchMaxCopyBytes`: the most bytes (of compact JSON) the `copy`
/// operations of one patch may copy in total.
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Applies `patch` to `original` as kube-apiserver does.
pub fn apply(original: &Value, patch: &[u8]) -> Result<Value, PatchError> {
    let ops = decode(patch).map_err(PatchError::bad_request)?;
    if ops.len() > MAX_OPERATIONS {
        return Err(PatchError::new(
            413,
            "RequestEntityTooLarge",
            format!(
                "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {}",
                ops.len()
            ),
        ));
    }
    let mut doc = original.clone();
    let mut copied = 0;
    for op in &ops {
        apply_op(&mut doc, op, &mut copied).map_err(PatchError::unprocessable)?;
    }
    Ok(doc)
}

/// `jsonpatch.DecodePatch`: a JSON array of objects (or `null`s).
fn decode(patch: &[u8]) -> Result<Vec<Option<Map<String, Value>>>, String> {
    if let Some(e) = super::gojson::syntax_error(patch) {
        return Err(e);
    }
    let value: Value = serde_json::from_slice(patch).map_err(|e| e.to_string())?;
    let items = match value {
        Value::Array(items) => items,
        Value::Null => return Ok(Vec::new()),
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
                crate::render::go_json_type(&other)
            ));
        }
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::Object(map) => Ok(Some(map)),
            Value::Null => Ok(None),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                crate::render::go_json_type(&other)
            )),
        })
        .collect()
}

const MISSING: &str = "missing value";
const INVALID_INDEX: &str = "invalid index referenced";

/// One operation's fields as the library reads them.
struct Op<'a> {
    fields: Option<&'a Map<String, Value>>,
}

impl<'a> Op<'a> {
    fn kind(&self) -> &'a str {
        match self.fields.and_then(|f| f.get("op")) {
            Some(Value::String(s)) => s,
            _ => "unknown",
        }
    }

    /// `Operation.Path()` / `From()`: a missing or `null` field is
    /// `ErrMissing`, a non-string one an unmarshal error.
    fn string_field(&self, name: &str, missing: &str) -> Result<&'a str, String> {
        match self.fields.and_then(|f| f.get(name)) {
            None | Some(Value::Null) => Err(format!("{missing}: {MISSING}")),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(format!(
                "json: cannot unmarshal {} into Go value of type string",
                crate::render::go_json_type(other)
            )),
        }
    }

    fn path(&self) -> Result<&'a str, String> {
        self.string_field("path", "operation missing path field")
    }

    fn from(&self) -> Result<&'a str, String> {
        self.string_field("from", "operation, missing from field")
    }

    /// `value`: `None` when absent, `Some(Null)` for `null`.
    fn value(&self) -> Option<&'a Value> {
        self.fields.and_then(|f| f.get("value"))
    }

    /// The value `add`/`replace` store: an absent `value` stores `null`.
    fn stored_value(&self) -> Value {
        self.value().cloned().unwrap_or(Value::Null)
    }
}

fn apply_op(
    doc: &mut Value,
    fields: &Option<Map<String, Value>>,
    copied: &mut usize,
) -> Result<(), String> {
    let op = Op {
        fields: fields.as_ref(),
    };
    match op.kind() {
        "add" => add(doc, &op),
        "remove" => remove(doc, &op),
        "replace" => replace(doc, &op),
        "move" => move_op(doc, &op),
        "test" => test(doc, &op),
        "copy" => copy(doc, &op, copied),
        other => Err(format!("Unexpected kind: {other}")),
    }
}

fn add(doc: &mut Value, op: &Op<'_>) -> Result<(), String> {
    let path = op
        .path()
        .map_err(|_| format!("add operation failed to decode path: {MISSING}"))?;
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        format!("add operation does not apply: doc is missing path: \"{path}\": {MISSING}")
    })?;
    container_add(con, &key, op.stored_value())
        .map_err(|e| format!("error in add for path: '{path}': {e}"))
}

fn remove(doc: &mut Value, op: &Op<'_>) -> Result<(), String> {
    let path = op
        .path()
        .map_err(|_| format!("remove operation failed to decode path: {MISSING}"))?;
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        format!("remove operation does not apply: doc is missing path: \"{path}\": {MISSING}")
    })?;
    container_remove(con, &key)
        .map(|_| ())
        .map_err(|e| format!("error in remove for path: '{path}': {e}"))
}

fn replace(doc: &mut Value, op: &Op<'_>) -> Result<(), String> {
    let path = op
        .path()
        .map_err(|e| format!("replace operation failed to decode path: {e}"))?;
    if path.is_empty() {
        return match op.value() {
            Some(v @ (Value::Object(_) | Value::Array(_))) => {
                *doc = v.clone();
                Ok(())
            }
            _ => Err("replace operation value must be object or array: %!w(<nil>)".to_owned()),
        };
    }
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        format!("replace operation does not apply: doc is missing path: {path}: {MISSING}")
    })?;
    if container_get(con, &key).is_err() {
        return Err(format!(
            "replace operation does not apply: doc is missing key: {path}: {MISSING}"
        ));
    }
    container_set(con, &key, op.stored_value())
        .map_err(|e| format!("error in remove for path: '{path}': {e}"))
}

fn move_op(doc: &mut Value, op: &Op<'_>) -> Result<(), String> {
    let from = op
        .from()
        .map_err(|e| format!("move operation failed to decode from: {e}"))?;
    let (con, key) = find_object(doc, from).ok_or_else(|| {
        format!("move operation does not apply: doc is missing from path: {from}: {MISSING}")
    })?;
    container_get(con, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
    let val =
        container_remove(con, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
    let path = op
        .path()
        .map_err(|e| format!("move operation failed to decode path: {e}"))?;
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        format!("move operation does not apply: doc is missing destination path: {path}: {MISSING}")
    })?;
    container_add(con, &key, val).map_err(|e| format!("error in move for path: '{path}': {e}"))
}

fn test(doc: &mut Value, op: &Op<'_>) -> Result<(), String> {
    let path = op
        .path()
        .map_err(|e| format!("test operation failed to decode path: {e}"))?;
    let failed = || format!("testing value {path} failed: test failed");
    if path.is_empty() {
        return match op.value() {
            Some(v) if v == doc => Ok(()),
            _ => Err(failed()),
        };
    }
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        format!("test operation does not apply: is missing path: {path}: {MISSING}")
    })?;
    let current =
        container_get(con, &key).map_err(|e| format!("error in test for path: '{path}': {e}"))?;
    match (current, op.value()) {
        (None | Some(Value::Null), None | Some(Value::Null)) => Ok(()),
        (None | Some(Value::Null), Some(_)) | (Some(_), None) => Err(failed()),
        (Some(cur), Some(want)) if cur == want => Ok(()),
        _ => Err(failed()),
    }
}

/// `copy`, adding the copied value's size to `copied` and failing once
/// the patch has copied more than [`MAX_COPY_BYTES`].
fn copy(doc: &mut Value, op: &Op<'_>, copied: &mut usize) -> Result<(), String> {
    let from = op
        .from()
        .map_err(|e| format!("copy operation failed to decode from: {e}"))?;
    let (con, key) = find_object(doc, from).ok_or_else(|| {
        format!("copy operation does not apply: doc is missing from path: {from}: {MISSING}")
    })?;
    let val = container_get(con, &key)
        .map_err(|e| format!("error in copy for from: '{from}': {e}"))?
        .cloned()
        .unwrap_or(Value::Null);
    let path = op
        .path()
        .map_err(|_| format!("copy operation failed to decode path: {MISSING}"))?;
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        format!("copy operation does not apply: doc is missing destination path: {path}: {MISSING}")
    })?;
    // The library measures the value as it marshals it (missing: 0; an
    // explicit `null`, 4 there, counts 0 here).
    let size = match &val {
        Value::Null => 0,
        v => serde_json::to_vec(v).map_or(0, |b| b.len()),
    };
    *copied = copied.saturating_add(size);
    if *copied > MAX_COPY_BYTES {
        return Err(format!(
            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
        ));
    }
    container_add(con, &key, val).map_err(|e| format!("error while adding value during copy: {e}"))
}

/// RFC 6901 token decoding as `strings.NewReplacer("~1", "/", "~0", "~")`.
fn decode_key(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut rest = token;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("~1") {
            out.push('/');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("~0") {
            out.push('~');
            rest = r;
        } else {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        }
    }
    out
}

/// `findObject`: the container holding the last token, and that token.
fn find_object<'d>(doc: &'d mut Value, path: &str) -> Option<(&'d mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let (last, parts) = split[1..].split_last()?;
    let mut cur = doc;
    for part in parts {
        let key = decode_key(part);
        let next = match container_get_mut(cur, &key) {
            Ok(Some(next)) if !next.is_null() => next,
            _ => return None,
        };
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        cur = next;
    }
    Some((cur, decode_key(last)))
}

/// An array index as `partialArray.get` resolves it (negative from the end).
fn array_index(len: usize, key: &str) -> Result<usize, String> {
    let idx = gofmt::atoi(key)?;
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let resolved = if idx < 0 {
        if idx < -len_i {
            return Err(format!(
                "Unable to access invalid index: {idx}: {INVALID_INDEX}"
            ));
        }
        idx + len_i
    } else {
        idx
    };
    if resolved >= len_i {
        return Err(format!(
            "Unable to access invalid index: {idx}: {INVALID_INDEX}"
        ));
    }
    usize::try_from(resolved)
        .map_err(|_| format!("Unable to access invalid index: {idx}: {INVALID_INDEX}"))
}

fn container_get<'v>(con: &'v Value, key: &str) -> Result<Option<&'v Value>, String> {
    match con {
        Value::Object(map) => Ok(map.get(key)),
        Value::Array(items) => {
            let i = array_index(items.len(), key)?;
            Ok(items.get(i))
        }
        _ => Ok(None),
    }
}

fn container_get_mut<'v>(con: &'v mut Value, key: &str) -> Result<Option<&'v mut Value>, String> {
    match con {
        Value::Object(map) => Ok(map.get_mut(key)),
        Value::Array(items) => {
            let i = array_index(items.len(), key)?;
            Ok(items.get_mut(i))
        }
        _ => Ok(None),
    }
}

fn container_set(con: &mut Value, key: &str, val: Value) -> Result<(), String> {
    match con {
        Value::Object(map) => {
            map.insert(key.to_owned(), val);
            Ok(())
        }
        Value::Array(items) => {
            let i = array_index(items.len(), key)?;
            if let Some(slot) = items.get_mut(i) {
                *slot = val;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn container_add(con: &mut Value, key: &str, val: Value) -> Result<(), String> {
    match con {
        Value::Object(map) => {
            map.insert(key.to_owned(), val);
            Ok(())
        }
        Value::Array(items) => {
            if key == "-" {
                items.push(val);
                return Ok(());
            }
            let idx = gofmt::atoi(key)
                .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
            let size = i64::try_from(items.len()).unwrap_or(i64::MAX) + 1;
            let invalid = || format!("Unable to access invalid index: {idx}: {INVALID_INDEX}");
            if idx >= size || idx < -size {
                return Err(invalid());
            }
            let resolved = if idx < 0 { idx + size } else { idx };
            let i = usize::try_from(resolved).map_err(|_| invalid())?;
            items.insert(i, val);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn container_remove(con: &mut Value, key: &str) -> Result<Value, String> {
    match con {
        Value::Object(map) => map
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: {MISSING}")),
        Value::Array(items) => {
            let i = array_index(items.len(), key)?;
            Ok(items.remove(i))
        }
        _ => Err(format!(
            "Unable to remove nonexistent key: {key}: {MISSING}"
        )),
    }
}

#[cfg(test)]
mod copy_limit_tests {
    use super::*;

    fn doubling_patch(ops: usize) -> Vec<u8> {
        let ops: Vec<Value> = (0..ops)
            .map(|i| serde_json::json!({"op": "copy", "from": format!("/a{i}"), "path": format!("/a{}", i + 1)}))
            .collect();
        serde_json::to_vec(&ops).expect("patch")
    }

    #[test]
    fn copies_beyond_three_mebibytes_are_refused_like_upstream() {
        // Each copy duplicates a 1 KiB string: 3072 copies reach the limit
        // exactly, one more exceeds it.
        let original = serde_json::json!({"a0": "x".repeat(1022)});
        let within = apply(&original, &doubling_patch(3072)).expect("at the limit");
        assert_eq!(within.as_object().map(Map::len), Some(3073));
        let e = apply(&original, &doubling_patch(3073)).expect_err("over the limit");
        assert_eq!(e.to_status().code, Some(422));
        assert_eq!(e.to_status().reason.as_deref(), Some("Invalid"));
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "Unable to complete the copy, the accumulated size increase of copy is 3146752, exceeding the limit 3145728"
            )
        );
    }
}
