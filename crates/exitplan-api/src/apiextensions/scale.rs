//! The `scale` subresource of custom resources
//! (`pkg/registry/customresource`): reading and writing replicas at the
//! CRD's `specReplicasPath` / `statusReplicasPath` / `labelSelectorPath`,
//! and upstream's validation of those values (`ValidateScaleSpec`,
//! `ValidateScaleStatus`). The paths themselves are checked with the CRD
//! ([`super::validation::validate_subresources`]).

use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec, ScaleStatus};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceSubresourceScale;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};

use crate::field::{Error, ErrorList, Path};

/// Why a value at a scale path cannot be read or written (apimachinery's
/// `unstructured` accessor errors, worded the same).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AccessorError(pub String);

fn fields(path: &str) -> Vec<&str> {
    path.strip_prefix('.').unwrap_or(path).split('.').collect()
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (close enough for error texts).
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

fn nested<'a>(obj: &'a Value, fields: &[&str]) -> Result<Option<&'a Value>, AccessorError> {
    let mut cur = obj;
    for (i, f) in fields.iter().enumerate() {
        let Value::Object(m) = cur else {
            return Err(AccessorError(format!(
                ".{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                fields[..i].join("."),
                go_value(cur),
                go_type(cur)
            )));
        };
        match m.get(*f) {
            Some(v) => cur = v,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// `unstructured.NestedInt64` at a `.a.b` path: `Ok(None)` when absent.
pub fn nested_int64(obj: &Value, path: &str) -> Result<Option<i64>, AccessorError> {
    let f = fields(path);
    match nested(obj, &f)? {
        None => Ok(None),
        Some(Value::Number(n)) if n.is_i64() => Ok(n.as_i64()),
        Some(v) => Err(AccessorError(format!(
            ".{} accessor error: {} is of the type {}, expected int64",
            f.join("."),
            go_value(v),
            go_type(v)
        ))),
    }
}

/// `unstructured.NestedString` at a `.a.b` path: `Ok(None)` when absent.
pub fn nested_string(obj: &Value, path: &str) -> Result<Option<String>, AccessorError> {
    let f = fields(path);
    match nested(obj, &f)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(AccessorError(format!(
            ".{} accessor error: {} is of the type {}, expected string",
            f.join("."),
            go_value(v),
            go_type(v)
        ))),
    }
}

/// `unstructured.SetNestedField`: writes `value` at a `.a.b` path,
/// creating missing objects.
pub fn set_nested(obj: &mut Value, path: &str, value: Value) -> Result<(), AccessorError> {
    let f = fields(path);
    let Some((last, parents)) = f.split_last() else {
        return Ok(());
    };
    let mut cur = obj;
    for (i, p) in parents.iter().enumerate() {
        let Value::Object(m) = cur else {
            return Err(AccessorError(format!(
                "value cannot be set because {} is not a map[string]interface{{}}",
                go_value(cur)
            )));
        };
        cur = m
            .entry((*p).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !cur.is_object() && !cur.is_null() {
            return Err(AccessorError(format!(
                "value cannot be set because .{} is not a map[string]interface{{}}",
                f[..=i].join(".")
            )));
        }
        if cur.is_null() {
            *cur = Value::Object(Map::new());
        }
    }
    match cur {
        Value::Object(m) => {
            m.insert((*last).to_owned(), value);
            Ok(())
        }
        other => Err(AccessorError(format!(
            "value cannot be set because {} is not a map[string]interface{{}}",
            go_value(other)
        ))),
    }
}

fn replicas_errors(obj: &Value, path: &str) -> ErrorList {
    let p = Path::new(path);
    match nested_int64(obj, path) {
        // Upstream reports the int64 it got back: 0.
        Err(e) => ErrorList::from(vec![Error::invalid(&p, 0, e.0)]),
        Ok(r) => {
            let r = r.unwrap_or(0);
            if r < 0 {
                ErrorList::from(vec![Error::invalid(
                    &p,
                    r,
                    "should be a non-negative integer",
                )])
            } else if r > i64::from(i32::MAX) {
                ErrorList::from(vec![Error::invalid(
                    &p,
                    r,
                    format!("should be less than or equal to {}", i32::MAX),
                )])
            } else {
                ErrorList::new()
            }
        }
    }
}

/// `ValidateScaleSpec` and `ValidateScaleStatus`: the replicas in a custom
/// resource are non-negative int32s and the selector (if any) a string.
pub fn validate_scale(obj: &Value, scale: &CustomResourceSubresourceScale) -> ErrorList {
    let mut errs = replicas_errors(obj, &scale.spec_replicas_path);
    errs.append(replicas_errors(obj, &scale.status_replicas_path));
    if let Some(sel) = scale.label_selector_path.as_deref()
        && let Err(e) = nested_string(obj, sel)
    {
        errs.push(Error::invalid(&Path::new(sel), "", e.0));
    }
    errs
}

/// `scaleFromCustomResource`: the `autoscaling/v1` Scale of a custom resource.
pub fn scale_from_custom_resource(
    obj: &Value,
    scale: &CustomResourceSubresourceScale,
) -> Result<Scale, AccessorError> {
    let replicas = nested_int64(obj, &scale.spec_replicas_path)?.unwrap_or(0);
    let status_replicas = nested_int64(obj, &scale.status_replicas_path)?.unwrap_or(0);
    let selector = match scale
        .label_selector_path
        .as_deref()
        .filter(|p| !p.is_empty())
    {
        Some(p) => nested_string(obj, p)?,
        None => None,
    };
    let meta: ObjectMeta = obj
        .get("metadata")
        .cloned()
        .and_then(|m| serde_json::from_value(m).ok())
        .unwrap_or_default();
    let to_i32 = |v: i64| i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX });
    Ok(Scale {
        metadata: ObjectMeta {
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            resource_version: meta.resource_version,
            creation_timestamp: meta.creation_timestamp,
            ..ObjectMeta::default()
        },
        spec: Some(ScaleSpec {
            replicas: Some(to_i32(replicas)),
        }),
        status: Some(ScaleStatus {
            replicas: to_i32(status_replicas),
            selector: Some(selector.unwrap_or_default()).filter(|s| !s.is_empty()),
        }),
    })
}

