//! The *value* of a field error whose value is not a plain string, integer
//! or boolean, rendered as upstream renders it — the one place exitplan
//! writes Go's JSON.
//!
//! apimachinery renders such values as JSON (`field.Error.ErrorBody`, see
//! [`crate::field`]). Go details that matter for byte-exact messages:
//!
//! * validation runs on the **internal** types (`pkg/apis/batch`,
//!   `pkg/apis/policy`), which carry no JSON tags, so their fields are
//!   named as in Go (`{"Rules":[…]}`), in declaration order, and nil
//!   pointers/slices appear as `null` (no `omitempty`);
//! * shared `metav1` types (`LabelSelector`, `Condition`, `Time`) and the
//!   `lifecycle.k8s.io/v1alpha1` types (validated as versioned types) do
//!   carry tags, so they render like the wire format, again in Go's field
//!   order (`matchLabels` before `matchExpressions`), which differs from
//!   k8s-openapi's alphabetical order;
//! * a pod template is shown in its submitted (v1) form through serde
//!   ([`json`]); upstream shows the internal `core.PodTemplateSpec`.
//!
//! Strings are escaped as Go's `encoding/json` does (Go ≥ 1.22): the JSON
//! escapes (`\b`, `\f`, `\n`, `\r`, `\t`, `\u00XX`) plus `<`, `>`, `&`,
//! U+2028 and U+2029 ([`string`], [`json`]). Go's `%q` quoting is a different
//! rule and lives in [`crate::field::go_quote`]. Each function returns
//! ready-to-embed JSON text for [`BadValue::Json`](crate::field::BadValue::Json).

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule, SuccessPolicy, SuccessPolicyRule,
    UncountedTerminatedPods,
};
use k8s_openapi::api::core::v1::EvictionResponder;
use k8s_openapi::api::lifecycle::v1alpha1::{Requester, ResponderStatus, TargetResponder};
use k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, LabelSelectorRequirement, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

