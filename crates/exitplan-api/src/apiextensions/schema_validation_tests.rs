//! Table tests after kube-openapi's `validate` tests and apiextensions'
//! `validation_test.go` (`TestValidateCustomResource`): the rendered field
//! errors a custom resource gets.

use super::*;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::json;

fn structural(j: Value) -> Structural {
    let s: JSONSchemaProps = serde_json::from_value(j).expect("schema");
    Structural::new(&s).expect("structural")
}

fn errors(schema: Value, obj: Value) -> Vec<String> {
    validate_value(None, &structural(schema), &obj)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

#[test]
fn custom_resource_schema_cases() {
    let cases: Vec<(&str, Value, Value, Vec<&str>)> = vec![
        (
            "valid",
            object(
                json!({"s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}}),
            ),
            json!({"s": "x", "i": 1, "n": 1.5, "b": true}),
            vec![],
        ),
        (
            "wrong types",
            object(
                json!({"s": {"type": "string"}, "i": {"type": "integer"}, "o": {"type": "object"}, "a": {"type": "array", "items": {"type": "string"}}}),
            ),
            json!({"s": 1, "i": "1", "o": [], "a": {}}),
            vec![
                r#"a: Invalid value: "object": a in body must be of type array: "object""#,
                r#"i: Invalid value: "string": i in body must be of type integer: "string""#,
                r#"o: Invalid value: "array": o in body must be of type object: "array""#,
                r#"s: Invalid value: "integer": s in body must be of type string: "integer""#,
            ],
        ),
        (
            "integral float is an integer, integer is a number",
            object(json!({"i": {"type": "integer"}, "n": {"type": "number"}})),
            json!({"i": 2.0, "n": 3}),
            vec![],
        ),
        (
            "fractional number is not an integer",
            object(json!({"i": {"type": "integer"}})),
            json!({"i": 2.5}),
            vec![r#"i: Invalid value: "number": i in body must be of type integer: "number""#],
        ),
        (
            "null: nullable or not",
            object(json!({"a": {"type": "string", "nullable": true}, "b": {"type": "string"}})),
            json!({"a": null, "b": null}),
            vec![r#"b: Invalid value: "null": b in body must be of type string: "null""#],
        ),
        (
            "enum",
            object(
                json!({"e": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "integer", "enum": [1, 2]}}),
            ),
            json!({"e": "c", "n": 3}),
            vec![
                r#"e: Unsupported value: "c": supported values: "a", "b""#,
                r#"n: Unsupported value: 3: supported values: "1", "2""#,
            ],
        ),
        (
            "required, nested path",
            json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}}}),
            json!({}),
            vec!["spec: Required value"],
        ),
        (
            "required inside",
            json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}}}),
            json!({"spec": {}}),
            vec!["spec.a: Required value"],
        ),
        (
            "minimum, maximum, exclusive, multipleOf",
            object(json!({
                "min": {"type": "integer", "minimum": 1},
                "max": {"type": "integer", "maximum": 10},
                "xmin": {"type": "number", "minimum": 1, "exclusiveMinimum": true},
                "xmax": {"type": "number", "maximum": 10, "exclusiveMaximum": true},
                "mul": {"type": "number", "multipleOf": 0.5}
            })),
            json!({"min": 0, "max": 11, "xmin": 1, "xmax": 10, "mul": 1.2}),
            vec![
                "max: Invalid value: 11: max in body should be less than or equal to 10",
                "min: Invalid value: 0: min in body should be greater than or equal to 1",
                "mul: Invalid value: 1.2: mul in body should be a multiple of 0.5",
                "xmax: Invalid value: 10: xmax in body should be less than 10",
                "xmin: Invalid value: 1: xmin in body should be greater than 1",
            ],
        ),
        (
            "string lengths and pattern",
            object(json!({
                "long": {"type": "string", "maxLength": 3},
                "short": {"type": "string", "minLength": 2},
                "pat": {"type": "string", "pattern": "^[a-z]+$"},
                "runes": {"type": "string", "maxLength": 2}
            })),
            json!({"long": "abcd", "short": "a", "pat": "A1", "runes": "éé"}),
            vec![
                "long: Too long: may not be more than 3 bytes",
                r#"pat: Invalid value: "A1": pat in body should match '^[a-z]+$'"#,
                r#"short: Invalid value: "a": short in body should be at least 2 chars long"#,
            ],
        ),
        (
            "items and properties counts",
            object(json!({
                "few": {"type": "array", "minItems": 2, "items": {"type": "string"}},
                "many": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
                "props": {"type": "object", "minProperties": 1},
                "maxp": {"type": "object", "maxProperties": 1}
            })),
            json!({"few": ["a"], "many": ["a", "b"], "props": {}, "maxp": {"a": 1, "b": 2}}),
            vec![
                "few: Invalid value: 1: few in body should have at least 2 items",
                "many: Too many: 2: must have at most 1 item",
                "maxp: Too many: 2: must have at most 1 item",
                "props: Invalid value: 0: props in body should have at least 1 properties",
            ],
        ),
        (
            "array items are validated with [i] paths",
            object(
                json!({"list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
            ),
            json!({"list": [{"name": "ok"}, {"name": 5}]}),
            vec![
                r#"list[1].name: Invalid value: "integer": list[1].name in body must be of type string: "integer""#,
            ],
        ),
        (
            "additionalProperties values",
            object(json!({"m": {"type": "object", "additionalProperties": {"type": "integer"}}})),
            json!({"m": {"a": 1, "b": "x"}}),
            vec![r#"m.b: Invalid value: "string": m.b in body must be of type integer: "string""#],
        ),
        (
            "int-or-string",
            object(json!({"p": {"x-kubernetes-int-or-string": true}})),
            json!({"p": true}),
            vec![
                r#"p: Invalid value: "boolean": p in body must be of type integer,string: "boolean""#,
            ],
        ),
        (
            "int-or-string accepts both",
            object(
                json!({"p": {"x-kubernetes-int-or-string": true}, "q": {"x-kubernetes-int-or-string": true}}),
            ),
            json!({"p": 1, "q": "50%"}),
            vec![],
        ),
        (
            "preserve-unknown-fields without type accepts anything",
            object(json!({"any": {"x-kubernetes-preserve-unknown-fields": true}})),
            json!({"any": {"deep": [1, "x"]}}),
            vec![],
        ),
        (
            "formats",
            object(
                json!({"d": {"type": "string", "format": "date"}, "t": {"type": "string", "format": "date-time"}, "i": {"type": "string", "format": "int32"}}),
            ),
            json!({"d": "yesterday", "t": "2026-11-29T10:00:00Z", "i": "x"}),
            vec![r#"d: Invalid value: "yesterday": d in body must be of type date: "yesterday""#],
        ),
        (
            "anyOf failure names no field",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({}),
            vec![
                r#"<nil>: Invalid value: "": must validate at least one schema (anyOf)"#,
                "a: Required value",
            ],
        ),
        (
            "oneOf with both",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"a": "x", "b": "y"}),
            vec![r#"<nil>: Invalid value: "": must validate one and only one schema (oneOf)"#],
        ),
        (
            "not",
            object(json!({"s": {"type": "string", "not": {"enum": ["bad"]}}})),
            json!({"s": "bad"}),
            vec![r#"<nil>: Invalid value: "": must not validate the schema (not)"#],
        ),
        (
            "allOf merges its errors",
            object(json!({"s": {"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3}]}})),
            json!({"s": "a"}),
            vec![
                r#"s: Invalid value: "a": s in body should be at least 2 chars long"#,
                r#"<nil>: Invalid value: "": must validate all the schemas (allOf)"#,
            ],
        ),
    ];
    for (name, schema, obj, want) in cases {
        let mut got = errors(schema, obj);
        let mut want: Vec<String> = want.into_iter().map(String::from).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn base_path_prefixes_errors() {
    let s = structural(json!({"type": "integer"}));
    assert_eq!(
        validate_value(Some(&Path::new("x").child("default")), &s, &json!("v")).to_string(),
        r#"x.default: Invalid value: "string": in body must be of type integer: "string""#
    );
}

#[test]
fn multiple_of_tolerates_float_error() {
    let s = structural(object(json!({"m": {"type": "number", "multipleOf": 0.1}})));
    assert!(validate_value(None, &s, &json!({"m": 0.3})).is_empty());
    assert_eq!(
        validate_value(None, &s, &json!({"m": 0.35})).to_string(),
        "m: Invalid value: 0.35: m in body should be a multiple of 0.1"
    );
}

#[test]
fn go_float_rendering() {
    assert_eq!(go_float(1.5), "1.5");
    assert_eq!(go_float(10.0), "10");
    assert_eq!(go_float(1e21), "1e+21");
    assert_eq!(go_float(0.00001), "1e-05");
}
