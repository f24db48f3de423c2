//! Scenarios run through the engine for their outcomes: an `exit` step on a
//! simulated node ends the container with its code (and the pod with the
//! phase that follows), and the two example scenarios
//! (examples/scenarios/silent-responder.yaml, pdb-blocks-drain.yaml) do
//! what their comments, docs/simulate.md and the README say, at the exact
//! virtual instants.

mod common;

use common::{has, lines, run};

use exitplan_sim::Report;
use serde_json::Value;

const SILENT: &str = include_str!("../../../examples/scenarios/silent-responder.yaml");
const PDB: &str = include_str!("../../../examples/scenarios/pdb-blocks-drain.yaml");

const SNAPSHOT: &str = "backup.acme.io/snapshot";
const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";

/// The `show` object of `kind` called `name`.
fn object<'a>(r: &'a Report, kind: &str, name: &str) -> &'a Value {
    r.objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in the objects:\n{}", r.to_text()))
}

/// The status of container `name` of `pod`.
fn container<'a>(pod: &'a Value, name: &str) -> &'a Value {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no container {name} in {pod}"))
}

fn responder<'a>(eviction: &'a Value, list: &str, name: &str) -> &'a Value {
    eviction["status"][list]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("no {list} entry {name} in {eviction}"))
}

fn timestamp(v: &Value) -> jiff::Timestamp {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a timestamp: {v}"))
}

const EXITS: &str = r#"
name: exits
nodes: 1
until: 10m
objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: worker, namespace: default}
    spec:
      nodeName: node-1
      restartPolicy: Never
      containers: [{name: main, image: w}, {name: side, image: s}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: done, namespace: default}
    spec: {nodeName: node-1, restartPolicy: Never, containers: [{name: main, image: w}]}
  - apiVersion: v1
    kind: Pod
    metadata: {name: retry, namespace: default}
    spec: {nodeName: node-1, restartPolicy: OnFailure, containers: [{name: main, image: w}]}
steps:
  - at: 2m
    exit: {pod: worker, container: main, code: 3}
  - at: 3m
    exit: {pod: done}
  - exit: {pod: retry, code: 1}
  - at: 4m
    exit: {pod: worker, container: side, code: 0}
show:
  - {kind: Pod, namespace: default, name: worker}
  - {kind: Pod, namespace: default, name: done}
  - {kind: Pod, namespace: default, name: retry}
"#;

#[test]
fn an_exit_step_ends_the_container_with_its_code_and_the_pod_with_its_phase() {
    let r = run("exits.yaml", EXITS);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    // worker: main exits 3 at 2m while side runs on (still Running); side
    // exits 0 at 4m: every container ended, one failed → Failed.
    has(&r, "t+0s", "Pod default/worker", "Running");
    has(&r, "t+2m", "Pod default/worker", "container main exited 3");
    has(
        &r,
        "t+4m",
        "Pod default/worker",
        "Failed, container side exited 0",
    );
    let worker = object(&r, "Pod", "worker");
    assert_eq!(worker["status"]["phase"], "Failed");
    let main = &container(worker, "main")["state"]["terminated"];
    assert_eq!(main["exitCode"], 3, "{worker}");
    assert_eq!(main["reason"], "Error");
    assert_eq!(main["finishedAt"], "2026-11-29T10:02:00Z");
    let side = &container(worker, "side")["state"]["terminated"];
    assert_eq!(side["exitCode"], 0, "{worker}");
    assert_eq!(side["reason"], "Completed");
    assert_eq!(side["finishedAt"], "2026-11-29T10:04:00Z");

    // done: no code given → 0 → Succeeded.
    has(
        &r,
        "t+3m",
        "Pod default/done",
        "Succeeded, container main exited 0",
    );
    let done = object(&r, "Pod", "done");
    assert_eq!(done["status"]["phase"], "Succeeded");
    assert_eq!(
        container(done, "main")["state"]["terminated"]["exitCode"],
        0
    );

    // retry (OnFailure): exit 1 at 3m, restarted after the 10 s crash
    // back-off; the exit stays in lastState and the pod Running.
    let retry = object(&r, "Pod", "retry");
    assert_eq!(retry["status"]["phase"], "Running");
    let c = container(retry, "main");
    assert_eq!(c["restartCount"], 1, "{retry}");
    assert_eq!(c["lastState"]["terminated"]["exitCode"], 1, "{retry}");
    assert_eq!(
        c["lastState"]["terminated"]["finishedAt"],
        "2026-11-29T10:03:00Z"
    );
    assert_eq!(c["state"]["running"]["startedAt"], "2026-11-29T10:03:10Z");
}

