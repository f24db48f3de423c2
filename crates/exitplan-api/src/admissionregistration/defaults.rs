//! Defaulting of the admissionregistration.k8s.io/v1 webhook types
//! (`pkg/apis/admissionregistration/v1/defaults.go`): failurePolicy `Fail`,
//! matchPolicy `Equivalent`, selectors `{}`, timeoutSeconds 10,
//! reinvocationPolicy `Never`, rule scope `*`, service port 443. v1 has no
//! default for `sideEffects` nor `admissionReviewVersions` (both required).

use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// The default `timeoutSeconds` of a v1 webhook.
pub const DEFAULT_TIMEOUT_SECONDS: i32 = 10;
/// The default port of a webhook service.
pub const DEFAULT_SERVICE_PORT: i32 = 443;

/// `SetDefaults_Rule`: scope `*`.
pub fn rule(r: &mut RuleWithOperations) {
    r.scope.get_or_insert_with(|| "*".to_owned());
}

/// `SetDefaults_ServiceReference`: port 443.
pub fn client_config(cc: &mut WebhookClientConfig) {
    if let Some(svc) = cc.service.as_mut() {
        svc.port.get_or_insert(DEFAULT_SERVICE_PORT);
    }
}

#[allow(clippy::too_many_arguments)]
fn common(
    failure_policy: &mut Option<String>,
    match_policy: &mut Option<String>,
    namespace_selector: &mut Option<LabelSelector>,
    object_selector: &mut Option<LabelSelector>,
    timeout_seconds: &mut Option<i32>,
    rules: Option<&mut Vec<RuleWithOperations>>,
    cc: &mut WebhookClientConfig,
) {
    failure_policy.get_or_insert_with(|| "Fail".to_owned());
    match_policy.get_or_insert_with(|| "Equivalent".to_owned());
    namespace_selector.get_or_insert_with(LabelSelector::default);
    object_selector.get_or_insert_with(LabelSelector::default);
    timeout_seconds.get_or_insert(DEFAULT_TIMEOUT_SECONDS);
    rules.into_iter().flatten().for_each(rule);
    client_config(cc);
}

/// `SetDefaults_ValidatingWebhook` and the defaults of its rules and service.
pub fn validating_webhook(h: &mut ValidatingWebhook) {
    common(
        &mut h.failure_policy,
        &mut h.match_policy,
        &mut h.namespace_selector,
        &mut h.object_selector,
        &mut h.timeout_seconds,
        h.rules.as_mut(),
        &mut h.client_config,
    );
}

/// `SetDefaults_MutatingWebhook` (also reinvocationPolicy `Never`) and the
/// defaults of its rules and service.
pub fn mutating_webhook(h: &mut MutatingWebhook) {
    common(
        &mut h.failure_policy,
        &mut h.match_policy,
        &mut h.namespace_selector,
        &mut h.object_selector,
        &mut h.timeout_seconds,
        h.rules.as_mut(),
        &mut h.client_config,
    );
    h.reinvocation_policy
        .get_or_insert_with(|| "Never".to_owned());
}

/// Every default of a ValidatingWebhookConfiguration.
pub fn validating_webhook_configuration(c: &mut ValidatingWebhookConfiguration) {
    c.webhooks.iter_mut().flatten().for_each(validating_webhook);
}

/// Every default of a MutatingWebhookConfiguration.
pub fn mutating_webhook_configuration(c: &mut MutatingWebhookConfiguration) {
    c.webhooks.iter_mut().flatten().for_each(mutating_webhook);
}

/// `SetDefaults_MatchResources`: matchPolicy `Equivalent`, selectors `{}`,
/// and scope `*` on every rule.
pub fn match_resources(mr: &mut MatchResources) {
    mr.match_policy
        .get_or_insert_with(|| "Equivalent".to_owned());
    mr.namespace_selector
        .get_or_insert_with(LabelSelector::default);
    mr.object_selector
        .get_or_insert_with(LabelSelector::default);
    for r in mr
        .resource_rules
        .iter_mut()
        .flatten()
        .chain(mr.exclude_resource_rules.iter_mut().flatten())
    {
        r.scope.get_or_insert_with(|| "*".to_owned());
    }
}

