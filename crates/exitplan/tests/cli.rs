//! End-to-end tests of the `exitplan` binary: exit codes and output contracts.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn exitplan(args: &[&str], stdin: Option<&str>) -> Output {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut child = Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn exitplan");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().expect("run exitplan")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn valid_object_prints_valid_and_exits_zero() {
    for file in [
        "examples/eviction-request.yaml",
        "examples/pod-with-responders.yaml",
    ] {
        let o = exitplan(&["validate", "-f", file], None);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
        assert_eq!(stdout(&o), "valid\n");
    }
}

#[test]
fn invalid_object_prints_one_upstream_error_per_line_and_exits_one() {
    let o = exitplan(
        &["validate", "-f", "examples/eviction-request-invalid.yaml"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        concat!(
            "spec.target.pod.uid: Invalid value: \"not-a-uid\": must be a lowercase UUID in 8-4-4-4-12 format\n",
            "spec.requester: Invalid value: \"k8s.io/drain\": domain names *.k8s.io, *.kubernetes.io are reserved\n",
            "spec.intent: Unsupported value: \"Evict\": supported values: \"Eviction\", \"Withdrawn\"\n",
        )
    );
}

#[test]
fn json_output_is_the_422_status() {
    let o = exitplan(
        &[
            "validate",
            "-f",
            "examples/eviction-request-invalid.yaml",
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let status: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 422);
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["kind"], "EvictionRequest");
    assert_eq!(
        status["details"]["causes"].as_array().map(Vec::len),
        Some(3)
    );
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.starts_with(
        "EvictionRequest.lifecycle.k8s.io \"bad-request\" is invalid: [spec.target.pod.uid"
    ));
}

#[test]
fn json_output_of_a_valid_create_is_the_stored_object() {
    let o = exitplan(
        &[
            "validate",
            "-f",
            "examples/eviction-request.yaml",
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let obj: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(obj["metadata"]["generation"], 1, "create sets generation 1");
}

#[test]
fn status_updates_are_judged_against_the_old_object_and_the_given_clock() {
    let args = |new: &'static str, now: &'static str| {
        [
            "validate",
            "-f",
            new,
            "--old",
            "examples/eviction-status/old.yaml",
            "--subresource",
            "status",
            "--now",
            now,
        ]
    };
    let ok = exitplan(
        &args(
            "examples/eviction-status/heartbeat.yaml",
            "2026-11-29T10:10:05Z",
        ),
        None,
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    // The heartbeat is 40 s in the past at this clock: outside the 30 s window.
    let late = exitplan(
        &args(
            "examples/eviction-status/heartbeat.yaml",
            "2026-11-29T10:10:40Z",
        ),
        None,
    );
    assert_eq!(late.status.code(), Some(1));
    assert!(
        stdout(&late).contains("status.responders[0].heartbeatTime"),
        "{}",
        stdout(&late)
    );

    let early = exitplan(
        &args(
            "examples/eviction-status/interrupt-too-early.yaml",
            "2026-11-29T10:10:00Z",
        ),
        None,
    );
    assert_eq!(early.status.code(), Some(1));
    assert_eq!(
        stdout(&early),
        concat!(
            "status.targetResponders[0].state: Forbidden: must stay Active because the responder is in progress and it should report status.responders.heartbeatTime or status.responders.completionTime\n",
            "status.targetResponders[1].state: Invalid value: \"Inactive\": must be one of: Active, because this responder is next in line\n",
        )
    );
}

#[test]
fn stdin_is_read_with_a_dash() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/eviction-request.yaml"
    ))
    .expect("example");
    let o = exitplan(&["validate", "-f", "-"], Some(&text));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn unusable_input_exits_two_with_one_line() {
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (
            &["validate", "-f", "-"],
            Some("apiVersion: v1\nkind: Service\n"),
            "unsupported kind Service (v1)",
        ),
        (
            &["validate", "-f", "-"],
            Some("a: ["),
            "not valid YAML or JSON",
        ),
        (
            &["validate", "-f", "-"],
            Some("just: a map\n"),
            "not a Kubernetes object",
        ),
        (&["validate", "-f", "-"], Some(""), "no object found"),
        (
            &["validate", "-f", "-"],
            Some("apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\n"),
            "expected one object, found 2 documents",
        ),
        (
            &["validate", "-f", "-"],
            Some("apiVersion: v1\nkind: Pod\nspec: 5\n"),
            "invalid type",
        ),
        (
            &["validate", "-f", "-"],
            Some(
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: i, resources: {limits: {cpu: abc}}}\n",
            ),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            &["validate", "-f", "does/not/exist.yaml"],
            None,
            "cannot read",
        ),
        (
            &[
                "validate",
                "-f",
                "examples/pod-with-responders.yaml",
                "--old",
                "examples/eviction-request.yaml",
            ],
            None,
            "is kind EvictionRequest but",
        ),
    ];
    for (args, input, want) in cases {
        let o = exitplan(args, *input);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn jobs_and_pdbs_are_validated_like_the_api_server_does() {
    let ok = exitplan(&["validate", "-f", "examples/job/job.yaml"], None);
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    let pdb = exitplan(&["validate", "-f", "examples/pdb.yaml"], None);
    assert_eq!(pdb.status.code(), Some(0), "{}", stdout(&pdb));
    let bad = exitplan(&["validate", "-f", "examples/job/job-invalid.yaml"], None);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        stdout(&bad),
        concat!(
            "spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator\n",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [5,0,3]: must be ordered\n",
            "spec.podFailurePolicy.rules[1]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported\n",
            "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified\n",
        )
    );
}

