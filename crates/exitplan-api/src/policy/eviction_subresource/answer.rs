//! The `Status` answers of the eviction subresource (job-failure spec §12),
//! built exactly like apimachinery's `errors.New*` helpers, and the HTTP
//! response they become (code and `Retry-After` header).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};

use crate::field::{Error, Path, go_quote};
use crate::status::{GroupKind, InvalidError};

/// Top-level message of every eviction refused by a disruption budget.
pub const BUDGET_VIOLATION_MESSAGE: &str =
    "Cannot evict pod as it would violate the pod's disruption budget.";
/// `StatusCause` type (serialised as `reason`) of budget refusals.
pub const CAUSE_DISRUPTION_BUDGET: &str = "DisruptionBudget";
/// Message of the 500 answer for a pod covered by several budgets.
pub const MULTIPLE_PDBS_MESSAGE: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
/// Seconds a client is asked to wait when a budget is still being processed.
pub const PROCESSING_RETRY_AFTER_SECONDS: i32 = 10;

/// An HTTP answer of the eviction subresource.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// HTTP status code.
    pub code: u16,
    /// `Retry-After` header value in seconds, if one is sent.
    pub retry_after_seconds: Option<i32>,
    /// The `Status` body (boxed: answers travel through `Result`s).
    pub status: Box<Status>,
}

impl Answer {
    /// The response kube-apiserver writes for `status`: the code is
    /// `status.code` (500 if unset or out of range) and `Retry-After` is sent
    /// when `details.retryAfterSeconds > 0`.
    pub fn from_status(status: Status) -> Self {
        let code = status
            .code
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (100..=599).contains(c))
            .unwrap_or(500);
        let retry_after_seconds = status
            .details
            .as_ref()
            .and_then(|d| d.retry_after_seconds)
            .filter(|s| *s > 0);
        Answer {
            code,
            retry_after_seconds,
            status: Box::new(status),
        }
    }

    /// Whether this is a 409 Conflict (`errors.IsConflict`: reason `Conflict`).
    pub fn is_conflict(&self) -> bool {
        self.status.reason.as_deref() == Some("Conflict")
    }

    /// The cause messages, in order.
    pub fn cause_messages(&self) -> Vec<&str> {
        self.status
            .details
            .iter()
            .flat_map(|d| d.causes.iter().flatten())
            .filter_map(|c| c.message.as_deref())
            .collect()
    }
}

