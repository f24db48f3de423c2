//! Admission of the common built-in kinds through the server: their
//! upstream strategies, Service address allocation, and the Priority
//! admission plugin's rules for PriorityClasses.

mod support;

use exitplan_apiserver::server::Server;
use serde_json::{Value, json};
use support::*;

const JSON: &str = "application/json";

async fn post(server: &Server, uri: &str, body: &Value) -> (u16, Value) {
    let (code, _, out) = raw(
        server,
        "POST",
        uri,
        &[("content-type", JSON)],
        &body.to_string(),
    )
    .await;
    (code, out)
}

const SERVICES: &str = "/api/v1/namespaces/default/services";

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test(start_paused = true)]
async fn services_get_cluster_ips_and_node_ports() {
    let server = server().await;
    let (code, a) = post(
        &server,
        SERVICES,
        &service(
            "a",
            json!({"selector": {"app": "a"}, "ports": [{"port": 80}]}),
        ),
    )
    .await;
    assert_eq!(code, 201, "{a}");
    assert_eq!(a["spec"]["type"], "ClusterIP");
    assert_eq!(a["spec"]["clusterIP"], "10.96.1.1");
    assert_eq!(a["spec"]["clusterIPs"], json!(["10.96.1.1"]));
    assert_eq!(a["spec"]["ports"][0]["targetPort"], 80);
    assert_eq!(a["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(a["spec"]["ipFamilies"], json!(["IPv4"]));

    let (code, b) = post(
        &server,
        SERVICES,
        &service(
            "b",
            json!({"type": "NodePort", "selector": {"app": "b"}, "ports": [{"port": 80}]}),
        ),
    )
    .await;
    assert_eq!(code, 201, "{b}");
    assert_eq!(b["spec"]["clusterIP"], "10.96.1.2");
    assert_eq!(b["spec"]["ports"][0]["nodePort"], 30086);

    let (code, c) = post(
        &server,
        SERVICES,
        &service(
            "c",
            json!({"clusterIP": "10.96.1.1", "ports": [{"port": 80}]}),
        ),
    )
    .await;
    assert_eq!(code, 422, "{c}");
    assert_eq!(
        c["message"],
        "Service \"c\" is invalid: spec.clusterIPs: Invalid value: [\"10.96.1.1\"]: failed to allocate IP 10.96.1.1: provided IP is already allocated"
    );

    let (code, d) = post(
        &server,
        SERVICES,
        &service("d", json!({"ports": [{"port": 80}, {"port": 81}]})),
    )
    .await;
    assert_eq!(code, 422, "{d}");
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("spec.ports[0].name: Required value")),
        "{d}"
    );
}

#[tokio::test(start_paused = true)]
async fn workloads_and_config_follow_upstream_rules() {
    let server = server().await;
    let (code, out) = post(
        &server,
        "/apis/apps/v1/namespaces/default/deployments",
        &json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "other"}},
                             "spec": {"containers": [{"name": "main", "image": "nginx"}]}}
            }
        }),
    )
    .await;
    assert_eq!(code, 422, "{out}");
    assert_eq!(
        out["message"],
        "Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"
    );

    let (code, out) = post(
        &server,
        "/api/v1/namespaces/default/secrets",
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                "stringData": {"user": "admin"}}),
    )
    .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["data"], json!({"user": "YWRtaW4="}));
    assert_eq!(out["type"], "Opaque");
    assert!(out.get("stringData").is_none(), "{out}");

    let (code, out) = post(
        &server,
        "/api/v1/namespaces/default/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                "data": {"bad key": "v"}}),
    )
    .await;
    assert_eq!(code, 422, "{out}");
    assert_eq!(out["details"]["causes"][0]["field"], "data[bad key]");
}

#[tokio::test(start_paused = true)]
async fn priority_classes_keep_one_default_and_the_system_classes() {
    let server = server().await;
    let url = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let (code, _, out) = raw(
        &server,
        "GET",
        &format!("{url}/system-node-critical"),
        &[],
        "",
    )
    .await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["value"], 2_000_001_000);

    let class = |name: &str| {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": name}, "value": 100, "globalDefault": true})
    };
    let (code, out) = post(&server, url, &class("first")).await;
    assert_eq!(code, 201, "{out}");
    let (code, out) = post(&server, url, &class("second")).await;
    assert_eq!(code, 403, "{out}");
    assert_eq!(
        out["message"],
        "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass first is already marked as default. Only one default can exist"
    );

    let (code, _, out) = raw(
        &server,
        "DELETE",
        &format!("{url}/system-cluster-critical"),
        &[],
        "",
    )
    .await;
    assert_eq!(code, 403, "{out}");
    assert_eq!(out["reason"], "Forbidden");
}
