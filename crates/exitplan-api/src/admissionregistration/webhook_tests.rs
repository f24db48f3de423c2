//! Tables of upstream's `validation_test.go` for webhook configurations
//! (`TestValidateValidatingWebhookConfiguration`, its mutating twin and the
//! `…Update` tables). As upstream, most cases assert that the aggregated
//! error text *contains* the expected text.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use serde_json::{Value, json};

use crate::absent::find_absent;
use crate::admissionregistration::cel::{AdmissionCel, CelCompileError, Declarations, ResultType};
use crate::admissionregistration::strategy::{
    MutatingWebhookConfigurationStrategy, ValidatingWebhookConfigurationStrategy,
};
use crate::admissionregistration::webhook::*;
use crate::strategy::testing::{created, edited};

/// A stand-in engine: `6` is not a bool, an unclosed list is a syntax
/// error (upstream's texts for those two expressions).
struct FakeCel;

impl AdmissionCel for FakeCel {
    fn compile(
        expression: &str,
        _decl: &Declarations,
        _result: ResultType,
        stored: bool,
    ) -> Result<(), CelCompileError> {
        match expression {
            "6" => Err(CelCompileError::Invalid("must evaluate to bool".into())),
            "object.x in [1, 2," => Err(CelCompileError::Invalid(
                "compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'"
                    .into(),
            )),
            "stored.only" if !stored => Err(CelCompileError::Invalid(
                "new expressions may not use this".into(),
            )),
            _ => Ok(()),
        }
    }
}

fn validating(hooks: Vec<Value>) -> Value {
    json!({"metadata": {"name": "config"}, "webhooks": hooks})
}

/// Upstream's `newValidatingWebhookConfiguration(hooks, true)`: hooks without
/// review versions get `["v1beta1"]`.
fn with_versions(mut hooks: Vec<Value>) -> Vec<Value> {
    for h in &mut hooks {
        if h.get("admissionReviewVersions").is_none() {
            h["admissionReviewVersions"] = json!(["v1beta1"]);
        }
    }
    hooks
}

fn hook(name: &str, side_effects: Option<&str>, extra: Value) -> Value {
    let mut h = json!({"name": name, "clientConfig": {"url": "https://example.com"}});
    if let Some(s) = side_effects {
        h["sideEffects"] = json!(s);
    }
    if let (Some(h), Some(e)) = (h.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            h.insert(k.clone(), v.clone());
        }
    }
    h
}

fn validate_vwc(v: &Value) -> String {
    let c: ValidatingWebhookConfiguration = serde_json::from_value(v.clone()).expect("decodes");
    validate_validating_webhook_configuration::<FakeCel>(&c, &find_absent(v)).to_string()
}

fn validate_mwc(v: &Value) -> String {
    let c: MutatingWebhookConfiguration = serde_json::from_value(v.clone()).expect("decodes");
    validate_mutating_webhook_configuration::<FakeCel>(&c, &find_absent(v)).to_string()
}

fn rule_hook(side_effects: &str, rule: Value) -> Value {
    hook(
        "webhook.k8s.io",
        Some(side_effects),
        json!({"rules": [rule]}),
    )
}

fn rule(ops: Value, resources: Value) -> Value {
    json!({"operations": ops, "apiGroups": ["a"], "apiVersions": ["a"], "resources": resources})
}

fn service(path: Option<&str>, port: i32) -> Value {
    let mut svc = json!({"namespace": "ns", "name": "n", "port": port});
    if let Some(p) = path {
        svc["path"] = json!(p);
    }
    json!({"service": svc})
}

fn conditions(cs: &[(&str, &str)]) -> Value {
    Value::Array(
        cs.iter()
            .map(|(n, e)| json!({"name": n, "expression": e}))
            .collect(),
    )
}

