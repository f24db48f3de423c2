//! kube-apiserver semantics through kube-rs, in-process: errors and their
//! Status texts, optimistic concurrency, status resets, generateName,
//! dry-run, paging, graceful pod deletion, finalizers, propagation
//! policies, binding, eviction under a PDB, authentication.

mod support;

use std::sync::Arc;

use futures_util::TryStreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Binding, Namespace, ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{
    DeleteParams, EvictParams, ListParams, PostParams, Preconditions, PropagationPolicy,
    WatchEvent, WatchParams,
};
use serde_json::json;
use support::*;

fn typed<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("typed")
}

async fn create_pod(api: &Api<Pod>, name: &str) -> Pod {
    api.create(&PostParams::default(), &typed(pod(name)))
        .await
        .expect("create pod")
}

/// Binds `name` to `node` through `pods/binding`.
async fn bind(api: &Api<Pod>, name: &str, node: &str) -> Result<(), kube::Error> {
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some(node.into()),
            ..Default::default()
        },
    };
    let body = serde_json::to_vec(&binding).expect("json");
    let req = api.resource_url().to_owned();
    let req = axum::http::Request::post(format!("{req}/{name}/binding"))
        .header("content-type", "application/json")
        .body(body)
        .expect("request");
    api.clone()
        .into_client()
        .request::<serde_json::Value>(req)
        .await
        .map(|_| ())
}

/// Marks a pod Running and Ready through `/status`.
async fn run(api: &Api<Pod>, name: &str) -> Pod {
    let mut p = api.get_status(name).await.expect("pod");
    p.status = Some(typed(json!({
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": START},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": START}
        ]
    })));
    api.replace_status(name, &PostParams::default(), &p)
        .await
        .expect("status")
}

#[tokio::test(start_paused = true)]
async fn errors_carry_upstream_status_texts() {
    let server = server().await;
    let client = client(&server);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let e = api_error(pods.get("nope").await.expect_err("404"));
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    assert_eq!(e.message, "pods \"nope\" not found");

    let elsewhere: Api<Pod> = Api::namespaced(client.clone(), "nowhere");
    let e = api_error(
        elsewhere
            .create(&PostParams::default(), &typed(pod("p")))
            .await
            .expect_err("namespace must exist"),
    );
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    assert_eq!(e.message, "namespaces \"nowhere\" not found");

    create_pod(&pods, "p").await;
    let e = api_error(
        pods.create(&PostParams::default(), &typed(pod("p")))
            .await
            .expect_err("409"),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(e.message, "pods \"p\" already exists");

    let e = api_error(
        pods.create(&PostParams::default(), &typed(pod("Bad_Name")))
            .await
            .expect_err("422"),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(
        e.message
            .starts_with("Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\""),
        "{}",
        e.message
    );
    let causes = e.details.expect("details").causes;
    assert_eq!(causes[0].field, "metadata.name");
    assert_eq!(causes[0].reason, "FieldValueInvalid");

    let (code, _, body) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        &[],
        "{not json",
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    let (code, _, body) = raw(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        &[("content-type", "text/plain")],
        "{}",
    )
    .await;
    assert_eq!(code, 415);
    assert_eq!(body["reason"], "UnsupportedMediaType");
    let (code, _, body) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        &[("content-type", "application/xml")],
        "<pod/>",
    )
    .await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
    let (code, _, body) = raw(&server, "PUT", "/api/v1/namespaces/default/pods", &[], "{}").await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
    let (code, _, body) = raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/pods",
        &[("accept", "text/html")],
        "",
    )
    .await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (406, Some("NotAcceptable"))
    );
    let (code, _, body) = raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/widgets",
        &[],
        "",
    )
    .await;
    assert_eq!((code, body["kind"].as_str()), (404, Some("Status")));
}

#[tokio::test(start_paused = true)]
async fn stale_resource_version_is_a_conflict() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let p = create_pod(&pods, "p").await;
    let mut a = p.clone();
    a.metadata.labels = Some([("v".to_owned(), "1".to_owned())].into());
    pods.replace("p", &PostParams::default(), &a)
        .await
        .expect("first writer");
    let mut b = p.clone();
    b.metadata.labels = Some([("v".to_owned(), "2".to_owned())].into());
    let e = api_error(
        pods.replace("p", &PostParams::default(), &b)
            .await
            .expect_err("stale"),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again"
    );
    // A no-op update keeps the resourceVersion.
    let now = pods.get("p").await.expect("get");
    let same = pods
        .replace("p", &PostParams::default(), &now)
        .await
        .expect("no-op");
    assert_eq!(
        same.metadata.resource_version,
        now.metadata.resource_version
    );
}

