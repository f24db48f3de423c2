//! `POST serviceaccounts/<name>/token` (`authentication.k8s.io/v1`
//! TokenRequest, what `kubectl create token` sends), as upstream's
//! `TokenREST` (`pkg/registry/core/serviceaccount/storage/token.go`): the
//! service account must exist (and match `metadata.uid` when given),
//! `spec.expirationSeconds` defaults to an hour and must lie between 10
//! minutes and 2^32 seconds, `spec.audiences` defaults to the server's;
//! `spec.boundObjectRef` binds the token to a Pod (whose service account it
//! must be; its node goes into the claims too), a Secret or a Node, which
//! must exist (and have the given uid). The answer is the request with
//! `status.token` — an ES256 JWT signed with the server's key
//! ([`crate::authn`]) — and `status.expirationTimestamp`.

use axum::response::Response;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec, TokenRequestStatus};
use serde_json::Value;

use exitplan_api::field::{Error, ErrorList, Path};
use exitplan_api::status::{GroupKind, InvalidError};

use super::errors::{ApiError, bad_request, conflict, internal, invalid};
use super::respond;
use super::state::{Call, State};
use crate::authn::claims::{Bound, Claims, NewToken, Ref};
use crate::registry::find;

/// `spec.expirationSeconds` when unset.
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

/// `WarnOnlyBoundTokenExpirationSeconds`: the lifetime kubelets ask for,
/// which a pod-bound token gets extended to a year for (warning after the
/// hour), as kube-apiserver's default `--service-account-extend-token-expiration`.
const WARN_ONLY_EXPIRATION_SECONDS: i64 = 3607;

/// `ExpirationExtensionSeconds`: the extended lifetime.
const EXTENDED_EXPIRATION_SECONDS: i64 = 24 * 365 * 60 * 60;

const KIND: GroupKind = GroupKind {
    group: "authentication.k8s.io",
    kind: "TokenRequest",
};

