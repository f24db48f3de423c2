//! `fieldValidation` through the REST router, as upstream's
//! `test/integration/apiserver/field_validation_test.go` exercises it:
//! repeated JSON keys and unknown fields on create, update, `/status` and
//! every patch type, under `Strict` (400, nothing written), `Warn` (the
//! default: `Warning` headers) and `Ignore` (accepted; the last value wins).

mod support;

use axum::http::HeaderMap;
use exitplan_apiserver::server::Server;
use serde_json::Value;
use support::raw;

const PODS: &str = "/api/v1/namespaces/default/pods";
const JSON: &[(&str, &str)] = &[("content-type", "application/json")];

/// The `Warning` headers upstream sends for `texts`.
fn warning_headers(texts: &[&str]) -> Vec<String> {
    texts
        .iter()
        .map(|t| format!("299 - \"{}\"", t.replace('"', "\\\"")))
        .collect()
}

fn warnings(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().expect("ascii").to_owned())
        .collect()
}

/// A request under each directive: `Strict` refuses with `strict_message`,
/// `Warn` and the default accept with `texts` as warnings, `Ignore` accepts
/// silently. `reset` runs before each request (to remove what the last
/// one created).
async fn under_each_directive(
    server: &Server,
    (method, uri): (&str, &str),
    headers: &[(&str, &str)],
    body: &str,
    ok: u16,
    strict_message: &str,
    texts: &[&str],
) {
    let sep = if uri.contains('?') { '&' } else { '?' };
    let (code, _, status) = raw(
        server,
        method,
        &format!("{uri}{sep}fieldValidation=Strict"),
        headers,
        body,
    )
    .await;
    assert_eq!(code, 400, "{method} {uri} Strict: {status}");
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(status["message"], strict_message, "{method} {uri}");
    for directive in ["fieldValidation=Warn", "", "fieldValidation=Ignore"] {
        let uri = if directive.is_empty() {
            uri.to_owned()
        } else {
            format!("{uri}{sep}{directive}")
        };
        let (code, headers, answer) = raw(server, method, &uri, headers, body).await;
        assert_eq!(code, ok, "{method} {uri}: {answer}");
        let want = if directive.ends_with("Ignore") {
            Vec::new()
        } else {
            warning_headers(texts)
        };
        assert_eq!(warnings(&headers), want, "{method} {uri}");
        if method == "POST" || (method == "PATCH" && code == 201) {
            let name = answer["metadata"]["name"].as_str().expect("name");
            let (code, _, _) = raw(
                server,
                "DELETE",
                &format!("{PODS}/{name}?gracePeriodSeconds=0"),
                &[],
                "",
            )
            .await;
            assert_eq!(code, 200);
        }
    }
}

/// Upstream's `invalidBodyJSON`, as a Pod.
const INVALID_POD: &str = include_str!("fixtures/invalid_pod.json");

/// The errors upstream reports for [`INVALID_POD`], in order.
fn invalid_pod_errors() -> Vec<&'static str> {
    include_str!("fixtures/invalid_pod.errors")
        .lines()
        .collect()
}

#[tokio::test]
async fn create_reports_repeated_and_unknown_fields() {
    let server = support::server().await;
    let errors = invalid_pod_errors();
    under_each_directive(
        &server,
        ("POST", PODS),
        JSON,
        INVALID_POD,
        201,
        &format!(
            "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: {}",
            errors.join(", ")
        ),
        &errors,
    )
    .await;
    // The last value of a repeated key is the one stored.
    let (code, _, pod) = raw(&server, "POST", PODS, JSON, INVALID_POD).await;
    assert_eq!(code, 201, "{pod}");
    assert_eq!(pod["metadata"]["name"], "p");
    assert_ne!(pod["spec"]["hostNetwork"], Value::Bool(true));
    assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Never");
}

#[tokio::test]
async fn update_and_status_update_report_repeated_and_unknown_fields() {
    let server = support::server().await;
    // The namespace already is what the bodies below leave (the last value of
    // each repeated key): each accepted update is a no-op, so one
    // resourceVersion serves every request.
    let ns = r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fv", "labels": {"app": "b"}}}"#;
    let (code, _, created) = raw(&server, "POST", "/api/v1/namespaces", JSON, ns).await;
    assert_eq!(code, 201);
    let rv = created["metadata"]["resourceVersion"].as_str().expect("rv");
    let body = format!(
        r#"{{"apiVersion": "v1", "kind": "Namespace",
        "metadata": {{"name": "fv", "resourceVersion": "{rv}", "labels": {{"app": "a", "app": "b"}}, "bogus": 1}}}}"#
    );
    let errors = [
        r#"duplicate field "metadata.labels.app""#,
        r#"unknown field "metadata.bogus""#,
    ];
    under_each_directive(
        &server,
        ("PUT", "/api/v1/namespaces/fv"),
        JSON,
        &body,
        200,
        &format!(
            "Namespace in version \"v1\" cannot be handled as a Namespace: strict decoding error: {}",
            errors.join(", ")
        ),
        &errors,
    )
    .await;
    let (_, _, got) = raw(&server, "GET", "/api/v1/namespaces/fv", &[], "").await;
    assert_eq!(got["metadata"]["labels"]["app"], "b");

    // A first status write records its manager; the writes below are no-ops.
    let clean = format!(
        r#"{{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": "fv", "resourceVersion": "{rv}"}},
        "status": {{"phase": "Active"}}}}"#
    );
    let (code, _, written) =
        raw(&server, "PUT", "/api/v1/namespaces/fv/status", JSON, &clean).await;
    assert_eq!(code, 200, "{written}");
    let rv = written["metadata"]["resourceVersion"].as_str().expect("rv");
    let status = format!(
        r#"{{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": "fv", "resourceVersion": "{rv}"}},
        "status": {{"phase": "Terminating", "phase": "Active"}}}}"#
    );
    under_each_directive(
        &server,
        ("PUT", "/api/v1/namespaces/fv/status"),
        JSON,
        &status,
        200,
        "Namespace in version \"v1\" cannot be handled as a Namespace: strict decoding error: duplicate field \"status.phase\"",
        &[r#"duplicate field "status.phase""#],
    )
    .await;
    let (_, _, got) = raw(&server, "GET", "/api/v1/namespaces/fv", &[], "").await;
    assert_eq!(got["status"]["phase"], "Active");
}

