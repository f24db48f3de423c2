//! Running scenarios: step execution as seen through the timeline, ordering,
//! determinism, the `until` and quiet end rules, the structured output.
//!
//! These assert only the server-side effects of the scenario's own steps
//! (objects created, cordoned, withdrawn, deleted…), which hold whatever the
//! controllers add to the timeline.

mod common;

use common::{has, lines};
use std::time::Duration;

use exitplan_sim::Report;
use exitplan_sim::engine;
use exitplan_sim::timeline::Entry;

fn run(text: &str) -> Report {
    common::run("t.yaml", text)
}

const STEPS: &str = r#"
name: steps
nodes: 0
until: 20m
objects:
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web, namespace: default}
    spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: web-0, namespace: default, labels: {app: web}}
    spec: {nodeName: node-a, containers: [{name: main, image: web}]}
  - apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default, labels: {app: web}}
    spec: {nodeName: node-b, containers: [{name: main, image: web}]}
  - {apiVersion: v1, kind: Node, metadata: {name: node-a}}
  - {apiVersion: v1, kind: Node, metadata: {name: node-b}}
steps:
  - at: 1m
    drain: node-a
  - at: 2m
    patch: {kind: Node, name: node-b, patch: {spec: {unschedulable: true}}}
  - advance: 1m
  - uncordon: node-b
  - at: 4m
    withdraw: {name: drain-web-0}
  - at: 5m
    exit: {pod: web-1, container: main, code: 42}
  - at: 6m
    delete: {kind: PodDisruptionBudget, name: web, namespace: default}
  - at: 7m
    responder: {name: acme.io/x, work: 5m}
  - at: 8m
    responder: {name: acme.io/x, stop: true}
  - at: 9m
    delete: {kind: Pod, name: missing}
show:
  - {kind: Pod, namespace: default, name: web-1}
  - {kind: EvictionRequest, namespace: default}
"#;

#[test]
fn steps_show_up_in_the_timeline() {
    let r = run(STEPS);
    has(&r, "t+0s", "Node node-a", "registered");
    let pdb = lines(&r, "PodDisruptionBudget default/web");
    assert!(
        pdb[0].0 == "t+0s" && pdb[0].1.starts_with("created"),
        "{pdb:?}"
    );
    let web0 = lines(&r, "Pod default/web-0");
    assert!(
        web0[0].0 == "t+0s" && web0[0].1.starts_with("created, scheduled to node-a"),
        "{web0:?}"
    );
    // drain: cordon + one EvictionRequest for the pod on the node only.
    has(&r, "t+1m", "Node node-a", "cordoned");
    has(
        &r,
        "t+1m",
        "EvictionRequest default/drain-web-0",
        "requested by exitplan.io/drain",
    );
    assert!(lines(&r, "EvictionRequest default/drain-web-1").is_empty());
    // patch, then `advance` moves the next step (no `at`) to 3m.
    has(&r, "t+2m", "Node node-b", "cordoned");
    has(&r, "t+3m", "Node node-b", "uncordoned");
    has(
        &r,
        "t+4m",
        "EvictionRequest default/drain-web-0",
        "intent Withdrawn",
    );
    has(&r, "t+6m", "PodDisruptionBudget default/web", "deleted");
    has(&r, "t+7m", "Responder acme.io/x", "started (work 5m)");
    has(&r, "t+8m", "Responder acme.io/x", "stopped");
    // A failing step is reported with its line, and the run goes on.
    has(
        &r,
        "t+9m",
        "Step steps[9]",
        "failed: pods \"missing\" not found (404)",
    );
    assert_eq!(
        r.errors,
        ["t.yaml:37: steps[9]: pods \"missing\" not found (404)"]
    );
    assert_eq!((r.end.as_str(), r.stopped.as_str()), ("t+20m", "until"));

    // exit: the kubelet's script annotations, stamped with the step's instant.
    let pod = &r.objects[0];
    assert_eq!(pod["metadata"]["name"], "web-1");
    let ann = &pod["metadata"]["annotations"];
    assert_eq!(ann["sim.exitplan.io/exit-at.main"], "2026-11-29T10:05:00Z");
    assert_eq!(ann["sim.exitplan.io/exit-code.main"], "42");
    let er = &r.objects[1];
    assert_eq!(er["kind"], "EvictionRequest");
    assert_eq!(er["spec"]["intent"], "Withdrawn");
    assert_eq!(er["spec"]["requester"], "exitplan.io/drain");
    // Nothing that differs between identical runs.
    let all = serde_json::to_string(&r.objects).expect("json");
    for noise in ["\"uid\"", "resourceVersion", "managedFields"] {
        assert!(!all.contains(noise), "{noise} in {all}");
    }
}

