//! `exitplan drain` end to end against `exitplan up` (no controllers run
//! there, so the test plays the evictionrequest-controller by writing the
//! requests' conditions): `--dry-run` changes nothing, a drain cordons the
//! node and creates one request per pod with the right spec, times out naming
//! the pending pods, and exits by the requests' `TargetEvicted`/`Failed`.

mod cluster;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use cluster::{Up, eventually, temp_dir};
use serde_json::json;

const ERS: &str = "/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictionrequests";

fn drain(up: &Up, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .arg("drain")
        .args(args)
        .arg("--kubeconfig")
        .arg(&up.kubeconfig)
        .stdin(Stdio::null())
        .output()
        .expect("run exitplan drain")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn setup(up: &Up, node: &str, pods: &[(&str, &str)]) -> Vec<String> {
    up.create(
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}),
    );
    pods.iter()
        .map(|(name, on)| {
            let p = up.create(
                "/api/v1/namespaces/default/pods",
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": "default"},
                       "spec": {"nodeName": on, "containers": [{"name": "c", "image": "i"}]}}),
            );
            p["metadata"]["uid"].as_str().expect("uid").to_owned()
        })
        .collect()
}

fn request_names(up: &Up) -> Vec<String> {
    let list = up.get(ERS).expect("list");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_owned())
        .collect()
}

fn unschedulable(up: &Up, node: &str) -> bool {
    up.get(&format!("/api/v1/nodes/{node}")).expect("node")["spec"]["unschedulable"] == true
}

