//! HTTP details as kube-apiserver has them, through the REST router.

mod support;

use std::sync::Arc;

use exitplan_apiserver::clock::TokioClock;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use support::{START, raw};

async fn server_with_token(token: &str) -> Server {
    Server::builder()
        .store(Store::in_memory().expect("store"))
        .clock(Arc::new(TokioClock::starting_at(
            START.parse().expect("time"),
        )))
        .token(token)
        .build()
        .await
        .expect("server")
}

/// Upstream's bearer-token authenticator table (`bearertoken_test.go`): the
/// scheme in any case, the token the second space-separated part.
#[tokio::test]
async fn bearer_scheme_is_read_case_insensitively() {
    let server = server_with_token("token").await;
    let cases: &[(&str, u16)] = &[
        ("Bearer token", 200),
        ("bearer token", 200),
        ("BEARER token", 200),
        ("Bearer token a", 200),
        ("Bearer token a b c", 200),
        ("Bearer token   a", 200),
        ("Bearer", 401),
        ("Bearer ", 401),
        ("bear token", 401),
        ("Bearer: token", 401),
        ("Basic 123", 401),
        ("Bearer 123", 401),
    ];
    for (header, want) in cases {
        let (code, _, body) = raw(
            &server,
            "GET",
            "/api/v1/namespaces/default",
            &[("authorization", header)],
            "",
        )
        .await;
        assert_eq!(code, *want, "{header:?}: {body}");
        if *want == 401 {
            assert_eq!(body["reason"], "Unauthorized", "{header:?}");
        }
    }
    let (code, _, _) = raw(&server, "GET", "/api/v1/namespaces/default", &[], "").await;
    assert_eq!(code, 401);
}

/// A write: method, path, headers, body, its options kind.
type Write<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);

/// `fieldManager` is validated for every write as upstream's
/// `ValidateFieldManager`: at most 128 bytes, printable characters only.
#[tokio::test]
async fn field_manager_is_validated_on_every_write() {
    let server = support::server().await;
    let ns = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fm"}}"#;
    let (code, _, _) = raw(&server, "POST", "/api/v1/namespaces", &[], ns).await;
    assert_eq!(code, 201);
    let long = "m".repeat(129);
    let at_limit = "m".repeat(128);
    let json = [("content-type", "application/json")];
    let merge = [("content-type", "application/merge-patch+json")];
    let apply = [("content-type", "application/apply-patch+yaml")];
    let writes: &[Write] = &[
        (
            "POST",
            "/api/v1/namespaces",
            &json,
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}}"#,
            "CreateOptions",
        ),
        ("PUT", "/api/v1/namespaces/fm", &json, ns, "UpdateOptions"),
        (
            "PATCH",
            "/api/v1/namespaces/fm",
            &merge,
            "{}",
            "PatchOptions",
        ),
        ("PATCH", "/api/v1/namespaces/fm", &apply, ns, "PatchOptions"),
    ];
    for (method, path, headers, body, kind) in writes {
        let (code, _, status) = raw(
            &server,
            method,
            &format!("{path}?fieldManager={long}"),
            headers,
            body,
        )
        .await;
        assert_eq!(code, 422, "{method} {path}: {status}");
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(
            status["message"],
            format!(
                "{kind}.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
            )
        );
        assert_eq!(status["details"]["kind"], *kind);
        assert_eq!(status["details"]["group"], "meta.k8s.io");
        assert_eq!(
            status["details"]["causes"][0]["reason"],
            "FieldValueTooLong"
        );
        assert_eq!(status["details"]["causes"][0]["field"], "fieldManager");

        let (code, _, status) = raw(
            &server,
            method,
            &format!("{path}?fieldManager=a%07b"),
            headers,
            body,
        )
        .await;
        assert_eq!(code, 422, "{method} {path}: {status}");
        assert_eq!(
            status["message"],
            format!(
                "{kind}.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"a\\ab\": invalid character U+0007 (at position 1)"
            )
        );
    }
    // 128 bytes is accepted.
    let (code, _, status) = raw(
        &server,
        "PATCH",
        &format!("/api/v1/namespaces/fm?fieldManager={at_limit}"),
        &merge,
        "{}",
    )
    .await;
    assert_eq!(code, 200, "{status}");
}
