//! PATCH in the four formats through `exitplan_api::patch`: JSON Patch,
//! merge patch, strategic merge patch and server-side apply (which creates
//! an absent object). The patched object then takes the update path.

use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use exitplan_api::patch::{self, PatchError, PatchType};
use serde_json::Value;

use super::create::{create_object, set_namespace};
use super::errors::{ApiError, invalid_options, unsupported_media_type};
use super::meta::{meta_mut, meta_str, set_type, type_ref};
use super::state::Call;
use super::update::{Update, update_object};

/// The patch media types, in upstream's order.
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// How often a patch is re-applied when the object changes under it.
const ATTEMPTS: usize = 5;

fn patch_error(e: PatchError) -> ApiError {
    if let Some(detail) = e.detail.as_deref() {
        tracing::debug!(%detail, message = %e.message, "patch failed");
    }
    ApiError::from_status(e.to_status())
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
    call.query.validate_field_manager("PatchOptions")?;
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
    let state = &call.state;
    let def = call.def;
    let key = def.key(call.ns(), call.name());
    let mut last_err = None;
    for _ in 0..ATTEMPTS {
        let now = state.clock.now();
        let Some(current) = state.store.current(&key)? else {
            if ty != PatchType::Apply || call.subresource.is_some() {
                return Err(super::errors::not_found(def.group, def.plural, call.name()));
            }
            let mut obj =
                patch::server_side_apply(type_ref(def), None, &call.body, &manager, force, now)
                    .map_err(patch_error)?;
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
            match create_object(state, def, obj, &manager, dry_run, false).await {
                Ok(created) => return created.render(call, 201),
                Err(e) if e.reason() == "AlreadyExists" => {
                    last_err = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            }
        };
        let old = super::meta::served(def, current.value()?);
        let patched = match ty {
            PatchType::Json => patch::json_patch(&old, &call.body),
            PatchType::Merge => patch::merge_patch(&old, &call.body),
            PatchType::Strategic => patch::strategic_merge_patch(type_ref(def), &old, &call.body),
            PatchType::Apply => patch::server_side_apply_subresource(
                type_ref(def),
                Some(&old),
                &call.body,
                &manager,
                call.subresource.as_deref(),
                force,
                now,
            ),
        }
        .map_err(patch_error)?;
        let pinned = meta_str(&patched, "resourceVersion") != meta_str(&old, "resourceVersion");
        let mut patched: Value = patched;
        set_namespace(def, &mut patched, call.ns())?;
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
            },
        )
        .await
        {
            Ok(updated) => return updated.render(call, 200),
            // The object moved on under a patch that did not pin a
            // resourceVersion: apply the patch again to the new state.
            Err(e) if e.reason() == "Conflict" && !pinned => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| super::errors::internal("patch did not converge")))
}
