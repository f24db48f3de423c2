//! Label and field selectors on list, watch and deletecollection, through
//! kube-rs in-process (the parsers are `crate::discovery`'s).

mod support;

use futures_util::TryStreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use support::*;

async fn create(api: &Api<Pod>, name: &str, app: &str, node: Option<&str>) -> Pod {
    let mut p = pod(name);
    p["metadata"]["labels"] = json!({"app": app});
    if let Some(n) = node {
        p["spec"]["nodeName"] = n.into();
    }
    api.create(
        &PostParams::default(),
        &serde_json::from_value(p).expect("pod"),
    )
    .await
    .expect("create")
}

fn names(list: &[Pod]) -> Vec<String> {
    list.iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect()
}

#[tokio::test(start_paused = true)]

async fn list_and_deletecollection_select_by_labels_and_fields() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    create(&pods, "a", "web", Some("n1")).await;
    create(&pods, "b", "web", Some("n2")).await;
    create(&pods, "c", "db", Some("n1")).await;
    let got = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list");
    assert_eq!(names(&got.items), ["a", "b"]);
    let got = pods
        .list(&ListParams::default().labels("app in (web,db),app!=db"))
        .await
        .expect("list");
    assert_eq!(names(&got.items), ["a", "b"]);
    let got = pods
        .list(&ListParams::default().fields("spec.nodeName=n1"))
        .await
        .expect("list");
    assert_eq!(names(&got.items), ["a", "c"]);
    let got = pods
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .expect("list");
    assert_eq!(names(&got.items), ["b"]);
    let all: Api<Pod> = Api::all(client(&server));
    let got = all
        .list(
            &ListParams::default()
                .fields("spec.nodeName=n1")
                .labels("app=db"),
        )
        .await
        .expect("list");
    assert_eq!(names(&got.items), ["c"]);

    let e = api_error(
        pods.list(&ListParams::default().fields("spec.bogus=x"))
            .await
            .expect_err("unsupported field"),
    );
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    let e = api_error(
        pods.list(&ListParams::default().labels("app in (web"))
            .await
            .expect_err("bad syntax"),
    );
    assert_eq!(e.code, 400);

    // Bound pods go at once only with grace 0.
    pods.delete_collection(
        &DeleteParams::default().grace_period(0),
        &ListParams::default().labels("app=web"),
    )
    .await
    .expect("deletecollection");
    let left = pods.list(&ListParams::default()).await.expect("list");
    assert_eq!(names(&left.items), ["c"]);
}

#[tokio::test(start_paused = true)]

async fn watch_with_a_selector_sees_objects_enter_and_leave() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let early = create(&pods, "early", "web", None).await;
    let a = create(&pods, "a", "web", None).await;
    let rv = a.metadata.resource_version.clone().expect("rv");
    // Leaves the selection after the watch's revision but before the watch
    // opens: the replay must still report it (it matched at `rv`).
    let mut left = early.clone();
    left.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    pods.replace("early", &PostParams::default(), &left)
        .await
        .expect("early leaves");
    let stream = pods
        .watch(
            &WatchParams::default()
                .labels("app=web")
                .timeout(290)
                .disable_bookmarks(),
            &rv,
        )
        .await
        .expect("watch");
    let mut stream = Box::pin(stream);
    create(&pods, "other", "db", None).await;
    // Created after the watch's revision: comes as ADDED, then leaves.
    let late = create(&pods, "late", "web", None).await;
    let mut gone = late.clone();
    gone.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    pods.replace("late", &PostParams::default(), &gone)
        .await
        .expect("late leaves");
    // a leaves the selection, then comes back.
    let mut moved = pods.get("a").await.expect("a");
    moved.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    let moved = pods
        .replace("a", &PostParams::default(), &moved)
        .await
        .expect("leave");
    let mut back = moved.clone();
    back.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
    pods.replace("a", &PostParams::default(), &back)
        .await
        .expect("enter");
    let mut seen = Vec::new();
    for _ in 0..5 {
        let e = stream.try_next().await.expect("event").expect("open");
        seen.push(match e {
            WatchEvent::Added(p) => format!("ADDED {}", p.metadata.name.unwrap_or_default()),
            WatchEvent::Modified(p) => format!("MODIFIED {}", p.metadata.name.unwrap_or_default()),
            WatchEvent::Deleted(p) => format!("DELETED {}", p.metadata.name.unwrap_or_default()),
            other => format!("{other:?}"),
        });
    }
    assert_eq!(
        seen,
        [
            "DELETED early",
            "ADDED late",
            "DELETED late",
            "DELETED a",
            "ADDED a"
        ]
    );
}
