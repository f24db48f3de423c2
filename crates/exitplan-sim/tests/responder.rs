//! The built-in responder against the embedded API server, with no
//! controllers: the test plays the evictionrequest-controller by writing the
//! Eviction's targetResponders itself.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::lifecycle::v1alpha1::Eviction;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_clock::{SharedClock, TokioClock};
use exitplan_runtime::context::Context;
use exitplan_runtime::runtime::{Runtime, RuntimeConfig};
use exitplan_sim::responder::{BuiltinResponders, ResponderFactory, ResponderSpec};

const NAME: &str = "backup.example.com/snapshot";

async fn setup() -> (Server, Context, Runtime, Api<Eviction>) {
    let clock: SharedClock = Arc::new(TokioClock::starting_at(
        "2026-11-29T10:00:00Z".parse().expect("start"),
    ));
    let server = Server::builder()
        .store(Store::in_memory().expect("store"))
        .clock(clock.clone())
        .build()
        .await
        .expect("server");
    let client = kube::Client::new(server.router(), "default");
    let ctx = Context::new(client.clone(), clock);
    // No components: only the shared informers run.
    let rt = Runtime::start(ctx.clone(), RuntimeConfig::default()).await;
    let api: Api<Eviction> = Api::default_namespaced(client);
    let ev: Eviction = serde_json::from_value(json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1",
        "kind": "Eviction",
        "metadata": {"name": "pod-1-db-0", "labels": {NAME: "responder"}},
        "spec": {"target": {"pod": {"name": "db-0", "uid": "0b6f5b4e-5d7a-4b7e-9c1e-2f4a6b8c0d1e"}}},
    }))
    .expect("eviction");
    api.create(&PostParams::default(), &ev)
        .await
        .expect("create");
    (server, ctx, rt, api)
}

/// What the controller writes when it activates the responder.
async fn activate(api: &Api<Eviction>, now: &str) {
    let body = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1",
        "kind": "Eviction",
        "metadata": {"name": "pod-1-db-0"},
        "status": {
            "targetResponders": [
                {"name": NAME, "priority": 15000, "state": "Active"},
                {"name": "imperative-eviction.k8s.io/evictor", "priority": 100, "state": "Inactive"},
            ],
            "responders": [
                {"name": NAME, "startTime": now},
                {"name": "imperative-eviction.k8s.io/evictor"},
            ],
        },
    });
    api.patch_status(
        "pod-1-db-0",
        &PatchParams::apply("evictionrequest-controller").force(),
        &Patch::Apply(&body),
    )
    .await
    .expect("activate");
}

/// (heartbeatTime, expectedCompletionTime, completionTime, message) of the responder's entry.
async fn entry(api: &Api<Eviction>) -> [Option<String>; 4] {
    let ev = api.get("pod-1-db-0").await.expect("get");
    let r = ev
        .status
        .and_then(|s| s.responders)
        .and_then(|rs| rs.into_iter().find(|r| r.name == NAME))
        .expect("entry");
    let t = |t: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        t.map(|t| exitplan_api::time::format_rfc3339(t.0))
    };
    [
        t(r.heartbeat_time),
        t(r.expected_completion_time),
        t(r.completion_time),
        r.message,
    ]
}

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

#[tokio::test(start_paused = true)]
async fn heartbeats_then_completes_after_its_work() {
    let (_server, ctx, _rt, api) = setup().await;
    activate(&api, "2026-11-29T10:00:00Z").await;
    let h = BuiltinResponders.start(
        &ctx,
        ResponderSpec {
            name: NAME.into(),
            work: Duration::from_secs(300),
            fail: false,
        },
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(
        entry(&api).await,
        [
            s("2026-11-29T10:00:00Z"),
            s("2026-11-29T10:05:00Z"),
            None,
            s("working")
        ]
    );
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(
        entry(&api).await[0],
        s("2026-11-29T10:02:00Z"),
        "a heartbeat a minute"
    );
    tokio::time::sleep(Duration::from_secs(180)).await;
    assert_eq!(
        entry(&api).await,
        [
            s("2026-11-29T10:05:00Z"),
            s("2026-11-29T10:05:00Z"),
            s("2026-11-29T10:05:00Z"),
            s("done")
        ]
    );
    // Its own entry, written under its own name on /status.
    let ev = api.get("pod-1-db-0").await.expect("get");
    let managers: Vec<(String, Option<String>)> = ev
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.manager.unwrap_or_default(), m.subresource))
        .collect();
    assert!(
        managers.contains(&(NAME.to_owned(), s("status"))),
        "{managers:?}"
    );
    h.abort();
}

#[tokio::test(start_paused = true)]
async fn a_failing_responder_goes_silent_halfway() {
    let (_server, ctx, _rt, api) = setup().await;
    let h = BuiltinResponders.start(
        &ctx,
        ResponderSpec {
            name: NAME.into(),
            work: Duration::from_secs(600),
            fail: true,
        },
    );
    // Not Active yet: nothing written.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let ev = api.get("pod-1-db-0").await.expect("get");
    assert!(ev.status.and_then(|s| s.responders).is_none());
    activate(&api, "2026-11-29T10:01:00Z").await;
    tokio::time::sleep(Duration::from_secs(30 * 60)).await;
    assert_eq!(
        entry(&api).await,
        [
            s("2026-11-29T10:05:00Z"),
            s("2026-11-29T10:11:00Z"),
            None,
            s("working")
        ],
        "last heartbeat 4 minutes after it started at 10:01, then silence"
    );
    h.abort();
}
