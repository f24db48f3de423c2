//! admissionregistration.k8s.io/v1 webhook configurations through the
//! server: discovery, defaulting, upstream's validation (with CEL compile
//! errors of matchConditions), generation, and the Table printer.

mod support;

use exitplan_apiserver::server::Server;
use serde_json::{Value, json};
use support::*;

const JSON: &str = "application/json";
const VWC: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MWC: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

async fn call(server: &Server, method: &str, uri: &str, body: &Value) -> (u16, Value) {
    let (code, _, out) = raw(
        server,
        method,
        uri,
        &[("content-type", JSON)],
        &body.to_string(),
    )
    .await;
    (code, out)
}

fn config(kind: &str, name: &str, hooks: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "webhooks": hooks})
}

fn hook() -> Value {
    json!({
        "name": "deny.example.com",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"namespace": "default", "name": "hooks", "path": "/validate"}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods", "pods/eviction"]}],
        "matchConditions": [{"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:')"}]
    })
}

#[tokio::test(start_paused = true)]
async fn webhook_configurations_are_served_defaulted_and_validated() {
    let server = server().await;
    let (code, list) = call(
        &server,
        "GET",
        "/apis/admissionregistration.k8s.io/v1",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 200, "{list}");
    let names: Vec<&str> = list["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        names.contains(&"validatingwebhookconfigurations"),
        "{names:?}"
    );
    assert!(
        names.contains(&"mutatingwebhookconfigurations"),
        "{names:?}"
    );

    let (code, v) = call(
        &server,
        "POST",
        VWC,
        &config("ValidatingWebhookConfiguration", "deny", json!([hook()])),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["metadata"]["generation"], 1);
    let h = &v["webhooks"][0];
    assert_eq!(h["failurePolicy"], "Fail");
    assert_eq!(h["matchPolicy"], "Equivalent");
    assert_eq!(h["timeoutSeconds"], 10);
    assert_eq!(h["namespaceSelector"], json!({}));
    assert_eq!(h["objectSelector"], json!({}));
    assert_eq!(h["rules"][0]["scope"], "*");
    assert_eq!(h["clientConfig"]["service"]["port"], 443);
    assert!(h.get("reinvocationPolicy").is_none());

    let (code, m) = call(
        &server,
        "POST",
        MWC,
        &config("MutatingWebhookConfiguration", "mutate", json!([hook()])),
    )
    .await;
    assert_eq!(code, 201, "{m}");
    assert_eq!(m["webhooks"][0]["reinvocationPolicy"], "Never");

    // An update that changes the webhooks bumps the generation.
    let mut changed = v.clone();
    changed["webhooks"][0]["timeoutSeconds"] = json!(5);
    let (code, u) = call(&server, "PUT", &format!("{VWC}/deny"), &changed).await;
    assert_eq!(code, 200, "{u}");
    assert_eq!(u["metadata"]["generation"], 2);
    assert_eq!(u["webhooks"][0]["timeoutSeconds"], 5);

    let mut bad = hook();
    bad["name"] = json!("k8s.io");
    bad["timeoutSeconds"] = json!(31);
    bad["clientConfig"] = json!({"url": "http://example.com/x?y=1"});
    bad["matchConditions"] = json!([{"name": "c", "expression": "object.x in [1, 2,"},
                                    {"name": "d", "expression": "6"}]);
    if let Some(o) = bad.as_object_mut() {
        o.remove("sideEffects");
    }
    let (code, e) = call(
        &server,
        "POST",
        VWC,
        &config("ValidatingWebhookConfiguration", "bad", json!([bad])),
    )
    .await;
    assert_eq!(code, 422, "{e}");
    assert_eq!(e["reason"], "Invalid");
    let message = e["message"].as_str().expect("message");
    for want in [
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: [",
        "webhooks[0].name: Invalid value: \"k8s.io\": should be a domain with at least three segments separated by dots",
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
        "webhooks[0].clientConfig.url: Invalid value: \"y=1\": query parameters are not permitted in the URL",
        "webhooks[0].matchConditions[0].expression: Invalid value: \"object.x in [1, 2,\": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'",
        "webhooks[0].matchConditions[1].expression: Invalid value: \"6\": must evaluate to bool",
    ] {
        assert!(message.contains(want), "missing {want}\nin {message}");
    }
    let (code, gone) = call(&server, "GET", &format!("{VWC}/bad"), &Value::Null).await;
    assert_eq!(code, 404, "{gone}");
}

#[tokio::test(start_paused = true)]
async fn webhook_configurations_print_as_tables() {
    let server = server().await;
    let (code, _) = call(&server, "POST", VWC, &config("ValidatingWebhookConfiguration", "two", json!([hook(), {
        "name": "other.example.com", "sideEffects": "NoneOnDryRun", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://hooks.example.com/validate"}
    }]))).await;
    assert_eq!(code, 201);
    let (code, _, table) = raw(
        &server,
        "GET",
        VWC,
        &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
        "",
    )
    .await;
    assert_eq!(code, 200, "{table}");
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(columns, ["Name", "Webhooks", "Age"]);
    assert_eq!(table["rows"][0]["cells"][0], "two");
    assert_eq!(table["rows"][0]["cells"][1], 2);
}

const VAP: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const VAPB: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

#[tokio::test(start_paused = true)]
async fn admission_policies_and_bindings_are_served_and_validated() {
    let server = server().await;
    let policy = |validation: &str| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
               "metadata": {"name": "replicas"},
               "spec": {"validations": [{"expression": validation, "messageExpression": "'too many: ' + string(object.spec.replicas)"}],
                        "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"],
                            "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]}}})
    };
    let (code, e) = call(
        &server,
        "POST",
        VAP,
        &policy("object.spec.replicas <= params.max"),
    )
    .await;
    assert_eq!(code, 422, "{e}");
    let message = e["message"].as_str().expect("message");
    assert!(
        message.contains("spec.validations[0].expression: Invalid value: \"object.spec.replicas <= params.max\": compilation failed: ERROR: <input>:1:25: undeclared reference to 'params' (in container '')"),
        "{message}"
    );

    let (code, p) = call(&server, "POST", VAP, &policy("object.spec.replicas <= 5")).await;
    assert_eq!(code, 201, "{p}");
    assert_eq!(p["spec"]["failurePolicy"], "Fail");
    assert_eq!(p["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
    assert_eq!(
        p["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
        "*"
    );
    assert_eq!(p["metadata"]["generation"], 1);

    // `/status` writes only the status.
    let mut status = p.clone();
    status["spec"]["failurePolicy"] = json!("Ignore");
    status["status"] = json!({"observedGeneration": 1, "typeChecking": {"expressionWarnings": [
        {"fieldRef": "spec.validations[0].expression", "warning": "checked"}]}});
    let (code, s) = call(&server, "PUT", &format!("{VAP}/replicas/status"), &status).await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["spec"]["failurePolicy"], "Fail");
    assert_eq!(s["status"]["observedGeneration"], 1);

    let binding = |actions: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "replicas"},
               "spec": {"policyName": "replicas", "validationActions": actions}})
    };
    let (code, e) = call(&server, "POST", VAPB, &binding(json!(["Deny", "Warn"]))).await;
    assert_eq!(code, 422, "{e}");
    assert_eq!(
        e["message"],
        "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"replicas\" is invalid: spec.validationActions: Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"
    );
    let (code, b) = call(&server, "POST", VAPB, &binding(json!(["Deny"]))).await;
    assert_eq!(code, 201, "{b}");
}
