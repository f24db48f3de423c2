//! The `scale` subresource (`autoscaling/v1` Scale): GET reads the
//! parent's desired and observed replicas and its selector; PUT and PATCH
//! set the parent's desired replicas through the parent's own update rules
//! (upstream's `ScaleREST` with `scaleUpdatedObjectInfo`).

use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use exitplan_api::field::{Error, ErrorList, Path};
use exitplan_api::patch::{self, PatchType};
use exitplan_api::status::{GroupKind, InvalidError};
use k8s_openapi::api::autoscaling::v1::Scale;
use serde_json::{Value, json};

use super::errors::{ApiError, bad_request, conflict, invalid, not_found, unsupported_media_type};
use super::get::current;
use super::meta::{field_manager, meta_str};
use super::negotiate::output;
use super::respond;
use super::state::Call;
use super::update::{Update, update_object};
use crate::registry::{ResourceDef, ScaleDef};

/// The patch types a Scale accepts (no apply: kubectl never applies a Scale).
const SCALE_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

const SCALE_KIND: GroupKind = GroupKind {
    group: "autoscaling",
    kind: "Scale",
};

fn scale_def(def: &ResourceDef) -> Result<&'static ScaleDef, ApiError> {
    def.scale.ok_or_else(super::errors::resource_not_found)
}

/// The Scale of `parent` (as served), with the parent's identity.
pub fn scale_of(def: &ScaleDef, parent: &Value) -> Value {
    let mut metadata = serde_json::Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = parent.pointer(&format!("/metadata/{field}")) {
            metadata.insert(field.to_owned(), v.clone());
        }
    }
    let mut spec = serde_json::Map::new();
    let replicas = def.spec_replicas(parent);
    // `ScaleSpec.replicas` is `omitempty`.
    if replicas != 0 {
        spec.insert("replicas".into(), replicas.into());
    }
    let mut status = json!({"replicas": def.status_replicas(parent)});
    let selector = def.selector(parent);
    if !selector.is_empty() {
        status["selector"] = selector.into();
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}

/// `GET …/<name>/scale`.
pub async fn get(call: &Call) -> Result<Response, ApiError> {
    output(&call.headers, &call.query)?;
    let def = scale_def(call.def)?;
    let (_, parent) = current(&call.state, call.def, call.ns(), call.name())?;
    Ok(respond::json(200, &scale_of(def, &parent)))
}

/// A Scale body: JSON of kind `autoscaling/v1` Scale (400 otherwise).
fn decode_scale(body: &[u8]) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| bad_request(format!("couldn't get version/kind; json parse error: {e}")))?;
    check_scale_type(&value)?;
    Ok(value)
}

fn check_scale_type(value: &Value) -> Result<(), ApiError> {
    if !value.is_object() {
        return Err(bad_request(
            "couldn't get version/kind; json parse error: the body is not a JSON object",
        ));
    }
    match value.get("apiVersion").and_then(Value::as_str) {
        Some("autoscaling/v1") | None => {}
        Some(v) => {
            return Err(bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version (autoscaling/v1)"
            )));
        }
    }
    match value.get("kind").and_then(Value::as_str) {
        Some("Scale") | None => Ok(()),
        Some(k) => Err(bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind (Scale)"
        ))),
    }
}

