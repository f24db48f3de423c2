//! A work queue that reports the `workqueue_*` metrics, and the worker loop
//! (client-go's `processNextWorkItem`): errors → rate-limited requeue,
//! success → forget.

use std::future::Future;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;

use crate::metrics::{QueueLabels, WorkqueueMetrics};
use crate::queue::Queue;

use super::SyncError;

/// A [`Queue`] of `"<ns>/<name>"` keys with its metric series.
#[derive(Clone, Debug)]
pub(super) struct WorkQueue {
    queue: Queue<String>,
    adds: Counter,
    retries: Counter,
    depth: Gauge,
}

impl WorkQueue {
    /// A queue named `name`, reporting into `metrics`.
    pub(super) fn new(name: &str, metrics: &WorkqueueMetrics) -> Self {
        let labels = QueueLabels {
            name: name.to_owned(),
        };
        WorkQueue {
            queue: Queue::new(name),
            adds: metrics.adds.get_or_create_owned(&labels),
            retries: metrics.retries.get_or_create_owned(&labels),
            depth: metrics.depth.get_or_create_owned(&labels),
        }
    }

    fn update_depth(&self) {
        self.depth
            .set(i64::try_from(self.queue.len()).unwrap_or(i64::MAX));
    }

    /// Queues `key` now.
    pub(super) fn add(&self, key: String) {
        self.adds.inc();
        self.queue.add(key);
        self.update_depth();
    }

    /// Queues `key` after `delay`.
    pub(super) fn add_after(&self, key: String, delay: Duration) {
        self.adds.inc();
        self.queue.add_after(key, delay);
        self.update_depth();
    }

    /// Queues `key` after its back-off.
    fn add_rate_limited(&self, key: String) {
        self.adds.inc();
        self.retries.inc();
        self.queue.add_rate_limited(key);
        self.update_depth();
    }

    async fn get(&self) -> Option<String> {
        let key = self.queue.get().await;
        self.update_depth();
        key
    }
}

/// Hands keys of `queue` to `sync` until the queue shuts down.
pub(super) async fn run<F, Fut>(queue: WorkQueue, sync: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), SyncError>>,
{
    while let Some(key) = queue.get().await {
        match sync(key.clone()).await {
            Ok(()) => queue.queue.forget(&key),
            Err(e) => {
                let failures = queue.queue.failures(&key);
                if e.is_conflict() {
                    tracing::debug!(queue = queue.queue.name(), key = %key, failures, error = %e, "sync hit a newer object; retrying");
                } else {
                    tracing::warn!(queue = queue.queue.name(), key = %key, failures, error = %e, "sync failed; retrying");
                }
                queue.add_rate_limited(key.clone());
            }
        }
        queue.queue.done(&key);
    }
}
