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

/// Percent-encodes every byte of `s` but ASCII letters and digits.
fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Upstream's `TestValidateFieldManagerValid`/`Invalid` (apimachinery
/// `meta/v1/validation`) and the Unicode categories `unicode.IsPrint` keeps
/// (letters, marks, numbers, punctuation, symbols, the ASCII space) or
/// rejects (controls, format characters, other spaces, private use,
/// unassigned): one error per rejected character, at its byte position,
/// with the length error first.
#[tokio::test]
async fn field_manager_printability_is_go_unicode_is_print() {
    let server = support::server().await;
    let valid = [
        "filedManager",
        "你好",
        "🍔",
        "a b",
        "e\u{301}",
        "ǅ½€©«»",
        &"m".repeat(128),
    ];
    for (i, manager) in valid.iter().enumerate() {
        let body =
            format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"ok{i}"}}}}"#);
        let (code, _, status) = raw(
            &server,
            "POST",
            &format!("/api/v1/namespaces?fieldManager={}", query_escape(manager)),
            &[],
            &body,
        )
        .await;
        assert_eq!(code, 201, "{manager:?}: {status}");
    }
    let long_bad = format!("{}\u{7}", "a".repeat(128));
    let invalid: &[(&str, &[&str])] = &[
        (
            "field\nmanager",
            &[r#"Invalid value: "field\nmanager": invalid character U+000A (at position 5)"#],
        ),
        (
            "fieldmanager\u{0}",
            &[r#"Invalid value: "fieldmanager\x00": invalid character U+0000 (at position 12)"#],
        ),
        (
            "a\u{a0}b",
            &[r#"Invalid value: "a\u00a0b": invalid character U+00A0 (at position 1)"#],
        ),
        (
            "zero\u{200b}width",
            &[r#"Invalid value: "zero\u200bwidth": invalid character U+200B (at position 4)"#],
        ),
        (
            "\u{feff}bom",
            &[r#"Invalid value: "\ufeffbom": invalid character U+FEFF (at position 0)"#],
        ),
        (
            "p\u{e000}",
            &[r#"Invalid value: "p\ue000": invalid character U+E000 (at position 1)"#],
        ),
        (
            "u\u{378}",
            &[r#"Invalid value: "u\u0378": invalid character U+0378 (at position 1)"#],
        ),
        (
            "t\u{e0001}",
            &[r#"Invalid value: "t\U000e0001": invalid character U+E0001 (at position 1)"#],
        ),
        (
            "two\u{2028}\u{85}",
            &[
                r#"Invalid value: "two\u2028\u0085": invalid character U+2028 (at position 3)"#,
                r#"Invalid value: "two\u2028\u0085": invalid character U+0085 (at position 6)"#,
            ],
        ),
        (
            long_bad.as_str(),
            &[
                "Too long: may not be more than 128 bytes",
                // The value's quoting is built below.
                "",
            ],
        ),
    ];
    for (manager, causes) in invalid {
        let (code, _, status) = raw(
            &server,
            "POST",
            &format!("/api/v1/namespaces?fieldManager={}", query_escape(manager)),
            &[],
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bad"}}"#,
        )
        .await;
        assert_eq!(code, 422, "{manager:?}: {status}");
        let mut want: Vec<String> = causes.iter().map(|c| (*c).to_owned()).collect();
        if want.last().is_some_and(String::is_empty) {
            want.pop();
            want.push(format!(
                r#"Invalid value: "{}\a": invalid character U+0007 (at position 128)"#,
                "a".repeat(128)
            ));
        }
        let got: Vec<String> = status["details"]["causes"]
            .as_array()
            .expect("causes")
            .iter()
            .map(|c| {
                assert_eq!(c["field"], "fieldManager");
                c["message"].as_str().expect("message").to_owned()
            })
            .collect();
        assert_eq!(got, want, "{manager:?}");
        let body: Vec<String> = want.iter().map(|c| format!("fieldManager: {c}")).collect();
        let body = if body.len() == 1 {
            body[0].clone()
        } else {
            format!("[{}]", body.join(", "))
        };
        assert_eq!(
            status["message"],
            format!("CreateOptions.meta.k8s.io \"\" is invalid: {body}"),
            "{manager:?}"
        );
    }
    let (code, _, _) = raw(&server, "GET", "/api/v1/namespaces/bad", &[], "").await;
    assert_eq!(code, 404, "nothing was created");
}

/// The eviction and binding subresources are POSTs through upstream's
/// create handler, which validates their `CreateOptions` (`fieldManager`,
/// `fieldValidation`) before anything else.
#[tokio::test]
async fn subresource_posts_validate_their_create_options() {
    let server = support::server().await;
    let pod = support::pod("p").to_string();
    let (code, _, _) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        &[("content-type", "application/json")],
        &pod,
    )
    .await;
    assert_eq!(code, 201);
    let long = "m".repeat(129);
    let eviction = r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p","namespace":"default"}}"#;
    let binding = r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}"#;
    for (sub, body) in [("eviction", eviction), ("binding", binding)] {
        let uri = format!("/api/v1/namespaces/default/pods/p/{sub}");
        let (code, _, status) = raw(
            &server,
            "POST",
            &format!("{uri}?fieldManager={long}"),
            &[("content-type", "application/json")],
            body,
        )
        .await;
        assert_eq!(code, 422, "{sub}: {status}");
        assert_eq!(
            status["message"],
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes",
            "{sub}"
        );
        assert_eq!(status["details"]["kind"], "CreateOptions");
        let (code, _, status) = raw(
            &server,
            "POST",
            &format!("{uri}?fieldValidation=bogus"),
            &[("content-type", "application/json")],
            body,
        )
        .await;
        assert_eq!(code, 422, "{sub}: {status}");
        assert_eq!(
            status["message"],
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
            "{sub}"
        );
    }
    // Neither request did anything: the pod is still there, unbound.
    let (code, _, pod) = raw(&server, "GET", "/api/v1/namespaces/default/pods/p", &[], "").await;
    assert_eq!(code, 200);
    assert!(pod["spec"].get("nodeName").is_none(), "{pod}");
    assert!(pod["metadata"].get("deletionTimestamp").is_none(), "{pod}");
}

/// `fieldValidation` is one of upstream's write options: an unknown value
/// is a 422 of the options kind (with any fieldManager error).
#[tokio::test]
async fn field_validation_values_are_validated_with_the_write_options() {
    let server = support::server().await;
    let (code, _, status) = raw(
        &server,
        "POST",
        "/api/v1/namespaces?fieldValidation=strict&fieldManager=a%07",
        &[],
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}"#,
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: [fieldManager: Invalid value: \"a\\a\": invalid character U+0007 (at position 1), fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]"
    );
    assert_eq!(
        status["details"]["causes"][1]["reason"],
        "FieldValueNotSupported"
    );
}
