//! Strategic merge patch as kube-apiserver applies it
//! (`strategicpatch.StrategicMergeMapPatch` with `MergeParallelList` and
//! `IgnoreUnmatchedNulls`), driven by the [`schema`](super::schema) table.
//!
//! * maps merge key by key; `null` deletes; `{"$patch": "replace"}` replaces
//!   a map, `{"$patch": "delete"}` empties it;
//! * lists tagged `patchStrategy:"merge"` merge by their merge key (lists of
//!   primitives: union); items `{"$patch": "delete", <key>: …}` delete,
//!   `{"$patch": "replace"}` replaces the list; other lists are replaced;
//! * `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and
//!   `$retainKeys` work as upstream's, including the order rules (patch
//!   items first in patch order, server-only items inserted by live order).
//!
//! Error codes follow `interpretStrategicMergePatchError`: malformed
//! directives are 400, lists of lists and retainKeys mismatches 422 (the
//! generic message), everything else a plain 500 with the library's text.

use serde_json::{Map, Value};

use super::error::PatchError;
use super::gofmt;
use super::gojson;
use super::schema::{ANY, CUSTOM_RESOURCE_PATCH_TYPES, Schema, SmpList, Target};
use super::{GoField, GoTypes};

const DIRECTIVE: &str = "$patch";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const RETAIN_KEYS: &str = "$retainKeys";

const ERR_BAD_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const ERR_BAD_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const ERR_BAD_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";
const ERR_NO_LIST_OF_LISTS: &str = "lists of lists are not supported";

/// `negotiation.NewUnsupportedMediaTypeError(accepted)`'s message.
pub fn unsupported_media_type_message(accepted: &[&str]) -> String {
    format!(
        "the body of the request was in an unknown format - accepted media types include: {}",
        accepted.join(", ")
    )
}

/// A failure inside the merge, classified as upstream's handler does.
enum Fail {
    BadRequest(&'static str),
    Unprocessable(&'static str),
    Internal(String),
}

impl From<Fail> for PatchError {
    fn from(f: Fail) -> PatchError {
        match f {
            Fail::BadRequest(m) => PatchError::bad_request(m),
            Fail::Unprocessable(m) => PatchError::unprocessable(m),
            Fail::Internal(m) => PatchError::internal(m),
        }
    }
}

type R<T> = Result<T, Fail>;

/// Where the merge is in the kind's Go types, when they are known.
#[derive(Clone, Copy)]
enum Go<'t> {
    /// Not known: no lookups fail.
    Unknown,
    /// Inside the struct with this definition.
    Struct(&'t dyn GoTypes, &'t str),
    /// Inside a map (values: this struct definition, if structs).
    Map(&'t dyn GoTypes, Option<&'t str>),
}

impl<'t> Go<'t> {
    /// The value of field `key` (a map merged into a map).
    fn child(self, key: &str) -> Go<'t> {
        match self {
            Go::Struct(t, def) => match t.field(def, key) {
                GoField::Struct(d) => Go::Struct(t, d),
                GoField::Map(e) => Go::Map(t, e),
                _ => Go::Unknown,
            },
            Go::Map(t, Some(e)) => Go::Struct(t, e),
            _ => Go::Unknown,
        }
    }

    /// The items of the list field `key`.
    fn items(self, key: &str) -> Go<'t> {
        match self {
            Go::Struct(t, def) => match t.field(def, key) {
                GoField::List(Some(e)) => Go::Struct(t, e),
                _ => Go::Unknown,
            },
            _ => Go::Unknown,
        }
    }

    /// `LookupPatchMetadataForSlice(key)`: the field must exist and be a
    /// slice.
    fn slice_lookup(self, key: &str) -> R<()> {
        match self {
            Go::Unknown => Ok(()),
            Go::Map(..) => Err(Fail::Internal(
                "expected slice or array type, but got: map".to_owned(),
            )),
            Go::Struct(t, def) => match t.field(def, key) {
                GoField::List(_) => Ok(()),
                GoField::Unknown => Err(Fail::Internal(format!(
                    "unable to find api field in struct {} for the json field {}",
                    def.rsplit('.').next().unwrap_or(def),
                    gofmt::quote(key)
                ))),
                _ => Err(Fail::Internal(
                    "expected slice or array type, but got: struct".to_owned(),
                )),
            },
        }
    }
}

