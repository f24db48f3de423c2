//! The identity and admission figures of `exitplan bench apiserver`:
//!
//! * pod creates/s with 16 clients under a ServiceAccount token whose rights
//!   come from a RoleBinding to the `edit` ClusterRole, against the admin
//!   identity's in the same run (issue target: at least 90%): the cost of
//!   authenticating a signed token and authorizing by RBAC on every request;
//! * the latency one validating admission webhook adds to a pod create
//!   (one client, p50 with and without it), the webhook answering after
//!   1 ms over HTTPS (issue target: at most 2 ms added).
//!
//! Everything goes through the HTTP API with kube-rs on the in-process
//! router; the webhook is a real HTTPS server on a loopback port.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use axum::http::HeaderValue;
use axum::http::header::AUTHORIZATION;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use exitplan_apiserver::server::Server;
use exitplan_apiserver::tls::{LocalCa, local_names};

use super::apiserver::{namespace, pod, timed_creates};
use super::measure::percentile;

/// The share of the admin's creates/s a ServiceAccount must reach.
const SA_TARGET: f64 = 0.90;
/// What one webhook answering in 1 ms may add to a create's p50.
const WEBHOOK_TARGET: Duration = Duration::from_millis(2);
/// How long the webhook takes to answer.
const WEBHOOK_DELAY: Duration = Duration::from_millis(1);

/// A client on `server`'s router that presents `token`.
fn client_with_token(server: &Server, token: &str, namespace: &str) -> Result<kube::Client> {
    let value = HeaderValue::from_str(&format!("Bearer {token}"))?;
    let service = tower::ServiceBuilder::new()
        .map_request(move |mut req: axum::http::Request<kube::client::Body>| {
            req.headers_mut().insert(AUTHORIZATION, value.clone());
            req
        })
        .service(server.router());
    Ok(kube::Client::new(service, namespace.to_owned()))
}

/// A ServiceAccount `bench` in `ns` with `edit` there, and a token for it.
async fn service_account_token(admin: &kube::Client, ns: &str) -> Result<String> {
    let sa: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": "bench"}}))?;
    Api::<ServiceAccount>::namespaced(admin.clone(), ns)
        .create(&PostParams::default(), &sa)
        .await?;
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "bench-edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"kind": "ServiceAccount", "name": "bench", "namespace": ns}],
    }))?;
    Api::<RoleBinding>::namespaced(admin.clone(), ns)
        .create(&PostParams::default(), &binding)
        .await
        .context("binding the bench ServiceAccount (does the server serve RBAC?)")?;
    let request: TokenRequest =
        serde_json::from_value(json!({"spec": {"expirationSeconds": 3600}}))?;
    let answer: TokenRequest = Api::<ServiceAccount>::namespaced(admin.clone(), ns)
        .create_subresource("token", "bench", &PostParams::default(), &request)
        .await?;
    answer
        .status
        .and_then(|s| s.token)
        .filter(|t| !t.is_empty())
        .context("TokenRequest answered without a token")
}

/// Pod creates/s (16 clients) as the admin and as a ServiceAccount bound
/// to `edit`, in namespaces of their own; prints both and the ratio.
pub async fn service_account(server: &Server, admin: &kube::Client, total: usize) -> Result<()> {
    namespace(admin, "bench-admin").await?;
    namespace(admin, "bench-sa").await?;
    let token = service_account_token(admin, "bench-sa").await?;
    let sa = client_with_token(server, &token, "bench-sa")?;
    let as_admin = Api::<Pod>::namespaced(admin.clone(), "bench-admin");
    let as_sa = Api::<Pod>::namespaced(sa, "bench-sa");
    let admin_rate = timed_creates(
        "creates as admin          ",
        &as_admin,
        16,
        total,
        |ns, i| pod(ns, &format!("a-{i:05}")),
    )
    .await?;
    let sa_rate = timed_creates("creates as ServiceAccount ", &as_sa, 16, total, |ns, i| {
        pod(ns, &format!("s-{i:05}"))
    })
    .await?;
    let ratio = sa_rate / admin_rate.max(1e-9);
    println!(
        "  ServiceAccount token + RBAC: {:.0}% of the admin's creates/s (target >= {:.0}%: {})",
        ratio * 100.0,
        SA_TARGET * 100.0,
        if ratio >= SA_TARGET { "met" } else { "NOT met" }
    );
    Ok(())
}

