//! CRUD on every served resource through kube-rs, in-process: create, get,
//! list, replace, delete; system namespaces; metadata the server assigns.

mod support;

use exitplan_apiserver::registry::RESOURCES;
use kube::api::{DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::{Value, json};
use support::*;

/// A pod template whose labels match the `app: web` selectors below.
fn template() -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]}
    })
}

/// A minimal valid object of every served kind.
fn sample(group: &str, kind: &str) -> Value {
    let name = format!("crud-{}", kind.to_lowercase());
    let meta = json!({"name": name});
    match (group, kind) {
        ("", "Namespace") | ("", "Node") => json!({"metadata": meta}),
        ("", "Pod") => pod(&name),
        ("", "Event") => json!({
            "metadata": meta,
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Test", "message": "m", "type": "Normal"
        }),
        ("events.k8s.io", "Event") => json!({
            "metadata": meta, "eventTime": "2026-11-29T10:00:00.000000Z",
            "reportingController": "test", "reportingInstance": "t1",
            "action": "Test", "reason": "Test", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}
        }),
        ("policy", "PodDisruptionBudget") => json!({
            "metadata": meta,
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
        }),
        ("batch", "Job") => json!({
            "metadata": meta,
            "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox"}]
            }}}
        }),
        ("coordination.k8s.io", "Lease") => {
            json!({"metadata": meta, "spec": {"holderIdentity": "me"}})
        }
        ("lifecycle.k8s.io", "EvictionRequest") => json!({
            "metadata": meta,
            "spec": {
                "requester": "drain.example.com/node-maintenance",
                "intent": "Eviction",
                "target": {"pod": {"name": "web-0", "uid": "6b1f3f4e-2c4d-4b8a-9e4f-1d2c3b4a5f60"}}
            }
        }),
        ("lifecycle.k8s.io", "Eviction") => json!({
            "metadata": meta,
            "spec": {"target": {"pod": {"name": "web-0", "uid": "6b1f3f4e-2c4d-4b8a-9e4f-1d2c3b4a5f60"}}}
        }),
        ("", "ConfigMap") => json!({"metadata": meta, "data": {"k": "v"}}),
        ("", "Secret") => json!({"metadata": meta, "stringData": {"k": "v"}}),
        ("", "Service") => json!({
            "metadata": meta,
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}
        }),
        ("", "ServiceAccount") | ("", "Endpoints") => json!({"metadata": meta}),
        ("", "PodTemplate") => json!({"metadata": meta, "template": template()}),
        ("", "PersistentVolumeClaim") => json!({
            "metadata": meta,
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        }),
        ("", "PersistentVolume") => json!({
            "metadata": meta,
            "spec": {
                "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/data"}
            }
        }),
        ("", "ResourceQuota") => json!({"metadata": meta, "spec": {"hard": {"pods": "10"}}}),
        ("", "LimitRange") => json!({
            "metadata": meta,
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}
        }),
        ("", "ReplicationController") => json!({
            "metadata": meta,
            "spec": {"replicas": 1, "selector": {"app": "web"}, "template": template()}
        }),
        ("apps", "Deployment") | ("apps", "ReplicaSet") | ("apps", "DaemonSet") => json!({
            "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}
        }),
        ("apps", "StatefulSet") => json!({
            "metadata": meta,
            "spec": {
                "serviceName": "web",
                "selector": {"matchLabels": {"app": "web"}}, "template": template()
            }
        }),
        ("apps", "ControllerRevision") => {
            json!({"metadata": meta, "data": {}, "revision": 1})
        }
        ("discovery.k8s.io", "EndpointSlice") => json!({
            "metadata": meta, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}]
        }),
        ("networking.k8s.io", "Ingress") => json!({
            "metadata": meta,
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
        }),
        ("networking.k8s.io", "IngressClass") => {
            json!({"metadata": meta, "spec": {"controller": "example.com/ingress"}})
        }
        ("networking.k8s.io", "NetworkPolicy") => {
            json!({"metadata": meta, "spec": {"podSelector": {}}})
        }
        ("batch", "CronJob") => json!({
            "metadata": meta,
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure",
                "containers": [{"name": "main", "image": "busybox"}]
            }}}}}
        }),
        ("scheduling.k8s.io", "PriorityClass") => json!({"metadata": meta, "value": 1000}),
        ("rbac.authorization.k8s.io", "Role") | ("rbac.authorization.k8s.io", "ClusterRole") => {
            json!({"metadata": meta, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]})
        }
        ("rbac.authorization.k8s.io", "RoleBinding")
        | ("rbac.authorization.k8s.io", "ClusterRoleBinding") => json!({
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]
        }),
        ("storage.k8s.io", "StorageClass") => {
            json!({"metadata": meta, "provisioner": "example.com/disk"})
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => json!({
            "metadata": {"name": "things.example.com"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "schema": {"openAPIV3Schema": {"type": "object"}}}]
            }
        }),
        other => panic!("no sample for {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn crud_on_every_resource() {
    let server = server().await;
    let client = client(&server);
    for def in RESOURCES {
        let what = format!("{}/{}", def.api_version(), def.plural);
        let api = dynamic(&client, def);
        let mut body = sample(def.group, def.kind);
        body["apiVersion"] = def.api_version().into();
        body["kind"] = def.kind.into();
        let obj: DynamicObject = serde_json::from_value(body).expect("object");
        let created = api
            .create(&PostParams::default(), &obj)
            .await
            .unwrap_or_else(|e| panic!("{what}: create: {e}"));
        let name = created.metadata.name.clone().expect("name");
        let uid = created.metadata.uid.clone().expect("uid");
        assert_eq!(uid.len(), 36, "{what}: uid is a UUID");
        assert_eq!(
            created
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string()),
            Some(START.to_owned()),
            "{what}: creationTimestamp from the clock"
        );
        let rv: u64 = created
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .expect("numeric resourceVersion");
        let got = api
            .get(&name)
            .await
            .unwrap_or_else(|e| panic!("{what}: get: {e}"));
        assert_eq!(got.metadata.uid.as_deref(), Some(uid.as_str()), "{what}");
        let listed = api
            .list(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("{what}: list: {e}"));
        assert!(
            listed
                .items
                .iter()
                .any(|o| o.metadata.name.as_deref() == Some(&name)),
            "{what}: listed"
        );
        let mut changed = got.clone();
        changed
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert("touched".into(), "yes".into());
        let replaced = api
            .replace(&name, &PostParams::default(), &changed)
            .await
            .unwrap_or_else(|e| panic!("{what}: replace: {e}"));
        let rv2: u64 = replaced
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .expect("rv");
        assert!(rv2 > rv, "{what}: a write moves the resourceVersion");
        assert_eq!(
            replaced
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("touched"))
                .map(String::as_str),
            Some("yes")
        );
        api.delete(&name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("{what}: delete: {e}"));
        let e = api_error(api.get(&name).await.expect_err("gone"));
        assert_eq!(e.code, 404, "{what}");
        assert_eq!(e.reason, "NotFound");
        let resource = if def.group.is_empty() {
            def.plural.to_owned()
        } else {
            format!("{}.{}", def.plural, def.group)
        };
        assert_eq!(
            e.message,
            format!("{resource} \"{name}\" not found"),
            "{what}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn system_namespaces_exist_and_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("exitplan-rest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("db.redb");
    let _ = std::fs::remove_file(&path);
    let uid = {
        let server = exitplan_apiserver::server::Server::builder()
            .store(exitplan_apiserver::storage::Store::open(&path).expect("store"))
            .build()
            .await
            .expect("server");
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client(&server));
        let names: Vec<String> = api
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
        assert_eq!(
            names,
            ["default", "kube-node-lease", "kube-public", "kube-system"]
        );
        let ns = api.get("default").await.expect("default");
        assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
        ns.metadata.uid.expect("uid")
    };
    let server = exitplan_apiserver::server::Server::builder()
        .store(reopen(&path).await)
        .build()
        .await
        .expect("server");
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client(&server));
    let ns = api.get("default").await.expect("default");
    assert_eq!(ns.metadata.uid, Some(uid), "bootstrap does not recreate");
    let _ = std::fs::remove_dir_all(&dir);
}
