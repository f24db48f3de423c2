//! Calling the webhooks of a request: which ones (`ShouldCallHook`), the
//! call (`callHook`), `failurePolicy`, patches and reinvocation of the
//! mutating dispatcher, and the errors kube-apiserver answers with
//! (`staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/{generic,
//! mutating,validating,errors}`).

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusDetails};
use serde_json::Value;

use super::config::Hook;
use super::matcher::{self, NamespaceSource};
use super::{Attributes, Caller, review};
use crate::rest::ApiError;
use crate::rest::errors::{bad_request, failure, internal, not_found};
use crate::rest::state::State;
use crate::storage::Key;

/// A failure of one call: upstream's `ErrCallingWebhook` (subject to
/// `failurePolicy`), a rejection, or another error (never ignored).
#[derive(Debug)]
enum HookError {
    /// Calling the webhook failed: `failed calling webhook "x": <why>`.
    Calling { webhook: String, why: String },
    /// The webhook denied the request, or another error to answer with.
    Status(ApiError),
}

impl HookError {
    fn calling(hook: &Hook, why: impl Into<String>) -> HookError {
        HookError::Calling {
            webhook: hook.name.clone(),
            why: why.into(),
        }
    }

    /// The error the request fails with, or `None` when `failurePolicy:
    /// Ignore` lets it pass.
    fn outcome(self, hook: &Hook) -> Option<ApiError> {
        match self {
            HookError::Calling { webhook, why } => {
                let err = format!("failed calling webhook {webhook:?}: {why}");
                if hook.ignore_failures {
                    tracing::warn!(webhook = %hook.name, error = %err, "Failed calling webhook, failing open");
                    None
                } else {
                    tracing::warn!(webhook = %hook.name, error = %err, "Failed calling webhook, failing closed");
                    Some(internal(err))
                }
            }
            HookError::Status(e) => Some(e),
        }
    }
}

