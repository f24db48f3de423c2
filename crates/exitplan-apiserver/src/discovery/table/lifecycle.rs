//! EvictionRequests and Evictions (no upstream printer): what an operator
//! asks first — which pod, who asked and whether they still want it, which
//! responder holds the eviction now and in which state, and how it ended.

use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::json;

use super::{Column, Printer, Row, created, decode, since};
use crate::discovery::openapi::describe;

const NONE: &str = "<none>";

/// `TargetEvicted`, `Failed (<reason>)`, or `<none>` while in progress.
fn outcome(conditions: Option<&[Condition]>) -> String {
    let true_condition = |ty: &str| {
        conditions
            .unwrap_or_default()
            .iter()
            .find(|c| c.type_ == ty && c.status == "True")
    };
    if true_condition("TargetEvicted").is_some() {
        return "TargetEvicted".to_owned();
    }
    match true_condition("Failed") {
        Some(c) if !c.reason.is_empty() => format!("Failed ({})", c.reason),
        Some(_) => "Failed".to_owned(),
        None => NONE.to_owned(),
    }
}

fn outcome_column() -> Column {
    Column::new(
        "Outcome",
        "string",
        "TargetEvicted or Failed (with its reason) once the eviction has ended.".into(),
    )
}

/// The EvictionRequest printer: NAME TARGET REQUESTER INTENT OUTCOME AGE.
pub const EVICTION_REQUEST: Printer = Printer {
    columns: || {
        let d = |p: &str| describe("io.k8s.api.lifecycle.v1alpha1.EvictionRequestSpec", p);
        vec![
            Column::name(),
            Column::new("Target", "string", d("target")),
            Column::new("Requester", "string", d("requester")),
            Column::new("Intent", "string", d("intent")),
            outcome_column(),
            Column::age(),
        ]
    },
    row: |v, now| {
        let er = decode::<EvictionRequest>(v)?;
        let target = er
            .spec
            .target
            .pod
            .as_ref()
            .map_or_else(|| NONE.to_owned(), |p| format!("pod/{}", p.name));
        Some(Row::from(vec![
            json!(er.metadata.name.clone().unwrap_or_default()),
            json!(target),
            json!(er.spec.requester),
            json!(er.spec.intent),
            json!(outcome(
                er.status.as_ref().and_then(|s| s.conditions.as_deref())
            )),
            json!(since(created(&er.metadata), now)),
        ]))
    },
};

/// The Eviction printer: NAME TARGET RESPONDER STATE OUTCOME AGE, where the
/// responder is the Active one, else the last that left Inactive.
pub const EVICTION: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Target", "string", describe("io.k8s.api.lifecycle.v1alpha1.EvictionSpec", "target")),
            Column::new(
                "Responder",
                "string",
                "The responder handling the eviction now (Active), or the last one that handled it.".into(),
            ),
            Column::new("State", "string", "The state of that responder in status.targetResponders.".into()),
            outcome_column(),
            Column::age(),
        ]
    },
    row: |v, now| {
        let ev = decode::<Eviction>(v)?;
        let target = ev
            .spec
            .target
            .pod
            .as_ref()
            .map_or_else(|| NONE.to_owned(), |p| format!("pod/{}", p.name));
        let status = ev.status.clone().unwrap_or_default();
        let responders = status.target_responders.clone().unwrap_or_default();
        let current = responders
            .iter()
            .find(|r| r.state == "Active")
            .or_else(|| responders.iter().rev().find(|r| r.state != "Inactive"));
        let (responder, state) = current.map_or((NONE.to_owned(), NONE.to_owned()), |r| {
            (r.name.clone(), r.state.clone())
        });
        Some(Row::from(vec![
            json!(ev.metadata.name.clone().unwrap_or_default()),
            json!(target),
            json!(responder),
            json!(state),
            json!(outcome(status.conditions.as_deref())),
            json!(since(created(&ev.metadata), now)),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use serde_json::Value;

    fn now() -> Timestamp {
        "2026-01-01T00:10:00Z".parse().expect("time")
    }

    #[test]
    fn eviction_request_cells() {
        let er = json!({
            "metadata": {"name": "drain-web-0", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"target": {"pod": {"name": "web-0", "uid": "u"}}, "requester": "acme.io/drain", "intent": "Eviction"},
            "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "NoFurtherResponder", "message": "", "lastTransitionTime": "2026-01-01T00:05:00Z"}]}
        });
        let cells = (EVICTION_REQUEST.row)(&er, now()).expect("row").cells;
        assert_eq!(
            cells,
            vec![
                json!("drain-web-0"),
                json!("pod/web-0"),
                json!("acme.io/drain"),
                json!("Eviction"),
                json!("Failed (NoFurtherResponder)"),
                json!("10m")
            ]
        );
    }

    #[test]
    fn eviction_cells() {
        let ev = |states: &[(&str, &str)], conditions: Value| {
            let responders: Vec<Value> = states
                .iter()
                .enumerate()
                .map(|(i, (n, s))| json!({"name": n, "priority": 100 - i, "state": s}))
                .collect();
            let e = json!({
                "metadata": {"name": "e1", "creationTimestamp": "2026-01-01T00:09:00Z"},
                "spec": {"target": {"pod": {"name": "web-0", "uid": "u"}}},
                "status": {"targetResponders": responders, "conditions": conditions}
            });
            (EVICTION.row)(&e, now()).expect("row").cells
        };
        assert_eq!(
            ev(
                &[
                    ("acme.io/backup", "Completed"),
                    ("imperative-eviction.k8s.io/evictor", "Active")
                ],
                json!([])
            ),
            vec![
                json!("e1"),
                json!("pod/web-0"),
                json!("imperative-eviction.k8s.io/evictor"),
                json!("Active"),
                json!("<none>"),
                json!("60s")
            ]
        );
        let done = ev(
            &[
                ("acme.io/backup", "Completed"),
                ("imperative-eviction.k8s.io/evictor", "Inactive"),
            ],
            json!([{"type": "TargetEvicted", "status": "True", "reason": "PodTerminal", "message": "", "lastTransitionTime": "2026-01-01T00:09:30Z"}]),
        );
        assert_eq!(
            (done[2].clone(), done[3].clone(), done[4].clone()),
            (
                json!("acme.io/backup"),
                json!("Completed"),
                json!("TargetEvicted")
            )
        );
        assert_eq!(ev(&[], json!([]))[2], json!("<none>"));
    }
}