const QUALIFIED_NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// The cases of `TestValidateValidatingWebhookConfiguration`: (name, hooks,
/// whether versions are defaulted, expected text; empty means valid).
fn webhook_cases() -> Vec<(&'static str, Vec<Value>, bool, String)> {
    let none = Some("None");
    let unknown = Some("Unknown");
    let h = |extra: Value| hook("webhook.k8s.io", none, extra);
    let sixty_five: Vec<(String, String)> = (0..65)
        .map(|i| (format!("test{i}"), "true".to_owned()))
        .collect();
    let sixty_five: Vec<(&str, &str)> = sixty_five
        .iter()
        .map(|(n, e)| (n.as_str(), e.as_str()))
        .collect();
    vec![
        (
            "AdmissionReviewVersions are required",
            vec![hook("webhook.k8s.io", unknown, json!({}))],
            false,
            "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1".into(),
        ),
        (
            "should fail on bad AdmissionReviewVersion value",
            vec![hook("webhook.k8s.io", None, json!({"admissionReviewVersions": ["0v"]}))],
            true,
            r#"Invalid value: "0v": a DNS-1035 label"#.into(),
        ),
        (
            "should pass on valid AdmissionReviewVersion",
            vec![h(json!({"admissionReviewVersions": ["v1beta1"]}))],
            true,
            String::new(),
        ),
        (
            "should pass on mix of accepted and unaccepted AdmissionReviewVersion",
            vec![h(json!({"admissionReviewVersions": ["v1beta1", "invalid-version"]}))],
            true,
            String::new(),
        ),
        (
            "should fail on invalid AdmissionReviewVersion",
            vec![hook("webhook.k8s.io", None, json!({"admissionReviewVersions": ["invalidVersion"]}))],
            true,
            r#"Invalid value: ["invalidVersion"]"#.into(),
        ),
        (
            "should fail on duplicate AdmissionReviewVersion",
            vec![hook("webhook.k8s.io", None, json!({"admissionReviewVersions": ["v1beta1", "v1beta1"]}))],
            true,
            r#"Invalid value: "v1beta1": duplicate version"#.into(),
        ),
        (
            "all Webhooks must have a fully qualified name",
            vec![
                hook("webhook.k8s.io", none, json!({})),
                hook("k8s.io", none, json!({})),
                hook("", none, json!({})),
            ],
            true,
            r#"webhooks[1].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots, webhooks[2].name: Required value"#.into(),
        ),
        (
            "Webhooks must have unique names when created",
            vec![
                hook("webhook.k8s.io", unknown, json!({})),
                hook("webhook.k8s.io", unknown, json!({})),
            ],
            true,
            r#"webhooks[1].name: Duplicate value: "webhook.k8s.io""#.into(),
        ),
        (
            "Operations must not be empty or nil",
            vec![hook(
                "webhook.k8s.io",
                none,
                json!({"rules": [
                    {"operations": [], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]},
                    {"apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}
                ]}),
            )],
            true,
            "webhooks[0].rules[0].operations: Required value, webhooks[0].rules[1].operations: Required value".into(),
        ),
        (
            "\"\" is NOT a valid operation",
            vec![rule_hook("None", rule(json!(["CREATE", ""]), json!(["a"])))],
            true,
            r#"Unsupported value: """#.into(),
        ),
        (
            "operation must be either create/update/delete/connect",
            vec![rule_hook("None", rule(json!(["PATCH"]), json!(["a"])))],
            true,
            r#"Unsupported value: "PATCH""#.into(),
        ),
        (
            "wildcard operation cannot be mixed with other strings",
            vec![rule_hook("None", rule(json!(["CREATE", "*"]), json!(["a"])))],
            true,
            "if '*' is present, must not specify other operations".into(),
        ),
        (
            "resource \"*\" can co-exist with resources that have subresources",
            vec![rule_hook("None", rule(json!(["CREATE"]), json!(["*", "a/b", "a/*", "*/b"])))],
            true,
            String::new(),
        ),
        (
            "resource \"*\" cannot mix with resources that don't have subresources",
            vec![rule_hook("Unknown", rule(json!(["CREATE"]), json!(["*", "a"])))],
            true,
            "if '*' is present, must not specify other resources without subresources".into(),
        ),
        (
            "resource a/* cannot mix with a/x",
            vec![rule_hook("Unknown", rule(json!(["CREATE"]), json!(["a/*", "a/x"])))],
            true,
            r#"webhooks[0].rules[0].resources[1]: Invalid value: "a/x": if 'a/*' is present, must not specify a/x"#.into(),
        ),
        (
            "resource a/* can mix with a",
            vec![rule_hook("None", rule(json!(["CREATE"]), json!(["a/*", "a"])))],
            true,
            String::new(),
        ),
        (
            "resource */a cannot mix with x/a",
            vec![rule_hook("Unknown", rule(json!(["CREATE"]), json!(["*/a", "x/a"])))],
            true,
            r#"webhooks[0].rules[0].resources[1]: Invalid value: "x/a": if '*/a' is present, must not specify x/a"#.into(),
        ),
        (
            "resource */* cannot mix with other resources",
            vec![rule_hook("Unknown", rule(json!(["CREATE"]), json!(["*/*", "a"])))],
            true,
            r#"webhooks[0].rules[0].resources: Invalid value: ["*/*","a"]: if '*/*' is present, must not specify other resources"#.into(),
        ),
        (
            "FailurePolicy can only be \"Ignore\" or \"Fail\"",
            vec![hook("webhook.k8s.io", unknown, json!({"failurePolicy": "other"}))],
            true,
            r#"webhooks[0].failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore""#.into(),
        ),
        (
            "SideEffects are required",
            vec![hook("webhook.k8s.io", None, json!({}))],
            true,
            "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun".into(),
        ),
        (
            "SideEffects can only be \"None\" or \"NoneOnDryRun\" when created",
            vec![hook("webhook.k8s.io", Some("other"), json!({}))],
            true,
            r#"webhooks[0].sideEffects: Unsupported value: "other": supported values: "None", "NoneOnDryRun""#.into(),
        ),
        (
            "both service and URL missing",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {}}))],
            true,
            "exactly one of".into(),
        ),
        (
            "both service and URL provided",
            vec![hook(
                "webhook.k8s.io",
                None,
                json!({"clientConfig": {"service": {"namespace": "ns", "name": "n", "port": 443}, "url": "example.com/k8s/webhook"}}),
            )],
            true,
            "[0].clientConfig: Required value: exactly one of url or service is required".into(),
        ),
        (
            "blank URL",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": ""}}))],
            true,
            r#"[0].clientConfig.url: Invalid value: "": host must be specified"#.into(),
        ),
        (
            "wrong scheme",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": "http://example.com"}}))],
            true,
            "https".into(),
        ),
        (
            "missing host",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": "https:///fancy/webhook"}}))],
            true,
            "host must be specified".into(),
        ),
        (
            "fragment",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": "https://example.com/#bookmark"}}))],
            true,
            r#""bookmark": fragments are not permitted"#.into(),
        ),
        (
            "query",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": "https://example.com?arg=value"}}))],
            true,
            r#""arg=value": query parameters are not permitted"#.into(),
        ),
        (
            "user",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": "https://harry.potter@example.com/"}}))],
            true,
            r#""harry.potter": user information is not permitted"#.into(),
        ),
        (
            "just totally wrong",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": {"url": "arg#backwards=thisis?html.index/port:host//:https"}}))],
            true,
            "host must be specified".into(),
        ),
        (
            "path must start with slash",
            vec![hook("webhook.k8s.io", None, json!({"clientConfig": service(Some("foo/"), 443)}))],
            true,
            r#"clientConfig.service.path: Invalid value: "foo/": must start with a '/'"#.into(),
        ),
        (
            "path accepts slash",
            vec![h(json!({"clientConfig": service(Some("/"), 443)}))],
            true,
            String::new(),
        ),
        (
            "path accepts no trailing slash",
            vec![h(json!({"clientConfig": service(Some("/foo"), 443)}))],
            true,
            String::new(),
        ),
        (
            "path fails //",
            vec![h(json!({"clientConfig": service(Some("//"), 443)}))],
            true,
            r#"clientConfig.service.path: Invalid value: "//": segment[0] may not be empty"#.into(),
        ),
        (
            "path no empty step",
            vec![hook("webhook.k8s.io", unknown, json!({"clientConfig": service(Some("/foo//bar/"), 443)}))],
            true,
            r#"clientConfig.service.path: Invalid value: "/foo//bar/": segment[1] may not be empty"#.into(),
        ),
        (
            "path no empty step 2",
            vec![hook("webhook.k8s.io", unknown, json!({"clientConfig": service(Some("/foo/bar//"), 443)}))],
            true,
            r#"clientConfig.service.path: Invalid value: "/foo/bar//": segment[2] may not be empty"#.into(),
        ),
        (
            "path no non-subdomain",
            vec![hook("webhook.k8s.io", unknown, json!({"clientConfig": service(Some("/apis/foo.bar/v1alpha1/--bad"), 443)}))],
            true,
            r#"clientConfig.service.path: Invalid value: "/apis/foo.bar/v1alpha1/--bad": segment[3]: a lowercase RFC 1123 subdomain"#.into(),
        ),
        (
            "invalid port 0",
            vec![hook("webhook.k8s.io", unknown, json!({"clientConfig": service(Some("https://apis/foo.bar"), 0)}))],
            true,
            "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive".into(),
        ),
        (
            "invalid port >65535",
            vec![hook("webhook.k8s.io", unknown, json!({"clientConfig": service(Some("https://apis/foo.bar"), 65536)}))],
            true,
            "Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive".into(),
        ),
        (
            "timeout seconds cannot be greater than 30",
            vec![hook("webhook.k8s.io", unknown, json!({"timeoutSeconds": 31}))],
            true,
            "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds".into(),
        ),
        (
            "timeout seconds cannot be smaller than 1",
            vec![hook("webhook.k8s.io", unknown, json!({"timeoutSeconds": 0}))],
            true,
            "webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds".into(),
        ),
        (
            "timeout seconds must be positive",
            vec![hook("webhook.k8s.io", unknown, json!({"timeoutSeconds": -1}))],
            true,
            "webhooks[0].timeoutSeconds: Invalid value: -1: the timeout value must be between 1 and 30 seconds".into(),
        ),
        (
            "valid timeout seconds",
            vec![
                hook("webhook.k8s.io", none, json!({"timeoutSeconds": 1})),
                hook("webhook2.k8s.io", none, json!({"timeoutSeconds": 15})),
                hook("webhook3.k8s.io", none, json!({"timeoutSeconds": 30})),
            ],
            true,
            String::new(),
        ),
        (
            "single match condition must have a name",
            vec![h(json!({"matchConditions": [{"expression": "true"}]}))],
            true,
            "webhooks[0].matchConditions[0].name: Required value".into(),
        ),
        (
            "all match conditions must have a name",
            vec![
                h(json!({"matchConditions": [{"expression": "true"}, {"expression": "true"}]})),
                h(json!({"matchConditions": [{"name": "", "expression": "true"}]})),
            ],
            true,
            "webhooks[0].matchConditions[0].name: Required value, webhooks[0].matchConditions[1].name: Required value, webhooks[1].matchConditions[0].name: Required value".into(),
        ),
        (
            "single match condition must have a qualified name",
            vec![h(json!({"matchConditions": conditions(&[("-hello", "true")])}))],
            true,
            format!(r#"webhooks[0].matchConditions[0].name: Invalid value: "-hello": {QUALIFIED_NAME_PART}"#),
        ),
        (
            "all match conditions must have qualified names",
            vec![
                h(json!({"matchConditions": conditions(&[(".io", "true"), ("thing.test.com", "true")])})),
                hook("webhook2.k8s.io", none, json!({"matchConditions": conditions(&[("some name", "true")])})),
            ],
            true,
            format!(
                r#"[webhooks[0].matchConditions[0].name: Invalid value: ".io": {QUALIFIED_NAME_PART}, webhooks[1].matchConditions[0].name: Invalid value: "some name": {QUALIFIED_NAME_PART}]"#
            ),
        ),
        (
            "expression is required",
            vec![h(json!({"matchConditions": [{"name": "webhook.k8s.io"}]}))],
            true,
            "webhooks[0].matchConditions[0].expression: Required value".into(),
        ),
        (
            "expression is required to have some value",
            vec![h(json!({"matchConditions": conditions(&[("webhook.k8s.io", "")])}))],
            true,
            "webhooks[0].matchConditions[0].expression: Required value".into(),
        ),
        (
            "invalid expression",
            vec![h(json!({"matchConditions": conditions(&[("webhook.k8s.io", "object.x in [1, 2, ")])}))],
            true,
            r#"webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'"#.into(),
        ),
        (
            "unique names same hook",
            vec![h(json!({"matchConditions": conditions(&[("webhook.k8s.io", "true"), ("webhook.k8s.io", "true")])}))],
            true,
            r#"matchConditions[1].name: Duplicate value: "webhook.k8s.io""#.into(),
        ),
        (
            "repeat names allowed across different hooks",
            vec![
                h(json!({"matchConditions": conditions(&[("webhook.k8s.io", "true")])})),
                hook("webhook2.k8s.io", none, json!({"matchConditions": conditions(&[("webhook.k8s.io", "true")])})),
            ],
            true,
            String::new(),
        ),
        (
            "must evaluate to bool",
            vec![h(json!({"matchConditions": conditions(&[("webhook.k8s.io", "6")])}))],
            true,
            r#"webhooks[0].matchConditions[0].expression: Invalid value: "6": must evaluate to bool"#.into(),
        ),
        (
            "max of 64 match conditions",
            vec![h(json!({"matchConditions": conditions(&sixty_five)}))],
            true,
            "webhooks[0].matchConditions: Too many: 65: must have at most 64 items".into(),
        ),
    ]
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

