//! Content negotiation: JSON objects, or a `meta.k8s.io` Table when the
//! `Accept` header asks for `application/json;as=Table` (what `kubectl get`
//! sends), 406 when nothing acceptable is asked for.

use axum::http::HeaderMap;
use axum::http::header::ACCEPT;

use super::errors::{ApiError, not_acceptable};
use super::query::Query;
use crate::discovery::IncludeObject;

/// The media types this server produces.
pub const PRODUCED: &[&str] = &["application/json"];

/// How to render objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The objects themselves.
    Json,
    /// A `meta.k8s.io/v1` Table.
    Table(IncludeObject),
}

/// The representation the `Accept` header asks for.
pub fn output(headers: &HeaderMap, query: &Query) -> Result<Output, ApiError> {
    let Some(accept) = headers.get(ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Ok(Output::Json);
    };
    if accept.trim().is_empty() {
        return Ok(Output::Json);
    }
    let mut json = false;
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let ty = parts.next().unwrap_or_default();
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        match ty {
            "application/json" => {
                match param("as") {
                    Some("Table") if param("g") == Some("meta.k8s.io") => {
                        return Ok(Output::Table(include_object(query)));
                    }
                    // Other `as=` targets (PartialObjectMetadata, discovery) are not served.
                    Some(_) => {}
                    None => json = true,
                }
            }
            "*/*" | "application/*" => json = true,
            _ => {}
        }
    }
    if json {
        Ok(Output::Json)
    } else {
        Err(not_acceptable(PRODUCED))
    }
}

/// For documents served only as JSON (discovery, OpenAPI): 406 unless the
/// `Accept` header allows JSON (a protobuf-only OpenAPI request gets the
/// 406 client-go expects rather than JSON it cannot parse).
pub fn json_only(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(accept) = headers.get(ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Ok(());
    };
    let ok = accept.trim().is_empty()
        || accept.split(',').any(|m| {
            matches!(
                m.split(';').next().unwrap_or_default().trim(),
                "application/json" | "*/*" | "application/*"
            )
        });
    if ok {
        Ok(())
    } else {
        Err(not_acceptable(PRODUCED))
    }
}

fn include_object(query: &Query) -> IncludeObject {
    match query.get("includeObject") {
        Some("None") => IncludeObject::None,
        Some("Object") => IncludeObject::Object,
        _ => IncludeObject::Metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(accept: &str) -> Result<Output, ApiError> {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_str(accept).expect("header"));
        output(&h, &Query::default())
    }

    #[test]
    fn kubectl_get_asks_for_a_table() {
        let got = with(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        );
        assert_eq!(got, Ok(Output::Table(IncludeObject::Metadata)));
        assert_eq!(with("application/json"), Ok(Output::Json));
        assert_eq!(with("*/*"), Ok(Output::Json));
        assert_eq!(
            with("application/vnd.kubernetes.protobuf, */*"),
            Ok(Output::Json)
        );
        let e = with("application/vnd.kubernetes.protobuf").expect_err("406");
        assert_eq!(e.code(), 406);
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
        );
        assert_eq!(json_only(&h).map_err(|e| e.code()), Err(406));
        assert!(json_only(&HeaderMap::new()).is_ok());
    }
}