#[tokio::test(start_paused = true)]
async fn status_subresource_resets_what_it_may_not_change() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    create_pod(&pods, "p").await;
    // The main resource ignores status.
    let mut p = pods.get("p").await.expect("get");
    p.status = Some(typed(json!({"phase": "Running"})));
    let p = pods
        .replace("p", &PostParams::default(), &p)
        .await
        .expect("update");
    assert_ne!(p.status.and_then(|s| s.phase).as_deref(), Some("Running"));
    // /status ignores spec and labels.
    let mut p = pods.get("p").await.expect("get");
    p.status = Some(typed(json!({"phase": "Running"})));
    p.spec.as_mut().expect("spec").active_deadline_seconds = Some(5);
    let p = pods
        .replace_status("p", &PostParams::default(), &p)
        .await
        .expect("status");
    assert_eq!(p.status.and_then(|s| s.phase).as_deref(), Some("Running"));
    assert_eq!(p.spec.and_then(|s| s.active_deadline_seconds), None);
}

#[tokio::test(start_paused = true)]
async fn generate_name_and_dry_run() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let mut body = pod("");
    body["metadata"] = json!({"generateName": "web-"});
    let p = pods
        .create(&PostParams::default(), &typed(body.clone()))
        .await
        .expect("create");
    let name = p.metadata.name.expect("name");
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let d = pods
        .create(&dry, &typed(pod("dry")))
        .await
        .expect("dry run");
    assert_eq!(d.metadata.name.as_deref(), Some("dry"));
    assert_eq!(
        api_error(pods.get("dry").await.expect_err("not stored")).code,
        404
    );
}

#[tokio::test(start_paused = true)]
async fn list_pages_with_limit_and_continue() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    for i in 0..5 {
        create_pod(&pods, &format!("p{i}")).await;
    }
    let first = pods
        .list(&ListParams::default().limit(2))
        .await
        .expect("page 1");
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let mut names: Vec<String> = first
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let mut token = first.metadata.continue_;
    while let Some(t) = token.filter(|t| !t.is_empty()) {
        let page = pods
            .list(&ListParams::default().limit(2).continue_token(&t))
            .await
            .expect("next page");
        names.extend(page.items.iter().filter_map(|p| p.metadata.name.clone()));
        token = page.metadata.continue_;
    }
    assert_eq!(names, ["p0", "p1", "p2", "p3", "p4"]);
    let all = pods.list(&ListParams::default()).await.expect("all");
    assert_eq!(all.items.len(), 5);
    assert_eq!(all.metadata.continue_, None);
}

#[tokio::test(start_paused = true)]
async fn bound_pods_are_deleted_gracefully() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    create_pod(&pods, "p").await;
    bind(&pods, "p", "n1").await.expect("bind");
    let marked = pods
        .delete("p", &DeleteParams::default())
        .await
        .expect("delete")
        .left()
        .expect("the marked pod");
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(30));
    assert_eq!(
        marked
            .metadata
            .deletion_timestamp
            .map(|t| t.0.to_string())
            .as_deref(),
        Some("2026-11-29T10:00:30Z")
    );
    // A longer grace period changes nothing.
    let again = pods
        .delete("p", &DeleteParams::default().grace_period(60))
        .await
        .expect("delete again")
        .left()
        .expect("pod");
    assert_eq!(again.metadata.deletion_grace_period_seconds, Some(30));
    assert!(
        pods.get("p").await.is_ok(),
        "still there until its node confirms"
    );
    // The kubelet confirms with grace 0 and the pod's UID.
    let uid = again.metadata.uid.clone();
    let confirm = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(Preconditions {
            uid,
            resource_version: None,
        }),
        ..Default::default()
    };
    pods.delete("p", &confirm).await.expect("confirm");
    assert_eq!(api_error(pods.get("p").await.expect_err("gone")).code, 404);
    // An unscheduled pod goes at once.
    create_pod(&pods, "q").await;
    pods.delete("q", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(api_error(pods.get("q").await.expect_err("gone")).code, 404);
}