/// Applies a strategic merge patch to `original` (an object of `target`;
/// `types`: its Go types and root definition, when known). A target
/// without strategic merge patch (a custom resource, a kind without a
/// schema) is a 415 listing the accepted types, as upstream answers.
pub fn apply(
    target: Target<'_>,
    original: &Value,
    patch: &[u8],
    types: Option<(&dyn GoTypes, &str)>,
) -> Result<Value, PatchError> {
    let Some(ts) = target.schema.filter(|t| t.strategic) else {
        return Err(PatchError::new(
            415,
            "UnsupportedMediaType",
            unsupported_media_type_message(CUSTOM_RESOURCE_PATCH_TYPES),
        ));
    };
    if let Some(e) = gojson::syntax_error(patch) {
        return Err(PatchError::bad_request(e));
    }
    let patch: Value =
        serde_json::from_slice(patch).map_err(|e| PatchError::bad_request(e.to_string()))?;
    let patch = match patch {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            return Err(PatchError::bad_request(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                crate::render::go_json_type(&other)
            )));
        }
    };
    let original = match original {
        Value::Object(m) => m.clone(),
        _ => return Err(PatchError::bad_request("invalid JSON document")),
    };
    let go = match types {
        Some((t, root)) => Go::Struct(t, root),
        None => Go::Unknown,
    };
    Ok(Value::Object(merge_map(original, patch, &ts.root, go)?))
}

/// `reflect.TypeOf(v)` of a value decoded into `interface{}`.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `mergepatch.ErrBadArgType`: `%s` of `reflect.TypeOf` (a `nil` value has
/// no type: `%!s(<nil>)`).
fn bad_arg_type(expected: &str, actual: &Value) -> Fail {
    let actual = match actual {
        Value::Null => "%!s(<nil>)",
        other => go_type(other),
    };
    Fail::Internal(format!("expected a {expected}, but received a {actual}"))
}

fn no_merge_key(m: &Map<String, Value>, key: &str) -> Fail {
    Fail::Internal(format!(
        "map: {} does not contain declared merge key: {key}",
        gofmt::v(&Value::Object(m.clone()))
    ))
}

/// `mergepatch.ErrBadPatchType`: the directive with `%s`, the map with `%v`.
fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> Fail {
    Fail::Internal(format!(
        "unknown patch type: {} in map: {}",
        gofmt::s(directive),
        gofmt::v(&Value::Object(m.clone()))
    ))
}

/// The value kind Go's `reflect.TypeOf` distinguishes for merging.
fn same_kind(a: &Value, b: &Value) -> bool {
    go_type(a) == go_type(b)
}

/// `mergeMap`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: &Schema,
    go: Go<'_>,
) -> R<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE).cloned() {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(&directive, &patch)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, schema, go)?;

    for (key, patch_v) in patch {
        let (k, is_delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            (
                extract_key(&key, DELETE_FROM_PRIMITIVE_LIST)
                    .ok_or(Fail::BadRequest(ERR_BAD_PRIMITIVE_LIST))?,
                true,
            )
        } else {
            (key, false)
        };
        if patch_v.is_null() {
            original.remove(&k);
            continue;
        }
        let take_patch = match original.get(&k) {
            None => true,
            Some(orig) => !same_kind(orig, &patch_v),
        };
        if take_patch {
            if !is_delete_list {
                let mut v = patch_v;
                discard_nulls(&mut v);
                match remove_directives(v) {
                    Some(v) => {
                        original.insert(k, v);
                    }
                    None => {
                        original.remove(&k);
                    }
                }
            }
            continue;
        }
        let Some(orig) = original.remove(&k) else {
            continue;
        };
        let field = schema.field(&k);
        let merged = match (orig, patch_v) {
            (Value::Object(o), Value::Object(p)) => {
                Some(Value::Object(merge_map(o, p, field, go.child(&k))?))
            }
            (Value::Array(o), Value::Array(p)) => Some(Value::Array(merge_slice_handler(
                o,
                p,
                field,
                is_delete_list,
                go.items(&k),
            )?)),
            (_, p) => remove_directives(p),
        };
        if let Some(v) = merged {
            original.insert(k, v);
        }
    }
    Ok(original)
}

