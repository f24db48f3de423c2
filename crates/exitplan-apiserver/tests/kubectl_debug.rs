//! The real `kubectl` (on PATH) adds an ephemeral container with
//! `kubectl debug`, which writes `pods/<name>/ephemeralcontainers`.

mod support;

use support::https::Cluster;

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: target
spec:
  containers:
  - name: main
    image: nginx:1
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_debug_adds_an_ephemeral_container() {
    let c = Cluster::start("debug").await;
    c.ok(&["apply", "-f", "-"], Some(POD)).await;
    let out = c
        .ok(
            &[
                "debug",
                "target",
                "--image=busybox:1",
                "--container=dbg",
                "--target=main",
                "--attach=false",
                "--profile=general",
            ],
            None,
        )
        .await;
    assert!(!out.contains("error"), "{out}");
    let pod = c.json(&["get", "pod", "target", "-o", "json"]).await;
    let ephemeral = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(ephemeral["name"], "dbg", "{pod}");
    assert_eq!(ephemeral["image"], "busybox:1");
    assert_eq!(ephemeral["targetContainerName"], "main");
    assert_eq!(pod["status"]["qosClass"], "BestEffort");
    c.stop().await;
}
