//! `exitplan simulate` and `exitplan demo`: exit codes and output contracts.

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

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn an_invalid_scenario_exits_2_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("exitplan-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("silent.yaml");
    std::fs::write(
        &file,
        "name: typo\nsteps:\n  - at: 1m\n    drain: node-1\n  - at: 2m\n    drian: node-1\n",
    )
    .expect("write");
    let path = file.display().to_string();
    let o = exitplan(&["simulate", &path], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        format!(
            "error: {path}:6: steps[1]: unknown step kind \"drian\" (one of drain, uncordon, responder, apply, patch, delete, withdraw, exit, request, advance)\n"
        )
    );
    assert_eq!(text(&o.stdout), "", "nothing ran");

    let o = exitplan(&["simulate", "-"], Some("nodes: many\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("error: <stdin>:1: "),
        "{}",
        text(&o.stderr)
    );

    let o = exitplan(&["simulate", "no/such/file.yaml"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("error: cannot read no/such/file.yaml: "));
}

const SCENARIO: &str = "name: one node\nnodes: 0\nuntil: 5m\nobjects:\n  - {apiVersion: v1, kind: Node, metadata: {name: n}}\nsteps:\n  - at: 1m\n    uncordon: n\n  - at: 2m\n    drain: n\nshow:\n  - {kind: Node, name: n}\n";

#[test]
fn json_and_yaml_output_parse() {
    let o = exitplan(
        &["simulate", "-", "-o", "json", "--seed", "9"],
        Some(SCENARIO),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["name"], "one node");
    assert_eq!(v["seed"], 9);
    assert_eq!(v["end"], "t+5m");
    assert_eq!(v["objects"][0]["spec"]["unschedulable"], true);
    let timeline = v["timeline"].as_array().expect("timeline");
    assert!(
        timeline
            .iter()
            .any(|e| e["at"] == "t+2m" && e["kind"] == "Node" && e["message"] == "cordoned"),
        "{timeline:?}"
    );

    let o = exitplan(
        &["simulate", "-", "-o", "yaml", "--seed", "9"],
        Some(SCENARIO),
    );
    assert_eq!(o.status.code(), Some(0));
    let y: serde_json::Value = serde_saphyr::from_slice(&o.stdout).expect("yaml");
    assert_eq!(y, v);
}

#[test]
fn text_output_and_a_failed_step() {
    let o = exitplan(
        &["simulate", "-"],
        Some("nodes: 0\nuntil: 1m\nsteps:\n  - drain: node-9\n"),
    );
    assert_eq!(o.status.code(), Some(1), "a failed step exits 1");
    let out = text(&o.stdout);
    assert!(
        out.starts_with("# <stdin> (start 2026-11-29T10:00:00Z, seed 1, 0 nodes)\n"),
        "{out}"
    );
    assert!(
        out.contains("t+0s  Step steps[0]  failed: nodes \"node-9\" not found (404)\n"),
        "{out}"
    );
    assert_eq!(
        text(&o.stderr),
        "error: <stdin>:4: steps[0]: nodes \"node-9\" not found (404)\n"
    );
}

#[test]
fn demo_is_the_same_twice() {
    let a = exitplan(&["demo", "-o", "json"], None);
    let b = exitplan(&["demo", "-o", "json", "--seed", "1"], None);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).expect("json");
    let w: serde_json::Value = serde_json::from_slice(&b.stdout).expect("json");
    // The same report to the letter (instants, summary, objects).
    assert_eq!(v, w);
    assert!(
        v["timeline"].as_array().expect("timeline").len() > 40,
        "{v}"
    );
    assert_eq!(v["file"], "examples/scenarios/demo.yaml");
    assert_eq!(v["name"], "drain node-1 with cooperative responders");
}

#[test]
fn demo_jobs_prints_what_each_job_spent() {
    let o = exitplan(&["demo", "jobs"], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with(
            "# drain two Jobs, one ignoring disruptions (start 2026-11-29T10:00:00Z, seed 1, 3 nodes)\n"
        ),
        "{out}"
    );
    assert!(
        out.ends_with(
            "\nJobs
  job               outcome                        at        took    pods  failed  counted  ignored  backoffLimit  succeeded
  default/plain     Failed (BackoffLimitExceeded)  t+4m1s    4m1s    6     6       6        0        6/3           0
  default/tolerant  Complete                       t+17m22s  17m22s  12    6       0        6        0/3           6
  default/plain: podFailurePolicy none
  default/tolerant: podFailurePolicy Ignore on DisruptionTarget
"
        ),
        "{out}"
    );
    // The same as data, identical with the seed given; `demo` alone is
    // still the eviction demo.
    let a = exitplan(&["demo", "jobs", "-o", "json"], None);
    let b = exitplan(&["demo", "jobs", "--seed", "1", "-o", "json"], None);
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(text(&a.stdout), text(&b.stdout));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).expect("json");
    assert_eq!(v["file"], "examples/scenarios/jobs.yaml");
    assert_eq!(v["jobs"][0]["backoffLimitSpent"], "6/3");
    assert_eq!(v["jobs"][1]["failuresIgnored"], 6);
    let e = exitplan(&["demo", "eviction", "-o", "json"], None);
    let v: serde_json::Value = serde_json::from_slice(&e.stdout).expect("json");
    assert_eq!(v["file"], "examples/scenarios/demo.yaml");
    assert_eq!(v["jobs"], serde_json::json!([]));
}
