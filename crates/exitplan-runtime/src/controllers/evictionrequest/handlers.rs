//! Informer indexes and event handlers (§7.1–§7.2): each event asks
//! `exitplan_control::evictionrequest::events::on_*` which keys go to which
//! queue, with the related objects looked up in the target indexes.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};

use exitplan_control::evictionrequest::events;
use exitplan_control::evictionrequest::keys::{
    eviction_request_target_key, eviction_target_key, pod_target_key,
};
use exitplan_control::evictionrequest::{Enqueue, eviction_name_index_key};

use crate::informer::{Change, ObjectKey};

use super::{Controller, INDEX_NAME, INDEX_TARGET};

/// Adds the indexes and handlers to the shared informers.
pub(super) fn register(c: &Arc<Controller>) {
    let informers = &c.ctx.informers;
    informers.evictions.add_index(INDEX_TARGET, |e: &Eviction| {
        eviction_target_key(e).into_iter().collect()
    });
    informers.evictions.add_index(INDEX_NAME, |e: &Eviction| {
        let namespace = e.metadata.namespace.as_deref().unwrap_or_default();
        e.metadata
            .name
            .as_deref()
            .and_then(|name| eviction_name_index_key(namespace, name))
            .into_iter()
            .collect()
    });
    informers
        .eviction_requests
        .add_index(INDEX_TARGET, |r: &EvictionRequest| {
            eviction_request_target_key(r).into_iter().collect()
        });

    // Weak: the informers outlive a stopped controller (no Arc cycle).
    let h = Arc::downgrade(c);
    informers.evictions.on_change(move |change| {
        let Some(h) = h.upgrade() else { return };
        let enqueue = match change {
            Change::Added(e) => events::on_eviction_add(e),
            Change::Updated { old, new } => {
                let requests = h.cached_requests_of(eviction_target_key(new));
                events::on_eviction_update(old, new, &refs(&requests))
            }
            Change::Deleted(e) => {
                h.metrics.forget_eviction(&ObjectKey::of(e.as_ref()));
                h.evictions.forget(&ObjectKey::of(e.as_ref()));
                let requests = h.cached_requests_of(eviction_target_key(e));
                events::on_eviction_delete(e, &refs(&requests))
            }
        };
        h.dispatch(enqueue);
    });

    let h = Arc::downgrade(c);
    informers.eviction_requests.on_change(move |change| {
        let Some(h) = h.upgrade() else { return };
        let enqueue = match change {
            Change::Added(r) => {
                let evictions = h.cached_evictions_of(eviction_request_target_key(r));
                events::on_eviction_request_add(r, &refs(&evictions))
            }
            Change::Updated { old, new } => {
                let evictions = h.cached_evictions_of(eviction_request_target_key(new));
                events::on_eviction_request_update(old, new, &refs(&evictions))
            }
            Change::Deleted(r) => {
                h.metrics.forget_request(&ObjectKey::of(r.as_ref()));
                h.requests.forget(&ObjectKey::of(r.as_ref()));
                let evictions = h.cached_evictions_of(eviction_request_target_key(r));
                events::on_eviction_request_delete(r, &refs(&evictions))
            }
        };
        h.dispatch(enqueue);
    });

    let h = Arc::downgrade(c);
    informers.pods.on_change(move |change| {
        let Some(h) = h.upgrade() else { return };
        let enqueue = match change {
            Change::Added(_) => return,
            Change::Updated { old, new } => {
                let evictions = h.cached_evictions_of(Some(pod_target_key(new)));
                events::on_pod_update(old, new, &refs(&evictions))
            }
            Change::Deleted(p) => {
                h.pod_deleted(pod_target_key(p));
                let evictions = h.cached_evictions_of(Some(pod_target_key(p)));
                events::on_pod_delete(p, &refs(&evictions))
            }
        };
        h.dispatch(enqueue);
    });
}

fn refs<K>(objs: &[Arc<K>]) -> Vec<&K> {
    objs.iter().map(Arc::as_ref).collect()
}

impl Controller {
    /// The cached Evictions indexed under `target`.
    fn cached_evictions_of(&self, target: Option<String>) -> Vec<Arc<Eviction>> {
        target
            .map(|t| self.evictions.informer().by_index(INDEX_TARGET, &t))
            .unwrap_or_default()
    }

    /// The cached EvictionRequests indexed under `target`.
    fn cached_requests_of(&self, target: Option<String>) -> Vec<Arc<EvictionRequest>> {
        target
            .map(|t| self.requests.informer().by_index(INDEX_TARGET, &t))
            .unwrap_or_default()
    }

    /// Adds the keys of `enqueue` to the three queues.
    pub(super) fn dispatch(&self, enqueue: Enqueue) {
        for key in enqueue.eviction_requests {
            self.request_queue.add(key);
        }
        for key in enqueue.evictions {
            self.eviction_queue.add(key);
        }
        for (key, delay) in enqueue.evictions_after {
            self.eviction_queue
                .add_after(key, Duration::try_from(delay).unwrap_or(Duration::ZERO));
        }
        for key in enqueue.refreshes {
            self.refresh_queue.add(key);
        }
    }
}