/// `extractKey`: the field named after `<prefix>/`.
fn extract_key(s: &str, prefix: &str) -> Option<String> {
    match s.split_once('/') {
        Some((p, rest)) if p == prefix => Some(rest.to_owned()),
        _ => None,
    }
}

/// `applyRetainKeysDirective`.
fn apply_retain_keys(original: &mut Map<String, Value>, patch: &mut Map<String, Value>) -> R<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(Fail::BadRequest(ERR_BAD_RETAIN_KEYS));
    };
    let listed = |k: &str| retain.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !listed(k) {
            return Err(Fail::BadRequest(ERR_BAD_RETAIN_KEYS));
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// The strategy and merge key of a list field.
fn list_meta(field: &Schema) -> (&SmpList, &Schema) {
    static REPLACE: SmpList = SmpList::Replace;
    match field.list() {
        Some(l) => (&l.smp, &l.elem),
        None => (&REPLACE, &ANY),
    }
}

/// `mergePatchIntoOriginal`: `$setElementOrder/<field>` lists.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: &Schema,
    go: Go<'_>,
) -> R<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type("[]interface {}", &order));
        };
        let field_key = extract_key(&key, SET_ELEMENT_ORDER)
            .ok_or(Fail::BadRequest(ERR_BAD_SET_ELEMENT_ORDER))?;
        let original_list = match original.get(&field_key) {
            None => None,
            Some(Value::Array(l)) => Some(l.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let patch_list = match patch.get(&field_key) {
            None => None,
            Some(Value::Array(l)) => Some(l.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        go.slice_lookup(&field_key)?;
        let field = schema.field(&field_key);
        let (strategy, _) = list_meta(field);
        let merge_key = strategy.merge_key();
        validate_set_order(patch_list.as_deref().unwrap_or_default(), &order, merge_key)?;
        let merged = match (&original_list, &patch_list) {
            (Some(o), None) => o.clone(),
            (None, Some(p)) => match remove_directives(Value::Array(p.clone())) {
                Some(Value::Array(v)) => v,
                _ => continue,
            },
            (Some(o), Some(p)) => {
                merge_slice_handler(o.clone(), p.clone(), field, false, go.items(&field_key))?
            }
            (None, None) => continue,
        };
        let (patch_items, server_only) = partition(&merged, &order, merge_key)?;
        let original_items = original_list.unwrap_or_default();
        let is_map = element_is_map(&original_items, patch_list.as_deref().unwrap_or_default())?;
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &original_items,
            merge_key,
            is_map,
        )?;
        original.insert(field_key.clone(), Value::Array(both));
        patch.remove(&field_key);
    }
    Ok(())
}

/// `validatePatchWithSetOrderList`.
fn validate_set_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> R<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<Value> = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        split_deletes(patch_list)?.0
    };
    let (mut pi, mut si) = (0, 0);
    while let (Some(p), Some(s)) = (non_delete.get(pi), order.get(si)) {
        if p.as_object().is_some_and(|m| m.contains_key(DIRECTIVE)) {
            pi += 1;
            continue;
        }
        if merge_key_equal(p, s, merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < non_delete.len() && si >= order.len() {
        return Err(Fail::Internal(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            gofmt::v(&Value::Array(patch_list.to_vec())),
            gofmt::v(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
fn merge_key_equal(left: &Value, right: &Value, merge_key: &str) -> R<bool> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let l = left
        .as_object()
        .ok_or_else(|| bad_arg_type("map[string]interface {}", left))?;
    let r = right
        .as_object()
        .ok_or_else(|| bad_arg_type("map[string]interface {}", right))?;
    let lv = l.get(merge_key).ok_or_else(|| no_merge_key(l, merge_key))?;
    let rv = r.get(merge_key).ok_or_else(|| no_merge_key(r, merge_key))?;
    Ok(lv == rv)
}

/// `extractToDeleteItems`: items without and with `$patch: delete`.
fn split_deletes(list: &[Value]) -> R<(Vec<Value>, Vec<Value>)> {
    let mut keep = Vec::new();
    let mut delete = Vec::new();
    for v in list {
        let m = v
            .as_object()
            .ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
        if m.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
            delete.push(v.clone());
        } else {
            keep.push(v.clone());
        }
    }
    Ok((keep, delete))
}

/// `mergeSliceHandler`: a list without `patchStrategy:"merge"` takes the
/// patch's list, even under `$deleteFromPrimitiveList/` (upstream replaces
/// an atomic list such as `args` with the items meant for deletion).
fn merge_slice_handler(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: &Schema,
    is_delete_list: bool,
    go_items: Go<'_>,
) -> R<Vec<Value>> {
    let (strategy, elem) = list_meta(field);
    if *strategy != SmpList::Replace {
        merge_slice(
            original,
            patch,
            elem,
            strategy.merge_key(),
            is_delete_list,
            go_items,
        )
    } else {
        Ok(patch)
    }
}

/// `sliceElementType`: whether the items are maps (all items must share a
/// type; lists of lists are refused).
fn element_is_map(original: &[Value], patch: &[Value]) -> R<bool> {
    let mut prev: Option<&'static str> = None;
    for v in original.iter().chain(patch) {
        let t = go_type(v);
        match prev {
            None => {
                if v.is_array() {
                    return Err(Fail::Unprocessable(ERR_NO_LIST_OF_LISTS));
                }
                prev = Some(t);
            }
            Some(p) if p != t => {
                return Err(Fail::Internal(format!(
                    "list element types are not identical: [{} {}]",
                    gofmt::v(&Value::Array(original.to_vec())),
                    gofmt::v(&Value::Array(patch.to_vec()))
                )));
            }
            Some(_) => {}
        }
    }
    match prev {
        Some(t) => Ok(t == "map[string]interface {}"),
        None => Err(Fail::Internal(
            "no elements in any of the given slices".to_owned(),
        )),
    }
}

/// `mergeSlice`.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    elem: &Schema,
    merge_key: &str,
    is_delete_list: bool,
    go_items: Go<'_>,
) -> R<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let is_map = element_is_map(&original, &patch)?;
    let (original, patch, merged) = if !is_map {
        if is_delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::new();
        for v in original.iter().chain(&patch) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(Fail::Internal(
                "cannot merge lists without merge key for object".to_owned(),
            ));
        }
        let (original, patch) = merge_special_elements(original, patch, merge_key)?;
        let merged = merge_plain_elements(original.clone(), &patch, merge_key, elem, go_items)?;
        (original, patch, merged)
    };
    let key = if is_map { merge_key } else { "" };
    let (patch_items, server_only) = partition(&merged, &patch, key)?;
    normalize_element_order(patch_items, server_only, &patch, &original, key, is_map)
}

/// `mergeSliceWithSpecialElements`: applies `$patch` items, returns the
/// updated original and the patch without them.
fn merge_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> R<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::new();
    let mut replace = false;
    for v in patch {
        let Value::Object(m) = &v else {
            plain.push(v);
            continue;
        };
        let Some(directive) = m.get(DIRECTIVE) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
                while let Some(i) = find_by_key(&original, merge_key, value)? {
                    original.remove(i);
                }
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(Fail::Internal(
                    "merging lists cannot yet be specified in the patch".to_owned(),
                ));
            }
            _ => return Err(bad_patch_type(directive, m)),
        }
    }
    if replace {
        Ok((plain, Vec::new()))
    } else {
        Ok((original, plain))
    }
}

