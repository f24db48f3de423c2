//! Writing JSON answers.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status};
use serde_json::Value;

use super::errors::status_json;

/// `value` as a JSON response with `code`.
pub fn json(code: u16, value: &Value) -> Response {
    json_bytes(code, serde_json::to_vec(value).unwrap_or_default())
}

/// `body`, already JSON, as a response with `code`.
pub fn json_bytes(code: u16, body: impl Into<axum::body::Body>) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    let mut resp = (code, body.into()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// A `Success` Status with `code` (and `details`, if any).
pub fn success(
    code: u16,
    details: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails>,
) -> Response {
    let status = Status {
        code: Some(i32::from(code)),
        details,
        message: None,
        metadata: ListMeta::default(),
        reason: None,
        status: Some("Success".to_owned()),
    };
    json(code, &status_json(&status))
}
