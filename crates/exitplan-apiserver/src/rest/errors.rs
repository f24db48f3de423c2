//! Every failure as kube-apiserver's `Status`: code, reason, message and
//! details built like apimachinery's `errors.New*` helpers
//! (`staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use exitplan_api::field::go_quote;
use exitplan_api::status::InvalidError;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};

use crate::storage::{StorageError, WriteError};

/// `reason: Conflict` message of an update whose resourceVersion is stale
/// (`storage.OptimisticLockErrorMsg`).
pub const OPTIMISTIC_LOCK_MESSAGE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// A failed request: the `Status` to answer with, and an optional
/// `Retry-After` header.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.status.message.as_deref().unwrap_or_default())]
pub struct ApiError {
    /// The `Status` body; its `code` is the HTTP status.
    pub status: Box<Status>,
    /// `Retry-After` seconds, when sent.
    pub retry_after: Option<i32>,
}

impl ApiError {
    /// An error from a complete `Status` (code defaults to 500).
    pub fn from_status(status: Status) -> Self {
        let retry_after = status
            .details
            .as_ref()
            .and_then(|d| d.retry_after_seconds)
            .filter(|s| *s > 0);
        ApiError {
            status: Box::new(status),
            retry_after,
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.status
            .code
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (100..=599).contains(c))
            .unwrap_or(500)
    }

    /// `Status.reason`.
    pub fn reason(&self) -> &str {
        self.status.reason.as_deref().unwrap_or_default()
    }
}

/// `Status` as JSON with `kind` and `apiVersion`, as every answer carries.
pub fn status_json(status: &Status) -> serde_json::Value {
    let mut v = serde_json::to_value(status).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(m) = v.as_object_mut() {
        m.insert("kind".into(), "Status".into());
        m.insert("apiVersion".into(), "v1".into());
        m.entry("metadata").or_insert_with(|| serde_json::json!({}));
    }
    v
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&status_json(&self.status)).unwrap_or_default();
        let mut resp = (code, body).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(s) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        resp
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// A `Failure` status.
pub fn failure(
    code: u16,
    reason: &str,
    message: impl Into<String>,
    details: Option<StatusDetails>,
) -> ApiError {
    ApiError::from_status(Status {
        code: Some(i32::from(code)),
        details,
        message: Some(message.into()),
        metadata: ListMeta::default(),
        reason: non_empty(reason),
        status: Some("Failure".to_owned()),
    })
}

/// `schema.GroupResource.String()`: `resource.group` or `resource`.
pub fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(group: &str, resource: &str, name: &str) -> StatusDetails {
    StatusDetails {
        group: non_empty(group),
        kind: non_empty(resource),
        name: non_empty(name),
        ..StatusDetails::default()
    }
}

/// 404 `NotFound`: `<resource>.<group> "<name>" not found`.
pub fn not_found(group: &str, resource: &str, name: &str) -> ApiError {
    failure(
        404,
        "NotFound",
        format!(
            "{} {} not found",
            group_resource(group, resource),
            go_quote(name)
        ),
        Some(details(group, resource, name)),
    )
}

/// 404 for a path that names no served resource
/// (`errors.NewGenericServerResponse(404, …)`).
pub fn resource_not_found() -> ApiError {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource",
        Some(StatusDetails::default()),
    )
}

/// 409 `AlreadyExists`: `<resource> "<name>" already exists`.
pub fn already_exists(group: &str, resource: &str, name: &str) -> ApiError {
    failure(
        409,
        "AlreadyExists",
        format!(
            "{} {} already exists",
            group_resource(group, resource),
            go_quote(name)
        ),
        Some(details(group, resource, name)),
    )
}

/// 409 `Conflict`: `Operation cannot be fulfilled on <resource> "<name>": <why>`.
pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
    failure(
        409,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on {} {}: {why}",
            group_resource(group, resource),
            go_quote(name)
        ),
        Some(details(group, resource, name)),
    )
}

/// 409 `Conflict` for a stale resourceVersion.
pub fn conflict_modified(group: &str, resource: &str, name: &str) -> ApiError {
    conflict(group, resource, name, OPTIMISTIC_LOCK_MESSAGE)
}

