//! Parsing scenarios: defaults, step timing, and every error with its line.

use std::time::Duration;

use exitplan_sim::scenario::{Action, PatchType, REQUESTER};
use exitplan_sim::{Scenario, ScenarioError};

fn err(text: &str) -> ScenarioError {
    Scenario::parse("s.yaml", text).expect_err("invalid scenario")
}

fn at(line: u64, message: &str) -> ScenarioError {
    ScenarioError {
        file: "s.yaml".into(),
        line,
        message: message.into(),
    }
}

#[test]
fn defaults_and_step_times() {
    let s = Scenario::parse(
        "s.yaml",
        "steps:\n  - drain: node-1\n  - at: 1m\n    uncordon: node-1\n  - advance: 90s\n  - withdraw: {name: drain-web-0}\n  - at: 1h2m\n    request: {pod: web-0}\n",
    )
    .expect("valid");
    assert_eq!(s.name, "s.yaml");
    assert_eq!(s.start, "2026-11-29T10:00:00Z".parse().expect("ts"));
    assert_eq!((s.seed, s.nodes, s.until), (1, 3, None));
    assert_eq!(s.node_names(), ["node-1", "node-2", "node-3"]);
    let times: Vec<(u64, u64)> = s
        .steps
        .iter()
        .map(|st| (st.line, st.at.as_secs()))
        .collect();
    // No `at`: the previous step's instant; `advance` moves it on.
    assert_eq!(times, [(2, 0), (3, 60), (5, 150), (6, 150), (7, 3720)]);
    assert_eq!(s.steps[0].action, Action::Drain("node-1".into()));
    let Action::Withdraw(w) = &s.steps[3].action else {
        panic!("withdraw: {:?}", s.steps[3].action)
    };
    assert_eq!(
        (w.kind.kind, w.namespace.as_deref()),
        ("EvictionRequest", Some("default"))
    );
    let Action::Request(r) = &s.steps[4].action else {
        panic!("request: {:?}", s.steps[4].action)
    };
    assert_eq!(
        (r.name.as_str(), r.requester.as_str(), r.namespace.as_str()),
        ("request-web-0", REQUESTER, "default")
    );
}

#[test]
fn every_step_kind_parses() {
    let s = Scenario::parse(
        "s.yaml",
        r#"
name: all
start: 2026-01-02T03:04:05Z
seed: 7
nodes: 1
until: 2h
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n}}
steps:
  - at: 1m
    responder: {name: a.example.com/x, work: 5m, fail: true}
  - responder: {name: a.example.com/x, stop: true}
  - apply: {apiVersion: v1, kind: Pod, metadata: {name: p}}
  - patch: {kind: Node, name: n, patch: {spec: {unschedulable: true}}}
  - patch: {kind: pods, name: p, namespace: x, type: strategic, subresource: status, patch: {status: {}}}
  - delete: {kind: Pod, name: p}
  - delete: {kind: Node, name: n, namespace: ignored}
  - exit: {pod: p, container: main, code: 42}
show:
  - {kind: Eviction, namespace: default}
  - {kind: Node, name: n, namespace: ignored}
"#,
    )
    .expect("valid");
    assert_eq!((s.name.as_str(), s.seed, s.nodes), ("all", 7, 1));
    assert_eq!(s.until, Some(Duration::from_secs(7200)));
    assert_eq!(s.objects.len(), 1);
    assert_eq!(s.objects[0].line, 8);
    let Action::Responder(r) = &s.steps[0].action else {
        panic!()
    };
    assert_eq!(
        (r.work, r.fail, r.stop),
        (Duration::from_secs(300), true, false)
    );
    let Action::Responder(r) = &s.steps[1].action else {
        panic!()
    };
    assert_eq!((r.work, r.stop), (Duration::from_secs(60), true));
    let Action::Patch(p) = &s.steps[4].action else {
        panic!()
    };
    assert_eq!(p.patch_type, PatchType::Strategic);
    assert_eq!(p.target.kind.kind, "Pod");
    assert_eq!(p.subresource.as_deref(), Some("status"));
    let Action::Delete(d) = &s.steps[6].action else {
        panic!()
    };
    assert_eq!(d.namespace, None, "cluster-scoped kinds have no namespace");
    let Action::Exit(e) = &s.steps[7].action else {
        panic!()
    };
    assert_eq!((e.container.as_deref(), e.code), (Some("main"), 42));
    assert_eq!(s.show[1].value.namespace, None);
    assert_eq!(s.show[1].line, 21);
}

#[test]
fn unknown_step_kind_names_its_line() {
    let e = err("name: x\nsteps:\n  - at: 1m\n    drain: node-1\n  - at: 2m\n    drian: node-1\n");
    assert_eq!(
        e,
        at(
            6,
            "steps[1]: unknown step kind \"drian\" (one of drain, uncordon, responder, apply, patch, delete, withdraw, exit, request, advance)"
        )
    );
    assert!(
        e.to_string()
            .starts_with("s.yaml:6: steps[1]: unknown step kind \"drian\"")
    );
}

