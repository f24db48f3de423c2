//! A malformed quantity is refused at decode on every write path, as
//! kube-apiserver's decoder does (`Quantity.UnmarshalJSON`): 400 BadRequest
//! `<Kind> in version "<v>" cannot be handled as a <Kind>: quantities must
//! match the regular expression '…'`, and nothing is stored.

mod support;

use serde_json::{Value, json};
use support::*;

const PODS: &str = "/api/v1/namespaces/default/pods";
const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
const FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

fn assert_bad_quantity(code: u16, out: &Value, kind: &str, version: &str, detail: &str) {
    assert_eq!(code, 400, "{out}");
    assert_eq!(out["reason"], "BadRequest", "{out}");
    assert_eq!(
        out["message"],
        format!("{kind} in version \"{version}\" cannot be handled as a {kind}: {detail}"),
        "{out}"
    );
}

fn with_resources(name: &str, resources: Value) -> Value {
    let mut p = pod(name);
    p["spec"]["containers"][0]["resources"] = resources;
    p
}

#[tokio::test(start_paused = true)]
async fn malformed_pod_quantities_are_refused_on_create() {
    let server = server().await;
    for (name, body, detail) in [
        (
            "limits",
            with_resources("limits", json!({"limits": {"cpu": "abc"}})),
            FORMAT,
        ),
        (
            "requests",
            with_resources("requests", json!({"requests": {"memory": "1Mb"}})),
            FORMAT,
        ),
        (
            "suffix",
            with_resources("suffix", json!({"requests": {"memory": "1kk"}})),
            "unable to parse quantity's suffix",
        ),
        (
            "overhead",
            {
                let mut p = pod("overhead");
                p["spec"]["overhead"] = json!({"cpu": "lots"});
                p
            },
            FORMAT,
        ),
        (
            "podlevel",
            {
                let mut p = pod("podlevel");
                p["spec"]["resources"] = json!({"requests": {"cpu": ""}});
                p
            },
            FORMAT,
        ),
        (
            "sizelimit",
            {
                let mut p = pod("sizelimit");
                p["spec"]["volumes"] = json!([{"name": "v", "emptyDir": {"sizeLimit": "big"}}]);
                p
            },
            FORMAT,
        ),
    ] {
        let (code, out) = send(&server, "POST", PODS, "application/json", &body).await;
        assert_bad_quantity(code, &out, "Pod", "v1", detail);
        let (code, _) = send(
            &server,
            "GET",
            &format!("{PODS}/{name}"),
            "application/json",
            &json!({}),
        )
        .await;
        assert_eq!(code, 404, "{name} was stored");
    }
    // Whitespace around a quantity is trimmed, as upstream's decoder does.
    let ok = with_resources("spaced", json!({"limits": {"cpu": " 1 "}}));
    let (code, out) = send(&server, "POST", PODS, "application/json", &ok).await;
    assert_eq!(code, 201, "{out}");
}

#[tokio::test(start_paused = true)]
async fn malformed_quantities_are_refused_on_update_and_every_patch() {
    let server = server().await;
    let (code, out) = send(&server, "POST", PODS, "application/json", &pod("p")).await;
    assert_eq!(code, 201, "{out}");

    let mut put = out.clone();
    put["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": "abc"}});
    let (code, out) = send(
        &server,
        "PUT",
        &format!("{PODS}/p"),
        "application/json",
        &put,
    )
    .await;
    assert_bad_quantity(code, &out, "Pod", "v1", FORMAT);

    let uri = format!("{PODS}/p");
    let merge = json!({"spec": {"overhead": {"cpu": "abc"}}});
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/merge-patch+json",
        &merge,
    )
    .await;
    assert_bad_quantity(code, &out, "Pod", "v1", FORMAT);

    let strategic =
        json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "abc"}}}]}});
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/strategic-merge-patch+json",
        &strategic,
    )
    .await;
    assert_bad_quantity(code, &out, "Pod", "v1", FORMAT);

    let json_patch = json!([{"op": "add", "path": "/spec/containers/0/resources", "value": {"requests": {"cpu": "abc"}}}]);
    let (code, out) = send(
        &server,
        "PATCH",
        &uri,
        "application/json-patch+json",
        &json_patch,
    )
    .await;
    assert_bad_quantity(code, &out, "Pod", "v1", FORMAT);

    let status = json!({"status": {"containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 0, "allocatedResources": {"cpu": "abc"}}]}});
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{uri}/status"),
        "application/merge-patch+json",
        &status,
    )
    .await;
    assert_bad_quantity(code, &out, "Pod", "v1", FORMAT);

    let apply = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "abc"}}}]}});
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{uri}?fieldManager=m&force=true"),
        "application/apply-patch+yaml",
        &apply,
    )
    .await;
    assert_bad_quantity(code, &out, "Pod", "v1", FORMAT);

    // Nothing of it was stored.
    let (code, out) = send(&server, "GET", &uri, "application/json", &json!({})).await;
    assert_eq!(code, 200);
    assert!(out["spec"]["overhead"].is_null(), "{out}");
    assert!(
        out["spec"]["containers"][0]["resources"]
            .get("limits")
            .is_none(),
        "{out}"
    );
}

#[tokio::test(start_paused = true)]
async fn malformed_job_template_quantities_are_refused() {
    let server = server().await;
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "i", "resources": {"limits": {"memory": "1 Gi"}}}]
        }}}
    });
    let (code, out) = send(&server, "POST", JOBS, "application/json", &job).await;
    assert_bad_quantity(code, &out, "Job", "v1", FORMAT);
    let (code, _) = send(
        &server,
        "GET",
        &format!("{JOBS}/j"),
        "application/json",
        &json!({}),
    )
    .await;
    assert_eq!(code, 404);
}
