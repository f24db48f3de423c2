//! Content negotiation: JSON objects, or a `meta.k8s.io` Table when the
//! `Accept` header asks for `application/json;as=Table` (what `kubectl get`
//! sends), 406 when nothing acceptable is asked for; and the OpenAPI
//! documents' own negotiation ([`openapi`]: JSON or gnostic protobuf, as
//! kube-openapi's handlers choose).

use axum::http::HeaderMap;
use axum::http::header::ACCEPT;

use super::errors::{ApiError, not_acceptable};
use super::query::Query;
use crate::discovery::IncludeObject;

/// The media types this server produces.
pub const PRODUCED: &[&str] = &["application/json", "application/vnd.kubernetes.protobuf"];

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
            // Objects in protobuf: rendered as JSON, transcoded at the edge.
            crate::protobuf::MEDIA_TYPE if param("as").is_none() => json = true,
            _ => {}
        }
    }
    if json {
        Ok(Output::Json)
    } else {
        Err(not_acceptable(PRODUCED))
    }
}

/// Whether the answer to a resource request is protobuf: the first
/// `Accept` clause (in goautoneg's order) that this server serves is
/// `application/vnd.kubernetes.protobuf` without an `as=` transformation
/// (Tables and PartialObjectMetadata are served as JSON only).
pub fn prefers_protobuf(headers: &HeaderMap) -> bool {
    let accept = headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    for c in clauses(accept) {
        match (c.ty, c.subtype, c.transform) {
            ("application", "vnd.kubernetes.protobuf", None) => return true,
            ("application", "json", None | Some("Table")) | ("application" | "*", "*", _) => {
                return false;
            }
            _ => {}
        }
    }
    false
}

/// For documents served only as JSON (discovery): 406 unless the `Accept`
/// header allows JSON.
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

/// The formats of an OpenAPI document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenApiFormat {
    /// `application/json`.
    Json,
    /// gnostic's protobuf document.
    Protobuf,
}

/// The `Content-Type` of `/openapi/v2` served as protobuf (upstream answers
/// with this spelling whichever of the two it was asked for).
pub const OPENAPI_V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The media subtypes (of `application`) that ask `/openapi/v2` for
/// protobuf: the current one and the deprecated one client-go sends.
pub const OPENAPI_V2_PROTOBUF_SUBTYPES: &[&str] = &[
    "com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "com.github.proto-openapi.spec.v2.v1.0+protobuf",
];

/// One `Accept` clause: type, subtype and quality.
struct Clause<'a> {
    ty: &'a str,
    subtype: &'a str,
    q: f64,
    /// The `as=` parameter (a Table, PartialObjectMetadata, …).
    transform: Option<&'a str>,
}

