//! DELETE and DELETECOLLECTION as upstream's generic registry store
//! (`pkg/registry/generic/registry/store.go`) with `rest.BeforeDelete` and
//! the pod strategy's graceful deletion:
//!
//! * `preconditions` (uid, resourceVersion) → 409 `Precondition failed: …`;
//! * `propagationPolicy`: `Orphan` adds the `orphan` finalizer,
//!   `Foreground` adds `foregroundDeletion`, `Background` (the default)
//!   neither; an object with finalizers is only marked (`deletionTimestamp`
//!   = now, `deletionGracePeriodSeconds` = 0) and goes when an update
//!   removes the last finalizer;
//! * pods: a pod on a node is deleted gracefully — marked with
//!   `deletionTimestamp` = now + grace and `deletionGracePeriodSeconds` —
//!   and removed by a later delete with grace 0 (the kubelet's
//!   confirmation); an unscheduled or terminal pod goes at once.

use axum::response::Response;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, StatusDetails};
use serde_json::Value;

use super::errors::{
    ApiError, bad_request, conflict, conflict_modified, from_write, invalid_options, not_found,
};
use super::get::render;
use super::list::{Selectors, list_object, select};
use super::meta::{
    deletion_grace, deletion_timestamp, finalizers, meta_mut, meta_str, served, to_stored,
};
use super::respond;
use super::state::{Call, State};
use crate::registry::ResourceDef;
use crate::storage::{Precondition, WriteError};

/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";
/// Namespaces that can never be deleted.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// How often a delete starts over when the object changes under it.
const ATTEMPTS: usize = 5;

/// The outcome of a delete.
#[derive(Debug)]
pub struct Deleted {
    /// The object: its last state if removed, else as marked.
    pub object: Value,
    /// Whether it was removed from storage (or would be, on dry-run).
    pub removed: bool,
}

/// The delete options of a request: the body if there is one, else the
/// query parameters (upstream reads one or the other).
pub fn options_of(call: &Call) -> Result<DeleteOptions, ApiError> {
    let mut options = if call.body.iter().any(|b| !b.is_ascii_whitespace()) {
        let mut v: Value = serde_json::from_slice(&call.body).map_err(|e| {
            bad_request(format!("couldn't get version/kind; json parse error: {e}"))
        })?;
        if let Some(m) = v.as_object_mut() {
            m.remove("kind");
            m.remove("apiVersion");
        }
        serde_json::from_value::<DeleteOptions>(v).map_err(|e| bad_request(e.to_string()))?
    } else {
        DeleteOptions {
            grace_period_seconds: call.query.int("gracePeriodSeconds")?,
            propagation_policy: call.query.non_empty("propagationPolicy").map(str::to_owned),
            orphan_dependents: match call.query.get("orphanDependents") {
                Some(_) => Some(call.query.flag("orphanDependents")?),
                None => None,
            },
            ..DeleteOptions::default()
        }
    };
    let query_dry_run = call.query.all("dryRun");
    if options.dry_run.as_ref().is_none_or(Vec::is_empty) && !query_dry_run.is_empty() {
        options.dry_run = Some(query_dry_run);
    }
    validate(&options)?;
    Ok(options)
}

fn validate(options: &DeleteOptions) -> Result<(), ApiError> {
    if let Some(p) = options.propagation_policy.as_deref() {
        if !matches!(p, "Foreground" | "Background" | "Orphan") {
            return Err(invalid_options(
                "DeleteOptions",
                "propagationPolicy",
                "FieldValueNotSupported",
                &format!(
                    "Unsupported value: {}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
                    exitplan_api::field::go_quote(p)
                ),
            ));
        }
        if options.orphan_dependents.is_some() {
            return Err(invalid_options(
                "DeleteOptions",
                "propagationPolicy",
                "FieldValueInvalid",
                &format!(
                    "Invalid value: {}: orphanDependents and deletionPropagation cannot be both set",
                    exitplan_api::field::go_quote(p)
                ),
            ));
        }
    }
    for v in options.dry_run.iter().flatten() {
        if v != "All" {
            return Err(bad_request(format!(
                "Invalid dry run value: [{v}]: supported values: \"All\""
            )));
        }
    }
    Ok(())
}

