//! PATCH in the four formats through `exitplan_api::patch`: JSON Patch,
//! merge patch, strategic merge patch and server-side apply (which creates
//! an absent object). The patched object then takes the update path.

use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use exitplan_api::field::go_quote;
use exitplan_api::patch::{self, GoField, GoTypes, PatchError, PatchType};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};
use serde_json::Value;

use super::create::{create_object, set_namespace};
use super::errors::{ApiError, bad_request, failure, invalid_options, unsupported_media_type};
use super::meta::{meta_mut, meta_str, set_type, target};
use super::state::Call;
use super::update::{Update, update_object};
use crate::discovery::openapi::{DEFINITIONS, definition_name};

/// The patch media types of built-in kinds, in upstream's order.
pub const PATCH_TYPES: &[&str] = patch::BUILTIN_PATCH_TYPES;

/// How often a patch is re-applied when the object changes under it.
const ATTEMPTS: usize = 5;

fn patch_error(e: PatchError) -> ApiError {
    if let Some(detail) = e.detail.as_deref() {
        tracing::debug!(%detail, message = %e.message, "patch failed");
    }
    ApiError::from_status(e.to_status())
}

/// What kube-apiserver answers when the patched object does not decode
/// into the kind's type (a field of the wrong type): 422 `Invalid` of
/// `errors.NewInvalid(schema.GroupKind{}, "", …)` with one cause on `patch`.
fn undecodable(value: &str, detail: &str) -> ApiError {
    let body = format!("Invalid value: {}: {detail}", go_quote(value));
    failure(
        422,
        "Invalid",
        format!(" \"\" is invalid: patch: {body}"),
        Some(StatusDetails {
            causes: Some(vec![StatusCause {
                field: Some("patch".to_owned()),
                message: Some(body),
                reason: Some("FieldValueInvalid".to_owned()),
            }]),
            ..StatusDetails::default()
        }),
    )
}

/// The decoder's error for a patched document that is not an object (a
/// merge patch that is an array becomes the document): the serializer
/// cannot even read its `apiVersion` and `kind` (`SimpleMetaFactory`).
fn not_an_object(patched: &Value) -> Option<String> {
    let json_type = match patched {
        Value::Object(_) | Value::Null => return None,
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
    };
    Some(format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {json_type} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
    ))
}

/// `checkName`: a patch may not rename the object (400, before validation).
fn check_name(patched: &Value, name: &str) -> Result<(), ApiError> {
    let got = meta_str(patched, "name").unwrap_or_default();
    if got == name {
        return Ok(());
    }
    Err(bad_request(format!(
        "the name of the object ({got}) does not match the name on the URL ({name})"
    )))
}

/// The Go types of the served kinds, as the OpenAPI definitions describe
/// them (a `$ref`, an `allOf` of one, `items`, `additionalProperties`).
struct OpenApiTypes;

/// The definition a schema refers to, if it is a struct (has properties).
fn struct_ref(schema: &'static Value) -> Option<&'static str> {
    let target = schema
        .get("$ref")
        .or_else(|| schema.get("allOf")?.get(0)?.get("$ref"))?
        .as_str()?;
    let defs: &'static serde_json::Map<String, Value> = &DEFINITIONS;
    let (name, def) = defs.get_key_value(target.rsplit('/').next()?)?;
    def.get("properties").is_some().then_some(name.as_str())
}

impl GoTypes for OpenApiTypes {
    fn field(&self, definition: &str, name: &str) -> GoField<'_> {
        let defs: &'static serde_json::Map<String, Value> = &DEFINITIONS;
        let Some(prop) = defs
            .get(definition)
            .and_then(|d| d.get("properties"))
            .and_then(|p| p.get(name))
        else {
            return GoField::Unknown;
        };
        if let Some(items) = prop.get("items") {
            return GoField::List(struct_ref(items));
        }
        if let Some(values) = prop.get("additionalProperties") {
            return GoField::Map(struct_ref(values));
        }
        struct_ref(prop).map_or(GoField::Scalar, GoField::Struct)
    }
}

