//! The operator's binary against a listening test environment, as it runs
//! against a real cluster: it reads the kubeconfig, applies its CRD over
//! HTTPS and reconciles Widgets.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use exitplan_testing::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use widget_operator::{Widget, WidgetSpec};

/// The binary, stopped (killed by its own handle) when the test ends.
struct Operator(Child);

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_installs_its_crd_and_reconciles_over_the_kubeconfig() {
    let env = TestEnv::builder().listen().start().await.expect("start");
    let kubeconfig = env.kubeconfig_path().expect("kubeconfig").to_owned();
    let _operator = Operator(
        Command::new(env!("CARGO_BIN_EXE_widget-operator"))
            .env("KUBECONFIG", &kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(Stdio::null())
            .spawn()
            .expect("the operator starts"),
    );
    let widgets: Api<Widget> = Api::default_namespaced(env.client());
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    let hello = Widget::new(
        "hello",
        WidgetSpec {
            message: "from the binary".into(),
            replicas: 2,
        },
    );
    // Once the binary has applied its CRD, Widgets can be created.
    let mut tries = 0;
    while let Err(e) = widgets.create(&PostParams::default(), &hello).await {
        tries += 1;
        assert!(tries < 300, "the CRD never became usable: {e}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut tries = 0;
    let cm = loop {
        if let Some(cm) = maps.get_opt("hello").await.expect("get") {
            break cm;
        }
        tries += 1;
        assert!(tries < 300, "no ConfigMap from the binary");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        cm.data.and_then(|d| d.get("message").cloned()).as_deref(),
        Some("from the binary")
    );

    // kubectl finds the custom resource through discovery, by its short name.
    let out = tokio::task::spawn_blocking(move || {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["get", "wd", "-o", "name"])
            .output()
            .expect("kubectl runs")
    })
    .await
    .expect("kubectl task");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "widget.example.exitplan.io/hello\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
