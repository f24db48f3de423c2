//! The `authorization.k8s.io/v1` reviews (`kubectl auth can-i`, `--list`),
//! answered by the server's own authorizer and never stored, as upstream's
//! `pkg/registry/authorization/*`:
//!
//! * SubjectAccessReview — may the user, groups and extra named in the
//!   spec do what `resourceAttributes` or `nonResourceAttributes` say;
//! * LocalSubjectAccessReview — the same within the path's namespace;
//! * SelfSubjectAccessReview — may the caller;
//! * SelfSubjectRulesReview — what the caller may do in `spec.namespace`.
//!
//! Invalid specs answer 422 with upstream's field errors.

use k8s_openapi::api::authorization::v1::{
    SelfSubjectAccessReviewSpec, SelfSubjectRulesReviewSpec, SubjectAccessReviewSpec,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use exitplan_api::field::{BadValue, Error, ErrorList, Path};
use exitplan_api::status::{GroupKind, InvalidError};
use exitplan_authz::review::{
    non_resource_attributes, resource_attributes, subject_access_review_attributes,
    subject_access_review_status, subject_rules_review_status,
};

use super::errors::{ApiError, bad_request, invalid};
use super::review::ReviewCall;

const GROUP: &str = "authorization.k8s.io";

/// The review's `spec`, decoded.
fn spec<T: DeserializeOwned + Default>(call: &ReviewCall<'_>, kind: &str) -> Result<T, ApiError> {
    match call.body.get("spec") {
        None | Some(Value::Null) => Ok(T::default()),
        Some(s) => serde_json::from_value(s.clone()).map_err(|e| {
            bad_request(format!(
                "{kind} in version \"v1\" cannot be handled as a {kind}: {e}"
            ))
        }),
    }
}

/// A value for an `Invalid` error: Go's `nil`, or the JSON of the struct.
fn shown<T: serde::Serialize>(v: Option<&T>) -> BadValue {
    v.and_then(|v| serde_json::to_string(v).ok())
        .map_or(BadValue::Null, BadValue::Json)
}

/// `ValidateSelfSubjectAccessReviewSpec` (and the first half of
/// `ValidateSubjectAccessReviewSpec`): exactly one kind of attributes.
fn exactly_one<R: serde::Serialize, N: serde::Serialize>(
    resource: Option<&R>,
    non_resource: Option<&N>,
) -> ErrorList {
    let spec = Path::new("spec");
    let mut errs = ErrorList::new();
    if resource.is_some() && non_resource.is_some() {
        errs.push(Error::invalid(
            &spec.child("nonResourceAttributes"),
            shown(non_resource),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if resource.is_none() && non_resource.is_none() {
        errs.push(Error::invalid(
            &spec.child("resourceAttributes"),
            shown(non_resource),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    errs
}

/// `ValidateSubjectAccessReviewSpec`.
fn validate_subject_spec(s: &SubjectAccessReviewSpec) -> ErrorList {
    let mut errs = exactly_one(
        s.resource_attributes.as_ref(),
        s.non_resource_attributes.as_ref(),
    );
    if s.user.as_deref().unwrap_or_default().is_empty()
        && s.groups.as_ref().is_none_or(Vec::is_empty)
    {
        errs.push(Error::invalid(
            &Path::new("spec").child("user"),
            s.user.clone().unwrap_or_default(),
            "at least one of user or group must be specified",
        ));
    }
    errs
}

fn refuse(kind: &'static str, errs: ErrorList) -> Result<(), ApiError> {
    if errs.is_empty() {
        return Ok(());
    }
    Err(invalid(&InvalidError {
        kind: GroupKind { group: GROUP, kind },
        name: String::new(),
        errors: errs,
    }))
}

/// The answer: the request's metadata and spec with `status`.
fn answer(call: &ReviewCall<'_>, status: Value) -> Value {
    let mut meta = call
        .body
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        m.entry("creationTimestamp").or_insert(Value::Null);
    }
    json!({
        "metadata": meta,
        "spec": call.body.get("spec").cloned().unwrap_or_else(|| json!({})),
        "status": status,
    })
}

/// `SubjectAccessReview` (and, with `namespace`, `LocalSubjectAccessReview`).
fn subject(call: &ReviewCall<'_>, kind: &'static str) -> Result<Value, ApiError> {
    let s: SubjectAccessReviewSpec = spec(call, kind)?;
    let mut errs = validate_subject_spec(&s);
    if let Some(ns) = call.namespace {
        if let Some(r) = &s.resource_attributes
            && r.namespace.as_deref().unwrap_or_default() != ns
        {
            errs.push(Error::invalid(
                &Path::new("spec.resourceAttributes.namespace"),
                r.namespace.clone().unwrap_or_default(),
                "must match metadata.namespace",
            ));
        }
        if s.non_resource_attributes.is_some() {
            errs.push(Error::invalid(
                &Path::new("spec.nonResourceAttributes"),
                shown(s.non_resource_attributes.as_ref()),
                "disallowed on this kind of request",
            ));
        }
    }
    refuse(kind, errs)?;
    let Some(attrs) = subject_access_review_attributes(&s) else {
        return Err(bad_request("no attributes"));
    };
    let decision = call.state.authorizer.authorize(call.state, &attrs);
    Ok(answer(call, json!(subject_access_review_status(&decision))))
}

/// `POST subjectaccessreviews`.
pub fn subject_access_review(call: &ReviewCall<'_>) -> Result<Value, ApiError> {
    subject(call, "SubjectAccessReview")
}

/// `POST namespaces/<ns>/localsubjectaccessreviews`.
pub fn local_subject_access_review(call: &ReviewCall<'_>) -> Result<Value, ApiError> {
    subject(call, "LocalSubjectAccessReview")
}

/// `POST selfsubjectaccessreviews`: may the caller.
pub fn self_subject_access_review(call: &ReviewCall<'_>) -> Result<Value, ApiError> {
    let kind = "SelfSubjectAccessReview";
    let s: SelfSubjectAccessReviewSpec = spec(call, kind)?;
    refuse(
        kind,
        exactly_one(
            s.resource_attributes.as_ref(),
            s.non_resource_attributes.as_ref(),
        ),
    )?;
    let user = (**call.user).clone();
    let attrs = match (&s.resource_attributes, &s.non_resource_attributes) {
        (Some(r), _) => resource_attributes(user, r),
        (None, Some(n)) => non_resource_attributes(user, n),
        (None, None) => return Err(bad_request("no attributes")),
    };
    let decision = call.state.authorizer.authorize(call.state, &attrs);
    Ok(answer(call, json!(subject_access_review_status(&decision))))
}

/// `POST selfsubjectrulesreviews`: the caller's rules in `spec.namespace`
/// (as kube-apiserver, a request without a namespace is refused).
pub fn self_subject_rules_review(call: &ReviewCall<'_>) -> Result<Value, ApiError> {
    let s: SelfSubjectRulesReviewSpec = spec(call, "SelfSubjectRulesReview")?;
    let namespace = s.namespace.unwrap_or_default();
    if namespace.is_empty() {
        return Err(bad_request("no namespace on request"));
    }
    let policy = call.state.rbac.policy(&call.state.store);
    let (rules, errors) = policy.rules_for(call.user, &namespace);
    Ok(answer(
        call,
        json!(subject_rules_review_status(&rules, &errors)),
    ))
}
