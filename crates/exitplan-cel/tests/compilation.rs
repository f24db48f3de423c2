//! Compiling rules: upstream `compilation_test.go` (`TestCelCompilation`) per
//! rule, and the CRD validation errors kube-apiserver returns for rules
//! (apiextensions `validation_test.go`), with their full texts.

mod common;

use common::{compile, compile_errors};
use serde_json::{Value, json};

/// What compiling rule `i` of a case must give.
enum Want {
    /// No error at `x-kubernetes-validations[i]`.
    Ok,
    /// An error at `x-kubernetes-validations[i].rule` containing the text.
    Rule(&'static str),
    /// An error at `x-kubernetes-validations[i].messageExpression` containing the text.
    MessageExpression(&'static str),
}

struct Case {
    name: &'static str,
    schema: Value,
    rules: Value,
    want: Vec<Want>,
}

fn with(schema: Value, rules: Value) -> Value {
    let mut s = schema;
    if let Some(o) = s.as_object_mut() {
        o.insert("x-kubernetes-validations".into(), rules);
    }
    s
}

fn cases() -> Vec<Case> {
    let int = json!({"type": "integer"});
    vec![
        Case {
            name: "optional primitive transition rule type checking",
            schema: int.clone(),
            rules: json!([
                {"rule": "self >= oldSelf.value()", "optionalOldSelf": true},
                {"rule": "self >= oldSelf.orValue(1)", "optionalOldSelf": true},
                {"rule": "oldSelf.hasValue() ? self >= oldSelf.value() : true", "optionalOldSelf": true},
                {"rule": "self >= oldSelf", "optionalOldSelf": true},
                {"rule": "self >= oldSelf.orValue('')", "optionalOldSelf": true},
            ]),
            want: vec![
                Want::Ok,
                Want::Ok,
                Want::Ok,
                Want::Rule("optional"),
                Want::Rule("orValue"),
            ],
        },
        Case {
            name: "optional complex transition rule type checking",
            schema: json!({"type": "object", "properties": {
                "i": {"type": "integer"}, "s": {"type": "string"},
                "o": {"type": "object", "properties": {"i": {"type": "integer"}, "s": {"type": "string"}}},
            }}),
            rules: json!([
                {"rule": "self.i >= oldSelf.i.value()", "optionalOldSelf": true},
                {"rule": "self.s == oldSelf.s.value()", "optionalOldSelf": true},
                {"rule": "self.o.i >= oldSelf.o.i.orValue(1)", "optionalOldSelf": true},
                {"rule": "oldSelf.hasValue() ? self.o.i >= oldSelf.o.i.value() : true", "optionalOldSelf": true},
                {"rule": "self.o.i >= oldSelf.o.i", "optionalOldSelf": true},
                {"rule": "self.o.i >= oldSelf.o.s.orValue(0)", "optionalOldSelf": true},
            ]),
            want: vec![
                Want::Ok,
                Want::Ok,
                Want::Ok,
                Want::Ok,
                Want::Rule("optional"),
                Want::Rule("orValue"),
            ],
        },
        Case {
            name: "valid object",
            schema: json!({"type": "object", "properties": {"minReplicas": int, "maxReplicas": int}}),
            rules: json!([{"rule": "self.minReplicas < self.maxReplicas", "message": "minReplicas should be smaller than maxReplicas"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid for string",
            schema: json!({"type": "string"}),
            rules: json!([{"rule": "self.startsWith('s')", "message": "scoped field should start with 's'"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid for byte",
            schema: json!({"type": "string", "format": "byte"}),
            rules: json!([{"rule": "string(self).endsWith('s')", "message": "scoped field should end with 's'"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid for boolean",
            schema: json!({"type": "boolean"}),
            rules: json!([{"rule": "self == true", "message": "scoped field should be true"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid for integer",
            schema: int.clone(),
            rules: json!([{"rule": "self > 0", "message": "scoped field should be greater than 0"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid for number",
            schema: json!({"type": "number"}),
            rules: json!([{"rule": "self > 1.0", "message": "scoped field should be greater than 1.0"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid nested object of object",
            schema: json!({"type": "object", "properties": {"nestedObj": {"type": "object", "properties": {"val": {"type": "integer", "format": "int64"}}}}}),
            rules: json!([{"rule": "self.nestedObj.val == 10", "message": "val should be equal to 10"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid nested object of array",
            schema: json!({"type": "object", "properties": {"nestedObj": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}}),
            rules: json!([{"rule": "size(self.nestedObj[0]) == 10", "message": "size of first element in nestedObj should be equal to 10"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid nested array of object",
            schema: json!({"type": "array", "items": {"type": "object", "properties": {"nestedObj": {"type": "object", "properties": {"val": {"type": "integer"}}}}}}),
            rules: json!([{"rule": "self[0].nestedObj.val == 10", "message": "val under nestedObj under properties under items should be equal to 10"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "valid map",
            schema: json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
            rules: json!([{"rule": "size(self) > 0", "message": "size of scoped field should be greater than 0"}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "invalid checking for number",
            schema: json!({"type": "number"}),
            rules: json!([{"rule": "size(self) == 10", "message": "size of scoped field should be equal to 10"}]),
            want: vec![Want::Rule("compilation failed")],
        },
        Case {
            name: "compilation failure",
            schema: int.clone(),
            rules: json!([{"rule": "size(self) == 10", "message": "size of scoped field should be equal to 10"}]),
            want: vec![Want::Rule("compilation failed")],
        },
        Case {
            name: "valid for escaping",
            schema: json!({"type": "object", "properties": {
                "namespace": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                "if": int, "self": int,
            }}),
            rules: json!([
                {"rule": "size(self.__namespace__[0]) == 10", "message": "size of first element in nestedObj should be equal to 10"},
                {"rule": "self.__if__ == 10"},
                {"rule": "self.self == 10"},
            ]),
            want: vec![Want::Ok, Want::Ok, Want::Ok],
        },
        Case {
            name: "invalid for escaping",
            schema: json!({"type": "object", "properties": {
                "namespace": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                "if": int, "self": int,
            }}),
            rules: json!([
                {"rule": "size(self.namespace[0]) == 10", "message": "size of first element in nestedObj should be equal to 10"},
                {"rule": "self == 10"},
            ]),
            want: vec![
                Want::Rule("undefined field 'namespace'"),
                Want::Rule("found no matching overload"),
            ],
        },
        Case {
            name: "transition rule identified",
            schema: int.clone(),
            rules: json!([{"rule": "self > 0"}, {"rule": "self >= oldSelf"}]),
            want: vec![Want::Ok, Want::Ok],
        },
        Case {
            name: "expression must evaluate to bool",
            schema: json!({"type": "object"}),
            rules: json!([{"rule": "42"}]),
            want: vec![Want::Rule("must evaluate to a bool")],
        },
        Case {
            name: "messageExpression inclusion",
            schema: json!({"type": "string"}),
            rules: json!([{"rule": "self.startsWith('s')", "messageExpression": "\"scoped field should start with 's'\""}]),
            want: vec![Want::Ok],
        },
        Case {
            name: "messageExpression must evaluate to a string",
            schema: int.clone(),
            rules: json!([{"rule": "self == 5", "messageExpression": "42"}]),
            want: vec![Want::MessageExpression("must evaluate to a string")],
        },
        Case {
            name: "messageExpression syntax error",
            schema: json!({"type": "number"}),
            rules: json!([{"rule": "self < 32.0", "messageExpression": "\"abc"}]),
            want: vec![Want::MessageExpression(
                "messageExpression compilation failed",
            )],
        },
        Case {
            name: "undeclared reference",
            schema: int,
            rules: json!([{"rule": "foo > 0"}, {"rule": "self.all(x, x > y)"}]),
            want: vec![
                Want::Rule("undeclared reference to 'foo' (in container '')"),
                Want::Rule("undeclared reference to 'y' (in container '')"),
            ],
        },
    ]
}

#[test]
fn cel_compilation() {
    let mut failures = Vec::new();
    for case in cases() {
        // The node sits under a property so that the root's resource fields
        // (apiVersion, kind, metadata) do not change its type.
        let errs = compile_errors(json!({
            "type": "object",
            "properties": {"f": with(case.schema.clone(), case.rules.clone())},
        }));
        let prefix = "spec.validation.openAPIV3Schema.properties[f].x-kubernetes-validations";
        for (i, want) in case.want.iter().enumerate() {
            let at = format!("{prefix}[{i}].");
            let here: Vec<&String> = errs.iter().filter(|e| e.starts_with(&at)).collect();
            let ok = match want {
                Want::Ok => here.is_empty(),
                Want::Rule(t) => here
                    .iter()
                    .any(|e| e.starts_with(&format!("{at}rule: ")) && e.contains(t)),
                Want::MessageExpression(t) => here
                    .iter()
                    .any(|e| e.starts_with(&format!("{at}messageExpression: ")) && e.contains(t)),
            };
            if !ok {
                failures.push(format!("{}: rule {i}: got {here:?}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn whitespace_only_rule_compiles_to_nothing() {
    // Upstream: a whitespace-only rule compiles to no program (CRD validation
    // reports it as not specified; see crd_rule_errors).
    let errs =
        compile_errors(json!({"type": "object", "x-kubernetes-validations": [{"rule": " \t"}]}));
    assert_eq!(
        errs,
        vec![
            "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Required value: rule is not specified"
        ]
    );
}

#[test]
fn crd_rule_errors() {
    // Full texts as kube-apiserver returns them for a CRD.
    let spec = |rules: Value| {
        json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "list": {"type": "array", "items": {"type": "string"}}},
            "x-kubernetes-validations": rules,
        }}})
    };
    let p = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]";
    let table: Vec<(&str, Value, Vec<String>)> = vec![
        (
            "undefined field",
            json!([{"rule": "self.nonExistingField > 0"}]),
            vec![format!(
                "{p}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.nonExistingField > 0\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'\n | self.nonExistingField > 0\n | ....^"
            )],
        ),
        (
            "no matching overload",
            json!([{"rule": "self.replicas == true"}]),
            vec![format!(
                "{p}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.replicas == true\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, bool)'\n | self.replicas == true\n | ..............^"
            )],
        ),
        (
            "messageExpression syntax error",
            json!([{"rule": "self.replicas >= 1", "messageExpression": "'Expected integer greater or equal to 1, got ' + this does not compile"}]),
            vec![format!(
                "{p}.messageExpression: Invalid value: apiextensions.ValidationRule{{Rule:\"self.replicas >= 1\", Message:\"\", MessageExpression:\"'Expected integer greater or equal to 1, got ' + this does not compile\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: messageExpression compilation failed: ERROR: <input>:1:55: Syntax error: mismatched input 'does' expecting <EOF>\n | 'Expected integer greater or equal to 1, got ' + this does not compile\n | ......................................................^"
            )],
        ),
        (
            "rule not specified",
            json!([{"rule": ""}]),
            vec![format!("{p}.rule: Required value: rule is not specified")],
        ),
        (
            "empty message",
            json!([{"rule": "true", "message": "  "}]),
            vec![format!(
                "{p}.message: Invalid value: \"  \": message must be non-empty if specified"
            )],
        ),
        (
            "message with line breaks",
            json!([{"rule": "true", "message": "a\nb"}]),
            vec![format!(
                "{p}.message: Invalid value: \"a\\nb\": message must not contain line breaks"
            )],
        ),
        (
            "multi-line rule needs a message",
            json!([{"rule": "true &&\ntrue"}]),
            vec![format!(
                "{p}.message: Required value: message must be specified if rule contains line breaks"
            )],
        ),
        (
            "empty messageExpression",
            json!([{"rule": "true", "messageExpression": " "}]),
            vec![format!(
                "{p}.messageExpression: Required value: messageExpression must be non-empty if specified"
            )],
        ),
        (
            "unsupported reason",
            json!([{"rule": "true", "reason": "InternalError"}]),
            vec![format!(
                "{p}.reason: Unsupported value: \"InternalError\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
            )],
        ),
        (
            "invalid fieldPath",
            json!([{"rule": "true", "fieldPath": ".foo"}]),
            vec![format!(
                "{p}.fieldPath: Invalid value: \".foo\": fieldPath must be a valid path"
            )],
        ),
        (
            "optionalOldSelf without oldSelf",
            json!([{"rule": "self.replicas > 0", "optionalOldSelf": true}]),
            vec![format!(
                "{p}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
            )],
        ),
        (
            "valid fieldPath and reason",
            json!([{"rule": "self.replicas > 0", "fieldPath": ".replicas", "reason": "FieldValueForbidden"}]),
            vec![],
        ),
    ];
    for (name, rules, want) in table {
        assert_eq!(compile_errors(spec(rules)), want, "{name}");
    }
}

#[test]
fn old_self_on_uncorrelatable_schema() {
    // Items of an atomic list do not correlate with old items.
    let errs = compile_errors(json!({"type": "object", "properties": {"list": {
        "type": "array",
        "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
    }}}));
    assert_eq!(
        errs,
        vec![
            "spec.validation.openAPIV3Schema.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[list]"
        ]
    );
    // List-map items correlate by key: allowed.
    compile(json!({"type": "object", "properties": {"list": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}},
                  "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
    }}}));
}

#[test]
fn schema_errors_come_before_cel_errors() {
    let errs = compile_errors(json!({"type": "object", "properties": {
        "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self.x > 0"}]},
        "b": {"type": "integer", "x-kubernetes-validations": [{"rule": ""}]},
    }}));
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs[0].contains("properties[b].x-kubernetes-validations[0].rule: Required value"),
        "{errs:?}"
    );
    assert!(
        errs[1].contains("properties[a].x-kubernetes-validations[0].rule: Invalid value"),
        "{errs:?}"
    );
}
