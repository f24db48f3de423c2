//! Admission of writes: JSON in, the object to store (or the error) out,
//! through the `exitplan_api` registry strategies.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use exitplan_api::absent::find_absent;
use exitplan_api::core::namespace::{NamespaceFinalizeStrategy, NamespaceStrategy};
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::core::pod_subresources::{PodEphemeralContainersStrategy, PodResizeStrategy};
use exitplan_api::quantities::{Quantities, first_malformed};
use exitplan_api::status::InvalidError;
use exitplan_api::strategy::{
    self, Context, MetadataOnlyStrategy, Strategy, SystemFields, fill_system_fields,
};
use jiff::Timestamp;

/// Why a write was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum AdmissionError {
    /// The body does not decode into the kind's schema (HTTP 400).
    #[error("{0}")]
    Decode(String),
    /// The object is invalid (HTTP 422).
    #[error(transparent)]
    Invalid(#[from] InvalidError),
}

/// How a resource admits creates, updates and `/status` updates. On success
/// the JSON value is replaced by the object to store.
pub trait Admission: Send + Sync + std::fmt::Debug {
    /// Fills system fields, defaults, prepares and validates a new object.
    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        now: Timestamp,
    ) -> Result<(), AdmissionError>;
    /// Defaults, prepares and validates an update of the main resource.
    fn update(&self, new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError>;
    /// The decoder's error when `obj` does not decode into the kind's type
    /// (a patch that produced a field of the wrong type); `None` when it
    /// decodes.
    fn decode_error(&self, obj: &Value) -> Option<String>;
    /// `obj` as the kind's type encodes it (unknown fields dropped), if it
    /// decodes: what `fieldValidation` compares the submitted object with.
    fn round_trip(&self, obj: &Value) -> Option<Value>;
    /// Defaults, prepares and validates a `/status` update.
    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError>;
    /// Defaults, prepares and validates an update through another writable
    /// subresource (`pods/ephemeralcontainers`, `pods/resize`). Only
    /// resources that serve one override this; the router never calls it
    /// for others.
    fn update_subresource(
        &self,
        subresource: &str,
        _new: &mut Value,
        _old: &Value,
        _now: Timestamp,
    ) -> Result<(), AdmissionError> {
        Err(AdmissionError::Decode(format!(
            "the server does not write the {subresource} subresource of this resource"
        )))
    }
}

/// Admission through an `exitplan_api` [`Strategy`].
pub struct Typed<S>(PhantomData<fn() -> S>);

impl<S> Typed<S> {
    /// The adapter for `S`.
    pub const fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<S> Default for Typed<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> std::fmt::Debug for Typed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Typed<{}>", std::any::type_name::<S>())
    }
}

/// Admission that checks only metadata (kinds without rules of their own yet).
pub type MetadataOnly<T, const NAMESPACED: bool> = Typed<MetadataOnlyStrategy<T, NAMESPACED>>;

fn decode_error<T: k8s_openapi::Resource>(e: impl std::fmt::Display) -> AdmissionError {
    AdmissionError::Decode(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: {e}",
        kind = T::KIND,
        version = T::VERSION
    ))
}

fn decode<T: DeserializeOwned + k8s_openapi::Resource>(value: &Value) -> Result<T, AdmissionError> {
    <T as serde::Deserialize>::deserialize(value).map_err(decode_error::<T>)
}

/// Decodes a submitted object: also refuses a malformed quantity, as
/// upstream's decoder does (`Quantity.UnmarshalJSON`).
fn decode_new<T>(value: &Value) -> Result<T, AdmissionError>
where
    T: DeserializeOwned + k8s_openapi::Resource + Quantities,
{
    let typed: T = decode(value)?;
    match first_malformed(&typed) {
        Some(e) => Err(decode_error::<T>(e)),
        None => Ok(typed),
    }
}

fn encode<T: Serialize>(obj: &T, into: &mut Value) -> Result<(), AdmissionError> {
    *into = serde_json::to_value(obj).map_err(|e| AdmissionError::Decode(e.to_string()))?;
    Ok(())
}

