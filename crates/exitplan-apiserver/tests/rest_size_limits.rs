//! Size limits, as kube-apiserver backed by etcd applies them: a request
//! body above 3 MiB is a 413; a write whose resulting object is larger than
//! etcd accepts (1.5 MiB) is etcd's `request is too large` (500, no
//! reason), whichever verb produced it; a JSON patch that copies more than
//! 3 MiB is a 422. Nothing refused is stored.

mod support;

use serde_json::{Value, json};
use support::*;

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const JSON: (&str, &str) = ("content-type", "application/json");

/// More than etcd's 1.5 MiB, well under the 3 MiB body limit.
fn oversized() -> String {
    "x".repeat(1_600_000)
}

fn lease(holder: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": holder}
    })
}

fn assert_too_large(what: &str, (code, _, body): (u16, axum::http::HeaderMap, Value)) {
    assert_eq!(code, 500, "{what}: {body}");
    assert_eq!(
        body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure",
            "message": "etcdserver: request is too large",
            "code": 500
        }),
        "{what}"
    );
}

/// The lease as stored: its resourceVersion and holder's length.
async fn stored(server: &exitplan_apiserver::server::Server) -> (String, usize) {
    let (code, _, body) = raw(server, "GET", &format!("{LEASES}/l"), &[], "").await;
    assert_eq!(code, 200, "{body}");
    (
        body["metadata"]["resourceVersion"]
            .as_str()
            .expect("rv")
            .to_owned(),
        body["spec"]["holderIdentity"].as_str().map_or(0, str::len),
    )
}

#[tokio::test(start_paused = true)]
async fn a_create_of_an_oversized_object_is_refused_and_stores_nothing() {
    let server = server().await;
    let body = lease(&oversized()).to_string();
    assert_too_large("create", raw(&server, "POST", LEASES, &[JSON], &body).await);
    let (code, _, _) = raw(&server, "GET", &format!("{LEASES}/l"), &[], "").await;
    assert_eq!(code, 404, "nothing was created");
}

#[tokio::test(start_paused = true)]
async fn every_write_verb_that_would_store_an_oversized_object_is_refused() {
    let server = server().await;
    let (code, _, body) = raw(&server, "POST", LEASES, &[JSON], &lease("me").to_string()).await;
    assert_eq!(code, 201, "{body}");
    let before = stored(&server).await;
    let big = oversized();
    let uri = format!("{LEASES}/l");
    let mut put = lease(&big);
    put["metadata"]["resourceVersion"] = json!(before.0);
    let attempts: Vec<(&str, &str, String)> = vec![
        ("PUT", "application/json", put.to_string()),
        (
            "PATCH",
            "application/merge-patch+json",
            json!({"spec": {"holderIdentity": big}}).to_string(),
        ),
        (
            "PATCH",
            "application/strategic-merge-patch+json",
            json!({"spec": {"holderIdentity": big}}).to_string(),
        ),
        (
            "PATCH",
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/spec/holderIdentity", "value": big}]).to_string(),
        ),
    ];
    for (method, content_type, body) in attempts {
        let answer = raw(
            &server,
            method,
            &uri,
            &[("content-type", content_type)],
            &body,
        )
        .await;
        assert_too_large(&format!("{method} {content_type}"), answer);
        assert_eq!(stored(&server).await, before, "{method} {content_type}");
    }
    let apply = raw(
        &server,
        "PATCH",
        &format!("{uri}?fieldManager=tester&force=true"),
        &[("content-type", "application/apply-patch+yaml")],
        &lease(&big).to_string(),
    )
    .await;
    assert_too_large("apply", apply);
    assert_eq!(stored(&server).await, before, "apply");
}

#[tokio::test(start_paused = true)]
async fn a_status_write_that_would_store_an_oversized_object_is_refused() {
    let server = server().await;
    let pods = "/api/v1/namespaces/default/pods";
    let (code, _, body) = raw(&server, "POST", pods, &[JSON], &pod("p").to_string()).await;
    assert_eq!(code, 201, "{body}");
    let rv = body["metadata"]["resourceVersion"].clone();
    let answer = raw(
        &server,
        "PATCH",
        &format!("{pods}/p/status"),
        &[("content-type", "application/merge-patch+json")],
        &json!({"status": {"message": oversized()}}).to_string(),
    )
    .await;
    assert_too_large("status", answer);
    let (_, _, after) = raw(&server, "GET", &format!("{pods}/p"), &[], "").await;
    assert_eq!(after["metadata"]["resourceVersion"], rv);
    assert_eq!(after["status"]["message"], Value::Null);
}

