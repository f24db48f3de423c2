//! `apiequality.Semantic.DeepEqual` for k8s-openapi values.
//!
//! Upstream compares the internal Go structs, where a nil slice or map
//! equals an empty one. k8s-openapi spells "nil" as `None` and "empty" as
//! `Some(vec![])`, so `==` would see a change where upstream sees none. The
//! values are compared through their JSON form with `null`s and empty
//! arrays dropped. Empty objects are kept: they stand for non-nil pointers
//! to empty structs, which upstream does tell apart from nil (an empty
//! `labels: {}` map is the one place where this is stricter than upstream).

use serde::Serialize;
use serde_json::Value;

fn normalize(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| {
                    let v = normalize(v);
                    let drop = match &v {
                        Value::Null => true,
                        Value::Array(a) => a.is_empty(),
                        _ => false,
                    };
                    (!drop).then_some((k, v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        other => other,
    }
}

/// Whether `a` and `b` are semantically equal (nil ≡ empty for lists).
pub fn semantic_eq<T: Serialize>(a: &T, b: &T) -> bool {
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(a), Ok(b)) => normalize(a) == normalize(b),
        // Serialization of k8s-openapi types does not fail; if it ever did,
        // treating the values as different is the safe answer for
        // immutability checks.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::{PodFailurePolicy, PodFailurePolicyRule};

    #[test]
    fn nil_and_empty_lists_are_equal() {
        let a = PodFailurePolicyRule {
            action: "Ignore".into(),
            on_pod_conditions: None,
            ..Default::default()
        };
        let b = PodFailurePolicyRule {
            on_pod_conditions: Some(vec![]),
            ..a.clone()
        };
        assert!(semantic_eq(&a, &b));
        let c = PodFailurePolicyRule {
            action: "Count".into(),
            ..a.clone()
        };
        assert!(!semantic_eq(&a, &c));
    }

    #[test]
    fn nil_pointer_differs_from_empty_struct() {
        let none: Option<PodFailurePolicy> = None;
        let empty = Some(PodFailurePolicy { rules: vec![] });
        assert!(!semantic_eq(&none, &empty));
    }
}
