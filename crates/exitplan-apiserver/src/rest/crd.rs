//! The CRD controllers of kube-apiserver's apiextensions server (naming,
//! establishing, finalizer and the serving of custom resources), run in
//! the server right after every CRD write and at start-up, so a CRD is
//! served as soon as its create returns:
//!
//! ```text
//! CRD write ──► sync ──► naming_status / establishing_status ──► status written
//!                    ──► resources_for(established CRDs) ──► Registry::set_custom
//!                    ──► a CRD that is gone: its objects deleted
//! ```
//!
//! Deviation (docs/decisions.md): upstream deletes a CRD in two steps (a
//! finalizer, then a controller deletes the objects, waiting for their own
//! finalizers); here the objects are deleted right after the CRD, without
//! waiting for finalizers on them.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use exitplan_api::apiextensions::naming::{establishing_status, naming_status};
use exitplan_api::apiextensions::validation::is_established;

use super::meta::type_ref;
use super::state::State;
use crate::registry::{ResourceDef, resources_for};
use crate::storage::{Precondition, Prefix};

/// The CRD resource.
fn crd_def() -> Option<&'static ResourceDef> {
    crate::registry::find("apiextensions.k8s.io", "v1", "customresourcedefinitions")
}

/// Brings every CRD's status and the served custom resources up to date;
/// deletes the objects of CRDs that are gone. Errors are logged: the next
/// CRD write (or restart) retries.
pub async fn sync(state: &State) {
    let _one_at_a_time = state.crd_sync.lock().await;
    let Some(def) = crd_def() else { return };
    let (stored, _) = state.store.list(&def.prefix(None));
    let mut crds: Vec<(u64, CustomResourceDefinition)> = Vec::new();
    for s in &stored {
        match s
            .value()
            .map(serde_json::from_value::<CustomResourceDefinition>)
        {
            Ok(Ok(crd)) => crds.push((s.revision, crd)),
            Ok(Err(e)) => tracing::warn!(error = %e, "stored CRD does not decode"),
            Err(e) => tracing::warn!(error = %e, "stored CRD unreadable"),
        }
    }
    let mut served = BTreeMap::new();
    for i in 0..crds.len() {
        let others: Vec<CustomResourceDefinition> = crds
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (_, c))| c.clone())
            .collect();
        let (revision, crd) = &mut crds[i];
        if crd.metadata.deletion_timestamp.is_none() {
            update_status(state, def, revision, crd, &others).await;
        }
        if is_established(crd) && crd.metadata.deletion_timestamp.is_none() {
            match resources_for(crd) {
                Ok(defs) => {
                    served.insert(crd.metadata.name.clone().unwrap_or_default(), defs);
                }
                Err(e) => tracing::warn!(error = %e, "CRD not served"),
            }
        }
    }
    let before = state.registry.served();
    let gone: Vec<&'static ResourceDef> = before
        .custom()
        .iter()
        .filter(|(name, _)| {
            !crds
                .iter()
                .any(|(_, c)| c.metadata.name.as_ref() == Some(name))
        })
        .filter_map(|(_, defs)| defs.first().copied())
        .collect();
    if state.registry.set_custom(served) {
        tracing::info!("served custom resources changed");
    }
    for def in gone {
        delete_all(state, def).await;
    }
}

/// Runs the naming and establishing controllers on one CRD, writing its
/// status when it changes.
async fn update_status(
    state: &State,
    def: &'static ResourceDef,
    revision: &mut u64,
    crd: &mut CustomResourceDefinition,
    others: &[CustomResourceDefinition],
) {
    let now = state.clock.now();
    let mut changed = false;
    if let Some(status) = naming_status(crd, others, now) {
        crd.status = Some(status);
        changed = true;
    }
    if let Some(status) = establishing_status(crd, now) {
        crd.status = Some(status);
        changed = true;
    }
    if !changed {
        return;
    }
    let name = crd.metadata.name.clone().unwrap_or_default();
    let key = def.key(None, &name);
    let Ok(mut new) = serde_json::to_value(&*crd) else {
        return;
    };
    let old = state
        .store
        .get(&key)
        .and_then(|s| s.value().ok())
        .unwrap_or(Value::Null);
    exitplan_api::patch::record_update(
        type_ref(def),
        Some(&old),
        &mut new,
        "kube-apiserver",
        Some("status"),
        now,
    );
    super::meta::set_type(&mut new, def);
    let attrs = def.attrs(&new);
    match state
        .store
        .put(key, new, attrs, Precondition::Revision(*revision))
        .await
    {
        Ok(stored) => {
            *revision = stored.revision;
            tracing::info!(crd = %name, "CRD status updated");
        }
        Err(e) => tracing::warn!(crd = %name, error = %e, "CRD status not written"),
    }
}

/// Deletes every object of a custom resource whose CRD is gone.
async fn delete_all(state: &State, def: &'static ResourceDef) {
    let (objects, _) = state.store.list(&Prefix::new(def.storage, None));
    for o in objects {
        if let Err(e) = state.store.delete(&o.key, Precondition::None).await {
            tracing::warn!(key = o.key.as_str(), error = %e, "custom resource not deleted");
        }
    }
    tracing::info!(resource = def.storage, "objects of a deleted CRD removed");
}
