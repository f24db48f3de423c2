//! The `scale` subresource of Deployments, ReplicaSets, StatefulSets and
//! ReplicationControllers over REST: discovery, GET, PUT and PATCH of an
//! `autoscaling/v1` Scale, and kube-apiserver's errors.

mod support;

use serde_json::{Value, json};
use support::*;

const MERGE: &str = "application/merge-patch+json";
const JSON: &str = "application/json";

fn template() -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    })
}

/// (collection URL, a parent with 2 replicas, the selector string).
fn parents() -> Vec<(&'static str, Value, &'static str)> {
    let apps = |kind: &str| {
        json!({
            "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web"},
            "spec": {
                "replicas": 2, "serviceName": "web",
                "selector": {"matchLabels": {"app": "web"},
                             "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
                "template": template()
            }
        })
    };
    let mut sts = apps("StatefulSet");
    sts["spec"]["template"]["metadata"]["labels"]["tier"] = "fe".into();
    vec![
        (
            "/apis/apps/v1/namespaces/default/deployments",
            apps("Deployment"),
            "app=web,tier notin (db)",
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            apps("ReplicaSet"),
            "app=web,tier notin (db)",
        ),
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            sts,
            "app=web,tier notin (db)",
        ),
        (
            "/api/v1/namespaces/default/replicationcontrollers",
            json!({
                "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "web"},
                "spec": {"replicas": 2, "selector": {"app": "web"}, "template": template()}
            }),
            "app=web",
        ),
    ]
}

#[tokio::test(start_paused = true)]
async fn scale_is_discovered_as_an_autoscaling_v1_scale() {
    let server = server().await;
    for (uri, name) in [
        ("/apis/apps/v1", "deployments/scale"),
        ("/apis/apps/v1", "replicasets/scale"),
        ("/apis/apps/v1", "statefulsets/scale"),
        ("/api/v1", "replicationcontrollers/scale"),
    ] {
        let (code, _, doc) = raw(&server, "GET", uri, &[], "").await;
        assert_eq!(code, 200);
        let entry = doc["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == name))
            .unwrap_or_else(|| panic!("{name} not served: {doc}"));
        assert_eq!(
            entry,
            &json!({"name": name, "singularName": "", "namespaced": true,
                    "group": "autoscaling", "version": "v1", "kind": "Scale",
                    "verbs": ["get", "patch", "update"]}),
        );
    }
    let (_, _, apps) = raw(&server, "GET", "/apis/apps/v1", &[], "").await;
    let has = |n: &str| {
        apps["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["name"] == n))
    };
    assert!(!has("daemonsets/scale"), "DaemonSets have no scale");
}

#[tokio::test(start_paused = true)]
async fn get_put_and_patch_a_scale() {
    let server = server().await;
    for (collection, parent, selector) in parents() {
        let (code, created) = send(&server, "POST", collection, JSON, &parent).await;
        assert_eq!(code, 201, "{collection}: {created}");
        let uid = created["metadata"]["uid"].clone();
        let url = format!("{collection}/web/scale");

        let (code, _, scale) = raw(&server, "GET", &url, &[], "").await;
        assert_eq!(code, 200, "{url}: {scale}");
        assert_eq!(
            scale,
            json!({
                "kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {
                    "name": "web", "namespace": "default", "uid": uid,
                    "resourceVersion": created["metadata"]["resourceVersion"],
                    "creationTimestamp": START
                },
                "spec": {"replicas": 2},
                "status": {"replicas": 0, "selector": selector}
            }),
            "{url}"
        );

        // kubectl scale: a merge patch of spec.replicas.
        let (code, patched) = send(
            &server,
            "PATCH",
            &url,
            MERGE,
            &json!({"spec": {"replicas": 5}}),
        )
        .await;
        assert_eq!(code, 200, "{url}: {patched}");
        assert_eq!(patched["spec"]["replicas"], 5);
        let (_, _, parent_now) = raw(&server, "GET", &format!("{collection}/web"), &[], "").await;
        assert_eq!(parent_now["spec"]["replicas"], 5, "{url}: the parent moved");
        assert_eq!(
            patched["metadata"]["resourceVersion"],
            parent_now["metadata"]["resourceVersion"]
        );

        // PUT with the current resourceVersion; then with a stale one.
        let mut put = patched.clone();
        put["spec"]["replicas"] = 0.into();
        let (code, out) = send(&server, "PUT", &url, JSON, &put).await;
        assert_eq!(code, 200, "{url}: {out}");
        assert_eq!(out["spec"], json!({}), "replicas 0 is omitted");
        let (code, out) = send(&server, "PUT", &url, JSON, &put).await;
        assert_eq!(code, 409, "{url}: {out}");
        assert_eq!(out["reason"], "Conflict");

        // A negative replica count is the Scale's own 422.
        let (code, out) = send(
            &server,
            "PATCH",
            &url,
            MERGE,
            &json!({"spec": {"replicas": -1}}),
        )
        .await;
        assert_eq!(code, 422, "{url}: {out}");
        assert_eq!(
            out["message"],
            "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(out["details"]["kind"], "Scale");
        assert_eq!(out["details"]["group"], "autoscaling");

        // A body of another kind, and a scale of an absent parent.
        let (code, out) = send(
            &server,
            "PUT",
            &url,
            JSON,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
        )
        .await;
        assert_eq!(code, 400, "{url}: {out}");
        let missing = format!("{collection}/nope/scale");
        let (code, _, out) = raw(&server, "GET", &missing, &[], "").await;
        assert_eq!(code, 404, "{missing}: {out}");
    }
}
