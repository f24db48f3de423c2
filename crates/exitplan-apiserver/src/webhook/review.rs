//! The AdmissionReview `admission.k8s.io/v1` a webhook is sent, and the
//! checks of its answer (upstream's `request.CreateV1AdmissionObjects` and
//! `VerifyAdmissionResponse`). k8s-openapi has no admission types: the
//! review is JSON with upstream's field names.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde_json::{Map, Value, json};

use super::{Attributes, Gvn};

/// The review's `apiVersion`.
pub const API_VERSION: &str = "admission.k8s.io/v1";

fn gvk(g: &Gvn) -> Value {
    json!({"group": g.group, "version": g.version, "kind": g.name})
}

fn gvr(g: &Gvn) -> Value {
    json!({"group": g.group, "version": g.version, "resource": g.name})
}

/// The `request.userInfo` of a user (`authenticationv1.UserInfo`; empty
/// fields omitted).
pub fn user_info(user: &exitplan_authz::UserInfo) -> Value {
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

/// The `request` of an AdmissionReview: `uid`, the request's kind and
/// resource (as `kind`/`resource` and `requestKind`/`requestResource`), the
/// objects, `dryRun` and `options`.
pub fn request(uid: &str, attrs: &Attributes<'_>, object: Option<&Value>) -> Value {
    let mut r = Map::new();
    r.insert("uid".into(), uid.into());
    r.insert("kind".into(), gvk(&attrs.kind));
    r.insert("resource".into(), gvr(&attrs.resource));
    if !attrs.subresource.is_empty() {
        r.insert("subResource".into(), attrs.subresource.into());
    }
    r.insert("requestKind".into(), gvk(&attrs.kind));
    r.insert("requestResource".into(), gvr(&attrs.resource));
    if !attrs.subresource.is_empty() {
        r.insert("requestSubResource".into(), attrs.subresource.into());
    }
    if !attrs.name.is_empty() {
        r.insert("name".into(), attrs.name.into());
    }
    if !attrs.namespace.is_empty() {
        r.insert("namespace".into(), attrs.namespace.into());
    }
    r.insert("operation".into(), attrs.operation.as_str().into());
    r.insert("userInfo".into(), user_info(attrs.user));
    r.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    r.insert(
        "oldObject".into(),
        attrs.old_object.cloned().unwrap_or(Value::Null),
    );
    r.insert("dryRun".into(), attrs.dry_run.into());
    let kind = attrs.operation.options_kind();
    let options = match &attrs.options {
        Value::Object(o) if !kind.is_empty() => {
            let mut o = o.clone();
            o.insert("kind".into(), kind.into());
            o.insert("apiVersion".into(), "meta.k8s.io/v1".into());
            Value::Object(o)
        }
        _ => Value::Null,
    };
    r.insert("options".into(), options);
    Value::Object(r)
}

/// The whole AdmissionReview sent.
pub fn review(request: Value) -> Value {
    json!({"kind": "AdmissionReview", "apiVersion": API_VERSION, "request": request})
}

/// A webhook's verified answer.
#[derive(Debug, Default, PartialEq)]
pub struct Answer {
    /// `allowed`.
    pub allowed: bool,
    /// `status` (a denial's code, message and reason).
    pub status: Option<Status>,
    /// `patch`, decoded from base64.
    pub patch: Vec<u8>,
    /// `patchType`.
    pub patch_type: String,
    /// `warnings`.
    pub warnings: Vec<String>,
    /// `auditAnnotations`.
    pub audit_annotations: BTreeMap<String, String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireReview {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    response: Option<WireResponse>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    allowed: bool,
    status: Option<Status>,
    patch: Option<k8s_openapi::ByteString>,
    patch_type: Option<String>,
    audit_annotations: Option<BTreeMap<String, String>>,
    warnings: Option<Vec<String>>,
}

/// Why an answer was refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum AnswerError {
    /// The body does not decode as an AdmissionReview (the client's error).
    #[error("{0}")]
    Decode(String),
    /// It decodes, but `VerifyAdmissionResponse` refuses it.
    #[error("{0}")]
    Invalid(String),
}

/// Decodes and checks a webhook's answer to review `uid`.
pub fn verify(uid: &str, mutating: bool, body: &[u8]) -> Result<Answer, AnswerError> {
    let wire: WireReview = serde_json::from_slice(body).map_err(|e| {
        AnswerError::Decode(format!("couldn't get version/kind; json parse error: {e}"))
    })?;
    let Some(r) = wire.response else {
        return Err(AnswerError::Invalid("webhook response was absent".into()));
    };
    if r.uid != uid {
        return Err(AnswerError::Invalid(format!(
            "expected response.uid={uid:?}, got {:?}",
            r.uid
        )));
    }
    if wire.api_version != API_VERSION || wire.kind != "AdmissionReview" {
        return Err(AnswerError::Invalid(format!(
            "expected webhook response of {API_VERSION}, Kind=AdmissionReview, got {}, Kind={}",
            wire.api_version, wire.kind
        )));
    }
    let patch = r.patch.map(|p| p.0).unwrap_or_default();
    let patch_type = r.patch_type.unwrap_or_default();
    if !patch.is_empty() && patch_type.is_empty() {
        return Err(AnswerError::Invalid(
            "webhook returned response.patch but not response.patchType".into(),
        ));
    }
    if !patch.is_empty() && !mutating {
        return Err(AnswerError::Invalid(
            "validating webhook may not return response.patch".into(),
        ));
    }
    Ok(Answer {
        allowed: r.allowed,
        status: r.status,
        patch,
        patch_type,
        warnings: r.warnings.unwrap_or_default(),
        audit_annotations: r.audit_annotations.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks of upstream's `TestVerifyAdmissionResponse` (v1 rows).
    #[test]
    fn answers_are_verified_as_upstream() {
        let ok = |resp: Value| {
            serde_json::to_vec(
                &json!({"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": resp}),
            )
            .expect("json")
        };
        type Case<'a> = (&'a str, Vec<u8>, bool, Result<bool, &'a str>);
        let cases: Vec<Case<'_>> = vec![
            ("allowed", ok(json!({"uid": "u", "allowed": true})), true, Ok(true)),
            ("denied", ok(json!({"uid": "u", "allowed": false})), true, Ok(false)),
            (
                "wrong uid",
                ok(json!({"uid": "x", "allowed": true})),
                true,
                Err("expected response.uid=\"u\", got \"x\""),
            ),
            (
                "no response",
                serde_json::to_vec(&json!({"apiVersion": API_VERSION, "kind": "AdmissionReview"})).expect("json"),
                true,
                Err("webhook response was absent"),
            ),
            (
                "wrong version",
                serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {"uid": "u", "allowed": true}})).expect("json"),
                true,
                Err("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"),
            ),
            (
                "patch without type",
                ok(json!({"uid": "u", "allowed": true, "patch": "W10="})),
                true,
                Err("webhook returned response.patch but not response.patchType"),
            ),
            (
                "validating patch",
                ok(json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch"})),
                false,
                Err("validating webhook may not return response.patch"),
            ),
        ];
        for (name, body, mutating, want) in cases {
            let got = verify("u", mutating, &body)
                .map(|a| a.allowed)
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{name}");
        }
        let a = verify(
            "u",
            true,
            &ok(json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch", "warnings": ["w"]})),
        )
        .expect("valid");
        assert_eq!(a.patch, b"[]");
        assert_eq!(a.warnings, vec!["w".to_owned()]);
        assert!(matches!(
            verify("u", true, b"garbage"),
            Err(AnswerError::Decode(_))
        ));
    }

    #[test]
    fn requests_carry_upstream_field_names() {
        let user = exitplan_authz::UserInfo {
            name: "alice".into(),
            groups: vec!["g".into()],
            ..Default::default()
        };
        let old = json!({"metadata": {"name": "p"}});
        let attrs = Attributes {
            operation: super::super::Operation::Update,
            kind: Gvn::new("", "v1", "Pod"),
            resource: Gvn::new("", "v1", "pods"),
            subresource: "status",
            name: "p",
            namespace: "ns",
            old_object: Some(&old),
            dry_run: true,
            options: json!({"fieldManager": "m"}),
            user: &user,
        };
        let r = request("id", &attrs, Some(&json!({"a": 1})));
        assert_eq!(
            r,
            json!({
                "uid": "id",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "subResource": "status",
                "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
                "requestResource": {"group": "", "version": "v1", "resource": "pods"},
                "requestSubResource": "status",
                "name": "p",
                "namespace": "ns",
                "operation": "UPDATE",
                "userInfo": {"username": "alice", "groups": ["g"]},
                "object": {"a": 1},
                "oldObject": {"metadata": {"name": "p"}},
                "dryRun": true,
                "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "m"},
            })
        );
    }
}