#[test]
fn a_silent_responder_is_interrupted_20_minutes_after_its_last_heartbeat() {
    let r = run("silent-responder.yaml", SILENT);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let ev = "Eviction default/pod-1-db-0";
    // The request at 1m: the snapshot responder (priority 15000) goes first.
    has(
        &r,
        "t+1m",
        "EvictionRequest default/request-db-0",
        "requested by acme.io/rebalancer",
    );
    has(
        &r,
        "t+1m",
        ev,
        &format!("responders {SNAPSHOT}(15000), {EVICTOR}(100); {SNAPSHOT} Active"),
    );
    has(
        &r,
        "t+1m",
        ev,
        &format!("{SNAPSHOT}: working on pod db-0: 0/10m"),
    );
    // It fails halfway and goes silent.
    has(
        &r,
        "t+6m",
        ev,
        &format!("{SNAPSHOT}: work failed: simulated failure after 300s: going silent"),
    );

    // Its last heartbeat, from the final object; the interruption exactly
    // 20 minutes later, and the evictor Active in the same write (one line).
    let eviction = object(&r, "Eviction", "pod-1-db-0");
    let last = timestamp(&responder(eviction, "responders", SNAPSHOT)["heartbeatTime"]);
    assert_eq!(
        last.to_string(),
        "2026-11-29T10:05:30Z",
        "README: last heartbeat at 5m30s"
    );
    let deadline = last + jiff::SignedDuration::from_mins(20);
    assert_eq!(deadline.to_string(), "2026-11-29T10:25:30Z");
    has(
        &r,
        "t+25m30s",
        ev,
        &format!("{SNAPSHOT} Interrupted; {EVICTOR} Active"),
    );
    // Nothing before the deadline: the snapshot responder was Active until then.
    let early: Vec<_> = lines(&r, ev)
        .into_iter()
        .filter(|(at, m)| m.contains("Interrupted") && at != "t+25m30s")
        .collect();
    assert!(early.is_empty(), "{early:?}");
    assert_eq!(
        timestamp(&responder(eviction, "responders", EVICTOR)["startTime"]),
        deadline
    );

    // The evictor evicts the pod at once.
    has(
        &r,
        "t+25m30s",
        "Pod default/db-0",
        "DisruptionTarget (EvictionByEvictionAPI)",
    );
    has(
        &r,
        "t+25m30s",
        "Pod default/db-0",
        "Failed, container main exited 143",
    );
    has(
        &r,
        "t+25m30s",
        "EvictionRequest default/request-db-0",
        "TargetEvicted (PodTerminal)",
    );
    has(&r, "t+25m31s", "Pod default/db-0", "deleted");
    // Final state and summary.
    let states: Vec<(&Value, &Value)> = eviction["status"]["targetResponders"]
        .as_array()
        .expect("targetResponders")
        .iter()
        .map(|t| (&t["name"], &t["state"]))
        .collect();
    assert_eq!(
        states,
        [
            (&Value::from(SNAPSHOT), &Value::from("Interrupted")),
            (&Value::from(EVICTOR), &Value::from("Completed"))
        ]
    );
    let s = &r.summary[..];
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(
        (s[0].pod.as_str(), s[0].eviction.as_str()),
        ("default/db-0", "pod-1-db-0")
    );
    assert_eq!(s[0].outcome, "TargetEvicted (PodTerminal)");
    assert_eq!(s[0].outcome_at.as_deref(), Some("t+25m30s"));
    let runs: Vec<_> = s[0]
        .responders
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.state.as_str(),
                r.started.as_deref(),
                r.ended.as_deref(),
                r.ran.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            (
                SNAPSHOT,
                "Interrupted",
                Some("t+1m"),
                Some("t+25m30s"),
                Some("24m30s")
            ),
            (
                EVICTOR,
                "Completed",
                Some("t+25m30s"),
                Some("t+25m30s"),
                Some("0s")
            ),
        ]
    );
    // The quiet rule: it ends 30 minutes after the last change.
    assert_eq!((r.end.as_str(), r.stopped.as_str()), ("t+55m31s", "quiet"));
}

