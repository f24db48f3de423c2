//! `exitplan bench drain` at small scale (real clock; a 20-pod drain takes
//! well under a second): every request is evicted, the figures are printed
//! and plausible, on the in-memory and on the default durable store. No
//! timed assertions.

use std::collections::HashMap;

mod benchrun;

/// Runs `exitplan bench drain` with `args`: its stdout and the `result:`
/// line's fields.
fn bench(args: &[&str]) -> (String, HashMap<String, i64>) {
    benchrun::run("drain", args)
}

/// The number after `prefix` in the first line of `out` containing it.
fn number_after(out: &str, prefix: &str) -> f64 {
    out.lines()
        .find_map(|l| l.split_once(prefix).map(|(_, rest)| rest))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {prefix:?} in:\n{out}"))
}

fn assert_drained(out: &str, r: &HashMap<String, i64>, pods: i64, nodes: i64, storage: &str) {
    let f = |k: &str| *r.get(k).unwrap_or_else(|| panic!("{k} in:\n{out}"));
    // The header names the run.
    let header = out.lines().next().unwrap_or_default();
    assert!(header.starts_with("exitplan bench drain ("), "{out}");
    assert!(header.contains(storage), "{out}");
    assert!(
        header.contains(&format!("{pods} pods on {nodes} nodes")),
        "{out}"
    );
    // Setup: every pod Running on the nodes.
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("setup: {pods} pods Running on {nodes} nodes in "))),
        "{out}"
    );
    // Every request created and observed TargetEvicted=True; no stall.
    assert_eq!(f("pods"), pods, "{out}");
    assert_eq!(f("nodes"), nodes, "{out}");
    assert_eq!(f("created"), pods, "{out}");
    assert_eq!(f("evicted"), pods, "{out}");
    assert_eq!(f("stalled"), 0, "{out}");
    assert!(!out.contains("STALLED"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("drain: {pods} evictions in "))),
        "{out}"
    );
    // Writes per eviction: an eviction takes the request's create and
    // status, the Eviction's create and status writes, the pod's
    // DisruptionTarget, deletion and removal — more than 5 store writes,
    // and not runaway.
    let per = number_after(out, "writes per eviction: ");
    assert!(per > 5.0 && per < 50.0, "writes per eviction {per}:\n{out}");
    let writes = f("store_writes");
    assert!(
        (writes as f64 / pods as f64 - per).abs() < 0.1,
        "store_writes {writes} vs {per} per eviction:\n{out}"
    );
    assert!(
        f("store_commits") > 0 && f("store_commits") <= writes,
        "{out}"
    );
    // The informers saw every request, its Eviction and its pod change.
    assert!(f("seen_requests") >= pods, "{out}");
    assert!(f("seen_evictions") >= pods, "{out}");
    assert!(f("seen_pods") >= pods, "{out}");
    assert!(out.contains("per request (create call → observed TargetEvicted=True): p50 "));
    assert!(out.contains(", peak "), "{out}");
}

#[test]
fn twenty_pods_on_two_nodes_in_memory_are_all_evicted() {
    let (out, r) = bench(&["--pods", "20", "--nodes", "2", "--in-memory"]);
    assert_drained(&out, &r, 20, 2, "in-memory store");
}

#[test]
fn twenty_pods_on_the_default_durable_store_are_all_evicted() {
    let (out, r) = bench(&["--pods", "20", "--nodes", "2", "--clients", "4"]);
    assert_drained(&out, &r, 20, 2, "durable store in ");
}

#[test]
fn pods_placed_by_the_scheduler_are_all_evicted() {
    let (out, r) = bench(&["--pods", "12", "--nodes", "3", "--in-memory", "--schedule"]);
    assert_drained(&out, &r, 12, 3, "in-memory store");
}
