//! The real `kubectl` on workloads and services: `apply`, `scale` (the
//! `scale` subresource), `set image` and `rollout restart` (strategic merge
//! patches of the pod template), `expose` (a Service from a Deployment),
//! `describe` and `edit` (through `KUBE_EDITOR`). No workload controllers run (a later issue):
//! these are the API's answers only.

mod support;

use support::https::Cluster;

const MANIFEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox:1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
data:
  index.html: hello
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_set_image_rollout_restart_expose_describe() {
    let c = Cluster::start("workloads").await;
    let out = c.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;
    assert_eq!(
        out, "deployment.apps/web created\nconfigmap/web created\n",
        "{out}"
    );
    let out = c.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;
    assert_eq!(
        out,
        "deployment.apps/web unchanged\nconfigmap/web unchanged\n"
    );

    let out = c
        .ok(&["scale", "deployment", "web", "--replicas=3"], None)
        .await;
    assert_eq!(out, "deployment.apps/web scaled\n");
    let replicas = c
        .ok(
            &["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"],
            None,
        )
        .await;
    assert_eq!(replicas, "3");
    let err = c
        .fails(&[
            "scale",
            "deployment",
            "web",
            "--current-replicas=2",
            "--replicas=4",
        ])
        .await;
    assert!(err.contains("Expected replicas to be 2, was 3"), "{err}");

    let out = c
        .ok(&["set", "image", "deployment/web", "main=nginx:2"], None)
        .await;
    assert_eq!(out, "deployment.apps/web image updated\n");
    let images = c
        .ok(
            &[
                "get",
                "deploy",
                "web",
                "-o",
                "jsonpath={.spec.template.spec.containers[*].image}",
            ],
            None,
        )
        .await;
    assert_eq!(images, "nginx:2 busybox:1", "merged by name, order kept");

    let out = c.ok(&["rollout", "restart", "deployment/web"], None).await;
    assert_eq!(out, "deployment.apps/web restarted\n");
    let deploy = c.json(&["get", "deploy", "web", "-o", "json"]).await;
    assert!(
        deploy["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
            .is_string(),
        "{deploy}"
    );
    assert_eq!(deploy["metadata"]["generation"], 4, "spec changed 3 times");

    let out = c
        .ok(
            &[
                "expose",
                "deployment",
                "web",
                "--port=8080",
                "--target-port=80",
            ],
            None,
        )
        .await;
    assert_eq!(out, "service/web exposed\n");
    let svc = c.json(&["get", "svc", "web", "-o", "json"]).await;
    assert_eq!(svc["spec"]["selector"], serde_json::json!({"app": "web"}));
    assert_eq!(svc["spec"]["ports"][0]["port"], 8080);
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 80);

    let described = c.ok(&["describe", "deployment", "web"], None).await;
    assert!(described.contains("Name:"), "{described}");
    assert!(described.contains("nginx:2"), "{described}");
    assert!(described.contains("3 desired"), "{described}");
    let described = c.ok(&["describe", "configmap", "web"], None).await;
    assert!(described.contains("index.html"), "{described}");

    // `kubectl edit`: the editor (sed here) changes the object kubectl
    // fetched; kubectl sends the difference as a patch.
    let out = c
        .ok_with_env(
            &["edit", "configmap", "web"],
            &[("KUBE_EDITOR", "sed -i s/hello/edited/")],
        )
        .await;
    assert_eq!(out, "configmap/web edited\n");
    let data = c
        .ok(
            &["get", "cm", "web", "-o", "jsonpath={.data.index\\.html}"],
            None,
        )
        .await;
    assert_eq!(data, "edited");

    c.stop().await;
}
