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

/// Patch failures as kube-apiserver answers them, case by case
/// (`handlers/patch.go`): `(content type, body, code, reason, message)`.
/// Strategic merge errors that are `mergepatch` sentinels are 400
/// `BadRequest`; every other library error is a plain Go error, which
/// `ErrorToAPIStatus` answers 500 with no reason and the library's text; an
/// undecodable body is Go's JSON syntax error (400); a patch may not rename
/// the object (`checkName`, 400); a failing JSON Patch operation is the
/// generic 422. Nothing is stored by any of them.
#[tokio::test(start_paused = true)]
async fn patch_errors_match_upstream() {
    const SMP: &str = "application/strategic-merge-patch+json";
    const MERGE: &str = "application/merge-patch+json";
    const JSON: &str = "application/json-patch+json";
    let (server, pods) = setup().await;
    let before = pods.get("p").await.expect("get");
    let cases: &[(&str, &str, u16, Option<&str>, &str)] = &[
        (
            SMP,
            r#"{"$patch":"bogus"}"#,
            500,
            None,
            "unknown patch type: bogus in map: map[$patch:bogus]",
        ),
        (
            SMP,
            r#"{"metadata":{"labels":{"$patch":null}}}"#,
            500,
            None,
            "unknown patch type: %!s(<nil>) in map: map[$patch:<nil>]",
        ),
        (
            SMP,
            r#"{"spec":{"containers":[{"image":"q"}]}}"#,
            500,
            None,
            "map: map[image:q] does not contain declared merge key: name",
        ),
        (
            SMP,
            r#"{"spec":{"$setElementOrder/containers":"garbage"}}"#,
            500,
            None,
            "expected a []interface {}, but received a string",
        ),
        (
            SMP,
            r#"{"spec":{"$setElementOrder/containers":["c"]}}"#,
            500,
            None,
            "value for key 0 is not a map.",
        ),
        (
            SMP,
            r#"{"spec":{"$setElementOrder/bogus":[]}}"#,
            500,
            None,
            r#"unable to find api field in struct PodSpec for the json field "bogus""#,
        ),
        (
            SMP,
            r#"{"spec":{"$setElementOrder/nodeName":[]}}"#,
            500,
            None,
            "expected slice or array type, but got: struct",
        ),
        (
            SMP,
            r#"{"metadata":{"labels":{"$setElementOrder/x":[]}}}"#,
            500,
            None,
            "expected slice or array type, but got: map",
        ),
        (
            SMP,
            r#"{"spec":{"$setElementOrdercontainers":[]}}"#,
            400,
            Some("BadRequest"),
            "invalid patch format of setElementOrder list",
        ),
        (
            SMP,
            r#"{"spec":{"$retainKeys":"containers"}}"#,
            400,
            Some("BadRequest"),
            "invalid patch format of retainKeys",
        ),
        (
            SMP,
            r#"{"metadata":{"$deleteFromPrimitiveListfinalizers":["x"]}}"#,
            400,
            Some("BadRequest"),
            "invalid patch format of primitive list",
        ),
        (
            SMP,
            "barbaz",
            400,
            Some("BadRequest"),
            "invalid character 'b' looking for beginning of value",
        ),
        (
            SMP,
            "[1]",
            400,
            Some("BadRequest"),
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        (
            SMP,
            r#"{"$patch":"delete"}"#,
            400,
            Some("BadRequest"),
            "the name of the object () does not match the name on the URL (p)",
        ),
        (
            MERGE,
            r#"{"metadata":{"name":"q"}}"#,
            400,
            Some("BadRequest"),
            "the name of the object (q) does not match the name on the URL (p)",
        ),
        (
            JSON,
            r#"[{"op":"replace","path":"/metadata/name","value":"q"}]"#,
            400,
            Some("BadRequest"),
            "the name of the object (q) does not match the name on the URL (p)",
        ),
        (
            MERGE,
            "barbaz",
            400,
            Some("BadRequest"),
            "Invalid JSON Patch",
        ),
        (
            JSON,
            "invalid json patch",
            400,
            Some("BadRequest"),
            "invalid character 'i' looking for beginning of value",
        ),
        (
            JSON,
            r#"[{"op":"test","value":"podA","path":"/invalid/path"}]"#,
            422,
            Some("Invalid"),
            "the server rejected our request due to an error in our request",
        ),
    ];
    for (content_type, body, code, reason, message) in cases {
        let (got, _, status) = raw(
            &server,
            "PATCH",
            "/api/v1/namespaces/default/pods/p",
            &[("content-type", content_type)],
            body,
        )
        .await;
        let case = format!("{content_type} {body}");
        assert_eq!(got, *code, "{case}: {status}");
        assert_eq!(status["kind"], "Status", "{case}");
        assert_eq!(status["code"], *code, "{case}");
        assert_eq!(status["reason"].as_str(), *reason, "{case}");
        assert_eq!(status["message"], *message, "{case}");
        // Plain Go errors and BadRequests carry no details; the generic
        // 422 carries empty ones.
        let details = if *code == 422 { json!({}) } else { json!(null) };
        assert_eq!(status["details"], details, "{case}");
    }
    let after = pods.get("p").await.expect("get");
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
}

/// A patch whose result does not decode into the kind's type (a field of
/// the wrong type) is 422 `Invalid` with one cause on `patch`, as
/// `applyPatchToObject` / `jsonPatcher` answer: the value is Go's `%+v` of
/// a strategic merge patch, the patched object for JSON and merge patches.
#[tokio::test(start_paused = true)]
async fn undecodable_patch_results_are_invalid() {
    let (server, _pods) = setup().await;
    for (content_type, body, value) in [
        (
            "application/strategic-merge-patch+json",
            r#"{"spec":{"terminationGracePeriodSeconds":"x"}}"#,
            Some(r#""map[spec:map[terminationGracePeriodSeconds:x]]""#),
        ),
        (
            "application/merge-patch+json",
            r#"{"spec":{"terminationGracePeriodSeconds":"x"}}"#,
            None,
        ),
        (
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/metadata/labels","value":["x"]}]"#,
            None,
        ),
    ] {
        let (code, _, status) = raw(
            &server,
            "PATCH",
            "/api/v1/namespaces/default/pods/p",
            &[("content-type", content_type)],
            body,
        )
        .await;
        assert_eq!(
            (code, status["reason"].as_str()),
            (422, Some("Invalid")),
            "{status}"
        );
        let message = status["message"].as_str().unwrap_or_default();
        let prefix = format!(
            " \"\" is invalid: patch: Invalid value: {}",
            value.unwrap_or("\"{")
        );
        assert!(message.starts_with(&prefix), "{content_type}: {message}");
        let causes = &status["details"]["causes"];
        assert_eq!(causes[0]["field"], "patch", "{status}");
        assert_eq!(causes[0]["reason"], "FieldValueInvalid", "{status}");
        assert_eq!(
            format!(
                " \"\" is invalid: patch: {}",
                causes[0]["message"].as_str().unwrap_or_default()
            ),
            message
        );
        assert!(status["details"].get("kind").is_none(), "{status}");
    }
    // A merge patch that is an array replaces the whole document, whose
    // apiVersion and kind then cannot be read.
    let (code, _, status) = raw(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        &[("content-type", "application/merge-patch+json")],
        "[1]",
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        r#" "" is invalid: patch: Invalid value: "[1]": couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#
    );
}

/// The `$setElementOrder` lists kubectl sends name list fields the kinds'
/// definitions know, at every level (the object, its metadata, list items).
#[tokio::test(start_paused = true)]
async fn set_element_order_of_known_list_fields() {
    let (server, _pods) = setup().await;
    let (code, _, body) = raw(
        &server,
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        &[("content-type", "application/strategic-merge-patch+json")],
        r#"{"metadata":{"$setElementOrder/finalizers":["a.example.com/f"],"finalizers":["a.example.com/f"]},
            "spec":{"$setElementOrder/containers":[{"name":"c"}],
                    "containers":[{"name":"c","image":"busybox:2",
                                   "$setElementOrder/env":[]}]}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["containers"][0]["image"], "busybox:2");
    assert_eq!(body["metadata"]["finalizers"][0], "a.example.com/f");
}

/// The newly served kinds patch with their own merge keys: `kubectl set
/// image` on a Deployment merges the container by name; server-side apply
/// keys Service ports on port and protocol, so two managers own the TCP
/// and UDP entries of one port side by side.
#[tokio::test(start_paused = true)]
async fn new_kinds_merge_by_their_keys() {
    let server = server().await;
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "nginx", "image": "nginx:1.24"},
                    {"name": "sidecar", "image": "envoy:1"}
                ]}
            }
        }
    });
    let (code, _, body) = raw(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        &[("content-type", "application/json")],
        &deployment.to_string(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let (code, _, body) = raw(
        &server,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web",
        &[("content-type", "application/strategic-merge-patch+json")],
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}}}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let containers = &body["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "nginx:1.25");
    assert_eq!(containers[1]["name"], "sidecar");

    for (manager, protocol) in [("a", "TCP"), ("b", "UDP")] {
        let (code, _, body) = raw(
            &server,
            "PATCH",
            &format!("/api/v1/namespaces/default/services/dns?fieldManager={manager}"),
            &[("content-type", "application/apply-patch+yaml")],
            &format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: dns}}\nspec:\n  ports:\n  - {{port: 53, protocol: {protocol}, name: dns-{}}}\n",
                protocol.to_lowercase()
            ),
        )
        .await;
        assert!(code == 200 || code == 201, "{manager}: {code} {body}");
    }
    let (_, _, body) = raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/services/dns",
        &[],
        "",
    )
    .await;
    let ports: Vec<(i64, String)> = body["spec"]["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .map(|p| {
            (
                p["port"].as_i64().unwrap_or_default(),
                p["protocol"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(ports, [(53, "TCP".to_owned()), (53, "UDP".to_owned())]);
}
