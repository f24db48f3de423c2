//! The custom-resource figures of `exitplan bench apiserver`: a namespaced
//! CustomResourceDefinition whose structural schema carries two
//! `x-kubernetes-validations` CEL rules is created and awaited until
//! `Established`; then custom resources are created exactly as pods are
//! (1 and 16 clients, [`super::apiserver::timed_creates`]) and their rate is
//! set against the pods' of the same run (issue target: at least 70%).
//!
//! Everything goes through the HTTP API with kube-rs, so a server that does
//! not serve CRDs makes the benchmark stop with a message, not a panic.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use super::apiserver::timed_creates;

const GROUP: &str = "bench.exitplan.io";
const PLURAL: &str = "widgets";
const CRD_NAME: &str = "widgets.bench.exitplan.io";
/// The share of pod creates/s custom resources must reach (issue 13).
const TARGET: f64 = 0.70;
/// How long the CRD may take to become `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// The pod creates/s of the same run, to compare with.
#[derive(Clone, Copy, Debug)]
pub struct PodRates {
    /// Pod creates/s with one client.
    pub one: f64,
    /// Pod creates/s with 16 clients.
    pub sixteen: f64,
}

/// The CRD: namespaced `Widget`, a structural schema with a list-map, a
/// string map and two CEL rules on `spec` (a comparison and a `size()`).
fn crd() -> Result<CustomResourceDefinition> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": spec_schema(),
                        "status": {"type": "object", "properties": {
                            "readyReplicas": {"type": "integer"},
                        }},
                    },
                }},
            }],
        },
    }))?)
}

/// `spec`: a list-map, a string map and the two CEL rules (a comparison and
/// a `size()`).
fn spec_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["replicas", "maxReplicas", "image"],
        "x-kubernetes-validations": [
            {"rule": "self.replicas <= self.maxReplicas",
             "message": "replicas must not exceed maxReplicas"},
            {"rule": "size(self.image) <= 200",
             "message": "image must be at most 200 characters"},
        ],
        "properties": {
            "replicas": {"type": "integer", "minimum": 0},
            "maxReplicas": {"type": "integer", "minimum": 0, "maximum": 1000},
            "image": {"type": "string", "maxLength": 253},
            "queue": {"type": "string", "maxLength": 253},
            "paused": {"type": "boolean"},
            "args": {"type": "array", "maxItems": 32,
                     "items": {"type": "string", "maxLength": 256}},
            "env": {
                "type": "array", "maxItems": 64,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string", "maxLength": 128},
                    "value": {"type": "string", "maxLength": 1024},
                }},
            },
            "resources": {"type": "object", "maxProperties": 16,
                          "additionalProperties": {"type": "string", "maxLength": 64}},
        },
    })
}

/// A Widget of about 1 KB of JSON (`replicas` above `maxReplicas` when
/// `invalid`, which the first CEL rule refuses).
fn widget_json(namespace: &str, name: &str, invalid: bool) -> serde_json::Value {
    json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
        "metadata": {
            "name": name, "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "bench", "app.kubernetes.io/part-of": "bench",
                       "batch.kubernetes.io/controller-uid": "1f0e4a52-5c1b-4d2c-9a57-2f3b7c9d8e61"},
            "annotations": {"kubectl.kubernetes.io/default-container": "main"},
        },
        "spec": {
            "replicas": if invalid { 20 } else { 3 }, "maxReplicas": 10,
            "image": "registry.example.com/team/worker:1.42.7",
            "queue": "amqp://queue.default.svc:5672", "paused": false,
            "args": ["--queue=jobs", "--concurrency=4"],
            "env": [{"name": "QUEUE_URL", "value": "amqp://queue.default.svc:5672"},
                    {"name": "LOG_LEVEL", "value": "info"}],
            "resources": {"cpu": "500m", "memory": "512Mi"},
        },
    })
}

fn widget(namespace: &str, i: usize) -> DynamicObject {
    // The literal is a valid object; a failure here is a bug in this file.
    serde_json::from_value(widget_json(namespace, &format!("widget-{i:05}"), false))
        .unwrap_or_else(|_| DynamicObject::new("", &resource()))
}

fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, "v1", "Widget"), PLURAL)
}

fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// A failed request as a benchmark error that says what is missing.
fn not_served(what: &str, e: kube::Error) -> anyhow::Error {
    match &e {
        kube::Error::Api(status) if status.code == 404 => anyhow::anyhow!(
            "{what}: 404 Not Found: this server does not serve it (CustomResourceDefinition \
             serving is required for the custom-resource figures)"
        ),
        _ => anyhow::Error::from(e).context(what.to_owned()),
    }
}

/// Creates the CRD and waits until it is `Established`; prints how long that took.
pub async fn install(client: &kube::Client) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let start = Instant::now();
    crds.create(&PostParams::default(), &crd()?)
        .await
        .map_err(|e| {
            not_served(
                "creating CustomResourceDefinition widgets.bench.exitplan.io",
                e,
            )
        })?;
    loop {
        let current = crds.get(CRD_NAME).await.map_err(|e| {
            not_served(
                "reading CustomResourceDefinition widgets.bench.exitplan.io",
                e,
            )
        })?;
        if established(&current) {
            break;
        }
        if start.elapsed() > ESTABLISH_TIMEOUT {
            bail!(
                "CustomResourceDefinition {CRD_NAME} not Established after {ESTABLISH_TIMEOUT:?} (conditions: {:?})",
                current
                    .status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "custom resources: CRD {CRD_NAME} (namespaced, structural schema, 2 CEL rules) Established in {:.1?}",
        start.elapsed()
    );
    Ok(())
}

/// Whether the server refuses a Widget breaking the first CEL rule (the
/// figures would not measure CEL validation otherwise).
async fn cel_enforced(client: &kube::Client, namespace: &str) -> Result<String> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource());
    let invalid: DynamicObject =
        serde_json::from_value(widget_json(namespace, "widget-invalid", true))?;
    Ok(match api.create(&PostParams::default(), &invalid).await {
        Err(kube::Error::Api(s)) if s.code == 422 => {
            format!("yes (a Widget with replicas > maxReplicas is refused: {})", s.message)
        }
        Err(kube::Error::Api(s)) if s.code == 404 => {
            bail!(
                "creating a Widget: 404 Not Found: the CRD is Established but its custom resources are not served"
            )
        }
        Err(e) => bail!("creating an invalid Widget: {e}"),
        Ok(_) => "NO: a Widget with replicas > maxReplicas was stored (the figures below do not include CEL)".to_owned(),
    })
}

/// CR creates/s with 1 client in `one_ns` and 16 clients in `many_ns` (as
/// many as the pods), printed next to the ratio to `pods` and whether the
/// target is met.
pub async fn creates(
    client: &kube::Client,
    one_ns: &str,
    many_ns: &str,
    total: usize,
    pods: PodRates,
) -> Result<()> {
    println!(
        "  CEL rules enforced: {}",
        cel_enforced(client, one_ns).await?
    );
    let one_api: Api<DynamicObject> = Api::namespaced_with(client.clone(), one_ns, &resource());
    let one = timed_creates("CR creates", &one_api, 1, 1_000, widget)
        .await
        .map_err(|e| anyhow::anyhow!("custom resource creates: {e:#}"))?;
    let many_api: Api<DynamicObject> = Api::namespaced_with(client.clone(), many_ns, &resource());
    let sixteen = timed_creates("CR creates", &many_api, 16, total, widget)
        .await
        .map_err(|e| anyhow::anyhow!("custom resource creates: {e:#}"))?;
    let verdict = |ratio: f64| {
        let met = if ratio >= TARGET { "met" } else { "NOT met" };
        format!("{:.0}% ({met})", ratio * 100.0)
    };
    println!(
        "  CR vs pod creates/s (target >= {:.0}% of pods): 1 client {}, 16 clients {}",
        TARGET * 100.0,
        verdict(one / pods.one.max(f64::MIN_POSITIVE)),
        verdict(sixteen / pods.sixteen.max(f64::MIN_POSITIVE)),
    );
    Ok(())
}
