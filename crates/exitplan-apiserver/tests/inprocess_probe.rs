//! Probe: a kube-rs client built directly on an axum router (no sockets).

#[tokio::test]
async fn kube_client_runs_on_an_axum_router() {
    let router = axum::Router::new().route(
        "/version",
        axum::routing::get(|| async {
            axum::Json(serde_json::json!({
                "major": "1", "minor": "37", "gitVersion": "v1.37.0-exitplan",
                "gitCommit": "", "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "", "platform": ""
            }))
        }),
    );
    let client = kube::Client::new(router, "default");
    let v = client.apiserver_version().await.expect("version");
    assert_eq!(v.git_version, "v1.37.0-exitplan");
}