/// The clauses of an `Accept` header in goautoneg's order: by quality, a
/// concrete type before `*`, a concrete subtype before `*` (ties keep
/// their order). An absent or empty header is `*/*`.
fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let accept = if accept.trim().is_empty() {
        "*/*"
    } else {
        accept
    };
    let mut out: Vec<Clause<'_>> = accept
        .split(',')
        .filter_map(|part| {
            let mut params = part.split(';').map(str::trim);
            let range = params.next().unwrap_or_default();
            let (ty, subtype) = match range.split_once('/') {
                Some((t, s)) => (t, s),
                None if range == "*" => ("*", "*"),
                None => return None,
            };
            let params: Vec<(&str, &str)> = params
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect();
            let q = params
                .iter()
                .find(|(k, _)| *k == "q")
                .and_then(|(_, v)| v.parse::<f64>().ok())
                .unwrap_or(1.0);
            let transform = params.iter().find(|(k, _)| *k == "as").map(|(_, v)| *v);
            Some(Clause {
                ty,
                subtype,
                q,
                transform,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.q.total_cmp(&a.q)
            .then((a.ty == "*").cmp(&(b.ty == "*")))
            .then((a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    out
}

/// The format an OpenAPI document is served in, as kube-openapi's handler
/// picks it: for each `Accept` clause in preference order, the first of
/// `application/json` then the `protobuf` subtypes it matches (so `*/*`
/// means JSON). `None` when nothing matches: upstream answers 406 with an
/// empty body then. Pass no `protobuf` subtypes for a document not served
/// as protobuf.
pub fn openapi(headers: &HeaderMap, protobuf: &[&str]) -> Option<OpenApiFormat> {
    let accept = headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let served = std::iter::once(("json", OpenApiFormat::Json))
        .chain(protobuf.iter().map(|s| (*s, OpenApiFormat::Protobuf)));
    let served: Vec<(&str, OpenApiFormat)> = served.collect();
    clauses(accept).iter().find_map(|c| {
        served.iter().find_map(|(subtype, format)| {
            let ty_ok = c.ty == "application" || c.ty == "*";
            let sub_ok = c.subtype == *subtype || c.subtype == "*";
            (ty_ok && sub_ok).then_some(*format)
        })
    })
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
        assert_eq!(
            with("application/vnd.kubernetes.protobuf"),
            Ok(Output::Json)
        );
        let e = with("application/yaml").expect_err("406");
        assert_eq!(e.code(), 406);
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/vnd.kubernetes.protobuf"),
        );
        assert_eq!(json_only(&h).map_err(|e| e.code()), Err(406));
        assert!(json_only(&HeaderMap::new()).is_ok());
    }

    /// Which Accept headers get protobuf answers: client-go's typed
    /// clients (`protobuf, */*` and `protobuf, application/json`) do;
    /// kubectl get's Table request, JSON first, and metadata-only requests
    /// (`as=PartialObjectMetadata`, not served) do not.
    #[test]
    fn protobuf_answers_go_to_clients_that_prefer_them() {
        let cases = [
            ("application/vnd.kubernetes.protobuf, */*", true),
            ("application/vnd.kubernetes.protobuf,application/json", true),
            ("application/vnd.kubernetes.protobuf", true),
            (
                "application/json, application/vnd.kubernetes.protobuf",
                false,
            ),
            ("*/*, application/vnd.kubernetes.protobuf", true),
            (
                "application/vnd.kubernetes.protobuf;q=0.5, application/json",
                false,
            ),
            (
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
                false,
            ),
            (
                "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json",
                false,
            ),
            ("", false),
            ("application/json", false),
        ];
        for (accept, want) in cases {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, HeaderValue::from_str(accept).expect("header"));
            assert_eq!(prefers_protobuf(&h), want, "{accept:?}");
        }
    }

    /// kube-openapi's handler tests (`pkg/handler/handler_test.go`,
    /// `TestRegisterOpenAPIVersionedService`): the Accept headers and what
    /// `/openapi/v2` answers.
    #[test]
    fn openapi_v2_negotiates_like_kube_openapi() {
        use OpenApiFormat::{Json, Protobuf};
        const PB: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
        const PB_OLD: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
        let cases: &[(String, Option<OpenApiFormat>)] = &[
            (String::new(), Some(Json)),
            ("*/*".into(), Some(Json)),
            ("application/*".into(), Some(Json)),
            ("application/json".into(), Some(Json)),
            ("test/test".into(), None),
            ("application/test".into(), None),
            ("application/test, */*".into(), Some(Json)),
            ("application/test, application/json".into(), Some(Json)),
            (PB.into(), Some(Protobuf)),
            (format!("application/json, {PB}"), Some(Json)),
            (format!("{PB}, application/json"), Some(Protobuf)),
            (format!("{PB}; q=0.5, application/json"), Some(Json)),
            (PB_OLD.into(), Some(Protobuf)),
            (format!("application/json, {PB_OLD}"), Some(Json)),
            (format!("{PB_OLD}, application/json"), Some(Protobuf)),
            (format!("{PB_OLD}; q=0.5, application/json"), Some(Json)),
            // Not in upstream's table: kubectl's discovery Accept, the
            // resource protobuf type, and the v3 protobuf type.
            ("application/json, */*".into(), Some(Json)),
            ("application/vnd.kubernetes.protobuf".into(), None),
            (
                "application/com.github.proto-openapi.spec.v3.v1.0+protobuf".into(),
                None,
            ),
        ];
        for (accept, want) in cases {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, HeaderValue::from_str(accept).expect("header"));
            assert_eq!(
                openapi(&h, OPENAPI_V2_PROTOBUF_SUBTYPES),
                *want,
                "{accept:?}"
            );
        }
        assert_eq!(
            openapi(&HeaderMap::new(), OPENAPI_V2_PROTOBUF_SUBTYPES),
            Some(Json)
        );
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
        );
        assert_eq!(openapi(&h, &[]), None, "a document not served as protobuf");
    }
}
