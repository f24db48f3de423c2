//! Registry strategies: what create, update and status update may change, and
//! which validation runs — upstream's `pkg/registry/<group>/<resource>/strategy.go`.
//!
//! Every write goes through [`admit_create`], [`admit_update`] or
//! [`admit_status_update`], in upstream's order: defaulting, the strategy's
//! `prepare_*` (clearing or copying what the caller may not set), then
//! validation. The offline `exitplan validate` command and the embedded API
//! server call the same functions, so they accept and reject the same objects.

use jiff::Timestamp;
use k8s_openapi::Metadata as _;
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

/// Values the API server assigns to every new object (`rest.BeforeCreate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemFields {
    /// The new object's UID (kube-apiserver always assigns a fresh one).
    pub uid: String,
    /// The creation time (the server's clock, whole seconds).
    pub creation_timestamp: Timestamp,
    /// Five characters appended to `generateName` when `name` is empty.
    pub generated_name_suffix: String,
}

/// Longest `generateName` prefix kept before the random suffix (`maxGeneratedNameLength`).
pub const MAX_GENERATED_NAME_PREFIX: usize = 58;

/// Fills what kube-apiserver sets on create before validation: a name from
/// `generateName` (prefix cut to 58 bytes, then the suffix) when `name` is
/// empty, the UID and the creation timestamp; clears `deletionTimestamp` and
/// `deletionGracePeriodSeconds`. Call it before [`admit_create`].
pub fn fill_system_fields(meta: &mut ObjectMeta, fields: &SystemFields) {
    let name_empty = meta.name.as_deref().unwrap_or_default().is_empty();
    if let Some(base) = meta
        .generate_name
        .as_deref()
        .filter(|g| name_empty && !g.is_empty())
    {
        let mut cut = base.len().min(MAX_GENERATED_NAME_PREFIX);
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        meta.name = Some(format!("{}{}", &base[..cut], fields.generated_name_suffix));
    }
    meta.uid = Some(fields.uid.clone());
    meta.creation_timestamp = Some(crate::time::mtime(fields.creation_timestamp));
    meta.deletion_timestamp = None;
    meta.deletion_grace_period_seconds = None;
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
    keep_generation(new.metadata_mut(), old.metadata());
    S::prepare_for_update(new, old);
    keep_system_fields(new.metadata_mut(), old.metadata());
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
    keep_generation(new.metadata_mut(), old.metadata());
    S::prepare_for_status_update(new, old);
    keep_system_fields(new.metadata_mut(), old.metadata());
    let errs = S::validate_status_update(new, old, ctx);
    result::<S>(new, errs)
}

/// `rest.BeforeUpdate`, before the strategy runs: a client cannot set the
/// generation (the strategy bumps it from the stored value when the spec changes).
fn keep_generation(new: &mut ObjectMeta, old: &ObjectMeta) {
    new.generation = old.generation;
}

/// `rest.BeforeUpdate`, after the strategy ran: the creation time is the
/// stored one, an update can never remove or change a deletion timestamp nor
/// remove the grace period, and an omitted UID is the stored one.
fn keep_system_fields(new: &mut ObjectMeta, old: &ObjectMeta) {
    if old.creation_timestamp.is_some() {
        new.creation_timestamp.clone_from(&old.creation_timestamp);
    }
    if old.deletion_timestamp.is_some() {
        new.deletion_timestamp.clone_from(&old.deletion_timestamp);
    }
    if old.deletion_grace_period_seconds.is_some() && new.deletion_grace_period_seconds.is_none() {
        new.deletion_grace_period_seconds = old.deletion_grace_period_seconds;
    }
    if new.uid.as_deref().unwrap_or_default().is_empty() {
        new.uid.clone_from(&old.uid);
    }
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

/// Metadata a `/status` write of a `lifecycle.k8s.io` kind may not change
/// (eviction spec §4.3), reset to the stored values:
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

/// A strategy that validates only `metadata`, for kinds whose own rules
/// exitplan does not implement (yet): names, namespace, labels, annotations,
/// owner references, finalizers on create; identity and resourceVersion
/// rules on update. `NAMESPACED` says whether objects live in a namespace.
#[derive(Debug)]
pub struct MetadataOnlyStrategy<T, const NAMESPACED: bool>(std::marker::PhantomData<fn() -> T>);

impl<T, const NAMESPACED: bool> Strategy for MetadataOnlyStrategy<T, NAMESPACED>
where
    T: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta> + Clone,
{
    type Object = T;
    const NAMESPACED: bool = NAMESPACED;

    fn validate_create(obj: &T, _ctx: &Context<'_>) -> ErrorList {
        crate::meta::validate_object_meta(
            obj.metadata(),
            NAMESPACED,
            crate::meta::NameRule::Subdomain,
        )
    }

    fn validate_update(new: &T, old: &T, _ctx: &Context<'_>) -> ErrorList {
        crate::meta::validate_object_meta_update(new.metadata(), old.metadata())
    }

    fn validate_status_update(new: &T, old: &T, _ctx: &Context<'_>) -> ErrorList {
        crate::meta::validate_object_meta_update(new.metadata(), old.metadata())
    }
}

/// Helpers the strategies' unit tests share.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value;

    use super::{Context, Strategy, admit_create};
    use crate::absent::find_absent;
    use crate::field::ErrorList;

    /// `v` admitted as a new object of `S` at the Unix epoch (fields absent
    /// from `v` read as absent); on success the object as stored, with
    /// resourceVersion `1`, ready to be the old object of an update.
    pub(crate) fn created<S>(v: &Value) -> Result<S::Object, ErrorList>
    where
        S: Strategy,
        S::Object: serde::de::DeserializeOwned,
    {
        let absent = find_absent(v);
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let mut obj: S::Object = serde_json::from_value(v.clone()).expect("test object decodes");
        admit_create::<S>(&mut obj, &ctx).map_err(|e| e.errors)?;
        k8s_openapi::Metadata::metadata_mut(&mut obj).resource_version = Some("1".into());
        Ok(obj)
    }

    /// `base` changed by `f`.
    pub(crate) fn edited(mut base: Value, f: impl FnOnce(&mut Value)) -> Value {
        f(&mut base);
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_fields_fill_name_uid_and_time() {
        let now: Timestamp = "2026-11-29T10:00:00.7Z".parse().expect("time");
        let fields = SystemFields {
            uid: "u".into(),
            creation_timestamp: now,
            generated_name_suffix: "abcde".into(),
        };
        let mut m = ObjectMeta {
            generate_name: Some("x".repeat(70)),
            uid: Some("mine".into()),
            ..Default::default()
        };
        fill_system_fields(&mut m, &fields);
        assert_eq!(
            m.name.as_deref(),
            Some(format!("{}abcde", "x".repeat(58)).as_str())
        );
        assert_eq!(m.uid.as_deref(), Some("u"));
        assert_eq!(
            m.creation_timestamp.map(|t| t.0.as_second()),
            Some(now.as_second())
        );
        let mut named = ObjectMeta {
            name: Some("keep".into()),
            generate_name: Some("g-".into()),
            ..Default::default()
        };
        fill_system_fields(&mut named, &fields);
        assert_eq!(named.name.as_deref(), Some("keep"));
    }
}
