//! The simulated cluster's decisions: the kubelet's pod lifecycle (scripted
//! by annotations) and the scheduler's node choice.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{
    Container, Node, NodeCondition, NodeSpec, NodeStatus, Pod, PodCondition, PodSpec, PodStatus,
    Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use exitplan_control::simulation::kubelet::{KubeletPlan, crash_backoff, sync_pod};
use exitplan_control::simulation::scheduler::{choose_node, needs_scheduling};

fn t0() -> Timestamp {
    "2026-11-29T10:00:00Z".parse().expect("time")
}

fn at(secs: i64) -> Timestamp {
    t0().checked_add(SignedDuration::from_secs(secs))
        .expect("in range")
}

fn pod(annotations: &[(&str, &str)], restart_policy: &str, init: &[&str]) -> Pod {
    let container = |name: &str| Container {
        name: name.to_owned(),
        image: Some("img".to_owned()),
        ..Default::default()
    };
    Pod {
        metadata: ObjectMeta {
            name: Some("p".to_owned()),
            namespace: Some("default".to_owned()),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some("node-1".to_owned()),
            restart_policy: Some(restart_policy.to_owned()),
            init_containers: (!init.is_empty())
                .then(|| init.iter().map(|n| container(n)).collect()),
            containers: vec![container("main")],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Pending".to_owned()),
            ..Default::default()
        }),
    }
}

/// Applies a plan's status to the pod, as the API server would store it.
fn applied(mut p: Pod, plan: &KubeletPlan) -> Pod {
    if let Some(s) = &plan.status {
        p.status = Some(s.clone());
    }
    p
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn main_state(p: &Pod) -> (Option<i32>, Option<Timestamp>, i32, bool) {
    let s = p
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|l| l.iter().find(|c| c.name == "main"))
        .expect("main status");
    let term = s.state.as_ref().and_then(|st| st.terminated.as_ref());
    (
        term.map(|t| t.exit_code),
        term.and_then(|t| t.finished_at.as_ref()).map(|t| t.0),
        s.restart_count,
        s.ready,
    )
}

fn condition<'a>(p: &'a Pod, t: &str) -> Option<&'a PodCondition> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == t)
}

fn delete(mut p: Pod, requested: i64, grace: i64) -> Pod {
    p.metadata.deletion_timestamp = Some(Time(at(requested + grace)));
    p.metadata.deletion_grace_period_seconds = Some(grace);
    p
}

#[test]
fn a_bound_pod_starts_runs_and_is_ready() {
    let plan = sync_pod(&pod(&[], "Always", &[]), t0());
    let p = applied(pod(&[], "Always", &[]), &plan);
    assert_eq!(phase(&p), "Running");
    assert_eq!(main_state(&p), (None, None, 0, true));
    assert_eq!(
        condition(&p, "Ready").map(|c| c.status.as_str()),
        Some("True")
    );
    assert_eq!(plan.requeue_after, None, "runs forever: nothing due");
    assert_eq!(
        sync_pod(&p, at(100)).status,
        None,
        "a second sync changes nothing"
    );
}

#[test]
fn scripted_exit_codes_decide_the_phase_at_the_right_time() {
    for (code, want) in [("0", "Succeeded"), ("42", "Failed")] {
        let script = [
            ("sim.exitplan.io/run", "30s"),
            ("sim.exitplan.io/exit-code.main", code),
        ];
        let start = sync_pod(&pod(&script, "Never", &[]), t0());
        assert_eq!(start.requeue_after, Some(SignedDuration::from_secs(30)));
        let p = applied(pod(&script, "Never", &[]), &start);
        // A late sync replays the exit at its scripted time.
        let p = applied(p.clone(), &sync_pod(&p, at(95)));
        assert_eq!(phase(&p), want, "exit {code}");
        let (exit, finished, _, ready) = main_state(&p);
        assert_eq!(
            (exit, finished, ready),
            (code.parse().ok(), Some(at(30)), false)
        );
        assert_eq!(
            condition(&p, "Ready").and_then(|c| c.reason.as_deref()),
            Some("PodCompleted")
        );
    }
}