/// 400 `BadRequest`.
pub fn bad_request(message: impl Into<String>) -> ApiError {
    failure(400, "BadRequest", message, None)
}

/// 422 `Invalid` from a validation result.
pub fn invalid(e: &InvalidError) -> ApiError {
    ApiError::from_status(e.to_status())
}

/// 422 `Invalid` of a meta.k8s.io options kind (`DeleteOptions`,
/// `PatchOptions`) with one cause.
pub fn invalid_options(kind: &str, field: &str, cause_reason: &str, body: &str) -> ApiError {
    failure(
        422,
        "Invalid",
        format!("{kind}.meta.k8s.io \"\" is invalid: {field}: {body}"),
        Some(StatusDetails {
            group: Some("meta.k8s.io".into()),
            kind: Some(kind.into()),
            causes: Some(vec![StatusCause {
                field: Some(field.into()),
                message: Some(body.into()),
                reason: Some(cause_reason.into()),
            }]),
            ..StatusDetails::default()
        }),
    )
}

/// 405 `MethodNotAllowed`.
pub fn method_not_allowed() -> ApiError {
    failure(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        Some(StatusDetails::default()),
    )
}

/// 406 `NotAcceptable` (`negotiation.NewNotAcceptableError`).
pub fn not_acceptable(accepted: &[&str]) -> ApiError {
    failure(
        406,
        "NotAcceptable",
        format!(
            "only the following media types are accepted: {}",
            accepted.join(", ")
        ),
        None,
    )
}

/// 415 `UnsupportedMediaType` (`negotiation.NewUnsupportedMediaTypeError`).
pub fn unsupported_media_type(accepted: &[&str]) -> ApiError {
    failure(
        415,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: {}",
            accepted.join(", ")
        ),
        None,
    )
}

/// 410 `Expired`: `too old resource version: <requested> (<oldest>)`.
pub fn expired(requested: u64, oldest: u64) -> ApiError {
    failure(
        410,
        "Expired",
        format!("too old resource version: {requested} ({oldest})"),
        None,
    )
}

/// 401 `Unauthorized`.
pub fn unauthorized() -> ApiError {
    failure(401, "Unauthorized", "Unauthorized", None)
}

/// 403 `Forbidden` as `apierrors.NewForbidden(group/resource, name, err)`
/// words it: `<resource>[.<group>] ["<name>" ]is forbidden: <err>`, or
/// `forbidden: <err>` without a resource (non-resource URLs); details name
/// the group, the resource (as `kind`) and the object.
pub fn forbidden(group: &str, resource: &str, name: &str, err: &str) -> ApiError {
    let message = if resource.is_empty() && group.is_empty() {
        format!("forbidden: {err}")
    } else if name.is_empty() {
        format!("{} is forbidden: {err}", group_resource(group, resource))
    } else {
        format!(
            "{} {} is forbidden: {err}",
            group_resource(group, resource),
            go_quote(name)
        )
    };
    failure(
        403,
        "Forbidden",
        message,
        Some(details(group, resource, name)),
    )
}

/// 403 `Forbidden` for creating in a terminating namespace.
pub fn namespace_terminating(group: &str, resource: &str, name: &str, ns: &str) -> ApiError {
    let mut e = failure(
        403,
        "Forbidden",
        format!(
            "{} {} is forbidden: unable to create new content in namespace {ns} because it is being terminated",
            group_resource(group, resource),
            go_quote(name)
        ),
        Some(details(group, resource, name)),
    );
    if let Some(d) = e.status.details.as_mut() {
        d.causes = Some(vec![StatusCause {
            reason: Some("NamespaceTerminating".into()),
            message: Some(format!("namespace {ns} is being terminated")),
            field: Some("metadata.namespace".into()),
        }]);
    }
    e
}

/// 504 `Timeout` for a resourceVersion newer than the store
/// (`storage.NewTooLargeResourceVersionError`).
pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
    let mut e = failure(
        504,
        "Timeout",
        format!("Timeout: Too large resource version: {requested}, current: {current}"),
        Some(StatusDetails {
            causes: Some(vec![StatusCause {
                reason: Some("ResourceVersionTooLarge".into()),
                message: Some("Too large resource version".into()),
                field: None,
            }]),
            retry_after_seconds: Some(1),
            ..StatusDetails::default()
        }),
    );
    e.retry_after = Some(1);
    e
}

