//! Reads k8s-openapi's merge strategies back out of its `DeepMerge`
//! implementations: two objects that differ only in one list (or map) are
//! merged, and the result tells the strategy — `atomic` keeps the second
//! list, `set` unions the elements, `map` merges elements whose key fields
//! are equal (each scalar field of the item is tried as a key).
//!
//! k8s-openapi derives these strategies from upstream's
//! `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy` first and
//! `x-kubernetes-list-type` / `x-kubernetes-list-map-keys` second, so they
//! are what strategic merge patch (and, mostly, server-side apply) need.

use std::collections::BTreeSet;

use k8s_openapi::DeepMerge;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// A root kind: its definition name and a typed merge of two JSON objects.
pub type Root = (&'static str, fn(Value, Value) -> Option<Value>);

/// Decodes both objects as `T`, merges the second into the first, encodes.
pub fn merge_as<T: DeserializeOwned + Serialize + DeepMerge>(a: Value, b: Value) -> Option<Value> {
    let mut x: T = serde_json::from_value(a).ok()?;
    let y: T = serde_json::from_value(b).ok()?;
    x.merge_from(y);
    serde_json::to_value(x).ok()
}

#[derive(Clone, Debug)]
enum Step {
    Prop(String),
    Item,
}

const REF_PREFIX: &str = "#/components/schemas/";

fn ref_name(schema: &Value) -> Option<&str> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r.strip_prefix(REF_PREFIX);
    }
    schema
        .get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(|s| s.get("$ref"))
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(REF_PREFIX))
}

fn resolve<'a>(defs: &'a Map<String, Value>, schema: &'a Value) -> &'a Value {
    match ref_name(schema).and_then(|n| defs.get(n)) {
        Some(d) => d,
        None => schema,
    }
}

fn ty(schema: &Value) -> &str {
    schema.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Two different values of a scalar schema, or `None` for non-scalars.
fn scalar_values(defs: &Map<String, Value>, schema: &Value) -> Option<(Value, Value)> {
    let s = resolve(defs, schema);
    if s.get("x-kubernetes-int-or-string").is_some() {
        return Some((json!("1"), json!("2")));
    }
    match ty(s) {
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("date-time") => {
                Some((json!("2000-01-01T00:00:00Z"), json!("2001-01-01T00:00:00Z")))
            }
            Some("byte") => Some((json!("YQ=="), json!("Yg=="))),
            _ => Some((json!("p"), json!("q"))),
        },
        "integer" => Some((json!(1), json!(2))),
        "number" => Some((json!(1.5), json!(2.5))),
        "boolean" => Some((json!(true), json!(false))),
        _ => None,
    }
}

/// The smallest value the schema's deserializer accepts.
fn minimal(defs: &Map<String, Value>, schema: &Value, depth: usize) -> Value {
    let s = resolve(defs, schema);
    if depth > 24 {
        return json!({});
    }
    if let Some((v, _)) = scalar_values(defs, s) {
        return v;
    }
    match ty(s) {
        "array" => json!([]),
        _ => {
            let mut obj = Map::new();
            if let (Some(props), Some(required)) = (
                s.get("properties").and_then(Value::as_object),
                s.get("required").and_then(Value::as_array),
            ) {
                for r in required.iter().filter_map(Value::as_str) {
                    if let Some(p) = props.get(r) {
                        obj.insert(r.to_owned(), minimal(defs, p, depth + 1));
                    }
                }
            }
            Value::Object(obj)
        }
    }
}

/// A value of `schema` with `leaf` placed at `path`.
fn build(defs: &Map<String, Value>, schema: &Value, path: &[Step], leaf: &Value) -> Value {
    let Some((step, rest)) = path.split_first() else {
        return leaf.clone();
    };
    let s = resolve(defs, schema);
    match step {
        Step::Prop(name) => {
            let mut obj = match minimal(defs, s, 0) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            let child = s
                .get("properties")
                .and_then(|p| p.get(name))
                .cloned()
                .unwrap_or(Value::Null);
            obj.insert(name.clone(), build(defs, &child, rest, leaf));
            Value::Object(obj)
        }
        Step::Item => {
            let items = s.get("items").cloned().unwrap_or(Value::Null);
            json!([build(defs, &items, rest, leaf)])
        }
    }
}

fn at<'a>(value: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Prop(name) => v.get(name),
        Step::Item => v.as_array().and_then(|a| a.first()),
    })
}

struct Prober<'a> {
    defs: &'a Map<String, Value>,
    root: &'a Value,
    merge: fn(Value, Value) -> Option<Value>,
}

impl Prober<'_> {
    /// Merges two roots that differ only at `path`; the merged value there.
    fn merged(&self, path: &[Step], a: &Value, b: &Value) -> Option<Value> {
        let x = build(self.defs, self.root, path, a);
        let y = build(self.defs, self.root, path, b);
        let m = (self.merge)(x, y)?;
        at(&m, path).cloned()
    }
}

/// What a list or map field does on merge.
#[derive(Debug, PartialEq)]
enum Strategy {
    Atomic,
    Set,
    Map(Vec<String>),
    AtomicMap,
}

