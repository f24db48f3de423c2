//! Evaluating rules on custom resources: error texts, reasons, `fieldPath`,
//! `messageExpression`, transition rules and their old-value correlation,
//! `optionalOldSelf`, and ratcheting (apiextensions `validation.go`).

mod common;

use common::{compile, rendered};
use serde_json::{Value, json};

/// A CR schema with `spec` of the given properties and rules.
fn cr(spec_props: Value, spec_rules: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {
        "type": "object", "properties": spec_props, "x-kubernetes-validations": spec_rules,
    }}})
}

fn int_rule(rule: Value) -> Value {
    cr(
        json!({"replicas": {"type": "integer", "x-kubernetes-validations": [rule]}}),
        json!([]),
    )
}

#[test]
fn failure_texts() {
    let obj = json!({"spec": {"replicas": 12}});
    let table: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "message",
            json!({"rule": "self < 10", "message": "must be less than 10"}),
            vec![r#"spec.replicas: Invalid value: "integer": must be less than 10"#],
        ),
        (
            "message is trimmed",
            json!({"rule": "self < 10", "message": "  must be less than 10 "}),
            vec![r#"spec.replicas: Invalid value: "integer": must be less than 10"#],
        ),
        (
            "default message",
            json!({"rule": " self < 10 "}),
            vec![r#"spec.replicas: Invalid value: "integer": failed rule: self < 10"#],
        ),
        (
            "messageExpression",
            json!({"rule": "self < 10", "message": "static", "messageExpression": "'got ' + string(self) + ', want less than 10'"}),
            vec![r#"spec.replicas: Invalid value: "integer": got 12, want less than 10"#],
        ),
        (
            "messageExpression that fails falls back to message",
            json!({"rule": "self < 10", "message": "static", "messageExpression": "'got ' + string(1 / 0)"}),
            vec![r#"spec.replicas: Invalid value: "integer": static"#],
        ),
        (
            "empty messageExpression result falls back to the default message",
            json!({"rule": "self < 10", "messageExpression": "'  '"}),
            vec![r#"spec.replicas: Invalid value: "integer": failed rule: self < 10"#],
        ),
        (
            "messageExpression with a line break falls back",
            json!({"rule": "self < 10", "messageExpression": "'a\\nb'"}),
            vec![r#"spec.replicas: Invalid value: "integer": failed rule: self < 10"#],
        ),
        (
            "reason FieldValueForbidden",
            json!({"rule": "self < 10", "message": "m", "reason": "FieldValueForbidden"}),
            vec!["spec.replicas: Forbidden: m"],
        ),
        (
            "reason FieldValueRequired",
            json!({"rule": "self < 10", "message": "m", "reason": "FieldValueRequired"}),
            vec!["spec.replicas: Required value: m"],
        ),
        (
            "reason FieldValueDuplicate",
            json!({"rule": "self < 10", "message": "m", "reason": "FieldValueDuplicate"}),
            vec![r#"spec.replicas: Duplicate value: "integer""#],
        ),
        (
            "reason FieldValueInvalid",
            json!({"rule": "self < 10", "message": "m", "reason": "FieldValueInvalid"}),
            vec![r#"spec.replicas: Invalid value: "integer": m"#],
        ),
        (
            "runtime error",
            json!({"rule": "1 / (self - 12) == 0"}),
            vec![
                r#"spec.replicas: Invalid value: "integer": division by zero evaluating rule: 1 / (self - 12) == 0"#,
            ],
        ),
        (
            "runtime error names the message",
            json!({"rule": "1 / (self - 12) == 0", "message": "m"}),
            vec![r#"spec.replicas: Invalid value: "integer": division by zero evaluating rule: m"#],
        ),
        ("passing rule", json!({"rule": "self > 10"}), vec![]),
    ];
    for (name, rule, want) in table {
        let rules = compile(int_rule(rule));
        let out = rules.validate(&obj, None);
        assert_eq!(rendered(&out), want, "{name}");
        assert!(out.warnings.is_empty(), "{name}");
    }
}

#[test]
fn field_paths() {
    let props = json!({
        "replicas": {"type": "integer"},
        "a.b": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "list": {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}},
        "m": {"type": "object", "additionalProperties": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}},
        "missing": {"type": "object", "properties": {"x": {"type": "integer"}}},
    });
    let rules = compile(cr(
        props,
        json!([
            {"rule": "self.replicas < 10", "fieldPath": ".replicas"},
            {"rule": "self.a__dot__b == 'x'", "fieldPath": "['a.b']"},
            {"rule": "self.labels['app'] == 'x'", "fieldPath": ".labels['app']"},
            {"rule": "self.missing.x == 1"},
        ]),
    ));
    let obj = json!({"spec": {"replicas": 12, "a.b": "y", "labels": {"app": "y"}, "list": [1, -1], "m": {"k": -1}}});
    let out = rules.validate(&obj, None);
    assert_eq!(
        rendered(&out),
        vec![
            r#"spec.replicas: Invalid value: "object": failed rule: self.replicas < 10"#,
            r#"spec.a.b: Invalid value: "object": failed rule: self.a__dot__b == 'x'"#,
            r#"spec.labels[app]: Invalid value: "object": failed rule: self.labels['app'] == 'x'"#,
            r#"spec: Invalid value: "object": no such key: missing evaluating rule: self.missing.x == 1"#,
            r#"spec.list[1]: Invalid value: "integer": failed rule: self > 0"#,
            r#"spec.m[k]: Invalid value: "integer": failed rule: self > 0"#,
        ]
    );
}

#[test]
fn root_rules_report_at_nil_and_see_the_resource_fields() {
    let rules = compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('a')", "message": "name must start with a"},
            {"rule": "self.kind == 'Widget' && self.apiVersion == 'example.com/v1'"},
        ],
    }));
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bob", "namespace": "ns"}, "spec": {"x": 1}});
    assert_eq!(
        rendered(&rules.validate(&obj, None)),
        vec![r#"<nil>: Invalid value: "object": name must start with a"#]
    );
}

#[test]
fn null_values_are_not_validated() {
    let rules = compile(cr(
        json!({"x": {"type": "integer", "nullable": true, "x-kubernetes-validations": [{"rule": "self > 0"}]}}),
        json!([]),
    ));
    assert!(
        rules
            .validate(&json!({"spec": {"x": null}}), None)
            .errors
            .is_empty()
    );
    assert_eq!(
        rules
            .validate(&json!({"spec": {"x": 0}}), None)
            .errors
            .len(),
        1
    );
}

#[test]
fn transition_rules() {
    let rules = compile(cr(
        json!({
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
            "replicas": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "may not decrease"}]},
            "labels": {"type": "object", "additionalProperties": {
                "type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable label"}],
            }},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {
                "type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "port is immutable"}],
            }},
        }),
        json!([]),
    ));
    let old = json!({"spec": {"name": "a", "replicas": 3, "labels": {"k": "v"}, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}});

    // Create: transition rules are skipped.
    assert!(rules.validate(&old, None).errors.is_empty());
    // Unchanged update.
    assert!(rules.validate(&old, Some(&old)).errors.is_empty());

    // Changes, correlated by property, map key and list-map key (the list is
    // reordered and gains an item with no old value).
    let new = json!({"spec": {"name": "b", "replicas": 2, "labels": {"k": "w", "new": "x"}, "ports": [{"name": "metrics", "port": 9090}, {"name": "https", "port": 8443}, {"name": "http", "port": 80}]}});
    assert_eq!(
        rendered(&rules.validate(&new, Some(&old))),
        vec![
            r#"spec.labels[k]: Invalid value: "string": immutable label"#,
            r#"spec.name: Invalid value: "string": Value is immutable"#,
            r#"spec.ports[1]: Invalid value: "object": port is immutable"#,
            r#"spec.replicas: Invalid value: "integer": may not decrease"#,
        ]
    );
}

