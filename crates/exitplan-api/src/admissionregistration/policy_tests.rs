//! Tables of upstream's `validation_test.go` for ValidatingAdmissionPolicy
//! (`TestValidateValidatingAdmissionPolicy`) and its binding
//! (`TestValidateValidatingAdmissionPolicyBinding`). As upstream, cases
//! assert that the aggregated error text contains the expected text.

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use serde_json::{Value, json};

use crate::admissionregistration::cel::{AdmissionCel, CelCompileError, Declarations, ResultType};
use crate::admissionregistration::policy::*;
use crate::admissionregistration::strategy::{
    ValidatingAdmissionPolicyBindingStrategy, ValidatingAdmissionPolicyStrategy,
};
use crate::strategy::testing::created;

/// A stand-in engine that reports what it was asked: `params` undeclared
/// without a paramKind, `authorizer` undeclared in message expressions, and
/// result types by the expression's first character (`'` string, digit int).
struct FakeCel;

impl AdmissionCel for FakeCel {
    fn compile(
        expression: &str,
        decl: &Declarations,
        result: ResultType,
        _stored: bool,
    ) -> Result<(), CelCompileError> {
        if expression.contains("params") && !decl.params {
            return Err(CelCompileError::Invalid(
                "undeclared reference to 'params'".into(),
            ));
        }
        if expression.contains("authorizer") && !decl.authorizer {
            return Err(CelCompileError::Invalid(
                "undeclared reference to 'authorizer'".into(),
            ));
        }
        if expression.contains("variables.") && !decl.variables {
            return Err(CelCompileError::Invalid(
                "undeclared reference to 'variables'".into(),
            ));
        }
        let first = expression.chars().next().unwrap_or(' ');
        match result {
            ResultType::Bool if first == '\'' || first.is_ascii_digit() => {
                Err(CelCompileError::Invalid("must evaluate to bool".into()))
            }
            ResultType::String if first.is_ascii_digit() => {
                Err(CelCompileError::Invalid("must evaluate to string".into()))
            }
            _ => Ok(()),
        }
    }
}

fn policy(spec: Value) -> Value {
    json!({"metadata": {"name": "config"}, "spec": spec})
}

fn validate(v: &Value) -> String {
    let p: ValidatingAdmissionPolicy = serde_json::from_value(v.clone()).expect("decodes");
    validate_policy::<FakeCel>(&p).to_string()
}

fn rules(r: Value) -> Value {
    json!({"resourceRules": r})
}

