//! Every Job status the pure sync decides passes the API server's own
//! `/status` validation (`exitplan_api::batch::JobStrategy`, the rules of
//! job-failure spec §5 "Status validation interplay") given the Job as it was
//! stored before the write — the property DESIGN.md promises for every
//! controller. A regression test pins the case the live drain example hit
//! (`status.ready: Invalid value: 1: cannot set more ready pods than
//! active` while the recreation back-off held a replacement pod back), then
//! a property test drives random pod populations, failure and success
//! policies, kubelet transitions, clock steps and controller crashes.

use exitplan_api::absent::Absent;
use exitplan_api::batch::JobStrategy;
use exitplan_api::field::ErrorList;
use exitplan_api::strategy::{Context, Strategy as _};
use exitplan_control::job::backoff::BackoffRecord;
use exitplan_control::job::{Step, SyncPlan};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::Pod;

use super::job_sync::{P, cs, job, pod, run_full, secs, t0};
use super::pod_failure_policy::cond_rule;

/// What kube-apiserver's Job `/status` validation says about replacing the
/// status of `old` with `status` at `now` (the real strategy, not a model).
pub(super) fn status_errors(old: &Job, status: &JobStatus, now: Timestamp) -> ErrorList {
    let mut old = old.clone();
    old.metadata.resource_version = Some("1".to_owned());
    let mut new = old.clone();
    new.status = Some(status.clone());
    JobStrategy::prepare_for_status_update(&mut new, &old);
    let absent = Absent::default();
    JobStrategy::validate_status_update(
        &new,
        &old,
        &Context {
            now,
            absent: &absent,
        },
    )
}

/// The errors of the first status write of `plan` the server would refuse,
/// each write checked against the Job as stored after the previous one.
pub(super) fn first_refused_write(job: &Job, plan: &SyncPlan, now: Timestamp) -> Option<String> {
    let mut stored = job.clone();
    for step in &plan.steps {
        if let Step::UpdateStatus(status) = step {
            let errs = status_errors(&stored, status, now);
            if !errs.is_empty() {
                return Some(format!(
                    "{errs:?}\nold: {:?}\nnew: {status:?}",
                    stored.status
                ));
            }
            stored.status = Some((**status).clone());
        }
    }
    None
}

fn running_ready(p: P) -> P {
    p.phase("Running").node("n1").cond("Ready", "True")
}

/// The live drain example (`examples/job/drain-tolerant.yaml`): two pods,
/// `Ignore` on `DisruptionTarget`; one is evicted and fails, the other runs
/// and is ready. The replacement waits for the 10 s recreation back-off.
/// Upstream kubernetes#139428 (fixed by #139457): while the back-off holds
/// the creation back, `status.active` is the number of active pods, not 0 —
/// with 0 the server refuses `ready: 1` (`cannot set more ready pods than
/// active`) and nothing of the sync is written until the back-off is over.
#[test]
fn recreation_backoff_keeps_the_real_active_count() {
    let job = job(2, Some(2))
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .backoff_limit(0)
        .b();
    let evicted = pod(1)
        .phase("Failed")
        .node("n1")
        .dt()
        .status_list(
            "containerStatuses",
            cs(
                "main",
                serde_json::json!({"terminated": {"exitCode": 143, "finishedAt": t0().to_string()}}),
            ),
        )
        .b();
    let pods: Vec<Pod> = vec![running_ready(pod(0)).b(), evicted];
    let now = t0() + secs(2);
    let plan = run_full(&job, &pods, &BackoffRecord::default(), now);
    assert!(
        plan.created_pods().is_empty(),
        "the back-off holds the replacement"
    );
    assert_eq!(plan.requeue_after, Some(secs(8)));
    let status = plan
        .status_writes()
        .last()
        .map(|s| (*s).clone())
        .expect("a status write");
    assert_eq!((status.active, status.ready), (Some(1), Some(1)));
    assert_eq!(
        plan.removed_finalizers(),
        vec!["mypod-1"],
        "the ignored pod is released"
    );
    assert_eq!(first_refused_write(&job, &plan, now), None);
}

