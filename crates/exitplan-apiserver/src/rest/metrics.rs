//! The API server's own Prometheus metrics, served on `/metrics` (with the
//! token, as every path but the health checks) under kube-apiserver's
//! names: requests by verb, resource and code, their latency, the watches
//! open, the objects stored per resource, and how long a durable storage
//! commit takes. Metrics of components running next to the server (the
//! controllers of `exitplan up`) are appended by [`Sources`].

use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::registry::ResourceDef;
use crate::storage::{Prefix, Store};

/// kube-apiserver's request latency buckets (seconds).
const REQUEST_BUCKETS: [f64; 21] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0,
];

/// etcd client request latency buckets (seconds), as kube-apiserver's
/// `etcd_request_duration_seconds`.
const COMMIT_BUCKETS: [f64; 15] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0,
];

/// The labels of a request, as upstream's `RequestInfo` reports them.
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`,
    /// `DELETECOLLECTION`.
    pub verb: String,
    /// API group (empty for the core group and non-resource paths).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name (empty for non-resource paths).
    pub resource: String,
    /// Subresource (`status`, `eviction`, …), or empty.
    pub subresource: String,
    /// `resource` (one object), `namespace` (a collection in a namespace),
    /// `cluster` (a cluster-wide collection, or a cluster-scoped object's
    /// collection), or empty for non-resource paths.
    pub scope: String,
    /// `apiserver`.
    pub component: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    verb: String,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: String,
    component: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabel {
    resource: String,
}

/// Renders more metrics into the exposition text, without its `# EOF`.
pub type Source = Arc<dyn Fn(&mut String) + Send + Sync>;

/// Metrics of other components, appended to the server's.
#[derive(Default)]
struct Sources(Mutex<Vec<Source>>);

/// The API server's metrics.
pub struct ApiMetrics {
    registry: Registry,
    requests: Family<CodeLabels, Counter>,
    durations: Family<RequestLabels, Histogram>,
    longrunning: Family<RequestLabels, Gauge>,
    commit: Histogram,
    sources: Sources,
}

impl std::fmt::Debug for ApiMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiMetrics").finish_non_exhaustive()
    }
}

impl Default for ApiMetrics {
    fn default() -> Self {
        ApiMetrics::new()
    }
}

impl ApiMetrics {
    /// Empty metrics, registered under kube-apiserver's names.
    pub fn new() -> Self {
        let requests = Family::<CodeLabels, Counter>::default();
        let durations = Family::<RequestLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(REQUEST_BUCKETS)
        });
        let longrunning = Family::<RequestLabels, Gauge>::default();
        let commit = Histogram::new(COMMIT_BUCKETS);
        let mut registry = Registry::default();
        registry.register(
            "apiserver_request",
            "Counter of apiserver requests broken out for each verb, group, version, resource, scope, component, and HTTP response code.",
            requests.clone(),
        );
        registry.register(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.",
            durations.clone(),
        );
        registry.register(
            "apiserver_longrunning_requests",
            "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component (watches).",
            longrunning.clone(),
        );
        registry.register(
            "exitplan_storage_commit_duration_seconds",
            "Latency in seconds of one durable storage commit (a batch of writes in one fsync'd transaction).",
            commit.clone(),
        );
        ApiMetrics {
            registry,
            requests,
            durations,
            longrunning,
            commit,
            sources: Sources::default(),
        }
    }

    /// The histogram the store observes each commit's duration in.
    pub fn commit_histogram(&self) -> Histogram {
        self.commit.clone()
    }

    /// Counts one answered request and its latency.
    pub fn observe(&self, labels: &RequestLabels, code: u16, seconds: f64) {
        self.requests
            .get_or_create(&CodeLabels {
                verb: labels.verb.clone(),
                group: labels.group.clone(),
                version: labels.version.clone(),
                resource: labels.resource.clone(),
                subresource: labels.subresource.clone(),
                scope: labels.scope.clone(),
                component: labels.component.clone(),
                code: code.to_string(),
            })
            .inc();
        self.durations.get_or_create(labels).observe(seconds);
    }

    /// The gauge of open long-running requests (watches) with `labels`.
    pub fn longrunning(&self, labels: &RequestLabels) -> Gauge {
        self.longrunning.get_or_create(labels).clone()
    }

    /// Appends `source`'s metrics to every scrape.
    pub fn add_source(&self, source: Source) {
        self.sources
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(source);
    }

    /// Every metric in the Prometheus text format: the server's, the
    /// objects stored now (of every resource in `served`, custom ones
    /// included), then each added source's.
    pub fn encode(&self, store: &Store, served: &[&ResourceDef]) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode_registry(&mut out, &self.registry);
        let objects = Family::<ResourceLabel, Gauge>::default();
        let mut seen = Vec::new();
        for def in served {
            if seen.contains(&def.storage) {
                continue;
            }
            seen.push(def.storage);
            let count = store.list(&Prefix::new(def.storage, None)).0.len();
            objects
                .get_or_create(&ResourceLabel {
                    resource: def.storage.to_owned(),
                })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        let mut scrape = Registry::default();
        scrape.register(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            objects,
        );
        let _ = prometheus_client::encoding::text::encode_registry(&mut out, &scrape);
        let sources = self
            .sources
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for source in sources {
            source(&mut out);
        }
        let _ = prometheus_client::encoding::text::encode_eof(&mut out);
        out
    }
}

/// The labels of a request to `path` with `method`, as upstream's
/// `RequestInfo` and `CleanVerb` report them (a GET of a collection is a
/// `LIST`, with `watch` a `WATCH`; a PATCH with an apply body an `APPLY`; a
/// DELETE of a collection a `DELETECOLLECTION`). Paths outside the API
/// (`/version`, `/openapi/…`, discovery) carry only their verb.
pub fn labels_of(
    method: &axum::http::Method,
    path: &str,
    query: Option<&str>,
    headers: &axum::http::HeaderMap,
) -> RequestLabels {
    use axum::http::Method;
    let mut labels = RequestLabels {
        verb: method.as_str().to_owned(),
        component: "apiserver".to_owned(),
        ..RequestLabels::default()
    };
    let Some(super::request::ApiPath::Resource(rp)) = super::request::resolve(path) else {
        return labels;
    };
    let named = rp.name.is_some();
    let watch = super::query::Query::parse(query)
        .flag("watch")
        .unwrap_or(false);
    let apply = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/apply-patch"));
    labels.verb = match *method {
        Method::GET if watch => "WATCH",
        Method::GET if !named => "LIST",
        Method::PATCH if apply => "APPLY",
        Method::DELETE if !named => "DELETECOLLECTION",
        _ => method.as_str(),
    }
    .to_owned();
    labels.scope = if named {
        "resource"
    } else if rp.namespace.is_some() {
        "namespace"
    } else {
        "cluster"
    }
    .to_owned();
    labels.group = rp.group;
    labels.version = rp.version;
    labels.resource = rp.resource;
    labels.subresource = rp.subresource.unwrap_or_default();
    labels
}