/// `ValidateScale`: the Scale's own rules (422 `Scale.autoscaling`).
fn validate_scale(scale: &Scale, name: &str) -> Result<(), ApiError> {
    let mut errors = ErrorList::new();
    if let Some(replicas) = scale.spec.as_ref().and_then(|s| s.replicas)
        && replicas < 0
    {
        errors.push(Error::invalid(
            &Path::new("spec").child("replicas"),
            i64::from(replicas),
            "must be greater than or equal to 0",
        ));
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(invalid(&InvalidError {
        kind: SCALE_KIND,
        name: name.to_owned(),
        errors,
    }))
}

/// Writes `scale` (already patched or submitted) onto the parent `name`.
async fn write(call: &Call, scale: Value, dry_run: bool) -> Result<Response, ApiError> {
    let def = scale_def(call.def)?;
    let typed = typed_scale(&scale)?;
    let name = typed.metadata.name.clone().unwrap_or_default();
    if name != call.name() {
        return Err(bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            call.name()
        )));
    }
    validate_scale(&typed, call.name())?;
    let (stored, parent) = current(&call.state, call.def, call.ns(), call.name())?;
    let caller = crate::webhook::caller(call);
    let typed = admit_scale(call, def, &parent, scale, typed, dry_run, &caller).await?;
    if let Some(uid) = typed.metadata.uid.as_deref().filter(|u| !u.is_empty())
        && Some(uid) != meta_str(&parent, "uid")
    {
        let have = meta_str(&parent, "uid").unwrap_or_default();
        return Err(conflict(
            call.def.group,
            call.def.plural,
            call.name(),
            &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"),
        ));
    }
    let mut new = parent.clone();
    let replicas = typed.spec.and_then(|s| s.replicas).unwrap_or(0);
    def.set_spec_replicas(&mut new, replicas);
    if let Some(meta) = super::meta::meta_mut(&mut new) {
        match typed.metadata.resource_version.filter(|v| !v.is_empty()) {
            Some(rv) => meta.insert("resourceVersion".into(), rv.into()),
            None => meta.remove("resourceVersion"),
        };
    }
    let manager = field_manager(&call.query, &call.headers);
    let updated = update_object(
        &call.state,
        Update {
            def: call.def,
            current: stored,
            old: Some(parent),
            new,
            subresource: Some("scale"),
            manager: &manager,
            dry_run,
            record: true,
            caller: None,
        },
    )
    .await?
    .into_object(call.def)?;
    Ok(super::fieldvalidation::warn(
        respond::json(200, &scale_of(def, &updated)),
        &caller.warnings(),
    ))
}

fn typed_scale(scale: &Value) -> Result<Scale, ApiError> {
    serde_json::from_value(scale.clone()).map_err(|e| {
        bad_request(format!(
            "Scale in version \"v1\" cannot be handled as a Scale: {e}"
        ))
    })
}

/// The admission webhooks of an UPDATE of `<resource>/scale`: they see the
/// Scale (old: the parent's current Scale); a mutated Scale is validated
/// again.
async fn admit_scale(
    call: &Call,
    def: &ScaleDef,
    parent: &Value,
    mut scale: Value,
    typed: Scale,
    dry_run: bool,
    caller: &crate::webhook::Caller,
) -> Result<Scale, ApiError> {
    let old = scale_of(def, parent);
    let manager = field_manager(&call.query, &call.headers);
    let attrs = crate::webhook::Attributes {
        kind: crate::webhook::Gvn::new("autoscaling", "v1", "Scale"),
        old_object: Some(&old),
        dry_run,
        options: crate::webhook::write_options(&manager, dry_run),
        ..crate::webhook::Attributes::of(
            call.def,
            crate::webhook::Operation::Update,
            "scale",
            call.name(),
            call.ns().unwrap_or_default(),
            &caller.user,
        )
    };
    let before = scale.clone();
    crate::webhook::mutate(&call.state, &attrs, Some(&mut scale), caller).await?;
    let typed = if scale == before {
        typed
    } else {
        let typed = typed_scale(&scale)?;
        validate_scale(&typed, call.name())?;
        typed
    };
    crate::webhook::validate(&call.state, &attrs, Some(&scale), caller).await?;
    Ok(typed)
}

/// `PUT …/<name>/scale`.
pub async fn update(call: &Call) -> Result<Response, ApiError> {
    let dry_run = call.query.dry_run()?;
    call.query.validate_write_options("UpdateOptions")?;
    scale_def(call.def)?;
    let scale = decode_scale(&call.body)?;
    write(call, scale, dry_run).await
}

/// `PATCH …/<name>/scale`: the patch applies to the Scale.
pub async fn patch(call: &Call) -> Result<Response, ApiError> {
    let content_type = call
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let ty = PatchType::from_content_type(content_type)
        .filter(|t| *t != PatchType::Apply)
        .ok_or_else(|| unsupported_media_type(SCALE_PATCH_TYPES))?;
    let dry_run = call.query.dry_run()?;
    call.query.validate_write_options("PatchOptions")?;
    let def = scale_def(call.def)?;
    let (_, parent) =
        current(&call.state, call.def, call.ns(), call.name()).map_err(|e| match e.code() {
            404 => not_found(call.def.group, call.def.plural, call.name()),
            _ => e,
        })?;
    let old = scale_of(def, &parent);
    let scale_type = patch::TypeRef {
        group: "autoscaling",
        kind: "Scale",
    };
    let patched = match ty {
        PatchType::Json => patch::json_patch(&old, &call.body),
        PatchType::Merge => patch::merge_patch(&old, &call.body),
        _ => patch::strategic_merge_patch(scale_type, &old, &call.body),
    }
    .map_err(|e| ApiError::from_status(e.to_status()))?;
    check_scale_type(&patched)?;
    write(call, patched, dry_run).await
}