/// `TestValidateValidatingWebhookConfiguration`.
#[test]
fn validate_validating_webhook_configuration_table() {
    for (name, hooks, versions, want) in webhook_cases() {
        let hooks = if versions {
            with_versions(hooks)
        } else {
            hooks
        };
        assert_case(name, &validate_vwc(&validating(hooks)), &want);
    }
}

/// `TestValidateMutatingWebhookConfiguration`: the same cases, plus
/// `reinvocationPolicy`.
#[test]
fn validate_mutating_webhook_configuration_table() {
    for (name, hooks, versions, want) in webhook_cases() {
        let hooks = if versions {
            with_versions(hooks)
        } else {
            hooks
        };
        assert_case(name, &validate_mwc(&validating(hooks)), &want);
    }
    let bad = with_versions(vec![hook(
        "webhook.k8s.io",
        Some("None"),
        json!({"reinvocationPolicy": "other"}),
    )]);
    assert_case(
        "reinvocationPolicy",
        &validate_mwc(&validating(bad)),
        r#"webhooks[0].reinvocationPolicy: Unsupported value: "other": supported values: "IfNeeded", "Never""#,
    );
}

#[test]
fn service_name_and_namespace_are_reported_as_upstream_does() {
    let hooks = with_versions(vec![hook(
        "webhook.k8s.io",
        Some("None"),
        json!({"clientConfig": {"service": {"namespace": "ns", "name": ""}}}),
    )]);
    assert_eq!(
        validate_vwc(&validating(hooks)),
        "webhooks[0].clientConfig.service.namespace: Required value"
    );
}

