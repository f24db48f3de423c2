//! Routing: every request but the public health checks is authenticated
//! and its impersonation applied ([`crate::authn`], in `identify`), then
//! resolved like upstream's `RequestInfo` (non-resource paths, discovery,
//! create-only reviews, or group/version/namespace/resource/name/
//! subresource) and dispatched to the verb's handler with the user.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State as AxState};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use exitplan_authz::UserInfo;

use super::errors::{ApiError, failure, method_not_allowed, resource_not_found};
use super::query::Query;
use super::request::{ApiPath, ResourcePath, resolve};
use super::respond;
use super::state::{Call, State};
use super::{
    auth, binding, create, delete, eviction, get, list, metrics, patch, review, scale, token,
    update, watch,
};
use crate::authn::impersonation;
use crate::discovery;

/// Largest request body accepted (kube-apiserver's 3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// The router over `state`.
pub fn router(state: Arc<State>) -> Router {
    Router::new().fallback(dispatch).with_state(state)
}

fn text(code: StatusCode, body: &'static str) -> Response {
    let mut resp = (code, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

async fn dispatch(AxState(state): AxState<Arc<State>>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let started = std::time::Instant::now();
    let labels = metrics::labels_of(&method, &path, req.uri().query(), req.headers());
    let metrics = state.metrics.clone();
    let response = if auth::is_public(&path) {
        text(StatusCode::OK, "ok")
    } else {
        match identify(&state, &req) {
            Err(refusal) => refusal.into_response(),
            Ok(user) => match authorize(&state, &req, &user) {
                Err(e) => e.into_response(),
                Ok(()) => match route(state, req, user).await {
                    Ok(r) => r,
                    Err(e) => e.into_response(),
                },
            },
        }
    };
    let code = response.status().as_u16();
    if code >= 500 {
        tracing::warn!(%method, %path, code, "request failed");
    } else {
        tracing::debug!(%method, %path, code, "request");
    }
    metrics.observe(&labels, code, started.elapsed().as_secs_f64());
    if labels.verb == "WATCH" && response.status().is_success() {
        return long_running(response, metrics.longrunning(&labels));
    }
    response
}

/// Who `req` is: its authenticated user (401 otherwise), or whom it
/// impersonates (403 or 500 otherwise).
fn identify(state: &State, req: &Request) -> Result<Arc<UserInfo>, impersonation::Refusal> {
    let user = state.authn.authenticate_request(state, req.headers())?;
    let uri = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path(), |p| p.as_str());
    impersonation::impersonate(state, state.authorizer.as_ref(), user, req.headers(), uri)
}

/// Whether `user` may do what `req` asks (kube-apiserver's
/// `WithAuthorization` filter): a 403 with upstream's message otherwise.
fn authorize(state: &State, req: &Request, user: &Arc<UserInfo>) -> Result<(), ApiError> {
    let mut attrs =
        super::request_info::attributes(req.method(), req.uri().path(), req.uri().query());
    attrs.user = UserInfo::clone(user);
    let decision = state.authorizer.authorize(state, &attrs);
    if decision.allowed() {
        return Ok(());
    }
    tracing::debug!(user = %attrs.user.name, verb = %attrs.verb, resource = %attrs.resource, namespace = %attrs.namespace, "forbidden");
    Err(crate::authn::forbidden(&attrs, decision.reason()))
}

/// A watch's response, counted in `gauge` until its body is dropped (the
/// watch ended or its client went away).
fn long_running(response: Response, gauge: prometheus_client::metrics::gauge::Gauge) -> Response {
    struct Open(prometheus_client::metrics::gauge::Gauge);
    impl Drop for Open {
        fn drop(&mut self) {
            self.0.dec();
        }
    }
    gauge.inc();
    let open = Open(gauge);
    let (parts, body) = response.into_parts();
    let stream = futures_util::StreamExt::map(body.into_data_stream(), move |chunk| {
        let _ = &open;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

async fn route(state: Arc<State>, req: Request, user: Arc<UserInfo>) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_owned();
    let get_only = |value: Option<serde_json::Value>| -> Result<Response, ApiError> {
        if parts.method != Method::GET {
            return Err(method_not_allowed());
        }
        super::negotiate::json_only(&parts.headers)?;
        value
            .map(|v| respond::json(200, &v))
            .ok_or_else(resource_not_found)
    };
    match path.trim_end_matches('/') {
        "/version" => return get_only(Some(discovery::version())),
        "/metrics" => {
            if parts.method != Method::GET {
                return Err(method_not_allowed());
            }
            let served = state.registry.served();
            let text = state.metrics.encode(&state.store, &served.defs);
            let mut resp = (StatusCode::OK, text).into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            return Ok(resp);
        }
        p if super::openapi::serves(p) => {
            let served = state.registry.served();
            return super::openapi::serve(&parts.method, &parts.headers, p, &served);
        }
        _ => {}
    }
    let Some(api) = resolve(&path) else {
        return Ok(text(StatusCode::NOT_FOUND, "404 page not found\n"));
    };
    let served = state.registry.served();
    let rp = match api {
        ApiPath::Root if path.starts_with("/apis") => {
            return get_only(Some(discovery::group_list(&served)));
        }
        ApiPath::Root => return get_only(Some(discovery::core_versions())),
        ApiPath::Group(g) => return get_only(discovery::group(&served, &g)),
        ApiPath::GroupVersion(g, v) => {
            return get_only(discovery::resource_list(&served, &g, &v));
        }
        ApiPath::Resource(rp) => rp,
    };
    drop(served);
    let body = axum::body::to_bytes(Body::new(body), MAX_BODY)
        .await
        .map_err(|_| {
            failure(
                413,
                "RequestEntityTooLarge",
                "Request entity too large: limit is 3145728",
                None,
            )
        });
    let method = parts.method;
    let watch = method == Method::GET
        && Query::parse(parts.uri.query())
            .flag("watch")
            .unwrap_or(false);
    let result = match body {
        Ok(body) => {
            let headers = parts.headers.clone();
            match review::find(&rp) {
                Some(def) => review::create(
                    &state,
                    def,
                    &rp,
                    &method,
                    parts.uri.query(),
                    &headers,
                    body,
                    &user,
                ),
                None => handle(state, rp, method, parts.uri.query(), headers, body, user).await,
            }
        }
        Err(e) => Err(e),
    };
    if super::negotiate::prefers_protobuf(&parts.headers) {
        return Ok(super::protobuf::answer(result, watch).await);
    }
    result
}

/// Resolves the call, decodes a protobuf body and runs the verb's handler.
async fn handle(
    state: Arc<State>,
    rp: ResourcePath,
    method: Method,
    query: Option<&str>,
    headers: axum::http::HeaderMap,
    body: bytes::Bytes,
    user: Arc<UserInfo>,
) -> Result<Response, ApiError> {
    let protobuf = matches!(method, Method::POST | Method::PUT | Method::DELETE)
        && !body.is_empty()
        && body_is_protobuf(&headers)?;
    let mut call = resolve_call(state, rp, query, headers, body, user)?;
    if protobuf && call.def.custom.is_some() {
        // Custom resources have no protobuf form (kube-apiserver's CR handler
        // serves JSON and YAML only).
        return Err(super::errors::unsupported_media_type(&[
            "application/json",
            "application/yaml",
        ]));
    }
    if protobuf {
        call.body = super::protobuf::to_json(
            call.def,
            call.subresource.as_deref(),
            method == Method::DELETE,
            &call.body,
        )?
        .into();
    }
    let sub = call.subresource.clone();
    let writes_crds = call.def.plural == "customresourcedefinitions"
        && call.def.group == "apiextensions.k8s.io"
        && method != Method::GET
        && !call.query.dry_run().unwrap_or(false);
    let writes_cluster_roles = super::rbac::writes_cluster_roles(call.def)
        && method != Method::GET
        && !call.query.dry_run().unwrap_or(false);
    let result = dispatch_verb(&call, &method, sub.as_deref()).await;
    if writes_crds && result.is_ok() {
        super::crd::sync(&call.state).await;
    }
    if writes_cluster_roles && result.is_ok() {
        super::rbac::aggregate(&call.state).await;
    }
    result
}

/// Runs the handler of `method` on `call` (`sub`: its subresource).
async fn dispatch_verb(
    call: &Call,
    method: &Method,
    sub: Option<&str>,
) -> Result<Response, ApiError> {
    let method = method.clone();
    match (sub, call.name.is_some()) {
        (None, false) => match method {
            Method::GET if call.query.flag("watch")? => watch::watch(call).await,
            Method::GET => list::list(call).await,
            Method::POST => create::create(call).await,
            Method::DELETE => delete::delete_collection(call).await,
            _ => Err(method_not_allowed()),
        },
        (None, true) => match method {
            Method::GET => get::get(call).await,
            Method::PUT => update::update(call).await,
            Method::PATCH => patch::patch(call).await,
            Method::DELETE => delete::delete(call).await,
            _ => Err(method_not_allowed()),
        },
        (Some("status" | "ephemeralcontainers" | "resize"), _) => match method {
            Method::GET => get::get(call).await,
            Method::PUT => update::update(call).await,
            Method::PATCH => patch::patch(call).await,
            _ => Err(method_not_allowed()),
        },
        (Some("finalize"), _) => match method {
            Method::PUT => update::update(call).await,
            _ => Err(method_not_allowed()),
        },
        (Some("scale"), _) => match method {
            Method::GET => scale::get(call).await,
            Method::PUT => scale::update(call).await,
            Method::PATCH => scale::patch(call).await,
            _ => Err(method_not_allowed()),
        },
        (Some("eviction"), _) => match method {
            Method::POST => eviction::evict(call).await,
            _ => Err(method_not_allowed()),
        },
        (Some("token"), _) => match method {
            Method::POST => token::create(call).await,
            _ => Err(method_not_allowed()),
        },
        (Some("binding"), _) => match method {
            Method::POST => binding::bind(call).await,
            _ => Err(method_not_allowed()),
        },
        _ => Err(resource_not_found()),
    }
}

/// Bodies of creates, updates, deletes and subresource posts are JSON (a
/// missing `Content-Type` is read as JSON) or protobuf (`Ok(true)`,
/// decoded by [`super::protobuf`]); 415 otherwise.
pub(super) fn body_is_protobuf(headers: &axum::http::HeaderMap) -> Result<bool, ApiError> {
    let ty = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    match ty.split(';').next().unwrap_or_default().trim() {
        "application/json" | "" | "*/*" => Ok(false),
        super::protobuf::PROTOBUF => Ok(true),
        _ => Err(super::errors::unsupported_media_type(
            super::negotiate::PRODUCED,
        )),
    }
}

fn resolve_call(
    state: Arc<State>,
    rp: ResourcePath,
    query: Option<&str>,
    headers: axum::http::HeaderMap,
    body: bytes::Bytes,
    user: Arc<UserInfo>,
) -> Result<Call, ApiError> {
    let def = state
        .registry
        .find(&rp.group, &rp.version, &rp.resource)
        .ok_or_else(resource_not_found)?;
    let is_namespace_object = def.group.is_empty() && def.plural == "namespaces";
    if !def.namespaced && rp.namespace.is_some() && !is_namespace_object {
        return Err(resource_not_found());
    }
    if def.namespaced && rp.namespace.is_none() && rp.name.is_some() {
        return Err(resource_not_found());
    }
    if let Some(sub) = rp.subresource.as_deref()
        && !def.has_subresource(sub)
    {
        return Err(resource_not_found());
    }
    Ok(Call {
        state,
        def,
        namespace: rp.namespace,
        name: rp.name,
        subresource: rp.subresource,
        query: Query::parse(query),
        headers,
        body,
        user,
    })
}
