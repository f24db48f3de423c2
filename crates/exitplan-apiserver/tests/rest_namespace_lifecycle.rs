//! The namespace lifecycle through kube-rs: a deleted namespace stays
//! `Terminating` with the deleter's conditions while content is held by a
//! finalizer, refuses new content with 403, and goes once the finalizer is
//! removed; `namespaces/<name>/finalize`; a foreign `spec.finalizers` entry
//! holds the namespace until `/finalize` removes it.

mod support;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use support::{api_error, client, server};

async fn namespace(client: &kube::Client, name: &str, finalizers: &[&str]) -> Namespace {
    let ns: Namespace = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"finalizers": finalizers},
    }))
    .expect("namespace");
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create namespace")
}

fn pod(name: &str, finalizers: &[&str]) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "finalizers": finalizers},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }))
    .expect("pod")
}

fn condition(ns: &Namespace, ty: &str) -> (String, String, String) {
    let c = ns
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == ty))
        .unwrap_or_else(|| panic!("condition {ty} in {ns:?}"));
    (
        c.status.clone(),
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_namespace_waits_for_content_held_by_a_finalizer() {
    let server = server().await;
    let client = client(&server);
    let created = namespace(&client, "team", &[]).await;
    assert_eq!(
        created.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_owned()]),
        "PrepareForCreate adds the kubernetes finalizer"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), "team");
    pods.create(&PostParams::default(), &pod("held", &["example.com/f"]))
        .await
        .expect("pod");
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    configmaps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "cm"}})).expect("cm"),
        )
        .await
        .expect("configmap");

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let answer = namespaces
        .delete("team", &DeleteParams::default())
        .await
        .expect("delete");
    let marked = answer.left().expect("the namespace, as upstream answers");
    assert_eq!(
        marked.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert!(marked.metadata.deletion_timestamp.is_some());

    let ns = namespaces.get("team").await.expect("still there");
    assert_eq!(
        ns.spec.as_ref().and_then(|s| s.finalizers.clone()),
        Some(vec!["kubernetes".to_owned()])
    );
    assert_eq!(
        condition(&ns, "NamespaceContentRemaining"),
        (
            "True".into(),
            "SomeResourcesRemain".into(),
            "Some resources are remaining: pods. has 1 resource instances".into()
        )
    );
    assert_eq!(
        condition(&ns, "NamespaceFinalizersRemaining"),
        (
            "True".into(),
            "SomeFinalizersRemain".into(),
            "Some content in the namespace has finalizers remaining: example.com/f in 1 resource instances".into()
        )
    );
    assert_eq!(
        condition(&ns, "NamespaceDeletionDiscoveryFailure"),
        (
            "False".into(),
            "ResourcesDiscovered".into(),
            "All resources successfully discovered".into()
        )
    );
    assert_eq!(
        condition(&ns, "NamespaceDeletionContentFailure").1,
        "ContentDeleted"
    );
    assert!(
        configmaps.get_opt("cm").await.expect("get").is_none(),
        "content without finalizers went"
    );
    let held = pods.get("held").await.expect("held pod");
    assert!(held.metadata.deletion_timestamp.is_some());

    let refused = api_error(
        configmaps
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "new"}})).expect("cm"),
            )
            .await
            .expect_err("terminating"),
    );
    assert_eq!(refused.code, 403);
    assert_eq!(
        refused.message,
        "configmaps \"new\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );

    // A second DELETE answers with the namespace, unchanged.
    let again = namespaces
        .delete("team", &DeleteParams::default())
        .await
        .expect("delete again")
        .left()
        .expect("the namespace");
    assert_eq!(
        again.metadata.resource_version,
        ns.metadata.resource_version
    );

    pods.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("remove finalizer");
    assert!(pods.get_opt("held").await.expect("get").is_none());
    assert!(
        namespaces.get_opt("team").await.expect("get").is_none(),
        "the last content went: the namespace goes"
    );
}

