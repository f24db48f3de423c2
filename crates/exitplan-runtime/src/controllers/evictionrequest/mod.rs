//! The evictionrequest-controller (eviction spec §7) on kube-rs: the wiring
//! around the pure decisions of `exitplan_control::evictionrequest`.
//!
//! ```text
//!  Pod / EvictionRequest / Eviction informers ── handlers (§7.2, events::on_*)
//!        │                                          │
//!        │ indexes by target "<ns>/pod/<uid>"       ├─▶ eviction-request queue (5 workers) ─▶ request::sync
//!        │                                          ├─▶ eviction queue (5 workers) ─────────▶ eviction::sync
//!        ▼                                          └─▶ meta-refresh queue (1 worker) ──────▶ refresh::sync
//!  fresh::Fresh (cache + our own not-yet-watched writes)
//! ```
//!
//! Files, one job each:
//!
//! * [`handlers`] — informer indexes and event handlers feeding the queues.
//! * [`request`] — `syncEvictionRequest` (§7.3): Eviction creation, mirrored conditions.
//! * [`eviction`] — `syncEviction` (§7.4): the responder walk, status writes, resyncs.
//! * [`refresh`] — `syncEvictionMetaRefresh` (§7.5): labels and owner references.
//! * [`apply`] — the Server-Side Apply bodies and calls (field manager
//!   `evictionrequest-controller`, force, resourceVersion pinned).
//! * [`fresh`] — reading through the controller's own writes.
//! * [`metrics`] — the §9 gauges.
//! * [`worker`] — a metered work queue and the worker loop.
//!
//! **Stale caches.** Every write pins `metadata.resourceVersion` to the
//! version the decision was computed from (an optimistic lock: the server
//! answers 409 if the object moved on, and the key is retried with back-off,
//! by then with the newer object). So a sync that sees an outdated object can
//! never write a regression — not from lagging behind our own write, nor from
//! missing a responder's heartbeat or another writer's change. To keep our
//! own writes from causing those 409s, the object each write returns is kept
//! (see [`fresh`]) and read in preference to an older cached version until
//! the watch delivers it; it also makes a just-created Eviction visible at
//! once, so a second request sync does not create another one. Eviction
//! creation is additionally serialized per pod name within the process (the
//! name covers both one target and the naming of a recreated pod's
//! Evictions, §7.6) and its decision re-taken under that lock; creations for
//! different pods run in parallel.

mod apply;
mod eviction;
mod fresh;
mod handlers;
mod metrics;
mod refresh;
mod request;
mod worker;

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};

use crate::context::{Context, Task};
use crate::informer::ObjectKey;
use crate::keyed_lock::KeyedLock;

use self::fresh::Fresh;
use self::metrics::ControllerMetrics;
use self::worker::WorkQueue;

/// Field manager (and user-agent name) of every write.
pub const FIELD_MANAGER: &str = "evictionrequest-controller";

/// Workers of the EvictionRequest queue (`ConcurrentEvictionRequestSyncs`).
pub const EVICTION_REQUEST_WORKERS: usize = 5;
/// Workers of the Eviction queue.
pub const EVICTION_WORKERS: usize = 5;
/// Workers of the metadata-refresh queue.
pub const REFRESH_WORKERS: usize = 1;

/// Queue names (the `name` label of the `workqueue_*` metrics, §9).
pub const QUEUE_EVICTION_REQUEST: &str = "evictionrequest_controller_eviction_request";
/// See [`QUEUE_EVICTION_REQUEST`].
pub const QUEUE_EVICTION: &str = "evictionrequest_controller_eviction";
/// See [`QUEUE_EVICTION_REQUEST`].
pub const QUEUE_REFRESH: &str = "evictionrequest_controller_eviction_metadata_refresh";

/// Informer index: Evictions / EvictionRequests by target `"<ns>/pod/<uid>"`.
/// Prefixed with the controller's name, as the informers are shared.
pub(crate) const INDEX_TARGET: &str = "evictionrequest-controller/target";
/// Informer index: Evictions by the pod name their name counts for (§7.6
/// naming; `exitplan_control::evictionrequest::eviction_name_index_key`).
pub(crate) const INDEX_NAME: &str = "evictionrequest-controller/name";

