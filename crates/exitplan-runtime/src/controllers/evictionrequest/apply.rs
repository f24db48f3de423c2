//! The controller's writes: Server-Side Apply, field manager
//! [`FIELD_MANAGER`], force. Each body states only what the controller owns
//! and pins `metadata.resourceVersion` to the version the decision was made
//! from (except the creation of a new Eviction), so a decision taken on a
//! stale view is refused with 409 instead of overwriting newer state.

use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionRequest, EvictionRequestStatus, EvictionStatus, ResponderStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::{Value, json};

use exitplan_api::lifecycle::constants::{CONDITION_FAILED, CONDITION_TARGET_EVICTED};
use exitplan_control::evictionrequest::MetaRefreshPlan;

use super::{FIELD_MANAGER, SyncError};

fn params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER).force()
}

/// The two condition types the controller owns; others (responders may add
/// their own types) are left out of the apply and so left alone.
fn owned_conditions(conditions: Option<&Vec<Condition>>) -> Option<Vec<Condition>> {
    conditions.map(|cs| {
        cs.iter()
            .filter(|c| c.type_ == CONDITION_FAILED || c.type_ == CONDITION_TARGET_EVICTED)
            .cloned()
            .collect()
    })
}

/// `metadata` of an apply body: name, namespace and the pinned resourceVersion.
fn pinned_meta(meta: &ObjectMeta) -> Value {
    let mut m = serde_json::Map::new();
    for (field, value) in [
        ("name", &meta.name),
        ("namespace", &meta.namespace),
        ("resourceVersion", &meta.resource_version),
    ] {
        if let Some(v) = value {
            m.insert(field.into(), Value::String(v.clone()));
        }
    }
    Value::Object(m)
}

/// The controller-owned part of an Eviction status (§7.4-10): the two
/// conditions, `observedGeneration`, `requesters`, `targetResponders`, and
/// `name` + `startTime` of each `responders` entry (the responder owns the rest
/// of its entry; `responders` merges by name).
pub(super) fn eviction_status_body(
    eviction: &Eviction,
    status: &EvictionStatus,
) -> Result<Value, SyncError> {
    let owned = EvictionStatus {
        conditions: owned_conditions(status.conditions.as_ref()),
        observed_generation: status.observed_generation,
        requesters: status.requesters.clone(),
        target_responders: status.target_responders.clone(),
        responders: status.responders.as_ref().map(|rs| {
            rs.iter()
                .map(|r| ResponderStatus {
                    name: r.name.clone(),
                    start_time: r.start_time.clone(),
                    ..Default::default()
                })
                .collect()
        }),
    };
    Ok(json!({
        "apiVersion": <Eviction as kube::Resource>::api_version(&()),
        "kind": <Eviction as kube::Resource>::kind(&()),
        "metadata": pinned_meta(&eviction.metadata),
        "status": serde_json::to_value(owned)?,
    }))
}

/// The controller-owned part of an EvictionRequest status (§7.3-9).
pub(super) fn request_status_body(
    request: &EvictionRequest,
    status: &EvictionRequestStatus,
) -> Result<Value, SyncError> {
    let owned = EvictionRequestStatus {
        conditions: owned_conditions(status.conditions.as_ref()),
        observed_generation: status.observed_generation,
    };
    Ok(json!({
        "apiVersion": <EvictionRequest as kube::Resource>::api_version(&()),
        "kind": <EvictionRequest as kube::Resource>::kind(&()),
        "metadata": pinned_meta(&request.metadata),
        "status": serde_json::to_value(owned)?,
    }))
}

/// The main-resource apply of a metadata refresh (§7.5): the managed labels,
/// every owner reference, and `spec.target` re-stated.
pub(super) fn refresh_body(eviction: &Eviction, plan: &MetaRefreshPlan) -> Value {
    let mut meta = pinned_meta(&eviction.metadata);
    if let Value::Object(m) = &mut meta {
        m.insert("labels".into(), json!(plan.managed_labels));
        m.insert("ownerReferences".into(), json!(plan.owner_references));
    }
    json!({
        "apiVersion": <Eviction as kube::Resource>::api_version(&()),
        "kind": <Eviction as kube::Resource>::kind(&()),
        "metadata": meta,
        "spec": {"target": plan.target},
    })
}

fn evictions(client: &kube::Client, namespace: &str) -> Api<Eviction> {
    Api::namespaced(client.clone(), namespace)
}

/// Applies `body` to the Eviction's `/status`.
pub(super) async fn eviction_status(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    body: Value,
) -> Result<Eviction, SyncError> {
    Ok(evictions(client, namespace)
        .patch_status(name, &params(), &Patch::Apply(body))
        .await?)
}

/// Applies `body` to the Eviction's main resource (creation or refresh).
pub(super) async fn eviction(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    body: Value,
) -> Result<Eviction, SyncError> {
    Ok(evictions(client, namespace)
        .patch(name, &params(), &Patch::Apply(body))
        .await?)
}

/// Applies `body` to the EvictionRequest's `/status`.
pub(super) async fn request_status(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    body: Value,
) -> Result<EvictionRequest, SyncError> {
    Ok(
        Api::<EvictionRequest>::namespaced(client.clone(), namespace)
            .patch_status(name, &params(), &Patch::Apply(body))
            .await?,
    )
}

/// Deletes exactly `eviction` (UID precondition); gone already is fine.
pub(super) async fn delete_eviction(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    eviction: &Eviction,
) -> Result<(), SyncError> {
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: eviction.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match evictions(client, namespace).delete(name, &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}
