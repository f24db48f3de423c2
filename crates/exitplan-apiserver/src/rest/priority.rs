//! kube-apiserver's `Priority` admission plugin for PriorityClasses, at
//! the REST edge: one `globalDefault` class at most, and the system
//! classes cannot be deleted. The decisions are
//! `exitplan_api::scheduling::priority_class`'s; this reads the store.

use exitplan_api::scheduling::priority_class::{delete_refusal, global_default_conflict};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails;
use serde_json::Value;

use super::errors::{ApiError, failure, group_resource};
use super::state::State;
use crate::registry::ResourceDef;

fn is_priority_classes(def: &ResourceDef) -> bool {
    def.group == "scheduling.k8s.io" && def.plural == "priorityclasses"
}

/// 403 `Forbidden` (`errors.NewForbidden`).
fn forbidden(def: &ResourceDef, name: &str, why: &str) -> ApiError {
    failure(
        403,
        "Forbidden",
        format!(
            "{} \"{name}\" is forbidden: {why}",
            group_resource(def.group, def.plural)
        ),
        Some(StatusDetails {
            group: Some(def.group.to_owned()),
            kind: Some(def.plural.to_owned()),
            name: Some(name.to_owned()),
            ..StatusDetails::default()
        }),
    )
}

/// Refuses a create or update that would make a second global default.
pub fn check_write(state: &State, def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    if !is_priority_classes(def) {
        return Ok(());
    }
    let Ok(new) = serde_json::from_value::<PriorityClass>(obj.clone()) else {
        return Ok(()); // admission reports the decode error
    };
    let (stored, _) = state.store.list(&def.prefix(None));
    let existing: Vec<PriorityClass> = stored
        .iter()
        .filter_map(|s| s.value().ok())
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    match global_default_conflict(&new, &existing) {
        Some(conflict) => Err(forbidden(
            def,
            new.metadata.name.as_deref().unwrap_or_default(),
            &conflict.to_string(),
        )),
        None => Ok(()),
    }
}

/// Refuses the deletion of a system priority class.
pub fn check_delete(def: &ResourceDef, name: &str) -> Result<(), ApiError> {
    match delete_refusal(name).filter(|_| is_priority_classes(def)) {
        Some(why) => Err(forbidden(def, name, why)),
        None => Ok(()),
    }
}