/// Writes a Scale's `spec.replicas` into the custom resource (a `/scale` update).
pub fn set_spec_replicas(
    obj: &mut Value,
    scale: &CustomResourceSubresourceScale,
    replicas: i32,
) -> Result<(), AccessorError> {
    set_nested(
        obj,
        &scale.spec_replicas_path,
        Value::from(i64::from(replicas)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scale() -> CustomResourceSubresourceScale {
        CustomResourceSubresourceScale {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        }
    }

    #[test]
    fn validate_replicas() {
        let cases = [
            ("absent is zero", json!({}), ""),
            (
                "negative",
                json!({"spec": {"replicas": -1}}),
                ".spec.replicas: Invalid value: -1: should be a non-negative integer",
            ),
            (
                "too big",
                json!({"status": {"replicas": 2_147_483_648_i64}}),
                ".status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647",
            ),
            (
                "string",
                json!({"spec": {"replicas": "3"}}),
                r#".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64"#,
            ),
            (
                "selector not a string",
                json!({"status": {"selector": 1}}),
                r#".status.selector: Invalid value: "": .status.selector accessor error: 1 is of the type int64, expected string"#,
            ),
        ];
        for (name, obj, want) in cases {
            assert_eq!(validate_scale(&obj, &scale()).to_string(), want, "{name}");
        }
    }

    #[test]
    fn read_and_write_scale() {
        let mut obj = json!({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"replicas": 2}, "status": {"replicas": 1, "selector": "app=a"}});
        let s = scale_from_custom_resource(&obj, &scale()).expect("scale");
        assert_eq!(s.spec.and_then(|s| s.replicas), Some(2));
        assert_eq!(s.status.as_ref().map(|s| s.replicas), Some(1));
        assert_eq!(s.status.and_then(|s| s.selector).as_deref(), Some("app=a"));
        assert_eq!(s.metadata.name.as_deref(), Some("a"));
        set_spec_replicas(&mut obj, &scale(), 5).expect("set");
        assert_eq!(obj["spec"]["replicas"], json!(5));
        let mut empty = json!({});
        set_spec_replicas(&mut empty, &scale(), 1).expect("set");
        assert_eq!(empty, json!({"spec": {"replicas": 1}}));
        let mut bad = json!({"spec": "x"});
        assert!(set_spec_replicas(&mut bad, &scale(), 1).is_err());
    }
}