/// Go's HTML-safe escaping on JSON text: `<`, `>`, `&`, U+2028 and U+2029
/// (they can only occur inside strings, so the whole text may be scanned).
fn escape_html(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A JSON string literal escaped as Go's `encoding/json` does.
pub fn string(s: &str) -> String {
    escape_html(&serde_json::Value::String(s.to_owned()).to_string())
}

/// Any serializable value as Go's `encoding/json` would escape it, in serde's
/// field order (used where no Go-ordered renderer exists: pod templates).
pub fn json<T: Serialize>(value: &T) -> String {
    escape_html(&serde_json::to_string(value).unwrap_or_default())
}

/// `{"k":v,…}` from already-rendered members, in the given order.
fn object(members: &[(&str, String)]) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", string(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// `[a,b]` from already-rendered items.
fn array(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("[{}]", items.join(","))
}

fn opt(v: Option<String>) -> String {
    v.unwrap_or_else(|| "null".to_owned())
}

fn opt_str(v: Option<&String>) -> String {
    opt(v.map(|s| string(s)))
}

/// A `[]string`.
pub fn strings(v: &[String]) -> String {
    array(v.iter().map(|s| string(s)))
}

/// A `map[string]string` (Go sorts map keys, as `BTreeMap` iterates).
pub fn string_map(m: &BTreeMap<String, String>) -> String {
    let body: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{}:{}", string(k), string(v)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A `[]int32`.
pub fn int32s(v: &[i32]) -> String {
    array(v.iter().map(i32::to_string))
}

/// An `IntOrString` (an integer or a JSON string).
pub fn int_or_string(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => string(s),
    }
}

/// A `metav1.Time` (`"2006-01-02T15:04:05Z"`).
pub fn time(t: &Time) -> String {
    string(&crate::time::format_rfc3339(t.0))
}

fn requirement(r: &LabelSelectorRequirement) -> String {
    let mut members = vec![("key", string(&r.key)), ("operator", string(&r.operator))];
    if let Some(values) = r.values.as_ref().filter(|v| !v.is_empty()) {
        members.push(("values", strings(values)));
    }
    object(&members)
}

/// A `metav1.LabelSelector` (tagged type: `omitempty`, Go field order).
pub fn label_selector(s: &LabelSelector) -> String {
    let mut members = Vec::new();
    if let Some(ml) = s.match_labels.as_ref().filter(|m| !m.is_empty()) {
        members.push(("matchLabels", string_map(ml)));
    }
    if let Some(me) = s.match_expressions.as_ref().filter(|m| !m.is_empty()) {
        members.push(("matchExpressions", array(me.iter().map(requirement))));
    }
    object(&members)
}

/// An optional `*metav1.LabelSelector` (`null` when absent).
pub fn label_selector_opt(s: Option<&LabelSelector>) -> String {
    opt(s.map(label_selector))
}

fn on_exit_codes(r: &PodFailurePolicyOnExitCodesRequirement) -> String {
    object(&[
        ("ContainerName", opt_str(r.container_name.as_ref())),
        ("Operator", string(&r.operator)),
        ("Values", int32s(&r.values)),
    ])
}

fn on_pod_conditions_pattern(p: &PodFailurePolicyOnPodConditionsPattern) -> String {
    object(&[
        ("Type", string(&p.type_)),
        ("Status", string(p.status.as_deref().unwrap_or_default())),
    ])
}

fn pod_failure_policy_rule(r: &PodFailurePolicyRule) -> String {
    object(&[
        ("Action", string(&r.action)),
        (
            "OnExitCodes",
            opt(r.on_exit_codes.as_ref().map(on_exit_codes)),
        ),
        (
            "OnPodConditions",
            opt(r
                .on_pod_conditions
                .as_ref()
                .map(|ps| array(ps.iter().map(on_pod_conditions_pattern)))),
        ),
    ])
}

/// An internal `batch.PodFailurePolicy`.
pub fn pod_failure_policy(p: &PodFailurePolicy) -> String {
    object(&[("Rules", array(p.rules.iter().map(pod_failure_policy_rule)))])
}

fn success_policy_rule(r: &SuccessPolicyRule) -> String {
    object(&[
        ("SucceededIndexes", opt_str(r.succeeded_indexes.as_ref())),
        (
            "SucceededCount",
            opt(r.succeeded_count.map(|c| c.to_string())),
        ),
    ])
}

/// An internal `batch.SuccessPolicy`.
pub fn success_policy(p: &SuccessPolicy) -> String {
    object(&[("Rules", array(p.rules.iter().map(success_policy_rule)))])
}

/// An internal `batch.UncountedTerminatedPods`.
pub fn uncounted_terminated_pods(u: &UncountedTerminatedPods) -> String {
    object(&[
        ("Succeeded", opt(u.succeeded.as_deref().map(strings))),
        ("Failed", opt(u.failed.as_deref().map(strings))),
    ])
}

/// A list (`null` when unset, like a Go nil slice), each item rendered by
/// `item(index, item)`.
pub fn list<T>(items: Option<&[T]>, item: impl Fn(usize, &T) -> String) -> String {
    opt(items.map(|items| array(items.iter().enumerate().map(|(i, t)| item(i, t)))))
}

/// A `metav1.Condition` (`observedGeneration` omitted when 0, a zero
/// `lastTransitionTime` as `null`).
pub fn condition(c: &Condition) -> String {
    let mut members = vec![("type", string(&c.type_)), ("status", string(&c.status))];
    if let Some(g) = c.observed_generation.filter(|g| *g != 0) {
        members.push(("observedGeneration", g.to_string()));
    }
    let ltt = if c.last_transition_time.0 == jiff::Timestamp::UNIX_EPOCH {
        "null".to_owned()
    } else {
        time(&c.last_transition_time)
    };
    members.extend([
        ("lastTransitionTime", ltt),
        ("reason", string(&c.reason)),
        ("message", string(&c.message)),
    ]);
    object(&members)
}

/// An internal `policy.PodDisruptionBudgetSpec`.
pub fn pod_disruption_budget_spec(spec: &PodDisruptionBudgetSpec) -> String {
    object(&[
        (
            "MinAvailable",
            opt(spec.min_available.as_ref().map(int_or_string)),
        ),
        ("Selector", label_selector_opt(spec.selector.as_ref())),
        (
            "MaxUnavailable",
            opt(spec.max_unavailable.as_ref().map(int_or_string)),
        ),
        (
            "UnhealthyPodEvictionPolicy",
            opt_str(spec.unhealthy_pod_eviction_policy.as_ref()),
        ),
    ])
}

/// A core/v1 `EvictionResponder`; `priority` is `null` when it was missing
/// from the submitted JSON.
pub fn eviction_responder(r: &EvictionResponder, priority: Option<i32>) -> String {
    object(&[
        ("name", string(&r.name)),
        ("priority", opt(priority.map(|p| p.to_string()))),
    ])
}

/// A lifecycle/v1alpha1 `Requester`.
pub fn requester(r: &Requester) -> String {
    object(&[("name", string(&r.name)), ("intent", string(&r.intent))])
}

/// A lifecycle/v1alpha1 `TargetResponder`; `priority` is `null` when it was
/// missing from the submitted JSON.
pub fn target_responder(t: &TargetResponder, priority: Option<i32>) -> String {
    object(&[
        ("name", string(&t.name)),
        ("priority", opt(priority.map(|p| p.to_string()))),
        ("state", string(&t.state)),
    ])
}

/// A lifecycle/v1alpha1 `ResponderStatus`; unset optional fields are omitted
/// (`omitempty`).
pub fn responder_status(r: &ResponderStatus) -> String {
    let mut members = vec![("name", string(&r.name))];
    for (key, value) in [
        ("startTime", &r.start_time),
        ("heartbeatTime", &r.heartbeat_time),
        ("expectedCompletionTime", &r.expected_completion_time),
        ("completionTime", &r.completion_time),
    ] {
        if let Some(t) = value {
            members.push((key, time(t)));
        }
    }
    if let Some(m) = &r.message {
        members.push(("message", string(m)));
    }
    object(&members)
}

/// The JSON type name Go's `encoding/json` puts in its unmarshal errors
/// (`json: cannot unmarshal string into …`).
pub fn go_json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_uses_go_field_order_and_omitempty() {
        let s = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "k".into(),
                operator: "Exists".into(),
                values: None,
            }]),
            match_labels: Some([("a".to_owned(), "b".to_owned())].into()),
        };
        assert_eq!(
            label_selector(&s),
            r#"{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"Exists"}]}"#
        );
        assert_eq!(label_selector(&LabelSelector::default()), "{}");
    }

    #[test]
    fn internal_types_use_go_names_and_null() {
        let p = PodFailurePolicy {
            rules: vec![PodFailurePolicyRule {
                action: "FailJob".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: None,
                    operator: "In".into(),
                    values: vec![1, 2],
                }),
                on_pod_conditions: None,
            }],
        };
        assert_eq!(
            pod_failure_policy(&p),
            r#"{"Rules":[{"Action":"FailJob","OnExitCodes":{"ContainerName":null,"Operator":"In","Values":[1,2]},"OnPodConditions":null}]}"#
        );
    }

    #[test]
    fn strings_escape_like_go() {
        assert_eq!(string("a<b>&\"c\n"), r#""a\u003cb\u003e\u0026\"c\n""#);
        assert_eq!(
            string("\u{8}\u{c}\u{1}\u{7f}\u{2028}é"),
            "\"\\b\\f\\u0001\u{7f}\\u2028é\""
        );
    }
}
