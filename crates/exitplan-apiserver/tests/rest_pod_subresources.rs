//! The pod subresources kube-apiserver writes besides `status` and the pod
//! status rules, through the REST API: `pods/ephemeralcontainers` (what
//! `kubectl debug` patches), `pods/resize` (in-place resize), the QoS class
//! stored on create and kept by `/status` writes.

mod support;

use exitplan_apiserver::server::Server;
use serde_json::{Value, json};
use support::*;

const PODS: &str = "/api/v1/namespaces/default/pods";
const SMP: &str = "application/strategic-merge-patch+json";
const JSON: &str = "application/json";

async fn get(server: &Server, uri: &str) -> Value {
    let (code, _, out) = raw(server, "GET", uri, &[], "").await;
    assert_eq!(code, 200, "{out}");
    out
}

fn causes(status: &Value) -> Vec<(String, String, String)> {
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("field"), s("reason"), s("message"))
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn discovery_serves_ephemeralcontainers_and_resize() {
    let server = server().await;
    let core = get(&server, "/api/v1").await;
    for name in ["pods/ephemeralcontainers", "pods/resize"] {
        let entry = core["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == name))
            .unwrap_or_else(|| panic!("{name} not served: {core}"));
        assert_eq!(
            entry,
            &json!({"name": name, "singularName": "", "namespaced": true, "kind": "Pod",
                    "verbs": ["get", "patch", "update"]})
        );
    }
}

#[tokio::test(start_paused = true)]
async fn ephemeral_containers_are_added_through_their_subresource_only() {
    let server = server().await;
    let (code, created) = send(&server, "POST", PODS, JSON, &pod("web")).await;
    assert_eq!(code, 201, "{created}");
    let uri = format!("{PODS}/web/ephemeralcontainers");

    // The main resource refuses them, with the spec diff.
    let mut with = created.clone();
    with["spec"]["ephemeralContainers"] = json!([{"name": "debugger", "image": "busybox"}]);
    let (code, out) = send(&server, "PUT", &format!("{PODS}/web"), JSON, &with).await;
    assert_eq!(code, 422, "{out}");
    let c = causes(&out);
    assert_eq!(
        (c[0].0.as_str(), c[0].1.as_str()),
        ("spec", "FieldValueForbidden")
    );
    assert!(
        c[0].2
            .starts_with("Forbidden: pod updates may not change fields other than"),
        "{out}"
    );

    // `kubectl debug`'s strategic merge patch adds one; other changes in the
    // same request are dropped.
    let patch = json!({"metadata": {"labels": {"debug": "yes"}},
                       "spec": {"ephemeralContainers": [{"name": "debugger", "image": "busybox",
                                                         "targetContainerName": "c", "stdin": true, "tty": true}]}});
    let (code, out) = send(&server, "PATCH", &uri, SMP, &patch).await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["spec"]["ephemeralContainers"][0]["name"], "debugger");
    assert_eq!(
        out["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"],
        "File"
    );
    assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(out["metadata"]["generation"], 2);
    let read = get(&server, &uri).await;
    assert_eq!(read["kind"], "Pod");
    assert_eq!(read["spec"]["ephemeralContainers"][0]["image"], "busybox");

    // Existing ones can be neither removed nor changed.
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/ephemeralContainers", "value": []}]),
    )
    .await;
    assert_eq!(code, 422, "{out}");
    assert_eq!(
        causes(&out),
        [(
            "spec.ephemeralContainers".to_owned(),
            "FieldValueForbidden".to_owned(),
            "Forbidden: existing ephemeral containers \"debugger\" may not be removed\n".to_owned()
        )]
    );
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "debian"}]),
    )
    .await;
    assert_eq!(code, 422, "{out}");
    assert!(
        causes(&out)[0].2.starts_with(
            "Forbidden: existing ephemeral containers \"debugger\" may not be changed\n"
        ),
        "{out}"
    );
    assert_eq!(
        get(&server, &format!("{PODS}/web")).await["spec"]["ephemeralContainers"][0]["image"],
        "busybox"
    );
}

#[tokio::test(start_paused = true)]
async fn resize_changes_cpu_and_memory_only() {
    let server = server().await;
    let mut p = pod("sized");
    p["spec"]["containers"][0]["resources"] = json!({
        "requests": {"cpu": "100m", "memory": "100Mi"},
        "limits": {"cpu": "200m", "memory": "200Mi"}
    });
    let (code, created) = send(&server, "POST", PODS, JSON, &p).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["status"]["qosClass"], "Burstable");
    let uri = format!("{PODS}/sized/resize");

    // A resize through the main resource is a forbidden spec change.
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{PODS}/sized"),
        SMP,
        &json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "150m"}}}]}}),
    )
    .await;
    assert_eq!(code, 422, "{out}");

    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        SMP,
        &json!({"spec": {"containers": [{"name": "c", "image": "ignored",
                  "resources": {"requests": {"cpu": "150m"}, "limits": {"cpu": "300m"}}}]}}),
    )
    .await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(
        out["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "150m"
    );
    assert_eq!(out["spec"]["containers"][0]["image"], "busybox");
    assert_eq!(out["metadata"]["generation"], 2);

    for (patch, field, message) in [
        (
            json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"memory": "150Mi"}}}]}}),
            "spec.containers[0].resources.limits[memory]",
            "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer",
        ),
        (
            json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "300m", "memory": "200Mi"}}}]}}),
            "spec",
            "Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing",
        ),
    ] {
        let (code, out) = send(&server, "PATCH", &uri, SMP, &patch).await;
        assert_eq!(code, 422, "{out}");
        assert_eq!(causes(&out)[0].0, field, "{out}");
        assert_eq!(causes(&out)[0].2, message, "{out}");
    }
}

#[tokio::test(start_paused = true)]
async fn status_writes_keep_the_qos_class() {
    let server = server().await;
    let (code, created) = send(&server, "POST", PODS, JSON, &pod("q")).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["status"]["qosClass"], "BestEffort");
    let uri = format!("{PODS}/q/status");

    // A kubelet that drops the class (as old ones do) keeps the stored one.
    let mut running = created.clone();
    running["status"] = json!({"phase": "Running"});
    let (code, out) = send(&server, "PUT", &uri, JSON, &running).await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["status"]["qosClass"], "BestEffort");
    assert_eq!(out["status"]["phase"], "Running");

    let mut changed = out.clone();
    changed["status"]["qosClass"] = json!("Guaranteed");
    let (code, out) = send(&server, "PUT", &uri, JSON, &changed).await;
    assert_eq!(code, 422, "{out}");
    assert_eq!(
        out["message"],
        "Pod \"q\" is invalid: status.qosClass: Invalid value: \"Guaranteed\": field is immutable"
    );
}