/// What the three loops share.
pub(crate) struct Controller {
    ctx: Context,
    pods: crate::informer::Informer<Pod>,
    evictions: Fresh<Eviction>,
    requests: Fresh<EvictionRequest>,
    request_queue: WorkQueue,
    eviction_queue: WorkQueue,
    refresh_queue: WorkQueue,
    metrics: ControllerMetrics,
    /// Held, per `"<ns>/<pod name>"`, while deciding on and creating an
    /// Eviction (see the module doc).
    create_locks: KeyedLock,
    /// When the watch reported each recently deleted pod gone, by target key
    /// `"<ns>/pod/<uid>"` (see [`eviction`]: the 5 s completion grace).
    deleted_pods: std::sync::Mutex<std::collections::HashMap<String, jiff::Timestamp>>,
}

impl Controller {
    /// The pod named `name` in `namespace` (whatever its UID).
    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.pods.get(&ObjectKey::new(Some(namespace), name))
    }
}

/// `"<ns>/<name>"` queue key → object key (`None` for a malformed key).
fn object_key(key: &str) -> Option<ObjectKey> {
    let (ns, name) = key.split_once('/')?;
    Some(ObjectKey::new(Some(ns), name))
}

/// Registers the controller's indexes and handlers on the shared informers
/// and its metrics in `ctx.metrics`; returns its workers.
pub fn register(ctx: &Context) -> Vec<Task> {
    let workqueue = ctx.metrics.workqueue();
    let controller = Arc::new(Controller {
        ctx: ctx.clone(),
        pods: ctx.informers.pods.clone(),
        evictions: Fresh::new(ctx.informers.evictions.clone()),
        requests: Fresh::new(ctx.informers.eviction_requests.clone()),
        request_queue: WorkQueue::new(QUEUE_EVICTION_REQUEST, &workqueue),
        eviction_queue: WorkQueue::new(QUEUE_EVICTION, &workqueue),
        refresh_queue: WorkQueue::new(QUEUE_REFRESH, &workqueue),
        metrics: ControllerMetrics::register(&ctx.metrics),
        create_locks: KeyedLock::default(),
        deleted_pods: std::sync::Mutex::default(),
    });
    handlers::register(&controller);

    let mut tasks: Vec<Task> = Vec::new();
    for _ in 0..EVICTION_REQUEST_WORKERS {
        let c = controller.clone();
        tasks.push(Box::pin(worker::run(
            controller.request_queue.clone(),
            move |key| request::sync(c.clone(), key),
        )));
    }
    for _ in 0..EVICTION_WORKERS {
        let c = controller.clone();
        tasks.push(Box::pin(worker::run(
            controller.eviction_queue.clone(),
            move |key| eviction::sync(c.clone(), key),
        )));
    }
    for _ in 0..REFRESH_WORKERS {
        let c = controller.clone();
        tasks.push(Box::pin(worker::run(
            controller.refresh_queue.clone(),
            move |key| refresh::sync(c.clone(), key),
        )));
    }
    tasks
}

/// Why a sync failed (the key is retried with back-off).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// An API call failed (a 409 here usually means the view was stale).
    #[error("API call failed: {0}")]
    Api(#[from] kube::Error),
    /// An apply body could not be built.
    #[error("could not encode the apply body: {0}")]
    Encode(#[from] serde_json::Error),
}

impl SyncError {
    /// A 409: the object moved on under the pinned resourceVersion (or an
    /// apply conflict); expected while caches catch up.
    fn is_conflict(&self) -> bool {
        matches!(self, SyncError::Api(kube::Error::Api(s)) if s.code == 409)
    }

    /// A 404: the object is gone.
    fn is_not_found(&self) -> bool {
        matches!(self, SyncError::Api(kube::Error::Api(s)) if s.code == 404)
    }
}
