//! `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<api|apis/group>/<version>`
//! in the format the `Accept` header negotiates, as kube-openapi's handlers
//! serve them: `/openapi/v2` as JSON or gnostic protobuf (client-go's
//! `OpenAPISchema()` asks for protobuf only, so kubectl's client-side
//! validation needs it), the v3 documents as JSON, the v3 index as JSON
//! whatever is asked. An `Accept` naming nothing served is answered 406 with
//! an empty body, as upstream does (client-go then reports "the server was
//! unable to respond with a content type that the client supports").
//! Established CRDs add their custom resources' schemas and paths
//! ([`docs::custom`]).

use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, VARY};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::errors::{ApiError, failure, method_not_allowed, resource_not_found};
use super::negotiate::{OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_SUBTYPES, OpenApiFormat, openapi};
use super::respond;
use crate::discovery;
use crate::discovery::openapi as docs;
use crate::registry::Served;

/// Whether `path` (without a trailing `/`) is an OpenAPI document path.
pub fn serves(path: &str) -> bool {
    path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/")
}

/// The CRDs whose custom resources `served` serves (each once).
fn served_crds(served: &Served) -> Vec<CustomResourceDefinition> {
    served
        .custom()
        .values()
        .filter_map(|defs| defs.first().and_then(|d| d.custom))
        .map(|c| c.crd.clone())
        .collect()
}

/// Answers a request for an OpenAPI path (see [`serves`]).
pub fn serve(
    method: &Method,
    headers: &HeaderMap,
    path: &str,
    served: &Served,
) -> Result<Response, ApiError> {
    if *method != Method::GET {
        return Err(method_not_allowed());
    }
    let crds = served_crds(served);
    match path {
        "/openapi/v2" => v2(headers, &crds),
        "/openapi/v3" if crds.is_empty() => Ok(respond::json(200, &discovery::openapi_v3_index())),
        "/openapi/v3" => Ok(respond::json(
            200,
            &docs::custom::v3_index_with_custom_resources(&crds),
        )),
        _ => {
            let rest = path.trim_start_matches("/openapi/v3/");
            let doc = match rest.split('/').collect::<Vec<_>>().as_slice() {
                ["api", v] => discovery::openapi_v3("", v),
                ["apis", g, v] => discovery::openapi_v3(g, v)
                    .or_else(|| docs::custom::custom_resource_v3_document(&crds, g, v)),
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

/// `/openapi/v2`: the built-in document, encoded once, or (with custom
/// resources served) one with the CRDs' definitions merged, built per request.
fn v2(headers: &HeaderMap, crds: &[CustomResourceDefinition]) -> Result<Response, ApiError> {
    let custom = (!crds.is_empty()).then(|| docs::custom::v2_with_custom_resources(crds));
    let unencodable = |e: docs::EncodeError| {
        tracing::error!(error = %e, "cannot encode /openapi/v2 as protobuf");
        failure(503, "ServiceUnavailable", e.to_string(), None)
    };
    let (content_type, body): (_, Body) = match openapi(headers, OPENAPI_V2_PROTOBUF_SUBTYPES) {
        Some(OpenApiFormat::Json) => match &custom {
            Some(doc) => ("application/json", Body::from(doc.to_string())),
            None => ("application/json", Body::from(docs::v2_json())),
        },
        Some(OpenApiFormat::Protobuf) => match &custom {
            Some(doc) => (
                OPENAPI_V2_PROTOBUF,
                Body::from(docs::custom::v2_protobuf_of(doc).map_err(unencodable)?),
            ),
            None => (
                OPENAPI_V2_PROTOBUF,
                Body::from(docs::v2_protobuf().map_err(unencodable)?),
            ),
        },
        None => return Ok(not_acceptable()),
    };
    let mut resp = (StatusCode::OK, body).into_response();
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
