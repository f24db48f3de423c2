//! UPDATE (`PUT`) of an object or its `status`: the resourceVersion
//! precondition (409), admission through the registry strategies (the
//! status strategy resets what a `/status` write may not change), no-op
//! detection, and removal of an object whose last finalizer is gone
//! (`/finalize` of namespaces goes through here too).

use std::sync::Arc;

use axum::response::Response;
use exitplan_api::patch;
use serde_json::Value;

use super::create::{admission_error, decode_body};
use super::errors::{ApiError, bad_request, conflict_modified, from_write};
use super::get::{current, render, render_stored};
use super::meta::{
    deletion_grace, field_manager, finalizers, meta_mut, meta_str, served, set_type, target,
    to_stored,
};
use super::state::{Call, State};
use crate::registry::ResourceDef;
use crate::storage::{Key, Precondition, StoredObject, WriteError};

/// One update to perform.
#[derive(Debug)]
pub struct Update<'a> {
    /// The resource.
    pub def: &'a ResourceDef,
    /// The object as stored now.
    pub current: Arc<StoredObject>,
    /// `current` already parsed and as `def` serves it (`served`), if the caller has
    /// it: saves parsing it again.
    pub old: Option<Value>,
    /// The new object (metadata.resourceVersion: the caller's precondition, if any).
    pub new: Value,
    /// The subresource written (`status`, `ephemeralcontainers`, `resize`), if any.
    pub subresource: Option<&'a str>,
    /// The field manager.
    pub manager: &'a str,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Record the write in `managedFields` as an `Update` (not for applies,
    /// which record their own ownership).
    pub record: bool,
    /// The request the admission webhooks are called for (`None`: an
    /// internal write, no webhooks). A Scale write calls them itself, on
    /// the Scale.
    pub caller: Option<&'a crate::webhook::Caller>,
}

/// The result of an update.
#[derive(Debug)]
pub enum Updated {
    /// The object was written: the stored version is the answer.
    Stored(Arc<StoredObject>),
    /// Nothing was written as this object (a no-op, a dry-run, or the
    /// object went with its last finalizer): the answer.
    Object(Value),
}

impl Updated {
    /// The object now (or as it would be), typed.
    pub fn into_object(self, def: &ResourceDef) -> Result<Value, ApiError> {
        match self {
            Updated::Stored(stored) => Ok(served(def, stored.value()?)),
            Updated::Object(object) => Ok(object),
        }
    }

    /// Renders the object (JSON or a one-row Table) with `code`: a stored
    /// version from its stored bytes when they are the answer.
    pub fn render(&self, call: &Call, code: u16) -> Result<Response, ApiError> {
        match self {
            Updated::Stored(stored) => render_stored(call, code, stored),
            Updated::Object(object) => render(call, code, object),
        }
    }
}