#[test]
fn init_containers_run_first_and_can_fail_the_pod() {
    let script = [("sim.exitplan.io/run.setup", "10s")];
    let p = applied(
        pod(&script, "Never", &["setup"]),
        &sync_pod(&pod(&script, "Never", &["setup"]), t0()),
    );
    assert_eq!(phase(&p), "Pending");
    assert_eq!(
        condition(&p, "Initialized").map(|c| c.status.as_str()),
        Some("False")
    );
    let p = applied(p.clone(), &sync_pod(&p, at(10)));
    assert_eq!(phase(&p), "Running");
    assert_eq!(
        condition(&p, "Initialized").map(|c| c.status.as_str()),
        Some("True")
    );

    let failing = [("sim.exitplan.io/exit-code.setup", "3")];
    let p = applied(
        pod(&failing, "Never", &["setup"]),
        &sync_pod(&pod(&failing, "Never", &["setup"]), t0()),
    );
    assert_eq!(phase(&p), "Failed");
    let init = p
        .status
        .as_ref()
        .and_then(|s| s.init_container_statuses.as_ref())
        .expect("init statuses");
    assert_eq!(
        init[0]
            .state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .map(|t| t.exit_code),
        Some(3)
    );
}

/// (script, sync at, want exit code, want phase, want finishedAt) for a
/// deletion requested at 60 s with a 30 s grace period.
type DeletionCase = (
    &'static [(&'static str, &'static str)],
    i64,
    i32,
    &'static str,
    i64,
);

#[test]
fn deletion_sends_sigterm_then_sigkill_and_confirms() {
    let running = |script: &[(&str, &str)]| {
        applied(
            pod(script, "Always", &[]),
            &sync_pod(&pod(script, "Always", &[]), t0()),
        )
    };
    let cases: &[DeletionCase] = &[
        (&[], 60, 143, "Failed", 60),
        (&[("sim.exitplan.io/stop", "10s")], 70, 143, "Failed", 70),
        (&[("sim.exitplan.io/stop", "60s")], 90, 137, "Failed", 90),
        (
            &[("sim.exitplan.io/sigterm-exit-code", "0")],
            60,
            0,
            "Succeeded",
            60,
        ),
    ];
    for (script, sync_at, exit, want, finished) in cases {
        let p = delete(running(script), 60, 30);
        let plan = sync_pod(&p, at(*sync_at));
        let after = applied(p, &plan);
        assert_eq!(phase(&after), *want, "{script:?}");
        assert_eq!(main_state(&after).0, Some(*exit), "{script:?}");
        assert_eq!(main_state(&after).1, Some(at(*finished)), "{script:?}");
        assert!(plan.confirm_deletion, "{script:?}: confirms once stopped");
    }
    // Still stopping: keep running, look again when the stop is due.
    let p = delete(running(&[("sim.exitplan.io/stop", "10s")]), 60, 30);
    let plan = sync_pod(&p, at(62));
    assert!(!plan.confirm_deletion);
    assert_eq!(plan.requeue_after, Some(SignedDuration::from_secs(8)));
}

#[test]
fn never_started_or_terminal_pods_are_just_confirmed() {
    let mut unstarted = delete(pod(&[], "Never", &[]), 0, 30);
    let plan = sync_pod(&unstarted, at(1));
    assert_eq!((plan.status.is_none(), plan.confirm_deletion), (true, true));
    unstarted.metadata.deletion_timestamp = None;
    if let Some(s) = unstarted.status.as_mut() {
        s.phase = Some("Succeeded".to_owned());
    }
    assert_eq!(
        sync_pod(&unstarted, at(1)),
        KubeletPlan::default(),
        "terminal and not deleted: nothing"
    );
}

#[test]
fn crashing_containers_restart_with_backoff() {
    let script = [
        ("sim.exitplan.io/run", "5s"),
        ("sim.exitplan.io/exit-code", "1"),
    ];
    let p = applied(
        pod(&script, "Always", &[]),
        &sync_pod(&pod(&script, "Always", &[]), t0()),
    );
    let p = applied(p.clone(), &sync_pod(&p, at(6)));
    assert_eq!(phase(&p), "Running");
    let (_, _, restarts, _) = main_state(&p);
    assert_eq!(restarts, 1);
    let waiting = p
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|l| l[0].state.clone());
    assert_eq!(
        waiting
            .and_then(|s| s.waiting)
            .and_then(|w| w.reason)
            .as_deref(),
        Some("CrashLoopBackOff")
    );
    // Exited at 5 s, restarts 10 s later.
    assert_eq!(
        sync_pod(&p, at(6)).requeue_after,
        Some(SignedDuration::from_secs(9))
    );
    assert_eq!(crash_backoff(1), SignedDuration::from_secs(10));
    assert_eq!(crash_backoff(3), SignedDuration::from_secs(40));
    assert_eq!(crash_backoff(40), SignedDuration::from_mins(5));
}

