//! WATCH through kube-rs, in-process under tokio's paused clock: resume
//! from a resourceVersion, initial events, bookmarks, timeouts, shutdown.

mod support;

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams, WatchEvent, WatchParams};
use support::*;

async fn create(api: &Api<Pod>, name: &str) -> Pod {
    api.create(
        &PostParams::default(),
        &serde_json::from_value(pod(name)).expect("pod"),
    )
    .await
    .expect("create")
}

fn describe(e: &WatchEvent<Pod>) -> String {
    match e {
        WatchEvent::Added(p) => format!("ADDED {}", p.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Modified(p) => format!("MODIFIED {}", p.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Deleted(p) => format!("DELETED {}", p.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.metadata.resource_version),
        WatchEvent::Error(s) => format!("ERROR {} {}", s.code, s.message),
    }
}

#[tokio::test(start_paused = true)]
async fn watch_resumes_after_a_resource_version() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let first = create(&pods, "p0").await;
    let rv = first.metadata.resource_version.expect("rv");
    let wp = WatchParams::default().timeout(290).disable_bookmarks();
    let stream = pods.watch(&wp, &rv).await.expect("watch");
    let mut stream = Box::pin(stream);
    let p1 = create(&pods, "p1").await;
    let mut changed = p1.clone();
    changed.metadata.labels = Some([("v".to_owned(), "2".to_owned())].into());
    pods.replace("p1", &PostParams::default(), &changed)
        .await
        .expect("update");
    pods.delete("p1", &DeleteParams::default())
        .await
        .expect("delete");
    let mut seen = Vec::new();
    for _ in 0..4 {
        let e = stream.try_next().await.expect("event").expect("open");
        seen.push(describe(&e));
    }
    // Pods are deleted gracefully even with grace 0 (unscheduled): the
    // deletionTimestamp is written, then the pod removed — as upstream.
    assert_eq!(
        seen,
        ["ADDED p1", "MODIFIED p1", "MODIFIED p1", "DELETED p1"]
    );
}

#[tokio::test(start_paused = true)]
async fn watch_from_zero_starts_with_the_current_objects() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    create(&pods, "a").await;
    create(&pods, "b").await;
    let stream = pods
        .watch(
            &WatchParams::default().timeout(290).disable_bookmarks(),
            "0",
        )
        .await
        .expect("watch");
    let mut stream = Box::pin(stream);
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(describe(
            &stream.try_next().await.expect("event").expect("open"),
        ));
    }
    assert_eq!(seen, ["ADDED a", "ADDED b"]);
}

#[tokio::test(start_paused = true)]
async fn bookmarks_timeouts_and_shutdown_end_or_mark_the_stream() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let p = create(&pods, "a").await;
    let rv = p.metadata.resource_version.expect("rv");
    // Idle: tokio's paused clock jumps to the next bookmark.
    let stream = pods
        .watch(&WatchParams::default().timeout(290), &rv)
        .await
        .expect("watch");
    let mut stream = Box::pin(stream);
    let e = stream.try_next().await.expect("event").expect("open");
    assert_eq!(describe(&e), format!("BOOKMARK {rv}"));
    // With no bookmarks, the timeout ends the stream.
    let stream = pods
        .watch(&WatchParams::default().timeout(5).disable_bookmarks(), &rv)
        .await
        .expect("watch");
    let events: Vec<_> = stream.collect().await;
    assert!(events.is_empty(), "{events:?}");
    // Shutdown ends open watches.
    let stream = pods
        .watch(
            &WatchParams::default().timeout(290).disable_bookmarks(),
            &rv,
        )
        .await
        .expect("watch");
    server.shutdown();
    let events: Vec<_> = stream.collect().await;
    assert!(events.is_empty(), "{events:?}");
}

