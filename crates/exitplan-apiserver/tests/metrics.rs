//! `/metrics`: the API server's requests, latencies, watches, stored objects
//! and commit latency under kube-apiserver's names, behind the token.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use tower::ServiceExt;

const TOKEN: &str = "s3cret";

async fn call(
    server: &Server,
    method: &str,
    uri: &str,
    body: &str,
    token: bool,
) -> (StatusCode, String) {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json");
    if token {
        req = req.header("authorization", format!("Bearer {TOKEN}"));
    }
    let resp = server
        .router()
        .oneshot(req.body(Body::from(body.to_owned())).expect("request"))
        .await
        .expect("response");
    let code = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .expect("body");
    (code, String::from_utf8_lossy(&bytes).into_owned())
}

/// The value of the series `name{labels}` (labels exactly as rendered).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_count_requests_watches_objects_and_commits() {
    let server = Server::builder()
        .store(Store::in_memory().expect("store"))
        .token(TOKEN)
        .build()
        .await
        .expect("server");
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let (code, _) = call(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        pod,
        true,
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, _) = call(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        pod,
        true,
    )
    .await;
    assert_eq!(code, StatusCode::CONFLICT);
    for _ in 0..2 {
        let (code, _) = call(
            &server,
            "GET",
            "/api/v1/namespaces/default/pods/p",
            "",
            true,
        )
        .await;
        assert_eq!(code, StatusCode::OK);
    }
    let (code, _) = call(&server, "GET", "/api/v1/pods", "", true).await;
    assert_eq!(code, StatusCode::OK);
    // A watch held open is counted as long-running until it ends.
    let watch = server
        .router()
        .oneshot(
            Request::get("/api/v1/namespaces/default/pods?watch=true")
                .header("authorization", format!("Bearer {TOKEN}"))
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("watch");
    assert_eq!(watch.status(), StatusCode::OK);

    let (code, text) = call(&server, "GET", "/metrics", "", true).await;
    assert_eq!(code, StatusCode::OK);
    let pods = |verb: &str, scope: &str, code: &str| {
        format!(
            "apiserver_request_total{{verb=\"{verb}\",group=\"\",version=\"v1\",resource=\"pods\",subresource=\"\",scope=\"{scope}\",component=\"apiserver\",code=\"{code}\"}}"
        )
    };
    assert_eq!(
        sample(&text, &pods("POST", "namespace", "201")),
        Some(1.0),
        "{text}"
    );
    assert_eq!(sample(&text, &pods("POST", "namespace", "409")), Some(1.0));
    assert_eq!(sample(&text, &pods("GET", "resource", "200")), Some(2.0));
    assert_eq!(sample(&text, &pods("LIST", "cluster", "200")), Some(1.0));
    assert_eq!(sample(&text, &pods("WATCH", "namespace", "200")), Some(1.0));
    assert_eq!(
        sample(
            &text,
            "apiserver_request_duration_seconds_count{verb=\"GET\",group=\"\",version=\"v1\",resource=\"pods\",subresource=\"\",scope=\"resource\",component=\"apiserver\"}"
        ),
        Some(2.0)
    );
    let watches = "apiserver_longrunning_requests{verb=\"WATCH\",group=\"\",version=\"v1\",resource=\"pods\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"}";
    assert_eq!(sample(&text, watches), Some(1.0));
    assert_eq!(
        sample(&text, "apiserver_storage_objects{resource=\"pods\"}"),
        Some(1.0)
    );
    // The four system namespaces.
    assert_eq!(
        sample(&text, "apiserver_storage_objects{resource=\"namespaces\"}"),
        Some(4.0)
    );
    // The pod's create and the namespaces' creates were committed.
    let commits = sample(&text, "exitplan_storage_commit_duration_seconds_count").expect("commits");
    assert!(commits >= 2.0, "{commits}");
    assert!(text.ends_with("# EOF\n"));

    drop(watch);
    let (_, text) = call(&server, "GET", "/metrics", "", true).await;
    assert_eq!(sample(&text, watches), Some(0.0));
}

#[tokio::test]
async fn metrics_need_the_token_and_append_other_sources() {
    let server = Server::builder()
        .store(Store::in_memory().expect("store"))
        .token(TOKEN)
        .build()
        .await
        .expect("server");
    let (code, body) = call(&server, "GET", "/metrics", "", false).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    assert!(body.contains("\"reason\":\"Unauthorized\""), "{body}");
    server.add_metrics(std::sync::Arc::new(|out: &mut String| {
        out.push_str("# TYPE controller_thing counter\ncontroller_thing_total 3\n");
    }));
    let (code, text) = call(&server, "GET", "/metrics", "", true).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(sample(&text, "controller_thing_total"), Some(3.0));
    assert_eq!(text.matches("# EOF").count(), 1);
}
