//! `fieldValidation` (`Strict`, `Warn` — the default — and `Ignore`): fields
//! of a create or update body that the kind's schema does not know. They
//! are found by a round trip through the k8s-openapi type (what decodes
//! and encodes back is known); `Strict` answers 400 `Pod in version "v1"
//! cannot be handled as a Pod: strict decoding error: unknown field
//! "spec.foo"`, `Warn` sends `Warning` headers.

use axum::http::HeaderValue;
use axum::response::Response;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::errors::{ApiError, bad_request};
use super::query::Query;
use crate::registry::ResourceDef;

/// The requested directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    /// Reject unknown fields.
    Strict,
    /// Accept, with a warning per unknown field (the default).
    Warn,
    /// Accept silently.
    Ignore,
}

/// Parses `fieldValidation` (400 for other values, like upstream).
pub fn directive(query: &Query) -> Result<Directive, ApiError> {
    match query.non_empty("fieldValidation") {
        None | Some("Warn") => Ok(Directive::Warn),
        Some("Strict") => Ok(Directive::Strict),
        Some("Ignore") => Ok(Directive::Ignore),
        Some(other) => Err(bad_request(format!(
            "fieldValidation parameter unsupported: {other}"
        ))),
    }
}

fn round_trip<T: DeserializeOwned + Serialize>(value: &Value) -> Option<Value> {
    let typed = <T as serde::Deserialize>::deserialize(value).ok()?;
    serde_json::to_value(typed).ok()
}

/// `value` as the kind's type would encode it, if it decodes.
fn known(def: &ResourceDef, value: &Value) -> Option<Value> {
    use k8s_openapi::api as a;
    match (def.group, def.kind) {
        ("", "Namespace") => round_trip::<a::core::v1::Namespace>(value),
        ("", "Node") => round_trip::<a::core::v1::Node>(value),
        ("", "Pod") => round_trip::<a::core::v1::Pod>(value),
        ("", "Event") => round_trip::<a::core::v1::Event>(value),
        ("events.k8s.io", "Event") => round_trip::<a::events::v1::Event>(value),
        ("policy", "PodDisruptionBudget") => {
            round_trip::<a::policy::v1::PodDisruptionBudget>(value)
        }
        ("batch", "Job") => round_trip::<a::batch::v1::Job>(value),
        ("coordination.k8s.io", "Lease") => round_trip::<a::coordination::v1::Lease>(value),
        ("lifecycle.k8s.io", "EvictionRequest") => {
            round_trip::<a::lifecycle::v1alpha1::EvictionRequest>(value)
        }
        ("lifecycle.k8s.io", "Eviction") => round_trip::<a::lifecycle::v1alpha1::Eviction>(value),
        _ => None,
    }
}

fn walk(given: &Value, known: &Value, path: &str, out: &mut Vec<String>) {
    match (given, known) {
        (Value::Object(g), Value::Object(k)) => {
            for (key, v) in g {
                if v.is_null() {
                    continue;
                }
                let p = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match k.get(key) {
                    Some(kv) => walk(v, kv, &p, out),
                    None => out.push(p),
                }
            }
        }
        (Value::Array(g), Value::Array(k)) => {
            for (i, (gv, kv)) in g.iter().zip(k).enumerate() {
                walk(gv, kv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Paths of `value`'s fields that `def`'s schema does not know, in upstream's
/// `spec.containers[0].foo` form. Free-form maps (labels, annotations, …)
/// survive the round trip, so they are never reported.
pub fn unknown_fields(def: &ResourceDef, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(k) = known(def, value) {
        walk(value, &k, "", &mut out);
    }
    out
}

/// Applies the directive to a body: `Err` for `Strict` with unknown fields,
/// else the warnings to send.
pub fn check(
    directive: Directive,
    def: &ResourceDef,
    value: &Value,
) -> Result<Vec<String>, ApiError> {
    if directive == Directive::Ignore {
        return Ok(Vec::new());
    }
    let unknown: Vec<String> = unknown_fields(def, value)
        .into_iter()
        .map(|p| format!("unknown field {}", exitplan_api::field::go_quote(&p)))
        .collect();
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    if directive == Directive::Strict {
        // The create and update handlers report a body's decoding error
        // through `transformDecodeError`, naming the kind and version.
        return Err(bad_request(format!(
            "{kind} in version {version} cannot be handled as a {kind}: strict decoding error: {}",
            unknown.join(", "),
            kind = def.kind,
            version = exitplan_api::field::go_quote(def.version),
        )));
    }
    Ok(unknown)
}

/// Adds one `Warning: 299 - "<text>"` header per warning.
pub fn warn(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        let text = format!("299 - {}", exitplan_api::field::go_quote(w));
        if let Ok(v) = HeaderValue::from_str(&text) {
            response
                .headers_mut()
                .append(axum::http::header::WARNING, v);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn finds_unknown_fields_only() {
        let pods = find("", "v1", "pods").expect("pods");
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"any": "thing"}, "bogus": 1},
            "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolcy": "Always"}]}
        });
        assert_eq!(
            unknown_fields(pods, &pod),
            ["metadata.bogus", "spec.containers[0].imagePullPolcy"]
        );
        let e = check(Directive::Strict, pods, &pod).expect_err("strict");
        assert_eq!(
            e.status.message.as_deref(),
            Some(
                "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"metadata.bogus\", unknown field \"spec.containers[0].imagePullPolcy\""
            )
        );
        assert_eq!(
            check(Directive::Warn, pods, &pod).map(|w| w.len()).ok(),
            Some(2)
        );
        assert!(
            check(Directive::Ignore, pods, &pod)
                .expect("ignore")
                .is_empty()
        );
    }
}
