//! PATCH through kube-rs, in-process: merge, JSON, strategic merge and
//! server-side apply (create, conflicts, force), `/status` patches, and
//! `managedFields` recorded on every write.

mod support;

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;
use support::*;

async fn setup() -> (exitplan_apiserver::server::Server, Api<Pod>) {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let pp = PostParams {
        field_manager: Some("creator".into()),
        ..Default::default()
    };
    pods.create(&pp, &serde_json::from_value(pod("p")).expect("pod"))
        .await
        .expect("create");
    (server, pods)
}

fn managers(p: &Pod) -> Vec<(String, String)> {
    p.metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn merge_json_and_strategic_patches() {
    let (server, pods) = setup().await;
    let created = pods.get("p").await.expect("get");
    assert_eq!(
        managers(&created),
        [("creator".to_owned(), "Update".to_owned())]
    );

    let pp = PatchParams::default();
    let p = pods
        .patch(
            "p",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "front"}}})),
        )
        .await
        .expect("merge");
    assert_eq!(
        p.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("tier"))
            .map(String::as_str),
        Some("front")
    );

    let (code, _, body) = raw(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        &[("content-type", "application/json-patch+json")],
        r#"[{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}]"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["metadata"]["annotations"]["a"], "b");
    assert_eq!(body["metadata"]["labels"]["tier"], "front");

    // A failing `test` operation is a 422.
    let (code, _, body) = raw(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        &[("content-type", "application/json-patch+json")],
        r#"[{"op":"test","path":"/metadata/name","value":"q"}]"#,
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")));

    // Strategic merge: containers merge by name.
    let p = pods
        .patch(
            "p",
            &pp,
            &Patch::Strategic(
                json!({"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}}),
            ),
        )
        .await
        .expect("strategic");
    let containers = p.spec.expect("spec").containers;
    assert_eq!(containers.len(), 1);
    assert_eq!(containers[0].image.as_deref(), Some("busybox:2"));

    // Status patches cannot change the spec (pods' status strategy keeps
    // the stored spec; labels are not reset upstream either).
    let p = pods
        .patch_status(
            "p",
            &pp,
            &Patch::Merge(
                json!({"status": {"phase": "Running"}, "spec": {"activeDeadlineSeconds": 5}}),
            ),
        )
        .await
        .expect("status patch");
    assert_eq!(p.status.and_then(|s| s.phase).as_deref(), Some("Running"));
    assert_eq!(p.spec.and_then(|s| s.active_deadline_seconds), None);
}

#[tokio::test(start_paused = true)]
async fn server_side_apply_creates_owns_and_conflicts() {
    let server = server().await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server));
    let applied = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}
    });
    let p = pods
        .patch("a", &PatchParams::apply("alice"), &Patch::Apply(&applied))
        .await
        .expect("apply creates");
    assert_eq!(managers(&p), [("alice".to_owned(), "Apply".to_owned())]);

    let mut other = applied.clone();
    other["spec"]["containers"][0]["image"] = "busybox:2".into();
    let e = api_error(
        pods.patch("a", &PatchParams::apply("bob"), &Patch::Apply(&other))
            .await
            .expect_err("conflict"),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    let causes = e.details.expect("details").causes;
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    let p = pods
        .patch(
            "a",
            &PatchParams::apply("bob").force(),
            &Patch::Apply(&other),
        )
        .await
        .expect("force");
    assert_eq!(
        p.spec.expect("spec").containers[0].image.as_deref(),
        Some("busybox:2")
    );

    // Apply needs a field manager.
    let (code, _, body) = raw(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/pods/a",
        &[("content-type", "application/apply-patch+yaml")],
        &applied.to_string(),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
}
