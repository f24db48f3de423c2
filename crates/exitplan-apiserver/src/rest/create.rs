//! CREATE (`POST` to a collection): namespace checks, `generateName`,
//! system fields, admission, `dryRun=All`, 409 `AlreadyExists`.

use std::sync::Arc;

use axum::response::Response;
use exitplan_api::patch;
use serde_json::Value;

use super::errors::{
    ApiError, already_exists, bad_request, from_write, method_not_allowed, namespace_terminating,
    not_found,
};
use super::get::{render, render_stored};
use super::meta::{field_manager, meta_mut, meta_str, set_type, system_fields, target};
use super::state::{Call, State};
use crate::registry::{AdmissionError, ResourceDef, find};
use crate::storage::{Precondition, StoredObject, WriteError};

/// A request body as a JSON object of `def`'s kind (400 otherwise).
pub fn decode_body(def: &ResourceDef, body: &[u8]) -> Result<Value, ApiError> {
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| bad_request(format!("couldn't get version/kind; json parse error: {e}")))?;
    let Some(map) = value.as_object() else {
        return Err(bad_request(
            "couldn't get version/kind; json parse error: the body is not a JSON object",
        ));
    };
    if let Some(v) = map.get("apiVersion").and_then(Value::as_str)
        && v != def.api_version()
    {
        return Err(bad_request(format!(
            "the API version in the data ({v}) does not match the expected API version ({})",
            def.api_version()
        )));
    }
    if let Some(k) = map.get("kind").and_then(Value::as_str)
        && k != def.kind
    {
        return Err(bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            def.kind
        )));
    }
    set_type(&mut value, def);
    Ok(value)
}

/// An admission failure as the HTTP error.
pub fn admission_error(e: AdmissionError) -> ApiError {
    match e {
        AdmissionError::Decode(m) => bad_request(m),
        AdmissionError::Invalid(i) => super::errors::invalid(&i),
    }
}

/// Puts the URL's namespace into `obj` (400 when the body names another).
pub fn set_namespace(def: &ResourceDef, obj: &mut Value, ns: Option<&str>) -> Result<(), ApiError> {
    let body_ns = meta_str(obj, "namespace").unwrap_or_default().to_owned();
    let Some(meta) = meta_mut(obj) else {
        // `decode_body` checked the body is an object: `metadata` is not.
        let ty = obj
            .get("metadata")
            .map_or("null", exitplan_api::render::go_json_type);
        return Err(bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: json: cannot unmarshal {ty} into Go struct field {kind}.metadata of type v1.ObjectMeta",
            kind = def.kind,
            version = def.version,
        )));
    };
    if !def.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    let ns = ns.unwrap_or_default();
    if !body_ns.is_empty() && body_ns != ns {
        return Err(bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    meta.insert("namespace".into(), ns.into());
    Ok(())
}

/// The NamespaceLifecycle check: a namespaced object needs an existing,
/// non-terminating namespace.
pub fn check_namespace(
    state: &State,
    def: &ResourceDef,
    ns: &str,
    name: &str,
) -> Result<(), ApiError> {
    if !def.namespaced {
        return Ok(());
    }
    let Some(namespaces) = find("", "v1", "namespaces") else {
        return Ok(());
    };
    let Some(stored) = state.store.current(&namespaces.key(None, ns))? else {
        return Err(not_found("", "namespaces", ns));
    };
    let value = stored.value()?;
    // NamespaceLifecycle looks at the phase only.
    if value.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
        return Err(namespace_terminating(def.group, def.plural, name, ns));
    }
    Ok(())
}

/// What a create answers with.
#[derive(Debug)]
pub enum Created {
    /// The stored object.
    Stored(Arc<StoredObject>),
    /// On dry-run: the object that would be stored.
    DryRun(Value),
}

impl Created {
    /// Renders the created object (JSON or a one-row Table) with `code`.
    pub fn render(&self, call: &Call, code: u16) -> Result<Response, ApiError> {
        match self {
            Created::Stored(stored) => render_stored(call, code, stored),
            Created::DryRun(value) => render(call, code, value),
        }
    }
}

