//! admissionregistration.k8s.io kinds (upstream's `printValidatingWebhook`,
//! `printMutatingWebhook`: NAME WEBHOOKS AGE; `printValidatingAdmissionPolicy`:
//! NAME VALIDATIONS PARAMKIND AGE; `printValidatingAdmissionPolicyBinding`:
//! NAME POLICYNAME PARAMREF AGE).

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::json;

use super::cells;
use super::{Column, Printer, Row, decode};

/// The columns both configurations share.
fn columns() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Webhooks",
            "integer",
            "Webhooks indicates the number of webhooks.".into(),
        ),
        Column::age(),
    ]
}

/// The ValidatingWebhookConfiguration printer.
pub const VALIDATING_WEBHOOK_CONFIGURATION: Printer = Printer {
    columns,
    row: |v, now| {
        let c = decode::<ValidatingWebhookConfiguration>(v)?;
        Some(Row::from(vec![
            cells::name(&c.metadata),
            json!(c.webhooks.as_ref().map_or(0, Vec::len)),
            cells::age(&c.metadata, now),
        ]))
    },
};

/// The MutatingWebhookConfiguration printer.
pub const MUTATING_WEBHOOK_CONFIGURATION: Printer = Printer {
    columns,
    row: |v, now| {
        let c = decode::<MutatingWebhookConfiguration>(v)?;
        Some(Row::from(vec![
            cells::name(&c.metadata),
            json!(c.webhooks.as_ref().map_or(0, Vec::len)),
            cells::age(&c.metadata, now),
        ]))
    },
};

/// The ValidatingAdmissionPolicy printer.
pub const VALIDATING_ADMISSION_POLICY: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Validations",
                "integer",
                "Validations indicates the number of validation rules".into(),
            ),
            Column::new(
                "ParamKind",
                "string",
                "ParamKind specifies the kind of resources used to parameterize this policy".into(),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let p = decode::<ValidatingAdmissionPolicy>(v)?;
        let spec = p.spec.unwrap_or_default();
        let param_kind = spec.param_kind.map_or_else(
            || "<unset>".to_owned(),
            |pk| {
                format!(
                    "{}/{}",
                    pk.api_version.unwrap_or_default(),
                    pk.kind.unwrap_or_default()
                )
            },
        );
        Some(Row::from(vec![
            cells::name(&p.metadata),
            json!(spec.validations.as_ref().map_or(0, Vec::len)),
            json!(param_kind),
            cells::age(&p.metadata, now),
        ]))
    },
};

/// gogo-protobuf's `LabelSelector.String()`, which upstream's binding
/// printer shows for a paramRef selector.
fn gogo_label_selector(s: &LabelSelector) -> String {
    let labels: String = s
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: String = s
        .match_expressions
        .iter()
        .flatten()
        .map(|r| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                r.key,
                r.operator,
                r.values.as_deref().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

/// The ValidatingAdmissionPolicyBinding printer.
pub const VALIDATING_ADMISSION_POLICY_BINDING: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "PolicyName",
                "string",
                "PolicyName indicates the policy definition which the policy binding binded to"
                    .into(),
            ),
            Column::new(
                "ParamRef",
                "string",
                "ParamRef indicates the param resource which sets the configration param".into(),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let b = decode::<ValidatingAdmissionPolicyBinding>(v)?;
        let param = match &b.spec.param_ref {
            Some(pr) if pr.name.as_deref().is_some_and(|n| !n.is_empty()) => {
                let name = pr.name.as_deref().unwrap_or_default();
                match pr.namespace.as_deref().filter(|n| !n.is_empty()) {
                    Some(ns) => format!("{ns}/{name}"),
                    None => format!("*/{name}"),
                }
            }
            Some(pr) => pr
                .selector
                .as_ref()
                .map_or_else(|| "<unset>".to_owned(), gogo_label_selector),
            None => "<unset>".to_owned(),
        };
        Some(Row::from(vec![
            cells::name(&b.metadata),
            json!(b.spec.policy_name),
            json!(param),
            cells::age(&b.metadata, now),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use serde_json::Value;

    fn cells_of(p: Printer, v: Value) -> Vec<Value> {
        let now: Timestamp = "2026-01-03T00:00:00Z".parse().expect("time");
        (p.row)(&v, now).expect("decodes").cells
    }

    /// Upstream `TestPrintValidatingWebhookConfiguration` / `TestPrintMutatingWebhookConfiguration`.
    #[test]
    fn webhook_configurations() {
        let hook = json!({"name": "a.example.com", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"], "clientConfig": {}});
        for p in [
            VALIDATING_WEBHOOK_CONFIGURATION,
            MUTATING_WEBHOOK_CONFIGURATION,
        ] {
            assert_eq!(
                cells_of(
                    p,
                    json!({"metadata": {"name": "wh", "creationTimestamp": "2026-01-01T00:00:00Z"},
                           "webhooks": [hook, hook]})
                ),
                vec![json!("wh"), json!(2), json!("2d")]
            );
            assert_eq!(
                cells_of(p, json!({"metadata": {"name": "empty"}})),
                vec![json!("empty"), json!(0), json!("<unknown>")]
            );
            let names: Vec<String> = (p.columns)().iter().map(|c| c.name.to_string()).collect();
            assert_eq!(names, ["Name", "Webhooks", "Age"]);
        }
    }

    /// Upstream `TestPrintValidatingAdmissionPolicy` / `…Binding`.
    #[test]
    fn policies_and_bindings() {
        assert_eq!(
            cells_of(
                VALIDATING_ADMISSION_POLICY,
                json!({"metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"},
                       "spec": {"validations": [{"expression": "true"}],
                                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}})
            ),
            vec![json!("p"), json!(1), json!("v1/ConfigMap"), json!("2d")]
        );
        assert_eq!(
            cells_of(
                VALIDATING_ADMISSION_POLICY,
                json!({"metadata": {"name": "q"}})
            ),
            vec![json!("q"), json!(0), json!("<unset>"), json!("<unknown>")]
        );
        let b = |param: Value| {
            cells_of(
                VALIDATING_ADMISSION_POLICY_BINDING,
                json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "paramRef": param,
                                                          "validationActions": ["Deny"]}}),
            )[2]
            .clone()
        };
        assert_eq!(b(json!({"name": "x", "namespace": "ns"})), json!("ns/x"));
        assert_eq!(b(json!({"name": "x"})), json!("*/x"));
        assert_eq!(
            b(json!({"selector": {"matchLabels": {"a": "b"},
                                  "matchExpressions": [{"key": "k", "operator": "In", "values": ["v", "w"]}]}})),
            json!(
                "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[v w],},},}"
            )
        );
        assert_eq!(b(Value::Null), json!("<unset>"));
    }
}