/// How long the webhook took to answer each review, as it measured itself.
type Answered = std::sync::Arc<std::sync::Mutex<Vec<Duration>>>;

/// The webhook: answers every AdmissionReview `allowed` after
/// [`WEBHOOK_DELAY`] (a thread sleep, which keeps to the millisecond where
/// tokio's timer rounds up to its next tick), recording its own time.
fn webhook_router(answered: Answered) -> axum::Router {
    axum::Router::new().route(
        "/validate",
        axum::routing::post(move |axum::Json(review): axum::Json<Value>| async move {
            let start = Instant::now();
            let _ = tokio::task::spawn_blocking(|| std::thread::sleep(WEBHOOK_DELAY)).await;
            if let Ok(mut a) = answered.lock() {
                a.push(start.elapsed());
            }
            let uid = review
                .pointer("/request/uid")
                .cloned()
                .unwrap_or(Value::Null);
            axum::Json(json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {"uid": uid, "allowed": true},
            }))
        }),
    )
}

/// Starts the webhook on a loopback port; its URL and CA bundle.
async fn start_webhook(
    answered: Answered,
) -> Result<(String, String, tokio::sync::oneshot::Sender<()>)> {
    let ca = LocalCa::generate(&local_names(None))?;
    let acceptor = tokio_rustls::TlsAcceptor::from(ca.server_config()?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(exitplan_apiserver::serving::serve(
        listener,
        Some(acceptor),
        webhook_router(answered),
        exitplan_apiserver::serving::ConnectionLimits::default(),
        async move {
            let _ = stopped.await;
        },
        || {},
    ));
    Ok((format!("https://{addr}/validate"), ca.ca_pem, stop))
}

/// One client's create latencies (`total` pods named `<prefix>-<i>`).
async fn latencies(api: &Api<Pod>, ns: &str, prefix: &str, total: usize) -> Result<Vec<Duration>> {
    let mut out = Vec::with_capacity(total);
    for i in 0..total {
        let t = Instant::now();
        api.create(
            &PostParams::default(),
            &pod(ns, &format!("{prefix}-{i:05}")),
        )
        .await?;
        out.push(t.elapsed());
    }
    out.sort();
    Ok(out)
}

/// p50 create latency (one client) without and with a validating webhook
/// that answers in 1 ms; prints both and the difference.
pub async fn webhook(admin: &kube::Client, total: usize) -> Result<()> {
    let ns = "bench-webhook";
    namespace(admin, ns).await?;
    let api = Api::<Pod>::namespaced(admin.clone(), ns);
    let without = latencies(&api, ns, "plain", total).await?;
    let answered = Answered::default();
    let (url, ca, stop) = start_webhook(answered.clone()).await?;
    let bundle = exitplan_apiserver::kubeconfig::base64(ca.as_bytes());
    let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "bench"},
        "webhooks": [{
            "name": "bench.exitplan.io",
            "clientConfig": {"url": url, "caBundle": bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "failurePolicy": "Fail",
        }],
    }))?;
    let configs = Api::<ValidatingWebhookConfiguration>::all(admin.clone());
    configs
        .create(&PostParams::default(), &config)
        .await
        .context(
            "creating the webhook configuration (does the server serve admissionregistration?)",
        )?;
    // The server may pick the configuration up a moment later.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let with = latencies(&api, ns, "hooked", total).await;
    configs.delete("bench", &DeleteParams::default()).await?;
    let _ = stop.send(());
    let with = with?;
    let (p50_without, p50_with) = (percentile(&without, 50), percentile(&with, 50));
    let added = p50_with.saturating_sub(p50_without);
    println!(
        "create latency, 1 client: p50 {p50_without:.2?} without a webhook, {p50_with:.2?} with one answering in {WEBHOOK_DELAY:?} (p99 {:.2?})",
        percentile(&with, 99)
    );
    let mut own = answered.lock().map(|a| a.clone()).unwrap_or_default();
    own.sort();
    let verdict = if added <= WEBHOOK_TARGET {
        "met"
    } else {
        "NOT met"
    };
    println!(
        "  webhook cost per admitted request: {added:.2?} p50 (target <= {WEBHOOK_TARGET:?}: {verdict}); the webhook's own answer time p50 {:.2?}",
        percentile(&own, 50)
    );
    Ok(())
}
