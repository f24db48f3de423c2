//! The namespace lifecycle: kube-apiserver's namespace DELETE
//! (`pkg/registry/core/namespace/storage/storage.go`) and
//! kube-controller-manager's namespace deleter
//! (`pkg/controller/namespace/deletion`), run inside the server so a
//! deleted namespace goes without any controller running:
//!
//! ```text
//! DELETE ns ──► deletionTimestamp + phase Terminating (the answer) ──► run
//! run ──► content deleted (grace 0, Background) ──► /status: conditions
//!     ──► nothing left ──► /finalize without `kubernetes`
//!     ──► no finalizer left ──► the update removes the namespace
//! an object in a terminating namespace removed (delete, last finalizer
//! gone) ──► after_content_removed ──► run
//! start-up ──► sync_all ──► run for every terminating namespace
//! ```
//!
//! The decisions (what remains, which conditions, when to finalize) are
//! `exitplan_api::core::namespace_deletion`'s; this module does the IO.
//! Deviation: upstream deletes pods with their grace period and waits for
//! the kubelet; here content goes with grace 0, so a namespace empties
//! without nodes (docs/decisions.md).

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, StatusDetails};
use serde_json::Value;

use exitplan_api::core::namespace::{FINALIZER_KUBERNETES, PHASE_TERMINATING};
use exitplan_api::core::namespace_deletion::{
    ContentReport, GroupVersionResource, ResourceRemaining, assess_resource, deletion_status,
    finalize, needs_deletion, spec_finalizers,
};

use super::delete::{
    Deleted, IMMORTAL_NAMESPACES, check_preconditions, delete_object, delete_one, gc_finalizers,
    is_dry_run, rfc3339, set_meta,
};
use super::errors::{ApiError, conflict_modified, failure, from_write, internal};
use super::meta::{deletion_grace, deletion_timestamp, finalizers, served};
use super::state::State;
use super::update::{Update, Updated, update_object};
use crate::registry::{ResourceDef, find};
use crate::storage::{Precondition, WriteError};

/// The manager the deleter's writes are recorded under (the namespace
/// controller runs in kube-controller-manager).
const MANAGER: &str = "kube-controller-manager";

/// How often a write starts over when the namespace changes under it.
const ATTEMPTS: usize = 5;

fn namespaces() -> Option<&'static ResourceDef> {
    find("", "v1", "namespaces")
}

/// Whether `def` is the Namespace resource.
pub fn is_namespace(def: &ResourceDef) -> bool {
    def.group.is_empty() && def.plural == "namespaces"
}

/// `ShouldDeleteNamespaceDuringUpdate`: an update that leaves a deleting
/// namespace with no `spec.finalizers` and no `metadata.finalizers` removes
/// it (grace nil or 0, as the generic rule).
pub fn should_delete_during_update(new: &Value, old: &Value) -> bool {
    let spec_empty = new
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    spec_empty
        && finalizers(new).is_empty()
        && old.pointer("/metadata/deletionTimestamp").is_some()
        && deletion_grace(old).unwrap_or(0) == 0
}

