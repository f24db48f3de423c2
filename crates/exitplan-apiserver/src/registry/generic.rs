//! Admission of kinds served without rules of their own yet: the object must
//! decode into its k8s-openapi type (so a field of the wrong type is a 400,
//! and unknown fields are dropped), `metadata` is validated as for every
//! kind, and kinds with a `/status` subresource keep spec and status apart as
//! upstream's registry strategies do: a create starts with an empty status
//! and generation 1, an update of the main resource keeps the stored status
//! and bumps the generation when the spec changes, a `/status` update keeps
//! the stored spec.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use exitplan_api::absent::find_absent;
use exitplan_api::strategy::{
    self, Context, MetadataOnlyStrategy, SystemFields, fill_system_fields,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::admission::{Admission, AdmissionError};

/// Metadata-only admission of `T`; `STATUS` says whether the kind has a
/// `/status` subresource (spec/status split and generation).
pub struct Generic<T, const NAMESPACED: bool, const STATUS: bool>(PhantomData<fn() -> T>);

impl<T, const NAMESPACED: bool, const STATUS: bool> Generic<T, NAMESPACED, STATUS> {
    /// The admission of `T`.
    pub const fn new() -> Self {
        Generic(PhantomData)
    }
}

impl<T, const NAMESPACED: bool, const STATUS: bool> Default for Generic<T, NAMESPACED, STATUS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const NAMESPACED: bool, const STATUS: bool> std::fmt::Debug
    for Generic<T, NAMESPACED, STATUS>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Generic<{}>", std::any::type_name::<T>())
    }
}

type Meta<T, const NAMESPACED: bool> = MetadataOnlyStrategy<T, NAMESPACED>;

fn decode<T>(value: &Value) -> Result<T, AdmissionError>
where
    T: DeserializeOwned + k8s_openapi::Resource,
{
    <T as serde::Deserialize>::deserialize(value).map_err(|e| {
        AdmissionError::Decode(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {e}",
            kind = T::KIND,
            version = T::VERSION
        ))
    })
}

fn encode<T: Serialize>(obj: &T, into: &mut Value) -> Result<(), AdmissionError> {
    *into = serde_json::to_value(obj).map_err(|e| AdmissionError::Decode(e.to_string()))?;
    Ok(())
}

fn generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn set_generation(obj: &mut Value, generation: i64) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("generation".into(), json!(generation));
    }
}

/// Replaces `field` of `new` with `old`'s (absent when `old` has none).
fn keep(new: &mut Value, old: &Value, field: &str) {
    if let Some(new) = new.as_object_mut() {
        match old.get(field) {
            Some(v) => {
                new.insert(field.into(), v.clone());
            }
            None => {
                new.remove(field);
            }
        }
    }
}

impl<T, const NAMESPACED: bool, const STATUS: bool> Generic<T, NAMESPACED, STATUS>
where
    T: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Clone
        + DeserializeOwned
        + Serialize,
{
    fn update_with(
        new: &mut Value,
        old: &Value,
        now: Timestamp,
        admit: fn(&mut T, &T, &Context<'_>) -> Result<(), exitplan_api::status::InvalidError>,
    ) -> Result<(), AdmissionError> {
        let absent = find_absent(new);
        let mut typed: T = decode(new)?;
        let old_typed: T = decode(old)?;
        admit(
            &mut typed,
            &old_typed,
            &Context {
                now,
                absent: &absent,
            },
        )?;
        encode(&typed, new)
    }
}

impl<T, const NAMESPACED: bool, const STATUS: bool> Admission for Generic<T, NAMESPACED, STATUS>
where
    T: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Clone
        + DeserializeOwned
        + Serialize,
{
    fn decode_error(&self, obj: &Value) -> Option<String> {
        <T as serde::Deserialize>::deserialize(obj)
            .err()
            .map(|e| e.to_string())
    }

    fn round_trip(&self, obj: &Value) -> Option<Value> {
        let typed = <T as serde::Deserialize>::deserialize(obj).ok()?;
        serde_json::to_value(typed).ok()
    }

    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        let absent = find_absent(obj);
        let mut typed: T = decode(obj)?;
        fill_system_fields(typed.metadata_mut(), system);
        strategy::admit_create::<Meta<T, NAMESPACED>>(
            &mut typed,
            &Context {
                now,
                absent: &absent,
            },
        )?;
        encode(&typed, obj)?;
        if STATUS {
            if let Some(o) = obj.as_object_mut() {
                o.insert("status".into(), json!({}));
            }
            set_generation(obj, 1);
        }
        Ok(())
    }

    fn update(&self, new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError> {
        if STATUS {
            keep(new, old, "status");
        }
        Self::update_with(new, old, now, strategy::admit_update::<Meta<T, NAMESPACED>>)?;
        if STATUS {
            let bump = new.get("spec") != old.get("spec");
            set_generation(new, generation(old) + i64::from(bump));
        }
        Ok(())
    }

    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        keep(new, old, "spec");
        Self::update_with(
            new,
            old,
            now,
            strategy::admit_status_update::<Meta<T, NAMESPACED>>,
        )
    }
}