#[cfg(unix)]
#[test]
fn dry_run_then_drain_times_out_naming_the_pending_pods() {
    let dir = temp_dir("drain-timeout");
    let up = Up::start(&dir);
    let uids = setup(
        &up,
        "node-1",
        &[("a", "node-1"), ("b", "node-1"), ("c", "node-2")],
    );

    // An unknown node: the server's error, as kubectl shows it.
    let out = drain(&up, &["nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: getting node nope: Error from server (NotFound): nodes \"nope\" not found\n"
    );

    // --dry-run: says what it would do, changes nothing.
    let out = drain(&up, &["node-1", "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout,
        "node/node-1 cordoned (dry run)\n\
         evictionrequest.lifecycle.k8s.io/drain-a created for pod default/a (server dry run)\n\
         evictionrequest.lifecycle.k8s.io/drain-b created for pod default/b (server dry run)\n"
    );
    assert!(request_names(&up).is_empty(), "dry run created nothing");
    assert!(!unschedulable(&up, "node-1"), "dry run did not cordon");

    // A drain with nothing answering: cordoned, requests created, timeout.
    let out = drain(&up, &["node-1", "--timeout", "2s"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "error: timed out after 2s waiting for 2 pod(s) to be evicted: default/a, default/b"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("0/2 evicted, 0 failed, 2 pending\n"),
        "{stderr}"
    );
    assert!(unschedulable(&up, "node-1"));
    assert_eq!(request_names(&up), ["drain-a", "drain-b"]);
    for (name, uid) in [("a", &uids[0]), ("b", &uids[1])] {
        let r = up.get(&format!("{ERS}/drain-{name}")).expect("request");
        assert_eq!(
            r["spec"],
            json!({"target": {"pod": {"name": name, "uid": uid}},
                   "requester": "exitplan.io/drain", "intent": "Eviction"})
        );
    }
    assert!(
        up.get("/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictionrequests/drain-c")
            .is_none()
    );

    // Running it again reuses the requests (and the cordon).
    let out = drain(
        &up,
        &[
            "node-1",
            "--timeout",
            "1s",
            "--requester",
            "example.com/drain",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("node/node-1 already cordoned\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("evictionrequest.lifecycle.k8s.io/drain-a unchanged for pod default/a"),
        "{stdout}"
    );
    up.stop();
}

fn set_conditions(up: &Up, name: &str, conds: serde_json::Value) {
    up.merge_patch(
        &format!("{ERS}/{name}/status"),
        json!({"status": {"conditions": conds}}),
    );
}

fn cond(t: &str, s: &str, reason: &str, message: &str) -> serde_json::Value {
    json!({"type": t, "status": s, "reason": reason, "message": message,
           "lastTransitionTime": "2026-11-29T10:00:00Z"})
}

#[cfg(unix)]
#[test]
fn drain_exits_by_the_requests_conditions() {
    let dir = temp_dir("drain-conditions");
    let up = Up::start(&dir);
    setup(&up, "node-1", &[("a", "node-1"), ("b", "node-1")]);
    let child = Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args(["drain", "node-1", "--timeout", "60s", "--kubeconfig"])
        .arg(&up.kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn drain");
    eventually("both requests exist", Duration::from_secs(20), || {
        (request_names(&up).len() == 2).then_some(())
    });
    set_conditions(
        &up,
        "drain-a",
        json!([
            cond(
                "TargetEvicted",
                "True",
                "PodDeleted",
                "Target pod has been deleted."
            ),
            cond("Failed", "False", "Succeeded", "Succeeded.")
        ]),
    );
    set_conditions(
        &up,
        "drain-b",
        json!([
            cond(
                "TargetEvicted",
                "False",
                "EvictionFailed",
                "Eviction failed."
            ),
            cond(
                "Failed",
                "True",
                "NoFurtherResponder",
                "No further responder."
            )
        ]),
    );
    let out = child.wait_with_output().expect("drain");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error: pod default/b was not evicted: NoFurtherResponder: No further responder."
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("1/2 evicted, 1 failed, 0 pending\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("timed out"), "{stderr}");
    assert!(!text(&out.stdout).contains("drained"));

    // Once b is evicted too, a re-run finishes at once with 0.
    set_conditions(
        &up,
        "drain-b",
        json!([
            cond(
                "TargetEvicted",
                "True",
                "PodTerminal",
                "Pod has reached terminal state."
            ),
            cond("Failed", "False", "Succeeded", "Succeeded.")
        ]),
    );
    let out = drain(&up, &["node-1", "--timeout", "20s"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with("node/node-1 drained\n"));
    assert!(text(&out.stderr).contains("2/2 evicted, 0 failed, 0 pending\n"));
    up.stop();
}

#[cfg(unix)]
#[test]
fn drain_requester_is_written_on_the_requests_it_creates() {
    let dir = temp_dir("drain-requester");
    let up = Up::start(&dir);
    let uids = setup(&up, "node-1", &[("x", "node-1"), ("y", "node-1")]);

    // Nothing answers: the drain times out, the requests stay behind.
    let out = drain(
        &up,
        &[
            "node-1",
            "--timeout",
            "1s",
            "--requester",
            "example.com/maintenance",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "node/node-1 cordoned\n\
         evictionrequest.lifecycle.k8s.io/drain-x created for pod default/x\n\
         evictionrequest.lifecycle.k8s.io/drain-y created for pod default/y\n"
    );
    let spec =
        |name: &str| up.get(&format!("{ERS}/drain-{name}")).expect("request")["spec"].clone();
    for (name, uid) in [("x", &uids[0]), ("y", &uids[1])] {
        assert_eq!(
            spec(name),
            json!({"target": {"pod": {"name": name, "uid": uid}},
                   "requester": "example.com/maintenance", "intent": "Eviction"})
        );
    }

    // A re-run with the default requester reuses them as they are (the
    // requester is immutable; the drain does not rewrite it).
    let out = drain(&up, &["node-1", "--timeout", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .contains("evictionrequest.lifecycle.k8s.io/drain-x unchanged for pod default/x"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(spec("x")["requester"], "example.com/maintenance");
    assert_eq!(spec("y")["requester"], "example.com/maintenance");
    up.stop();
}