fn rule(ops: Value) -> Value {
    json!({"operations": ops, "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]})
}

fn assert_case(name: &str, got: &str, want: &str) {
    if want.is_empty() {
        assert_eq!(got, "", "{name}: unexpected errors");
    } else {
        assert!(
            got.contains(want),
            "{name}: expected to contain\n  {want}\ngot\n  {got}"
        );
    }
}

/// `TestValidateValidatingAdmissionPolicy`.
#[test]
fn validate_policy_table() {
    let x = json!([{"expression": "object.x < 100"}]);
    let valid_mc = json!({"matchPolicy": "Exact", "namespaceSelector": {}, "objectSelector": {},
                          "resourceRules": [rule(json!(["CREATE"]))]});
    let ok = |extra: Value| {
        let mut spec =
            json!({"failurePolicy": "Fail", "validations": x, "matchConstraints": valid_mc});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                s.insert(k.clone(), v.clone());
            }
        }
        policy(spec)
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        ("valid", ok(json!({})), ""),
        (
            "metadata.name validation",
            json!({"metadata": {"name": "!!!!"}}),
            r#"metadata.name: Invalid value: "!!!!":"#,
        ),
        (
            "failure policy validation",
            policy(json!({"failurePolicy": "other", "validations": x})),
            r#"spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore""#,
        ),
        (
            "API version is required in ParamKind",
            policy(
                json!({"validations": x, "paramKind": {"kind": "Example", "apiVersion": "test.example.com"}}),
            ),
            r#"spec.paramKind.apiVersion: Invalid value: "test.example.com""#,
        ),
        (
            "API kind is required in ParamKind",
            policy(json!({"validations": x, "paramKind": {"apiVersion": "test.example.com/v1"}})),
            "spec.paramKind.kind: Required value",
        ),
        (
            "API version format in ParamKind",
            policy(
                json!({"validations": x, "paramKind": {"kind": "Example", "apiVersion": "test.example.com/!!!"}}),
            ),
            r#"pec.paramKind.apiVersion: Invalid value: "!!!":"#,
        ),
        (
            "API group format in ParamKind",
            policy(
                json!({"validations": x, "paramKind": {"apiVersion": "!!!/v1", "kind": "ReplicaLimit"}}),
            ),
            r#"pec.paramKind.apiVersion: Invalid value: "!!!":"#,
        ),
        (
            "Validations is required",
            policy(json!({})),
            "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
        ),
        (
            "Invalid Validations Reason",
            policy(json!({"validations": [{"expression": "object.x < 100", "reason": "other"}]})),
            r#"spec.validations[0].reason: Unsupported value: "other""#,
        ),
        (
            "MatchConstraints is required",
            policy(json!({"validations": x})),
            "spec.matchConstraints: Required value",
        ),
        (
            "matchConstraints.resourceRules is required",
            policy(json!({"validations": x, "matchConstraints": {}})),
            "spec.matchConstraints.resourceRules: Required value",
        ),
        (
            "matchConstraints.resourceRules has at least one explicit rule",
            policy(
                json!({"validations": x, "matchConstraints": rules(json!([{"resourceNames": ["/./."]}]))}),
            ),
            "spec.matchConstraints.resourceRules[0].apiVersions: Required value",
        ),
        (
            "expression is required",
            policy(json!({"validations": [{}]})),
            "spec.validations[0].expression: Required value: expression is not specified",
        ),
        (
            "matchResources resourceNames check",
            policy(
                json!({"validations": x, "matchConstraints": rules(json!([{"resourceNames": ["/./."]}]))}),
            ),
            r#"spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: "/./.""#,
        ),
        (
            "matchResources resourceNames cannot duplicate",
            policy(
                json!({"validations": x, "matchConstraints": rules(json!([{"resourceNames": ["test", "test"]}]))}),
            ),
            r#"spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: "test""#,
        ),
        (
            "matchResources validation: matchPolicy",
            policy(json!({"validations": x, "matchConstraints": {"matchPolicy": "other"}})),
            r#"spec.matchConstraints.matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact""#,
        ),
        (
            "Operations must not be empty or nil",
            policy(
                json!({"validations": x, "failurePolicy": "Fail", "matchConstraints": {
                    "namespaceSelector": {"matchLabels": {"a": "b"}}, "objectSelector": {"matchLabels": {"a": "b"}},
                    "matchPolicy": "Exact",
                    "resourceRules": [rule(json!([])), {"apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}],
                    "excludeResourceRules": [rule(json!([])), {"apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}]
                }}),
            ),
            "spec.matchConstraints.resourceRules[0].operations: Required value, spec.matchConstraints.resourceRules[1].operations: Required value, spec.matchConstraints.excludeResourceRules[0].operations: Required value, spec.matchConstraints.excludeResourceRules[1].operations: Required value",
        ),
        (
            "\"\" is NOT a valid operation",
            policy(
                json!({"validations": x, "matchConstraints": rules(json!([rule(json!(["CREATE", ""]))]))}),
            ),
            r#"Unsupported value: """#,
        ),
        (
            "operation must be either create/update/delete/connect",
            policy(
                json!({"validations": x, "matchConstraints": rules(json!([rule(json!(["PATCH"]))]))}),
            ),
            r#"Unsupported value: "PATCH""#,
        ),
        (
            "wildcard operation cannot be mixed with other strings",
            policy(
                json!({"validations": x, "matchConstraints": rules(json!([rule(json!(["CREATE", "*"]))]))}),
            ),
            "if '*' is present, must not specify other operations",
        ),
        (
            "validation expression must be a bool",
            ok(json!({"validations": [{"expression": "'yes'"}]})),
            r#"spec.validations[0].expression: Invalid value: "'yes'": must evaluate to bool"#,
        ),
        (
            "params need a paramKind",
            ok(json!({"validations": [{"expression": "params.x < object.x"}]})),
            "undeclared reference to 'params'",
        ),
        (
            "params with a paramKind",
            ok(
                json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                      "validations": [{"expression": "params.x < object.x"}],
                      "matchConditions": [{"name": "p", "expression": "params.y"}]}),
            ),
            "",
        ),
        (
            "messageExpression of wrong type",
            ok(json!({"validations": [{"expression": "true", "messageExpression": "1 + 1"}]})),
            r#"spec.validations[0].messageExpression: Invalid value: "1 + 1": must evaluate to string"#,
        ),
        (
            "messageExpression has no authorizer",
            ok(
                json!({"validations": [{"expression": "true", "messageExpression": "authorizer.path('/x')"}]}),
            ),
            "undeclared reference to 'authorizer'",
        ),
        (
            "messageExpression must be non-empty if specified",
            ok(json!({"validations": [{"expression": "true", "messageExpression": "  "}]})),
            r#"spec.validations[0].messageExpression: Invalid value: "  ": must be non-empty if specified"#,
        ),
        (
            "message must not contain line breaks",
            ok(json!({"validations": [{"expression": "true", "message": "a\nb"}]})),
            r#"spec.validations[0].message: Invalid value: "a\nb": message must not contain line breaks"#,
        ),
        (
            "message must be non-empty if specified",
            ok(json!({"validations": [{"expression": "true", "message": " "}]})),
            r#"spec.validations[0].message: Invalid value: " ": message must be non-empty if specified"#,
        ),
        (
            "variables: names are CEL identifiers",
            ok(
                json!({"variables": [{"name": "1x", "expression": "true"}, {"name": "in", "expression": "true"},
                                     {"name": "", "expression": ""}]}),
            ),
            r#"spec.variables[0].name: Invalid value: "1x": name is not a valid CEL identifier, spec.variables[1].name: Invalid value: "in": name is not a valid CEL identifier, spec.variables[2].name: Required value: name is not specified, spec.variables[2].expression: Required value: expression is not specified"#,
        ),
        (
            "variables are declared for validations",
            ok(
                json!({"variables": [{"name": "x", "expression": "object.x"}],
                      "validations": [{"expression": "variables.x < 100"}]}),
            ),
            "",
        ),
        (
            "audit annotations: key, value and uniqueness",
            ok(json!({"validations": [], "auditAnnotations": [
                {"key": "@bad", "valueExpression": "'x'"},
                {"key": "ok", "valueExpression": ""},
                {"key": "ok", "valueExpression": "'y'"}
            ]})),
            r#"spec.auditAnnotations[0].key: Invalid value: "config/@bad": name part must consist of alphanumeric characters"#,
        ),
        (
            "audit annotations: value required and unique keys",
            ok(json!({"validations": [], "auditAnnotations": [
                {"key": "ok", "valueExpression": ""},
                {"key": "ok", "valueExpression": "'y'"}
            ]})),
            r#"spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified, spec.auditAnnotations[1].key: Duplicate value: "ok""#,
        ),
    ];
    for (name, v, want) in cases {
        assert_case(name, &validate(&v), want);
    }
}

fn binding(spec: Value) -> Value {
    json!({"metadata": {"name": "config"}, "spec": spec})
}

fn validate_b(v: &Value) -> String {
    let b: ValidatingAdmissionPolicyBinding = serde_json::from_value(v.clone()).expect("decodes");
    validate_binding(&b).to_string()
}

/// `TestValidateValidatingAdmissionPolicyBinding`.
#[test]
fn validate_binding_table() {
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "valid",
            binding(
                json!({"policyName": "xyzlimit-scale.example.com", "validationActions": ["Deny"],
                           "paramRef": {"name": "xyzlimit-scale-setting.example.com", "parameterNotFoundAction": "Deny"}}),
            ),
            "",
        ),
        (
            "metadata.name validation",
            json!({"metadata": {"name": "!!!!"}, "spec": {"policyName": "p", "validationActions": ["Deny"]}}),
            r#"metadata.name: Invalid value: "!!!!":"#,
        ),
        (
            "PolicyName is required",
            binding(json!({"validationActions": ["Deny"]})),
            "spec.policyName: Required value",
        ),
        (
            "matchResources validation: matchPolicy",
            binding(json!({"policyName": "p", "validationActions": ["Deny"],
                           "matchResources": {"matchPolicy": "other", "namespaceSelector": {}, "objectSelector": {}}})),
            r#"spec.matchResouces.matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact""#,
        ),
        (
            "validationActions must be unique",
            binding(json!({"policyName": "p", "validationActions": ["Deny", "Deny"]})),
            r#"spec.validationActions[1]: Duplicate value: "Deny""#,
        ),
        (
            "validationActions must contain supported values",
            binding(json!({"policyName": "p", "validationActions": ["illegal"]})),
            r#"Unsupported value: "illegal": supported values: "Audit", "Deny", "Warn""#,
        ),
        (
            "validationActions must not contain both Deny and Warn",
            binding(json!({"policyName": "p", "validationActions": ["Deny", "Warn"]})),
            r#"spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn"#,
        ),
        (
            "validationActions are required",
            binding(json!({"policyName": "p"})),
            "spec.validationActions: Required value: at least one validation action is required",
        ),
        (
            "paramRef: name and selector are exclusive",
            binding(json!({"policyName": "p", "validationActions": ["Deny"],
                           "paramRef": {"name": "n", "selector": {}, "parameterNotFoundAction": "Allow"}})),
            "spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
        ),
        (
            "paramRef: one of name or selector",
            binding(json!({"policyName": "p", "validationActions": ["Deny"],
                           "paramRef": {"parameterNotFoundAction": "Allow"}})),
            "spec.paramRef: Required value: one of name or selector must be specified",
        ),
        (
            "paramRef: parameterNotFoundAction required",
            binding(
                json!({"policyName": "p", "validationActions": ["Deny"], "paramRef": {"name": "n"}}),
            ),
            "spec.paramRef.parameterNotFoundAction: Required value",
        ),
        (
            "paramRef: parameterNotFoundAction values",
            binding(json!({"policyName": "p", "validationActions": ["Deny"],
                           "paramRef": {"name": "n", "parameterNotFoundAction": "Maybe"}})),
            r#"spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: "Deny", "Allow""#,
        ),
    ];
    for (name, v, want) in cases {
        assert_case(name, &validate_b(&v), want);
    }
}

