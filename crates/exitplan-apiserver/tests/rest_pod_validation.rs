//! Pod validation through the REST API: every write path (create, update,
//! merge/JSON/strategic patch, apply, `/status`, `/binding`) answers
//! kube-apiserver's Status for an invalid pod and stores nothing.

mod support;

use serde_json::{Value, json};
use support::*;

const PODS: &str = "/api/v1/namespaces/default/pods";

/// `(field, reason)` of every cause.
fn causes(status: &Value) -> Vec<(String, String)> {
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn assert_invalid(code: u16, out: &Value, name: &str, want: &[(&str, &str)]) {
    assert_eq!(code, 422, "{out}");
    assert_eq!(out["reason"], "Invalid", "{out}");
    assert_eq!(out["details"]["kind"], "Pod", "{out}");
    assert_eq!(out["details"]["name"], name, "{out}");
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(f, r)| ((*f).to_owned(), (*r).to_owned()))
        .collect();
    assert_eq!(causes(out), want, "{out}");
}

#[tokio::test(start_paused = true)]
async fn invalid_pods_are_refused_on_create_and_not_stored() {
    let server = server().await;
    let mut no_containers = pod("empty");
    no_containers["spec"]["containers"] = json!([]);
    let (code, out) = send(&server, "POST", PODS, "application/json", &no_containers).await;
    assert_invalid(
        code,
        &out,
        "empty",
        &[("spec.containers", "FieldValueRequired")],
    );
    assert_eq!(
        out["message"],
        "Pod \"empty\" is invalid: spec.containers: Required value"
    );

    let mut dup = pod("dup");
    dup["spec"]["containers"] = json!([{"name": "c", "image": "i"}, {"name": "c", "image": "i"}]);
    let (code, out) = send(&server, "POST", PODS, "application/json", &dup).await;
    assert_invalid(
        code,
        &out,
        "dup",
        &[("spec.containers[1].name", "FieldValueDuplicate")],
    );

    let mut unnamed = pod("unnamed");
    unnamed["spec"]["containers"] = json!([{"name": "", "image": "i"}]);
    let (code, out) = send(&server, "POST", PODS, "application/json", &unnamed).await;
    assert_invalid(
        code,
        &out,
        "unnamed",
        &[("spec.containers[0].name", "FieldValueRequired")],
    );

    for name in ["empty", "dup", "unnamed"] {
        let (code, _, _) = raw(&server, "GET", &format!("{PODS}/{name}"), &[], "").await;
        assert_eq!(code, 404, "{name} was stored");
    }
}

#[tokio::test(start_paused = true)]
async fn forbidden_spec_changes_are_refused_by_every_update_path() {
    let server = server().await;
    let (code, created) = send(&server, "POST", PODS, "application/json", &pod("a")).await;
    assert_eq!(code, 201, "{created}");
    let uri = format!("{PODS}/a");
    let spec_forbidden = [("spec", "FieldValueForbidden")];

    // Merge patch adding a container.
    let add = json!({"spec": {"containers": [{"name": "c", "image": "busybox"}, {"name": "d", "image": "busybox"}]}});
    let (code, out) = send(&server, "PATCH", &uri, "application/merge-patch+json", &add).await;
    assert_invalid(
        code,
        &out,
        "a",
        &[("spec.containers", "FieldValueForbidden")],
    );

    // JSON patch setting the node.
    let set_node = json!([{"op": "add", "path": "/spec/nodeName", "value": "node-1"}]);
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/json-patch+json",
        &set_node,
    )
    .await;
    assert_invalid(code, &out, "a", &spec_forbidden);
    let detail = out["details"]["causes"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        detail.starts_with(
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
        ) && detail.contains("+ \tNodeName:"),
        "{detail}"
    );

    // Strategic merge patch setting the node.
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/strategic-merge-patch+json",
        &json!({"spec": {"nodeName": "node-1"}}),
    )
    .await;
    assert_invalid(code, &out, "a", &spec_forbidden);

    // Apply setting the node.
    let mut applied = pod("a");
    applied["spec"]["nodeName"] = json!("node-1");
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{uri}?fieldManager=test&force=true"),
        "application/apply-patch+yaml",
        &applied,
    )
    .await;
    assert_invalid(code, &out, "a", &spec_forbidden);

    // Update (PUT) setting the node.
    let (_, _, mut stored) = raw(&server, "GET", &uri, &[], "").await;
    stored["spec"]["nodeName"] = json!("node-1");
    let (code, out) = send(&server, "PUT", &uri, "application/json", &stored).await;
    assert_invalid(code, &out, "a", &spec_forbidden);

    // Nothing changed.
    let (_, _, now) = raw(&server, "GET", &uri, &[], "").await;
    assert_eq!(
        now["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert!(now["spec"].get("nodeName").is_none(), "{now}");

    // An allowed change (image) goes through.
    let image = json!({"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}});
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/strategic-merge-patch+json",
        &image,
    )
    .await;
    assert_eq!(code, 200, "{out}");
}

#[tokio::test(start_paused = true)]
async fn status_and_binding_are_validated() {
    let server = server().await;
    let (code, _) = send(&server, "POST", PODS, "application/json", &pod("a")).await;
    assert_eq!(code, 201);
    let uri = format!("{PODS}/a");
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{uri}/status"),
        "application/merge-patch+json",
        &json!({"status": {"podIPs": [{"ip": "1.1.1.1.1"}]}}),
    )
    .await;
    assert_invalid(
        code,
        &out,
        "a",
        &[("status.podIPs[0]", "FieldValueInvalid")],
    );

    // ValidatePodBinding errors are a plain error upstream: 500, no reason.
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"}, "target": {"kind": "Pod", "name": "n1"}});
    let (code, out) = send(
        &server,
        "POST",
        &format!("{uri}/binding"),
        "application/json",
        &binding,
    )
    .await;
    assert_eq!(code, 500, "{out}");
    assert_eq!(
        out["message"],
        "target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\""
    );
    assert!(out.get("reason").is_none(), "{out}");

    // A gated pod cannot be bound.
    let mut gated = pod("g");
    gated["spec"]["schedulingGates"] = json!([{"name": "wait"}]);
    let (code, _) = send(&server, "POST", PODS, "application/json", &gated).await;
    assert_eq!(code, 201);
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "g"}, "target": {"name": "n1"}});
    let (code, out) = send(
        &server,
        "POST",
        &format!("{PODS}/g/binding"),
        "application/json",
        &binding,
    )
    .await;
    assert_eq!(code, 409, "{out}");
    assert_eq!(
        out["message"],
        "Operation cannot be fulfilled on pods/binding \"g\": pod g has non-empty .spec.schedulingGates"
    );
}

/// `lifecycle.stopSignal` belongs to the ContainerStopSignals gate, off by
/// default in 1.35: kube-apiserver drops it on create (and keeps the rest of
/// the lifecycle), so the stored pod has none.
#[tokio::test(start_paused = true)]
async fn a_stop_signal_is_dropped_on_create_as_its_gate_is_off() {
    let server = server().await;
    let mut p = pod("stop");
    p["spec"]["containers"][0]["lifecycle"] = json!({
        "stopSignal": "SIGUSR1",
        "preStop": {"sleep": {"seconds": 1}}
    });
    let (code, out) = send(&server, "POST", PODS, "application/json", &p).await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(
        out["spec"]["containers"][0]["lifecycle"],
        json!({"preStop": {"sleep": {"seconds": 1}}}),
        "{out}"
    );
}
