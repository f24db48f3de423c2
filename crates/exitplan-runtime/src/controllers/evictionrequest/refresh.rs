//! `syncEvictionMetaRefresh` (§7.5): one Eviction's role labels and owner
//! references, applied to the main resource (a `/status` write cannot
//! change metadata).

use std::sync::Arc;

use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;

use exitplan_control::evictionrequest::keys::eviction_target_key;
use exitplan_control::evictionrequest::{MetaRefreshInput, sync_eviction_meta_refresh};

use super::{Controller, SyncError, apply, object_key};

/// One metadata refresh of the Eviction at queue key `key`.
pub(super) async fn sync(c: Arc<Controller>, key: String) -> Result<(), SyncError> {
    let Some(okey) = object_key(&key) else {
        tracing::warn!(key = %key, "malformed refresh key; dropped");
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
    let requests = c.requests_of(eviction_target_key(&eviction).as_deref());
    let requests: Vec<&EvictionRequest> = requests.iter().map(Arc::as_ref).collect();
    let Some(plan) = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &eviction,
        pod: pod.as_deref(),
        target_requests: &requests,
    }) else {
        return Ok(());
    };
    let body = apply::refresh_body(&eviction, &plan);
    match apply::eviction(&c.ctx.client, namespace, &okey.name, body).await {
        Ok(written) if written.metadata.uid != eviction.metadata.uid => {
            // The Eviction was deleted after we read it and the apply created
            // a new one (an apply creates absent objects, even with a pinned
            // resourceVersion). Undo that: a refresh must never resurrect.
            tracing::warn!(eviction = %okey, "refresh re-created a deleted eviction; deleting it again");
            apply::delete_eviction(&c.ctx.client, namespace, &okey.name, &written).await
        }
        Ok(written) => {
            tracing::debug!(
                eviction = %okey,
                labels = ?plan.managed_labels,
                owners = plan.owner_references.len(),
                "eviction metadata refreshed"
            );
            c.evictions.record(written);
            Ok(())
        }
        Err(e) if e.is_not_found() => {
            c.evictions.forget(&okey);
            Ok(())
        }
        Err(e) => Err(e),
    }
}