#[tokio::test(start_paused = true)]
async fn finalizers_hold_deletion_and_preconditions_are_checked() {
    let server = server().await;
    let leases: Api<Lease> = Api::default_namespaced(client(&server));
    let lease: Lease =
        typed(json!({"metadata": {"name": "l", "finalizers": ["example.com/hold"]}}));
    let created = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    let wrong = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let e = api_error(leases.delete("l", &wrong).await.expect_err("precondition"));
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        e.message,
        format!(
            "Operation cannot be fulfilled on leases.coordination.k8s.io \"l\": Precondition failed: UID in precondition: not-the-uid, UID in object meta: {}",
            created.metadata.uid.as_deref().expect("uid")
        )
    );
    let marked = leases
        .delete("l", &DeleteParams::default())
        .await
        .expect("delete")
        .left()
        .expect("marked, not deleted");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(0));
    let mut held = leases.get("l").await.expect("still there");
    held.metadata.finalizers = None;
    leases
        .replace("l", &PostParams::default(), &held)
        .await
        .expect("remove finalizer");
    assert_eq!(
        api_error(leases.get("l").await.expect_err("gone")).code,
        404
    );

    for (policy, finalizer) in [
        (PropagationPolicy::Orphan, "orphan"),
        (PropagationPolicy::Foreground, "foregroundDeletion"),
    ] {
        leases
            .create(
                &PostParams::default(),
                &typed(json!({"metadata": {"name": "gc"}})),
            )
            .await
            .expect("create");
        let dp = DeleteParams {
            propagation_policy: Some(policy),
            ..Default::default()
        };
        let marked = leases
            .delete("gc", &dp)
            .await
            .expect("delete")
            .left()
            .expect("marked");
        assert_eq!(marked.metadata.finalizers, Some(vec![finalizer.to_owned()]));
        let mut held = leases.get("gc").await.expect("held");
        held.metadata.finalizers = Some(vec![]);
        leases
            .replace("gc", &PostParams::default(), &held)
            .await
            .expect("release");
        assert_eq!(
            api_error(leases.get("gc").await.expect_err("gone")).code,
            404
        );
    }
}

#[tokio::test(start_paused = true)]
async fn confirming_a_held_pod_again_writes_nothing() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let mut held = pod("p");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    pods.create(&PostParams::default(), &typed(held))
        .await
        .expect("create");
    bind(&pods, "p", "n1").await.expect("bind");
    pods.delete("p", &DeleteParams::default())
        .await
        .expect("graceful delete");
    let zero = DeleteParams {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    // The kubelet's confirmation shortens the grace to 0; the finalizer
    // holds the pod.
    let confirmed = pods
        .delete("p", &zero)
        .await
        .expect("confirm")
        .left()
        .expect("held");
    assert_eq!(confirmed.metadata.deletion_grace_period_seconds, Some(0));
    let rv = confirmed.metadata.resource_version.clone().expect("rv");
    let revision = server.store().revision();
    let wp = WatchParams::default().timeout(290).disable_bookmarks();
    let mut stream = Box::pin(pods.watch(&wp, &rv).await.expect("watch"));
    // Confirming again changes nothing, so nothing is written (upstream's
    // GuaranteedUpdate skips an unchanged object).
    for _ in 0..2 {
        let again = pods
            .delete("p", &zero)
            .await
            .expect("confirm again")
            .left()
            .expect("still held");
        assert_eq!(again, confirmed);
        assert_eq!(server.store().revision(), revision);
    }
    // The next event the watch sees is the next real write.
    let mut released = pods.get("p").await.expect("held");
    released.metadata.finalizers = None;
    pods.replace("p", &PostParams::default(), &released)
        .await
        .expect("release");
    let first = stream.try_next().await.expect("event").expect("open");
    match first {
        WatchEvent::Deleted(p) => assert_eq!(
            p.metadata.resource_version,
            Some((revision + 1).to_string())
        ),
        other => panic!("expected the release's DELETED, got {other:?}"),
    }
    assert_eq!(server.store().revision(), revision + 1);
}

#[tokio::test(start_paused = true)]
async fn binding_assigns_once() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    create_pod(&pods, "p").await;
    bind(&pods, "p", "n1").await.expect("bind");
    let p = pods.get("p").await.expect("get");
    assert_eq!(
        p.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some("n1")
    );
    let scheduled = p
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "PodScheduled")
        .expect("PodScheduled");
    assert_eq!(scheduled.status, "True");
    let e = api_error(bind(&pods, "p", "n2").await.expect_err("already bound"));
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
    );
}

