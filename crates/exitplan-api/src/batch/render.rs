//! How upstream renders the *value* of a field error whose value is not a
//! plain string, integer or boolean.
//!
//! apimachinery renders such values as JSON (`field.Error.ErrorBody`, see
//! [`crate::field`]). Two Go details matter for byte-exact messages:
//!
//! * validation runs on the **internal** types (`pkg/apis/batch`,
//!   `pkg/apis/policy`), which carry no JSON tags, so their fields are
//!   named as in Go (`{"Rules":[…]}`), in declaration order, and nil
//!   pointers/slices appear as `null` (no `omitempty`);
//! * shared `metav1` types (`LabelSelector`) do carry tags, so they render
//!   like the wire format, again in Go's field order (`matchLabels` before
//!   `matchExpressions`), which differs from k8s-openapi's alphabetical order.
//!
//! Go's encoder also escapes `<`, `>`, `&`, U+2028 and U+2029; [`string`]
//! does the same. Each function returns ready-to-embed JSON text for
//! [`BadValue::Json`](crate::field::BadValue::Json).

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule, SuccessPolicy, SuccessPolicyRule,
    UncountedTerminatedPods,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// A JSON string literal escaped as Go's `encoding/json` does.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

fn strings(v: &[String]) -> String {
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
    }
}
