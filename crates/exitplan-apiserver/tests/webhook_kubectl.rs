//! Admission webhooks seen through the real kubectl: a denial's message
//! and code, and a webhook's warnings.

mod support;

use serde_json::json;
use support::https::Cluster;
use support::webhooks::{configure, hooks, webhook};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_denials_and_warnings_as_kube_apiserver_sends_them() {
    let c = Cluster::start("webhook").await;
    let h = hooks().await;
    configure(
        &c.server,
        false,
        "deny",
        vec![webhook(
            "deny.example.com",
            &h.url("deny403"),
            &h.ca.ca_pem,
            json!({
                "objectSelector": {"matchLabels": {"deny": "yes"}},
            }),
        )],
    )
    .await;
    configure(
        &c.server,
        false,
        "warn",
        vec![webhook(
            "warn.example.com",
            &h.url("allow"),
            &h.ca.ca_pem,
            json!({}),
        )],
    )
    .await;
    let denied = c.file(
        "denied.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: denied\n  labels:\n    deny: \"yes\"\n",
    );
    let stderr = c.fails(&["create", "-f", &denied]).await;
    assert!(
        stderr.contains(&format!(
            "Error from server (Forbidden): error when creating \"{denied}\": admission webhook \"deny.example.com\" denied the request: no way"
        )),
        "{stderr}"
    );
    let out = c
        .kubectl(
            &["create", "configmap", "allowed", "--from-literal=k=v"],
            None,
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Warning: looked at it\n"
    );
    c.stop().await;
}
