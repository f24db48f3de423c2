//! Registry strategies: what create, update and status update may change, and
//! which validation runs — upstream's `pkg/registry/<group>/<resource>/strategy.go`.
//!
//! Every write goes through [`admit_create`], [`admit_update`] or
//! [`admit_status_update`], in upstream's order: defaulting, the strategy's
//! `prepare_*` (clearing or copying what the caller may not set), then
//! validation. The offline `exitplan validate` command and the embedded API
//! server call the same functions, so they accept and reject the same objects.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::absent::Absent;
use crate::field::ErrorList;
use crate::status::{GroupKind, InvalidError};

/// What validation needs beyond the objects themselves.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The server's clock (time-window rules compare against it).
    pub now: Timestamp,
    /// Required fields missing from the submitted JSON of the new object.
    pub absent: &'a Absent,
}

/// The per-kind rules of a served resource.
pub trait Strategy {
    /// The k8s-openapi type of the resource.
    type Object: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta> + Clone;

    /// Whether objects live in a namespace.
    const NAMESPACED: bool = true;

    /// The group-qualified kind used in error messages.
    fn group_kind() -> GroupKind {
        GroupKind {
            group: <Self::Object as k8s_openapi::Resource>::GROUP,
            kind: <Self::Object as k8s_openapi::Resource>::KIND,
        }
    }

    /// Fills in defaults (`SetDefaults_*`), run on every decoded object.
    fn default(_obj: &mut Self::Object) {}

    /// Clears what a create may not set (`PrepareForCreate`).
    fn prepare_for_create(_obj: &mut Self::Object) {}

    /// Validates a new object (`Validate`).
    fn validate_create(obj: &Self::Object, ctx: &Context<'_>) -> ErrorList;

    /// Copies what an update of the main resource may not change (`PrepareForUpdate`).
    fn prepare_for_update(_new: &mut Self::Object, _old: &Self::Object) {}

    /// Validates an update of the main resource (`ValidateUpdate`).
    fn validate_update(new: &Self::Object, old: &Self::Object, ctx: &Context<'_>) -> ErrorList;

    /// Copies what a `/status` update may not change (spec and metadata).
    fn prepare_for_status_update(_new: &mut Self::Object, _old: &Self::Object) {}

    /// Validates a `/status` update.
    fn validate_status_update(
        new: &Self::Object,
        old: &Self::Object,
        ctx: &Context<'_>,
    ) -> ErrorList;
}

fn name_of<T: k8s_openapi::Metadata<Ty = ObjectMeta>>(obj: &T) -> String {
    let m = obj.metadata();
    m.name
        .clone()
        .filter(|n| !n.is_empty())
        .or_else(|| m.generate_name.clone())
        .unwrap_or_default()
}

fn result<S: Strategy>(obj: &S::Object, errors: ErrorList) -> Result<(), InvalidError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(InvalidError {
            kind: S::group_kind(),
            name: name_of(obj),
            errors,
        })
    }
}

/// Defaults, prepares and validates a new object in place.
pub fn admit_create<S: Strategy>(
    obj: &mut S::Object,
    ctx: &Context<'_>,
) -> Result<(), InvalidError> {
    S::default(obj);
    S::prepare_for_create(obj);
    let errs = S::validate_create(obj, ctx);
    result::<S>(obj, errs)
}

/// Defaults, prepares and validates an update of the main resource in place.
pub fn admit_update<S: Strategy>(
    new: &mut S::Object,
    old: &S::Object,
    ctx: &Context<'_>,
) -> Result<(), InvalidError> {
    S::default(new);
    S::prepare_for_update(new, old);
    let errs = S::validate_update(new, old, ctx);
    result::<S>(new, errs)
}

/// Defaults, prepares and validates a `/status` update in place.
pub fn admit_status_update<S: Strategy>(
    new: &mut S::Object,
    old: &S::Object,
    ctx: &Context<'_>,
) -> Result<(), InvalidError> {
    S::default(new);
    S::prepare_for_status_update(new, old);
    let errs = S::validate_status_update(new, old, ctx);
    result::<S>(new, errs)
}

/// The generation after an update of the main resource: `old + 1` when the
/// spec `changed`, else `old` (a missing generation counts as 0; the value a
/// client sends is ignored, as `rest.BeforeUpdate` does).
pub fn next_generation(old: Option<i64>, changed: bool) -> Option<i64> {
    if changed {
        Some(old.unwrap_or(0).saturating_add(1))
    } else {
        old
    }
}

/// Metadata a `/status` write may not change, reset to the stored values:
/// labels, annotations, finalizers, owner references, deletionTimestamp and
/// generation (`ResetObjectMetaForStatus`; managedFields stay, as upstream).
/// Changes are ignored, not errors.
pub fn reset_metadata_for_status(new: &mut ObjectMeta, old: &ObjectMeta) {
    new.labels.clone_from(&old.labels);
    new.annotations.clone_from(&old.annotations);
    new.finalizers.clone_from(&old.finalizers);
    new.owner_references.clone_from(&old.owner_references);
    new.deletion_timestamp.clone_from(&old.deletion_timestamp);
    new.generation = old.generation;
}