pub(crate) fn is_dry_run(options: &DeleteOptions) -> bool {
    options.dry_run.as_ref().is_some_and(|v| !v.is_empty())
}

/// `rest.BeforeDelete`'s precondition check.
pub(crate) fn check_preconditions(
    def: &ResourceDef,
    name: &str,
    obj: &Value,
    options: &DeleteOptions,
) -> Result<(), ApiError> {
    let Some(p) = options.preconditions.as_ref() else {
        return Ok(());
    };
    let uid = meta_str(obj, "uid").unwrap_or_default();
    if let Some(want) = p.uid.as_deref()
        && want != uid
    {
        return Err(conflict(
            def.group,
            def.plural,
            name,
            &format!("Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"),
        ));
    }
    let rv = meta_str(obj, "resourceVersion").unwrap_or_default();
    if let Some(want) = p.resource_version.as_deref()
        && want != rv
    {
        return Err(conflict(
            def.group,
            def.plural,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
            ),
        ));
    }
    Ok(())
}

fn is_pod(def: &ResourceDef) -> bool {
    def.group.is_empty() && def.kind == "Pod"
}

pub(crate) fn set_meta(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = meta_mut(obj) {
        m.insert(key.to_owned(), value);
    }
}

fn bump_generation(obj: &mut Value) {
    if let Some(g) = obj.pointer("/metadata/generation").and_then(Value::as_i64)
        && g > 0
    {
        set_meta(obj, "generation", (g + 1).into());
    }
}

pub(crate) fn rfc3339(ts: Timestamp) -> Value {
    exitplan_api::time::format_rfc3339(exitplan_api::time::truncate_to_seconds(ts)).into()
}

/// Upstream's `DefaultTerminationGracePeriodSeconds` (core/v1 defaulting
/// sets it on every pod; this server does not default pods, so a pod without
/// the field gets it here).
const DEFAULT_TERMINATION_GRACE: i64 = 30;

/// The pod strategy's `CheckGracefulDelete`: the grace period of a pod's
/// first delete (0 for unscheduled or terminal pods).
fn pod_grace(pod: &Value, requested: Option<i64>) -> i64 {
    let mut period = requested.unwrap_or_else(|| {
        pod.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_TERMINATION_GRACE)
    });
    if pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        period = 0;
    }
    if matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Failed" | "Succeeded")
    ) {
        period = 0;
    }
    period
}

/// `rest.BeforeDelete` after the precondition check: `(graceful, pending)`.
fn before_delete(
    def: &ResourceDef,
    obj: &mut Value,
    grace: Option<i64>,
    now: Timestamp,
) -> (bool, bool) {
    if !is_pod(def) {
        return (false, false);
    }
    if let Some(existing) = deletion_timestamp(obj) {
        let Some(existing_grace) = deletion_grace(obj).filter(|g| *g != 0) else {
            return (false, false);
        };
        let Some(period) = grace else {
            return (false, true);
        };
        if period >= existing_grace {
            return (false, true);
        }
        let ts =
            exitplan_api::time::add(existing, SignedDuration::from_secs(period - existing_grace));
        set_meta(obj, "deletionTimestamp", rfc3339(ts));
        set_meta(obj, "deletionGracePeriodSeconds", period.into());
        return (true, false);
    }
    let period = pod_grace(obj, grace);
    let ts = exitplan_api::time::add(now, SignedDuration::from_secs(period));
    set_meta(obj, "deletionTimestamp", rfc3339(ts));
    set_meta(obj, "deletionGracePeriodSeconds", period.into());
    bump_generation(obj);
    (true, false)
}