/// `SetDefaults_ValidatingAdmissionPolicySpec` (failurePolicy `Fail`) and
/// the defaults of its matchConstraints.
pub fn validating_admission_policy(p: &mut ValidatingAdmissionPolicy) {
    let spec = p.spec.get_or_insert_with(Default::default);
    spec.failure_policy.get_or_insert_with(|| "Fail".to_owned());
    if let Some(mc) = spec.match_constraints.as_mut() {
        match_resources(mc);
    }
}

/// The defaults of a binding's matchResources.
pub fn validating_admission_policy_binding(b: &mut ValidatingAdmissionPolicyBinding) {
    if let Some(mr) = b.spec.match_resources.as_mut() {
        match_resources(mr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The object without the `apiVersion` and `kind` serialization adds.
    fn without_type(mut v: Value) -> Value {
        if let Some(o) = v.as_object_mut() {
            o.remove("apiVersion");
            o.remove("kind");
        }
        v
    }

    fn defaulted_validating(v: Value) -> Value {
        let mut c: ValidatingWebhookConfiguration = serde_json::from_value(v).expect("decodes");
        validating_webhook_configuration(&mut c);
        without_type(serde_json::to_value(c).expect("encodes"))
    }

    fn defaulted_mutating(v: Value) -> Value {
        let mut c: MutatingWebhookConfiguration = serde_json::from_value(v).expect("decodes");
        mutating_webhook_configuration(&mut c);
        without_type(serde_json::to_value(c).expect("encodes"))
    }

    /// `TestDefaultAdmissionWebhook` of upstream's defaults_test.go.
    #[test]
    fn default_admission_webhook_table() {
        let base = |hook: Value| json!({"metadata": {"name": "c"}, "webhooks": [hook]});
        let full = |extra: Value| {
            let mut h = json!({
                "name": "x", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {},
                "failurePolicy": "Fail", "matchPolicy": "Equivalent",
                "namespaceSelector": {}, "objectSelector": {}, "timeoutSeconds": 10
            });
            if let (Some(h), Some(e)) = (h.as_object_mut(), extra.as_object()) {
                for (k, v) in e {
                    h.insert(k.clone(), v.clone());
                }
            }
            h
        };
        let min = json!({"name": "x", "sideEffects": "None", "admissionReviewVersions": ["v1"], "clientConfig": {}});

        // "ValidatingWebhookConfiguration"
        assert_eq!(
            defaulted_validating(base(min.clone())),
            base(full(json!({})))
        );
        // "MutatingWebhookConfiguration"
        assert_eq!(
            defaulted_mutating(base(min.clone())),
            base(full(json!({"reinvocationPolicy": "Never"})))
        );
        // "scope=*"
        let with_rule = |scope: Option<&str>| {
            let mut r = json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]});
            if let (Some(s), Some(o)) = (scope, r.as_object_mut()) {
                o.insert("scope".into(), json!(s));
            }
            r
        };
        let mut in_hook = min.clone();
        in_hook["rules"] = json!([with_rule(None)]);
        assert_eq!(
            defaulted_validating(base(in_hook.clone())),
            base(full(json!({"rules": [with_rule(Some("*"))]})))
        );
        assert_eq!(
            defaulted_mutating(base(in_hook)),
            base(full(
                json!({"rules": [with_rule(Some("*"))], "reinvocationPolicy": "Never"})
            ))
        );
        // "port=443"
        let mut svc = min.clone();
        svc["clientConfig"] = json!({"service": {"name": "s", "namespace": "n"}});
        assert_eq!(
            defaulted_mutating(base(svc)),
            base(full(json!({
                "clientConfig": {"service": {"name": "s", "namespace": "n", "port": 443}},
                "reinvocationPolicy": "Never"
            })))
        );
        // Set values are kept.
        let set = full(json!({"failurePolicy": "Ignore", "matchPolicy": "Exact",
                               "namespaceSelector": {"matchLabels": {"a": "b"}}, "timeoutSeconds": 3,
                               "reinvocationPolicy": "IfNeeded"}));
        assert_eq!(defaulted_mutating(base(set.clone())), base(set));
    }
}
