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