#[tokio::test(start_paused = true)]
async fn compaction_expires_old_watches_and_lists() {
    use kube::api::{ListParams, VersionMatch};
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let first = create(&pods, "a").await;
    let old_rv = first.metadata.resource_version.clone().expect("rv");
    let mut changed = first.clone();
    changed.metadata.labels = Some([("v".to_owned(), "2".to_owned())].into());
    pods.replace("a", &PostParams::default(), &changed)
        .await
        .expect("update");
    create(&pods, "b").await;

    // Before compaction: the past is readable.
    let exact = ListParams::default()
        .at(&old_rv)
        .matching(VersionMatch::Exact);
    let then = pods.list(&exact).await.expect("list at the old revision");
    assert_eq!(
        then.metadata.resource_version.as_deref(),
        Some(old_rv.as_str())
    );
    assert_eq!(then.items.len(), 1);
    assert_eq!(
        then.items[0]
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("v")),
        None,
        "the object as it was"
    );

    let compacted = server
        .store()
        .compact(server.store().revision())
        .await
        .expect("compact");
    let e = api_error(pods.list(&exact).await.expect_err("410"));
    assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
    assert_eq!(
        e.message,
        "The resourceVersion for the provided list is too old."
    );

    let stream = pods
        .watch(
            &WatchParams::default().timeout(290).disable_bookmarks(),
            &old_rv,
        )
        .await
        .expect("watch");
    let mut stream = Box::pin(stream);
    match stream.try_next().await.expect("event").expect("open") {
        WatchEvent::Error(s) => {
            assert_eq!((s.code, s.reason.as_str()), (410, "Expired"));
            assert_eq!(
                s.message,
                format!("too old resource version: {old_rv} ({compacted})")
            );
        }
        other => panic!("expected a 410 ERROR event, got {}", describe(&other)),
    }
    let future = (server.store().revision() + 100).to_string();
    let e = api_error(
        pods.list(&ListParams::default().at(&future))
            .await
            .expect_err("504"),
    );
    assert_eq!((e.code, e.reason.as_str()), (504, "Timeout"));
}

#[tokio::test(start_paused = true)]
async fn continue_pages_show_the_first_page_revision() {
    use kube::api::ListParams;
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    for name in ["p0", "p1", "p2", "p3"] {
        create(&pods, name).await;
    }
    let first = pods
        .list(&ListParams::default().limit(2))
        .await
        .expect("page 1");
    let token = first.metadata.continue_.clone().expect("continue");
    // Changes after the first page do not show on the later ones.
    create(&pods, "p4").await;
    let mut p3 = pods.get("p3").await.expect("p3");
    p3.metadata.labels = Some([("late".to_owned(), "yes".to_owned())].into());
    pods.replace("p3", &PostParams::default(), &p3)
        .await
        .expect("update");
    let second = pods
        .list(&ListParams::default().limit(10).continue_token(&token))
        .await
        .expect("page 2");
    let names: Vec<_> = second
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(names, ["p2", "p3"]);
    assert_eq!(
        second.metadata.resource_version,
        first.metadata.resource_version
    );
    assert!(
        second.items[1]
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("late"))
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn bookmarks_advance_past_changes_elsewhere() {
    use k8s_openapi::api::coordination::v1::Lease;
    let server = server().await;
    let client = client(&server);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let p = create(&pods, "a").await;
    let rv: u64 = p
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .expect("rv");
    let stream = pods
        .watch(&WatchParams::default().timeout(290), &rv.to_string())
        .await
        .expect("watch");
    let mut stream = Box::pin(stream);
    let leases: Api<Lease> = Api::default_namespaced(client);
    let lease = leases
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "l"}})).expect("lease"),
        )
        .await
        .expect("lease");
    let lease_rv = lease.metadata.resource_version.expect("rv");
    match stream.try_next().await.expect("event").expect("open") {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, lease_rv),
        other => panic!("expected a BOOKMARK, got {}", describe(&other)),
    }
}