/// The same during the per-index back-off (`backoffLimitPerIndex`), the
/// second early return of upstream's `manageJob`.
#[test]
fn per_index_backoff_keeps_the_real_active_count() {
    let job = job(2, Some(2)).indexed().per_index(1).b();
    let failed = pod(1)
        .index(1)
        .fcount(0)
        .phase("Failed")
        .node("n1")
        .status_list(
            "containerStatuses",
            cs(
                "main",
                serde_json::json!({"terminated": {"exitCode": 1, "finishedAt": t0().to_string()}}),
            ),
        )
        .b();
    let pods: Vec<Pod> = vec![running_ready(pod(0).index(0).fcount(0)).b(), failed];
    let now = t0() + secs(2);
    let plan = run_full(&job, &pods, &BackoffRecord::default(), now);
    assert!(plan.created_pods().is_empty(), "index 1 waits");
    assert_eq!(plan.requeue_after, Some(secs(8)));
    let status = plan
        .status_writes()
        .last()
        .map(|s| (*s).clone())
        .expect("a status write");
    assert_eq!((status.active, status.ready), (Some(1), Some(1)));
    assert_eq!(first_refused_write(&job, &plan, now), None);
}

/// Found by the property below. Indexed, `backoffLimitPerIndex: 0`,
/// `podReplacementPolicy: TerminatingOrFailed`: a running pod of index 1 is
/// deleted, so it counts as failed and index 1 fails; the status write
/// records it (`uncountedTerminatedPods.failed`, `failedIndexes: "1"`), then
/// the controller crashes before removing its finalizer, and the pod exits 0
/// in its grace period. Upstream would now also list index 1 in
/// `completedIndexes` — a write the server refuses (`failedIndexes and
/// completedIndexes overlap at index: 1`), retried forever. The pod stays
/// failed, as the counting step already treats it (decisions.md).
#[test]
fn a_pod_recorded_as_failed_never_completes_its_index() {
    let job = job(2, Some(3))
        .indexed()
        .per_index(0)
        .status("failedIndexes", serde_json::json!("1"))
        .status("startTime", serde_json::json!(t0().to_string()))
        .status(
            "uncountedTerminatedPods",
            serde_json::json!({"failed": ["mypod-1"]}),
        )
        .b();
    let exited = pod(1)
        .index(1)
        .fcount(0)
        .node("n1")
        .deleted(t0())
        .phase("Succeeded")
        .exit_at("main", 0, t0())
        .b();
    let now = t0() + secs(1);
    let plan = run_full(&job, &[exited], &BackoffRecord::default(), now);
    let status = plan
        .status_writes()
        .last()
        .map(|s| (*s).clone())
        .expect("a status write");
    assert_eq!(status.completed_indexes, None);
    assert_eq!(status.failed_indexes.as_deref(), Some("1"));
    assert_eq!((status.failed, status.succeeded), (Some(1), None));
    assert_eq!(first_refused_write(&job, &plan, now), None);
}

// ---- property ------------------------------------------------------------

mod property {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::job_sync::{FINALIZER, J, Store};
    use super::super::pod_failure_policy::exit_rule;
    use super::*;

    /// A pod present when the controller starts.
    #[derive(Clone, Debug)]
    struct PodGen {
        phase: &'static str,
        ready: bool,
        finalizer: bool,
        deleted: bool,
        exit: i32,
        dt: bool,
        bound: bool,
        /// Indexed Jobs: 0 → index = position (distinct), 1 → no index
        /// annotation, 2 → out of range. Two pods of one index that ended
        /// differently need a duplicate the controller never creates.
        index: u8,
        finished_ago: i64,
    }