/// The update of a main resource through strategy `S` (the path of every
/// subresource with a strategy of its own).
fn update_through<S>(new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError>
where
    S: Strategy,
    S::Object: DeserializeOwned + Serialize + Quantities,
{
    update_typed::<S>(new, old, now, strategy::admit_update::<S>)
}

/// A strategy's admission of an update (`admit_update`, `admit_status_update`).
type Admit<T> = fn(&mut T, &T, &Context<'_>) -> Result<(), InvalidError>;

/// An update of `old` to `new` decoded as `S::Object`, admitted by `admit`
/// (the main resource's or `/status`'s rules) and encoded back into `new`.
fn update_typed<S>(
    new: &mut Value,
    old: &Value,
    now: Timestamp,
    admit: Admit<S::Object>,
) -> Result<(), AdmissionError>
where
    S: Strategy,
    S::Object: DeserializeOwned + Serialize + Quantities,
{
    let absent = find_absent(new);
    let mut typed: S::Object = decode_new(new)?;
    let old: S::Object = decode(old)?;
    admit(
        &mut typed,
        &old,
        &Context {
            now,
            absent: &absent,
        },
    )?;
    encode(&typed, new)
}

/// Pod admission: the Pod strategy, plus `pods/ephemeralcontainers` and
/// `pods/resize` through their own strategies.
#[derive(Debug, Default)]
pub struct PodAdmission;

impl Admission for PodAdmission {
    fn decode_error(&self, obj: &Value) -> Option<String> {
        Typed::<PodStrategy>::new().decode_error(obj)
    }

    fn round_trip(&self, obj: &Value) -> Option<Value> {
        Typed::<PodStrategy>::new().round_trip(obj)
    }

    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        Typed::<PodStrategy>::new().create(obj, system, now)
    }

    fn update(&self, new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError> {
        Typed::<PodStrategy>::new().update(new, old, now)
    }

    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        Typed::<PodStrategy>::new().update_status(new, old, now)
    }

    fn update_subresource(
        &self,
        subresource: &str,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        match subresource {
            "ephemeralcontainers" => {
                update_through::<PodEphemeralContainersStrategy>(new, old, now)
            }
            "resize" => update_through::<PodResizeStrategy>(new, old, now),
            other => Err(AdmissionError::Decode(format!(
                "the server does not write the {other} subresource of pods"
            ))),
        }
    }
}

impl<S> Admission for Typed<S>
where
    S: Strategy,
    S::Object: DeserializeOwned + Serialize + Quantities,
{
    fn decode_error(&self, obj: &Value) -> Option<String> {
        <S::Object as serde::Deserialize>::deserialize(obj)
            .err()
            .map(|e| e.to_string())
    }

    fn round_trip(&self, obj: &Value) -> Option<Value> {
        let typed = <S::Object as serde::Deserialize>::deserialize(obj).ok()?;
        serde_json::to_value(typed).ok()
    }

    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        let absent = find_absent(obj);
        let mut typed: S::Object = decode_new(obj)?;
        fill_system_fields(k8s_openapi::Metadata::metadata_mut(&mut typed), system);
        strategy::admit_create::<S>(
            &mut typed,
            &Context {
                now,
                absent: &absent,
            },
        )?;
        encode(&typed, obj)
    }

    fn update(&self, new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError> {
        update_through::<S>(new, old, now)
    }

    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        update_typed::<S>(new, old, now, strategy::admit_status_update::<S>)
    }
}

/// Namespace admission: the Namespace strategy, plus `namespaces/finalize`
/// through its own strategy.
#[derive(Debug, Default)]
pub struct NamespaceAdmission(pub Typed<NamespaceStrategy>);

impl Admission for NamespaceAdmission {
    fn decode_error(&self, obj: &Value) -> Option<String> {
        self.0.decode_error(obj)
    }

    fn round_trip(&self, obj: &Value) -> Option<Value> {
        self.0.round_trip(obj)
    }

    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        self.0.create(obj, system, now)
    }

    fn update(&self, new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError> {
        self.0.update(new, old, now)
    }

    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        self.0.update_status(new, old, now)
    }

    fn update_subresource(
        &self,
        subresource: &str,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        match subresource {
            "finalize" => update_through::<NamespaceFinalizeStrategy>(new, old, now),
            other => Err(AdmissionError::Decode(format!(
                "the server does not write the {other} subresource of namespaces"
            ))),
        }
    }
}