#[tokio::test(start_paused = true)]
async fn a_small_json_patch_that_copies_without_bound_is_refused() {
    let server = server().await;
    let (code, _, body) = raw(
        &server,
        "POST",
        LEASES,
        &[JSON],
        &lease(&"h".repeat(1024)).to_string(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let before = stored(&server).await;
    // 100 operations, each doubling a list: a few KB that would make 2^100
    // copies of the holder.
    let mut ops = vec![json!({"op": "add", "path": "/spec/x", "value": []})];
    ops.push(json!({"op": "copy", "from": "/spec/holderIdentity", "path": "/spec/x/-"}));
    for _ in 0..100 {
        ops.push(json!({"op": "copy", "from": "/spec/x", "path": "/spec/x/-"}));
    }
    let patch = serde_json::to_string(&ops).expect("patch");
    assert!(patch.len() < 8 * 1024, "{}", patch.len());
    let (code, _, body) = raw(
        &server,
        "PATCH",
        &format!("{LEASES}/l"),
        &[("content-type", "application/json-patch+json")],
        &patch,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(
        body["message"],
        "the server rejected our request due to an error in our request"
    );
    assert_eq!(stored(&server).await, before);
}

#[tokio::test(start_paused = true)]
async fn a_request_body_over_three_mebibytes_is_refused() {
    let server = server().await;
    let body = lease(&"x".repeat(3 * 1024 * 1024)).to_string();
    let (code, _, answer) = raw(&server, "POST", LEASES, &[JSON], &body).await;
    assert_eq!(code, 413, "{answer}");
    assert_eq!(answer["reason"], "RequestEntityTooLarge");
    assert_eq!(
        answer["message"],
        "Request entity too large: limit is 3145728"
    );
    let (code, _, _) = raw(&server, "GET", &format!("{LEASES}/l"), &[], "").await;
    assert_eq!(code, 404);
}

/// `n` labels with 60-character keys: about 67 bytes each in the object,
/// and as many again in the `managedFields` entry that owns them.
fn many_labels(n: usize) -> Value {
    (0..n)
        .map(|i| (format!("key-{i:06}-{}", "x".repeat(49)), json!("v")))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The stored lease `name`: how many labels it has, and whether it has
/// `managedFields`.
async fn labels_and_managed_fields(
    server: &exitplan_apiserver::server::Server,
    name: &str,
) -> (usize, bool) {
    let (code, _, body) = raw(server, "GET", &format!("{LEASES}/{name}"), &[], "").await;
    assert_eq!(code, 200, "{name}: {body}");
    (
        body["metadata"]["labels"]
            .as_object()
            .map_or(0, |l| l.len()),
        body["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|m| !m.is_empty()),
    )
}

/// kube-apiserver's create, update and patch handlers retry a write that
/// etcd refused as too large once more without `metadata.managedFields`
/// (`isTooLargeError`), so ownership bookkeeping alone never fails a
/// write; not for server-side apply, whose ownership is the point; and a
/// write still too large without them fails with etcd's error.
#[tokio::test(start_paused = true)]
async fn a_write_too_large_only_with_its_managed_fields_is_stored_without_them() {
    let server = server().await;
    // About 1.37 MB of labels: under etcd's 1.5 MiB alone, over it with
    // the managedFields entry that records them.
    let n = 20_500;
    let labels = many_labels(n);
    for name in ["put", "merge", "json", "strategic"] {
        let mut small = lease("me");
        small["metadata"]["name"] = json!(name);
        let (code, _, body) = raw(&server, "POST", LEASES, &[JSON], &small.to_string()).await;
        assert_eq!(code, 201, "{body}");
    }
    let with_labels = |name: &str| {
        let mut l = lease("me");
        l["metadata"]["name"] = json!(name);
        l["metadata"]["labels"] = labels.clone();
        l.to_string()
    };
    let (code, _, put) = raw(&server, "GET", &format!("{LEASES}/put"), &[], "").await;
    assert_eq!(code, 200, "{put}");
    let mut put_body: Value = serde_json::from_str(&with_labels("put")).expect("json");
    put_body["metadata"]["resourceVersion"] = put["metadata"]["resourceVersion"].clone();
    let merge = json!({"metadata": {"labels": labels}}).to_string();
    let writes: Vec<(&str, &str, String, &str, String, u16)> = vec![
        (
            "created",
            "POST",
            LEASES.to_owned(),
            "application/json",
            with_labels("created"),
            201,
        ),
        (
            "put",
            "PUT",
            format!("{LEASES}/put"),
            "application/json",
            put_body.to_string(),
            200,
        ),
        (
            "merge",
            "PATCH",
            format!("{LEASES}/merge"),
            "application/merge-patch+json",
            merge.clone(),
            200,
        ),
        (
            "json",
            "PATCH",
            format!("{LEASES}/json"),
            "application/json-patch+json",
            json!([{"op": "add", "path": "/metadata/labels", "value": labels}]).to_string(),
            200,
        ),
        (
            "strategic",
            "PATCH",
            format!("{LEASES}/strategic"),
            "application/strategic-merge-patch+json",
            merge,
            200,
        ),
    ];
    let mut wrong = Vec::new();
    for (name, method, uri, content_type, body, expected) in &writes {
        let (code, _, answer) = raw(
            &server,
            method,
            uri,
            &[("content-type", *content_type)],
            body,
        )
        .await;
        if code != *expected || !answer["metadata"]["managedFields"].is_null() {
            let answer: String = answer.to_string().chars().take(200).collect();
            wrong.push(format!("{method} {name}: {code} {answer}"));
        } else if labels_and_managed_fields(&server, name).await != (n, false) {
            wrong.push(format!(
                "{method} {name}: not stored whole without managedFields"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // Apply keeps its ownership: refused, nothing stored.
    assert_too_large(
        "apply",
        raw(
            &server,
            "PATCH",
            &format!("{LEASES}/applied?fieldManager=test"),
            &[("content-type", "application/apply-patch+yaml")],
            &with_labels("applied"),
        )
        .await,
    );
    let (code, _, _) = raw(&server, "GET", &format!("{LEASES}/applied"), &[], "").await;
    assert_eq!(code, 404, "apply stored nothing");

    // Too large even without managedFields: etcd's error, nothing stored.
    let bigger = json!({"metadata": {"labels": many_labels(24_000)}}).to_string();
    assert_too_large(
        "merge patch too large without managedFields",
        raw(
            &server,
            "PATCH",
            &format!("{LEASES}/merge"),
            &[("content-type", "application/merge-patch+json")],
            &bigger,
        )
        .await,
    );
    assert_eq!(
        labels_and_managed_fields(&server, "merge").await,
        (n, false)
    );
}
