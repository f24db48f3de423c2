//! The controllers' metrics (eviction spec §9), in the Prometheus text format.
//!
//! INTERFACE: `Metrics::new`, `Metrics::encode` and `Metrics::registry` are
//! fixed; the metric families are added by the controllers work item.

use std::sync::{Arc, Mutex};

use prometheus_client::registry::Registry;

/// The metrics registry shared by every component of one process.
#[derive(Clone, Default)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
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