#[tokio::test(start_paused = true)]
async fn eviction_waits_for_the_budget() {
    let server = server().await;
    let client = client(&server);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    for name in ["web-0", "web-1"] {
        create_pod(&pods, name).await;
        bind(&pods, name, "n1").await.expect("bind");
        run(&pods, name).await;
    }
    let pdbs: Api<PodDisruptionBudget> = Api::default_namespaced(client.clone());
    pdbs.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "web"}, "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}})),
    )
    .await
    .expect("pdb");
    let set_allowed = |allowed: i32| {
        let pdbs = pdbs.clone();
        async move {
            let mut pdb = pdbs.get_status("web").await.expect("pdb");
            pdb.status = Some(typed(json!({
                "observedGeneration": 1, "disruptionsAllowed": allowed,
                "currentHealthy": 2, "desiredHealthy": 2 - allowed, "expectedPods": 2
            })));
            pdbs.replace_status("web", &PostParams::default(), &pdb)
                .await
                .expect("pdb status");
        }
    };
    set_allowed(0).await;
    let e = api_error(
        pods.evict("web-0", &EvictParams::default())
            .await
            .expect_err("429"),
    );
    assert_eq!((e.code, e.reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(
        e.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let (code, headers, _) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods/web-0/eviction",
        &[("content-type", "application/json")],
        r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web-0"}}"#,
    )
    .await;
    assert_eq!(code, 429);
    assert!(
        headers.get("retry-after").is_none(),
        "a budget refusal has no Retry-After"
    );

    set_allowed(1).await;
    let dry = EvictParams {
        post_options: PostParams {
            dry_run: true,
            ..Default::default()
        },
        ..Default::default()
    };
    pods.evict("web-0", &dry).await.expect("dry-run eviction");
    assert!(
        pods.get("web-0")
            .await
            .expect("kept")
            .metadata
            .deletion_timestamp
            .is_none()
    );
    pods.evict("web-0", &EvictParams::default())
        .await
        .expect("201");
    let evicted = pods
        .get("web-0")
        .await
        .expect("marked, its node confirms later");
    assert!(evicted.metadata.deletion_timestamp.is_some());
    let disruption = evicted
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "DisruptionTarget")
        .expect("DisruptionTarget condition");
    assert_eq!(disruption.reason.as_deref(), Some("EvictionByEvictionAPI"));
    let pdb = pdbs.get("web").await.expect("pdb");
    let status = pdb.status.expect("status");
    assert_eq!(status.disruptions_allowed, Some(0));
    assert!(
        status
            .disrupted_pods
            .unwrap_or_default()
            .contains_key("web-0")
    );

    // Two budgets covering one pod: 500.
    pdbs.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "web-2"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})),
    )
    .await
    .expect("pdb 2");
    let e = api_error(
        pods.evict("web-1", &EvictParams::default())
            .await
            .expect_err("500"),
    );
    assert_eq!(e.code, 500);
    assert_eq!(
        e.message,
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
}

#[tokio::test(start_paused = true)]
async fn requests_need_the_token_except_health() {
    let server = exitplan_apiserver::server::Server::builder()
        .store(exitplan_apiserver::storage::Store::in_memory().expect("store"))
        .clock(Arc::new(
            exitplan_apiserver::clock::TokioClock::starting_at(START.parse().expect("time")),
        ))
        .token("s3cret")
        .build()
        .await
        .expect("server");
    let anonymous: Api<Namespace> = Api::all(client(&server));
    let e = api_error(
        anonymous
            .list(&ListParams::default())
            .await
            .expect_err("401"),
    );
    assert_eq!(
        (e.code, e.reason.as_str(), e.message.as_str()),
        (401, "Unauthorized", "Unauthorized")
    );
    let (code, _, body) = raw(&server, "GET", "/healthz", &[], "").await;
    assert_eq!((code, body.as_str()), (200, Some("ok")));
    let (code, _, _) = raw(
        &server,
        "GET",
        "/api/v1/namespaces",
        &[("authorization", "Bearer wrong")],
        "",
    )
    .await;
    assert_eq!(code, 401);
    let authed = tower::ServiceBuilder::new()
        .map_request(|mut req: axum::http::Request<kube::client::Body>| {
            req.headers_mut().insert(
                "authorization",
                axum::http::HeaderValue::from_static("Bearer s3cret"),
            );
            req
        })
        .service(server.router());
    let ns: Api<Namespace> = Api::all(kube::Client::new(authed, "default"));
    assert_eq!(
        ns.list(&ListParams::default())
            .await
            .expect("authorized")
            .items
            .len(),
        4
    );
}