fn probe_list(p: &Prober<'_>, path: &[Step], items: &Value) -> Option<Strategy> {
    let defs = p.defs;
    if let Some((v1, v2)) = scalar_values(defs, items) {
        let m = p.merged(path, &json!([v1]), &json!([v2]))?;
        return Some(if m.as_array()?.len() == 2 {
            Strategy::Set
        } else {
            Strategy::Atomic
        });
    }
    let item = resolve(defs, items);
    let props = item.get("properties")?.as_object()?;
    let base = minimal(defs, item, 0);
    let mut keys = Vec::new();
    let mut scalars = 0;
    for (name, schema) in props {
        let Some((v1, v2)) = scalar_values(defs, schema) else {
            continue;
        };
        scalars += 1;
        let mut x = base.clone();
        let mut y = base.clone();
        x.as_object_mut()?.insert(name.clone(), v1);
        y.as_object_mut()?.insert(name.clone(), v2);
        let m = p.merged(path, &json!([x]), &json!([y]))?;
        if m.as_array()?.len() == 2 {
            keys.push(name.clone());
        }
    }
    Some(match keys.len() {
        0 => Strategy::Atomic,
        n if n >= 2 && n == scalars => Strategy::Set,
        _ => {
            // The required key first: it is the patch merge key.
            let required: BTreeSet<&str> = item
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            keys.sort_by_key(|k| !required.contains(k.as_str()));
            Strategy::Map(keys)
        }
    })
}

fn probe_map(p: &Prober<'_>, path: &[Step], values: &Value) -> Option<Strategy> {
    let v = minimal(p.defs, values, 0);
    let m = p.merged(path, &json!({"x": v}), &json!({"y": v}))?;
    (m.as_object()?.len() == 1).then_some(Strategy::AtomicMap)
}

fn extensions(strategy: &Strategy) -> Vec<(&'static str, Value)> {
    match strategy {
        Strategy::Atomic => vec![("x-kubernetes-list-type", json!("atomic"))],
        Strategy::Set => vec![
            ("x-kubernetes-list-type", json!("set")),
            ("x-kubernetes-patch-strategy", json!("merge")),
        ],
        Strategy::Map(keys) => vec![
            ("x-kubernetes-list-map-keys", json!(keys)),
            ("x-kubernetes-list-type", json!("map")),
            ("x-kubernetes-patch-merge-key", json!(keys.first())),
            ("x-kubernetes-patch-strategy", json!("merge")),
        ],
        Strategy::AtomicMap => vec![("x-kubernetes-map-type", json!("atomic"))],
    }
}

/// Annotates every list and map field reachable from the roots through
/// merged (not replaced) fields; returns a report of what could not be probed.
pub fn annotate(defs: &mut Map<String, Value>, roots: &[Root]) -> Vec<String> {
    let snapshot = defs.clone();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut found: Vec<(String, String, Strategy)> = Vec::new();
    let mut report = Vec::new();
    for (root_name, merge) in roots {
        let Some(root) = snapshot.get(*root_name) else {
            report.push(format!("missing root {root_name}"));
            continue;
        };
        let prober = Prober {
            defs: &snapshot,
            root,
            merge: *merge,
        };
        let mut queue: Vec<(String, Vec<Step>)> = vec![((*root_name).to_owned(), Vec::new())];
        while let Some((def_name, path)) = queue.pop() {
            if !done.insert(def_name.clone()) {
                continue;
            }
            let Some(props) = snapshot
                .get(&def_name)
                .and_then(|d| d.get("properties"))
                .and_then(Value::as_object)
            else {
                continue;
            };
            for (prop, schema) in props {
                let mut child = path.clone();
                child.push(Step::Prop(prop.clone()));
                let s = resolve(&snapshot, schema);
                match ty(s) {
                    "array" => {
                        let items = s.get("items").cloned().unwrap_or(Value::Null);
                        match probe_list(&prober, &child, &items) {
                            Some(strategy) => {
                                if let (Strategy::Map(_), Some(item)) =
                                    (&strategy, ref_name(&items))
                                {
                                    let mut item_path = child.clone();
                                    item_path.push(Step::Item);
                                    queue.push((item.to_owned(), item_path));
                                }
                                found.push((def_name.clone(), prop.clone(), strategy));
                            }
                            None => report.push(format!("could not probe {def_name}.{prop}")),
                        }
                    }
                    "object"
                        if s.get("additionalProperties").is_some()
                            && ref_name(schema).is_none() =>
                    {
                        let values = s
                            .get("additionalProperties")
                            .cloned()
                            .unwrap_or(Value::Null);
                        if let Some(strategy) = probe_map(&prober, &child, &values) {
                            found.push((def_name.clone(), prop.clone(), strategy));
                        }
                    }
                    _ => {
                        if let Some(name) = ref_name(schema) {
                            queue.push((name.to_owned(), child));
                        }
                    }
                }
            }
        }
    }
    for (def, prop, strategy) in found {
        let Some(target) = defs
            .get_mut(&def)
            .and_then(|d| d.get_mut("properties"))
            .and_then(|p| p.get_mut(&prop))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for (k, v) in extensions(&strategy) {
            target.insert(k.to_owned(), v);
        }
    }
    report
}
