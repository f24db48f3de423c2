//! The demo (`exitplan demo`, examples/scenarios/demo.yaml) end to end with
//! the real controllers, scheduler, simulated nodes and SDK responders, in
//! virtual time: its key timeline lines at their exact instants, and the
//! per-pod summary, so a regression in any component shows here.
//!
//! The timeline records instants to the whole second (docs/simulate.md,
//! Determinism); `whole` also rounds durations read back from the text, so
//! the expectations below are whole seconds either way.

use std::sync::Arc;

use exitplan_sim::responder::BuiltinResponders;
use exitplan_sim::{Report, Scenario};
use exitplan_sim::{duration, engine};

fn demo() -> Report {
    let s = Scenario::parse("demo.yaml", exitplan_sim::DEMO).expect("valid demo");
    engine::run_blocking(&s, Arc::new(BuiltinResponders)).expect("ran")
}

/// A duration token (`t+6m0.005s`, `(5m24.995s)`, `1m0.005s`) rounded to
/// the whole second; other tokens as they are.
fn whole(token: &str) -> String {
    let (open, rest) = match token.strip_prefix('(') {
        Some(r) => ("(", r),
        None => ("", token),
    };
    let (rest, close) = match rest.strip_suffix(')') {
        Some(r) => (r, ")"),
        None => (rest, ""),
    };
    let (plus, body) = match rest.strip_prefix("t+") {
        Some(b) => ("t+", b),
        None => ("", rest),
    };
    match millis(body) {
        Some(ms) => format!(
            "{open}{plus}{}{close}",
            duration::format(std::time::Duration::from_secs((ms + 500) / 1000))
        ),
        None => token.to_owned(),
    }
}

/// `1h2m3.005s`, `45s`, `5m` in milliseconds (the timeline's format).
fn millis(s: &str) -> Option<u64> {
    if s.is_empty() || !s.ends_with(['h', 'm', 's']) {
        return None;
    }
    let mut total = 0f64;
    let mut num = String::new();
    for c in s.chars() {
        match c {
            '0'..='9' | '.' => num.push(c),
            'h' | 'm' | 's' => {
                let v: f64 = num.parse().ok()?;
                num.clear();
                total += v * match c {
                    'h' => 3_600_000.0,
                    'm' => 60_000.0,
                    _ => 1000.0,
                };
            }
            _ => return None,
        }
    }
    num.is_empty().then_some(total.round() as u64)
}

