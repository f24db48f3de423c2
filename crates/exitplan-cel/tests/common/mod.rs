//! Helpers shared by the table tests: schemas built from JSON, and the
//! upstream test helpers `objs`/`schemas` (properties `val1`, `val2`, …).

#![allow(dead_code)]

use exitplan_api::field::Path;
use exitplan_cel::{CompiledRules, Outcome};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Value, json};

/// A schema from its JSON form; a malformed test schema fails the test.
pub fn schema(v: Value) -> JSONSchemaProps {
    match serde_json::from_value(v) {
        Ok(s) => s,
        Err(e) => panic!("bad test schema: {e}"),
    }
}

/// `{"val1": a, "val2": b, …}`.
pub fn objs(values: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for (i, v) in values.iter().enumerate() {
        m.insert(format!("val{}", i + 1), v.clone());
    }
    Value::Object(m)
}

/// An object schema with properties `val1`, `val2`, … of the given schemas.
pub fn schemas(props: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for (i, p) in props.iter().enumerate() {
        m.insert(format!("val{}", i + 1), p.clone());
    }
    json!({"type": "object", "properties": Value::Object(m)})
}

/// `schema` with `rules` set as its root `x-kubernetes-validations`.
pub fn with_rules(schema: &Value, rules: Value) -> Value {
    let mut s = schema.clone();
    if let Some(o) = s.as_object_mut() {
        o.insert("x-kubernetes-validations".into(), rules);
    }
    s
}

/// The base path of upstream's CRD tests.
pub fn base() -> Path {
    Path::new("spec.validation.openAPIV3Schema")
}

/// Compiles `s`, failing the test with the errors when it does not compile.
pub fn compile(s: Value) -> CompiledRules {
    match CompiledRules::compile(&schema(s), &base()) {
        Ok(r) => r,
        Err(e) => panic!("does not compile: {}", e.aggregate().unwrap_or_default()),
    }
}

/// The compile errors of `s`, rendered, or the empty list.
pub fn compile_errors(s: Value) -> Vec<String> {
    match CompiledRules::compile(&schema(s), &base()) {
        Ok(_) => Vec::new(),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

/// Rendered errors of an outcome.
pub fn rendered(o: &Outcome) -> Vec<String> {
    o.errors.iter().map(ToString::to_string).collect()
}

/// Every error text for `rule` set on `schema` and evaluated on `obj`: the
/// compile errors when it does not compile, otherwise the validation errors.
pub fn rule_errors(schema: &Value, rule: &str, obj: &Value, old: Option<&Value>) -> Vec<String> {
    let s = with_rules(schema, json!([{ "rule": rule }]));
    match CompiledRules::compile(&self::schema(s), &base()) {
        Err(e) => e.iter().map(ToString::to_string).collect(),
        Ok(r) => rendered(&r.validate(obj, old)),
    }
}