/// `deletionFinalizersForGarbageCollection`: the finalizers after applying
/// the propagation policy.
pub(crate) fn gc_finalizers(existing: &[String], options: &DeleteOptions) -> Vec<String> {
    let has = |f: &str| existing.iter().any(|x| x == f);
    let policy = options.propagation_policy.as_deref();
    let orphan = match (options.orphan_dependents, policy) {
        (Some(o), _) => o,
        (None, Some("Orphan")) => true,
        (None, Some(_)) => false,
        (None, None) => has(FINALIZER_ORPHAN),
    };
    let foreground = match (options.orphan_dependents, policy) {
        (Some(_), _) => false,
        (None, Some("Foreground")) => true,
        (None, Some(_)) => false,
        (None, None) => has(FINALIZER_FOREGROUND),
    };
    let mut out: Vec<String> = existing
        .iter()
        .filter(|f| *f != FINALIZER_ORPHAN && *f != FINALIZER_FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        out.push(FINALIZER_ORPHAN.to_owned());
    }
    if foreground {
        out.push(FINALIZER_FOREGROUND.to_owned());
    }
    out
}

fn same_set(a: &[String], b: &[String]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort();
    a.dedup();
    b.sort();
    b.dedup();
    a == b
}

/// Deletes (or marks for deletion) one object; a removal in a terminating
/// namespace runs the namespace deleter again
/// ([`super::namespace::after_content_removed`]).
pub async fn delete_object(
    state: &State,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
    options: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let deleted = delete_one(state, def, namespace, name, options).await?;
    if deleted.removed
        && def.namespaced
        && !is_dry_run(options)
        && let Some(ns) = namespace
    {
        super::namespace::after_content_removed(state, ns).await;
    }
    Ok(deleted)
}