/// `DELETE /api/v1/namespaces/<name>` (`REST.Delete`): refuses the
/// immortal ones; the first delete marks the namespace (deletionTimestamp,
/// phase `Terminating`, the propagation policy's finalizers), answers with
/// it and runs the deleter; later ones answer with the namespace while
/// `spec.finalizers` remain, and delete it as any object once they are gone.
pub async fn delete_namespace(
    state: &State,
    def: &ResourceDef,
    name: &str,
    options: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    if IMMORTAL_NAMESPACES.contains(&name) {
        return Err(failure(
            403,
            "Forbidden",
            format!(
                "namespaces {} is forbidden: this namespace may not be deleted",
                exitplan_api::field::go_quote(name)
            ),
            Some(StatusDetails {
                kind: Some("namespaces".into()),
                name: Some(name.into()),
                ..StatusDetails::default()
            }),
        ));
    }
    let mut last_conflict = None;
    for _ in 0..ATTEMPTS {
        let (current, mut obj) = super::get::current(state, def, None, name)?;
        check_preconditions(def, name, &obj, options)?;
        if deletion_timestamp(&obj).is_some() {
            if !spec_finalizers_of(&obj).is_empty() {
                return Ok(Deleted {
                    object: obj,
                    removed: false,
                });
            }
            return delete_object(state, def, None, name, options).await;
        }
        set_meta(&mut obj, "deletionTimestamp", rfc3339(state.clock.now()));
        if let Some(m) = obj.as_object_mut() {
            let status = m
                .entry("status")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(s) = status.as_object_mut() {
                s.insert("phase".into(), PHASE_TERMINATING.into());
            }
        }
        let old_finalizers = finalizers(&obj);
        let new_finalizers = gc_finalizers(&old_finalizers, options);
        if new_finalizers != old_finalizers {
            set_meta(&mut obj, "finalizers", new_finalizers.into());
        }
        if is_dry_run(options) {
            return Ok(Deleted {
                object: obj,
                removed: false,
            });
        }
        let attrs = def.attrs(&obj);
        match state
            .store
            .put(
                current.key.clone(),
                obj,
                attrs,
                Precondition::Revision(current.revision),
            )
            .await
        {
            Ok(stored) => {
                tracing::info!(namespace = name, "namespace marked for deletion");
                let marked = served(def, stored.value()?);
                run(state, name).await;
                return Ok(Deleted {
                    object: marked,
                    removed: false,
                });
            }
            Err(WriteError::Conflict { .. }) => {
                last_conflict = Some(conflict_modified(def.group, def.plural, name));
            }
            Err(e) => return Err(from_write(e)),
        }
    }
    Err(last_conflict.unwrap_or_else(|| conflict_modified(def.group, def.plural, name)))
}

fn spec_finalizers_of(obj: &Value) -> Vec<Value> {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether `namespace` is terminating, from its stored attributes (no
/// parsing: the common path stays free).
fn terminating(state: &State, namespace: &str) -> bool {
    let Some(def) = namespaces() else {
        return false;
    };
    state.store.get(&def.key(None, namespace)).is_some_and(|s| {
        s.attrs.fields.get("status.phase").map(String::as_str) == Some(PHASE_TERMINATING)
    })
}

/// Called after an object of `namespace` was removed (deleted, or its last
/// finalizer gone): runs the deleter when the namespace is terminating.
/// Boxed: the deleter itself deletes and updates objects.
pub fn after_content_removed<'a>(
    state: &'a State,
    namespace: &'a str,
) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
    Box::pin(async move {
        if terminating(state, namespace) {
            run(state, namespace).await;
        }
    })
}

/// Runs the deleter on every terminating namespace (at start-up: work a
/// previous run left).
pub async fn sync_all(state: &State) {
    let Some(def) = namespaces() else { return };
    let (stored, _) = state.store.list(&def.prefix(None));
    for s in stored {
        if s.attrs.fields.get("status.phase").map(String::as_str) != Some(PHASE_TERMINATING) {
            continue;
        }
        let name = s.key.as_str().rsplit('/').next().unwrap_or_default();
        run(state, name).await;
    }
}

/// The deleter on one namespace (`namespacedResourcesDeleter.Delete`),
/// starting over when the namespace changes under it. Errors are logged:
/// the next removal in the namespace (or a restart) runs it again.
pub async fn run(state: &State, name: &str) {
    for _ in 0..ATTEMPTS {
        match pass(state, name).await {
            Ok(()) => return,
            Err(e) if e.code() == 409 => continue,
            Err(e) if e.code() == 404 => return,
            Err(e) => {
                tracing::warn!(namespace = name, error = %e, "namespace deletion failed");
                return;
            }
        }
    }
}