/// Runs a raw watch of the default namespace's pods with `query` to its end;
/// returns how long it lasted (tokio's paused clock) and its lines.
async fn raw_watch(
    server: &exitplan_apiserver::server::Server,
    query: &str,
) -> (std::time::Duration, Vec<String>) {
    use tower::ServiceExt;
    let start = tokio::time::Instant::now();
    let request =
        axum::http::Request::get(format!("/api/v1/namespaces/default/pods?watch=1&{query}"))
            .body(axum::body::Body::empty())
            .expect("request");
    let response = server.router().oneshot(request).await.expect("response");
    assert_eq!(response.status(), 200);
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    let lines = String::from_utf8_lossy(&body)
        .lines()
        .map(str::to_owned)
        .collect();
    (start.elapsed(), lines)
}

#[test]
fn watch_timeouts_are_kube_apiservers() {
    use exitplan_apiserver::rest::watch::watch_timeout;
    use std::time::Duration;
    assert_eq!(watch_timeout(Some(5), 0), Duration::from_secs(5));
    assert_eq!(watch_timeout(Some(-1), 0), Duration::ZERO);
    assert_eq!(watch_timeout(Some(i64::MIN), 7), Duration::ZERO);
    // Unset and 0 alike: --min-request-timeout (1800 s) times [1, 2).
    for seconds in [None, Some(0)] {
        assert_eq!(watch_timeout(seconds, 0), Duration::from_secs(1800));
        assert_eq!(watch_timeout(seconds, 1 << 63), Duration::from_secs(2700));
        let longest = watch_timeout(seconds, u64::MAX);
        assert!(longest < Duration::from_secs(3600) && longest > Duration::from_secs(3599));
    }
}

#[tokio::test(start_paused = true)]
async fn watch_timeout_seconds_zero_is_random_and_negative_ends_at_once() {
    use std::time::Duration;
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    create(&pods, "a").await;
    let (lasted, lines) = raw_watch(&server, "timeoutSeconds=5&resourceVersion=0").await;
    assert_eq!((lasted, lines.len()), (Duration::from_secs(5), 1));
    for query in ["timeoutSeconds=0", "resourceVersion=0"] {
        let (lasted, lines) = raw_watch(&server, query).await;
        assert!(
            lasted >= Duration::from_secs(1800) && lasted < Duration::from_secs(3600),
            "{query}: {lasted:?}"
        );
        assert_eq!(lines.len(), 1, "{query}: the initial ADDED");
    }
    // Negative: over at once, before even the initial events.
    for query in ["timeoutSeconds=-1", "timeoutSeconds=-1&resourceVersion=0"] {
        let (lasted, lines) = raw_watch(&server, query).await;
        assert_eq!(
            (lasted, lines),
            (Duration::ZERO, Vec::<String>::new()),
            "{query}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_client_that_never_reads_is_closed_and_a_reader_is_not() {
    use kube::api::{Patch, PatchParams};
    use tower::ServiceExt;
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let rv = create(&pods, "a")
        .await
        .metadata
        .resource_version
        .expect("rv");
    let request = axum::http::Request::get(format!(
        "/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}&timeoutSeconds=290"
    ))
    .body(axum::body::Body::empty())
    .expect("request");
    // Its body is never read while the store writes.
    let idle = server.router().oneshot(request).await.expect("response");
    let reader = pods
        .watch(
            &WatchParams::default().timeout(290).disable_bookmarks(),
            &rv,
        )
        .await
        .expect("watch");
    let mut reader = Box::pin(reader);
    // 200 updates of 100 KB: over a watcher's 16 MiB.
    let blob = "x".repeat(100_000);
    for v in 0..200 {
        let patch =
            serde_json::json!({"metadata": {"annotations": {"blob": blob, "v": v.to_string()}}});
        pods.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch");
        let e = reader.try_next().await.expect("event").expect("open");
        assert_eq!(describe(&e), "MODIFIED a");
    }
    let start = tokio::time::Instant::now();
    let body = axum::body::to_bytes(idle.into_body(), usize::MAX)
        .await
        .expect("body");
    assert_eq!(
        (start.elapsed(), body.len()),
        (std::time::Duration::ZERO, 0),
        "the idle watch was closed, its events dropped"
    );
}
