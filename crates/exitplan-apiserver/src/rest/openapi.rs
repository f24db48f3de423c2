//! `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<api|apis/group>/<version>`
//! in the format the `Accept` header negotiates, as kube-openapi's handlers
//! serve them: `/openapi/v2` as JSON or gnostic protobuf (client-go's
//! `OpenAPISchema()` asks for protobuf only, so kubectl's client-side
//! validation needs it), the v3 documents as JSON, the v3 index as JSON
//! whatever is asked. Custom resources of established CRDs are added to the
//! index, to their group-version documents and to `/openapi/v2` (the merged
//! v2 document is built once per set of served resources). An `Accept`
//! naming nothing served is answered 406 with
//! an empty body, as upstream does (client-go then reports "the server was
//! unable to respond with a content type that the client supports").

use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, VARY};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::errors::{ApiError, failure, method_not_allowed, resource_not_found};
use super::negotiate::{OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_SUBTYPES, OpenApiFormat, openapi};
use super::respond;
use std::sync::{Arc, Mutex};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::discovery;
use crate::discovery::openapi as docs;
use crate::discovery::openapi::custom;
use crate::registry::Served;

/// Whether `path` (without a trailing `/`) is an OpenAPI document path.
pub fn serves(path: &str) -> bool {
    path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/")
}

/// Answers a request for an OpenAPI path (see [`serves`]).
pub fn serve(
    method: &Method,
    headers: &HeaderMap,
    path: &str,
    served: &Arc<Served>,
) -> Result<Response, ApiError> {
    if *method != Method::GET {
        return Err(method_not_allowed());
    }
    let crds = crds(served);
    match path {
        "/openapi/v2" => v2(headers, served),
        "/openapi/v3" if crds.is_empty() => Ok(respond::json(200, &discovery::openapi_v3_index())),
        "/openapi/v3" => Ok(respond::json(
            200,
            &custom::v3_index_with_custom_resources(&crds),
        )),
        _ => {
            let rest = path.trim_start_matches("/openapi/v3/");
            let doc = match rest.split('/').collect::<Vec<_>>().as_slice() {
                ["api", v] => discovery::openapi_v3("", v),
                ["apis", g, v] => discovery::openapi_v3(g, v)
                    .or_else(|| custom::custom_resource_v3_document(&crds, g, v)),
                _ => None,
            }
            .ok_or_else(resource_not_found)?;
            match openapi(headers, &[]) {
                Some(_) => Ok(vary(respond::json(200, &doc))),
                None => Ok(not_acceptable()),
            }
        }
    }
}

/// The CRDs whose resources are served (each once).
fn crds(served: &Served) -> Vec<CustomResourceDefinition> {
    served
        .custom()
        .values()
        .filter_map(|defs| defs.first().and_then(|d| d.custom))
        .map(|c| c.crd.clone())
        .collect()
}

/// `/openapi/v2` as JSON and as protobuf.
type V2Forms = (Vec<u8>, Result<Vec<u8>, docs::EncodeError>);

/// The v2 document with the custom resources of `served`, built once per
/// snapshot of the served resources (the last one is kept).
fn v2_with_custom(served: &Arc<Served>) -> Arc<V2Forms> {
    static LAST: Mutex<Option<(Arc<Served>, Arc<V2Forms>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((s, forms)) = last.as_ref()
        && Arc::ptr_eq(s, served)
    {
        return forms.clone();
    }
    let doc = custom::v2_with_custom_resources(&crds(served));
    let forms = Arc::new((
        serde_json::to_vec(&doc).unwrap_or_default(),
        custom::v2_protobuf_of(&doc),
    ));
    *last = Some((served.clone(), forms.clone()));
    forms
}

fn v2(headers: &HeaderMap, served: &Arc<Served>) -> Result<Response, ApiError> {
    let with_custom = served.has_custom().then(|| v2_with_custom(served));
    let (json, protobuf) = match &with_custom {
        Some(forms) => (&forms.0[..], forms.1.as_deref().map_err(Clone::clone)),
        None => (docs::v2_json(), docs::v2_protobuf()),
    };
    let (content_type, body) = match openapi(headers, OPENAPI_V2_PROTOBUF_SUBTYPES) {
        Some(OpenApiFormat::Json) => ("application/json", json.to_vec()),
        Some(OpenApiFormat::Protobuf) => {
            let bytes = protobuf.map_err(|e| {
                tracing::error!(error = %e, "cannot encode /openapi/v2 as protobuf");
                failure(503, "ServiceUnavailable", e.to_string(), None)
            })?;
            (OPENAPI_V2_PROTOBUF, bytes.to_vec())
        }
        None => return Ok(not_acceptable()),
    };
    let mut resp = (StatusCode::OK, Body::from(body)).into_response();
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(vary(resp))
}

/// Upstream's 406 for an OpenAPI document: no body.
fn not_acceptable() -> Response {
    vary(StatusCode::NOT_ACCEPTABLE.into_response())
}

fn vary(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(VARY, HeaderValue::from_static("Accept"));
    resp
}