/// `findMapInSliceBasedOnKeyValue`: the index of the item whose merge key
/// equals `value`.
fn find_by_key(list: &[Value], key: &str, value: &Value) -> R<Option<usize>> {
    for (i, v) in list.iter().enumerate() {
        let m = v
            .as_object()
            .ok_or_else(|| Fail::Internal(format!("value for key {i} is not a map.")))?;
        if m.get(key) == Some(value) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `mergeSliceWithoutSpecialElements`.
fn merge_plain_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    elem: &Schema,
    go_items: Go<'_>,
) -> R<Vec<Value>> {
    for v in patch {
        let m = v
            .as_object()
            .ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
        let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
        match find_by_key(&original, merge_key, value)? {
            Some(i) => {
                let Some(Value::Object(o)) = original.get(i).cloned() else {
                    continue;
                };
                let merged = merge_map(o, m.clone(), elem, go_items)?;
                if let Some(slot) = original.get_mut(i) {
                    *slot = Value::Object(merged);
                }
            }
            None => original.push(v.clone()),
        }
    }
    Ok(original)
}

/// `partition{Primitives,Maps}ByPresentInList`.
fn partition(merged: &[Value], by: &[Value], merge_key: &str) -> R<(Vec<Value>, Vec<Value>)> {
    let mut in_patch = Vec::new();
    let mut server_only = Vec::new();
    for v in merged {
        let present = if merge_key.is_empty() {
            by.contains(v)
        } else {
            let m = v
                .as_object()
                .ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
            let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
            find_by_key(by, merge_key, value)?.is_some()
        };
        if present {
            in_patch.push(v.clone());
        } else {
            server_only.push(v.clone());
        }
    }
    Ok((in_patch, server_only))
}

/// `index`: position of `v` in `list` (by merge key for maps; a missing key
/// compares as `nil`).
fn index_of(list: &[Value], v: &Value, merge_key: &str, is_map: bool) -> Option<usize> {
    if is_map {
        let key = |x: &Value| x.as_object().and_then(|m| m.get(merge_key)).cloned();
        let want = key(v);
        list.iter().position(|x| key(x) == want)
    } else {
        list.iter().position(|x| x == v)
    }
}

/// `normalizeElementOrder`.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> R<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, is_map)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, is_map)?;
    Ok(merge_sorted(
        server_only,
        patch,
        server_order,
        merge_key,
        is_map,
    ))
}