#[tokio::test]
async fn patches_report_their_repeated_keys_and_the_unknown_fields() {
    let server = support::server().await;
    let (code, _, _) = raw(&server, "POST", PODS, JSON, &support::pod("p").to_string()).await;
    assert_eq!(code, 201);
    let merge = r#"{"metadata": {"labels": {"x": "1", "x": "2"}, "bogus": 1}}"#;
    let errors = [
        r#"duplicate field "metadata.labels.x""#,
        r#"unknown field "metadata.bogus""#,
    ];
    for content_type in [
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ] {
        for uri in [format!("{PODS}/p"), format!("{PODS}/p/status")] {
            under_each_directive(
                &server,
                ("PATCH", &uri),
                &[("content-type", content_type)],
                merge,
                200,
                &format!("strict decoding error: {}", errors.join(", ")),
                &errors,
            )
            .await;
        }
    }
    let (_, _, pod) = raw(&server, "GET", &format!("{PODS}/p"), &[], "").await;
    assert_eq!(pod["metadata"]["labels"]["x"], "2");
    assert!(pod["metadata"].get("bogus").is_none());

    let json_patch = r#"[
        {"op": "add", "path": "/metadata/labels/y", "value": "1", "foo": "bar"},
        {"op": "add", "path": "/metadata/labels/z", "path": "/metadata/labels/w", "value": "2"},
        {"op": "add", "path": "/metadata/bogus", "value": 1}
    ]"#;
    let errors = [
        r#"json patch unknown field "[0].foo""#,
        r#"json patch duplicate field "[1].path""#,
        r#"unknown field "metadata.bogus""#,
    ];
    under_each_directive(
        &server,
        ("PATCH", &format!("{PODS}/p")),
        &[("content-type", "application/json-patch+json")],
        json_patch,
        200,
        &format!("strict decoding error: {}", errors.join(", ")),
        &errors,
    )
    .await;
    let (_, _, pod) = raw(&server, "GET", &format!("{PODS}/p"), &[], "").await;
    assert_eq!(pod["metadata"]["labels"]["w"], "2");
    assert!(pod["metadata"]["labels"].get("z").is_none());
}

/// Upstream's apply cases: the YAML decoder's words, by line; the last
/// value wins when accepted (the YAML parser alone would refuse the body).
#[tokio::test]
async fn apply_reports_repeated_keys_by_line() {
    let server = support::server().await;
    let apply = [("content-type", "application/apply-patch+yaml")];
    let body = "{\n\"apiVersion\": \"v1\",\n\"kind\": \"Pod\",\n\"metadata\": {\"name\": \"ap\", \"labels\": {\"a\": \"1\"}, \"labels\": {\"a\": \"2\"}},\n\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"a\", \"image\": \"b\"}]}\n}";
    let texts = [
        r#"line 4: key "labels" already set in map"#,
        r#"line 5: key "image" already set in map"#,
    ];
    let strict = "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key \"labels\" already set in map\n  line 5: key \"image\" already set in map";
    // Creating through apply.
    under_each_directive(
        &server,
        ("PATCH", &format!("{PODS}/ap?fieldManager=m")),
        &apply,
        body,
        201,
        strict,
        &texts,
    )
    .await;
    let (code, _, _) = raw(&server, "GET", &format!("{PODS}/ap"), &[], "").await;
    assert_eq!(code, 404, "every apply above was undone");
    // Applying to an existing object.
    let (code, _, pod) = raw(
        &server,
        "PATCH",
        &format!("{PODS}/ap?fieldManager=m&fieldValidation=Ignore"),
        &apply,
        body,
    )
    .await;
    assert_eq!(code, 201, "{pod}");
    assert_eq!(pod["metadata"]["labels"]["a"], "2");
    assert_eq!(pod["spec"]["containers"][0]["image"], "b");
    under_each_directive(
        &server,
        ("PATCH", &format!("{PODS}/ap?fieldManager=m")),
        &apply,
        body,
        200,
        strict,
        &texts,
    )
    .await;
}

/// The raw-body scan stops where serde_json would: a body nested a million
/// levels deep is refused as undecodable, never followed down.
#[tokio::test]
async fn deeply_nested_bodies_are_refused_not_followed() {
    let server = support::server().await;
    let (code, _, _) = raw(&server, "POST", PODS, JSON, &support::pod("p").to_string()).await;
    assert_eq!(code, 201);
    let deep = format!("{{\"a\":1,\"a\":2,\"b\":{}", "[".repeat(1_000_000));
    for content_type in [
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/json-patch+json",
        "application/apply-patch+yaml",
    ] {
        let (code, _, status) = raw(
            &server,
            "PATCH",
            &format!("{PODS}/p?fieldManager=m&fieldValidation=Strict"),
            &[("content-type", content_type)],
            &deep,
        )
        .await;
        assert!(
            (400..500).contains(&code),
            "{content_type}: {code} {status}"
        );
    }
    for (method, uri) in [("POST", PODS.to_owned()), ("PUT", format!("{PODS}/p"))] {
        let (code, _, status) = raw(&server, method, &uri, JSON, &deep).await;
        assert_eq!(code, 400, "{method}: {status}");
    }
}
