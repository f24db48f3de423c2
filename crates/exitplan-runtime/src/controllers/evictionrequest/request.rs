//! `syncEvictionRequest` (§7.3): one EvictionRequest — create the target's
//! Eviction when needed, then write the mirrored conditions.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};

use exitplan_control::evictionrequest::keys::{eviction_request_target_key, eviction_target_key};
use exitplan_control::evictionrequest::{
    EvictionRequestSyncInput, EvictionRequestSyncPlan, eviction_name_index_key, name_index_keys,
    sync_eviction_request,
};

use super::{Controller, INDEX_NAME, INDEX_TARGET, SyncError, apply, object_key};
use crate::informer::ObjectKey;

impl Controller {
    /// The Evictions of `target` (freshest versions).
    pub(super) fn evictions_of(&self, target: Option<&str>) -> Vec<Arc<Eviction>> {
        target
            .map(|t| {
                self.evictions.by_index(INDEX_TARGET, t, |e| {
                    eviction_target_key(e).as_deref() == Some(t)
                })
            })
            .unwrap_or_default()
    }

    /// The EvictionRequests of `target` (freshest versions).
    pub(super) fn requests_of(&self, target: Option<&str>) -> Vec<Arc<EvictionRequest>> {
        target
            .map(|t| {
                self.requests.by_index(INDEX_TARGET, t, |r| {
                    eviction_request_target_key(r).as_deref() == Some(t)
                })
            })
            .unwrap_or_default()
    }

    /// The request sync's decision for `request` at `now`, from the current view.
    ///
    /// The names of the namespace's Evictions only choose the name of an
    /// Eviction to create (`new_eviction_name`); whether one is created and
    /// the status do not depend on them. So without `with_names` they are
    /// left out (an empty list: the plan is the same but for the new
    /// Eviction's name); the creation itself re-plans with them, under the
    /// lock — only the names that can count for this pod, from the name
    /// index (`name_index_keys`), not every Eviction of the namespace.
    fn plan_request(
        &self,
        request: &EvictionRequest,
        now: Timestamp,
        with_names: bool,
    ) -> EvictionRequestSyncPlan {
        let namespace = request.metadata.namespace.as_deref().unwrap_or_default();
        let pod = request
            .spec
            .target
            .pod
            .as_ref()
            .and_then(|p| self.pod(namespace, &p.name));
        let target = eviction_request_target_key(request);
        let evictions = self.evictions_of(target.as_deref());
        let requests = self.requests_of(target.as_deref());
        let pod_name = request.spec.target.pod.as_ref().map(|p| p.name.as_str());
        let in_namespace: Vec<Arc<Eviction>> = match pod_name.filter(|_| with_names) {
            Some(pod_name) => name_index_keys(namespace, pod_name)
                .iter()
                .flat_map(|key| {
                    self.evictions.by_index(INDEX_NAME, key, |e| {
                        let ns = e.metadata.namespace.as_deref().unwrap_or_default();
                        e.metadata
                            .name
                            .as_deref()
                            .and_then(|n| eviction_name_index_key(ns, n))
                            .as_ref()
                            == Some(key)
                    })
                })
                .collect(),
            None => Vec::new(),
        };
        let evictions: Vec<&Eviction> = evictions.iter().map(Arc::as_ref).collect();
        let requests: Vec<&EvictionRequest> = requests.iter().map(Arc::as_ref).collect();
        let names: Vec<&str> = in_namespace
            .iter()
            .filter_map(|e| e.metadata.name.as_deref())
            .collect();
        sync_eviction_request(
            &EvictionRequestSyncInput {
                request,
                pod: pod.as_deref(),
                target_evictions: &evictions,
                target_requests: &requests,
                namespace_eviction_names: &names,
            },
            now,
        )
    }
}

/// One sync of the EvictionRequest at queue key `key`.
pub(super) async fn sync(c: Arc<Controller>, key: String) -> Result<(), SyncError> {
    let Some(okey) = object_key(&key) else {
        tracing::warn!(key = %key, "malformed eviction-request key; dropped");
        return Ok(());
    };
    let Some(mut request) = c.requests.get(&okey) else {
        return Ok(());
    };
    // §9: recorded for every synced request, before the "completed" skip.
    c.metrics.observe_request(&okey, &request);
    let mut plan = c.plan_request(&request, c.ctx.clock.now(), false);

    if plan.create_eviction.is_some() {
        // Another worker may be creating the same target's Eviction (or one
        // for a pod of the same name, which the new name must not collide
        // with): decide again under the lock, on a view that includes it.
        let pod_name = request.spec.target.pod.as_ref().map(|p| p.name.as_str());
        let lock_key = format!(
            "{}/{}",
            okey.namespace.as_deref().unwrap_or_default(),
            pod_name.unwrap_or_default()
        );
        let _creating = c.create_locks.lock(&lock_key).await;
        let Some(current) = c.requests.get(&okey) else {
            return Ok(());
        };
        request = current;
        plan = c.plan_request(&request, c.ctx.clock.now(), true);
        if let Some(new) = plan.create_eviction.take() {
            create(&c, &okey, &new).await?;
        }
    }

    if let Some(status) = &plan.status {
        let namespace = okey.namespace.as_deref().unwrap_or_default();
        let body = apply::request_status_body(&request, status)?;
        match apply::request_status(&c.ctx.client, namespace, &okey.name, body).await {
            Ok(written) => {
                tracing::debug!(
                    eviction_request = %okey,
                    resource_version = written.metadata.resource_version.as_deref().unwrap_or_default(),
                    "eviction request status written"
                );
                c.requests.record(written);
            }
            Err(e) if e.is_not_found() => c.requests.forget(&okey),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Creates `new` (Server-Side Apply on the main resource) and keeps the result.
async fn create(c: &Controller, request: &ObjectKey, new: &Eviction) -> Result<(), SyncError> {
    let namespace = new.metadata.namespace.as_deref().unwrap_or_default();
    let name = new.metadata.name.as_deref().unwrap_or_default();
    let body = serde_json::to_value(new)?;
    let created = apply::eviction(&c.ctx.client, namespace, name, body).await?;
    tracing::info!(
        eviction_request = %request,
        eviction = name,
        namespace,
        target = new.spec.target.pod.as_ref().map(|p| p.name.as_str()).unwrap_or_default(),
        "eviction created"
    );
    c.evictions.record(created);
    Ok(())
}
