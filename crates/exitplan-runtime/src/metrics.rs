//! The controllers' metrics (eviction spec §9), in the Prometheus text format.
//!
//! INTERFACE: `Metrics::new`, `Metrics::encode` and `Metrics::registry` are
//! fixed; the metric families are added by the controllers work item.
//! [`Metrics::workqueue`] holds the `workqueue_*` families every controller's
//! queues share (registered once per registry, labelled by queue `name`).

use std::sync::{Arc, Mutex, OnceLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The metrics registry shared by every component of one process.
#[derive(Clone, Default)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    workqueue: Arc<OnceLock<WorkqueueMetrics>>,
}

/// The label set of the `workqueue_*` metrics: the queue's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct QueueLabels {
    /// The queue's name (client-go's `name` label).
    pub name: String,
}

/// client-go's standard work-queue metrics (a subset), one series per queue.
#[derive(Clone, Debug, Default)]
pub struct WorkqueueMetrics {
    /// `workqueue_adds_total`: requests to add a key (immediate, delayed or
    /// rate-limited; a key already queued is still counted).
    pub adds: Family<QueueLabels, Counter>,
    /// `workqueue_depth`: keys waiting to be handed to a worker (delayed keys
    /// not counted until due), as of the queue's last add or hand-out.
    pub depth: Family<QueueLabels, Gauge>,
    /// `workqueue_retries_total`: rate-limited re-adds after a failed sync.
    pub retries: Family<QueueLabels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// An empty registry.
    pub fn new() -> Self {
        Metrics::default()
    }

    /// Runs `f` with the registry (to register metric families).
    pub fn registry<R>(&self, f: impl FnOnce(&mut Registry) -> R) -> Option<R> {
        self.registry.lock().ok().map(|mut r| f(&mut r))
    }

    /// The shared `workqueue_*` families, registered into this registry on
    /// first use.
    pub fn workqueue(&self) -> WorkqueueMetrics {
        self.workqueue
            .get_or_init(|| {
                let m = WorkqueueMetrics::default();
                self.registry(|r| {
                    r.register(
                        "workqueue_adds",
                        "Total number of adds handled by workqueue",
                        m.adds.clone(),
                    );
                    r.register(
                        "workqueue_depth",
                        "Current depth of workqueue",
                        m.depth.clone(),
                    );
                    r.register(
                        "workqueue_retries",
                        "Total number of retries handled by workqueue",
                        m.retries.clone(),
                    );
                });
                m
            })
            .clone()
    }

    /// Every metric in the Prometheus text format, without the closing
    /// `# EOF`: for a `/metrics` that serves other metrics too (the API
    /// server's, in `exitplan up`).
    pub fn encode_into(&self, out: &mut String) {
        if let Ok(r) = self.registry.lock() {
            // Writing to a String cannot fail.
            let _ = prometheus_client::encoding::text::encode_registry(out, &r);
        }
    }

    /// Every metric in the Prometheus text exposition format (for `/metrics`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Ok(r) = self.registry.lock() {
            // Writing to a String cannot fail.
            let _ = prometheus_client::encoding::text::encode(&mut out, &r);
        }
        out
    }
}