#[test]
fn create_fills_system_fields_before_validation() {
    let input = "apiVersion: lifecycle.k8s.io/v1alpha1\nkind: EvictionRequest\nmetadata:\n  generateName: drain-\n  namespace: default\nspec:\n  requester: a.io/b\n  intent: Eviction\n  target:\n    pod:\n      name: p\n      uid: 6b1f3f4e-2c4d-4b8a-9e4f-1d2c3b4a5f60\n";
    let run = || {
        exitplan(
            &[
                "validate",
                "-f",
                "-",
                "-o",
                "json",
                "--now",
                "2026-11-29T10:00:00Z",
            ],
            Some(input),
        )
    };
    let (a, b) = (run(), run());
    assert_eq!(a.status.code(), Some(0), "{}", stdout(&a));
    let obj: serde_json::Value = serde_json::from_slice(&a.stdout).expect("json");
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    assert!(
        name.starts_with("drain-") && name.len() == 11,
        "generated name {name}"
    );
    assert_eq!(obj["metadata"]["creationTimestamp"], "2026-11-29T10:00:00Z");
    assert_eq!(obj["metadata"]["uid"].as_str().map(str::len), Some(36));
    assert_eq!(a.stdout, b.stdout, "offline admission is deterministic");
}

#[test]
fn explain_job_names_the_rule_for_each_failed_pod() {
    let args = [
        "explain",
        "job",
        "-f",
        "examples/job/job.yaml",
        "--pods",
        "examples/job/pods-exit-42.yaml",
        "--now",
        "2026-11-29T10:06:00Z",
    ];
    let o = exitplan(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("Job default/train\n"), "{text}");
    assert!(
        text.contains(
            "train-0   Failed   -       0      Ignore    no        rule 0 (Ignore) — ignored"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "train-2   Failed   -       1      FailJob   yes       rule 1 (FailJob) — counted"
        ),
        "{text}"
    );
    assert!(
        text.contains("FailureTarget   PodFailurePolicy   Container main for pod default/train-2 failed with exit code 42 matching FailJob rule at index 1"),
        "{text}"
    );

    let json = exitplan(&[&args[..], &["-o", "json"]].concat(), None);
    let e: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(e["failedPods"].as_array().map(Vec::len), Some(3));
    assert_eq!(e["failedPods"][0]["action"], "Ignore");
    assert_eq!(e["counters"]["ignored"], 1);
    // train-1 and train-2 count, and the running train-3 is deleted and counted (case 140).
    assert_eq!(e["counters"]["failed"], 3);
    assert_eq!(e["decision"]["state"], "FailureTarget");
    assert_eq!(e["decision"]["reason"], "PodFailurePolicy");

    let running = exitplan(
        &[
            "explain",
            "job",
            "-f",
            "examples/job/job.yaml",
            "--pods",
            "examples/job/pods.yaml",
        ],
        None,
    );
    let text = stdout(&running);
    assert!(text.contains("1        0           1         -"), "{text}");
    assert!(text.contains("Running    -        -"), "{text}");
}

