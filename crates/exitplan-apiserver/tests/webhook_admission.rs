//! Admission webhooks against a real HTTPS webhook server in the test:
//! allow, deny (403, 429), JSONPatch mutation, failurePolicy on timeouts,
//! bad certificates, garbage and a server that is down, dry-run and
//! sideEffects, subresources (`pods/eviction`), selectors, match
//! conditions and services resolved through Endpoints. The configurations
//! are written to the store directly (the admissionregistration API is
//! another slice).

mod support;

use exitplan_apiserver::tls::{LocalCa, local_names};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{DeleteParams, EvictParams, PostParams};
use serde_json::{Value, json};
use support::webhooks::{configure, hooks, webhook};
use support::{api_error, client, raw, server};

fn configmap(name: &str, labels: Value) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels}, "data": {"k": "v"},
    }))
    .expect("configmap")
}

fn message(e: &kube::core::Status) -> &str {
    &e.message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowing_webhook_sees_the_request_and_its_warnings_reach_the_client() {
    let s = server().await;
    let h = hooks().await;
    configure(
        &s,
        false,
        "allow",
        vec![webhook(
            "allow.example.com",
            &h.url("allow"),
            &h.ca.ca_pem,
            json!({}),
        )],
    )
    .await;
    let (code, headers, _) = raw(
        &s,
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldManager=me",
        &[("content-type", "application/json")],
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}).to_string(),
    )
    .await;
    assert_eq!(code, 201);
    let warnings: Vec<&str> = headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(warnings, vec!["299 - \"looked at it\""]);
    let seen = h.seen();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(
        r["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        r["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(r["requestResource"], r["resource"]);
    assert_eq!(r["operation"], "CREATE");
    assert_eq!(r["namespace"], "default");
    assert_eq!(r["name"], "a");
    assert_eq!(r["dryRun"], false);
    assert_eq!(r["object"]["metadata"]["name"], "a");
    assert_eq!(r["oldObject"], Value::Null);
    assert_eq!(r["userInfo"]["username"], "kubernetes-admin");
    assert_eq!(
        r["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "me"})
    );
    assert_eq!(r["uid"].as_str().map(str::len), Some(36));
    // Later calls go over the pooled connection.
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    for i in 0..10 {
        api.create(
            &PostParams::default(),
            &configmap(&format!("again-{i}"), json!({})),
        )
        .await
        .expect("created");
    }
    assert_eq!(h.seen().len(), 11);
    // Not selected: an UPDATE.
    let mut cm = api.get("a").await.expect("get");
    cm.data = Some([("x".to_owned(), "y".to_owned())].into());
    api.replace("a", &PostParams::default(), &cm)
        .await
        .expect("update");
    assert_eq!(h.seen().len(), 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_reaches_the_client_with_the_webhooks_code_and_nothing_is_stored() {
    let s = server().await;
    let h = hooks().await;
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    for (path, code, reason, text) in [
        ("deny403", 403, "Forbidden", "no way"),
        ("deny429", 429, "TooManyRequests", "slow down"),
    ] {
        configure(
            &s,
            false,
            "deny",
            vec![webhook(
                "deny.example.com",
                &h.url(path),
                &h.ca.ca_pem,
                json!({}),
            )],
        )
        .await;
        let e = api_error(
            api.create(&PostParams::default(), &configmap("denied", json!({})))
                .await
                .expect_err("denied"),
        );
        assert_eq!(e.code, code);
        assert_eq!(e.reason, reason);
        assert_eq!(
            message(&e),
            format!("admission webhook \"deny.example.com\" denied the request: {text}")
        );
        assert_eq!(
            api_error(api.get("denied").await.expect_err("absent")).code,
            404
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutating_webhooks_patch_is_stored_and_validating_webhooks_see_it() {
    let s = server().await;
    let h = hooks().await;
    configure(
        &s,
        true,
        "mutate",
        vec![webhook(
            "mutate.example.com",
            &h.url("mutate"),
            &h.ca.ca_pem,
            json!({}),
        )],
    )
    .await;
    configure(
        &s,
        false,
        "allow",
        vec![webhook(
            "allow.example.com",
            &h.url("allow"),
            &h.ca.ca_pem,
            json!({}),
        )],
    )
    .await;
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    let created = api
        .create(&PostParams::default(), &configmap("m", json!({"app": "x"})))
        .await
        .expect("created");
    let labels = created.metadata.labels.expect("labels");
    assert_eq!(labels.get("mutated").map(String::as_str), Some("yes"));
    let stored = api.get("m").await.expect("get");
    assert_eq!(
        stored
            .metadata
            .labels
            .expect("labels")
            .get("mutated")
            .map(String::as_str),
        Some("yes")
    );
    let seen = h.seen();
    assert_eq!(seen.len(), 2, "mutating, then validating");
    assert_eq!(seen[0]["object"]["metadata"]["labels"], json!({"app": "x"}));
    assert_eq!(
        seen[1]["object"]["metadata"]["labels"],
        json!({"app": "x", "mutated": "yes"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_failures_follow_the_failure_policy_with_upstreams_messages() {
    let s = server().await;
    let h = hooks().await;
    let other_ca = LocalCa::generate(&local_names(None)).expect("ca");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    let cases = [
        (
            "slow",
            h.url("slow"),
            h.ca.ca_pem.clone(),
            format!(
                "failed to call webhook: Post \"{}?timeout=1s\": context deadline exceeded",
                h.url("slow")
            ),
        ),
        (
            "badcert",
            h.url("allow"),
            other_ca.ca_pem.clone(),
            format!(
                "failed to call webhook: Post \"{}?timeout=1s\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
                h.url("allow")
            ),
        ),
        (
            "down",
            format!("https://{closed}/allow"),
            h.ca.ca_pem.clone(),
            format!(
                "failed to call webhook: Post \"https://{closed}/allow?timeout=1s\": dial tcp {closed}: connect: connection refused"
            ),
        ),
        (
            "garbage",
            h.url("garbage"),
            h.ca.ca_pem.clone(),
            "failed to call webhook: couldn't get version/kind; json parse error: ".to_owned(),
        ),
        (
            "wronguid",
            h.url("wronguid"),
            h.ca.ca_pem.clone(),
            "received invalid webhook response: expected response.uid=".to_owned(),
        ),
    ];
    for (i, (name, url, ca, why)) in cases.iter().enumerate() {
        let hook = format!("{name}.example.com");
        configure(
            &s,
            false,
            "failing",
            vec![webhook(&hook, url, ca, json!({"failurePolicy": "Fail"}))],
        )
        .await;
        let e = api_error(
            api.create(
                &PostParams::default(),
                &configmap(&format!("f{i}"), json!({})),
            )
            .await
            .expect_err(name),
        );
        assert_eq!(
            (e.code, e.reason.as_str()),
            (500, "InternalError"),
            "{name}"
        );
        let prefix = format!("Internal error occurred: failed calling webhook \"{hook}\": {why}");
        assert!(
            message(&e).starts_with(&prefix),
            "{name}: {} does not start with {prefix}",
            message(&e)
        );
        configure(
            &s,
            false,
            "failing",
            vec![webhook(&hook, url, ca, json!({"failurePolicy": "Ignore"}))],
        )
        .await;
        api.create(
            &PostParams::default(),
            &configmap(&format!("f{i}"), json!({})),
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: Ignore lets it pass: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_needs_webhooks_without_side_effects() {
    let s = server().await;
    let h = hooks().await;
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    configure(
        &s,
        false,
        "se",
        vec![webhook(
            "se.example.com",
            &h.url("allow"),
            &h.ca.ca_pem,
            json!({"sideEffects": "Some"}),
        )],
    )
    .await;
    let e = api_error(
        api.create(&dry, &configmap("d", json!({})))
            .await
            .expect_err("refused"),
    );
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        message(&e),
        "admission webhook \"se.example.com\" does not support dry run"
    );
    assert!(h.seen().is_empty());
    // Not a dry run: called.
    api.create(&PostParams::default(), &configmap("d", json!({})))
        .await
        .expect("created");
    assert_eq!(h.seen().len(), 1);
    configure(
        &s,
        false,
        "se",
        vec![webhook(
            "se.example.com",
            &h.url("allow"),
            &h.ca.ca_pem,
            json!({"sideEffects": "NoneOnDryRun"}),
        )],
    )
    .await;
    api.create(&dry, &configmap("d2", json!({})))
        .await
        .expect("dry run");
    let seen = h.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1]["dryRun"], true);
    assert_eq!(seen[1]["options"]["dryRun"], json!(["All"]));
    assert_eq!(
        api_error(api.get("d2").await.expect_err("not stored")).code,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eviction_is_admitted_as_a_create_of_pods_eviction() {
    let s = server().await;
    let h = hooks().await;
    let pods = kube::Api::<Pod>::namespaced(client(&s), "default");
    let pod: Pod = serde_json::from_value(support::pod("p")).expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("pod");
    configure(&s, false, "evict", vec![webhook("evict.example.com", &h.url("deny429"), &h.ca.ca_pem, json!({
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/eviction"]}],
    }))]).await;
    let e = api_error(
        pods.evict("p", &EvictParams::default())
            .await
            .expect_err("denied"),
    );
    assert_eq!(e.code, 429);
    assert_eq!(
        message(&e),
        "admission webhook \"evict.example.com\" denied the request: slow down"
    );
    pods.get("p").await.expect("still there");
    let seen = h.seen();
    assert_eq!(seen.len(), 1, "the pod's own create is not selected");
    assert_eq!(
        seen[0]["kind"],
        json!({"group": "policy", "version": "v1", "kind": "Eviction"})
    );
    assert_eq!(seen[0]["resource"]["resource"], "pods");
    assert_eq!(seen[0]["subResource"], "eviction");
    assert_eq!(seen[0]["name"], "p");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selectors_and_match_conditions_choose_the_requests_sent() {
    let s = server().await;
    let h = hooks().await;
    configure(&s, false, "sel", vec![webhook("sel.example.com", &h.url("deny403"), &h.ca.ca_pem, json!({
        "objectSelector": {"matchLabels": {"check": "yes"}},
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]},
        "matchConditions": [{"name": "not-skipped", "expression": "object.metadata.name != 'skip-me'"}],
    }))]).await;
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    api.create(&PostParams::default(), &configmap("unlabelled", json!({})))
        .await
        .expect("not selected");
    api.create(
        &PostParams::default(),
        &configmap("skip-me", json!({"check": "yes"})),
    )
    .await
    .expect("condition false");
    let e = api_error(
        api.create(
            &PostParams::default(),
            &configmap("labelled", json!({"check": "yes"})),
        )
        .await
        .expect_err("denied"),
    );
    assert_eq!(e.code, 403);
    assert_eq!(h.seen().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_and_status_updates_are_admitted() {
    let s = server().await;
    let h = hooks().await;
    let pods = kube::Api::<Pod>::namespaced(client(&s), "default");
    let pod: Pod = serde_json::from_value(support::pod("p")).expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("pod");
    configure(&s, false, "guard", vec![webhook("guard.example.com", &h.url("deny403"), &h.ca.ca_pem, json!({
        "rules": [{"operations": ["DELETE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods", "pods/status"]}],
    }))]).await;
    let e = api_error(
        pods.delete("p", &DeleteParams::default())
            .await
            .expect_err("denied"),
    );
    assert_eq!(e.code, 403);
    pods.get("p").await.expect("still there");
    let status = json!({"status": {"phase": "Running"}});
    let e = api_error(
        pods.patch_status(
            "p",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&status),
        )
        .await
        .expect_err("denied"),
    );
    assert_eq!(e.code, 403);
    let seen = h.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["operation"], "DELETE");
    assert_eq!(seen[0]["object"], Value::Null);
    assert_eq!(seen[0]["oldObject"]["metadata"]["name"], "p");
    assert_eq!(seen[0]["options"]["kind"], "DeleteOptions");
    assert_eq!(seen[1]["operation"], "UPDATE");
    assert_eq!(seen[1]["subResource"], "status");
    assert_eq!(seen[1]["object"]["status"]["phase"], "Running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_reference_is_resolved_through_the_service() {
    let s = server().await;
    let h = hooks().await;
    let port = h.addr.port();
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    let mut hook = webhook("svc.example.com", "", &h.ca.ca_pem, json!({}));
    hook["clientConfig"] = json!({
        "service": {"namespace": "default", "name": "webhook", "path": "/deny403", "port": port},
        "caBundle": k8s_openapi::ByteString(h.ca.ca_pem.as_bytes().to_vec()),
    });
    configure(&s, false, "svc", vec![hook]).await;
    let e = api_error(
        api.create(&PostParams::default(), &configmap("x", json!({})))
            .await
            .expect_err("no service"),
    );
    assert_eq!(e.code, 500);
    assert_eq!(
        message(&e),
        "Internal error occurred: failed calling webhook \"svc.example.com\": could not get REST client: service \"webhook\" not found"
    );
    // An ExternalName Service naming the local host; the certificate is
    // checked for webhook.default.svc.
    let (code, out) = support::send(
        &s,
        "POST",
        "/api/v1/namespaces/default/services",
        "application/json",
        &json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "webhook"},
            "spec": {"type": "ExternalName", "externalName": "localhost"},
        }),
    )
    .await;
    assert_eq!(code, 201, "{out}");
    let e = api_error(
        api.create(&PostParams::default(), &configmap("x", json!({})))
            .await
            .expect_err("denied"),
    );
    assert_eq!(e.code, 403, "{}", e.message);
    assert_eq!(h.seen().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn if_needed_webhooks_are_reinvoked_after_a_later_change() {
    let s = server().await;
    let h = hooks().await;
    let api = kube::Api::<ConfigMap>::namespaced(client(&s), "default");
    let labels_seen = |from: usize| -> Vec<(String, Value)> {
        h.seen()[from..]
            .iter()
            .map(|r| {
                (
                    r["_hook"].as_str().unwrap_or_default().to_owned(),
                    r["object"]["metadata"]["labels"].clone(),
                )
            })
            .collect()
    };
    for (policy, want) in [
        (
            "Never",
            vec![
                ("label-one", json!({"app": "x"})),
                ("label-two", json!({"app": "x", "one": "yes"})),
            ],
        ),
        (
            "IfNeeded",
            vec![
                ("label-one", json!({"app": "x"})),
                ("label-two", json!({"app": "x", "one": "yes"})),
                ("label-one", json!({"app": "x", "one": "yes", "two": "yes"})),
            ],
        ),
    ] {
        configure(
            &s,
            true,
            "a-first",
            vec![webhook(
                "one.example.com",
                &h.url("label-one"),
                &h.ca.ca_pem,
                json!({"reinvocationPolicy": policy}),
            )],
        )
        .await;
        configure(
            &s,
            true,
            "b-second",
            vec![webhook(
                "two.example.com",
                &h.url("label-two"),
                &h.ca.ca_pem,
                json!({}),
            )],
        )
        .await;
        let from = h.seen().len();
        let created = api
            .create(
                &PostParams::default(),
                &configmap(&format!("r-{}", policy.to_lowercase()), json!({"app": "x"})),
            )
            .await
            .expect("created");
        let want: Vec<(String, Value)> = want.into_iter().map(|(h, l)| (h.to_owned(), l)).collect();
        assert_eq!(labels_seen(from), want, "{policy}");
        assert_eq!(
            serde_json::to_value(created.metadata.labels).expect("json"),
            json!({"app": "x", "one": "yes", "two": "yes"})
        );
    }
}