/// `webhookerrors.ToStatusErr`: a denial as the webhook's own `status`
/// (code at least 400, `Failure`), its message prefixed with
/// `admission webhook "x" denied the request`.
pub fn denied(webhook: &str, status: Option<Status>) -> ApiError {
    let mut s = status.unwrap_or_default();
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    if s.code.is_none_or(|c| c < 400) {
        s.code = Some(400);
    }
    if s.status
        .as_deref()
        .is_none_or(|v| v.is_empty() || v == "Success")
    {
        s.status = Some("Failure".to_owned());
    }
    let message = match (s.message.as_deref(), s.reason.as_deref()) {
        (Some(m), _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, Some(r)) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    s.message = Some(message);
    ApiError::from_status(s)
}

/// `apierrors.NewForbidden(resource, name, err)`.
fn forbidden(attrs: &Attributes<'_>, why: &str) -> ApiError {
    let gr = crate::rest::errors::group_resource(&attrs.resource.group, &attrs.resource.name);
    let message = if attrs.name.is_empty() {
        format!("{gr} is forbidden: {why}")
    } else {
        format!("{gr} {:?} is forbidden: {why}", attrs.name)
    };
    failure(
        403,
        "Forbidden",
        message,
        Some(StatusDetails {
            group: Some(attrs.resource.group.clone()).filter(|g| !g.is_empty()),
            kind: Some(attrs.resource.name.clone()),
            name: Some(attrs.name.to_owned()).filter(|n| !n.is_empty()),
            ..StatusDetails::default()
        }),
    )
}

/// `ShouldCallHook`: namespace and object selectors, rules, then
/// `matchConditions`. Selector errors count only for a hook whose rules match.
fn should_call(
    state: &State,
    hook: &Hook,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<bool, ApiError> {
    let old = attrs.old_object;
    let ns = match matcher::namespace_source(attrs, object, old) {
        NamespaceSource::NotApplicable => Ok(true),
        NamespaceSource::Object(o) => {
            matcher::namespace_selected(hook.namespace_selector.as_ref(), || {
                Ok(matcher::object_labels(o))
            })
        }
        NamespaceSource::Lookup => {
            matcher::namespace_selected(hook.namespace_selector.as_ref(), || {
                let key = Key::new("namespaces", "", attrs.namespace);
                match state.store.current(&key)? {
                    Some(stored) => Ok(matcher::object_labels(&stored.value()?)),
                    None => Err(not_found("", "namespaces", attrs.namespace)),
                }
            })
        }
    };
    if matches!(ns, Ok(false)) {
        return Ok(false);
    }
    let obj = matcher::object_selected(hook.object_selector.as_ref(), object, old);
    if matches!(obj, Ok(false)) {
        return Ok(false);
    }
    if !matcher::rules_match(&hook.rules, attrs) {
        return Ok(false);
    }
    match ns {
        Err(matcher::NamespaceError::Selector(e)) => return Err(internal(e)),
        Err(matcher::NamespaceError::Lookup(e)) => {
            return Err(if e.code() == 404 { e } else { internal(e) });
        }
        Ok(_) => {}
    }
    obj.map_err(internal)?;
    if hook.match_conditions.is_empty() {
        return Ok(true);
    }
    let conditions = hook
        .conditions()
        .as_ref()
        .map_err(|e| forbidden(attrs, e))?;
    let request = review::request("", attrs, object);
    let null = Value::Null;
    let vars = [
        ("object", object.unwrap_or(&null)),
        ("oldObject", old.unwrap_or(&null)),
        ("request", &request),
    ];
    match conditions.matches(&vars) {
        Ok(m) => Ok(m),
        Err(e) => {
            tracing::warn!(webhook = %hook.name, error = %e, "Failed evaluating match conditions, failing closed");
            Err(forbidden(attrs, &e))
        }
    }
}

/// The generic answer of a webhook that did not answer 200 (client-go's
/// `NewGenericServerResponse`, or the `Status` it sent).
fn unexpected_code(code: u16, body: &[u8]) -> String {
    if let Ok(s) = serde_json::from_slice::<Status>(body)
        && let Some(m) = s.message.filter(|m| !m.is_empty())
    {
        return m;
    }
    if code >= 500 {
        let text = String::from_utf8_lossy(body);
        let text = if text.trim().is_empty() {
            "unknown".into()
        } else {
            text
        };
        format!("an error on the server ({text:?}) has prevented the request from succeeding")
    } else {
        format!(
            "the server responded with the status code {code} but did not return more information"
        )
    }
}

/// One call (`callHook`): the answer, or why it failed. Warnings go to
/// `caller` as soon as the answer is read.
async fn call(
    state: &State,
    hook: &Hook,
    mutating: bool,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    caller: &Caller,
) -> Result<review::Answer, HookError> {
    if attrs.dry_run {
        if hook.side_effects.is_empty() {
            return Err(HookError::calling(hook, "Webhook SideEffects is nil"));
        }
        if !matches!(hook.side_effects.as_str(), "None" | "NoneOnDryRun") {
            return Err(HookError::Status(bad_request(format!(
                "admission webhook {:?} does not support dry run",
                hook.name
            ))));
        }
    }
    let client = hook
        .client()
        .map_err(|e| HookError::calling(hook, format!("could not get REST client: {e}")))?;
    let target = super::client::resolve(&state.store, &hook.client_config)
        .map_err(|e| HookError::calling(hook, format!("could not get REST client: {e}")))?
        .with_timeout(hook.timeout);
    let uid = crate::rest::meta::new_uid();
    let body =
        serde_json::to_vec(&review::review(review::request(&uid, attrs, object))).map_err(|e| {
            HookError::calling(hook, format!("could not create admission objects: {e}"))
        })?;
    let (code, answer) = client
        .post(&target, body, hook.timeout)
        .await
        .map_err(|e| HookError::calling(hook, format!("failed to call webhook: {e}")))?;
    if !(200..300).contains(&code) {
        return Err(HookError::calling(
            hook,
            format!("failed to call webhook: {}", unexpected_code(code, &answer)),
        ));
    }
    let answer = review::verify(&uid, mutating, &answer).map_err(|e| match e {
        review::AnswerError::Decode(e) => {
            HookError::calling(hook, format!("failed to call webhook: {e}"))
        }
        review::AnswerError::Invalid(e) => {
            HookError::calling(hook, format!("received invalid webhook response: {e}"))
        }
    })?;
    for w in &answer.warnings {
        caller.warn(w.clone());
    }
    if !answer.allowed {
        return Err(HookError::Status(denied(&hook.name, answer.status)));
    }
    Ok(answer)
}

/// Applies a mutating webhook's answer to `object`: whether it changed.
fn apply_patch(
    hook: &Hook,
    answer: &review::Answer,
    object: Option<&mut Value>,
) -> Result<bool, HookError> {
    if answer.patch.is_empty() {
        return Ok(false);
    }
    let ops: Vec<Value> = serde_json::from_slice(&answer.patch).map_err(|e| {
        HookError::calling(
            hook,
            format!("received undecodable patch in webhook response: {e}"),
        )
    })?;
    if ops.is_empty() {
        return Ok(false);
    }
    let Some(object) = object else {
        return Err(HookError::Status(internal(format!(
            "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
            hook.name
        ))));
    };
    if answer.patch_type != "JSONPatch" {
        return Err(HookError::calling(
            hook,
            format!("unsupported patch type {:?}", answer.patch_type),
        ));
    }
    let patched = exitplan_api::patch::json_patch(object, &answer.patch)
        .map_err(|e| HookError::Status(internal(e.detail.unwrap_or(e.message))))?;
    let changed = patched != *object;
    *object = patched;
    Ok(changed)
}

/// Runs the mutating webhooks on `object` (`None` for DELETE and CONNECT):
/// configurations in name order, webhooks in order, each answer's JSONPatch
/// applied before the next call; then, if any webhook changed the object,
/// the `reinvocationPolicy: IfNeeded` webhooks called before that change
/// are called once more, as upstream's admission chain reinvokes them.
pub async fn mutate(
    state: &State,
    attrs: &Attributes<'_>,
    mut object: Option<&mut Value>,
    caller: &Caller,
) -> Result<(), ApiError> {
    let snapshot = state.webhooks.snapshot(&state.store);
    if snapshot.mutating.is_empty() || matcher::exempt(attrs) {
        return Ok(());
    }
    let mut previously_invoked: BTreeSet<usize> = BTreeSet::new();
    let mut reinvoke: BTreeSet<usize> = BTreeSet::new();
    let mut any_changed = false;
    for round in 0..2 {
        if round == 1 && (!any_changed || reinvoke.is_empty()) {
            break;
        }
        for hook in &snapshot.mutating {
            if !should_call(state, hook, attrs, object.as_deref())? {
                continue;
            }
            if round == 1 && !reinvoke.contains(&hook.uid) {
                continue;
            }
            let result = match call(state, hook, true, attrs, object.as_deref(), caller).await {
                Ok(answer) => apply_patch(hook, &answer, object.as_deref_mut()),
                Err(e) => Err(e),
            };
            let changed = matches!(result, Ok(true));
            if changed {
                any_changed = true;
                reinvoke.append(&mut previously_invoked);
            }
            if hook.reinvoke {
                previously_invoked.insert(hook.uid);
            }
            if let Err(e) = result
                && let Some(e) = e.outcome(hook)
            {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Runs the validating webhooks on the admitted `object` (`None` for
/// DELETE): one after the other in configuration name order (upstream calls
/// them in parallel; the first failure in order is the answer here).
pub async fn validate(
    state: &State,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    caller: &Caller,
) -> Result<(), ApiError> {
    let snapshot = state.webhooks.snapshot(&state.store);
    if snapshot.validating.is_empty() || matcher::exempt(attrs) {
        return Ok(());
    }
    let hooks: Vec<&Arc<Hook>> = snapshot.validating.iter().collect();
    for hook in hooks {
        if !should_call(state, hook, attrs, object)? {
            continue;
        }
        if let Err(e) = call(state, hook, false, attrs, object, caller).await
            && let Some(e) = e.outcome(hook)
        {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's `TestToStatusErr` table.
    #[test]
    fn denials_read_as_upstream() {
        let status = |code: Option<i32>, message: &str, reason: &str| Status {
            code,
            message: Some(message.to_owned()).filter(|m| !m.is_empty()),
            reason: Some(reason.to_owned()).filter(|r| !r.is_empty()),
            ..Status::default()
        };
        let cases = [
            (
                None,
                "admission webhook \"w\" denied the request without explanation",
                400,
            ),
            (
                Some(status(Some(429), "slow down", "TooManyRequests")),
                "admission webhook \"w\" denied the request: slow down",
                429,
            ),
            (
                Some(status(Some(403), "", "Forbidden")),
                "admission webhook \"w\" denied the request: Forbidden",
                403,
            ),
            (
                Some(status(Some(200), "nope", "")),
                "admission webhook \"w\" denied the request: nope",
                400,
            ),
            (
                Some(status(None, "", "")),
                "admission webhook \"w\" denied the request without explanation",
                400,
            ),
        ];
        for (s, message, code) in cases {
            let e = denied("w", s);
            assert_eq!(e.status.message.as_deref(), Some(message));
            assert_eq!(e.code(), code);
            assert_eq!(e.status.status.as_deref(), Some("Failure"));
        }
    }

    #[test]
    fn non_200_answers_read_as_client_go() {
        assert_eq!(
            unexpected_code(500, b"boom"),
            "an error on the server (\"boom\") has prevented the request from succeeding"
        );
        assert_eq!(
            unexpected_code(404, b""),
            "the server responded with the status code 404 but did not return more information"
        );
        assert_eq!(
            unexpected_code(503, br#"{"kind":"Status","message":"down"}"#),
            "down"
        );
    }
}
