//! The value walkers of structured-merge-diff's `typed` package, on JSON
//! values and the [`schema`](super::schema) table: the field set a value
//! sets (`ToFieldSet`), the comparison of two values (`Compare`), the merge
//! of an applied configuration into a live object (`Merge`) and the removal
//! of a field set (`RemoveItems`), plus `EnsureNamedFieldsAreMembers`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fields::{FieldSet, PathElement, compare_values, path_string};
use super::schema::{ANY, Schema, SsaList};

/// Added, removed and modified paths between two values.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Paths only in the new value.
    pub added: FieldSet,
    /// Paths only in the old value.
    pub removed: FieldSet,
    /// Leaves present in both with different values.
    pub modified: FieldSet,
}

impl Comparison {
    /// Drops every path under `ignored` (`Comparison.ExcludeFields`).
    pub fn exclude(self, ignored: &FieldSet) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(ignored),
            removed: self.removed.recursive_difference(ignored),
            modified: self.modified.recursive_difference(ignored),
        }
    }
}

/// Value equality as structured-merge-diff has it (numbers compare by value).
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| values_equal(v, w))
        }
        (Value::Number(_), Value::Number(_)) => compare_values(a, b) == std::cmp::Ordering::Equal,
        _ => a == b,
    }
}

/// The granular list schema of `schema`, if it has one.
fn granular_list(schema: &Schema) -> Option<(&SsaList, &Schema)> {
    schema
        .list()
        .filter(|l| l.ssa != SsaList::Atomic)
        .map(|l| (&l.ssa, &l.elem))
}

/// `listItemToPathElement`.
fn item_pe(ssa: &SsaList, i: usize, item: &Value) -> Result<PathElement, String> {
    match ssa {
        SsaList::Map(keys) => {
            let Value::Object(m) = item else {
                return Err(format!(
                    "element {i}: associative list with keys may not have non-map elements"
                ));
            };
            let mut fields: Vec<(String, Value)> = Vec::with_capacity(keys.len());
            for (key, default) in keys {
                match (m.get(&**key), default) {
                    (Some(v), _) => fields.push((key.to_string(), v.clone())),
                    (None, Some(d)) => fields.push((key.to_string(), d.clone())),
                    (None, None) => {
                        return Err(format!(
                            "element {i}: associative list with keys has an element that omits key field \"{key}\" (and doesn't have default value)"
                        ));
                    }
                }
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        SsaList::Set => Ok(PathElement::Value(item.clone())),
        SsaList::Atomic => Ok(PathElement::Index(i64::try_from(i).unwrap_or(i64::MAX))),
    }
}

/// Indexes a granular list's items by path element; duplicates are an
/// error when `strict`, else the first wins.
fn index_items<'v>(
    ssa: &SsaList,
    items: &'v [Value],
    path: &[PathElement],
    strict: bool,
    errors: &mut Vec<String>,
) -> Vec<(PathElement, &'v Value)> {
    let mut seen: BTreeSet<PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item_pe(ssa, i, item) {
            Ok(pe) => {
                if !seen.insert(pe.clone()) {
                    if strict {
                        errors.push(format!(
                            "{}: duplicate entries for key {pe}",
                            path_string(path)
                        ));
                    }
                    continue;
                }
                out.push((pe, item));
            }
            Err(e) => {
                if strict {
                    errors.push(format!("{}: {e}", path_string(path)));
                }
            }
        }
    }
    out
}

/// The field set of `value` (`TypedValue.ToFieldSet`); with `strict`,
/// duplicate or key-less items of associative lists are errors.
pub fn to_field_set(value: &Value, schema: &Schema, strict: bool) -> Result<FieldSet, String> {
    let mut set = FieldSet::new();
    let mut errors = Vec::new();
    let mut path = Vec::new();
    walk_set(value, schema, &mut path, &mut set, strict, &mut errors);
    match errors.len() {
        0 => Ok(set),
        1 => Err(errors.concat()),
        _ => Err(format!("errors:\n  {}", errors.join("\n  "))),
    }
}

