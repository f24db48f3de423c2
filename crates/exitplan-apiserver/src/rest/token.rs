//! `POST serviceaccounts/<name>/token` (`authentication.k8s.io/v1`
//! TokenRequest, what `kubectl create token` sends), as upstream's
//! `TokenREST`: the service account must exist, `spec.expirationSeconds`
//! defaults to an hour and must lie between 10 minutes and 2^32 seconds,
//! `spec.audiences` defaults to the server's audience; the answer is the
//! request with `status.token` and `status.expirationTimestamp`.
//!
//! The token is a JWT with upstream's claims (issuer, audiences, expiry,
//! `sub: system:serviceaccount:<ns>:<name>`, the `kubernetes.io` claim) but
//! unsigned (`alg: none`): the server does not authenticate service
//! account tokens yet (its one credential is the bearer token of its
//! kubeconfig), see docs/apiserver.md.

use axum::response::Response;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec, TokenRequestStatus};
use serde_json::{Value, json};

use exitplan_api::field::{Error, ErrorList, Path};
use exitplan_api::status::{GroupKind, InvalidError};

use super::errors::{ApiError, bad_request, invalid};
use super::respond;
use super::state::Call;
use crate::kubeconfig::base64;

/// The issuer and default audience (kube-apiserver's usual
/// `--service-account-issuer` / `--api-audiences`).
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// `spec.expirationSeconds` when unset.
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

/// Base64url without padding (JWT segments).
fn base64url(bytes: &[u8]) -> String {
    base64(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

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
    let (_, account) = super::get::current(&call.state, call.def, Some(&namespace), &name)?;
    let spec = tr.spec.get_or_insert_with(Default::default);
    let seconds = *spec
        .expiration_seconds
        .get_or_insert(DEFAULT_EXPIRATION_SECONDS);
    if spec.audiences.as_ref().is_none_or(Vec::is_empty) {
        spec.audiences = Some(vec![ISSUER.to_owned()]);
    }
    let audiences = spec.audiences.clone();
    let errors = validate(spec);
    if !errors.is_empty() {
        return Err(invalid(&InvalidError {
            kind: GroupKind {
                group: "authentication.k8s.io",
                kind: "TokenRequest",
            },
            name,
            errors,
        }));
    }
    let now = call.state.clock.now();
    let expires = now
        .checked_add(jiff::SignedDuration::from_secs(seconds))
        .map_err(|e| bad_request(e.to_string()))?;
    let uid = account
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let claims = json!({
        "aud": audiences,
        "exp": expires.as_second(),
        "iat": now.as_second(),
        "iss": ISSUER,
        "kubernetes.io": {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": uid},
        },
        "nbf": now.as_second(),
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
    });
    let header = json!({"alg": "none", "typ": "JWT"});
    let token = format!(
        "{}.{}.",
        base64url(header.to_string().as_bytes()),
        base64url(claims.to_string().as_bytes())
    );
    tr.status = Some(TokenRequestStatus {
        token: Some(token),
        expiration_timestamp: Some(exitplan_api::time::mtime(expires)),
    });
    let mut out = serde_json::to_value(&tr).map_err(super::errors::internal)?;
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
    fn base64url_has_no_padding_and_url_safe_characters() {
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
        assert_eq!(base64url(b"{}"), "e30");
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
