//! PATCH semantics of kube-apiserver, as pure functions on JSON values:
//! JSON Patch (RFC 6902, with `test`), JSON merge patch (RFC 7386),
//! strategic merge patch (list merge keys of the served built-in types) and
//! server-side apply (field ownership in `metadata.managedFields`).
//!
//! INTERFACE STUB: the signatures are fixed; the implementations land with
//! the patch work item.

use jiff::Timestamp;
use serde_json::Value;

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

/// Which object schema a strategic merge patch or apply works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeRef<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Kind.
    pub kind: &'a str,
}

/// Why a patch failed; `code` and `reason` are the HTTP status and
/// `Status.reason` kube-apiserver answers with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PatchError {
    /// HTTP status code (400, 409, 415, 422, 500).
    pub code: u16,
    /// `Status.reason` (`BadRequest`, `Conflict`, `UnsupportedMediaType`, `Invalid`, …).
    pub reason: String,
    /// `Status.message`.
    pub message: String,
}

/// Applies an RFC 6902 JSON Patch.
pub fn json_patch(_original: &Value, _patch: &[u8]) -> Result<Value, PatchError> {
    Err(unimplemented_patch("json-patch"))
}

/// Applies an RFC 7386 JSON merge patch.
pub fn merge_patch(_original: &Value, _patch: &[u8]) -> Result<Value, PatchError> {
    Err(unimplemented_patch("merge-patch"))
}

/// Applies a strategic merge patch for the type `ty`.
pub fn strategic_merge_patch(
    _ty: TypeRef<'_>,
    _original: &Value,
    _patch: &[u8],
) -> Result<Value, PatchError> {
    Err(unimplemented_patch("strategic-merge-patch"))
}

/// Server-side apply of `applied` (YAML or JSON) by `manager` onto `live`
/// (`None`: the object does not exist yet). Returns the new object with its
/// `metadata.managedFields` updated; a field owned by another manager with a
/// different value is a 409 conflict unless `force`.
pub fn server_side_apply(
    _ty: TypeRef<'_>,
    _live: Option<&Value>,
    _applied: &[u8],
    _manager: &str,
    _force: bool,
    _now: Timestamp,
) -> Result<Value, PatchError> {
    Err(unimplemented_patch("apply"))
}

/// Records in `new.metadata.managedFields` that `manager` set the fields that
/// differ from `old` with a non-apply operation (`Update`), as kube-apiserver
/// does on every write so later applies see correct ownership.
pub fn record_update(
    _ty: TypeRef<'_>,
    _old: Option<&Value>,
    _new: &mut Value,
    _manager: &str,
    _subresource: Option<&str>,
    _now: Timestamp,
) {
}

fn unimplemented_patch(what: &str) -> PatchError {
    PatchError {
        code: 415,
        reason: "UnsupportedMediaType".to_owned(),
        message: format!("{what} is not supported yet"),
    }
}
