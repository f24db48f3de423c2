//! The real `kubectl` (v1.32, on PATH) against the server over HTTPS with
//! the bearer token, on what depends on the OpenAPI documents and their
//! formats: `kubectl apply` of a kind the server does not serve reports the
//! missing mapping (client-side validation reads `/openapi/v2` as
//! protobuf first), client-side apply of served kinds still patches with
//! `last-applied-configuration`, `kubectl explain` (v3 and v2), and
//! `--validate=strict` of an unknown field.

mod support;

use serde_json::Value;

use support::https::Cluster;

const RUNTIME_CLASS: &str = "apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: web
handler: runc
";

/// kube-apiserver's answer for a kind it does not serve is kubectl's
/// mapping error; before `/openapi/v2` was served as protobuf, kubectl
/// stopped at client-side validation with "the server was unable to
/// respond with a content type that the client supports".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_of_an_unserved_kind_reports_the_missing_mapping() {
    let c = Cluster::start("unserved").await;
    let manifest = c.file("runtimeclass.yaml", RUNTIME_CLASS);
    for validate in ["--validate=true", "--validate=strict"] {
        let stderr = c.fails(&["apply", validate, "-f", &manifest]).await;
        let want = format!(
            "error: resource mapping not found for name: \"web\" namespace: \"\" from \"{manifest}\": no matches for kind \"RuntimeClass\" in version \"node.k8s.io/v1\"\nensure CRDs are installed first\n"
        );
        assert_eq!(stderr, want, "{validate}");
    }
    let stderr = c.fails(&["create", "-f", &manifest]).await;
    assert!(
        stderr.contains("no matches for kind \"RuntimeClass\" in version \"node.k8s.io/v1\""),
        "{stderr}"
    );
    c.stop().await;
}

fn pod(image: &str, tier: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels: {{app: web, tier: {tier}}}
spec:
  containers:
  - name: main
    image: {image}
"
    )
}

fn job(parallelism: u32) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: j1
  labels: {{team: a}}
spec:
  parallelism: {parallelism}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
"
    )
}

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The object's last-applied-configuration annotation, parsed.
fn last_applied(obj: &Value) -> Value {
    let text = obj["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .unwrap_or_else(|| panic!("no {LAST_APPLIED}: {obj}"));
    serde_json::from_str(text).expect("last-applied JSON")
}

/// Client-side apply of served kinds: create, then a patch of the changed
/// fields that also records the new last-applied configuration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_apply_of_served_kinds_creates_then_patches() {
    let c = Cluster::start("apply").await;
    let manifest = c.file("pod.yaml", &pod("nginx:1", "front"));
    let out = c.ok(&["apply", "-f", &manifest], None).await;
    assert_eq!(out, "pod/web-0 created\n");
    let manifest = c.file("pod.yaml", &pod("nginx:2", "back"));
    let out = c.ok(&["apply", "-f", &manifest], None).await;
    assert_eq!(out, "pod/web-0 configured\n");
    let live = c.json(&["get", "pod", "web-0", "-o", "json"]).await;
    assert_eq!(live["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(live["metadata"]["labels"]["tier"], "back");
    let applied = last_applied(&live);
    assert_eq!(applied["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(applied["metadata"]["labels"]["tier"], "back");
    let out = c.ok(&["apply", "-f", &manifest], None).await;
    assert_eq!(out, "pod/web-0 unchanged\n");

    let manifest = c.file("job.yaml", &job(1));
    assert_eq!(
        c.ok(&["apply", "-f", &manifest], None).await,
        "job.batch/j1 created\n"
    );
    let manifest = c.file("job.yaml", &job(2));
    assert_eq!(
        c.ok(&["apply", "-f", &manifest], None).await,
        "job.batch/j1 configured\n"
    );
    let live = c.json(&["get", "job", "j1", "-o", "json"]).await;
    assert_eq!(live["spec"]["parallelism"], 2);
    assert_eq!(last_applied(&live)["spec"]["parallelism"], 2);
    c.stop().await;
}

/// `kubectl explain` reads OpenAPI v3 by default and the v2 protobuf
/// document with `--output plaintext-openapiv2` (which failed with 406
/// before v2 was served as protobuf).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_reads_openapi_v3_and_v2() {
    let c = Cluster::start("explain").await;
    // (output, what `explain pod.spec` prints, what `explain` of a Job
    // podFailurePolicy rule prints): the two templates differ.
    let cases = [
        (
            "plaintext",
            [
                "KIND:       Pod",
                "VERSION:    v1",
                "containers\t<[]Container> -required-",
                "evictionResponders\t<[]EvictionResponder>",
            ],
            ["GROUP:      batch", "action\t<string> -required-"],
        ),
        (
            "plaintext-openapiv2",
            [
                "KIND:     Pod",
                "VERSION:  v1",
                "containers\t<[]Object> -required-",
                "evictionResponders\t<[]Object>",
            ],
            ["VERSION:  batch/v1", "action\t<string> -required-"],
        ),
    ];
    for (output, pod_wants, job_wants) in cases {
        let out = c
            .ok(
                &["explain", "pod.spec", &format!("--output={output}")],
                None,
            )
            .await;
        for want in pod_wants {
            assert!(out.contains(want), "{output} lacks {want:?}:\n{out}");
        }
        let out = c
            .ok(
                &[
                    "explain",
                    "jobs.spec.podFailurePolicy.rules",
                    &format!("--output={output}"),
                ],
                None,
            )
            .await;
        for want in job_wants {
            assert!(out.contains(want), "{output} lacks {want:?}:\n{out}");
        }
        // A map (`additionalProperties` in the schema).
        let out = c
            .ok(
                &["explain", "pod.metadata", &format!("--output={output}")],
                None,
            )
            .await;
        assert!(
            out.contains("labels\t<map[string]string>"),
            "{output}:\n{out}"
        );
    }
    c.stop().await;
}

/// `--validate=strict` of a pod with an unknown field: the server validates
/// (its PATCH/POST operations advertise `fieldValidation`) and refuses, with
/// kube-apiserver's strict decoding error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_validation_refuses_an_unknown_field() {
    let c = Cluster::start("strict").await;
    let manifest = c.file(
        "pod.yaml",
        &pod("nginx:1", "front").replace("  - name: main\n", "  - name: main\n    bogus: 1\n"),
    );
    let stderr = c
        .fails(&["apply", "--validate=strict", "-f", &manifest])
        .await;
    assert_eq!(
        stderr,
        format!(
            "Error from server (BadRequest): error when creating \"{manifest}\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.containers[0].bogus\"\n"
        )
    );
    let out = c.kubectl(&["get", "pod", "web-0"], None).await;
    assert!(!out.status.success(), "nothing was stored");
    c.stop().await;
}