/// One pass: content deleted, status written, finalizer removed when the
/// content is gone.
async fn pass(state: &State, name: &str) -> Result<(), ApiError> {
    let Some(def) = namespaces() else {
        return Ok(());
    };
    let Some(mut current) = state.store.current(&def.key(None, name))? else {
        return Ok(());
    };
    let mut value = served(def, current.value()?);
    let ns: Namespace = serde_json::from_value(value.clone()).map_err(internal)?;
    if !needs_deletion(&ns) {
        return Ok(());
    }
    let report = delete_content(state, name).await;
    let now = state.clock.now();
    if let Some(status) = deletion_status(ns.status.as_ref(), &report, now) {
        let mut new = value.clone();
        new["status"] = serde_json::to_value(&status).map_err(internal)?;
        match write(state, def, current, value, new, "status").await? {
            Updated::Stored(stored) => {
                value = served(def, stored.value()?);
                current = stored;
            }
            Updated::Object(_) => return Ok(()),
        }
    }
    if !report.done() {
        tracing::info!(namespace = name, "namespace content remains");
        return Ok(());
    }
    let mut new = value.clone();
    new["spec"]["finalizers"] = finalize(spec_finalizers(&ns), FINALIZER_KUBERNETES).into();
    write(state, def, current, value, new, "finalize").await?;
    tracing::info!(namespace = name, "namespace finalized");
    Ok(())
}

/// An update of the namespace through `subresource`, as the deleter's
/// client sends it.
async fn write(
    state: &State,
    def: &ResourceDef,
    current: std::sync::Arc<crate::storage::StoredObject>,
    old: Value,
    new: Value,
    subresource: &str,
) -> Result<Updated, ApiError> {
    update_object(
        state,
        Update {
            def,
            current,
            old: Some(old),
            new,
            subresource: Some(subresource),
            manager: MANAGER,
            dry_run: false,
            record: true,
            // The server's own deleter calls no webhooks (upstream's namespace
            // controller is an ordinary client, whose writes webhooks see).
            caller: None,
        },
    )
    .await
}

/// The namespaced resources the deleter works through: each deletable
/// resource once per group (`ServerPreferredNamespacedResources`).
fn deletable(state: &State) -> Vec<&'static ResourceDef> {
    let served = state.registry.served();
    let mut seen = HashSet::new();
    served
        .defs
        .iter()
        .copied()
        .filter(|r| r.namespaced)
        .filter(|r| crate::discovery::documents::verbs(r).contains(&"delete"))
        .filter(|r| seen.insert((r.group, r.plural)))
        .collect()
}

/// `deleteAllContent`: every object of every resource in `namespace`
/// deleted, then what remains.
async fn delete_content(state: &State, namespace: &str) -> ContentReport {
    let options = DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: Some("Background".into()),
        ..DeleteOptions::default()
    };
    let mut report = ContentReport::default();
    for def in deletable(state) {
        let gvr = GroupVersionResource::new(def.group, def.version, def.plural);
        let prefix = def.prefix(Some(namespace));
        let (items, _) = state.store.list(&prefix);
        let mut error = None;
        for item in items {
            let item_name = item.key.as_str().rsplit('/').next().unwrap_or_default();
            match delete_one(state, def, Some(namespace), item_name, &options).await {
                Ok(_) => {}
                Err(e) if e.code() == 404 => {}
                Err(e) => error = Some(e.to_string()),
            }
        }
        if error.is_some() {
            report.add(&gvr, &ResourceRemaining::default(), error);
            continue;
        }
        let (left, _) = state.store.list(&prefix);
        let held: Vec<Vec<String>> = left
            .iter()
            .map(|s| s.value().map(|v| finalizers(&v)).unwrap_or_default())
            .collect();
        let (remaining, error) = assess_resource(namespace, &gvr, &held, 0);
        report.add(&gvr, &remaining, error);
    }
    report
}