#[test]
fn a_pdb_blocks_the_drain_until_a_third_replica_runs() {
    let r = run("pdb-blocks-drain.yaml", PDB);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let ev = "Eviction default/pod-1-web-0";
    let pdb = "PodDisruptionBudget default/web";
    // Two of two healthy, minAvailable 2: no disruption allowed.
    has(&r, "t+0s", pdb, "disruptionsAllowed 0 (healthy 2/2)");
    // The drain at 1m: cordon, one request for web-0 only, the evictor Active.
    has(&r, "t+1m", "Node node-1", "cordoned");
    has(
        &r,
        "t+1m",
        "EvictionRequest default/drain-web-0",
        "requested by exitplan.io/drain",
    );
    assert!(lines(&r, "EvictionRequest default/drain-web-1").is_empty());
    has(
        &r,
        "t+1m",
        ev,
        &format!("responders {EVICTOR}(100); {EVICTOR} Active"),
    );
    // Refused with 429 on every attempt before 10m, backing off 5 s, 10 s,
    // 20 s, 40 s, 80 s, 160 s.
    let refused: Vec<String> = lines(&r, ev)
        .into_iter()
        .filter(|(_, m)| {
            m.ends_with("Cannot evict pod as it would violate the pod's disruption budget.")
        })
        .map(|(at, m)| {
            let attempts = m
                .split("(attempts=")
                .nth(1)
                .and_then(|s| s.split(')').next())
                .unwrap_or("?");
            format!("{at} attempts={attempts}")
        })
        .collect();
    assert_eq!(
        refused,
        [
            "t+1m attempts=1",
            "t+1m5s attempts=2",
            "t+1m15s attempts=3",
            "t+1m35s attempts=4",
            "t+2m15s attempts=5",
            "t+3m35s attempts=6",
            "t+6m15s attempts=7",
        ],
        "{}",
        r.to_text()
    );
    // web-0 keeps running through it.
    let web0 = lines(&r, "Pod default/web-0");
    let first_disruption = web0.iter().find(|(_, m)| m.starts_with("DisruptionTarget"));
    assert_eq!(
        first_disruption.map(|(at, _)| at.as_str()),
        Some("t+11m35s"),
        "{web0:?}"
    );
    // web-2 Running at 10m: one disruption allowed; the evictor's next
    // attempt (6m15s + 320 s) evicts web-0.
    has(&r, "t+10m", "Pod default/web-2", "Running");
    has(&r, "t+10m", pdb, "disruptionsAllowed 1 (healthy 3/2)");
    has(
        &r,
        "t+11m35s",
        "Pod default/web-0",
        "DisruptionTarget (EvictionByEvictionAPI)",
    );
    has(
        &r,
        "t+11m35s",
        "Pod default/web-0",
        "Failed, container main exited 143",
    );
    has(
        &r,
        "t+11m35s",
        "EvictionRequest default/drain-web-0",
        "TargetEvicted (PodTerminal)",
    );
    has(&r, "t+11m36s", "Pod default/web-0", "deleted");
    // Only web-0 was touched.
    for other in ["web-1", "web-2"] {
        let ls = lines(&r, &format!("Pod default/{other}"));
        assert!(
            ls.iter()
                .all(|(_, m)| !m.contains("DisruptionTarget") && !m.contains("terminating")),
            "{other}: {ls:?}"
        );
    }
    // Final state: the PDB back at its floor with the two left, the
    // Eviction evicted by the evictor.
    let p = object(&r, "PodDisruptionBudget", "web");
    assert_eq!(p["status"]["currentHealthy"], 2, "{p}");
    assert_eq!(p["status"]["desiredHealthy"], 2, "{p}");
    assert_eq!(p["status"]["disruptionsAllowed"], 0, "{p}");
    let e = object(&r, "Eviction", "pod-1-web-0");
    assert_eq!(
        e["status"]["targetResponders"],
        serde_json::json!([{"name": EVICTOR, "priority": 100, "state": "Completed"}])
    );
    let s = &r.summary[..];
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].outcome, "TargetEvicted (PodTerminal)");
    assert_eq!(s[0].outcome_at.as_deref(), Some("t+11m35s"));
    assert_eq!(s[0].responders.len(), 1);
    assert_eq!(
        (
            s[0].responders[0].started.as_deref(),
            s[0].responders[0].ran.as_deref()
        ),
        (Some("t+1m"), Some("10m35s"))
    );
}
