//! The informer and queue against the embedded API server, in virtual time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, PostParams};

use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_runtime::informer::{Change, Informer, ObjectKey};

fn pod(name: &str, node: &str) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}
    }))
    .expect("pod")
}

#[tokio::test(start_paused = true)]
async fn informer_caches_indexes_and_reports_changes() {
    let server = Server::builder()
        .store(Store::in_memory().expect("store"))
        .build()
        .await
        .expect("server");
    let client = kube::Client::new(server.router(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.create(&PostParams::default(), &pod("a", "n1"))
        .await
        .expect("create a");

    let informer = Informer::new(Api::<Pod>::all(client));
    informer.add_index("node", |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .into_iter()
            .collect()
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    informer.on_change({
        let seen = seen.clone();
        move |c: &Change<Pod>| {
            let what = match c {
                Change::Added(p) => {
                    format!("added {}", p.metadata.name.clone().unwrap_or_default())
                }
                Change::Updated { new, .. } => {
                    format!("updated {}", new.metadata.name.clone().unwrap_or_default())
                }
                Change::Deleted(p) => {
                    format!("deleted {}", p.metadata.name.clone().unwrap_or_default())
                }
            };
            seen.lock().expect("lock").push(what);
        }
    });
    tokio::spawn(informer.clone().run());
    informer.wait_synced().await;
    assert!(
        informer
            .get(&ObjectKey::new(Some("default"), "a"))
            .is_some()
    );

    pods.create(&PostParams::default(), &pod("b", "n2"))
        .await
        .expect("create b");
    pods.delete("a", &DeleteParams::default().grace_period(0))
        .await
        .expect("delete a");
    for _ in 0..100 {
        if seen.lock().expect("lock").len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A grace-0 delete of a bound pod writes the deletion timestamp first, then
    // removes the pod (kube-apiserver's graceful-deletion path).
    assert_eq!(
        *seen.lock().expect("lock"),
        ["added a", "added b", "updated a", "deleted a"]
    );
    assert_eq!(informer.by_index("node", "n2").len(), 1);
    assert!(
        informer.by_index("node", "n1").is_empty(),
        "index entries go with the object"
    );
}