/// `ValidateTokenRequest`.
fn validate(spec: &TokenRequestSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = Path::new("spec").child("expirationSeconds");
    let seconds = spec
        .expiration_seconds
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    if seconds < 600 {
        errs.push(Error::invalid(
            &path,
            seconds,
            "may not specify a duration less than 10 minutes",
        ));
    }
    if seconds > 1 << 32 {
        errs.push(Error::invalid(
            &path,
            seconds,
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    errs
}

fn invalid_request(name: &str, errors: ErrorList) -> ApiError {
    invalid(&InvalidError {
        kind: KIND,
        name: name.to_owned(),
        errors,
    })
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The stored core object `plural`/`name` (404 as a GET answers).
fn core_object(
    state: &State,
    plural: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, ApiError> {
    let def = find("", "v1", plural).ok_or_else(|| internal(format!("{plural} not served")))?;
    super::get::current(state, def, namespace, name).map(|(_, v)| v)
}

/// `schema.FromAPIVersionAndKind(...).String()` and the group.
fn gvk_of(api_version: &str, kind: &str) -> (String, String) {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    (group.to_owned(), format!("{group}/{version}, Kind={kind}"))
}

/// The object `spec.boundObjectRef` names, checked as upstream checks it.
fn bound_object(
    call: &Call,
    namespace: &str,
    sa: &str,
    spec: &TokenRequestSpec,
) -> Result<Bound, ApiError> {
    let Some(r) = &spec.bound_object_ref else {
        return Ok(Bound::None);
    };
    let state = &call.state;
    let kind = r.kind.as_deref().unwrap_or_default();
    let name = r.name.as_deref().unwrap_or_default();
    let (group, gvk) = gvk_of(r.api_version.as_deref().unwrap_or_default(), kind);
    let (bound, uid) = match (group.as_str(), kind) {
        ("", "Pod") => {
            let pod = core_object(state, "pods", Some(namespace), name)?;
            if str_at(&pod, "/spec/serviceAccountName") != sa {
                return Err(bad_request(format!(
                    "cannot bind token for serviceaccount {} to pod running with different serviceaccount name.",
                    exitplan_api::field::go_quote(sa)
                )));
            }
            let uid = str_at(&pod, "/metadata/uid").to_owned();
            let node_name = str_at(&pod, "/spec/nodeName");
            let node = (!node_name.is_empty()).then(|| {
                let node_uid = core_object(state, "nodes", None, node_name)
                    .map(|n| str_at(&n, "/metadata/uid").to_owned())
                    .unwrap_or_default();
                Ref::new(node_name, &node_uid)
            });
            (Bound::Pod(Ref::new(name, &uid), node), uid)
        }
        ("", "Node") => {
            let node = core_object(state, "nodes", None, name)?;
            let uid = str_at(&node, "/metadata/uid").to_owned();
            (Bound::Node(Ref::new(name, &uid)), uid)
        }
        ("", "Secret") => {
            let secret = core_object(state, "secrets", Some(namespace), name)?;
            let uid = str_at(&secret, "/metadata/uid").to_owned();
            (Bound::Secret(Ref::new(name, &uid)), uid)
        }
        _ => {
            return Err(bad_request(format!(
                "cannot bind token to object of type {gvk}"
            )));
        }
    };
    let given = r.uid.as_deref().unwrap_or_default();
    if !given.is_empty() && given != uid {
        return Err(conflict(
            &group,
            kind,
            name,
            &format!(
                "the UID in the bound object reference ({given}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        ));
    }
    Ok(bound)
}

/// `POST serviceaccounts/<name>/token`.
pub async fn create(call: &Call) -> Result<Response, ApiError> {
    call.query.validate_write_options("CreateOptions")?;
    let cannot = |e: serde_json::Error| {
        bad_request(format!(
            "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: {e}"
        ))
    };
    let decoded: TokenRequest = serde_json::from_slice(&call.body).map_err(cannot)?;
    let mut body = serde_json::to_value(&decoded).map_err(cannot)?;
    let caller = crate::webhook::caller(call);
    super::binding::admit_subresource_create(
        call,
        crate::webhook::Gvn::new("authentication.k8s.io", "v1", "TokenRequest"),
        "token",
        &mut body,
        &caller,
    )
    .await?;
    let mut tr: TokenRequest = serde_json::from_value(body).map_err(cannot)?;
    let name = call.name().to_owned();
    let namespace = call.namespace.clone().unwrap_or_default();
    let meta = &mut tr.metadata;
    if let Some(n) = meta.name.as_deref().filter(|n| !n.is_empty() && *n != name) {
        let errors = ErrorList::from(vec![Error::invalid(
            &Path::new("metadata").child("name"),
            n,
            "must match the service account name if specified",
        )]);
        return Err(invalid_request(&name, errors));
    }
    if let Some(ns) = meta
        .namespace
        .as_deref()
        .filter(|ns| !ns.is_empty() && *ns != namespace)
    {
        let errors = ErrorList::from(vec![Error::invalid(
            &Path::new("metadata").child("namespace"),
            ns,
            "must match the service account namespace if specified",
        )]);
        return Err(invalid_request(&name, errors));
    }
    let (_, account) = super::get::current(&call.state, call.def, Some(&namespace), &name)?;
    let sa_uid = str_at(&account, "/metadata/uid").to_owned();
    if let Some(uid) = meta
        .uid
        .as_deref()
        .filter(|u| !u.is_empty() && *u != sa_uid)
    {
        return Err(conflict(
            KIND.group,
            KIND.kind,
            &name,
            &format!(
                "the UID in the token request ({uid}) does not match the UID of the service account ({sa_uid})"
            ),
        ));
    }
    let authn = &call.state.authn;
    let spec = tr.spec.get_or_insert_with(Default::default);
    let seconds = *spec
        .expiration_seconds
        .get_or_insert(DEFAULT_EXPIRATION_SECONDS);
    if spec.audiences.as_ref().is_none_or(Vec::is_empty) {
        spec.audiences = Some(authn.audiences().to_vec());
    }
    meta.name.get_or_insert_with(|| name.clone());
    meta.namespace.get_or_insert_with(|| namespace.clone());
    meta.uid.get_or_insert_with(|| sa_uid.clone());
    let now = call.state.clock.now();
    meta.creation_timestamp = Some(exitplan_api::time::mtime(now));
    let errors = validate(spec);
    if !errors.is_empty() {
        return Err(invalid_request("", errors));
    }
    let bound = bound_object(call, &namespace, &name, spec)?;
    let audiences = spec.audiences.clone().unwrap_or_default();
    let (mut lifetime, mut warn_after) = (seconds, 0);
    let kube_audiences = audiences.iter().all(|a| authn.audiences().contains(a));
    if matches!(bound, Bound::Pod(..)) && seconds == WARN_ONLY_EXPIRATION_SECONDS && kube_audiences
    {
        warn_after = seconds;
        lifetime = EXTENDED_EXPIRATION_SECONDS;
    }
    let claims = Claims::new(
        authn.issuer(),
        NewToken {
            namespace: &namespace,
            service_account: Ref::new(&name, &sa_uid),
            bound,
            expiration_seconds: lifetime,
            warn_after,
            audiences,
            jti: super::meta::new_uid(),
        },
        now.as_second(),
    );
    let payload = serde_json::to_vec(&claims).map_err(internal)?;
    let token = authn
        .key()
        .sign(&payload)
        .map_err(|e| internal(format!("failed to generate token: {e}")))?;
    let expires = now
        .checked_add(jiff::SignedDuration::from_secs(seconds))
        .map_err(|e| bad_request(e.to_string()))?;
    tr.status = Some(TokenRequestStatus {
        token: Some(token),
        expiration_timestamp: Some(exitplan_api::time::mtime(expires)),
    });
    let mut out = serde_json::to_value(&tr).map_err(internal)?;
    if let Some(m) = out.as_object_mut() {
        m.insert("apiVersion".into(), "authentication.k8s.io/v1".into());
        m.insert("kind".into(), "TokenRequest".into());
    }
    Ok(super::fieldvalidation::warn(
        respond::json(201, &out),
        &caller.warnings(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_kinds_as_upstream_names_them() {
        assert_eq!(gvk_of("v1", "Pod"), ("".into(), "/v1, Kind=Pod".into()));
        assert_eq!(
            gvk_of("apps/v1", "Deployment"),
            ("apps".into(), "apps/v1, Kind=Deployment".into())
        );
    }

    #[test]
    fn expiration_bounds_are_upstreams() {
        let mut spec = TokenRequestSpec {
            expiration_seconds: Some(599),
            ..TokenRequestSpec::default()
        };
        assert_eq!(
            validate(&spec).aggregate().as_deref(),
            Some(
                "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
            )
        );
        spec.expiration_seconds = Some(600);
        assert!(validate(&spec).is_empty());
        spec.expiration_seconds = Some((1 << 32) + 1);
        assert_eq!(
            validate(&spec).aggregate().as_deref(),
            Some(
                "spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"
            )
        );
    }
}