fn update_vwc(new: &Value, old: &Value) -> String {
    let n: ValidatingWebhookConfiguration = serde_json::from_value(new.clone()).expect("decodes");
    let o: ValidatingWebhookConfiguration = serde_json::from_value(old.clone()).expect("decodes");
    validate_validating_webhook_configuration_update::<FakeCel>(&n, &o, &find_absent(new))
        .to_string()
}

fn update_mwc(new: &Value, old: &Value) -> String {
    let n: MutatingWebhookConfiguration = serde_json::from_value(new.clone()).expect("decodes");
    let o: MutatingWebhookConfiguration = serde_json::from_value(old.clone()).expect("decodes");
    validate_mutating_webhook_configuration_update::<FakeCel>(&n, &o, &find_absent(new)).to_string()
}

/// `TestValidateValidatingWebhookConfigurationUpdate` (and its mutating
/// twin): a rule the stored object already broke is not enforced.
#[test]
fn validate_webhook_configuration_update_table() {
    let unknown = Some("Unknown");
    let none = Some("None");
    let cases: Vec<(&str, Vec<Value>, Vec<Value>, &str)> = vec![
        (
            "should pass on valid new AdmissionReviewVersion",
            vec![hook(
                "webhook.k8s.io",
                unknown,
                json!({"admissionReviewVersions": ["v1beta1"]}),
            )],
            with_versions(vec![hook("webhook.k8s.io", unknown, json!({}))]),
            "",
        ),
        (
            "should pass on invalid AdmissionReviewVersion with invalid previous versions",
            vec![hook(
                "webhook.k8s.io",
                unknown,
                json!({"admissionReviewVersions": ["invalid-v1", "invalid-v2"]}),
            )],
            vec![hook(
                "webhook.k8s.io",
                unknown,
                json!({"admissionReviewVersions": ["invalid-v0"]}),
            )],
            "",
        ),
        (
            "should fail on invalid AdmissionReviewVersion with valid previous versions",
            vec![hook(
                "webhook.k8s.io",
                unknown,
                json!({"admissionReviewVersions": ["invalid-v1"]}),
            )],
            vec![hook(
                "webhook.k8s.io",
                unknown,
                json!({"admissionReviewVersions": ["v1beta1", "invalid-v1"]}),
            )],
            r#"Invalid value: ["invalid-v1"]"#,
        ),
        (
            "should fail on invalid AdmissionReviewVersion with missing previous versions",
            vec![hook(
                "webhook.k8s.io",
                unknown,
                json!({"admissionReviewVersions": ["invalid-v1"]}),
            )],
            vec![hook("webhook.k8s.io", unknown, json!({}))],
            r#"Invalid value: ["invalid-v1"]"#,
        ),
        (
            "Webhooks can have duplicate names when old config has duplicate names",
            with_versions(vec![
                hook("webhook.k8s.io", unknown, json!({})),
                hook("webhook.k8s.io", unknown, json!({})),
            ]),
            with_versions(vec![
                hook("webhook.k8s.io", unknown, json!({})),
                hook("webhook.k8s.io", unknown, json!({})),
            ]),
            "",
        ),
        (
            "Webhooks must compile CEL expressions with StoredExpression environment if unchanged",
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"matchConditions": conditions(&[("checkStorage", "stored.only")])}),
            )]),
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"matchConditions": conditions(&[("checkStorage", "stored.only")])}),
            )]),
            "",
        ),
        (
            "Webhooks must compile CEL expressions with NewExpression environment type if changed",
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"matchConditions": conditions(&[("checkStorage", "stored.only")])}),
            )]),
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"matchConditions": conditions(&[("checkStorage", "true")])}),
            )]),
            "new expressions may not use this",
        ),
        (
            "Unchanged match conditions are not revalidated",
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"timeoutSeconds": 5, "matchConditions": conditions(&[("a", "6")])}),
            )]),
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"matchConditions": conditions(&[("a", "6")])}),
            )]),
            "",
        ),
        (
            "SideEffects Unknown stays allowed when the stored object has it",
            with_versions(vec![hook("webhook.k8s.io", unknown, json!({}))]),
            with_versions(vec![hook("webhook.k8s.io", unknown, json!({}))]),
            "",
        ),
        (
            "SideEffects Unknown is refused when the stored object had none",
            with_versions(vec![hook("webhook.k8s.io", unknown, json!({}))]),
            with_versions(vec![hook("webhook.k8s.io", none, json!({}))]),
            r#"webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun""#,
        ),
        (
            "invalid label values stay allowed when stored",
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-bad-"]}]}}),
            )]),
            with_versions(vec![hook(
                "webhook.k8s.io",
                none,
                json!({"objectSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-bad-"]}]}}),
            )]),
            "",
        ),
    ];
    for (name, new, old, want) in cases {
        let (new, old) = (validating(new), validating(old));
        assert_case(name, &update_vwc(&new, &old), want);
        assert_case(name, &update_mwc(&new, &old), want);
    }
}