fn failure(
    code: i32,
    reason: Option<&str>,
    message: String,
    details: Option<StatusDetails>,
) -> Answer {
    Answer::from_status(Status {
        code: Some(code),
        details,
        message: Some(message),
        metadata: ListMeta::default(),
        reason: reason.map(str::to_owned),
        status: Some("Failure".to_owned()),
    })
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// `schema.GroupResource.String()`: `resource.group`, or `resource` for core.
fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

/// `<resource>.<group> "<name>"`, as the `errors.New*` helpers name an object.
fn qualified_name(group: &str, resource: &str, name: &str) -> String {
    format!("{} {}", group_resource(group, resource), go_quote(name))
}

/// The details of an answer about one object (group, kind = resource, name;
/// empty values left out).
fn object_details(group: &str, resource: &str, name: &str) -> StatusDetails {
    StatusDetails {
        group: non_empty(group),
        kind: non_empty(resource),
        name: non_empty(name),
        ..StatusDetails::default()
    }
}

/// 201 `{"status": "Success", "code": 201}`: the pod was evicted (or would be, on dry-run).
pub fn success() -> Answer {
    Answer::from_status(Status {
        code: Some(201),
        details: None,
        message: None,
        metadata: ListMeta::default(),
        reason: None,
        status: Some("Success".to_owned()),
    })
}

/// 400 BadRequest (`errors.NewBadRequest`).
pub fn bad_request(message: &str) -> Answer {
    failure(400, Some("BadRequest"), message.to_owned(), None)
}

/// 400: the URL names a different pod than the Eviction body.
pub fn name_mismatch() -> Answer {
    bad_request("name in URL does not match name in Eviction object")
}

/// 422: `deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential: true`
/// is not allowed on an eviction.
pub fn ignore_store_read_error_invalid(name: &str) -> Answer {
    let err = InvalidError {
        kind: GroupKind {
            group: "policy",
            kind: "Eviction",
        },
        name: name.to_owned(),
        errors: vec![Error::invalid(
            &Path::new("deleteOptions").child("ignoreStoreReadErrorWithClusterBreakingPotential"),
            true,
            "can not be set for pod eviction, try after removing the option",
        )]
        .into(),
    };
    Answer::from_status(err.to_status())
}

/// 500 for a plain (non-API) Go error: no reason, no details.
pub fn plain_error(message: String) -> Answer {
    failure(500, None, message, None)
}

/// 500 InternalError (`errors.NewInternalError`).
pub fn internal_error(message: &str) -> Answer {
    let details = StatusDetails {
        causes: Some(vec![StatusCause {
            field: None,
            message: Some(message.to_owned()),
            reason: None,
        }]),
        ..StatusDetails::default()
    };
    failure(
        500,
        Some("InternalError"),
        format!("Internal error occurred: {message}"),
        Some(details),
    )
}

/// 500 returned (not raised) when a pod matches more than one budget: no
/// reason, no details.
pub fn multiple_pdbs() -> Answer {
    failure(500, None, MULTIPLE_PDBS_MESSAGE.to_owned(), None)
}

/// 404 NotFound (`errors.NewNotFound`): `<resource> "<name>" not found`.
pub fn not_found(group: &str, resource: &str, name: &str) -> Answer {
    failure(
        404,
        Some("NotFound"),
        format!("{} not found", qualified_name(group, resource, name)),
        Some(object_details(group, resource, name)),
    )
}

/// 409 Conflict (`errors.NewConflict`):
/// `Operation cannot be fulfilled on <resource> "<name>": <message>`.
pub fn conflict(group: &str, resource: &str, name: &str, message: &str) -> Answer {
    failure(
        409,
        Some("Conflict"),
        format!(
            "Operation cannot be fulfilled on {}: {message}",
            qualified_name(group, resource, name)
        ),
        Some(object_details(group, resource, name)),
    )
}

/// 403 Forbidden (`errors.NewForbidden`):
/// `<resource>.<group> "<name>" is forbidden: <message>`.
pub fn forbidden(group: &str, resource: &str, name: &str, message: &str) -> Answer {
    let qualified = group_resource(group, resource);
    let text = if qualified.is_empty() {
        format!("forbidden: {message}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {message}")
    } else {
        format!(
            "{} is forbidden: {message}",
            qualified_name(group, resource, name)
        )
    };
    failure(
        403,
        Some("Forbidden"),
        text,
        Some(object_details(group, resource, name)),
    )
}

/// 429 TooManyRequests (`errors.NewTooManyRequests`) with one
/// `DisruptionBudget` cause; `retry_after_seconds` 0 means none.
pub fn budget_refusal(cause: String, retry_after_seconds: i32) -> Answer {
    let details = StatusDetails {
        causes: Some(vec![StatusCause {
            field: None,
            message: Some(cause),
            reason: Some(CAUSE_DISRUPTION_BUDGET.to_owned()),
        }]),
        retry_after_seconds: (retry_after_seconds != 0).then_some(retry_after_seconds),
        ..StatusDetails::default()
    };
    failure(
        429,
        Some("TooManyRequests"),
        BUDGET_VIOLATION_MESSAGE.to_owned(),
        Some(details),
    )
}

/// 429 with `Retry-After: 10`: the budget `<pdb>` has not been processed yet
/// (or an unhealthy-pod deletion raced with a pod update).
pub fn still_processing(pdb: &str) -> Answer {
    budget_refusal(
        format!("The disruption budget {pdb} is still being processed by the server."),
        PROCESSING_RETRY_AFTER_SECONDS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shapes() {
        let s = serde_json::to_value(&success().status).expect("json");
        assert_eq!(
            s,
            serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
        );
        let m = serde_json::to_value(&multiple_pdbs().status).expect("json");
        assert_eq!(
            m,
            serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": MULTIPLE_PDBS_MESSAGE, "code": 500})
        );
        let f = forbidden("policy", "poddisruptionbudget", "jp3", "x");
        assert_eq!(
            f.status.message.as_deref(),
            Some("poddisruptionbudget.policy \"jp3\" is forbidden: x")
        );
        let p = still_processing("foo");
        assert_eq!((p.code, p.retry_after_seconds), (429, Some(10)));
        let n = budget_refusal("c".into(), 0);
        assert_eq!((n.code, n.retry_after_seconds), (429, None));
        assert_eq!(
            not_found("", "pods", "t1").status.message.as_deref(),
            Some("pods \"t1\" not found")
        );
    }
}
