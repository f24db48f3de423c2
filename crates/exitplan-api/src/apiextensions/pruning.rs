//! Pruning of unknown fields (`pkg/apiserver/schema/pruning`) and the
//! `metadata` coercion of custom resources (`schema/objectmeta`): fields the
//! schema does not declare are dropped, except under
//! `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and
//! `metadata` of a resource (the root and every
//! `x-kubernetes-embedded-resource`) are kept, `metadata` reduced to
//! ObjectMeta's fields.

use serde_json::{Map, Value};

use super::structural::Structural;

/// The fields of `metav1.ObjectMeta`: all a resource's `metadata` keeps.
pub const OBJECT_META_FIELDS: &[&str] = &[
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

fn is_meta_field(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}

/// Prunes a custom resource (the root is a resource) and returns the paths
/// of the dropped fields, sorted (`metadata.foo`, `spec.bar[0].baz`): the
/// warnings of `fieldValidation=Warn` and the errors of `Strict`.
pub fn prune(s: &Structural, obj: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    walk(obj, Some(s), "", &mut pruned, true);
    coerce_metadata(obj, Some(s), "", &mut pruned, true);
    pruned.sort();
    pruned
}

/// Prunes `value` against `s` (`pruning.Prune`), `is_resource_root` saying
/// whether it is a resource whose `apiVersion`/`kind`/`metadata` stay.
pub fn prune_with(value: &mut Value, s: &Structural, is_resource_root: bool) {
    walk(value, Some(s), "", &mut Vec::new(), is_resource_root);
}

fn key_path(parent: &str, k: &str) -> String {
    if parent.is_empty() {
        k.to_owned()
    } else {
        format!("{parent}.{k}")
    }
}

/// `prune`; `root` marks a resource root (treated as an embedded resource).
fn walk(x: &mut Value, s: Option<&Structural>, path: &str, pruned: &mut Vec<String>, root: bool) {
    if let Some(s) = s.filter(|s| s.extensions.preserve_unknown_fields) {
        skip(x, s, path, pruned, root);
        return;
    }
    match x {
        Value::Object(map) => {
            let Some(s) = s else {
                for k in map.keys() {
                    pruned.push(key_path(path, k));
                }
                map.clear();
                return;
            };
            object(
                map,
                s,
                path,
                pruned,
                false,
                root || s.extensions.embedded_resource,
            );
        }
        Value::Array(items) => {
            let items_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                walk(v, items_schema, &format!("{path}[{i}]"), pruned, false);
            }
        }
        _ => {}
    }
}

/// The object case of `prune` (`preserve == false`) and `skipPrune`
/// (`preserve == true`: unknown fields stay, known ones are still pruned);
/// `embedded`: a resource whose `apiVersion`/`kind`/`metadata` stay.
fn object(
    map: &mut Map<String, Value>,
    s: &Structural,
    path: &str,
    pruned: &mut Vec<String>,
    preserve: bool,
    embedded: bool,
) {
    let mut drop = Vec::new();
    for (k, v) in map.iter_mut() {
        if embedded && is_meta_field(k) {
            continue;
        }
        let p = key_path(path, k);
        if let Some(prop) = s.properties.get(k) {
            walk(v, Some(prop), &p, pruned, false);
        } else if let Some(ap) = &s.generic.additional_properties {
            walk(v, ap.schema.as_deref(), &p, pruned, false);
        } else if !preserve {
            if !is_meta_field(k) || !path.is_empty() {
                pruned.push(p);
            }
            drop.push(k.clone());
        }
    }
    for k in drop {
        map.remove(&k);
    }
}

/// `skipPrune`.
fn skip(x: &mut Value, s: &Structural, path: &str, pruned: &mut Vec<String>, root: bool) {
    match x {
        Value::Object(map) => object(
            map,
            s,
            path,
            pruned,
            true,
            root || s.extensions.embedded_resource,
        ),
        Value::Array(items) => {
            if let Some(is) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    skip(v, is, &format!("{path}[{i}]"), pruned, false);
                }
            }
        }
        _ => {}
    }
}