fn walk_set(
    value: &Value,
    schema: &Schema,
    path: &mut Vec<PathElement>,
    set: &mut FieldSet,
    strict: bool,
    errors: &mut Vec<String>,
) {
    match value {
        Value::Object(m) if !schema.is_atomic() => {
            for (k, v) in m {
                path.push(PathElement::Field(k.clone()));
                walk_set(v, schema.field(k), path, set, strict, errors);
                let empty_map = v.as_object().is_some_and(Map::is_empty);
                if v.is_null() || empty_map || !schema.has_named_fields() {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(items) if granular_list(schema).is_some() => {
            let Some((ssa, elem)) = granular_list(schema) else {
                return;
            };
            for (pe, item) in index_items(ssa, items, path, strict, errors) {
                path.push(pe);
                walk_set(item, elem, path, set, strict, errors);
                set.insert(path);
                path.pop();
            }
        }
        _ => set.insert(path),
    }
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

/// How a node is walked.
enum Shape {
    Leaf,
    Map,
    List,
}

fn shape(lhs: Option<&Value>, rhs: Option<&Value>, schema: &Schema) -> Shape {
    if schema.is_atomic() || (is_empty_container(lhs) && is_empty_container(rhs)) {
        return Shape::Leaf;
    }
    let objects = [lhs, rhs].iter().flatten().all(|v| v.is_object());
    let arrays = [lhs, rhs].iter().flatten().all(|v| v.is_array());
    if objects {
        Shape::Map
    } else if arrays && granular_list(schema).is_some() {
        Shape::List
    } else {
        Shape::Leaf
    }
}

/// Compares two values (`TypedValue.Compare`). A map, granular list or
/// list item that appears or disappears is itself added or removed; struct
/// fields are not (they are always present in upstream's typed values).
pub fn compare(lhs: Option<&Value>, rhs: Option<&Value>, schema: &Schema) -> Comparison {
    let mut c = Comparison::default();
    let mut path = Vec::new();
    walk_compare(lhs, rhs, schema, false, &mut path, &mut c);
    c
}

fn walk_compare(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    schema: &Schema,
    member_node: bool,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) {
    if lhs.is_none() && rhs.is_none() {
        return;
    }
    match shape(lhs, rhs, schema) {
        Shape::Leaf => {
            match (lhs, rhs) {
                (None, Some(_)) => c.added.insert(path),
                (Some(_), None) => c.removed.insert(path),
                (Some(l), Some(r)) if !values_equal(l, r) => c.modified.insert(path),
                _ => {}
            }
            return;
        }
        Shape::Map => {
            let empty = Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let keys: BTreeSet<&String> = l.keys().chain(r.keys()).collect();
            for k in keys {
                path.push(PathElement::Field(k.clone()));
                let entry = !schema.has_named_fields();
                walk_compare(l.get(k), r.get(k), schema.field(k), entry, path, c);
                path.pop();
            }
        }
        Shape::List => {
            let Some((ssa, elem)) = granular_list(schema) else {
                return;
            };
            let mut errors = Vec::new();
            let empty = Vec::new();
            let l = lhs.and_then(Value::as_array).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_array).unwrap_or(&empty);
            let li = index_items(ssa, l, path, false, &mut errors);
            let ri = index_items(ssa, r, path, false, &mut errors);
            let mut pes: Vec<&PathElement> = li.iter().map(|(pe, _)| pe).collect();
            for (pe, _) in &ri {
                if !pes.contains(&pe) {
                    pes.push(pe);
                }
            }
            for pe in pes {
                path.push(pe.clone());
                walk_compare(find_item(&li, pe), find_item(&ri, pe), elem, true, path, c);
                path.pop();
            }
        }
    }
    let own_member = member_node
        || schema.is_map()
        || (granular_list(schema).is_some() && !schema.list().is_some_and(|l| l.always_present));
    if own_member {
        match (lhs, rhs) {
            (None, Some(_)) => c.added.insert(path),
            (Some(_), None) => c.removed.insert(path),
            _ => {}
        }
    }
}

fn find_item<'v>(items: &[(PathElement, &'v Value)], pe: &PathElement) -> Option<&'v Value> {
    items.iter().find(|(p, _)| p == pe).map(|(_, v)| *v)
}