#[test]
fn explain_rejects_non_jobs_and_non_pods() {
    let o = exitplan(
        &[
            "explain",
            "job",
            "-f",
            "examples/pdb.yaml",
            "--pods",
            "examples/job/pods.yaml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unsupported kind PodDisruptionBudget"),
        "{}",
        stderr(&o)
    );
    let o = exitplan(
        &[
            "explain",
            "job",
            "-f",
            "examples/job/job.yaml",
            "--pods",
            "examples/pdb.yaml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn explain_job_refuses_a_job_the_api_server_would_reject() {
    let args = [
        "explain",
        "job",
        "-f",
        "examples/job/job-invalid.yaml",
        "--pods",
        "examples/job/pods.yaml",
    ];
    let o = exitplan(&args, None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(stdout(&o), "", "nothing is explained");
    let err = stderr(&o);
    assert!(
        err.starts_with(
            r#"error: examples/job/job-invalid.yaml: Job.batch "bad-policy" is invalid: ["#
        ),
        "{err}"
    );
    assert!(
        err.contains(
            r#"spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified"#
        ),
        "{err}"
    );
}

#[test]
fn pods_are_validated_with_upstreams_pod_rules() {
    let bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers:\n  - {name: c, image: busybox}\n  - {name: c, image: busybox, ports: [{containerPort: 70000}]}\n";
    let o = exitplan(&["validate", "-f", "-"], Some(bad));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        concat!(
            "spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive\n",
            "spec.containers[1].name: Duplicate value: \"c\"\n",
        )
    );
    let ok = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers:\n  - {name: c, image: busybox}\n";
    let o = exitplan(&["validate", "-f", "-"], Some(ok));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A kubeconfig at `dir/name` with `body`; returns its path.
fn kubeconfig(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).expect("write kubeconfig");
    path.display().to_string()
}

/// A kubeconfig whose server refuses connections (port 1 on loopback).
const REFUSING: &str = "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: \"https://127.0.0.1:1\"}
users:
- name: u
  user: {token: abc}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
";

#[test]
fn kubeconfig_and_connection_errors_are_one_line_naming_file_or_server() {
    let dir = std::env::temp_dir().join(format!("exitplan-cli-kc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let d = dir.display();
    let missing = dir.join("missing").display().to_string();
    let bad = kubeconfig(&dir, "bad", "garbage: [\n");
    let no_ctx = kubeconfig(
        &dir,
        "noctx",
        "apiVersion: v1\nkind: Config\ncurrent-context: nope\n",
    );
    let empty = kubeconfig(&dir, "empty", "apiVersion: v1\nkind: Config\n");
    let refusing = kubeconfig(&dir, "refusing", REFUSING);
    let refused = "error: cannot connect to the server at https://127.0.0.1:1: connection refused (is `exitplan up` running, and is this the kubeconfig it wrote?)\n".to_owned();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["drain", "node-1", "--kubeconfig", &missing],
            format!("error: cannot read kubeconfig {d}/missing: No such file or directory\n"),
        ),
        (
            vec!["drain", "node-1", "--kubeconfig", &bad],
            format!("error: kubeconfig {d}/bad:1:10: not valid YAML: unclosed bracket '['\n"),
        ),
        (
            vec!["explain", "job", "x", "--kubeconfig", &no_ctx],
            format!("error: kubeconfig {d}/noctx: context \"nope\" is not defined\n"),
        ),
        (
            vec!["drain", "node-1", "--kubeconfig", &empty],
            format!("error: kubeconfig {d}/empty: no current-context is set\n"),
        ),
        (
            vec!["drain", "node-1", "--kubeconfig", &refusing],
            refused.clone(),
        ),
        (
            vec!["explain", "job", "x", "--kubeconfig", &refusing],
            refused.clone(),
        ),
    ];
    for (args, want) in cases {
        let o = exitplan(&args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), want, "{args:?}");
    }
    // Long-running clients fail at once instead of retrying in the
    // background (their last line is the error; kube-rs logs its own).
    for args in [
        vec![
            "responder",
            "--name",
            "example.com/r",
            "--work",
            "1s",
            "--kubeconfig",
            &refusing,
        ],
        vec![
            "controller",
            "--kubeconfig",
            &refusing,
            "--metrics-addr",
            "127.0.0.1:0",
        ],
    ] {
        let o = exitplan(&args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).lines().last(),
            Some(refused.trim_end()),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn yaml_parse_errors_are_one_line_with_file_line_and_column() {
    let cases = [
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  x: : y\n",
            "error: <stdin>:5:6: not valid YAML or JSON: mapping values are not allowed in this context\n",
        ),
        (
            "{\"apiVersion\": \"v1\",",
            "error: <stdin>:1:1: not valid YAML or JSON: unclosed bracket '{'\n",
        ),
    ];
    for (text, want) in cases {
        let o = exitplan(&["validate", "-f", "-"], Some(text));
        assert_eq!(o.status.code(), Some(2), "{text:?}");
        assert_eq!(stderr(&o), want, "{text:?}");
    }
}