/// Deletes (or marks for deletion) one object, without looking at its
/// namespace (the namespace deleter's own deletes).
pub async fn delete_one(
    state: &State,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
    options: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let key = def.key(namespace, name);
    let dry_run = is_dry_run(options);
    let grace = options
        .grace_period_seconds
        .map(|g| if g < 0 { 1 } else { g });
    let mut last_conflict = None;
    for _ in 0..ATTEMPTS {
        let current = state
            .store
            .current(&key)?
            .ok_or_else(|| not_found(def.group, def.plural, name))?;
        let mut obj = served(def, current.value()?);
        check_preconditions(def, name, &obj, options)?;
        let original = obj.clone();
        let now = state.clock.now();
        let (graceful, pending) = before_delete(def, &mut obj, grace, now);
        if pending {
            return Ok(Deleted {
                object: served(def, current.value()?),
                removed: false,
            });
        }
        let old_finalizers = finalizers(&obj);
        let new_finalizers = gc_finalizers(&old_finalizers, options);
        let changed = !same_set(&old_finalizers, &new_finalizers);
        let pending_finalizers = !new_finalizers.is_empty();
        let mut precondition = Precondition::Revision(current.revision);
        let mut last_state = obj.clone();
        if graceful || pending_finalizers || changed {
            if changed {
                set_meta(&mut obj, "finalizers", new_finalizers.clone().into());
            }
            let delete_now = if !graceful {
                if pending_finalizers {
                    // markAsDeleting
                    match deletion_timestamp(&obj) {
                        Some(ts) if ts <= now => {}
                        None => {
                            bump_generation(&mut obj);
                            set_meta(&mut obj, "deletionTimestamp", rfc3339(now));
                        }
                        Some(_) => set_meta(&mut obj, "deletionTimestamp", rfc3339(now)),
                    }
                    set_meta(&mut obj, "deletionGracePeriodSeconds", 0.into());
                    false
                } else {
                    true
                }
            } else {
                !pending_finalizers && deletion_grace(&obj) == Some(0)
            };
            let must_write = !delete_now || graceful;
            if must_write && obj == original {
                // `GuaranteedUpdate` writes nothing when nothing changed
                // (an object already marked, held by a finalizer).
                if !delete_now {
                    return Ok(Deleted {
                        object: original,
                        removed: false,
                    });
                }
            } else if must_write {
                if dry_run {
                    if !delete_now {
                        return Ok(Deleted {
                            object: obj,
                            removed: false,
                        });
                    }
                } else {
                    let to_store = to_stored(def, obj.clone())?;
                    let attrs = def.attrs(&to_store);
                    match state
                        .store
                        .put(key.clone(), to_store, attrs, precondition)
                        .await
                    {
                        Ok(stored) => {
                            precondition = Precondition::Revision(stored.revision);
                            let written = served(def, stored.value()?);
                            if !delete_now {
                                tracing::info!(resource = def.plural, name, "marked for deletion");
                                return Ok(Deleted {
                                    object: written,
                                    removed: false,
                                });
                            }
                            last_state = written;
                        }
                        Err(WriteError::Conflict { .. }) => {
                            last_conflict = Some(conflict_modified(def.group, def.plural, name));
                            continue;
                        }
                        Err(e) => return Err(from_write(e)),
                    }
                }
            }
        }
        if dry_run {
            return Ok(Deleted {
                object: last_state,
                removed: true,
            });
        }
        match state.store.delete(&key, precondition).await {
            Ok(deleted) => {
                tracing::info!(
                    resource = def.plural,
                    name,
                    rv = deleted.revision,
                    "deleted"
                );
                return Ok(Deleted {
                    object: served(def, deleted.value()?),
                    removed: true,
                });
            }
            Err(WriteError::Conflict { current: None }) => {
                return Err(not_found(def.group, def.plural, name));
            }
            Err(WriteError::Conflict { .. }) => {
                last_conflict = Some(conflict_modified(def.group, def.plural, name));
            }
            Err(e) => return Err(from_write(e)),
        }
    }
    Err(last_conflict.unwrap_or_else(|| conflict_modified(def.group, def.plural, name)))
}

/// Whether DELETE answers with the deleted object (upstream's
/// `ReturnDeletedObject`) rather than a `Success` Status.
fn returns_object(def: &ResourceDef) -> bool {
    def.group.is_empty() && matches!(def.kind, "Pod" | "Namespace")
}

/// `DELETE …/<name>`.
pub async fn delete(call: &Call) -> Result<Response, ApiError> {
    let options = options_of(call)?;
    let def = call.def;
    let name = call.name();
    super::priority::check_delete(def, name)?;
    let caller = crate::webhook::caller(call);
    admit_delete(&call.state, def, call.ns(), name, &options, &caller).await?;
    let deleted = if super::namespace::is_namespace(def) {
        super::namespace::delete_namespace(&call.state, def, name, &options).await?
    } else {
        delete_object(&call.state, def, call.ns(), name, &options).await?
    };
    let code = if !deleted.removed && options.orphan_dependents == Some(false) {
        202
    } else {
        200
    };
    if deleted.removed && !returns_object(def) {
        let details = StatusDetails {
            name: Some(name.to_owned()),
            group: Some(def.group.to_owned()).filter(|g| !g.is_empty()),
            kind: Some(def.plural.to_owned()),
            uid: meta_str(&deleted.object, "uid").map(str::to_owned),
            ..StatusDetails::default()
        };
        return Ok(super::fieldvalidation::warn(
            respond::success(code, Some(details)),
            &caller.warnings(),
        ));
    }
    Ok(super::fieldvalidation::warn(
        render(call, code, &deleted.object)?,
        &caller.warnings(),
    ))
}

