//! `x-kubernetes-list-type` uniqueness (`pkg/apiserver/schema/listtype`):
//! items of a `set` list and keys of a `map` list must be unique.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::schema_validation::{bad_value, json_eq};
use super::structural::Structural;
use crate::field::{BadValue, Error, ErrorList, Path};

/// `ValidateListSetsAndMaps`: walks `obj` along the schema and reports
/// duplicates (`Duplicate value`) at their index, with paths relative to `base`.
pub fn validate_list_sets_and_maps(base: Option<&Path>, s: &Structural, obj: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    walk(base, s, obj, &mut errs);
    errs
}

fn child(base: Option<&Path>, name: &str) -> Path {
    base.map_or_else(|| Path::new(name), |b| b.child(name))
}

fn walk(path: Option<&Path>, s: &Structural, obj: &Value, errs: &mut ErrorList) {
    match obj {
        Value::Object(map) => {
            for (k, v) in map {
                let sub = s.properties.get(k).or_else(|| s.additional_schema());
                if let Some(sub) = sub {
                    let p = child(path, k);
                    walk(Some(&p), sub, v, errs);
                }
            }
        }
        Value::Array(items) => {
            let p = path.cloned().unwrap_or_default();
            match s.extensions.list_type.as_deref() {
                Some("set") => errs.append(validate_set(&p, items)),
                Some("map") => errs.append(validate_map(&p, s, items)),
                _ => {}
            }
            if let Some(is) = s.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    walk(Some(&p.index(i)), is, v, errs);
                }
            }
        }
        _ => {}
    }
}

fn validate_set(path: &Path, items: &[Value]) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, x) in items.iter().enumerate() {
        if items[..i].iter().any(|y| json_eq(x, y)) {
            errs.push(Error::duplicate(&path.index(i), bad_value(x)));
        }
    }
    errs
}

fn validate_map(path: &Path, s: &Structural, items: &[Value]) -> ErrorList {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            return ErrorList::from(vec![Error::invalid(
                &path.index(i),
                bad_value(x),
                "must be an object for an array of list-type map",
            )]);
        }
    }
    let mut errs = ErrorList::new();
    let keys = &s.extensions.list_map_keys;
    let item_schema = s.items.as_deref();
    let key_of = |x: &Value| -> Map<String, Value> {
        let mut m = Map::new();
        for k in keys {
            let v = x.get(k).cloned().or_else(|| {
                item_schema
                    .and_then(|is| is.properties.get(k))
                    .and_then(|p| p.generic.default.clone())
            });
            if let Some(v) = v {
                m.insert(k.clone(), v);
            }
        }
        m
    };
    let mut seen: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    for (i, x) in items.iter().enumerate() {
        let k = key_of(x);
        let dup = seen
            .values()
            .any(|prev| json_eq(&Value::Object(prev.clone()), &Value::Object(k.clone())));
        if dup {
            errs.push(Error::duplicate(
                &path.index(i),
                BadValue::Json(crate::render::json(&k)),
            ));
        }
        seen.insert(i, k);
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
    use serde_json::json;

    #[test]
    fn duplicates_in_sets_and_maps() {
        let schema: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}},
                "atomic": {"type": "array", "items": {"type": "string"}}
            }
        }))
        .expect("schema");
        let s = Structural::new(&schema).expect("structural");
        let obj = json!({
            "set": ["a", "b", "a"],
            "map": [{"name": "x"}, {"name": "x", "port": 80}, {"name": "x", "port": 81}],
            "atomic": ["a", "a"]
        });
        let got: Vec<String> = validate_list_sets_and_maps(None, &s, &obj)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            vec![
                r#"map[1]: Duplicate value: {"name":"x","port":80}"#.to_owned(),
                r#"set[2]: Duplicate value: "a""#.to_owned(),
            ]
        );
        let bad = json!({"map": ["x"]});
        assert_eq!(
            validate_list_sets_and_maps(None, &s, &bad).to_string(),
            r#"map[0]: Invalid value: "x": must be an object for an array of list-type map"#
        );
    }
}
