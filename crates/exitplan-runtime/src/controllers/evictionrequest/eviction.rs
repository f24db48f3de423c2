//! `syncEviction` (§7.4): one Eviction — the responder walk, written in one
//! status apply, and the resync the plan asks for.
//!
//! **The 5 s completion grace after a pod deletion.** §7.2 enqueues a deleted
//! pod's Evictions only after 5 s, so the Active responder can still report
//! `completionTime` (→ Completed rather than Interrupted). But other events
//! race that delay: the API server marks a pod (MODIFIED, deletionTimestamp
//! set) right before it removes it, and the pod-update handler enqueues at
//! once; if that sync runs after the cache lost the pod, the pure sync sees
//! the target gone with no deletionTimestamp left to defer on, and interrupts
//! at once. So while the target pod is gone, a sync within 5 s of the watch
//! reporting the deletion is postponed to the end of the grace — decided by
//! the pure `should_defer_completion` on the pod as last seen, with its
//! deletionTimestamp taken as the instant the deletion was observed (the same
//! instant the §7.2 delay counts from). A reported `completionTime` ends the
//! wait at once.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest, EvictionStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use exitplan_api::lifecycle::constants::{
    CONDITION_FAILED, CONDITION_TARGET_EVICTED, GRACEFUL_COMPLETION_DELAY, STATE_ACTIVE,
};
use exitplan_control::evictionrequest::keys::eviction_target_key;
use exitplan_control::evictionrequest::{
    EvictionSyncInput, has_eviction_completed, should_defer_completion, sync_eviction,
};

use super::{Controller, SyncError, apply, object_key};

/// `type=status/reason` of a condition, for logs.
fn condition(status: &EvictionStatus, type_: &str) -> String {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_)
        .map(|c| format!("{}/{}", c.status, c.reason))
        .unwrap_or_default()
}

/// `name=state` of every target responder, for logs.
fn states(status: &EvictionStatus) -> String {
    status
        .target_responders
        .iter()
        .flatten()
        .map(|r| format!("{}={}", r.name, r.state))
        .collect::<Vec<_>>()
        .join(",")
}

impl Controller {
    /// Notes that the pod under `target` was reported deleted now.
    pub(super) fn pod_deleted(&self, target: String) {
        let now = self.ctx.clock.now();
        if let Ok(mut deleted) = self.deleted_pods.lock() {
            deleted.retain(|_, at| now.duration_since(*at) < GRACEFUL_COMPLETION_DELAY);
            deleted.insert(target, now);
        }
    }

    /// How long to postpone a sync of `eviction`, whose target pod is gone,
    /// so its Active responder gets the 5 s grace (see the module doc).
    fn completion_grace(
        &self,
        eviction: &Eviction,
        target: &str,
        now: Timestamp,
    ) -> Option<Duration> {
        if has_eviction_completed(eviction) {
            return None;
        }
        let observed = *self.deleted_pods.lock().ok()?.get(target)?;
        let status = eviction.status.as_ref()?;
        let active = status
            .target_responders
            .iter()
            .flatten()
            .find(|r| r.state == STATE_ACTIVE)?;
        let entry = status
            .responders
            .iter()
            .flatten()
            .find(|r| r.name == active.name);
        let last_seen = Pod {
            metadata: ObjectMeta {
                deletion_timestamp: Some(Time(observed)),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        };
        let wait = should_defer_completion(now, entry, Some(&last_seen))?;
        Duration::try_from(wait).ok()
    }
}

/// One sync of the Eviction at queue key `key`.
pub(super) async fn sync(c: Arc<Controller>, key: String) -> Result<(), SyncError> {
    let Some(okey) = object_key(&key) else {
        tracing::warn!(key = %key, "malformed eviction key; dropped");
        return Ok(());
    };
    let Some(eviction) = c.evictions.get(&okey) else {
        return Ok(());
    };
    let namespace = okey.namespace.as_deref().unwrap_or_default();
    let pod = eviction
        .spec
        .target
        .pod
        .as_ref()
        .and_then(|p| c.pod(namespace, &p.name));
    let target = eviction_target_key(&eviction);
    let now = c.ctx.clock.now();
    let target_uid = eviction.spec.target.pod.as_ref().map(|p| p.uid.as_str());
    let pod_gone = pod
        .as_ref()
        .is_none_or(|p| p.metadata.uid.as_deref() != target_uid);
    if pod_gone
        && let Some(wait) = target
            .as_deref()
            .and_then(|t| c.completion_grace(&eviction, t, now))
    {
        tracing::debug!(eviction = %okey, wait = ?wait, "target pod just deleted; waiting for the responder's completion report");
        c.eviction_queue.add_after(key, wait);
        return Ok(());
    }
    let evictions = c.evictions_of(target.as_deref());
    let requests = c.requests_of(target.as_deref());
    let evictions: Vec<&Eviction> = evictions.iter().map(Arc::as_ref).collect();
    let requests: Vec<&EvictionRequest> = requests.iter().map(Arc::as_ref).collect();
    let plan = sync_eviction(
        &EvictionSyncInput {
            eviction: &eviction,
            pod: pod.as_deref(),
            target_evictions: &evictions,
            target_requests: &requests,
        },
        now,
    );

    if let Some(status) = &plan.status {
        let body = apply::eviction_status_body(&eviction, status)?;
        match apply::eviction_status(&c.ctx.client, namespace, &okey.name, body).await {
            Ok(written) => {
                tracing::info!(
                    eviction = %okey,
                    responders = %states(status),
                    failed = %condition(status, CONDITION_FAILED),
                    target_evicted = %condition(status, CONDITION_TARGET_EVICTED),
                    resource_version = written.metadata.resource_version.as_deref().unwrap_or_default(),
                    "eviction status written"
                );
                c.evictions.record(written);
            }
            Err(e) if e.is_not_found() => {
                c.evictions.forget(&okey);
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
    // Not for an Eviction deleted while the write was in flight: its series
    // were already deleted and must stay so.
    let still_there = c
        .evictions
        .get(&okey)
        .is_some_and(|e| e.metadata.uid == eviction.metadata.uid);
    if let Some(seen) = plan.metrics.as_ref().filter(|_| still_there) {
        c.metrics.observe_eviction(&okey, seen);
    }
    if let Some(after) = plan.requeue_after {
        c.eviction_queue
            .add_after(key, Duration::try_from(after).unwrap_or(Duration::ZERO));
    }
    Ok(())
}