/// `PATCH …/<name>` and `PATCH …/<name>/status`.
pub async fn patch(call: &Call) -> Result<Response, ApiError> {
    let content_type = call
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(ty) = PatchType::from_content_type(content_type) else {
        return Err(unsupported_media_type(PATCH_TYPES));
    };
    let dry_run = call.query.dry_run()?;
    call.query.validate_write_options("PatchOptions")?;
    let force = call.query.flag("force")?;
    let manager = call.query.non_empty("fieldManager").map(str::to_owned);
    if ty == PatchType::Apply && manager.is_none() {
        return Err(invalid_options(
            "PatchOptions",
            "fieldManager",
            "FieldValueRequired",
            "Required value: is required for apply patch",
        ));
    }
    if ty != PatchType::Apply && force {
        return Err(invalid_options(
            "PatchOptions",
            "force",
            "FieldValueForbidden",
            "Forbidden: may not be specified for non-apply patch",
        ));
    }
    let manager = manager.unwrap_or_else(|| super::meta::field_manager(&call.query, &call.headers));
    let strict = super::fieldvalidation::PatchCheck::new(&call.query, ty, &call.body);
    let state = &call.state;
    let def = call.def;
    let key = def.key(call.ns(), call.name());
    let caller = crate::webhook::caller(call);
    let mut last_err = None;
    for _ in 0..ATTEMPTS {
        let now = state.clock.now();
        let Some(current) = state.store.current(&key)? else {
            if ty != PatchType::Apply || call.subresource.is_some() {
                return Err(super::errors::not_found(def.group, def.plural, call.name()));
            }
            let body = strict.apply_body(&call.body)?;
            let mut obj = patch::server_side_apply(target(def), None, &body, &manager, force, now)
                .map_err(patch_error)?;
            let warnings = strict.check(def, &obj)?;
            if meta_str(&obj, "name").is_some_and(|n| n != call.name()) {
                return Err(super::errors::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({})",
                    meta_str(&obj, "name").unwrap_or_default(),
                    call.name()
                )));
            }
            set_type(&mut obj, def);
            set_namespace(def, &mut obj, call.ns())?;
            if let Some(meta) = meta_mut(&mut obj) {
                meta.entry("name").or_insert_with(|| call.name().into());
            }
            match create_object(state, def, obj, &manager, dry_run, false, Some(&caller)).await {
                Ok(created) => {
                    let warnings = [warnings, caller.warnings()].concat();
                    return Ok(super::fieldvalidation::warn(
                        created.render(call, 201)?,
                        &warnings,
                    ));
                }
                Err(e) if e.reason() == "AlreadyExists" => {
                    last_err = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            }
        };
        let old = super::meta::served(def, current.value()?);
        let body = strict.apply_body(&call.body)?;
        let patched = match ty {
            PatchType::Json => patch::json_patch(&old, &body),
            PatchType::Merge => patch::merge_patch(&old, &body),
            PatchType::Strategic => {
                // Without the kind's definition nothing can be looked up.
                let root = definition_name(def);
                if DEFINITIONS.contains_key(&root) {
                    patch::strategic_merge_patch_typed(
                        target(def),
                        &old,
                        &body,
                        &OpenApiTypes,
                        &root,
                    )
                } else {
                    patch::strategic_merge_patch(target(def), &old, &body)
                }
            }
            PatchType::Apply => patch::server_side_apply_subresource(
                target(def),
                Some(&old),
                &body,
                &manager,
                call.subresource.as_deref(),
                force,
                now,
            ),
        }
        .map_err(patch_error)?;
        if ty != PatchType::Apply
            && let Some(detail) =
                not_an_object(&patched).or_else(|| def.admission.decode_error(&patched))
        {
            return Err(undecodable(
                &patch::undecodable_value(ty, &call.body, &patched),
                &detail,
            ));
        }
        let warnings = strict.check(def, &patched)?;
        let pinned = meta_str(&patched, "resourceVersion") != meta_str(&old, "resourceVersion");
        let mut patched: Value = patched;
        set_namespace(def, &mut patched, call.ns())?;
        check_name(&patched, call.name())?;
        match update_object(
            state,
            Update {
                def,
                current,
                old: Some(old),
                new: patched,
                subresource: call.subresource.as_deref(),
                manager: &manager,
                dry_run,
                record: ty != PatchType::Apply,
                caller: Some(&caller),
            },
        )
        .await
        {
            Ok(updated) => {
                let warnings = [warnings, caller.warnings()].concat();
                return Ok(super::fieldvalidation::warn(
                    updated.render(call, 200)?,
                    &warnings,
                ));
            }
            // The object moved on under a patch that did not pin a
            // resourceVersion: apply the patch again to the new state.
            Err(e) if e.reason() == "Conflict" && !pinned => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| super::errors::internal("patch did not converge")))
}

#[cfg(test)]
mod tests {
    use exitplan_api::patch::Target;

    use crate::registry::RESOURCES;
    use crate::rest::meta::type_ref;

    /// Every served kind has a patch schema derived from the definitions,
    /// at the served version, with the reset fields its subresources imply
    /// (the main resource ignores `status` exactly when `/status` is served).
    #[test]
    fn every_served_kind_has_a_patch_schema() {
        for def in RESOURCES {
            let target = Target::builtin(type_ref(def));
            let ts = target
                .schema
                .unwrap_or_else(|| panic!("{}/{} has no patch schema", def.group, def.kind));
            assert_eq!(ts.version, def.version, "{}/{}", def.group, def.kind);
            assert_eq!(
                ts.status_subresource,
                def.has_subresource("status"),
                "{}/{}: status subresource",
                def.group,
                def.kind
            );
            assert!(ts.strategic, "{}/{}", def.group, def.kind);
        }
    }
}
