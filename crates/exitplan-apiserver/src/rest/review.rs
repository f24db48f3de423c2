//! Create-only "review" resources, answered and never stored:
//! `authentication.k8s.io/v1` TokenReview (`pkg/registry/authentication/
//! tokenreview`) and SelfSubjectReview (`kubectl auth whoami`,
//! `pkg/registry/authentication/selfsubjectreview`). Each is one row of
//! [`REVIEWS`] (discovery lists the rows with verbs `["create"]`) and one
//! [`Handler`]; `POST` to the collection decodes the body (JSON or
//! protobuf), runs the handler and answers 201 with what it returns. A new
//! review (`authorization.k8s.io/v1` SubjectAccessReview, ...) is one more
//! row and one more handler.

use std::sync::Arc;

use axum::http::{HeaderMap, Method};
use axum::response::Response;
use exitplan_authz::UserInfo;
use serde_json::{Map, Value, json};

use super::errors::{ApiError, bad_request, method_not_allowed, resource_not_found};
use super::query::Query;
use super::request::ResourcePath;
use super::respond;
use super::state::State;
use crate::protobuf::TypeMeta;

/// What a review handler gets.
#[derive(Debug)]
pub struct ReviewCall<'a> {
    /// Shared state.
    pub state: &'a State,
    /// Who asks (after impersonation).
    pub user: &'a Arc<UserInfo>,
    /// The namespace of the path (namespaced reviews only).
    pub namespace: Option<&'a str>,
    /// The request body as JSON.
    pub body: Value,
}

/// A review's handler: the object to answer with (its `apiVersion` and
/// `kind` are set by the caller).
pub type Handler = fn(&ReviewCall<'_>) -> Result<Value, ApiError>;

/// One create-only review resource.
#[derive(Debug)]
pub struct ReviewDef {
    /// API group.
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Plural resource name.
    pub plural: &'static str,
    /// Singular resource name.
    pub singular: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Whether it lives in a namespace (`LocalSubjectAccessReview`).
    pub namespaced: bool,
    /// Its handler.
    pub handler: Handler,
}

impl ReviewDef {
    /// `group/version`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
}

/// The review resources served.
pub static REVIEWS: &[ReviewDef] = &[
    ReviewDef {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        kind: "SelfSubjectReview",
        namespaced: false,
        handler: self_subject_review,
    },
    ReviewDef {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "tokenreviews",
        singular: "tokenreview",
        kind: "TokenReview",
        namespaced: false,
        handler: token_review,
    },
];

/// The review at `rp`'s group, version and resource, if any.
pub fn find(rp: &ResourcePath) -> Option<&'static ReviewDef> {
    REVIEWS
        .iter()
        .find(|r| r.group == rp.group && r.version == rp.version && r.plural == rp.resource)
}

/// `POST` of a review: decode, run the handler, answer 201.
#[allow(clippy::too_many_arguments)]
pub fn create(
    state: &State,
    def: &'static ReviewDef,
    rp: &ResourcePath,
    method: &Method,
    query: Option<&str>,
    headers: &HeaderMap,
    body: bytes::Bytes,
    user: &Arc<UserInfo>,
) -> Result<Response, ApiError> {
    if rp.name.is_some() || rp.namespace.is_some() != def.namespaced {
        return Err(resource_not_found());
    }
    if method != Method::POST {
        return Err(method_not_allowed());
    }
    Query::parse(query).validate_write_options("CreateOptions")?;
    let json = if !body.is_empty() && super::router::body_is_protobuf(headers)? {
        super::protobuf::decode_as(
            &TypeMeta {
                api_version: def.api_version(),
                kind: def.kind.to_owned(),
            },
            &body,
        )?
        .into()
    } else {
        body
    };
    let value: Value = serde_json::from_slice(&json)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| {
            bad_request(format!(
                "{kind} in version {:?} cannot be handled as a {kind}: the body is not a JSON object",
                def.version,
                kind = def.kind
            ))
        })?;
    let call = ReviewCall {
        state,
        user,
        namespace: rp.namespace.as_deref(),
        body: value,
    };
    let mut out = (def.handler)(&call)?;
    if let Some(m) = out.as_object_mut() {
        m.insert("kind".into(), def.kind.into());
        m.insert("apiVersion".into(), def.api_version().into());
    }
    Ok(respond::json(201, &out))
}

/// `authentication.UserInfo` as Go renders it (every field `omitempty`).
pub fn user_info_json(user: &UserInfo) -> Value {
    let mut m = Map::new();
    if !user.name.is_empty() {
        m.insert("username".into(), user.name.clone().into());
    }
    if !user.uid.is_empty() {
        m.insert("uid".into(), user.uid.clone().into());
    }
    if !user.groups.is_empty() {
        m.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        m.insert("extra".into(), json!(user.extra));
    }
    Value::Object(m)
}

/// The request's `metadata`, with upstream's `creationTimestamp: null`
/// when unset.
fn metadata_of(body: &Value) -> Value {
    let mut meta = body
        .get("metadata")
        .filter(|m| m.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        m.entry("creationTimestamp").or_insert(Value::Null);
    }
    meta
}

/// TokenReview: whether `spec.token` authenticates (for `spec.audiences`,
/// default the server's), as whom and for which audiences; the error of a
/// token that does not.
fn token_review(call: &ReviewCall<'_>) -> Result<Value, ApiError> {
    let spec = call.body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let token = spec
        .get("token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if token.is_empty() {
        return Err(bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let requested = if audiences.is_empty() {
        call.state.authn.audiences().to_vec()
    } else {
        audiences
    };
    let authn = &call.state.authn;
    let status = match authn.authenticate_token(call.state, token, Some(&requested)) {
        Ok(a) => {
            let mut status = json!({"authenticated": true, "user": user_info_json(&a.user)});
            if !a.audiences.is_empty() {
                status["audiences"] = json!(a.audiences);
            }
            status
        }
        Err(error) => json!({"user": {}, "error": error}),
    };
    Ok(json!({
        "metadata": metadata_of(&call.body),
        "spec": spec,
        "status": status,
    }))
}

/// SelfSubjectReview: who the caller is.
fn self_subject_review(call: &ReviewCall<'_>) -> Result<Value, ApiError> {
    let now = exitplan_api::time::format_rfc3339(call.state.clock.now());
    Ok(json!({
        "metadata": {"creationTimestamp": now},
        "status": {"userInfo": user_info_json(call.user)},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_omits_empty_fields() {
        assert_eq!(user_info_json(&UserInfo::default()), json!({}));
        let sa = UserInfo::service_account("ns", "x", "u");
        assert_eq!(
            user_info_json(&sa),
            json!({
                "username": "system:serviceaccount:ns:x",
                "uid": "u",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"],
            })
        );
        assert_eq!(metadata_of(&json!({})), json!({"creationTimestamp": null}));
    }

    #[test]
    fn table_rows_are_unique_and_found() {
        for r in REVIEWS {
            let rp = ResourcePath {
                group: r.group.to_owned(),
                version: r.version.to_owned(),
                namespace: None,
                resource: r.plural.to_owned(),
                name: None,
                subresource: None,
            };
            assert!(std::ptr::eq(find(&rp).expect("found"), r), "{}", r.plural);
        }
    }
}
