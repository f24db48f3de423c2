//! Work-queue keys and informer index keys (§7.1).
//!
//! Queue keys are `"<namespace>/<name>"` (`cache.MetaNamespaceKeyFunc`); the
//! target index groups Evictions, EvictionRequests and pods under
//! `"<namespace>/pod/<uid>"`.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// `"<namespace>/<name>"` (or `"<name>"` without a namespace); `None` without a name.
pub fn queue_key(meta: &ObjectMeta) -> Option<String> {
    let name = meta.name.as_deref()?;
    Some(match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    })
}

fn target_key(namespace: Option<&str>, uid: &str) -> String {
    format!("{}/pod/{uid}", namespace.unwrap_or_default())
}

/// Target index value of an Eviction; `None` for a non-pod target.
pub fn eviction_target_key(eviction: &Eviction) -> Option<String> {
    let pod = eviction.spec.target.pod.as_ref()?;
    Some(target_key(eviction.metadata.namespace.as_deref(), &pod.uid))
}

/// Target index value of an EvictionRequest; `None` for a non-pod target.
pub fn eviction_request_target_key(request: &EvictionRequest) -> Option<String> {
    let pod = request.spec.target.pod.as_ref()?;
    Some(target_key(request.metadata.namespace.as_deref(), &pod.uid))
}

/// Target index value under which a pod's Evictions are found (by its UID).
pub fn pod_target_key(pod: &Pod) -> String {
    target_key(
        pod.metadata.namespace.as_deref(),
        pod.metadata.uid.as_deref().unwrap_or_default(),
    )
}