/// 500 `InternalError`: `Internal error occurred: <why>`.
pub fn internal(why: impl std::fmt::Display) -> ApiError {
    let why = why.to_string();
    failure(
        500,
        "InternalError",
        format!("Internal error occurred: {why}"),
        Some(StatusDetails {
            causes: Some(vec![StatusCause {
                message: Some(why),
                ..StatusCause::default()
            }]),
            ..StatusDetails::default()
        }),
    )
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Expired { requested, oldest } => expired(requested, oldest),
            StorageError::TooLarge { requested, current } => {
                too_large_resource_version(requested, current)
            }
            // etcd's refusal, passed through by kube-apiserver as an error
            // that is not a Status: 500 with no reason.
            e @ StorageError::RequestTooLarge { .. } => failure(500, "", e.to_string(), None),
            StorageError::Unreadable { prefix, objects } => store_read_error(&prefix, &objects),
            other => internal(other),
        }
    }
}

/// 500 `StorageReadError`: a list met damaged objects (upstream's
/// aggregated corrupt-object error), one cause per object.
fn store_read_error(prefix: &str, objects: &[StorageError]) -> ApiError {
    let resource = prefix.split('/').next().unwrap_or_default();
    let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
    let causes = objects
        .iter()
        .map(|e| StatusCause {
            reason: Some("UnexpectedServerResponse".into()),
            message: Some(e.to_string()),
            field: match e {
                StorageError::DamagedObject { key, .. } => Some(key.clone()),
                _ => None,
            },
        })
        .collect();
    failure(
        500,
        "StorageReadError",
        format!("failed to read one or more {resource} from the storage"),
        Some(StatusDetails {
            group: non_empty(group),
            kind: Some(plural.to_owned()),
            name: Some(prefix.to_owned()),
            causes: Some(causes),
            ..StatusDetails::default()
        }),
    )
}

/// A storage write error that is not a precondition failure, as a 500.
pub fn from_write(e: WriteError) -> ApiError {
    match e {
        WriteError::Storage(s) | WriteError::TooLarge { error: s, .. } => s.into(),
        WriteError::Conflict { .. } => internal("unexpected storage conflict"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_match_apimachinery() {
        let e = not_found("", "pods", "x");
        assert_eq!(e.code(), 404);
        assert_eq!(e.status.message.as_deref(), Some("pods \"x\" not found"));
        let e = already_exists("batch", "jobs", "j");
        assert_eq!(
            e.status.message.as_deref(),
            Some("jobs.batch \"j\" already exists")
        );
        let e = conflict_modified("", "pods", "p");
        assert_eq!(
            e.status.message.as_deref(),
            Some(
                "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again"
            )
        );
        let e = expired(3, 10);
        assert_eq!(e.code(), 410);
        assert_eq!(
            e.status.message.as_deref(),
            Some("too old resource version: 3 (10)")
        );
        let j = status_json(&unauthorized().status);
        assert_eq!(j["kind"], "Status");
        assert_eq!(j["reason"], "Unauthorized");
        assert_eq!(j["code"], 401);
    }

    #[test]
    fn forbidden_as_new_forbidden_words_it() {
        let e = forbidden("", "pods", "", "User \"x\" cannot list resource \"pods\"");
        assert_eq!(e.code(), 403);
        assert_eq!(
            e.status.message.as_deref(),
            Some("pods is forbidden: User \"x\" cannot list resource \"pods\"")
        );
        assert_eq!(e.status.reason.as_deref(), Some("Forbidden"));
        let e = forbidden("apps", "deployments", "d", "no");
        assert_eq!(
            e.status.message.as_deref(),
            Some("deployments.apps \"d\" is forbidden: no")
        );
        let d = e.status.details.expect("details");
        assert_eq!(
            (d.group.as_deref(), d.kind.as_deref(), d.name.as_deref()),
            (Some("apps"), Some("deployments"), Some("d"))
        );
        let e = forbidden("", "", "", "User \"x\" cannot get path \"/metrics\"");
        assert_eq!(
            e.status.message.as_deref(),
            Some("forbidden: User \"x\" cannot get path \"/metrics\"")
        );
    }
}