#[test]
fn optional_old_self() {
    let rules = compile(cr(
        json!({"replicas": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "message": "may not decrease", "optionalOldSelf": true},
            {"rule": "oldSelf.hasValue() || self <= 5", "message": "starts at most at 5", "optionalOldSelf": true},
            {"rule": "self >= oldSelf.orValue(0)", "message": "orValue", "optionalOldSelf": true},
        ]}}),
        json!([]),
    ));
    // On create, optional transition rules run with no old value.
    assert_eq!(
        rendered(&rules.validate(&json!({"spec": {"replicas": 7}}), None)),
        vec![r#"spec.replicas: Invalid value: "integer": starts at most at 5"#]
    );
    assert_eq!(
        rendered(&rules.validate(
            &json!({"spec": {"replicas": 2}}),
            Some(&json!({"spec": {"replicas": 7}}))
        )),
        vec![
            r#"spec.replicas: Invalid value: "integer": may not decrease"#,
            r#"spec.replicas: Invalid value: "integer": orValue"#,
        ]
    );
}

#[test]
fn ratcheting_turns_failures_of_unchanged_values_into_warnings() {
    let rules = compile(cr(
        json!({
            "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10", "message": "a too big"}]},
            "b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10", "message": "b too big"}]},
            "c": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == oldSelf && self < 10", "message": "c"}]},
            "atomic": {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10", "message": "item too big"}]}},
        }),
        json!([]),
    ));
    let old = json!({"spec": {"a": 20, "b": 20, "c": 20, "atomic": [20]}});
    let new = json!({"spec": {"a": 20, "b": 21, "c": 20, "atomic": [20]}});
    let out = rules.validate(&new, Some(&old));
    assert_eq!(
        rendered(&out),
        vec![
            r#"spec.b: Invalid value: "integer": b too big"#,
            // transition rules are never ratcheted
            r#"spec.c: Invalid value: "integer": c"#,
        ]
    );
    assert_eq!(
        out.warnings,
        vec![
            r#"spec.a: Invalid value: "integer": a too big"#.to_owned(),
            // items of an atomic list ratchet with their unchanged parent list
            r#"spec.atomic[0]: Invalid value: "integer": item too big"#.to_owned(),
        ]
    );
    // On create nothing is ratcheted.
    assert_eq!(rules.validate(&new, None).warnings, Vec::<String>::new());
}

