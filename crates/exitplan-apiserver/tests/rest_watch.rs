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