#[test]
fn other_conditions_are_preserved() {
    let mut p = applied(
        pod(&[], "Never", &[]),
        &sync_pod(&pod(&[], "Never", &[]), t0()),
    );
    if let Some(s) = p.status.as_mut() {
        s.conditions
            .get_or_insert_with(Vec::new)
            .push(PodCondition {
                type_: "DisruptionTarget".to_owned(),
                status: "True".to_owned(),
                reason: Some("EvictionByEvictionAPI".to_owned()),
                ..Default::default()
            });
    }
    let after = applied(p.clone(), &sync_pod(&delete(p, 10, 30), at(10)));
    assert_eq!(
        condition(&after, "DisruptionTarget").map(|c| c.status.as_str()),
        Some("True")
    );
}

fn node(
    name: &str,
    ready: bool,
    unschedulable: bool,
    labels: &[(&str, &str)],
    taints: Vec<Taint>,
    max_pods: &str,
) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            unschedulable: Some(unschedulable),
            taints: Some(taints),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            conditions: Some(vec![NodeCondition {
                type_: "Ready".to_owned(),
                status: if ready { "True" } else { "False" }.to_owned(),
                ..Default::default()
            }]),
            allocatable: Some(BTreeMap::from([(
                "pods".to_owned(),
                k8s_openapi::apimachinery::pkg::api::resource::Quantity(max_pods.to_owned()),
            )])),
            ..Default::default()
        }),
    }
}

fn pending(selector: &[(&str, &str)], tolerations: Vec<Toleration>) -> Pod {
    let mut p = pod(&[], "Always", &[]);
    if let Some(s) = p.spec.as_mut() {
        s.node_name = None;
        s.node_selector = Some(
            selector
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        s.tolerations = Some(tolerations);
    }
    p
}

fn bound_to(n: &str) -> Pod {
    let mut p = pod(&[], "Always", &[]);
    if let Some(s) = p.spec.as_mut() {
        s.node_name = Some(n.to_owned());
    }
    p
}

#[test]
fn the_scheduler_picks_a_ready_schedulable_node_with_room() {
    let taint = Taint {
        key: "dedicated".to_owned(),
        value: Some("gpu".to_owned()),
        effect: "NoSchedule".to_owned(),
        ..Default::default()
    };
    let nodes = vec![
        node("a-cordoned", true, true, &[], vec![], "110"),
        node("b-notready", false, false, &[], vec![], "110"),
        node("c-full", true, false, &[], vec![], "1"),
        node("d-tainted", true, false, &[], vec![taint], "110"),
        node("e", true, false, &[("zone", "x")], vec![], "110"),
        node("f", true, false, &[], vec![], "110"),
    ];
    let pods = vec![bound_to("c-full"), bound_to("e")];
    assert!(needs_scheduling(&pending(&[], vec![])));
    assert!(!needs_scheduling(&bound_to("e")));
    // f is less loaded than e.
    assert_eq!(choose_node(&pending(&[], vec![]), &nodes, &pods), Some("f"));
    // The node selector narrows to e.
    assert_eq!(
        choose_node(&pending(&[("zone", "x")], vec![]), &nodes, &pods),
        Some("e")
    );
    // A toleration admits the tainted node; equal load → first by name.
    let tol = Toleration {
        key: Some("dedicated".to_owned()),
        operator: Some("Equal".to_owned()),
        value: Some("gpu".to_owned()),
        effect: Some("NoSchedule".to_owned()),
        ..Default::default()
    };
    assert_eq!(
        choose_node(&pending(&[], vec![tol]), &nodes, &pods),
        Some("d-tainted")
    );
    // Nothing fits.
    assert_eq!(
        choose_node(&pending(&[("zone", "nowhere")], vec![]), &nodes, &pods),
        None
    );
}

#[test]
fn exit_at_makes_a_running_container_exit_at_that_instant() {
    let at40 = at(40).to_string();
    let script = [
        ("sim.exitplan.io/exit-at.main", at40.as_str()),
        ("sim.exitplan.io/exit-code.main", "42"),
    ];
    let p = applied(
        pod(&script, "Never", &[]),
        &sync_pod(&pod(&script, "Never", &[]), t0()),
    );
    assert_eq!(
        sync_pod(&p, at(10)).requeue_after,
        Some(SignedDuration::from_secs(30))
    );
    let p = applied(p.clone(), &sync_pod(&p, at(50)));
    assert_eq!(phase(&p), "Failed");
    assert_eq!(main_state(&p).0, Some(42));
    assert_eq!(main_state(&p).1, Some(at(40)));
}