#[test]
fn all_of_rules_apply_to_the_node() {
    let rules = compile(cr(
        json!({"x": {"type": "integer", "allOf": [{"x-kubernetes-validations": [{"rule": "self != 3", "message": "not 3"}]}]}}),
        json!([]),
    ));
    assert_eq!(
        rendered(&rules.validate(&json!({"spec": {"x": 3}}), None)),
        vec![r#"spec.x: Invalid value: "integer": not 3"#]
    );
}

#[test]
fn int_or_string_runtime_overload() {
    let rules = compile(cr(
        json!({"v": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{"rule": "self > 3"}]}}),
        json!([]),
    ));
    assert!(
        rules
            .validate(&json!({"spec": {"v": 4}}), None)
            .errors
            .is_empty()
    );
    assert_eq!(
        rendered(&rules.validate(&json!({"spec": {"v": "four"}}), None)),
        vec![
            r#"spec.v: Invalid value: "": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self > 3"#
        ]
    );
}

#[test]
fn schema_without_rules_is_empty() {
    assert!(
        compile(json!({"type": "object", "properties": {"spec": {"type": "object"}}})).is_empty()
    );
    assert!(!compile(int_rule(json!({"rule": "self > 0"}))).is_empty());
}

#[test]
fn ratcheting_compares_through_the_schema() {
    let rules = compile(cr(
        json!({
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-validations": [{"rule": "size(self) < 2", "message": "too many ports"}],
                "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [{"rule": "false", "message": "never"}]},
        }),
        json!([]),
    ));
    let old = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}], "open": {"x": 1}}});
    // A reordered list-map is unchanged; an object with undeclared fields
    // never compares equal, so its failures stay errors.
    let new = json!({"spec": {"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 1}], "open": {"x": 1}}});
    let out = rules.validate(&new, Some(&old));
    assert_eq!(
        rendered(&out),
        vec![r#"spec.open: Invalid value: "object": never"#]
    );
    assert_eq!(
        out.warnings,
        vec![r#"spec.ports: Invalid value: "array": too many ports"#.to_owned()]
    );
}