    fn pod_gen() -> impl Strategy<Value = PodGen> {
        (
            prop::sample::select(vec!["Pending", "Running", "Succeeded", "Failed"]),
            any::<bool>(),
            prop::bool::weighted(0.85),
            prop::bool::weighted(0.2),
            prop::sample::select(vec![0, 1, 42, 143]),
            prop::bool::weighted(0.3),
            any::<bool>(),
            prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]),
            prop_oneof![Just(0i64), 0i64..700],
        )
            .prop_map(
                |(phase, ready, finalizer, deleted, exit, dt, bound, index, finished_ago)| PodGen {
                    phase,
                    ready,
                    finalizer,
                    deleted,
                    exit,
                    dt,
                    bound,
                    index,
                    finished_ago,
                },
            )
    }

    /// The Job's shape.
    #[derive(Clone, Debug)]
    struct JobGen {
        parallelism: i32,
        completions: Option<i32>,
        indexed: bool,
        backoff_limit: i32,
        per_index: Option<i32>,
        max_failed_indexes: Option<i32>,
        policy: u8,
        success_rules: Vec<(Option<&'static str>, Option<i32>)>,
        deadline: Option<i64>,
    }

    fn job_gen() -> impl Strategy<Value = JobGen> {
        let rule = prop_oneof![
            (
                prop::sample::select(vec!["0", "1", "0,1", "0-2", "1-3,5", "9"]),
                prop::option::of(1..4i32)
            )
                .prop_map(|(ix, count)| (Some(ix), count)),
            (1..5i32).prop_map(|count| (None, Some(count))),
        ];
        (
            0..4i32,
            prop::option::of(1..6i32),
            any::<bool>(),
            prop::sample::select(vec![0, 1, 3, 100]),
            prop::option::of(0..3i32),
            prop::option::of(0..2i32),
            0u8..5,
            prop::collection::vec(rule, 0..3),
            prop::option::of(prop::sample::select(vec![5i64, 40, 400])),
        )
            .prop_map(
                |(
                    parallelism,
                    completions,
                    indexed,
                    backoff_limit,
                    per_index,
                    max_failed,
                    policy,
                    success_rules,
                    deadline,
                )| {
                    // Validation: Indexed needs completions; per-index limits and a
                    // success policy need Indexed.
                    let completions = if indexed {
                        completions.or(Some(3))
                    } else {
                        completions
                    };
                    JobGen {
                        parallelism,
                        completions,
                        indexed,
                        backoff_limit,
                        per_index: per_index.filter(|_| indexed),
                        max_failed_indexes: max_failed.filter(|_| indexed && per_index.is_some()),
                        policy,
                        success_rules: if indexed { success_rules } else { Vec::new() },
                        deadline,
                    }
                },
            )
    }

    fn build_job(g: &JobGen) -> Job {
        let mut j: J = job(g.parallelism, g.completions).backoff_limit(g.backoff_limit);
        if g.indexed {
            j = j.indexed();
        }
        if let Some(n) = g.per_index {
            j = j.per_index(n);
        }
        if let Some(m) = g.max_failed_indexes {
            j = j.spec("maxFailedIndexes", json!(m));
        }
        j = match g.policy {
            0 => j,
            1 => j.policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")]),
            2 => j.policy(vec![
                exit_rule("FailJob", "In", &[42], None),
                cond_rule("Ignore", "DisruptionTarget", "True"),
            ]),
            3 if g.per_index.is_some() => j.policy(vec![
                exit_rule("FailIndex", "In", &[1], None),
                cond_rule("Ignore", "DisruptionTarget", "True"),
            ]),
            _ => j.policy(vec![exit_rule("Count", "In", &[1], None)]),
        };
        if !g.success_rules.is_empty() {
            let rules: Vec<Value> = g
                .success_rules
                .iter()
                .map(|(ix, count)| {
                    let mut r = json!({});
                    if let Some(ix) = ix {
                        r["succeededIndexes"] = json!(ix);
                    }
                    if let Some(c) = count {
                        r["succeededCount"] = json!(c);
                    }
                    r
                })
                .collect();
            j = j.spec("successPolicy", json!({ "rules": rules }));
        }
        if let Some(d) = g.deadline {
            j = j.spec("activeDeadlineSeconds", json!(d));
        }
        j.b()
    }

    fn build_pod(i: usize, g: &PodGen, completions: Option<i32>) -> Pod {
        let finished = t0() - secs(g.finished_ago);
        let mut p = pod(i).phase(g.phase).created(t0() - secs(900));
        if matches!(g.phase, "Succeeded" | "Failed") {
            let code = if g.phase == "Succeeded" {
                0
            } else {
                g.exit.max(1)
            };
            p = p.exit_at("main", code, finished);
        } else if g.phase == "Running" {
            p = p.running("main");
            if g.ready {
                p = p.cond("Ready", "True");
            }
        }
        if g.dt {
            p = p.dt();
        }
        if !g.finalizer {
            p = p.no_finalizer();
        }
        if g.deleted {
            p = p.deleted(finished);
        }
        if g.bound || g.phase != "Pending" {
            p = p.node("n1");
        }
        if let Some(c) = completions {
            let position = i64::try_from(i).unwrap_or(0);
            match g.index {
                0 => p = p.index(position),
                2 => p = p.index(i64::from(c) + position),
                _ => {}
            }
        }
        p.b()
    }

    /// What the kubelet (or an eviction) does to one pod between syncs.
    #[derive(Clone, Copy, Debug)]
    enum Kubelet {
        Run,
        Ready,
        Succeed,
        Fail(i32),
        Evict,
        FinishDeleted,
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// A sync; `Some(n)`: the controller crashes after n steps.
        Sync(Option<usize>),
        Advance(i64),
        Pod(usize, Kubelet),
    }

    fn op() -> impl Strategy<Value = Op> {
        let kubelet = prop_oneof![
            Just(Kubelet::Run),
            Just(Kubelet::Ready),
            Just(Kubelet::Succeed),
            prop::sample::select(vec![1, 42, 143]).prop_map(Kubelet::Fail),
            Just(Kubelet::Evict),
            Just(Kubelet::FinishDeleted),
        ];
        prop_oneof![
            5 => prop::option::weighted(0.25, 0usize..6).prop_map(Op::Sync),
            2 => prop_oneof![1i64..15, Just(10i64), 15i64..700].prop_map(Op::Advance),
            4 => (0usize..8, kubelet).prop_map(|(i, k)| Op::Pod(i, k)),
        ]
    }

    fn edit(pod: &mut Pod, f: impl FnOnce(&mut Value)) {
        let Ok(mut v) = serde_json::to_value(&*pod) else {
            return;
        };
        f(&mut v);
        if let Ok(p) = serde_json::from_value(v) {
            *pod = p;
        }
    }

    fn terminal(v: &Value) -> bool {
        matches!(v["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
    }

    fn finish(v: &mut Value, phase: &str, code: i32, now: Timestamp, dt: bool) {
        let mut conditions = vec![json!({"type": "Ready", "status": "False"})];
        if dt {
            conditions.push(json!({"type": "DisruptionTarget", "status": "True"}));
        }
        v["status"] = json!({
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [cs("main", json!({"terminated": {"exitCode": code, "finishedAt": now.to_string()}}))],
        });
    }

    fn kubelet(store: &mut Store, i: usize, k: Kubelet) {
        if store.pods.is_empty() {
            return;
        }
        let now = store.now;
        let n = store.pods.len();
        let pod = &mut store.pods[i % n];
        edit(pod, |v| {
            let deleted = !v["metadata"]["deletionTimestamp"].is_null();
            let dt = v["status"]["conditions"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["type"] == "DisruptionTarget"));
            match k {
                Kubelet::Run if !terminal(v) && !deleted => {
                    v["spec"]["nodeName"] = json!("n1");
                    v["status"]["phase"] = json!("Running");
                }
                Kubelet::Ready if v["status"]["phase"] == "Running" => {
                    v["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
                }
                Kubelet::Succeed if !terminal(v) => finish(v, "Succeeded", 0, now, dt),
                Kubelet::Fail(code) if !terminal(v) => finish(v, "Failed", code, now, dt),
                Kubelet::Evict if !terminal(v) && !deleted => {
                    let cs = v["status"]["conditions"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    let mut cs: Vec<Value> = cs
                        .into_iter()
                        .filter(|c| c["type"] != "DisruptionTarget")
                        .collect();
                    cs.push(json!({"type": "DisruptionTarget", "status": "True",
                                   "reason": "EvictionByEvictionAPI"}));
                    v["status"]["conditions"] = json!(cs);
                    v["metadata"]["deletionTimestamp"] = json!(now.to_string());
                }
                Kubelet::FinishDeleted if deleted && !terminal(v) => {
                    finish(v, "Failed", 143, now, dt)
                }
                _ => {}
            }
        });
        store.gc();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every status write of every sync passes the server's `/status`
        /// validation against the Job as stored before it, whatever the pods
        /// do, whatever the policies, and across controller crashes.
        #[test]
        fn every_status_write_passes_status_validation(
            g in job_gen(),
            pods in prop::collection::vec(pod_gen(), 0..7),
            ops in prop::collection::vec(op(), 1..24),
        ) {
            let job = build_job(&g);
            let pods: Vec<Pod> = pods.iter().enumerate().map(|(i, p)| build_pod(i, p, g.completions.filter(|_| g.indexed))).collect();
            let mut store = Store::new(job, pods);
            let mut writes = 0usize;
            for op in ops.iter().cloned().chain(std::iter::repeat_n(Op::Sync(None), 3)) {
                match op {
                    Op::Advance(s) => store.now += secs(s),
                    Op::Pod(i, k) => kubelet(&mut store, i, k),
                    Op::Sync(crash) => {
                        let plan = store.plan();
                        let limit = crash.unwrap_or(plan.steps.len()).min(plan.steps.len());
                        for step in plan.steps.iter().take(limit) {
                            if let Step::UpdateStatus(status) = step {
                                let errs = status_errors(&store.job, status, store.now);
                                prop_assert!(
                                    errs.is_empty(),
                                    "write {} refused: {:?}\nold: {:?}\nnew: {:?}\npods: {:?}",
                                    writes, errs, store.job.status, status,
                                    store.pods.iter().map(|p| (
                                        p.metadata.name.clone(),
                                        p.status.as_ref().and_then(|s| s.phase.clone()),
                                        p.metadata.deletion_timestamp.is_some(),
                                        p.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER),
                                    )).collect::<Vec<_>>()
                                );
                                writes += 1;
                            }
                            store.apply_one(step);
                        }
                        if crash.is_some() {
                            // The restarted controller has lost its back-off record.
                            store.backoff = BackoffRecord::default();
                        }
                    }
                }
            }
        }
    }
}
