//! Protobuf on the REST API, as client-go's typed clients speak it:
//! protobuf bodies on create/update, protobuf answers (objects, lists,
//! `Status` errors, watch frames) when the `Accept` header prefers them,
//! JSON when an object has no protobuf form or a Table is asked for.

mod support;

use axum::body::Body;
use axum::http::Request;
use exitplan_apiserver::protobuf::wire::{Reader, Wire};
use exitplan_apiserver::protobuf::{TypeMeta, decode_object, encode_object};
use exitplan_apiserver::server::Server;
use serde_json::{Value, json};
use support::*;
use tower::ServiceExt;

const PB: &str = "application/vnd.kubernetes.protobuf";
const PB_ACCEPT: &str = "application/vnd.kubernetes.protobuf, */*";

/// A request with a byte body: status, Content-Type and body bytes.
async fn call(
    server: &Server,
    method: &str,
    uri: &str,
    content_type: Option<&str>,
    accept: &str,
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("accept", accept);
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let resp = server
        .router()
        .oneshot(req.body(Body::from(body)).expect("request"))
        .await
        .expect("response");
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, ct, bytes.to_vec())
}

fn decode(bytes: &[u8]) -> Value {
    decode_object(bytes, &TypeMeta::default())
        .expect("a protobuf object")
        .1
}

#[tokio::test(start_paused = true)]
async fn create_get_and_list_in_protobuf() {
    let server = server().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "labels": {"app": "web"}},
        "data": {"mode": "fast"}, "binaryData": {"blob": "AP9hYg=="}});
    let body = encode_object(&cm).expect("encodes");
    let uri = "/api/v1/namespaces/default/configmaps";
    let (code, ct, bytes) = call(&server, "POST", uri, Some(PB), PB_ACCEPT, body).await;
    assert_eq!((code, ct.as_str()), (201, PB));
    let created = decode(&bytes);
    assert_eq!(created["metadata"]["name"], "settings");
    assert_eq!(created["binaryData"]["blob"], "AP9hYg==");
    assert!(created["metadata"]["uid"].is_string());

    // Stored as JSON: a JSON client reads it unchanged.
    let (code, _, json) = raw(&server, "GET", &format!("{uri}/settings"), &[], "").await;
    assert_eq!(code, 200);
    assert_eq!(json["data"]["mode"], "fast");
    assert_eq!(json["binaryData"]["blob"], "AP9hYg==");

    let (code, ct, bytes) =
        call(&server, "GET", &format!("{uri}/settings"), None, PB, vec![]).await;
    assert_eq!((code, ct.as_str()), (200, PB));
    assert_eq!(decode(&bytes), json);

    let (code, ct, bytes) = call(&server, "GET", uri, None, PB_ACCEPT, vec![]).await;
    assert_eq!((code, ct.as_str()), (200, PB));
    let list = decode(&bytes);
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"][0]["metadata"]["name"], "settings");
    assert!(list["metadata"]["resourceVersion"].is_string());

    // Update in protobuf.
    let mut changed = json.clone();
    changed["data"]["mode"] = json!("slow");
    let body = encode_object(&changed).expect("encodes");
    let (code, _, bytes) = call(
        &server,
        "PUT",
        &format!("{uri}/settings"),
        Some(PB),
        PB_ACCEPT,
        body,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(decode(&bytes)["data"]["mode"], "slow");

    // kubectl get's Table request stays JSON.
    let (code, ct, _) = call(
        &server,
        "GET",
        uri,
        None,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        vec![],
    )
    .await;
    assert_eq!((code, ct.as_str()), (200, "application/json"));
}

#[tokio::test(start_paused = true)]
async fn errors_are_protobuf_statuses() {
    let server = server().await;
    let uri = "/api/v1/namespaces/default/pods";
    let (code, ct, bytes) = call(
        &server,
        "GET",
        &format!("{uri}/nope"),
        None,
        PB_ACCEPT,
        vec![],
    )
    .await;
    assert_eq!((code, ct.as_str()), (404, PB));
    let status = decode(&bytes);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 404);
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["message"], "pods \"nope\" not found");

    let (code, _, bytes) = call(&server, "POST", uri, Some(PB), PB_ACCEPT, b"nope".to_vec()).await;
    assert_eq!(code, 400);
    let status = decode(&bytes);
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(
        status["message"],
        "the object provided is unrecognized (must be of type Pod): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (6e6f7065)"
    );

    // A body of another kind: the JSON path's words.
    let cm =
        encode_object(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}))
            .expect("encodes");
    let (code, _, bytes) = call(&server, "POST", uri, Some(PB), PB_ACCEPT, cm).await;
    assert_eq!(code, 400);
    assert_eq!(
        decode(&bytes)["message"],
        "the kind in the data (ConfigMap) does not match the expected kind (Pod)"
    );
    let (code, _, json) = raw(&server, "GET", uri, &[], "").await;
    assert_eq!(
        (code, json["items"].as_array().map(Vec::len)),
        (200, Some(0)),
        "nothing stored"
    );
}