#[test]
fn policy_strategies_default_and_validate() {
    let p = created::<ValidatingAdmissionPolicyStrategy>(&policy(json!({
        "validations": [{"expression": "object.x < 100"}],
        "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                                                "apiVersions": ["v1"], "resources": ["deployments"]}]}
    })))
    .expect("valid after defaulting");
    let spec = p.spec.expect("spec");
    assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
    let mc = spec.match_constraints.expect("matchConstraints");
    assert_eq!(mc.match_policy.as_deref(), Some("Equivalent"));
    assert!(mc.namespace_selector.is_some() && mc.object_selector.is_some());
    assert_eq!(
        mc.resource_rules.as_deref().unwrap_or_default()[0]
            .scope
            .as_deref(),
        Some("*")
    );
    assert_eq!(p.metadata.generation, Some(1));

    let b = created::<ValidatingAdmissionPolicyBindingStrategy>(&binding(json!({
        "policyName": "p", "validationActions": ["Deny"], "matchResources": {}
    })))
    .expect("valid after defaulting");
    assert_eq!(
        b.spec
            .match_resources
            .and_then(|m| m.match_policy)
            .as_deref(),
        Some("Equivalent")
    );
}

/// `TestValidateValidatingAdmissionPolicyUpdate`: stored match conditions
/// are not revalidated while paramKind and matchConditions are unchanged.
#[test]
fn validate_policy_update_table() {
    let with = |conditions: Value, param_kind: Value| {
        let mut spec = json!({"failurePolicy": "Fail", "validations": [{"expression": "true"}],
                              "matchConstraints": {"matchPolicy": "Exact", "namespaceSelector": {},
                                  "objectSelector": {}, "resourceRules": [rule(json!(["CREATE"]))]},
                              "matchConditions": conditions});
        if !param_kind.is_null() {
            spec["paramKind"] = param_kind;
        }
        let p: ValidatingAdmissionPolicy = serde_json::from_value(policy(spec)).expect("decodes");
        p
    };
    let stored_params = json!([{"name": "p", "expression": "params.x"}]);
    let cases: Vec<(
        &str,
        ValidatingAdmissionPolicy,
        ValidatingAdmissionPolicy,
        &str,
    )> = vec![
        (
            "unchanged match conditions are kept",
            with(stored_params.clone(), Value::Null),
            with(stored_params.clone(), Value::Null),
            "",
        ),
        (
            "changed match conditions are validated",
            with(
                json!([{"name": "q", "expression": "params.y"}]),
                Value::Null,
            ),
            with(stored_params.clone(), Value::Null),
            "spec.matchConditions[0].expression: Invalid value: \"params.y\": undeclared reference to 'params'",
        ),
        (
            "a removed paramKind revalidates the match conditions",
            with(stored_params.clone(), Value::Null),
            with(
                stored_params,
                json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            ),
            "undeclared reference to 'params'",
        ),
    ];
    for (name, new, old, want) in cases {
        assert_case(
            name,
            &validate_policy_update::<FakeCel>(&new, &old).to_string(),
            want,
        );
    }
}
