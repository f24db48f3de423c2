//! The OpenAPI paths over HTTP: which format each `Accept` gets, the
//! `Content-Type` and `Vary` headers, and upstream's body-less 406.

mod support;

use axum::body::Body;
use axum::http::{HeaderMap, Request};
use exitplan_apiserver::discovery::openapi;
use tower::ServiceExt;

/// GET `uri` with `accept` (none if `None`): status, headers, body bytes.
async fn get(uri: &str, accept: Option<&str>) -> (u16, HeaderMap, Vec<u8>) {
    let server = support::server().await;
    let mut req = Request::builder().method("GET").uri(uri);
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    let resp = server
        .router()
        .oneshot(req.body(Body::empty()).expect("request"))
        .await
        .expect("response");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .expect("body")
        .to_vec();
    (status, headers, body)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

const V2_PB: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const V2_PB_OLD: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

#[tokio::test]
async fn openapi_v2_is_served_as_json_or_protobuf() {
    let protobuf = openapi::v2_protobuf().expect("encodes");
    let accepts = [
        V2_PB_OLD.to_owned(),
        V2_PB.to_owned(),
        format!("application/json;q=0.5, {V2_PB}"),
    ];
    for accept in accepts {
        let (status, headers, body) = get("/openapi/v2", Some(&accept)).await;
        assert_eq!(status, 200, "{accept}");
        assert_eq!(header(&headers, "content-type"), V2_PB, "{accept}");
        assert_eq!(header(&headers, "vary"), "Accept");
        assert_eq!(body, protobuf, "{accept}");
    }
    for accept in [None, Some("*/*"), Some("application/json, */*")] {
        let (status, headers, body) = get("/openapi/v2", accept).await;
        assert_eq!(status, 200, "{accept:?}");
        assert_eq!(header(&headers, "content-type"), "application/json");
        let doc: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(doc, openapi::v2());
    }
}

/// Upstream's handlers write a 406 with no body (client-go turns it into
/// "the server was unable to respond with a content type that the client
/// supports").
#[tokio::test]
async fn unserved_media_types_get_a_bodyless_406() {
    for (uri, accept) in [
        ("/openapi/v2", "application/vnd.kubernetes.protobuf"),
        ("/openapi/v2", "text/plain"),
        (
            "/openapi/v3/api/v1",
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
        ),
        ("/openapi/v3/apis/batch/v1", "application/yaml"),
    ] {
        let (status, headers, body) = get(uri, Some(accept)).await;
        assert_eq!(status, 406, "{uri} {accept}");
        assert!(body.is_empty(), "{uri} {accept}: {body:?}");
        assert_eq!(header(&headers, "vary"), "Accept");
    }
}

#[tokio::test]
async fn openapi_v3_documents_are_json() {
    // The index ignores Accept, as upstream's discovery handler does.
    let (status, headers, body) = get("/openapi/v3", Some(V2_PB)).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), "application/json");
    let index: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(index, openapi::v3_index());
    let (status, headers, body) = get("/openapi/v3/apis/batch/v1", Some("application/json")).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), "application/json");
    assert_eq!(header(&headers, "vary"), "Accept");
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(Some(doc), openapi::v3("batch", "v1"));
    let (status, _, _) = get("/openapi/v3/apis/node.k8s.io/v1", None).await;
    assert_eq!(status, 404);
    let (status, _, _) = get("/openapi/v3/apis/batch", None).await;
    assert_eq!(status, 404);
}
