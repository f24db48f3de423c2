//! Shared helpers of the REST tests: an in-memory server under tokio's
//! clock, kube-rs clients on its router, raw requests.

#![allow(dead_code)]

pub mod https;
pub mod webhooks;

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use exitplan_apiserver::clock::TokioClock;
use exitplan_apiserver::registry::{RESOURCES, ResourceDef};
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use kube::api::{ApiResource, DynamicObject};
use tower::ServiceExt;

/// The instant every test server starts at.
pub const START: &str = "2026-11-29T10:00:00Z";

/// A server on an in-memory store whose clock follows tokio time.
pub async fn server() -> Server {
    Server::builder()
        .store(Store::in_memory().expect("store"))
        .clock(Arc::new(TokioClock::starting_at(
            START.parse().expect("time"),
        )))
        .build()
        .await
        .expect("server")
}

/// A kube-rs client talking to `server` in-process.
pub fn client(server: &Server) -> kube::Client {
    kube::Client::new(server.router(), "default")
}

/// The registry entry of a kind.
pub fn def(group: &str, kind: &str) -> &'static ResourceDef {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.kind == kind)
        .expect("served kind")
}

/// kube-rs's description of a served resource.
pub fn api_resource(def: &ResourceDef) -> ApiResource {
    ApiResource {
        group: def.group.to_owned(),
        version: def.version.to_owned(),
        api_version: def.api_version(),
        kind: def.kind.to_owned(),
        plural: def.plural.to_owned(),
    }
}

/// A dynamic API for `def` in `default` (or cluster-wide).
pub fn dynamic(client: &kube::Client, def: &ResourceDef) -> kube::Api<DynamicObject> {
    let ar = api_resource(def);
    if def.namespaced {
        kube::Api::namespaced_with(client.clone(), "default", &ar)
    } else {
        kube::Api::all_with(client.clone(), &ar)
    }
}

/// The API error behind a kube-rs error.
pub fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A request with a JSON body of content type `ct`: status and answer.
pub async fn send(
    server: &Server,
    method: &str,
    uri: &str,
    ct: &str,
    body: &serde_json::Value,
) -> (u16, serde_json::Value) {
    let (code, _, out) = raw(
        server,
        method,
        uri,
        &[("content-type", ct)],
        &body.to_string(),
    )
    .await;
    (code, out)
}

/// A raw request on the router: status, headers and body as JSON (or text).
pub async fn raw(
    server: &Server,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, axum::http::HeaderMap, serde_json::Value) {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = server
        .router()
        .oneshot(req.body(Body::from(body.to_owned())).expect("request"))
        .await
        .expect("response");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .expect("body");
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, headers, value)
}

/// A pod with one container.
pub fn pod(name: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "terminationGracePeriodSeconds": 30}
    })
}

/// Reopens the database at `path` once every handle of the previous server
/// (kube-rs's buffer task included) is gone.
pub async fn reopen(path: &std::path::Path) -> Store {
    for _ in 0..1000 {
        match Store::open(path) {
            Ok(s) => return s,
            Err(_) => tokio::task::yield_now().await,
        }
    }
    panic!("the database stayed locked")
}

/// A kube-rs client on `server`'s router that sends `token`.
pub fn authed_client(server: &Server, token: &'static str) -> kube::Client {
    let header = format!("Bearer {token}");
    let service = tower::ServiceBuilder::new()
        .map_request(move |mut req: axum::http::Request<kube::client::Body>| {
            if let Ok(v) = axum::http::HeaderValue::from_str(&header) {
                req.headers_mut().insert("authorization", v);
            }
            req
        })
        .service(server.router());
    kube::Client::new(service, "default")
}