/// `objectmeta.Coerce` (the pruning part): in every resource (root and
/// embedded), `metadata` keeps only ObjectMeta's fields; a `metadata`
/// that is not an object is dropped.
fn coerce_metadata(
    x: &mut Value,
    s: Option<&Structural>,
    path: &str,
    pruned: &mut Vec<String>,
    root: bool,
) {
    match x {
        Value::Object(map) => {
            let embedded = root || s.is_some_and(|s| s.extensions.embedded_resource);
            if embedded {
                match map.get_mut("metadata") {
                    Some(Value::Object(meta)) => {
                        let unknown: Vec<String> = meta
                            .keys()
                            .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
                            .cloned()
                            .collect();
                        for k in unknown {
                            pruned.push(key_path(&key_path(path, "metadata"), &k));
                            meta.remove(&k);
                        }
                    }
                    Some(Value::Null) | None => {}
                    Some(_) => {
                        map.remove("metadata");
                    }
                }
            }
            let Some(s) = s else { return };
            for (k, v) in map.iter_mut() {
                if embedded && is_meta_field(k) {
                    continue;
                }
                let sub = s.properties.get(k).or_else(|| s.additional_schema());
                if sub.is_some() {
                    coerce_metadata(v, sub, &key_path(path, k), pruned, false);
                }
            }
        }
        Value::Array(items) => {
            let is = s.and_then(|s| s.items.as_deref());
            if is.is_some() {
                for (i, v) in items.iter_mut().enumerate() {
                    coerce_metadata(v, is, &format!("{path}[{i}]"), pruned, false);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
    use serde_json::json;

    fn structural(j: Value) -> Structural {
        let s: JSONSchemaProps = serde_json::from_value(j).expect("schema");
        Structural::new(&s).expect("structural")
    }

    /// Cases from upstream's `pruning/algorithm_test.go` (`TestPrune`).
    #[test]
    fn prune_table() {
        let cases: Vec<(&str, Value, Value, Value, Vec<&str>)> = vec![
            (
                "empty",
                json!({}),
                json!({"type": "object"}),
                json!({}),
                vec![],
            ),
            (
                "scalars",
                json!({"a": "a", "b": 42, "c": 4.2, "d": true, "e": null}),
                json!({"type": "object"}),
                json!({}),
                vec!["a", "b", "c", "d", "e"],
            ),
            (
                "metadata, kind and apiVersion stay at the root",
                json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n", "foo": 1}, "spec": {"x": 1}}),
                json!({"type": "object", "properties": {"spec": {"type": "object"}}}),
                json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}}),
                vec!["metadata.foo", "spec.x"],
            ),
            (
                "nested objects and arrays",
                json!({"spec": {"list": [{"a": 1, "b": 2}, {"b": 3}], "map": {"k": {"a": 1, "z": 2}}}}),
                json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                    "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "integer"}}}}
                }}}}),
                json!({"spec": {"list": [{"a": 1}, {}], "map": {"k": {"a": 1}}}}),
                vec!["spec.list[0].b", "spec.list[1].b", "spec.map.k.z"],
            ),
            (
                "preserve unknown fields keeps unknown but prunes known",
                json!({"spec": {"x": {"y": 1}, "known": {"a": 1, "b": 2}}}),
                json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "known": {"type": "object", "properties": {"a": {"type": "integer"}}}
                }}}}),
                json!({"spec": {"x": {"y": 1}, "known": {"a": 1}}}),
                vec!["spec.known.b"],
            ),
            (
                "embedded resource keeps its type meta, prunes its metadata",
                json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "bad": 1}, "extra": 1}}}),
                json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}
                }}}}),
                json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}}),
                vec!["spec.template.extra", "spec.template.metadata.bad"],
            ),
            (
                "nested kind outside a resource is pruned",
                json!({"spec": {"kind": "x"}}),
                json!({"type": "object", "properties": {"spec": {"type": "object"}}}),
                json!({"spec": {}}),
                vec!["spec.kind"],
            ),
        ];
        for (name, mut obj, schema, want, want_paths) in cases {
            let got = prune(&structural(schema), &mut obj);
            assert_eq!(obj, want, "{name}");
            assert_eq!(got, want_paths, "{name}");
        }
    }
}
