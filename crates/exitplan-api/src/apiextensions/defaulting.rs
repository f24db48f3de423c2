//! Structural defaulting (`pkg/apiserver/schema/defaulting/algorithm.go`):
//! a missing field, or a `null` one the schema does not allow, gets the
//! schema's `default`. Applied to custom resources when they are read from
//! storage and when they are written (after pruning, before validation).

use serde_json::Value;

use super::structural::Structural;

fn non_nullable_null(x: &Value, s: Option<&Structural>) -> bool {
    x.is_null() && s.is_some_and(|s| !s.generic.nullable)
}

/// Defaults a custom resource as upstream's `unstructuredDefaulter` does
/// (on decode of a write and on read from storage): [`default_values`],
/// then [`prune_non_nullable_nulls_without_defaults`].
pub fn apply_defaults(s: &Structural, x: &mut Value) {
    default_values(s, x);
    prune_non_nullable_nulls_without_defaults(s, x);
}

/// `PruneNonNullableNullsWithoutDefaults`: drops object fields that are
/// `null` where the schema neither allows `null` nor has a default.
pub fn prune_non_nullable_nulls_without_defaults(s: &Structural, x: &mut Value) {
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                !(v.is_null()
                    && s.properties
                        .get(k)
                        .is_some_and(|p| p.generic.default.is_none() && !p.generic.nullable))
            });
            for (k, v) in map.iter_mut() {
                if let Some(sub) = s.properties.get(k).or_else(|| s.additional_schema()) {
                    prune_non_nullable_nulls_without_defaults(sub, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.items.as_deref() {
                for v in items {
                    prune_non_nullable_nulls_without_defaults(is, v);
                }
            }
        }
        _ => {}
    }
}

/// `structuraldefaulting.Default`: fills defaults into `x` in place.
pub fn default_values(s: &Structural, x: &mut Value) {
    match x {
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.generic.default else {
                    continue;
                };
                match map.get(k) {
                    None => {
                        map.insert(k.clone(), d.clone());
                    }
                    Some(v) if non_nullable_null(v, Some(prop)) => {
                        map.insert(k.clone(), d.clone());
                    }
                    Some(_) => {}
                }
            }
            let additional = s.additional_schema();
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default_values(prop, v);
                } else if s.generic.additional_properties.is_some()
                    && let Some(a) = additional
                {
                    if non_nullable_null(v, Some(a))
                        && let Some(d) = &a.generic.default
                    {
                        *v = d.clone();
                    }
                    default_values(a, v);
                }
            }
        }
        Value::Array(items) => {
            let Some(is) = s.items.as_deref() else { return };
            for v in items.iter_mut() {
                if non_nullable_null(v, Some(is))
                    && let Some(d) = &is.generic.default
                {
                    *v = d.clone();
                }
                default_values(is, v);
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

    /// Cases after upstream's `defaulting/algorithm_test.go` (`TestDefault`).
    #[test]
    fn default_table() {
        let schema: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "default": "A"},
                "b": {"type": "object", "default": {"x": 1}, "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 2}}},
                "n": {"type": "string", "nullable": true, "default": "N"},
                "list": {"type": "array", "items": {"type": "object", "default": {"k": "d"}, "properties": {"k": {"type": "string"}, "v": {"type": "integer", "default": 7}}}},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"z": {"type": "boolean", "default": true}}}}
            }
        }))
        .expect("schema");
        let s = Structural::new(&schema).expect("structural");
        let cases = [
            (
                "missing fields get defaults, nested defaults apply to defaulted objects",
                json!({}),
                json!({"a": "A", "b": {"x": 1, "y": 2}, "n": "N"}),
            ),
            (
                "set values stay, null non-nullable is defaulted, null nullable stays",
                json!({"a": "set", "b": null, "n": null}),
                json!({"a": "set", "b": {"x": 1, "y": 2}, "n": null}),
            ),
            (
                "a null without default that may not be null is dropped",
                json!({"a": "set", "b": {"x": null}, "n": "v"}),
                json!({"a": "set", "b": {"y": 2}, "n": "v"}),
            ),
            (
                "list items and map values",
                json!({"list": [{"k": "a"}, null], "map": {"m": {}}}),
                json!({"a": "A", "b": {"x": 1, "y": 2}, "n": "N", "list": [{"k": "a", "v": 7}, {"k": "d", "v": 7}], "map": {"m": {"z": true}}}),
            ),
        ];
        for (name, mut obj, want) in cases {
            apply_defaults(&s, &mut obj);
            assert_eq!(obj, want, "{name}");
        }
    }
}
