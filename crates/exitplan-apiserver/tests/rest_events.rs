//! core/v1 and `events.k8s.io/v1` Events are two views of one stored
//! (core/v1) object, as upstream: whatever view writes an Event, each view
//! reads it in its own shape (`regarding`↔`involvedObject`, `note`↔`message`,
//! `reportingController`↔`reportingComponent`, `deprecated*`↔…), through
//! get, list, watch, Table, patches and field selectors.

mod support;

use futures_util::TryStreamExt;
use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::api::{
    DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::{Value, json};
use support::*;

/// What the Job controller posts (events.k8s.io/v1, as client-go's new
/// events recorder writes).
fn job_event(name: &str) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-11-29T10:00:00.000000Z",
        "regarding": {"apiVersion": "batch/v1", "kind": "Job", "name": "j2",
                      "namespace": "default", "uid": "0f0e0d0c-0000-4000-8000-000000000002",
                      "resourceVersion": "7"},
        "related": {"apiVersion": "v1", "kind": "Pod", "name": "j2-abcde", "namespace": "default"},
        "note": "Created pod: j2-abcde",
        "reason": "SuccessfulCreate",
        "type": "Normal",
        "action": "Create",
        "reportingController": "job-controller",
        "reportingInstance": "job-controller-node-1",
        "series": {"count": 2, "lastObservedTime": "2026-11-29T10:00:05.000000Z"}
    })
}

/// What kubelet-style core/v1 writers post.
fn core_event(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "namespace": "default",
                           "uid": "0f0e0d0c-0000-4000-8000-000000000009", "fieldPath": "spec.containers{c}"},
        "message": "Pulling image \"busybox\"",
        "reason": "Pulling",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-11-29T10:00:00Z",
        "lastTimestamp": "2026-11-29T10:00:03Z",
        "count": 3
    })
}

fn apis(server: &exitplan_apiserver::server::Server) -> (Api<Event>, Api<CoreEvent>) {
    let c = client(server);
    (
        Api::default_namespaced(c.clone()),
        Api::default_namespaced(c),
    )
}

const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const CORE_URL: &str = "/api/v1/namespaces/default/events";

/// Keys of a view that the other view does not have.
const EVENTS_ONLY: &[&str] = &[
    "regarding",
    "note",
    "reportingController",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
];
const CORE_ONLY: &[&str] = &[
    "involvedObject",
    "message",
    "reportingComponent",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
];

/// Creates `job_event("j2.1")` through events.k8s.io/v1.
async fn create_job_event(events: &Api<Event>) -> Event {
    let event = serde_json::from_value(job_event("j2.1")).expect("event");
    events
        .create(&PostParams::default(), &event)
        .await
        .expect("create")
}

/// Creates `core_event("web-0.1")` through core/v1.
async fn create_core_event(core: &Api<CoreEvent>) -> CoreEvent {
    let event = serde_json::from_value(core_event("web-0.1")).expect("event");
    core.create(&PostParams::default(), &event)
        .await
        .expect("create")
}