/// `normalizeSliceOrder`: stable sort by position in `order`, `$patch:
/// delete` items last.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> R<Vec<Value>> {
    let (mut items, deletes) = if is_map {
        for v in to_sort.iter().chain(order) {
            let m = v
                .as_object()
                .ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
            if !m.contains_key(merge_key) {
                return Err(no_merge_key(m, merge_key));
            }
        }
        split_deletes(&to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    // sort.SliceStable (insertion sort) with upstream's less function.
    let less = |a: &Value, b: &Value| match (
        index_of(order, a, merge_key, is_map),
        index_of(order, b, merge_key, is_map),
    ) {
        (Some(i), Some(j)) => i < j,
        _ => true,
    };
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && less(&items[j], &items[j - 1]) {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
    items.extend(deletes);
    Ok(items)
}

/// `mergeSortedSlice`: server-only items (`left`) inserted into the patch
/// items (`right`) by their live order.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    loop {
        let take_left = match (l.peek(), r.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => matches!(
                (
                    index_of(server_order, a, merge_key, is_map),
                    index_of(server_order, b, merge_key, is_map)
                ),
                (Some(i), Some(j)) if i < j
            ),
        };
        let next = if take_left { l.next() } else { r.next() };
        if let Some(v) = next {
            out.push(v);
        }
    }
    out
}

/// `discardNullValuesFromPatch`.
fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// `removeDirectives`: `None` when the value itself is a `$patch` map.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE) {
                return None;
            }
            Some(Value::Object(
                m.into_iter()
                    .filter_map(|(k, x)| remove_directives(x).map(|x| (k, x)))
                    .collect(),
            ))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}