#[tokio::test(start_paused = true)]
async fn objects_without_a_protobuf_form_are_answered_as_json() {
    let server = server().await;
    let mut p = pod("responder");
    p["spec"]["evictionResponders"] =
        json!([{"name": "backup.acme.io/snapshot", "priority": 15000}]);
    let (code, _, _) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        &[("content-type", "application/json")],
        &p.to_string(),
    )
    .await;
    assert_eq!(code, 201);
    let (code, ct, bytes) = call(
        &server,
        "GET",
        "/api/v1/namespaces/default/pods/responder",
        None,
        PB_ACCEPT,
        vec![],
    )
    .await;
    assert_eq!((code, ct.as_str()), (200, "application/json"));
    let json: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(json["spec"]["evictionResponders"][0]["priority"], 15000);
}

/// Reads one length-prefixed watch frame: the event type and object.
fn frame(bytes: &[u8]) -> (String, Value, usize) {
    let len = u32::from_be_bytes(bytes[..4].try_into().expect("length")) as usize;
    let mut r = Reader::new(&bytes[4..4 + len]);
    let (mut ty, mut object) = (String::new(), Value::Null);
    while let Some((n, w)) = r.field().expect("a WatchEvent") {
        match (n, w) {
            (1, Wire::Bytes(b)) => ty = String::from_utf8_lossy(b).into_owned(),
            (2, Wire::Bytes(ext)) => {
                let mut r = Reader::new(ext);
                if let Some((1, Wire::Bytes(raw))) = r.field().expect("a RawExtension") {
                    object = decode(raw);
                }
            }
            _ => {}
        }
    }
    (ty, object, 4 + len)
}

#[tokio::test(start_paused = true)]
async fn watch_streams_length_prefixed_watch_events() {
    let server = server().await;
    let uri = "/api/v1/namespaces/default/pods";
    let body = encode_object(&pod("p0")).expect("encodes");
    let (code, _, _) = call(&server, "POST", uri, Some(PB), PB_ACCEPT, body).await;
    assert_eq!(code, 201);
    let (code, ct, bytes) = call(
        &server,
        "GET",
        &format!("{uri}?watch=1&timeoutSeconds=1"),
        None,
        PB_ACCEPT,
        vec![],
    )
    .await;
    assert_eq!(
        (code, ct.as_str()),
        (200, "application/vnd.kubernetes.protobuf;stream=watch")
    );
    let (ty, object, used) = frame(&bytes);
    assert_eq!(ty, "ADDED");
    assert_eq!(object["kind"], "Pod");
    assert_eq!(object["metadata"]["name"], "p0");
    assert_eq!(used, bytes.len(), "one event, then the timeout");
}

/// client-go's typed Delete and Evict send their options in protobuf.
#[tokio::test(start_paused = true)]
async fn delete_options_and_evictions_in_protobuf() {
    let server = server().await;
    let uri = "/api/v1/namespaces/default/pods";
    for name in ["p0", "p1"] {
        let body = encode_object(&pod(name)).expect("encodes");
        let (code, _, _) = call(&server, "POST", uri, Some(PB), PB_ACCEPT, body).await;
        assert_eq!(code, 201);
    }
    let options = encode_object(
        &json!({"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions",
        "gracePeriodSeconds": 0}),
    )
    .expect("encodes");
    let (code, _, bytes) = call(
        &server,
        "DELETE",
        &format!("{uri}/p0"),
        Some(PB),
        PB_ACCEPT,
        options,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(decode(&bytes)["metadata"]["name"], "p0");
    let (code, _, _) = raw(&server, "GET", &format!("{uri}/p0"), &[], "").await;
    assert_eq!(code, 404, "grace 0: gone at once");

    let eviction = encode_object(&json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "p1", "namespace": "default"}}))
    .expect("encodes");
    let (code, _, bytes) = call(
        &server,
        "POST",
        &format!("{uri}/p1/eviction"),
        Some(PB),
        PB_ACCEPT,
        eviction,
    )
    .await;
    assert_eq!(code, 201);
    let status = decode(&bytes);
    assert_eq!(
        (status["kind"].as_str(), status["status"].as_str()),
        (Some("Status"), Some("Success"))
    );
}