#[tokio::test]
async fn an_empty_namespace_goes_at_once_and_can_be_recreated() {
    let server = server().await;
    let client = client(&server);
    namespace(&client, "empty", &[]).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete("empty", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(namespaces.get_opt("empty").await.expect("get").is_none());
    namespace(&client, "empty", &[]).await;
}

#[tokio::test]
async fn a_foreign_finalizer_holds_the_namespace_until_finalize_removes_it() {
    let server = server().await;
    let client = client(&server);
    namespace(&client, "held", &["example.com/keep"]).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete("held", &DeleteParams::default())
        .await
        .expect("delete");
    let ns = namespaces.get("held").await.expect("held");
    assert_eq!(
        ns.spec.as_ref().and_then(|s| s.finalizers.clone()),
        Some(vec!["example.com/keep".to_owned()]),
        "the deleter removed its own finalizer only"
    );
    assert_eq!(
        condition(&ns, "NamespaceContentRemaining").1,
        "ContentRemoved"
    );

    // An invalid finalizer: 422 with the field path of the list entry.
    let mut bad = ns.clone();
    bad.spec = Some(k8s_openapi::api::core::v1::NamespaceSpec {
        finalizers: Some(vec!["Foo".into()]),
    });
    let err = api_error(
        namespaces
            .replace_subresource("finalize", "held", &PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Namespace \"held\" is invalid: spec.finalizers[0]: Invalid value: \"Foo\": name is neither a standard finalizer name nor is it fully qualified"
    );

    let mut done = ns.clone();
    done.spec = Some(k8s_openapi::api::core::v1::NamespaceSpec {
        finalizers: Some(vec![]),
    });
    namespaces
        .replace_subresource("finalize", "held", &PostParams::default(), &done)
        .await
        .expect("finalize");
    assert!(
        namespaces.get_opt("held").await.expect("get").is_none(),
        "no finalizer left: the namespace goes"
    );
}

#[tokio::test]
async fn finalize_changes_spec_finalizers_and_not_the_status() {
    let server = server().await;
    let client = client(&server);
    namespace(&client, "live", &[]).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = namespaces.get("live").await.expect("get");
    ns.spec = Some(k8s_openapi::api::core::v1::NamespaceSpec {
        finalizers: Some(vec!["kubernetes".into(), "example.com/x".into()]),
    });
    ns.status = Some(k8s_openapi::api::core::v1::NamespaceStatus {
        phase: Some("Terminating".into()),
        ..Default::default()
    });
    let out: Namespace = namespaces
        .replace_subresource("finalize", "live", &PostParams::default(), &ns)
        .await
        .expect("finalize");
    assert_eq!(
        out.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_owned(), "example.com/x".to_owned()])
    );
    assert_eq!(out.status.and_then(|s| s.phase).as_deref(), Some("Active"));

    // A plain update cannot change spec.finalizers.
    let mut plain = namespaces.get("live").await.expect("get");
    plain.spec = Some(k8s_openapi::api::core::v1::NamespaceSpec {
        finalizers: Some(vec![]),
    });
    let out = namespaces
        .replace("live", &PostParams::default(), &plain)
        .await
        .expect("update");
    assert_eq!(
        out.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_owned(), "example.com/x".to_owned()])
    );
}

#[tokio::test]
async fn discovery_lists_finalize_and_status() {
    let server = server().await;
    let (code, _, list) = support::raw(&server, "GET", "/api/v1", &[], "").await;
    assert_eq!(code, 200);
    let find = |name: &str| {
        list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("{name} in discovery"))
    };
    assert_eq!(
        find("namespaces/finalize"),
        json!({"name": "namespaces/finalize", "singularName": "", "namespaced": false, "kind": "Namespace", "verbs": ["update"]})
    );
    assert_eq!(
        find("namespaces/status")["verbs"],
        json!(["get", "patch", "update"])
    );
    let (code, _, _) = support::raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/finalize",
        &[],
        "",
    )
    .await;
    assert_eq!(code, 405, "finalize is update-only");
}