fn sorted(entries: &[Entry]) -> bool {
    entries.windows(2).all(|w| {
        let key = |e: &Entry| {
            (
                e.offset,
                e.subject(),
                exitplan_sim::timeline::rank(&e.message),
                e.message.clone(),
            )
        };
        key(&w[0]) <= key(&w[1])
    })
}

#[test]
fn timeline_is_ordered_and_identical_across_runs() {
    let a = run(STEPS);
    let b = run(STEPS);
    assert!(sorted(&a.timeline), "{}", a.to_text());
    assert_eq!(a.to_text(), b.to_text());
    assert_eq!(a.to_json(), b.to_json());
    // At t+0s the PDB, the pods and the nodes appear (created in that
    // order): listed by object.
    let at0: Vec<String> = a
        .timeline
        .iter()
        .filter(|e| e.offset == Duration::ZERO)
        .map(Entry::subject)
        .collect();
    let i_node = at0.iter().position(|s| s == "Node node-a").expect("node");
    let i_pdb = at0
        .iter()
        .position(|s| s == "PodDisruptionBudget default/web")
        .expect("pdb");
    let i_pod = at0
        .iter()
        .position(|s| s == "Pod default/web-0")
        .expect("pod");
    assert!(i_node < i_pod && i_pod < i_pdb, "{at0:?}");
}

#[test]
fn demo_is_identical_across_runs_and_seeds_are_reported() {
    let a = run(exitplan_sim::DEMO);
    let b = run(exitplan_sim::DEMO);
    // The same report to the letter: lines, instants, summary, objects.
    assert_eq!(a.to_text(), b.to_text());
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.summary.len(), 3);
    assert_eq!((a.seed, a.nodes), (1, 3));
    assert!(a.to_text().starts_with(
        "# drain node-1 with cooperative responders (start 2026-11-29T10:00:00Z, seed 1, 3 nodes)\n"
    ));
}

#[test]
fn until_stops_the_run_there() {
    let r = run(
        "until: 90s\nnodes: 0\nsteps:\n  - at: 1m\n    apply: {apiVersion: v1, kind: Node, metadata: {name: n}}\n",
    );
    assert_eq!((r.end.as_str(), r.stopped.as_str()), ("t+1m30s", "until"));
    has(&r, "t+1m", "Node n", "registered");
}

#[test]
fn without_until_the_run_ends_once_quiet() {
    let r = run(
        "nodes: 0\nsteps:\n  - at: 5m\n    apply: {apiVersion: v1, kind: Node, metadata: {name: n}}\n",
    );
    assert_eq!(r.stopped, "quiet");
    let last = r.timeline.last().map(|e| e.offset).unwrap_or_default();
    let end = exitplan_sim::duration::parse(r.end.trim_start_matches("t+")).expect("end");
    assert!(last >= Duration::from_secs(300), "{}", r.to_text());
    assert_eq!(end, last + engine::QUIET, "{}", r.to_text());
}

#[test]
fn structured_output_shape() {
    let r = run(STEPS);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).expect("json");
    for key in ["name", "file", "start", "seed", "nodes", "end", "stopped"] {
        assert!(!v[key].is_null(), "{key} missing: {v}");
    }
    let first = &v["timeline"][0];
    assert_eq!(first["at"], "t+0s");
    assert_eq!(first["kind"], "Node");
    assert_eq!(first["object"], "node-a");
    assert_eq!(first["message"], "registered");
    assert!(first.get("offset").is_none());
    assert!(v["summary"].is_array());
    assert_eq!(v["objects"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        v["errors"][0],
        "t.yaml:37: steps[9]: pods \"missing\" not found (404)"
    );
    let y: serde_json::Value = serde_saphyr::from_str(&r.to_yaml()).expect("yaml");
    assert_eq!(y, v, "the YAML carries the same data as the JSON");
}