/// Merges the applied configuration `rhs` into `lhs` (`TypedValue.Merge`):
/// granular maps and lists merge (list order: the applied items' order,
/// live-only items kept in place), everything else takes `rhs`.
pub fn merge(lhs: Option<&Value>, rhs: Option<&Value>, schema: &Schema) -> Option<Value> {
    match shape(lhs, rhs, schema) {
        Shape::Leaf => rhs.or(lhs).cloned(),
        Shape::Map => {
            let empty = Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let mut out = Map::new();
            for (k, v) in l {
                if let Some(m) = merge(Some(v), r.get(k), schema.field(k)) {
                    out.insert(k.clone(), m);
                }
            }
            for (k, v) in r {
                if !l.contains_key(k)
                    && let Some(m) = merge(None, Some(v), schema.field(k))
                {
                    out.insert(k.clone(), m);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Shape::List => {
            let (ssa, elem) = granular_list(schema)?;
            let empty = Vec::new();
            let l = lhs.and_then(Value::as_array).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_array).unwrap_or(&empty);
            let out = merge_list(ssa, elem, l, r);
            (!out.is_empty()).then_some(Value::Array(out))
        }
    }
}

/// `mergingWalker.visitListItems`: walks both lists, emitting shared items
/// in the applied order and live-only items where they were.
fn merge_list(ssa: &SsaList, elem: &Schema, lhs: &[Value], rhs: &[Value]) -> Vec<Value> {
    let mut errors = Vec::new();
    let li = index_items(ssa, lhs, &[], false, &mut errors);
    let ri = index_items(ssa, rhs, &[], false, &mut errors);
    let in_l = |pe: &PathElement| li.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
    let in_r = |pe: &PathElement| ri.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
    let mut shared: Vec<&PathElement> = ri
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| in_l(pe).is_some())
        .collect::<Vec<_>>();
    shared.reverse();
    let mut next_shared = shared.pop();
    let mut merged_r: Vec<PathElement> = Vec::new();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut a, mut b) = (0, 0);
    while a < li.len() || b < ri.len() {
        if let (Some((lpe, _)), Some((rpe, _))) = (li.get(a), ri.get(b)) {
            if lpe == rpe {
                merged_r.push(lpe.clone());
                if let Some(v) = merge(in_l(lpe), in_r(rpe), elem) {
                    out.push(v);
                }
                a += 1;
                b += 1;
                next_shared = shared.pop();
                continue;
            }
            if in_r(lpe).is_some() && next_shared.is_some_and(|n| n != lpe) {
                a += 1;
                continue;
            }
        }
        if let Some((lpe, lv)) = li.get(a) {
            if in_r(lpe).is_none() {
                if let Some(v) = merge(Some(lv), None, elem) {
                    out.push(v);
                }
                a += 1;
                continue;
            } else if merged_r.contains(lpe) {
                a += 1;
                continue;
            }
        }
        if let Some((rpe, rv)) = ri.get(b) {
            merged_r.push(rpe.clone());
            if let Some(v) = merge(in_l(rpe), Some(rv), elem) {
                out.push(v);
            }
            b += 1;
            if next_shared.is_some_and(|n| n == rpe) {
                next_shared = shared.pop();
            }
        }
    }
    out
}

/// Removes the paths of `set` from `value` (`TypedValue.RemoveItems`).
/// A map or list left empty becomes `None` (upstream's `null`).
pub fn remove_items(value: &Value, set: &FieldSet, schema: &Schema) -> Option<Value> {
    match value {
        Value::Object(m) if !schema.is_atomic() && !m.is_empty() => {
            let mut out = Map::new();
            for (k, v) in m {
                let pe = PathElement::Field(k.clone());
                if set.has_member(&pe) {
                    continue;
                }
                let nv = match set.with_prefix(&pe) {
                    Some(sub) => remove_items(v, sub, schema.field(k)).unwrap_or(Value::Null),
                    None => v.clone(),
                };
                out.insert(k.clone(), nv);
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) if !items.is_empty() => {
            let (ssa, elem) = granular_list(schema)?;
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let Ok(pe) = item_pe(ssa, i, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has_member(&pe) {
                    continue;
                }
                out.push(match set.with_prefix(&pe) {
                    Some(sub) => remove_items(item, sub, elem).unwrap_or(Value::Null),
                    None => item.clone(),
                });
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.clone()),
    }
}

/// `Set.EnsureNamedFieldsAreMembers`: struct fields that prefix other
/// paths become members themselves (map entries do not).
pub fn ensure_named_fields_are_members(set: &FieldSet, schema: &Schema) -> FieldSet {
    let (members, children) = set.level();
    let mut new_members: BTreeSet<PathElement> = members.clone();
    let mut new_children: BTreeMap<PathElement, FieldSet> = BTreeMap::new();
    for (pe, child) in children {
        let child_schema = match pe {
            PathElement::Field(name) => {
                if schema.has_named_fields() {
                    new_members.insert(pe.clone());
                }
                schema.field(name)
            }
            _ => granular_list(schema).map_or(&ANY, |(_, elem)| elem),
        };
        new_children.insert(
            pe.clone(),
            ensure_named_fields_are_members(child, child_schema),
        );
    }
    FieldSet::from_parts(new_members, new_children)
}

/// Drops `null` entries from maps, recursively (upstream's typed round
/// trip turns them into absent fields).
pub fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