/// Creates `obj` (already decoded, with the URL's namespace set); returns
/// the stored object (or, on dry-run, the object that would be stored).
pub async fn create_object(
    state: &State,
    def: &ResourceDef,
    mut obj: Value,
    manager: &str,
    dry_run: bool,
    record: bool,
    caller: Option<&crate::webhook::Caller>,
) -> Result<Created, ApiError> {
    let ns = meta_str(&obj, "namespace").unwrap_or_default().to_owned();
    let given_name = meta_str(&obj, "name")
        .filter(|n| !n.is_empty())
        .or_else(|| meta_str(&obj, "generateName"))
        .unwrap_or_default()
        .to_owned();
    check_namespace(state, def, &ns, &given_name)?;
    if def.kind == "Namespace" && def.group.is_empty() {
        default_namespace_phase(&mut obj);
    }
    if let Some(caller) = caller {
        let attrs = create_attributes(def, &given_name, &ns, manager, dry_run, caller);
        crate::webhook::mutate(state, &attrs, Some(&mut obj), caller).await?;
        super::rbac::check_escalation(state, def, &caller.user, &ns, "", &obj, None)?;
    }
    let _service_writes = if super::service_alloc::allocates(def) {
        let guard = state.service_writes.lock().await;
        super::service_alloc::on_create(state, def, &mut obj)?;
        Some(guard)
    } else {
        None
    };
    super::priority::check_write(state, def, &obj)?;
    let now = state.clock.now();
    def.admission
        .create(&mut obj, &system_fields(now), now)
        .map_err(admission_error)?;
    set_type(&mut obj, def);
    if record {
        patch::record_update(target(def), None, &mut obj, manager, None, now);
    }
    let name = meta_str(&obj, "name").unwrap_or_default().to_owned();
    if let Some(caller) = caller {
        let attrs = create_attributes(def, &name, &ns, manager, dry_run, caller);
        crate::webhook::validate(state, &attrs, Some(&obj), caller).await?;
    }
    if dry_run {
        return Ok(Created::DryRun(obj));
    }
    let key = def.key(Some(&ns), &name);
    let obj = super::meta::to_stored(def, obj)?;
    let stored = super::update::put_shedding_managed_fields(
        state,
        def,
        &key,
        obj,
        Precondition::Absent,
        record,
    )
    .await
    .map_err(|e| match e {
        WriteError::Conflict { .. } => already_exists(def.group, def.plural, &name),
        other => from_write(other),
    })?;
    tracing::info!(resource = def.plural, namespace = %ns, name = %name, rv = stored.revision, "created");
    Ok(Created::Stored(stored))
}

/// The webhooks' view of a create of `name` in `ns`.
fn create_attributes<'a>(
    def: &ResourceDef,
    name: &'a str,
    ns: &'a str,
    manager: &str,
    dry_run: bool,
    caller: &'a crate::webhook::Caller,
) -> crate::webhook::Attributes<'a> {
    let namespace = crate::webhook::admission_namespace(def, ns, name);
    crate::webhook::Attributes {
        dry_run,
        options: crate::webhook::write_options(manager, dry_run),
        ..crate::webhook::Attributes::of(
            def,
            crate::webhook::Operation::Create,
            "",
            name,
            namespace,
            &caller.user,
        )
    }
}

/// A new namespace is `Active` (upstream's namespace strategy).
fn default_namespace_phase(obj: &mut Value) {
    if let Some(map) = obj.as_object_mut() {
        let status = map
            .entry("status")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(status) = status.as_object_mut() {
            status.entry("phase").or_insert_with(|| "Active".into());
        }
    }
}

/// `POST` to a collection.
pub async fn create(call: &Call) -> Result<Response, ApiError> {
    if call.def.namespaced && call.namespace.is_none() {
        return Err(method_not_allowed());
    }
    let dry_run = call.query.dry_run()?;
    call.query.validate_write_options("CreateOptions")?;
    let mut obj = decode_body(call.def, &call.body)?;
    // The body's strict decoding comes first; the storage's refusal of a
    // resourceVersion much later.
    let warnings = super::fieldvalidation::check(
        super::fieldvalidation::directive(&call.query),
        call.def,
        &call.body,
        &obj,
    )?;
    if meta_str(&obj, "resourceVersion").is_some_and(|v| !v.is_empty()) {
        // etcd3 store's Create refuses it with a plain error (HTTP 500).
        return Err(super::errors::internal(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    set_namespace(call.def, &mut obj, call.ns())?;
    let manager = field_manager(&call.query, &call.headers);
    let caller = crate::webhook::caller(call);
    let created = create_object(
        &call.state,
        call.def,
        obj,
        &manager,
        dry_run,
        true,
        Some(&caller),
    )
    .await?;
    let warnings = [warnings, caller.warnings()].concat();
    Ok(super::fieldvalidation::warn(
        created.render(call, 201)?,
        &warnings,
    ))
}
