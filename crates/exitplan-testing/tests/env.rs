//! The test environment itself: it starts, its client works, two run side
//! by side independently, it follows tokio's paused clock, the controllers
//! and simulated nodes run pods, and `listen()` serves kubectl.

use std::time::Duration;

use exitplan_testing::{Component, TestEnv};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"key": "value"}
    }))
    .expect("config map")
}

/// Polls `check` every 100 ms (tokio time) for at most `limit`.
async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = tokio::time::Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < limit, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A `TestEnv` can be shared across tasks (held in a `static`, an `Arc`).
#[test]
fn a_test_env_is_send_and_sync() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<TestEnv>();
}

#[tokio::test]
async fn starts_with_the_system_namespaces_and_the_client_works() {
    let env = TestEnv::start().await.expect("start");
    let namespaces: Api<Namespace> = Api::all(env.client());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .expect("list namespaces")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    maps.create(&PostParams::default(), &config_map("settings"))
        .await
        .expect("create");
    let got = maps.get("settings").await.expect("get");
    assert_eq!(
        got.data.and_then(|d| d.get("key").cloned()).as_deref(),
        Some("value")
    );
    // Without listen() there is no port and no kubeconfig.
    assert_eq!(env.url(), None);
    assert_eq!(env.kubeconfig_path(), None);
    env.shutdown().await;
}

#[tokio::test]
async fn two_environments_in_one_process_are_independent() {
    let (a, b) = tokio::join!(TestEnv::start(), TestEnv::start());
    let (a, b) = (a.expect("a"), b.expect("b"));
    let in_a: Api<ConfigMap> = Api::default_namespaced(a.client());
    let in_b: Api<ConfigMap> = Api::default_namespaced(b.client());
    in_a.create(&PostParams::default(), &config_map("only-in-a"))
        .await
        .expect("create in a");
    in_b.create(&PostParams::default(), &config_map("only-in-b"))
        .await
        .expect("create in b");
    let names = |list: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        list.items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    };
    let lp = ListParams::default();
    assert_eq!(names(in_a.list(&lp).await.expect("list a")), ["only-in-a"]);
    assert_eq!(names(in_b.list(&lp).await.expect("list b")), ["only-in-b"]);
    // Stopping one leaves the other serving.
    a.shutdown().await;
    assert!(in_b.get("only-in-b").await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn the_server_clock_follows_paused_tokio_time() {
    let start: Timestamp = "2026-11-29T10:00:00Z".parse().expect("time");
    let env = TestEnv::builder()
        .start_time(start)
        .start()
        .await
        .expect("start");
    assert_eq!(env.now(), start);
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    let first = maps
        .create(&PostParams::default(), &config_map("first"))
        .await
        .expect("create");
    // An hour of virtual time passes at once.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let second = maps
        .create(&PostParams::default(), &config_map("second"))
        .await
        .expect("create");
    let created = |c: &ConfigMap| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
    assert_eq!(created(&first), Some(start));
    assert_eq!(
        created(&second),
        Some("2026-11-29T11:00:00Z".parse().expect("time"))
    );
    assert_eq!(env.now(), "2026-11-29T11:00:00Z".parse().expect("time"));
}

#[tokio::test(start_paused = true)]
async fn controllers_and_simulated_nodes_run_pods() {
    let env = TestEnv::builder()
        .controllers(true)
        .nodes(["node-a"])
        .start()
        .await
        .expect("start");
    let nodes: Api<Node> = Api::all(env.client());
    eventually("node-a registered", Duration::from_secs(30), || async {
        nodes.get_opt("node-a").await.ok().flatten()
    })
    .await;
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create pod");
    let running = eventually("web Running", Duration::from_secs(120), || async {
        pods.get("web")
            .await
            .ok()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
    })
    .await;
    assert_eq!(
        running.spec.and_then(|s| s.node_name).as_deref(),
        Some("node-a")
    );
    env.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn without_controllers_pods_stay_pending() {
    // Only the scheduler: pods are bound, but no node runs them.
    let env = TestEnv::builder()
        .components([Component::Scheduler])
        .start()
        .await
        .expect("start");
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create pod");
    tokio::time::sleep(Duration::from_secs(60)).await;
    let got = pods.get("web").await.expect("get");
    assert_eq!(got.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
}

/// Runs kubectl with `args` (blocking, off the runtime's threads).
async fn kubectl(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new("kubectl")
            .args(&args)
            .output()
            .expect("kubectl runs")
    })
    .await
    .expect("kubectl task")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_serves_a_port_whose_kubeconfig_works_with_kubectl() {
    let env = TestEnv::builder().listen().start().await.expect("start");
    let url = env.url().expect("a url").to_owned();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let kubeconfig = env.kubeconfig_path().expect("a kubeconfig").to_owned();
    let config = std::fs::read_to_string(&kubeconfig).expect("read kubeconfig");
    assert!(config.contains(&format!("server: {url}\n")), "{config}");
    // The in-process client carries the listener's token.
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    maps.create(&PostParams::default(), &config_map("from-rust"))
        .await
        .expect("create in-process");

    let out = kubectl(vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "get".into(),
        "ns".into(),
        "-o".into(),
        "name".into(),
    ])
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n"
    );
    let out = kubectl(vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "get".into(),
        "configmap".into(),
        "from-rust".into(),
        "-o".into(),
        "jsonpath={.data.key}".into(),
    ])
    .await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "value");

    // With another token, the port refuses.
    let out = kubectl(vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--token".into(),
        "not-the-token".into(),
        "get".into(),
        "ns".into(),
    ])
    .await;
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: You must be logged in to the server (Unauthorized)"
    );

    let addr = env.addr().expect("addr");
    env.shutdown().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the port is closed after shutdown"
    );
    assert!(!kubeconfig.exists(), "the kubeconfig is removed");
}
