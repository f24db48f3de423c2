//! A real HTTPS admission webhook server for tests, and webhook
//! configurations written straight to the store.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::routing::post;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::{Attrs, Key, Precondition};
use exitplan_apiserver::tls::{LocalCa, local_names};
use exitplan_apiserver::webhook::config::{MUTATING_STORAGE, VALIDATING_STORAGE};
use serde_json::{Value, json};

/// The webhook server: what it received, where it listens, its CA.
pub struct Hooks {
    seen: Arc<Mutex<Vec<Value>>>,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its CA (`caBundle`).
    pub ca: LocalCa,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Hooks {
    /// The URL of behaviour `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}/{path}", self.addr)
    }

    /// The requests received (each with `_hook`: the behaviour).
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().expect("lock").clone()
    }
}

/// The answer of the webhook at `/<behaviour>` to `review`.
async fn answer(
    State(seen): State<Arc<Mutex<Vec<Value>>>>,
    Path(behaviour): Path<String>,
    Json(review): Json<Value>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let request = review["request"].clone();
    let mut recorded = request.clone();
    recorded["_hook"] = behaviour.clone().into();
    seen.lock().expect("lock").push(recorded);
    let uid = request["uid"].clone();
    let reply = |response: Value| {
        Json(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}))
            .into_response()
    };
    match behaviour.as_str() {
        "allow" => reply(json!({"uid": uid, "allowed": true, "warnings": ["looked at it"]})),
        "deny403" => reply(json!({"uid": uid, "allowed": false,
            "status": {"code": 403, "message": "no way", "reason": "Forbidden"}})),
        "deny429" => reply(json!({"uid": uid, "allowed": false,
            "status": {"code": 429, "message": "slow down", "reason": "TooManyRequests"}})),
        "mutate" => {
            // Adds a label (the objects carry labels) and an annotation.
            let patch = json!([
                {"op": "add", "path": "/metadata/labels/mutated", "value": "yes"},
            ]);
            let b64 = k8s_openapi::ByteString(patch.to_string().into_bytes());
            reply(
                json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": b64,
                "auditAnnotations": {"a": "b"}}),
            )
        }
        "slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            reply(json!({"uid": uid, "allowed": true}))
        }
        label if label.starts_with("label-") => {
            let key = label.trim_start_matches("label-");
            let patch =
                json!([{"op": "add", "path": format!("/metadata/labels/{key}"), "value": "yes"}]);
            let b64 = k8s_openapi::ByteString(patch.to_string().into_bytes());
            reply(json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": b64}))
        }
        "garbage" => "this is not json".into_response(),
        "wronguid" => reply(json!({"uid": "other", "allowed": true})),
        _ => (axum::http::StatusCode::NOT_FOUND, "no such hook").into_response(),
    }
}

/// Starts the webhook server over HTTPS, its certificate for the loopback
/// names and `webhook.default.svc`.
pub async fn hooks() -> Hooks {
    let mut names = local_names(None);
    names.push("webhook.default.svc".to_owned());
    let ca = LocalCa::generate(&names).expect("ca");
    let config = ca.server_config().expect("tls");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let router = axum::Router::new()
        .route("/{behaviour}", post(answer))
        .with_state(Arc::clone(&seen));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(exitplan_apiserver::serving::serve(
        listener,
        Some(tokio_rustls::TlsAcceptor::from(config)),
        router,
        exitplan_apiserver::serving::ConnectionLimits::default(),
        async move {
            let _ = stopped.await;
        },
        || {},
    ));
    Hooks {
        seen,
        addr,
        ca,
        _stop: stop,
    }
}

/// One webhook on `configmaps` CREATE, with `extra` fields merged in.
pub fn webhook(name: &str, url: &str, ca: &str, extra: Value) -> Value {
    let mut w = json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": k8s_openapi::ByteString(ca.as_bytes().to_vec())},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 1,
    });
    if let (Some(w), Some(extra)) = (w.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            w.insert(k.clone(), v.clone());
        }
    }
    w
}

/// Stores a webhook configuration (`mutating` or validating).
pub async fn configure(server: &Server, mutating: bool, name: &str, webhooks: Vec<Value>) {
    let (storage, kind) = if mutating {
        (MUTATING_STORAGE, "MutatingWebhookConfiguration")
    } else {
        (VALIDATING_STORAGE, "ValidatingWebhookConfiguration")
    };
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name, "uid": format!("uid-{name}")},
        "webhooks": webhooks,
    });
    server
        .store()
        .put(
            Key::new(storage, "", name),
            config,
            Attrs::default(),
            Precondition::None,
        )
        .await
        .expect("stored");
}