#[test]
fn step_errors_carry_lines() {
    assert_eq!(
        err("steps:\n  - at: soon\n    drain: node-1\n"),
        at(
            2,
            "steps[0]: at: invalid duration \"soon\" (Go style: 90s, 5m, 1h30m, 250ms)"
        )
    );
    assert_eq!(
        err("steps:\n  - at: 1m\n"),
        at(
            2,
            "steps[0]: no step kind (one of drain, uncordon, responder, apply, patch, delete, withdraw, exit, request, advance)"
        )
    );
    assert_eq!(
        err("steps:\n  - at: 1m\n    drain: a\n    uncordon: a\n"),
        at(
            4,
            "steps[0]: more than one step kind (drain and uncordon): one per step"
        )
    );
    assert_eq!(
        err("steps:\n  - at: 5m\n    drain: a\n\n  - at: 1m\n    drain: b\n"),
        at(
            5,
            "steps[1]: at 1m is before the previous step (5m): steps run in file order"
        )
    );
    assert_eq!(
        err("until: 10m\nsteps:\n  - at: 11m\n    drain: a\n"),
        at(3, "steps[0]: runs at 11m after until (10m)")
    );
    assert_eq!(
        err("steps:\n  - at: 1m\n    responder: {name: a.io/b, wrk: 5m}\n"),
        at(
            3,
            "steps[0]: responder: unknown field `wrk`, expected one of `name`, `work`, `fail`, `stop`"
        )
    );
    assert_eq!(
        err("steps:\n  - responder:\n      name: a.io/b\n      work: 5 minutes\n"),
        at(
            3,
            "steps[0]: responder: work: invalid duration \"5 minutes\" (Go style: 90s, 5m, 1h30m, 250ms)"
        )
    );
    assert_eq!(
        err("steps:\n  - delete: {kind: Deployment, name: x}\n"),
        at(
            2,
            "steps[0]: delete: unknown kind \"Deployment\" (the simulation serves Namespace, Node, Pod, Event, PodDisruptionBudget, Job, Lease, EvictionRequest, Eviction)"
        )
    );
    assert_eq!(
        err("steps:\n  - patch: {kind: Pod, name: x, type: json, patch: []}\n"),
        at(
            2,
            "steps[0]: patch: unknown variant `json`, expected `merge` or `strategic`"
        )
    );
    assert_eq!(
        err("steps:\n  - advance: 1m\n    at: 1m\n"),
        at(
            2,
            "steps[0]: advance: takes no `at` (it is relative to the previous step)"
        )
    );
}

#[test]
fn object_and_top_level_errors_carry_lines() {
    assert_eq!(
        err("name: x\nnodez: 3\n"),
        at(
            2,
            "unknown field `nodez`, expected one of name, start, seed, nodes, until, objects, steps, show"
        )
    );
    assert_eq!(err("nodes: -1\n"), at(1, "invalid u64"));
    assert_eq!(err("nodes: 101\n"), at(1, "nodes: 101 is more than 100"));
    assert_eq!(
        err("start: tomorrow\n").line,
        1,
        "an unparsable start is reported on its line"
    );
    assert_eq!(
        err("until: 1x\n"),
        at(
            1,
            "until: invalid duration \"1x\" (Go style: 90s, 5m, 1h30m, 250ms)"
        )
    );
    assert_eq!(err("steps: [\n").line, 1);
    assert_eq!(err("  \n"), at(1, "empty scenario"));
    assert_eq!(
        err("objects:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {namespace: x}\n"),
        at(
            2,
            "objects[0]: missing metadata.name (generateName is not supported: names must be known to keep runs identical)"
        )
    );
    assert_eq!(
        err("objects:\n  - {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, image: i}]}}\n  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: a}}\n").line,
        3
    );
    assert_eq!(
        err("objects:\n  - {apiVersion: v1, kind: Job, metadata: {name: a}}\n"),
        at(
            2,
            "objects[0]: Job is served as apiVersion batch/v1, not \"v1\""
        )
    );
    assert_eq!(
        err("show:\n  - {kind: Eviction}\n  - {kind: Pod, nmae: x}\n"),
        at(
            3,
            "show[1]: unknown field `nmae`, expected one of `kind`, `namespace`, `name`"
        )
    );
}

#[test]
fn the_example_scenarios_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).expect("examples/scenarios") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        Scenario::parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
        names.push(name);
    }
    names.sort();
    assert_eq!(
        names,
        [
            "demo.yaml",
            "jobs.yaml",
            "pdb-blocks-drain.yaml",
            "silent-responder.yaml"
        ]
    );
    // The demo: a drain, responders (one failing), a PDB, several nodes.
    let demo = Scenario::parse("demo.yaml", exitplan_sim::DEMO).expect("demo");
    assert!(demo.nodes >= 2);
    assert!(
        demo.steps
            .iter()
            .any(|s| s.action == Action::Drain("node-1".into()))
    );
    assert!(
        demo.steps
            .iter()
            .any(|s| matches!(&s.action, Action::Responder(r) if r.fail))
    );
    assert!(
        demo.steps
            .iter()
            .any(|s| matches!(&s.action, Action::Responder(r) if !r.fail))
    );
    assert!(
        demo.objects
            .iter()
            .any(|o| o.value["kind"] == "PodDisruptionBudget")
    );
}

#[test]
fn objects_are_admitted_as_the_api_server_would_before_anything_runs() {
    let e = err(
        "objects:\n  - {apiVersion: v1, kind: Node, metadata: {name: n}}\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: web-0}\n    spec:\n      containers: [{name: main, image: x}]\n      evictionResponders: [{name: acme.io/b, priority: 5}]\n",
    );
    assert_eq!(
        e,
        at(
            3,
            "objects[1]: Pod \"web-0\" is invalid: spec.evictionResponders[0].priority: Invalid value: 5: priorities 0-999 are reserved for responders with *.k8s.io suffix"
        )
    );
}