fn assert_shape(object: &Value, api_version: &str) {
    assert_eq!(object["apiVersion"], api_version, "{object}");
    assert_eq!(object["kind"], "Event", "{object}");
    let foreign = if api_version == "v1" {
        EVENTS_ONLY
    } else {
        CORE_ONLY
    };
    for k in foreign {
        assert!(
            object.get(*k).is_none(),
            "{k} in the {api_version} view: {object}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_events_k8s_io_event_reads_back_through_both_views() {
    let server = server().await;
    let (events, core) = apis(&server);
    let created = create_job_event(&events).await;
    assert_eq!(created.note.as_deref(), Some("Created pod: j2-abcde"));
    let got = events.get("j2.1").await.expect("get");
    assert_eq!(
        got, created,
        "the events.k8s.io view reads back what it wrote"
    );

    let c = core.get("j2.1").await.expect("core get");
    assert_eq!(
        c.metadata, created.metadata,
        "one object: same uid, resourceVersion"
    );
    assert_eq!(Some(&c.involved_object), created.regarding.as_ref());
    assert_eq!(c.involved_object.kind.as_deref(), Some("Job"));
    assert_eq!(c.involved_object.name.as_deref(), Some("j2"));
    assert_eq!(c.message.as_deref(), Some("Created pod: j2-abcde"));
    assert_eq!(c.reporting_component.as_deref(), Some("job-controller"));
    assert_eq!(
        c.reporting_instance.as_deref(),
        Some("job-controller-node-1")
    );
    assert_eq!(c.reason.as_deref(), Some("SuccessfulCreate"));
    assert_eq!(c.type_.as_deref(), Some("Normal"));
    assert_eq!(c.action.as_deref(), Some("Create"));
    assert_eq!(c.related, created.related);
    assert_eq!(c.event_time, created.event_time);
    let series = c.series.expect("series");
    assert_eq!(series.count, Some(2));
    assert_eq!(
        series.last_observed_time.map(|t| t.0.to_string()),
        Some("2026-11-29T10:00:05Z".to_owned())
    );

    // The raw answers carry only their own view's fields.
    let (code, _, raw_core) = raw(&server, "GET", &format!("{CORE_URL}/j2.1"), &[], "").await;
    assert_eq!(code, 200);
    assert_shape(&raw_core, "v1");
    assert_eq!(raw_core["message"], "Created pod: j2-abcde");
    let (code, _, raw_events) = raw(&server, "GET", &format!("{EVENTS_URL}/j2.1"), &[], "").await;
    assert_eq!(code, 200);
    assert_shape(&raw_events, "events.k8s.io/v1");
    assert_eq!(raw_events["note"], "Created pod: j2-abcde");
}

#[tokio::test(start_paused = true)]
async fn a_core_event_reads_back_through_both_views() {
    let server = server().await;
    let (events, core) = apis(&server);
    let created = create_core_event(&core).await;
    assert_eq!(core.get("web-0.1").await.expect("get"), created);
    let e = events.get("web-0.1").await.expect("events get");
    assert_eq!(e.metadata, created.metadata);
    assert_eq!(e.regarding.as_ref(), Some(&created.involved_object));
    assert_eq!(e.note.as_deref(), Some("Pulling image \"busybox\""));
    assert_eq!(e.deprecated_source, created.source);
    assert_eq!(e.deprecated_count, Some(3));
    assert_eq!(e.deprecated_first_timestamp, created.first_timestamp);
    assert_eq!(e.deprecated_last_timestamp, created.last_timestamp);
    assert_eq!(e.reason.as_deref(), Some("Pulling"));
    let (code, _, raw_events) =
        raw(&server, "GET", &format!("{EVENTS_URL}/web-0.1"), &[], "").await;
    assert_eq!(code, 200);
    assert_shape(&raw_events, "events.k8s.io/v1");
    assert_eq!(raw_events["deprecatedSource"]["component"], "kubelet");
}

#[tokio::test(start_paused = true)]
async fn lists_and_tables_of_both_views() {
    let server = server().await;
    let (events, core) = apis(&server);
    create_job_event(&events).await;
    create_core_event(&core).await;

    let messages: Vec<_> = core
        .list(&ListParams::default())
        .await
        .expect("core list")
        .items
        .into_iter()
        .map(|e| {
            (
                e.involved_object.name.unwrap_or_default(),
                e.message.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("j2".to_owned(), "Created pod: j2-abcde".to_owned()),
            ("web-0".to_owned(), "Pulling image \"busybox\"".to_owned())
        ]
    );
    let notes: Vec<_> = events
        .list(&ListParams::default())
        .await
        .expect("events list")
        .items
        .into_iter()
        .map(|e| {
            (
                e.regarding.and_then(|r| r.name).unwrap_or_default(),
                e.note.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(notes, messages);

    for (url, api_version) in [(CORE_URL, "v1"), (EVENTS_URL, "events.k8s.io/v1")] {
        let (code, _, list) = raw(&server, "GET", url, &[], "").await;
        assert_eq!(code, 200);
        assert_eq!(list["apiVersion"], api_version);
        let items = list["items"].as_array().expect("items");
        assert_eq!(items.len(), 2);
        for item in items {
            assert_shape(item, api_version);
        }
        // `kubectl get events`: OBJECT and MESSAGE (or NOTE) are filled.
        let table_accept = [("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")];
        let (code, _, table) = raw(&server, "GET", url, &table_accept, "").await;
        assert_eq!(code, 200, "{table}");
        let rows = table["rows"].as_array().expect("rows");
        let cells: Vec<String> = rows[0]["cells"]
            .as_array()
            .expect("cells")
            .iter()
            .map(|c| {
                c.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| c.to_string())
            })
            .collect();
        assert!(cells.contains(&"job/j2".to_owned()), "{url}: {cells:?}");
        assert!(
            cells.contains(&"Created pod: j2-abcde".to_owned()),
            "{url}: {cells:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn watches_of_both_views_see_writes_of_either() {
    let server = server().await;
    let (events, core) = apis(&server);
    let before = events
        .create(
            &PostParams::default(),
            &serde_json::from_value(job_event("j2.0")).expect("event"),
        )
        .await
        .expect("create");
    let wp = WatchParams::default().timeout(290).disable_bookmarks();
    // From "0": the current object as a synthetic ADDED, then changes.
    let mut core_watch = Box::pin(core.watch(&wp, "0").await.expect("core watch"));
    let mut events_watch = Box::pin(events.watch(&wp, "0").await.expect("events watch"));
    create_job_event(&events).await;
    create_core_event(&core).await;
    events
        .delete("j2.1", &DeleteParams::default())
        .await
        .expect("delete");

    let mut seen = Vec::new();
    for _ in 0..4 {
        match core_watch.try_next().await.expect("event").expect("open") {
            WatchEvent::Added(e) => seen.push(format!("ADDED {:?}", e.message)),
            WatchEvent::Deleted(e) => seen.push(format!("DELETED {:?}", e.message)),
            other => seen.push(format!("{other:?}")),
        }
    }
    assert_eq!(
        seen,
        [
            "ADDED Some(\"Created pod: j2-abcde\")",
            "ADDED Some(\"Created pod: j2-abcde\")",
            "ADDED Some(\"Pulling image \\\"busybox\\\"\")",
            "DELETED Some(\"Created pod: j2-abcde\")",
        ]
    );
    let mut seen = Vec::new();
    for _ in 0..4 {
        match events_watch.try_next().await.expect("event").expect("open") {
            WatchEvent::Added(e) => seen.push(format!("ADDED {:?}", e.note)),
            WatchEvent::Deleted(e) => seen.push(format!("DELETED {:?}", e.note)),
            other => seen.push(format!("{other:?}")),
        }
    }
    assert_eq!(
        seen,
        [
            "ADDED Some(\"Created pod: j2-abcde\")",
            "ADDED Some(\"Created pod: j2-abcde\")",
            "ADDED Some(\"Pulling image \\\"busybox\\\"\")",
            "DELETED Some(\"Created pod: j2-abcde\")",
        ]
    );

    // A watch resumed after a resourceVersion (events from the store's
    // history) converts too.
    let rv = before.metadata.resource_version.expect("rv");
    let mut resumed = Box::pin(core.watch(&wp, &rv).await.expect("resumed"));
    match resumed.try_next().await.expect("event").expect("open") {
        WatchEvent::Added(e) => {
            assert_eq!(e.message.as_deref(), Some("Created pod: j2-abcde"));
            assert_eq!(e.involved_object.name.as_deref(), Some("j2"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn kubectl_describe_field_selector_finds_events_k8s_io_events() {
    let server = server().await;
    let (events, core) = apis(&server);
    create_job_event(&events).await;
    create_core_event(&core).await;
    let names = |list: kube::core::ObjectList<CoreEvent>| -> Vec<String> {
        list.items
            .into_iter()
            .map(|e| e.metadata.name.unwrap_or_default())
            .collect()
    };
    // What `kubectl describe job j2` sends.
    let describe = "involvedObject.name=j2,involvedObject.namespace=default,\
                    involvedObject.kind=Job,involvedObject.uid=0f0e0d0c-0000-4000-8000-000000000002";
    for selector in [
        describe,
        "involvedObject.kind=Job,involvedObject.name=j2",
        "reportingComponent=job-controller",
        "source=job-controller",
        "reason=SuccessfulCreate,type=Normal",
    ] {
        let got = core
            .list(&ListParams::default().fields(selector))
            .await
            .expect("core list");
        assert_eq!(names(got), ["j2.1"], "{selector}");
    }
    assert_eq!(
        names(
            core.list(&ListParams::default().fields("source=kubelet"))
                .await
                .expect("list")
        ),
        ["web-0.1"]
    );
    // The events.k8s.io labels read the same stored attributes.
    for (selector, want) in [
        ("regarding.name=web-0,regarding.kind=Pod", "web-0.1"),
        ("reportingController=job-controller", "j2.1"),
        ("regarding.fieldPath=spec.containers{c}", "web-0.1"),
    ] {
        let got: Vec<String> = events
            .list(&ListParams::default().fields(selector))
            .await
            .expect("events list")
            .items
            .into_iter()
            .map(|e| e.metadata.name.unwrap_or_default())
            .collect();
        assert_eq!(got, [want], "{selector}");
    }
}

#[tokio::test(start_paused = true)]
async fn patches_and_updates_through_either_view() {
    let server = server().await;
    let (events, core) = apis(&server);
    create_job_event(&events).await;

    // The events recorder's series update: a merge patch on the
    // events.k8s.io view.
    let patched = events
        .patch(
            "j2.1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"series": {"count": 3, "lastObservedTime": "2026-11-29T10:00:09.000000Z"},
                                 "metadata": {"labels": {"seen": "3"}}}),
            ),
        )
        .await
        .expect("merge patch");
    assert_eq!(patched.series.as_ref().map(|s| s.count), Some(3));
    assert_eq!(patched.note.as_deref(), Some("Created pod: j2-abcde"));
    let c = core.get("j2.1").await.expect("core get");
    assert_eq!(c.series.as_ref().and_then(|s| s.count), Some(3));
    assert_eq!(c.message.as_deref(), Some("Created pod: j2-abcde"));
    assert_eq!(c.involved_object.name.as_deref(), Some("j2"));
    assert_eq!(
        c.metadata.resource_version,
        patched.metadata.resource_version
    );

    // `note` is immutable through events.k8s.io (upstream validates the
    // core object's `message` on an events.k8s.io update).
    let err = events
        .patch(
            "j2.1",
            &PatchParams::default(),
            &Patch::Merge(json!({"note": "changed"})),
        )
        .await
        .expect_err("immutable");
    let status = api_error(err);
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status
            .message
            .contains("message: Invalid value: \"changed\": field is immutable"),
        "{}",
        status.message
    );

    // core/v1 may change the message; the events.k8s.io view shows it as `note`.
    core.patch(
        "j2.1",
        &PatchParams::default(),
        &Patch::Merge(json!({"message": "Created pod: j2-fghij"})),
    )
    .await
    .expect("core merge patch");
    let e = events.get("j2.1").await.expect("get");
    assert_eq!(e.note.as_deref(), Some("Created pod: j2-fghij"));
    assert_eq!(e.reporting_controller.as_deref(), Some("job-controller"));

    // A strategic merge patch and a PUT on the events.k8s.io view.
    let e = events
        .patch(
            "j2.1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"labels": {"seen": "4"}}})),
        )
        .await
        .expect("strategic patch");
    let mut e2 = e.clone();
    e2.metadata.annotations = Some([("a".to_owned(), "b".to_owned())].into());
    let replaced = events
        .replace("j2.1", &PostParams::default(), &e2)
        .await
        .expect("replace");
    assert_eq!(replaced.note.as_deref(), Some("Created pod: j2-fghij"));
    let c = core.get("j2.1").await.expect("core get");
    assert_eq!(c.metadata.annotations, e2.metadata.annotations);
    assert_eq!(
        c.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("seen"))
            .map(String::as_str),
        Some("4")
    );
    assert_eq!(c.message.as_deref(), Some("Created pod: j2-fghij"));

    // Server-side apply creates an events.k8s.io Event stored as core.
    let applied = events
        .patch(
            "j2.2",
            &PatchParams::apply("job-controller").force(),
            &Patch::Apply(job_event("j2.2")),
        )
        .await
        .expect("apply");
    assert_eq!(applied.note.as_deref(), Some("Created pod: j2-abcde"));
    let c = core.get("j2.2").await.expect("core get");
    assert_eq!(c.message.as_deref(), Some("Created pod: j2-abcde"));
    assert_eq!(c.involved_object.kind.as_deref(), Some("Job"));

    // managedFields of both views live on the one object: a core/v1 write
    // and a second apply through events.k8s.io both succeed.
    core.patch(
        "j2.2",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"core": "yes"}}})),
    )
    .await
    .expect("core patch");
    let mut again = job_event("j2.2");
    again["metadata"]["labels"] = json!({"applied": "2"});
    let applied = events
        .patch(
            "j2.2",
            &PatchParams::apply("job-controller").force(),
            &Patch::Apply(again),
        )
        .await
        .expect("apply again");
    let labels = applied.metadata.labels.expect("labels");
    assert_eq!(labels.get("applied").map(String::as_str), Some("2"));
    assert_eq!(labels.get("core").map(String::as_str), Some("yes"));
    let managers: Vec<(String, String)> = applied
        .metadata
        .managed_fields
        .expect("managedFields")
        .into_iter()
        .map(|m| {
            (
                m.manager.unwrap_or_default(),
                m.api_version.unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        managers.contains(&("job-controller".to_owned(), "events.k8s.io/v1".to_owned())),
        "{managers:?}"
    );

    // A DELETE through events.k8s.io removes the one object.
    events
        .delete("j2.2", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        api_error(core.get("j2.2").await.expect_err("gone")).code,
        404
    );
}
