//! PATCH semantics of kube-apiserver, as pure functions on JSON values:
//! JSON Patch (RFC 6902, with `test`), JSON merge patch (RFC 7386),
//! strategic merge patch (list merge keys of the served built-in types) and
//! server-side apply (field ownership in `metadata.managedFields`).
//!
//! ```text
//!   json_patch ─────────────── json_patch.rs   (evanphx/json-patch v4 semantics)
//!   merge_patch ────────────── merge.rs        (RFC 7386)
//!   strategic_merge_patch ──── strategic.rs ─┐ (apimachinery strategicpatch)
//!   server_side_apply ──────── apply.rs ─────┤ (apiserver fieldmanager chain)
//!   record_update ──────────── apply.rs ─────┤
//!                                            ▼
//!                     schema/    per kind, from the OpenAPI definitions
//!                                (built-in) or a CRD's openAPIV3Schema:
//!                                list merge keys (SMP) and list/map/struct
//!                                types (SSA)
//!   apply.rs ─► typed.rs   merge / compare / to-field-set / remove on values
//!           ─► fields.rs   field sets and their `fieldsV1` encoding
//!           ─► managed.rs  `metadata.managedFields` entries and managers
//! ```
//!
//! Every function is pure: the caller passes `now`. Errors carry the HTTP
//! status, `Status.reason` and `Status.message` kube-apiserver answers with.

mod apply;
mod error;
mod fields;
mod gofmt;
pub(crate) mod gojson;
mod json_patch;
mod managed;
mod merge;
mod schema;
mod strategic;
mod typed;
mod yaml;

use jiff::Timestamp;
use serde_json::Value;

pub use error::{Cause, PatchError};
pub use fields::{FieldSet, PathElement};
pub use schema::{
    BUILTIN_PATCH_TYPES, CUSTOM_RESOURCE_PATCH_TYPES, Fields, ListSchema, Schema, SmpList, SsaList,
    Target, TypeSchema, served_version,
};
pub use strategic::unsupported_media_type_message;

/// The patch formats, by request `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`.
    Json,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchType {
    /// The patch type of a `Content-Type` header value (parameters ignored).
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        match content_type.split(';').next().unwrap_or_default().trim() {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                Some(PatchType::Apply)
            }
            _ => None,
        }
    }
}

/// A built-in kind a strategic merge patch or apply works on (its schema is
/// looked up: see [`Target::builtin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeRef<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Kind.
    pub kind: &'a str,
}

/// Applies an RFC 6902 JSON Patch.
///
/// Semantics and error texts are those of `gopkg.in/evanphx/json-patch.v4`
/// as kube-apiserver uses it: an undecodable patch is a 400, more than
/// 10000 operations a 413, and any failing operation (a failed `test`, a
/// missing path, a bad index) a 422 `Invalid` with the generic message
/// `the server rejected our request due to an error in our request`; the
/// library's own text is in [`PatchError::detail`].
pub fn json_patch(original: &Value, patch: &[u8]) -> Result<Value, PatchError> {
    json_patch::apply(original, patch)
}

/// How kube-apiserver prints a patch whose result does not decode into the
/// kind's type, as the value of its `patch: Invalid value: …` error: the
/// patched object's JSON for JSON and merge patches (`string(patchedObjJS)`),
/// Go's `%+v` of the decoded patch for strategic merge patches
/// (`map[spec:map[terminationGracePeriodSeconds:x]]`).
pub fn undecodable_value(ty: PatchType, patch: &[u8], patched: &Value) -> String {
    match ty {
        PatchType::Strategic => serde_json::from_slice::<Value>(patch)
            .map(|p| gofmt::v(&p))
            .unwrap_or_default(),
        _ => patched.to_string(),
    }
}

/// Applies an RFC 7386 JSON merge patch.
pub fn merge_patch(original: &Value, patch: &[u8]) -> Result<Value, PatchError> {
    merge::apply(original, patch)
}

/// Applies a strategic merge patch for the kind `ty` (a [`TypeRef`] of a
/// built-in kind, or a [`Target`]); a 415 for a custom resource or a kind
/// without a schema.
pub fn strategic_merge_patch<'a>(
    ty: impl Into<Target<'a>>,
    original: &Value,
    patch: &[u8],
) -> Result<Value, PatchError> {
    strategic::apply(ty.into(), original, patch, None)
}

/// [`strategic_merge_patch`] that also knows the kind's Go types (`types`,
/// starting at the definition `root`), so a `$setElementOrder/<field>`
/// naming a field the type lacks, or one that is not a list, fails as
/// upstream's `LookupPatchMetadataForSlice` makes it fail.
pub fn strategic_merge_patch_typed<'a>(
    ty: impl Into<Target<'a>>,
    original: &Value,
    patch: &[u8],
    types: &dyn GoTypes,
    root: &str,
) -> Result<Value, PatchError> {
    strategic::apply(ty.into(), original, patch, Some((types, root)))
}

/// A field of a Go API type, as strategic merge patch's lookups
/// (`LookupPatchMetadataForStruct`, `LookupPatchMetadataForSlice`) see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoField<'a> {
    /// The struct has no such JSON field.
    Unknown,
    /// A slice; the definition of its items when they are structs.
    List(Option<&'a str>),
    /// A struct (or a pointer to one): its definition.
    Struct(&'a str),
    /// A map; the definition of its values when they are structs.
    Map(Option<&'a str>),
    /// Anything else: a string, a number, a boolean, a quantity, a time.
    Scalar,
}

/// The Go types behind a kind's JSON, by definition name
/// (`io.k8s.api.core.v1.PodSpec`; the Go struct is the last segment).
pub trait GoTypes {
    /// The JSON field `name` of the struct `definition`.
    fn field(&self, definition: &str, name: &str) -> GoField<'_>;
}

/// Server-side apply of `applied` (YAML or JSON) by `manager` onto `live`
/// (`None`: the object does not exist yet). Returns the new object with its
/// `metadata.managedFields` updated; a field owned by another manager with a
/// different value is a 409 conflict unless `force`.
///
/// This is an apply to the main resource; see
/// [`server_side_apply_subresource`] for `/status`.
pub fn server_side_apply<'a>(
    ty: impl Into<Target<'a>>,
    live: Option<&Value>,
    applied: &[u8],
    manager: &str,
    force: bool,
    now: Timestamp,
) -> Result<Value, PatchError> {
    apply::apply(ty.into(), live, applied, manager, None, force, now)
}

/// [`server_side_apply`] on a subresource (`Some("status")`): the manager's
/// entry records the subresource and only the subresource's fields are
/// owned (upstream's reset fields: `/status` ignores `spec`, the main
/// resource ignores `status`).
pub fn server_side_apply_subresource<'a>(
    ty: impl Into<Target<'a>>,
    live: Option<&Value>,
    applied: &[u8],
    manager: &str,
    subresource: Option<&str>,
    force: bool,
    now: Timestamp,
) -> Result<Value, PatchError> {
    apply::apply(ty.into(), live, applied, manager, subresource, force, now)
}

/// Records in `new.metadata.managedFields` that `manager` set the fields that
/// differ from `old` with a non-apply operation (`Update`), as kube-apiserver
/// does on every write so later applies see correct ownership.
pub fn record_update<'a>(
    ty: impl Into<Target<'a>>,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: Timestamp,
) {
    apply::record_update(ty.into(), old, new, manager, subresource, now);
}