#[test]
fn strategies_default_then_validate_and_bump_generation() {
    let obj = json!({"metadata": {"name": "config"}, "webhooks": [{
        "name": "webhook.k8s.io", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]
    }]});
    let vwc = created::<ValidatingWebhookConfigurationStrategy>(&obj).expect("valid");
    assert_eq!(vwc.metadata.generation, Some(1));
    let hook = vwc
        .webhooks
        .as_deref()
        .unwrap_or_default()
        .first()
        .cloned()
        .expect("hook");
    assert_eq!(hook.timeout_seconds, Some(10));
    assert_eq!(hook.failure_policy.as_deref(), Some("Fail"));
    assert_eq!(hook.client_config.service.and_then(|s| s.port), Some(443));
    let mwc = created::<MutatingWebhookConfigurationStrategy>(&obj).expect("valid");
    let mhook = mwc
        .webhooks
        .as_deref()
        .unwrap_or_default()
        .first()
        .cloned()
        .expect("hook");
    assert_eq!(mhook.reinvocation_policy.as_deref(), Some("Never"));

    let missing = edited(obj.clone(), |o| {
        if let Some(h) = o["webhooks"][0].as_object_mut() {
            h.remove("sideEffects");
            h.remove("admissionReviewVersions");
        }
    });
    let errs = created::<ValidatingWebhookConfigurationStrategy>(&missing)
        .expect_err("sideEffects and admissionReviewVersions are required in v1")
        .to_string();
    assert_eq!(
        errs,
        "[webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1]"
    );
    let namespaced = edited(obj, |o| o["metadata"]["namespace"] = json!("default"));
    let errs = created::<MutatingWebhookConfigurationStrategy>(&namespaced)
        .expect_err("cluster-scoped")
        .to_string();
    assert_eq!(
        errs,
        "metadata.namespace: Forbidden: not allowed on this type"
    );
}
