//! `resourceVersion` and `resourceVersionMatch` on get, list, watch and
//! deletecollection, answered as kube-apiserver answers them: the list and
//! watch options are validated first (422), and a resourceVersion that is
//! not a number is refused by the path the read takes upstream — 500 with no
//! reason where the watch cache serves it, 400 `BadRequest` where etcd does.

mod support;

use axum::body::Body;
use axum::http::Request;
use exitplan_apiserver::server::Server;
use serde_json::Value;
use support::raw;
use tower::ServiceExt;

const PODS: &str = "/api/v1/namespaces/default/pods";

/// The error the watch cache passes through for `text`.
fn not_a_number(text: &str, why: &str) -> String {
    format!(
        "resourceVersion: Invalid value: \"{text}\": strconv.ParseUint: parsing \"{text}\": {why}"
    )
}

async fn create_pod(server: &Server, name: &str) -> String {
    let (code, _, body) = raw(
        server,
        "POST",
        PODS,
        &[("content-type", "application/json")],
        &support::pod(name).to_string(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned()
}

/// The status code of a request whose body may never end (a watch).
async fn status_of(server: &Server, uri: &str) -> u16 {
    let resp = server
        .router()
        .oneshot(Request::get(uri).body(Body::empty()).expect("request"))
        .await
        .expect("response");
    resp.status().as_u16()
}

/// One expected refusal: method, URI, code, reason, message.
type Case<'a> = (&'a str, String, u16, &'a str, String);

#[tokio::test]
async fn resource_versions_that_are_not_numbers_are_refused_as_upstream() {
    let server = support::server().await;
    create_pod(&server, "p1").await;
    create_pod(&server, "p2").await;
    let (_, _, page) = raw(&server, "GET", &format!("{PODS}?limit=1"), &[], "").await;
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("continue token")
        .to_owned();
    let current = page["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let invalid_rv = |text: &str| {
        format!(
            "invalid resource version: {}",
            not_a_number(text, "invalid syntax")
        )
    };
    let cases: Vec<Case> = vec![
        // get: served by the watch cache once a resourceVersion is given.
        ("GET", format!("{PODS}/p1?resourceVersion=abc"), 500, "", not_a_number("abc", "invalid syntax")),
        ("GET", format!("{PODS}/p1?resourceVersion=-1"), 500, "", not_a_number("-1", "invalid syntax")),
        ("GET", format!("{PODS}/p1?resourceVersion=%2B1"), 500, "", not_a_number("+1", "invalid syntax")),
        ("GET", format!("{PODS}/p1/status?resourceVersion=abc"), 500, "", not_a_number("abc", "invalid syntax")),
        ("GET", format!("{PODS}/p1?resourceVersion=99999"), 504, "Timeout", format!("Timeout: Too large resource version: 99999, current: {current}")),
        // list from the cache: plain and NotOlderThan.
        ("GET", format!("{PODS}?resourceVersion=abc"), 500, "", not_a_number("abc", "invalid syntax")),
        (
            "GET",
            format!("{PODS}?resourceVersion=18446744073709551616"),
            500,
            "",
            not_a_number("18446744073709551616", "value out of range"),
        ),
        ("GET", format!("{PODS}?resourceVersion=abc&resourceVersionMatch=NotOlderThan"), 500, "", not_a_number("abc", "invalid syntax")),
        ("GET", format!("{PODS}?resourceVersion=abc&resourceVersionMatch=NotOlderThan&limit=1"), 500, "", not_a_number("abc", "invalid syntax")),
        // list delegated to etcd: Exact, and the legacy exact list with a limit.
        ("GET", format!("{PODS}?resourceVersion=abc&resourceVersionMatch=Exact"), 400, "BadRequest", invalid_rv("abc")),
        ("GET", format!("{PODS}?resourceVersion=abc&limit=1"), 400, "BadRequest", invalid_rv("abc")),
        // continue: the token is read first, then a resourceVersion is refused.
        (
            "GET",
            format!("{PODS}?limit=1&continue={token}&resourceVersion=abc"),
            400,
            "BadRequest",
            "specifying resource version is not allowed when using continue".into(),
        ),
        (
            "GET",
            format!("{PODS}?limit=1&continue={token}&resourceVersion=2"),
            400,
            "BadRequest",
            "specifying resource version is not allowed when using continue".into(),
        ),
        // the options are validated before the value is read.
        (
            "GET",
            format!("{PODS}?resourceVersion=abc&resourceVersionMatch=bogus"),
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\"".into(),
        ),
        (
            "GET",
            format!("{PODS}?resourceVersionMatch=Exact"),
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".into(),
        ),
        (
            "GET",
            format!("{PODS}?resourceVersion=5&resourceVersionMatch=NotOlderThan&continue={token}"),
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided".into(),
        ),
        (
            "GET",
            format!("{PODS}?sendInitialEvents=true"),
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list".into(),
        ),
        // watch: served by the watch cache.
        ("GET", format!("{PODS}?watch=1&resourceVersion=abc"), 500, "", not_a_number("abc", "invalid syntax")),
        (
            "GET",
            format!("{PODS}?watch=1&resourceVersionMatch=NotOlderThan"),
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".into(),
        ),
        (
            "GET",
            format!("{PODS}?watch=1&sendInitialEvents=true"),
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan".into(),
        ),
        // deletecollection lists as a list does.
        ("DELETE", format!("{PODS}?resourceVersion=abc"), 500, "", not_a_number("abc", "invalid syntax")),
    ];
    for (method, uri, code, reason, message) in &cases {
        let (got, _, status) = raw(&server, method, uri, &[], "").await;
        assert_eq!(got, *code, "{method} {uri}: {status}");
        assert_eq!(status["kind"], "Status", "{method} {uri}");
        assert_eq!(
            status
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            *reason,
            "{method} {uri}: {status}"
        );
        assert_eq!(status["message"], message.as_str(), "{method} {uri}");
        if *code == 500 {
            // A plain error, not an API status: no details.
            assert!(status.get("details").is_none(), "{method} {uri}: {status}");
        }
    }
    // Nothing was deleted by the refused deletecollection.
    let (_, _, list) = raw(&server, "GET", PODS, &[], "").await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn numeric_resource_versions_are_still_served() {
    let server = support::server().await;
    let first = create_pod(&server, "p1").await;
    create_pod(&server, "p2").await;
    let (_, _, page) = raw(&server, "GET", &format!("{PODS}?limit=1"), &[], "").await;
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("token")
        .to_owned();
    for uri in [
        format!("{PODS}/p1?resourceVersion=0"),
        format!("{PODS}/p1?resourceVersion={first}"),
        format!("{PODS}?resourceVersion=0"),
        format!("{PODS}?resourceVersion=00"),
        format!("{PODS}?resourceVersion={first}&resourceVersionMatch=NotOlderThan"),
        format!("{PODS}?resourceVersion=0&resourceVersionMatch=NotOlderThan"),
        // `continue` with resourceVersion 0 is allowed (etcd3 store).
        format!("{PODS}?limit=1&continue={token}&resourceVersion=0"),
    ] {
        let (code, _, body) = raw(&server, "GET", &uri, &[], "").await;
        assert_eq!(code, 200, "{uri}: {body}");
    }
    for uri in [
        format!("{PODS}?watch=1&resourceVersion=0&timeoutSeconds=1"),
        format!("{PODS}?watch=1&resourceVersion={first}&timeoutSeconds=1"),
        format!(
            "{PODS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
        ),
    ] {
        assert_eq!(status_of(&server, &uri).await, 200, "{uri}");
    }
}

/// A list with `limit` and a resourceVersion but no match is upstream's
/// legacy exact list: the objects as they were at that revision.
#[tokio::test]
async fn a_limited_list_at_a_resource_version_is_exact() {
    let server = support::server().await;
    let first = create_pod(&server, "p1").await;
    create_pod(&server, "p2").await;
    let (code, _, list) = raw(
        &server,
        "GET",
        &format!("{PODS}?limit=10&resourceVersion={first}"),
        &[],
        "",
    )
    .await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["metadata"]["resourceVersion"], first.as_str());
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["p1"]);
    // Without a limit the same resourceVersion means "not older than".
    let (_, _, list) = raw(
        &server,
        "GET",
        &format!("{PODS}?resourceVersion={first}"),
        &[],
        "",
    )
    .await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
}

/// An update's `metadata.resourceVersion` is read as a number by the store
/// (`ObjectResourceVersion`): not a number is its plain error (500, no
/// reason), a number is compared as a number.
#[tokio::test]
async fn update_preconditions_read_the_resource_version_as_a_number() {
    let server = support::server().await;
    let rv = create_pod(&server, "p").await;
    let mut pod = support::pod("p");
    for (text, code, message) in [
        (
            "abc",
            500,
            "strconv.ParseUint: parsing \"abc\": invalid syntax",
        ),
        (
            "-1",
            500,
            "strconv.ParseUint: parsing \"-1\": invalid syntax",
        ),
        (
            "1",
            409,
            "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again",
        ),
    ] {
        pod["metadata"]["resourceVersion"] = text.into();
        let (got, _, status) = raw(
            &server,
            "PUT",
            &format!("{PODS}/p"),
            &[("content-type", "application/json")],
            &pod.to_string(),
        )
        .await;
        assert_eq!(got, code, "{text}: {status}");
        assert_eq!(status["message"], message, "{text}");
        if code == 500 {
            assert!(status.get("reason").is_none(), "{status}");
        }
    }
    let (code, _, status) = raw(
        &server,
        "PATCH",
        &format!("{PODS}/p"),
        &[("content-type", "application/merge-patch+json")],
        r#"{"metadata":{"resourceVersion":"abc"}}"#,
    )
    .await;
    assert_eq!(code, 500, "{status}");
    assert_eq!(
        status["message"],
        "strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
    // Leading zeros are the same number.
    pod["metadata"]["resourceVersion"] = format!("00{rv}").into();
    pod["metadata"]["labels"]["x"] = "y".into();
    let (code, _, status) = raw(
        &server,
        "PUT",
        &format!("{PODS}/p"),
        &[("content-type", "application/json")],
        &pod.to_string(),
    )
    .await;
    assert_eq!(code, 200, "{status}");
}