/// Performs an update: precondition, admission, managedFields, no-op,
/// finalizer completion, conditional write.
pub async fn update_object(state: &State, u: Update<'_>) -> Result<Updated, ApiError> {
    let Update {
        def,
        current,
        old,
        mut new,
        subresource,
        manager,
        dry_run,
        record,
        caller,
    } = u;
    let name = current
        .key
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let current_rv = current.revision.to_string();
    // The store reads the object's resourceVersion as a number
    // (`APIObjectVersioner.ObjectResourceVersion`): one that is not a number
    // is its plain error, a 500 with no reason; another number is stale.
    if let Some(rv) = meta_str(&new, "resourceVersion").filter(|v| !v.is_empty()) {
        match super::resourceversion::parse_uint(rv) {
            Err(e) => return Err(super::errors::failure(500, "", e, None)),
            Ok(n) if n != current.revision => {
                return Err(conflict_modified(def.group, def.plural, &name));
            }
            Ok(_) => {}
        }
    }
    let old = match old {
        Some(old) => old,
        None => served(def, current.value()?),
    };
    set_type(&mut new, def);
    let caller = caller.filter(|_| subresource != Some("scale"));
    let ns = meta_str(&old, "namespace").unwrap_or_default().to_owned();
    let attrs = caller.map(|c| crate::webhook::Attributes {
        old_object: Some(&old),
        dry_run,
        options: crate::webhook::write_options(manager, dry_run),
        ..crate::webhook::Attributes::of(
            def,
            crate::webhook::Operation::Update,
            subresource.unwrap_or_default(),
            &name,
            crate::webhook::admission_namespace(def, &ns, &name),
            &c.user,
        )
    });
    if let (Some(attrs), Some(caller)) = (&attrs, caller) {
        crate::webhook::mutate(state, attrs, Some(&mut new), caller).await?;
    }
    if let Some(caller) = caller.filter(|_| subresource.is_none()) {
        super::rbac::check_escalation(state, def, &caller.user, &ns, &name, &new, Some(&old))?;
    }
    let _service_writes = if super::service_alloc::allocates(def) && subresource != Some("status") {
        let guard = state.service_writes.lock().await;
        super::service_alloc::on_update(state, def, current.key.as_str(), &mut new, &old)?;
        Some(guard)
    } else {
        None
    };
    super::priority::check_write(state, def, &new)?;
    let now = state.clock.now();
    match subresource {
        Some("status") => def.admission.update_status(&mut new, &old, now),
        // A Scale write changes the main resource's replicas: its rules.
        Some("scale") => def.admission.update(&mut new, &old, now),
        Some(sub) => def.admission.update_subresource(sub, &mut new, &old, now),
        None => def.admission.update(&mut new, &old, now),
    }
    .map_err(admission_error)?;
    set_type(&mut new, def);
    if let Some(meta) = meta_mut(&mut new) {
        meta.insert("resourceVersion".into(), current_rv.clone().into());
    }
    if record {
        patch::record_update(target(def), Some(&old), &mut new, manager, subresource, now);
    }
    if let (Some(attrs), Some(caller)) = (&attrs, caller) {
        crate::webhook::validate(state, attrs, Some(&new), caller).await?;
    }
    drop(attrs);
    if new == old {
        return Ok(Updated::Object(old));
    }
    if dry_run {
        return Ok(Updated::Object(new));
    }
    let precondition = Precondition::Revision(current.revision);
    let conflict = |e: WriteError| match e {
        WriteError::Conflict { .. } => conflict_modified(def.group, def.plural, &name),
        other => from_write(other),
    };
    // `shouldDeleteDuringUpdate`: the last finalizer of an object being
    // deleted without grace is gone, so the object goes (a namespace also
    // needs its `spec.finalizers` gone).
    let should_delete = if super::namespace::is_namespace(def) {
        super::namespace::should_delete_during_update(&new, &old)
    } else {
        finalizers(&new).is_empty()
            && !finalizers(&old).is_empty()
            && new.pointer("/metadata/deletionTimestamp").is_some()
            && deletion_grace(&new).unwrap_or(0) == 0
    };
    if should_delete {
        let deleted = state
            .store
            .delete(&current.key, precondition)
            .await
            .map_err(conflict)?;
        tracing::info!(resource = def.plural, name = %name, "deleted: last finalizer removed");
        let mut object = new;
        crate::storage::set_resource_version(&mut object, deleted.revision);
        if def.namespaced
            && let Some(ns) = meta_str(&object, "namespace")
        {
            super::namespace::after_content_removed(state, ns).await;
        }
        return Ok(Updated::Object(object));
    }
    let new = to_stored(def, new)?;
    let stored = put_shedding_managed_fields(state, def, &current.key, new, precondition, record)
        .await
        .map_err(conflict)?;
    tracing::debug!(resource = def.plural, name = %name, rv = stored.revision, subresource = ?subresource, "updated");
    Ok(Updated::Stored(stored))
}

