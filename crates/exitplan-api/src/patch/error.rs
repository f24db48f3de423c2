//! [`PatchError`] and the `Status` shapes kube-apiserver answers a failed
//! PATCH with (`k8s.io/apimachinery/pkg/api/errors`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};

/// The generic text of `NewGenericServerResponse(422, …)`, which is what a
/// failing JSON Patch operation (and some strategic merge patch failures)
/// answer with; the library's own reason is not part of the `Status`.
pub(crate) const GENERIC_422: &str =
    "the server rejected our request due to an error in our request";

/// Why a patch failed; `code` and `reason` are the HTTP status and
/// `Status.reason` kube-apiserver answers with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PatchError {
    /// HTTP status code (400, 409, 413, 415, 422, 500).
    pub code: u16,
    /// `Status.reason` (`BadRequest`, `Conflict`, `UnsupportedMediaType`,
    /// `Invalid`, `RequestEntityTooLarge`, …). Empty for errors upstream
    /// answers as a plain Go error (500 with `reason` omitted).
    pub reason: String,
    /// `Status.message`.
    pub message: String,
    /// `Status.details.causes` (apply conflicts: one `FieldManagerConflict`
    /// per conflicting field); empty for every other error.
    pub causes: Vec<Cause>,
    /// What the underlying library said when upstream hides it behind a
    /// generic message (a failed JSON Patch operation: `testing value
    /// /spec/replicas failed: test failed`). Not part of the `Status`; for
    /// logs and tests.
    pub detail: Option<String>,
    /// Built by `NewGenericServerResponse`, whose `Status` always carries a
    /// `details` object (empty here: no group, kind, name or causes).
    pub generic: bool,
}

/// One `Status.details.causes` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// `reason` (`FieldManagerConflict`).
    pub reason: String,
    /// `message` (`conflict with "kubectl-client-side-apply" using v1`).
    pub message: String,
    /// `field` (`.spec.replicas`).
    pub field: String,
}

impl PatchError {
    /// An error with no causes and no hidden detail.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> PatchError {
        PatchError {
            code,
            reason: reason.to_owned(),
            message: message.into(),
            causes: Vec::new(),
            detail: None,
            generic: false,
        }
    }

    /// `errors.NewBadRequest(message)`.
    pub(crate) fn bad_request(message: impl Into<String>) -> PatchError {
        PatchError::new(400, "BadRequest", message)
    }

    /// `NewGenericServerResponse(422, "", GroupResource{}, "", detail, 0, false)`.
    pub(crate) fn unprocessable(detail: impl Into<String>) -> PatchError {
        PatchError {
            detail: Some(detail.into()),
            generic: true,
            ..PatchError::new(422, "Invalid", GENERIC_422)
        }
    }

    /// A plain Go error surfacing from the handler: 500, reason omitted,
    /// message the error text (`responsewriters.ErrorToAPIStatus`).
    pub(crate) fn internal(message: impl Into<String>) -> PatchError {
        PatchError::new(500, "", message)
    }

    /// The `Status` kube-apiserver answers with (details only where
    /// upstream fills them).
    pub fn to_status(&self) -> Status {
        let details = (!self.causes.is_empty() || self.generic).then(|| StatusDetails {
            causes: (!self.causes.is_empty()).then(|| {
                self.causes
                    .iter()
                    .map(|c| StatusCause {
                        field: Some(c.field.clone()),
                        message: Some(c.message.clone()),
                        reason: Some(c.reason.clone()),
                    })
                    .collect()
            }),
            ..StatusDetails::default()
        });
        Status {
            code: Some(i32::from(self.code)),
            details,
            message: Some(self.message.clone()),
            metadata: ListMeta::default(),
            reason: (!self.reason.is_empty()).then(|| self.reason.clone()),
            status: Some("Failure".to_owned()),
        }
    }
}