/// The admission webhooks of a DELETE (upstream's delete handler and
/// `deleteValidation`): mutating webhooks see no object, validating ones
/// the object as stored (`oldObject`). An absent object is left to the
/// delete's own 404.
pub async fn admit_delete(
    state: &State,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
    options: &DeleteOptions,
    caller: &crate::webhook::Caller,
) -> Result<(), ApiError> {
    let Some(current) = state.store.current(&def.key(namespace, name))? else {
        return Ok(());
    };
    let old = served(def, current.value()?);
    let ns = namespace.unwrap_or_default();
    let mut attrs = crate::webhook::Attributes {
        dry_run: is_dry_run(options),
        options: serde_json::to_value(options).unwrap_or_default(),
        ..crate::webhook::Attributes::of(
            def,
            crate::webhook::Operation::Delete,
            "",
            name,
            crate::webhook::admission_namespace(def, ns, name),
            &caller.user,
        )
    };
    crate::webhook::mutate(state, &attrs, None, caller).await?;
    attrs.old_object = Some(&old);
    crate::webhook::validate(state, &attrs, None, caller).await
}

/// `DELETE` of a collection: every selected object, each as a DELETE.
pub async fn delete_collection(call: &Call) -> Result<Response, ApiError> {
    if super::namespace::is_namespace(call.def) {
        // Upstream serves no deletecollection for namespaces.
        return Err(super::errors::method_not_allowed());
    }
    let options = options_of(call)?;
    let selectors = Selectors::of(call)?;
    let page = select(call, &selectors)?;
    let caller = crate::webhook::caller(call);
    let mut items = Vec::new();
    for stored in &page.stored {
        let value = stored.value()?;
        let ns = meta_str(&value, "namespace").map(str::to_owned);
        let name = meta_str(&value, "name").unwrap_or_default().to_owned();
        admit_delete(
            &call.state,
            call.def,
            ns.as_deref(),
            &name,
            &options,
            &caller,
        )
        .await?;
        match delete_object(&call.state, call.def, ns.as_deref(), &name, &options).await {
            Ok(d) => items.push(d.object),
            Err(e) if e.code() == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let meta = serde_json::json!({"resourceVersion": call.state.store.revision().to_string()});
    Ok(super::fieldvalidation::warn(
        respond::json(200, &list_object(call.def, meta, items)),
        &caller.warnings(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(policy: Option<&str>) -> DeleteOptions {
        DeleteOptions {
            propagation_policy: policy.map(str::to_owned),
            ..DeleteOptions::default()
        }
    }

    #[test]
    fn propagation_policy_sets_gc_finalizers() {
        let none: Vec<String> = vec![];
        assert_eq!(gc_finalizers(&none, &opts(None)), none);
        assert_eq!(gc_finalizers(&none, &opts(Some("Background"))), none);
        assert_eq!(gc_finalizers(&none, &opts(Some("Orphan"))), vec!["orphan"]);
        assert_eq!(
            gc_finalizers(&["x".to_owned()], &opts(Some("Foreground"))),
            vec!["x", "foregroundDeletion"]
        );
        assert_eq!(
            gc_finalizers(&["orphan".to_owned()], &opts(Some("Background"))),
            none
        );
        assert_eq!(
            gc_finalizers(&["orphan".to_owned()], &opts(None)),
            vec!["orphan"]
        );
    }

    #[test]
    fn pod_grace_rules() {
        let bound = serde_json::json!({"spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 30}, "status": {"phase": "Running"}});
        assert_eq!(pod_grace(&bound, None), 30);
        assert_eq!(pod_grace(&bound, Some(5)), 5);
        let unbound = serde_json::json!({"spec": {"terminationGracePeriodSeconds": 30}});
        assert_eq!(pod_grace(&unbound, None), 0);
        let done = serde_json::json!({"spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 30}, "status": {"phase": "Succeeded"}});
        assert_eq!(pod_grace(&done, None), 0);
        let undefaulted =
            serde_json::json!({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}});
        assert_eq!(pod_grace(&undefaulted, None), 30, "upstream's default");
    }
}