/// Stores `object` at `key` if `precondition` holds. A write that records
/// its own `managedFields` entry (`record`: create, update, patch — not
/// apply, whose ownership is what it writes) and that etcd would refuse as
/// too large is tried once more without `metadata.managedFields`, as
/// kube-apiserver's create, update and patch handlers do
/// (`isTooLargeError`): the object is stored without them. Still too large,
/// the second refusal is the answer.
pub async fn put_shedding_managed_fields(
    state: &State,
    def: &ResourceDef,
    key: &Key,
    object: Value,
    precondition: Precondition,
    record: bool,
) -> Result<Arc<StoredObject>, WriteError> {
    let attrs = def.attrs(&object);
    let refused = match state
        .store
        .put(key.clone(), object, attrs, precondition)
        .await
    {
        Err(WriteError::TooLarge { error, object }) if record => (error, object),
        other => return other,
    };
    let (error, mut object) = refused;
    if meta_mut(&mut object)
        .and_then(|meta| meta.remove("managedFields"))
        .is_none()
    {
        return Err(WriteError::TooLarge { error, object });
    }
    tracing::info!(
        resource = def.plural,
        key = key.as_str(),
        "object too large with its managedFields; writing it without them"
    );
    let attrs = def.attrs(&object);
    state
        .store
        .put(key.clone(), object, attrs, precondition)
        .await
}

/// Whether a PUT of an absent object creates it (`AllowCreateOnUpdate`:
/// Leases, Events and the RBAC kinds upstream).
pub fn allows_create_on_update(def: &ResourceDef) -> bool {
    matches!(
        (def.group, def.kind),
        ("coordination.k8s.io", "Lease") | ("", "Event") | ("events.k8s.io", "Event")
    ) || def.group == "rbac.authorization.k8s.io"
}

/// Whether a PUT without a resourceVersion updates the stored object
/// (`AllowUnconditionalUpdate`: the RBAC kinds upstream; other kinds here
/// still require one).
pub fn allows_unconditional_update(def: &ResourceDef) -> bool {
    def.group == "rbac.authorization.k8s.io"
}

/// `PUT …/<name>` and `PUT …/<name>/<subresource>` (`status`,
/// `ephemeralcontainers`, `resize`).
pub async fn update(call: &Call) -> Result<Response, ApiError> {
    let dry_run = call.query.dry_run()?;
    call.query.validate_write_options("UpdateOptions")?;
    let mut new = decode_body(call.def, &call.body)?;
    let warnings = super::fieldvalidation::check(
        super::fieldvalidation::directive(&call.query),
        call.def,
        &call.body,
        &new,
    )?;
    let body_name = meta_str(&new, "name").unwrap_or_default().to_owned();
    if body_name != call.name() {
        return Err(bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            call.name()
        )));
    }
    super::create::set_namespace(call.def, &mut new, call.ns())?;
    let manager = field_manager(&call.query, &call.headers);
    let caller = crate::webhook::caller(call);
    let stored = match current(&call.state, call.def, call.ns(), call.name()) {
        Ok((stored, _)) => stored,
        Err(e)
            if e.code() == 404
                && allows_create_on_update(call.def)
                && call.subresource.is_none() =>
        {
            if let Some(meta) = super::meta::meta_mut(&mut new) {
                meta.remove("resourceVersion");
            }
            let created = super::create::create_object(
                &call.state,
                call.def,
                new,
                &manager,
                dry_run,
                true,
                Some(&caller),
            )
            .await?;
            let warnings = [warnings, caller.warnings()].concat();
            return Ok(super::fieldvalidation::warn(
                created.render(call, 201)?,
                &warnings,
            ));
        }
        Err(e) => return Err(e),
    };
    if call.subresource.is_none()
        && allows_unconditional_update(call.def)
        && meta_str(&new, "resourceVersion").is_none_or(str::is_empty)
        && let Some(meta) = meta_mut(&mut new)
    {
        meta.insert("resourceVersion".into(), stored.revision.to_string().into());
    }
    let updated = update_object(
        &call.state,
        Update {
            def: call.def,
            current: stored,
            old: None,
            new,
            subresource: call.subresource.as_deref(),
            manager: &manager,
            dry_run,
            record: true,
            caller: Some(&caller),
        },
    )
    .await?;
    let warnings = [warnings, caller.warnings()].concat();
    Ok(super::fieldvalidation::warn(
        updated.render(call, 200)?,
        &warnings,
    ))
}
