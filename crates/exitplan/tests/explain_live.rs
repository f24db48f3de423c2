//! `exitplan explain job NAME` against a running `exitplan up`: the Job
//! (applied by kubectl) and its pods are read from the server and explained
//! exactly as `explain job -f JOB --pods PODS` explains the same objects
//! offline. The test runs `exitplan up --bare` (the bare API server: no
//! Job controller, no nodes), so it plays them: it creates the Job's pod
//! with the Job's selector labels and writes its status (main exited 42).

mod cluster;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use cluster::{Up, temp_dir};
use serde_json::json;

const NOW: &str = "2026-11-29T10:05:00Z";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn kubectl(up: &Up, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&up.kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("kubectl output");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        text(&out.stderr)
    );
    out
}

fn exitplan(args: &[&str], kubeconfig: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_exitplan"));
    cmd.args(args);
    if let Some(k) = kubeconfig {
        cmd.arg("--kubeconfig").arg(k);
    }
    cmd.stdin(Stdio::null())
        .output()
        .expect("run exitplan explain")
}

#[test]
fn explains_a_live_job_exactly_as_offline() {
    let dir = temp_dir("explain-live");
    let up = Up::start(&dir);
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "fj", "namespace": "default"},
        "spec": {"backoffLimit": 6, "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In",
                                                  "values": [42]}}]},
                 "template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "main", "image": "busybox"}]}}}
    });
    kubectl(&up, &["apply", "-f", "-"], Some(&job.to_string()));
    let stored = up
        .get("/apis/batch/v1/namespaces/default/jobs/fj")
        .expect("job stored");
    let uid = stored["metadata"]["uid"].as_str().expect("uid").to_owned();
    // The Job controller's pod, and an unrelated pod that must not show.
    for (name, labels, finalizers) in [
        (
            "fj-x7k2p",
            json!({"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
                   "batch.kubernetes.io/job-name": "fj", "job-name": "fj"}),
            json!(["batch.kubernetes.io/job-tracking"]),
        ),
        ("stray", json!({"job-name": "fj"}), json!([])),
    ] {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels,
                         "finalizers": finalizers},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
        });
        kubectl(&up, &["apply", "-f", "-"], Some(&pod.to_string()));
        up.merge_patch(
            &format!("/api/v1/namespaces/default/pods/{name}/status"),
            json!({"status": {"phase": "Failed", "containerStatuses": [{
                "name": "main", "image": "busybox", "imageID": "", "ready": false,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 42, "reason": "Error",
                                         "finishedAt": "2026-11-29T10:01:00Z"}}}]}}),
        );
    }

    let live = exitplan(
        &[
            "explain",
            "job",
            "fj",
            "--namespace",
            "default",
            "--now",
            NOW,
        ],
        Some(&up.kubeconfig),
    );
    assert!(live.status.success(), "{}", text(&live.stderr));
    let out = text(&live.stdout);
    assert!(out.starts_with("Job default/fj\n"), "{out}");
    assert!(out.contains("fj-x7k2p"), "{out}");
    assert!(
        !out.contains("stray"),
        "selected by the Job's selector: {out}"
    );
    assert!(
        out.contains(
            "Container main for pod default/fj-x7k2p failed with exit code 42 matching FailJob rule at index 1"
        ),
        "{out}"
    );
    let pod_row = out
        .lines()
        .find(|l| l.starts_with("fj-x7k2p"))
        .expect("pod row");
    let cells: Vec<&str> = pod_row.split_whitespace().collect();
    assert_eq!(
        cells[..6],
        ["fj-x7k2p", "Failed", "-", "1", "FailJob", "yes"]
    );

    // The same objects offline give the same output.
    let job_file = dir.join("job.yaml");
    let pods_file = dir.join("pods.yaml");
    let job_yaml = kubectl(&up, &["get", "job", "fj", "-o", "yaml"], None);
    std::fs::write(&job_file, &job_yaml.stdout).expect("job file");
    let pods_yaml = kubectl(
        &up,
        &[
            "get",
            "pods",
            "-l",
            &format!("batch.kubernetes.io/controller-uid={uid}"),
            "-o",
            "yaml",
        ],
        None,
    );
    std::fs::write(&pods_file, &pods_yaml.stdout).expect("pods file");
    let offline = exitplan(
        &[
            "explain",
            "job",
            "-f",
            job_file.to_str().expect("path"),
            "--pods",
            pods_file.to_str().expect("path"),
            "--now",
            NOW,
        ],
        None,
    );
    assert!(offline.status.success(), "{}", text(&offline.stderr));
    assert_eq!(text(&offline.stdout), out);

    // An unknown Job: exit 1 with the server's answer.
    let missing = exitplan(&["explain", "job", "nope"], Some(&up.kubeconfig));
    assert_eq!(missing.status.code(), Some(1));
    let err = text(&missing.stderr);
    assert_eq!(
        err.trim(),
        r#"error: getting job default/nope: Error from server (NotFound): jobs.batch "nope" not found"#
    );
    // NAME and -f together are refused by the parser.
    let both = exitplan(
        &["explain", "job", "fj", "-f", "job.yaml", "--pods", "p.yaml"],
        None,
    );
    assert_eq!(both.status.code(), Some(2));
    up.stop();
}