/// `text` with every duration rounded to the whole second.
fn whole_seconds(text: &str) -> String {
    text.lines()
        .map(|l| l.split(' ').map(whole).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `at subject message` lines of the timeline, in order, to the second.
fn timeline(r: &Report) -> Vec<String> {
    r.timeline
        .iter()
        .map(|e| whole_seconds(&format!("{} {} {}", e.at, e.subject(), e.message)))
        .collect()
}

/// Asserts `expected` lines appear in the timeline in this order.
fn in_order(r: &Report, expected: &[&str]) {
    let lines = timeline(r);
    let mut from = 0;
    for want in expected {
        match lines[from..].iter().position(|l| l == want) {
            Some(i) => from += i + 1,
            None => panic!("missing (or out of order): `{want}`\n{}", r.to_text()),
        }
    }
}

const PDB: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

#[test]
fn the_demo_drains_through_responders_a_silent_one_and_a_pdb() {
    let r = demo();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    // The drain: cordon, one request per pod on node-1.
    in_order(
        &r,
        &[
            "t+1m EvictionRequest default/drain-batch-0 requested by exitplan.io/drain",
            "t+1m EvictionRequest default/drain-db-0 requested by exitplan.io/drain",
            "t+1m EvictionRequest default/drain-web-0 requested by exitplan.io/drain",
            "t+1m Node node-1 cordoned",
        ],
    );
    // batch-0 declares no responder: the evictor evicts it at once.
    in_order(
        &r,
        &[
            "t+1m Eviction default/pod-1-batch-0 responders imperative-eviction.k8s.io/evictor(100); imperative-eviction.k8s.io/evictor Active",
            "t+1m EvictionRequest default/drain-batch-0 TargetEvicted (PodTerminal)",
            "t+1m Pod default/batch-0 Failed, container main exited 143",
            "t+1m1s Pod default/batch-0 deleted",
        ],
    );
    // web-0: the migrator (20000) works 5m, then the evictor backs off while
    // the PDB (minAvailable 2 of 2) refuses, until web-2 runs at 10m.
    let refused = |at: &str, n: u32| {
        format!(
            "{at} Eviction default/pod-1-web-0 imperative-eviction.k8s.io/evictor: \"web-0\" pod deletion via the /eviction subresource failed (attempts={n}): {PDB}"
        )
    };
    let attempts: Vec<String> = [
        ("t+6m", 1),
        ("t+6m5s", 2),
        ("t+6m15s", 3),
        ("t+6m35s", 4),
        ("t+7m15s", 5),
        ("t+8m35s", 6),
    ]
    .iter()
    .map(|(at, n)| refused(at, *n))
    .collect();
    let mut web = vec![
        "t+1m Eviction default/pod-1-web-0 responders mover.acme.io/migrate(20000), imperative-eviction.k8s.io/evictor(100); mover.acme.io/migrate Active".to_owned(),
        "t+1m Eviction default/pod-1-web-0 mover.acme.io/migrate: working on pod web-0: 0/5m".to_owned(),
        "t+3m30s Eviction default/pod-1-web-0 mover.acme.io/migrate: working on pod web-0: 2m30s/5m".to_owned(),
    ];
    web.push(attempts[0].clone());
    web.push("t+6m Eviction default/pod-1-web-0 mover.acme.io/migrate Completed; imperative-eviction.k8s.io/evictor Active".to_owned());
    web.extend(attempts[1..].iter().cloned());
    web.extend(
        [
            "t+10m Pod default/web-2 Running",
            "t+10m PodDisruptionBudget default/web disruptionsAllowed 1 (healthy 3/2)",
            "t+11m15s Pod default/web-0 DisruptionTarget (EvictionByEvictionAPI)",
            "t+11m25s EvictionRequest default/drain-web-0 TargetEvicted (PodTerminal)",
            "t+11m26s Pod default/web-0 deleted",
        ]
        .map(str::to_owned),
    );
    let web: Vec<&str> = web.iter().map(String::as_str).collect();
    in_order(&r, &web);
    assert!(
        !timeline(&r).iter().any(|l| l.contains("(attempts=7)")),
        "the evictor's 7th attempt succeeds: {}",
        r.to_text()
    );
    // db-0: the snapshot (15000) gives up halfway; its last heartbeat is at
    // 5m30s (45 s heartbeats from 1m0.005s), so it is Interrupted 20 min
    // later and the migrator (10000) takes over, then the evictor.
    in_order(
        &r,
        &[
            "t+1m Eviction default/pod-1-db-0 responders backup.acme.io/snapshot(15000), mover.acme.io/migrate(10000), imperative-eviction.k8s.io/evictor(100); backup.acme.io/snapshot Active",
            "t+1m Eviction default/pod-1-db-0 backup.acme.io/snapshot: working on pod db-0: 0/10m",
            "t+6m Eviction default/pod-1-db-0 backup.acme.io/snapshot: work failed: simulated failure after 300s: going silent",
            "t+25m30s Eviction default/pod-1-db-0 backup.acme.io/snapshot Interrupted; mover.acme.io/migrate Active",
            "t+28m Eviction default/pod-1-db-0 mover.acme.io/migrate: working on pod db-0: 2m30s/5m",
            "t+30m30s Eviction default/pod-1-db-0 mover.acme.io/migrate Completed; imperative-eviction.k8s.io/evictor Active",
            "t+30m30s EvictionRequest default/drain-db-0 TargetEvicted (PodTerminal)",
            "t+30m31s Pod default/db-0 deleted",
        ],
    );
    assert_eq!(r.end, "t+1h0m31s");
    assert_eq!(r.stopped, "quiet");

    let text = r.to_text();
    let summary = text
        .split_once("\nSummary\n")
        .and_then(|(_, s)| s.split_once("\nObjects\n"))
        .map(|(s, _)| s)
        .expect("a summary section");
    assert_eq!(
        whole_seconds(summary),
        "  pod default/batch-0 (pod-1-batch-0): TargetEvicted (PodTerminal) at t+1m
    imperative-eviction.k8s.io/evictor  Completed    t+1m .. t+1m (0s)
  pod default/db-0 (pod-1-db-0): TargetEvicted (PodTerminal) at t+30m30s
    backup.acme.io/snapshot             Interrupted  t+1m .. t+25m30s (24m30s)
    mover.acme.io/migrate               Completed    t+25m30s .. t+30m30s (5m)
    imperative-eviction.k8s.io/evictor  Completed    t+30m30s .. t+30m30s (0s)
  pod default/web-0 (pod-1-web-0): TargetEvicted (PodTerminal) at t+11m25s
    mover.acme.io/migrate               Completed    t+1m .. t+6m (5m)
    imperative-eviction.k8s.io/evictor  Completed    t+6m .. t+11m25s (5m25s)",
        "{text}"
    );
}

#[test]
fn whole_second_rounding() {
    assert_eq!(whole("t+6m0.005s"), "t+6m");
    assert_eq!(whole("(5m24.995s)"), "(5m25s)");
    assert_eq!(whole("0/5m"), "0/5m");
    assert_eq!(whole("drain"), "drain");
}

#[test]
fn the_demo_is_the_same_every_run() {
    // To the second (see the module docs): the rest is identical.
    let a = whole_seconds(&demo().to_text());
    let b = whole_seconds(&demo().to_text());
    assert_eq!(a, b);
}
