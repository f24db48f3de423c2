//! Spec job-failure.md §3–§9: the Job sync decision (cases 23–74, 128, 129,
//! 136–140), and the crash-resume property of the two-phase counting
//! protocol.
//!
//! Conventions as in the case list: Job `default/foobar`, pods
//! `default/mypod-<i>` with UID = name unless a case names them, tracking
//! finalizer on. Results are read from the plan's status writes; multi-step
//! cases run an in-memory [`Store`] that applies plans like the runtime.
//! ⚑ marks cases whose upstream expectation was recorded with some gates
//! off; the test asserts the all-gates-on behaviour (spec §15).

use std::collections::{BTreeMap, BTreeSet};

use exitplan_control::job::backoff::{
    self, BackoffRecord, delay_for_failures, finished_time, remaining_for_failures,
    remaining_for_index_with,
};
use exitplan_control::job::explain::JobDecision;
use exitplan_control::job::indexes::{
    self, Intervals, index_failure_count, is_index_failed, new_index_failure_counts,
    pods_with_delayed_deletion,
};
use exitplan_control::job::manage::indexes_ready_now;
use exitplan_control::job::plan::{EventType, ManageOutcome, NewPod};
use exitplan_control::job::{Step, SyncInput, SyncPlan, explain, sync_job, sync_job_after_manage};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::pod_failure_policy::{cond_rule, exit_rule};

pub(super) const FINALIZER: &str = "batch.kubernetes.io/job-tracking";

pub(super) fn t0() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().expect("time")
}

pub(super) fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

// ---- builders ------------------------------------------------------------

/// Pod builder over the k8s-openapi type.
#[derive(Clone)]
pub(super) struct P(pub(super) Value);

pub(super) fn pod(i: usize) -> P {
    let name = format!("mypod-{i}");
    P(json!({
        "metadata": {"namespace": "default", "name": name, "uid": name, "finalizers": [FINALIZER],
                     "annotations": {}},
        "spec": {"containers": [{"name": "main"}]},
        "status": {"containerStatuses": [], "initContainerStatuses": [], "conditions": []}
    }))
}

impl P {
    pub(super) fn uid(mut self, uid: &str) -> Self {
        self.0["metadata"]["uid"] = json!(uid);
        self
    }
    pub(super) fn name(mut self, name: &str) -> Self {
        self.0["metadata"]["name"] = json!(name);
        self
    }
    pub(super) fn phase(mut self, phase: &str) -> Self {
        self.0["status"]["phase"] = json!(phase);
        self
    }
    pub(super) fn status_list(mut self, list: &str, v: Value) -> Self {
        if let Some(a) = self.0["status"][list].as_array_mut() {
            a.push(v);
        }
        self
    }
    pub(super) fn exit(self, container: &str, code: i32) -> Self {
        self.status_list(
            "containerStatuses",
            cs(container, json!({"terminated": {"exitCode": code}})),
        )
    }
    pub(super) fn exit_at(self, container: &str, code: i32, at: Timestamp) -> Self {
        let st = json!({"terminated": {"exitCode": code, "finishedAt": at.to_string()}});
        self.status_list("containerStatuses", cs(container, st))
    }
    pub(super) fn init_exit(self, container: &str, code: i32) -> Self {
        self.status_list(
            "initContainerStatuses",
            cs(container, json!({"terminated": {"exitCode": code}})),
        )
    }
    pub(super) fn running(self, container: &str) -> Self {
        self.status_list("containerStatuses", cs(container, json!({"running": {}})))
    }
    pub(super) fn restarts(mut self, n: i32) -> Self {
        if let Some(a) = self.0["status"]["containerStatuses"].as_array_mut()
            && let Some(last) = a.last_mut()
        {
            last["restartCount"] = json!(n);
        }
        self
    }
    pub(super) fn cond(self, type_: &str, status: &str) -> Self {
        self.status_list("conditions", json!({"type": type_, "status": status}))
    }
    pub(super) fn dt(self) -> Self {
        self.cond("DisruptionTarget", "True")
    }
    pub(super) fn no_finalizer(mut self) -> Self {
        self.0["metadata"]["finalizers"] = json!([]);
        self
    }
    pub(super) fn deleted(mut self, at: Timestamp) -> Self {
        self.0["metadata"]["deletionTimestamp"] = json!(at.to_string());
        self
    }
    pub(super) fn grace(mut self, s: i64) -> Self {
        self.0["metadata"]["deletionGracePeriodSeconds"] = json!(s);
        self
    }
    pub(super) fn index(mut self, i: i64) -> Self {
        self.0["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] =
            json!(i.to_string());
        self
    }
    pub(super) fn fcount(mut self, n: i32) -> Self {
        self.0["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] =
            json!(n.to_string());
        self
    }
    pub(super) fn icount(mut self, n: i32) -> Self {
        self.0["metadata"]["annotations"]["batch.kubernetes.io/job-index-ignored-failure-count"] =
            json!(n.to_string());
        self
    }
    pub(super) fn node(mut self, n: &str) -> Self {
        self.0["spec"]["nodeName"] = json!(n);
        self
    }
    pub(super) fn created(mut self, at: Timestamp) -> Self {
        self.0["metadata"]["creationTimestamp"] = json!(at.to_string());
        self
    }
    pub(super) fn sidecar(mut self, name: &str) -> Self {
        self.0["spec"]["initContainers"] = json!([{"name": name, "restartPolicy": "Always"}]);
        self
    }
    pub(super) fn b(self) -> Pod {
        serde_json::from_value(self.0).expect("pod")
    }
}

pub(super) fn cs(name: &str, state: Value) -> Value {
    json!({"name": name, "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": state})
}

/// Job builder.
#[derive(Clone)]
pub(super) struct J(pub(super) Value);

pub(super) fn job(parallelism: i32, completions: Option<i32>) -> J {
    let mut spec = json!({
        "parallelism": parallelism, "backoffLimit": 6,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main"}]}}
    });
    if let Some(c) = completions {
        spec["completions"] = json!(c);
    }
    J(
        json!({"metadata": {"namespace": "default", "name": "foobar", "uid": "job-uid"},
             "spec": spec, "status": {}}),
    )
}

impl J {
    pub(super) fn spec(mut self, key: &str, v: Value) -> Self {
        self.0["spec"][key] = v;
        self
    }
    pub(super) fn policy(self, rules: Vec<Value>) -> Self {
        self.spec("podFailurePolicy", json!({"rules": rules}))
            .spec("podReplacementPolicy", json!("Failed"))
    }
    pub(super) fn backoff_limit(self, n: i32) -> Self {
        self.spec("backoffLimit", json!(n))
    }
    pub(super) fn indexed(self) -> Self {
        self.spec("completionMode", json!("Indexed"))
    }
    pub(super) fn per_index(self, n: i32) -> Self {
        self.spec("backoffLimitPerIndex", json!(n))
            .backoff_limit(i32::MAX)
    }
    pub(super) fn status(mut self, key: &str, v: Value) -> Self {
        self.0["status"][key] = v;
        self
    }
    pub(super) fn condition(mut self, type_: &str, reason: &str, message: &str) -> Self {
        let c = json!({"type": type_, "status": "True", "reason": reason, "message": message});
        match self.0["status"]["conditions"].as_array_mut() {
            Some(a) => a.push(c),
            None => self.0["status"]["conditions"] = json!([c]),
        }
        self
    }
    pub(super) fn b(self) -> Job {
        serde_json::from_value(self.0).expect("job")
    }
}

pub(super) fn exit_rules() -> Vec<Value> {
    vec![
        exit_rule("Ignore", "In", &[1, 2, 3], None),
        exit_rule("FailJob", "In", &[5, 6, 7], None),
    ]
}

// ---- running a sync ------------------------------------------------------

pub(super) fn run_full(
    job: &Job,
    pods: &[Pod],
    backoff: &BackoffRecord,
    now: Timestamp,
) -> SyncPlan {
    let expected = BTreeSet::new();
    sync_job(&SyncInput {
        job,
        pods,
        backoff,
        expected_removed_finalizers: &expected,
        expectations_satisfied: true,
        now,
    })
}

pub(super) fn run(job: &Job, pods: &[Pod]) -> SyncPlan {
    run_full(job, pods, &BackoffRecord::default(), t0())
}

/// The status after applying the plan.
pub(super) fn final_status(job: &Job, plan: &SyncPlan) -> JobStatus {
    plan.status_writes()
        .last()
        .map(|s| (*s).clone())
        .or_else(|| job.status.clone())
        .unwrap_or_default()
}

/// `(type, reason, message)` of every condition.
pub(super) fn conds(status: &JobStatus) -> Vec<(String, String, String)> {
    status
        .conditions
        .iter()
        .flatten()
        .map(|c| {
            (
                c.type_.clone(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
        .collect()
}

pub(super) fn types(status: &JobStatus) -> Vec<String> {
    conds(status).into_iter().map(|c| c.0).collect()
}

/// `(active, failed, succeeded)`.
pub(super) fn counters(status: &JobStatus) -> (i32, i32, i32) {
    (
        status.active.unwrap_or(0),
        status.failed.unwrap_or(0),
        status.succeeded.unwrap_or(0),
    )
}

pub(super) fn uncounted(status: &JobStatus) -> (Vec<String>, Vec<String>) {
    let u = status.uncounted_terminated_pods.clone().unwrap_or_default();
    (
        u.succeeded.unwrap_or_default(),
        u.failed.unwrap_or_default(),
    )
}

pub(super) fn pair(type_: &str, reason: &str, message: &str) -> (String, String, String) {
    (type_.to_owned(), reason.to_owned(), message.to_owned())
}

// ---- the in-memory store -------------------------------------------------

/// A minimal API server + informer: applies plan steps like the runtime.
pub(super) struct Store {
    pub(super) job: Job,
    pub(super) pods: Vec<Pod>,
    pub(super) backoff: BackoffRecord,
    pub(super) now: Timestamp,
    pub(super) created: usize,
    pub(super) status_writes: Vec<JobStatus>,
    pub(super) events: Vec<(EventType, String, String)>,
}

impl Store {
    pub(super) fn new(job: Job, pods: Vec<Pod>) -> Self {
        Self {
            job,
            pods,
            backoff: BackoffRecord::default(),
            now: t0(),
            created: 0,
            status_writes: Vec::new(),
            events: Vec::new(),
        }
    }

    pub(super) fn plan(&self) -> SyncPlan {
        run_full(&self.job, &self.pods, &self.backoff, self.now)
    }

    pub(super) fn sync(&mut self) -> SyncPlan {
        let plan = self.plan();
        self.apply(&plan.steps);
        plan
    }

    pub(super) fn apply(&mut self, steps: &[Step]) {
        for step in steps {
            self.apply_one(step);
        }
    }

    pub(super) fn apply_one(&mut self, step: &Step) {
        let now = self.now;
        match step {
            Step::DeletePods {
                pods,
                remove_finalizer_first,
            } => {
                for r in pods {
                    if let Some(p) = self
                        .pods
                        .iter_mut()
                        .find(|p| p.metadata.uid.as_deref() == Some(&r.uid))
                    {
                        if *remove_finalizer_first {
                            drop_finalizer(p);
                        }
                        p.metadata.deletion_timestamp.get_or_insert(Time(now));
                    }
                }
            }
            Step::CreatePods { batches } => {
                for np in batches.iter().flatten() {
                    let p = self.materialize(np);
                    self.pods.push(p);
                }
            }
            Step::UpdateStatus(s) => {
                self.job.status = Some((**s).clone());
                self.status_writes.push((**s).clone());
            }
            Step::SaveBackoffRecord(r) => self.backoff = r.clone(),
            Step::RemoveBackoffRecord => self.backoff = BackoffRecord::default(),
            Step::RemoveFinalizers(refs) => {
                for r in refs {
                    if let Some(p) = self
                        .pods
                        .iter_mut()
                        .find(|p| p.metadata.uid.as_deref() == Some(&r.uid))
                    {
                        drop_finalizer(p);
                    }
                }
            }
            Step::RecordPolicyActions(_) => {}
            Step::Event(e) => self
                .events
                .push((e.type_, e.reason.clone(), e.message.clone())),
        }
        self.gc();
    }

    pub(super) fn materialize(&mut self, np: &NewPod) -> Pod {
        self.created += 1;
        let name = format!("{}{}", np.generate_name, self.created);
        let meta = np.template.metadata.clone().unwrap_or_default();
        let mut p = Pod {
            metadata: meta,
            spec: np.template.spec.clone(),
            status: None,
        };
        p.metadata.name = Some(name.clone());
        p.metadata.uid = Some(format!("uid-{name}"));
        p.metadata.creation_timestamp = Some(Time(self.now));
        p.status = serde_json::from_value(json!({"phase": "Pending"})).ok();
        p
    }

    /// Deleted pods without finalizers disappear once terminal or unscheduled.
    pub(super) fn gc(&mut self) {
        self.pods.retain(|p| {
            let deleted = p.metadata.deletion_timestamp.is_some();
            let fins = p
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty());
            let phase = p
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default();
            let bound = p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some();
            !(deleted && !fins && (phase == "Succeeded" || phase == "Failed" || !bound))
        });
    }

    pub(super) fn pod_mut(&mut self, name: &str) -> &mut Pod {
        self.pods
            .iter_mut()
            .find(|p| p.metadata.name.as_deref() == Some(name))
            .expect("pod exists")
    }

    pub(super) fn by_index(&mut self, ix: i64) -> &mut Pod {
        let key = "batch.kubernetes.io/job-completion-index";
        self.pods
            .iter_mut()
            .filter(|p| {
                let phase = p
                    .status
                    .as_ref()
                    .and_then(|s| s.phase.as_deref())
                    .unwrap_or_default();
                phase != "Failed" && phase != "Succeeded"
            })
            .find(|p| {
                p.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(key))
                    .map(String::as_str)
                    == Some(ix.to_string().as_str())
            })
            .expect("active pod for index")
    }

    pub(super) fn status(&self) -> JobStatus {
        self.job.status.clone().unwrap_or_default()
    }
}

pub(super) fn drop_finalizer(p: &mut Pod) {
    if let Some(f) = p.metadata.finalizers.as_mut() {
        f.retain(|x| x != FINALIZER);
    }
}

pub(super) fn set_phase(p: &mut Pod, phase: &str, exit: Option<(i32, Timestamp)>) {
    let mut status = json!({"phase": phase});
    if let Some((code, at)) = exit {
        status["containerStatuses"] = json!([cs(
            "main",
            json!({"terminated": {"exitCode": code, "finishedAt": at.to_string()}})
        )]);
    }
    p.status = serde_json::from_value(status).ok();
}

// ---- B. TestSyncJobWithJobPodFailurePolicy (cases 23–41) -----------------

fn msg_exit(container: &str, pod: &str, code: i32, rule: usize) -> String {
    format!(
        "Container {container} for pod default/{pod} failed with exit code {code} matching FailJob rule at index {rule}"
    )
}

fn b_job() -> J {
    job(1, Some(1))
}

#[test]
fn case_23_container_name_restriction_default_handling() {
    let j = b_job()
        .policy(vec![
            exit_rule("Ignore", "In", &[1, 2, 3], Some("main-container")),
            exit_rule("FailJob", "In", &[5, 6, 7], Some("main-container")),
        ])
        .b();
    let pods = [pod(0)
        .phase("Failed")
        .exit("monitoring-container", 5)
        .exit("main-container", 42)
        .b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert!(types(&st).is_empty());
    assert_eq!(counters(&st), (1, 1, 0));
    assert_eq!(plan.created_pods().len(), 1);
}

#[test]
fn case_24_running_pod_not_matched() {
    let j = b_job().policy(exit_rules()).b();
    let pods = [pod(0).phase("Running").exit("main-container", 5).b()];
    let st = final_status(&j, &run(&j, &pods));
    assert!(types(&st).is_empty());
    assert_eq!(counters(&st), (1, 0, 0));
}

#[test]
fn case_25_fail_job_based_on_exit_codes() {
    let j = b_job().policy(exit_rules()).b();
    let pods = [pod(0).phase("Failed").exit("main-container", 5).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    let msg = msg_exit("main-container", "mypod-0", 5, 1);
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "PodFailurePolicy", &msg),
            pair("Failed", "PodFailurePolicy", &msg)
        ]
    );
    assert_eq!(counters(&st), (0, 1, 0));
    assert_eq!(
        plan.policy_actions(),
        BTreeMap::from([("FailJob".to_owned(), 1)])
    );
}

#[test]
fn case_26_already_failure_target_with_failed_pod() {
    let msg = msg_exit("main-container", "mypod-0", 5, 1);
    let j = b_job()
        .policy(exit_rules())
        .condition("FailureTarget", "PodFailurePolicy", &msg)
        .b();
    let pods = [pod(0).phase("Failed").exit("main-container", 5).b()];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "PodFailurePolicy", &msg),
            pair("Failed", "PodFailurePolicy", &msg)
        ]
    );
    assert_eq!(counters(&st).1, 1);
}

#[test]
fn case_27_failure_target_message_from_deleted_pod_survives() {
    let msg = msg_exit("main-container", "already-deleted-pod", 5, 1);
    let j = b_job()
        .policy(exit_rules())
        .condition("FailureTarget", "PodFailurePolicy", &msg)
        .b();
    let pods = [pod(0).phase("Failed").exit("main-container", 5).b()];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(conds(&st)[1], pair("Failed", "PodFailurePolicy", &msg));
    assert_eq!(counters(&st).1, 1);
}

/// ⚑ gates-on: `Failed` waits for the deleted running pod (v1.36 "…JobManagedBy
/// enabled delays setting terminal condition"; observed, case 136).
#[test]
fn case_28_fail_job_with_multiple_pods() {
    let j = job(2, Some(2)).policy(exit_rules()).b();
    let pods = [
        pod(0).phase("Running").b(),
        pod(1).phase("Failed").exit("main-container", 5).b(),
    ];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    let msg = msg_exit("main-container", "mypod-1", 5, 1);
    assert_eq!(
        conds(&st),
        vec![pair("FailureTarget", "PodFailurePolicy", &msg)]
    );
    assert_eq!(counters(&st), (0, 2, 0));
    assert_eq!(st.terminating, Some(1));
    assert_eq!(plan.deleted_pods().len(), 1);
}

#[test]
fn case_29_fail_indexed_job_based_on_exit_codes() {
    let j = b_job().indexed().policy(exit_rules()).b();
    let pods = [pod(0)
        .phase("Failed")
        .index(0)
        .exit("main-container", 5)
        .b()];
    let st = final_status(&j, &run(&j, &pods));
    let msg = msg_exit("main-container", "mypod-0", 5, 1);
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "PodFailurePolicy", &msg),
            pair("Failed", "PodFailurePolicy", &msg)
        ]
    );
    assert_eq!(counters(&st).1, 1);
}

#[test]
fn case_30_fail_job_not_in() {
    let j = b_job()
        .policy(vec![exit_rule("FailJob", "NotIn", &[5, 6, 7], None)])
        .b();
    let pods = [pod(0).phase("Failed").exit("main-container", 42).b()];
    let st = final_status(&j, &run(&j, &pods));
    let msg = msg_exit("main-container", "mypod-0", 42, 0);
    assert_eq!(types(&st), vec!["FailureTarget", "Failed"]);
    assert_eq!(conds(&st)[1].2, msg);
    assert_eq!(counters(&st).1, 1);
}

#[test]
fn case_31_default_handling_not_in() {
    let j = b_job()
        .policy(vec![exit_rule("FailJob", "NotIn", &[5, 6, 7], None)])
        .b();
    let pods = [pod(0).phase("Failed").exit("main-container", 5).b()];
    let st = final_status(&j, &run(&j, &pods));
    assert!(types(&st).is_empty());
    assert_eq!(counters(&st), (1, 1, 0));
}

#[test]
fn case_32_fail_job_for_init_container() {
    let j = b_job().policy(exit_rules()).b();
    let pods = [pod(0)
        .phase("Failed")
        .init_exit("init-container", 5)
        .exit("main-container", 143)
        .b()];
    let st = final_status(&j, &run(&j, &pods));
    let msg = msg_exit("init-container", "mypod-0", 5, 1);
    assert_eq!(
        conds(&st)[0],
        pair("FailureTarget", "PodFailurePolicy", &msg)
    );
    assert_eq!(conds(&st)[1], pair("Failed", "PodFailurePolicy", &msg));
    assert_eq!(counters(&st).1, 1);
}

#[test]
fn case_33_ignore_wins_rule_order_over_container_order() {
    let j = b_job().backoff_limit(0).policy(exit_rules()).b();
    let pods = [pod(0)
        .phase("Failed")
        .exit("container1", 2)
        .exit("container2", 6)
        .b()];
    let st = final_status(&j, &run(&j, &pods));
    assert!(types(&st).is_empty());
    assert_eq!(counters(&st), (1, 0, 0));
}

#[test]
fn case_34_ignore_pod_failure_based_on_exit_codes() {
    let j = b_job().backoff_limit(0).policy(exit_rules()).b();
    let pods = [pod(0).phase("Failed").exit("main-container", 1).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (1, 0, 0));
    assert_eq!(plan.removed_finalizers(), vec!["mypod-0"]);
    assert_eq!(
        plan.policy_actions(),
        BTreeMap::from([("Ignore".to_owned(), 1)])
    );
}

/// ⚑ gates-on: `FailureTarget` precedes `Failed` in the same sync.
#[test]
fn case_35_default_job_based_on_exit_codes_backoff_limit_zero() {
    let j = b_job().backoff_limit(0).policy(exit_rules()).b();
    let pods = [pod(0).phase("Failed").exit("main-container", 10).b()];
    let st = final_status(&j, &run(&j, &pods));
    let m = "Job has reached the specified backoff limit";
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "BackoffLimitExceeded", m),
            pair("Failed", "BackoffLimitExceeded", m)
        ]
    );
    assert_eq!(counters(&st), (0, 1, 0));
}

#[test]
fn case_36_count_first_rule_wins() {
    let j = b_job()
        .policy(vec![
            exit_rule("Count", "In", &[1, 2], None),
            exit_rule("Ignore", "In", &[2, 3], None),
        ])
        .b();
    let pods = [pod(0).phase("Failed").exit("main-container", 2).b()];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st), (1, 1, 0));
}

#[test]
fn case_37_count_first_rule_wins_pod_conditions() {
    let j = b_job()
        .policy(vec![
            cond_rule("Count", "ResourceLimitExceeded", "True"),
            cond_rule("Ignore", "DisruptionTarget", "True"),
        ])
        .b();
    let pods = [pod(0)
        .phase("Failed")
        .cond("ResourceLimitExceeded", "True")
        .dt()
        .b()];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st), (1, 1, 0));
}

#[test]
fn case_38_ignore_pod_failure_based_on_pod_conditions() {
    let j = b_job()
        .backoff_limit(0)
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .b();
    let pods = [pod(0).phase("Failed").dt().b()];
    let st = final_status(&j, &run(&j, &pods));
    assert!(types(&st).is_empty());
    assert_eq!(counters(&st), (1, 0, 0));
}

#[test]
fn case_39_ignored_failures_delay_recreation() {
    let j = b_job()
        .backoff_limit(0)
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .b();
    let pods = [pod(0).phase("Failed").dt().deleted(t0()).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (0, 0, 0));
    assert!(plan.created_pods().is_empty());
    assert_eq!(plan.requeue_after, Some(secs(10)));
}

#[test]
fn case_40_fail_job_based_on_pod_conditions() {
    let j = b_job()
        .policy(vec![cond_rule("FailJob", "DisruptionTarget", "True")])
        .b();
    let pods = [pod(0).phase("Failed").dt().b()];
    let st = final_status(&j, &run(&j, &pods));
    let msg = "Pod default/mypod-0 has condition DisruptionTarget matching FailJob rule at index 0";
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "PodFailurePolicy", msg),
            pair("Failed", "PodFailurePolicy", msg)
        ]
    );
    assert_eq!(counters(&st).1, 1);
}

#[test]
fn case_41_terminating_pod_not_failed_under_policy() {
    let j = job(1, None)
        .backoff_limit(0)
        .policy(vec![cond_rule("Count", "DisruptionTarget", "True")])
        .b();
    let pods = [pod(0).deleted(t0()).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert!(types(&st).is_empty());
    assert_eq!(counters(&st), (0, 0, 0));
    assert_eq!(st.terminating, Some(1));
    assert!(plan.created_pods().is_empty());
}

// ---- C. TestSyncJobWithJobBackoffLimitPerIndex (cases 42–53) -------------

fn c_job() -> J {
    job(2, Some(2)).indexed().per_index(1)
}

#[test]
fn case_42_successful_job_after_single_failure_within_index() {
    let j = c_job().b();
    let pods = [
        pod(0).uid("a1").phase("Failed").index(0).fcount(0).b(),
        pod(1).uid("a2").phase("Succeeded").index(0).fcount(1).b(),
        pod(2).uid("b").phase("Succeeded").index(1).fcount(0).b(),
    ];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (0, 1, 2));
    assert_eq!(st.completed_indexes.as_deref(), Some("0,1"));
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    assert_eq!(st.terminating, Some(0));
    assert_eq!(types(&st), vec!["SuccessCriteriaMet", "Complete"]);
    assert!(st.completion_time.is_some());
    let ev: Vec<_> = plan.events().iter().map(|e| e.reason.clone()).collect();
    assert_eq!(ev, vec!["Completed"]);
}

#[test]
fn case_43_single_failed_pod_not_counted_replacement_delayed() {
    let j = c_job().b();
    let pods = [pod(0).uid("a").phase("Failed").index(0).fcount(0).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (2, 0, 0));
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    assert!(
        plan.removed_finalizers().is_empty(),
        "retained pod keeps its finalizer"
    );
    let created: Vec<_> = plan.created_pods().into_iter().map(|p| p.index).collect();
    assert_eq!(created, vec![Some(0), Some(1)]);
}

#[test]
fn case_44_single_failed_pod_replaced_already() {
    let j = c_job().b();
    let pods = [
        pod(0).uid("a").phase("Failed").index(0).fcount(0).b(),
        pod(1).uid("b").phase("Pending").index(0).fcount(1).b(),
    ];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (2, 1, 0));
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    assert_eq!(plan.removed_finalizers(), vec!["a"]);
}

#[test]
fn case_45_index_exceeds_backoff_limit_per_index_job_continues() {
    let j = c_job().b();
    let pods = [pod(0).uid("a").phase("Failed").index(0).fcount(1).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (1, 1, 0));
    assert_eq!(st.failed_indexes.as_deref(), Some("0"));
    assert!(types(&st).is_empty());
    let created: Vec<_> = plan.created_pods().into_iter().map(|p| p.index).collect();
    assert_eq!(created, vec![Some(1)], "failed index 0 is never re-created");
}

#[test]
fn case_46_fail_index_action_job_continues() {
    let j = c_job()
        .policy(vec![exit_rule("FailIndex", "In", &[3], None)])
        .b();
    let pods = [pod(0)
        .uid("a")
        .phase("Failed")
        .index(0)
        .fcount(0)
        .exit("main", 3)
        .b()];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st), (1, 1, 0));
    assert_eq!(st.failed_indexes.as_deref(), Some("0"));
}

#[test]
fn case_47_fail_job_action_with_per_index() {
    let j = c_job()
        .backoff_limit(6)
        .policy(vec![exit_rule("FailJob", "In", &[3], None)])
        .b();
    let pods = [pod(0)
        .uid("a")
        .phase("Failed")
        .index(0)
        .fcount(0)
        .exit("x", 3)
        .b()];
    let st = final_status(&j, &run(&j, &pods));
    let msg = msg_exit("x", "mypod-0", 3, 0);
    assert_eq!(counters(&st), (0, 1, 0));
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "PodFailurePolicy", &msg),
            pair("Failed", "PodFailurePolicy", &msg)
        ]
    );
}

#[test]
fn case_48_ignore_action_with_per_index() {
    let j = c_job()
        .policy(vec![exit_rule("Ignore", "In", &[3], None)])
        .b();
    let pods = [pod(0)
        .uid("a")
        .phase("Failed")
        .index(0)
        .fcount(0)
        .exit("main", 3)
        .b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (2, 0, 0));
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    let replacement = plan
        .created_pods()
        .into_iter()
        .find(|p| p.index == Some(0))
        .expect("idx 0");
    let ann = replacement
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-failure-count")
            .map(String::as_str),
        Some("0")
    );
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-ignored-failure-count")
            .map(String::as_str),
        Some("1")
    );
}

#[test]
fn case_49_backoff_limit_before_backoff_limit_per_index() {
    let j = c_job().backoff_limit(1).b();
    let pods = [
        pod(0).uid("a").phase("Failed").index(0).fcount(0).b(),
        pod(1).uid("b").phase("Failed").index(1).fcount(0).b(),
    ];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st).1, 2);
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    let m = "Job has reached the specified backoff limit";
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "BackoffLimitExceeded", m),
            pair("Failed", "BackoffLimitExceeded", m)
        ]
    );
}

#[test]
fn case_50_job_failed_due_to_failed_indexes() {
    let j = c_job().b();
    let pods = [
        pod(0).uid("a").phase("Failed").index(0).fcount(1).b(),
        pod(1).uid("b").phase("Succeeded").index(1).b(),
    ];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st), (0, 1, 1));
    assert_eq!(st.failed_indexes.as_deref(), Some("0"));
    assert_eq!(st.completed_indexes.as_deref(), Some("1"));
    let m = "Job has failed indexes";
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "FailedIndexes", m),
            pair("Failed", "FailedIndexes", m)
        ]
    );
}

fn max_failed_indexes_case() -> (Job, Vec<Pod>) {
    let j = job(4, Some(4))
        .indexed()
        .per_index(1)
        .spec("maxFailedIndexes", json!(1))
        .b();
    let pods = vec![
        pod(0).uid("a").phase("Failed").index(0).fcount(1).b(),
        pod(1).uid("b").phase("Succeeded").index(1).b(),
        pod(2).uid("c").phase("Failed").index(2).fcount(1).b(),
        pod(3).uid("d").phase("Running").index(3).node("n1").b(),
    ];
    (j, pods)
}

#[test]
fn case_51_exceeding_max_failed_indexes() {
    let (j, pods) = max_failed_indexes_case();
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (0, 3, 1));
    assert_eq!(st.terminating, Some(1));
    assert_eq!(st.failed_indexes.as_deref(), Some("0,2"));
    assert_eq!(st.completed_indexes.as_deref(), Some("1"));
    let m = "Job has exceeded the specified maximal number of failed indexes";
    assert_eq!(
        conds(&st),
        vec![pair("FailureTarget", "MaxFailedIndexesExceeded", m)]
    );
}

/// ⚑ gates-on: JobPodReplacementPolicy / JobManagedBy cannot be disabled, so
/// the result is case 51's (`FailureTarget` first, `terminating` published),
/// and `Failed` follows once the running pod is gone.
#[test]
fn case_52_max_failed_indexes_gates_off_is_gates_on() {
    let (j, pods) = max_failed_indexes_case();
    let mut store = Store::new(j, pods);
    store.sync();
    assert_eq!(types(&store.status()), vec!["FailureTarget"]);
    set_phase(store.pod_mut("mypod-3"), "Failed", None);
    store.sync();
    let st = store.status();
    assert_eq!(types(&st), vec!["FailureTarget", "Failed"]);
    assert_eq!(st.terminating, Some(0));
    assert_eq!(counters(&st), (0, 3, 1));
}

/// ⚑ gates-on: the gate cannot be turned off; the equivalent is a Job
/// without `backoffLimitPerIndex` that carries a stale `failedIndexes`.
#[test]
fn case_53_failed_indexes_cleaned_without_per_index() {
    let j = job(3, Some(3))
        .indexed()
        .status("failedIndexes", json!("0"))
        .status("completedIndexes", json!("1"))
        .status("succeeded", json!(1))
        .b();
    let pods = [pod(2).uid("c").phase("Pending").index(2).b()];
    let plan = run(&j, &pods);
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (2, 0, 1));
    assert_eq!(st.completed_indexes.as_deref(), Some("1"));
    assert_eq!(st.failed_indexes, None);
}

// ---- D. Counting, finalizers, uncountedTerminatedPods (cases 54–63) ------

#[test]
fn case_54_track_finished_pods() {
    let j = job(2, None).b();
    let pods = [
        pod(0).uid("a").phase("Succeeded").b(),
        pod(1).uid("b").phase("Failed").b(),
        pod(2).uid("c").phase("Succeeded").deleted(t0()).b(),
        pod(3).uid("d").phase("Failed").deleted(t0()).b(),
        pod(4).uid("e").phase("Pending").deleted(t0()).b(),
        pod(5).uid("f").phase("Pending").b(),
        pod(6).uid("g").phase("Running").b(),
    ];
    let plan = run(&j, &pods);
    assert_eq!(plan.removed_finalizers(), vec!["a", "b", "c", "d", "e"]);
    let writes = plan.status_writes();
    assert_eq!(writes.len(), 2);
    assert_eq!(
        uncounted(writes[0]),
        (
            vec!["a".into(), "c".into()],
            vec!["b".into(), "d".into(), "e".into()]
        )
    );
    assert_eq!((writes[0].succeeded, writes[0].failed), (None, None));
    assert_eq!(uncounted(writes[1]), (vec![], vec![]));
    assert_eq!((writes[1].succeeded, writes[1].failed), (Some(2), Some(3)));
    assert!(
        writes[1].uncounted_terminated_pods.is_some(),
        "written as {{}}"
    );
}

/// ⚑ gates-on: the running pod is deleted (terminating), so `Failed` waits
/// and only `FailureTarget` (persisted earlier) is present.
#[test]
fn case_55_failing_job() {
    let j = job(3, None)
        .condition(
            "FailureTarget",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )
        .b();
    let pods = [
        pod(0).uid("a").phase("Succeeded").b(),
        pod(1).uid("b").phase("Failed").b(),
        pod(2).uid("c").phase("Running").node("n1").b(),
    ];
    let plan = run(&j, &pods);
    let writes = plan.status_writes();
    assert_eq!(
        uncounted(writes[0]),
        (vec!["a".into()], vec!["b".into(), "c".into()])
    );
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st), (0, 2, 1));
    assert_eq!(types(&st), vec!["FailureTarget"]);
    let mut store = Store::new(j, pods.to_vec());
    store.sync();
    set_phase(store.pod_mut("mypod-2"), "Failed", None);
    store.sync();
    assert_eq!(types(&store.status()), vec!["FailureTarget", "Failed"]);
    assert_eq!(counters(&store.status()), (0, 2, 1), "no double counting");
}

#[test]
fn case_56_deleted_job_releases_pods() {
    let mut j = job(1, None).b();
    j.metadata.deletion_timestamp = Some(Time(t0()));
    let pods = [
        pod(0).uid("a").phase("Succeeded").b(),
        pod(1).uid("b").phase("Failed").b(),
        pod(2).uid("c").phase("Running").b(),
    ];
    let plan = run(&j, &pods);
    assert_eq!(plan.removed_finalizers(), vec!["a", "b", "c"]);
    let st = final_status(&j, &plan);
    assert_eq!((st.succeeded, st.failed), (Some(1), Some(1)));
    assert!(plan.created_pods().is_empty() && plan.deleted_pods().is_empty());
}

#[test]
fn case_57_too_many_finished() {
    let j = job(0, Some(1000))
        .status("uncountedTerminatedPods", json!({"failed": ["a", "b"]}))
        .b();
    let mut pods: Vec<Pod> = (0..500)
        .map(|i| pod(i).uid(&i.to_string()).phase("Succeeded").b())
        .collect();
    pods.push(pod(500).uid("b").phase("Failed").b());
    let plan = run(&j, &pods);
    assert_eq!(plan.removed_finalizers().len(), 499);
    let writes = plan.status_writes();
    assert_eq!(writes.len(), 2);
    let expected_s: Vec<String> = (0..499).map(|i| i.to_string()).collect();
    assert_eq!(uncounted(writes[0]), (expected_s, vec!["b".into()]));
    assert_eq!(writes[0].failed, Some(1));
    assert_eq!(uncounted(writes[1]), (vec![], vec!["b".into()]));
    assert_eq!(
        (writes[1].succeeded, writes[1].failed),
        (Some(499), Some(1))
    );
    assert!(types(writes[1]).is_empty(), "not finished in this sync");
}

#[test]
fn case_58_terminating_pod_counted_but_failed_delayed() {
    let j = job(1, Some(1))
        .status("uncountedTerminatedPods", json!({"failed": ["a"]}))
        .condition(
            "FailureTarget",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )
        .b();
    let pods = [pod(0)
        .uid("a")
        .phase("Running")
        .deleted(t0())
        .no_finalizer()
        .node("n1")
        .b()];
    let plan = run(&j, &pods);
    let writes = plan.status_writes();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].failed, Some(1));
    assert_eq!(uncounted(writes[0]), (vec![], vec![]));
    assert_eq!(types(writes[0]), vec!["FailureTarget"]);
}

/// ⚑ gates-on: with the gates off upstream adds `Failed` at once; here it
/// is added only when the pod stops terminating (phase `Failed`).
#[test]
fn case_59_failed_added_once_pod_stops_terminating() {
    let j = job(1, Some(1))
        .status("uncountedTerminatedPods", json!({"failed": ["a"]}))
        .condition(
            "FailureTarget",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )
        .b();
    let pods = vec![
        pod(0)
            .uid("a")
            .phase("Running")
            .deleted(t0())
            .no_finalizer()
            .node("n1")
            .b(),
    ];
    let mut store = Store::new(j, pods);
    store.sync();
    assert_eq!(types(&store.status()), vec!["FailureTarget"]);
    set_phase(store.pod_mut("mypod-0"), "Failed", None);
    let plan = store.sync();
    assert_eq!(types(&store.status()), vec!["FailureTarget", "Failed"]);
    assert_eq!(store.status().failed, Some(1));
    assert_eq!(plan.events()[0].reason, "BackoffLimitExceeded");
}

#[test]
fn case_60_delayed_finalizer_removal_not_counted() {
    let j = job(0, Some(2)).indexed().per_index(1).b();
    let pods = [pod(0).uid("a").phase("Failed").index(1).fcount(0).b()];
    let plan = run(&j, &pods);
    assert!(plan.removed_finalizers().is_empty());
    let st = final_status(&j, &plan);
    assert_eq!(st.failed_indexes.as_deref(), Some(""));
    assert_eq!(st.failed, None);
    assert_eq!(uncounted(&st), (vec![], vec![]));
}

#[test]
fn case_61_failed_index_pod_counted() {
    let j = job(0, Some(2)).indexed().per_index(1).b();
    let pods = [pod(0).uid("a").phase("Failed").index(1).fcount(1).b()];
    let plan = run(&j, &pods);
    let writes = plan.status_writes();
    assert_eq!(writes[0].failed_indexes.as_deref(), Some("1"));
    assert_eq!(uncounted(writes[0]).1, vec!["a".to_owned()]);
    assert_eq!(writes[1].failed, Some(1));
}

#[test]
fn case_62_new_finished_pods_deleted() {
    let j = job(1, None)
        .status("succeeded", json!(1))
        .status("failed", json!(1))
        .b();
    let pods = [
        pod(0).uid("a").phase("Succeeded").deleted(t0()).b(),
        pod(1).uid("b").phase("Failed").deleted(t0()).b(),
        pod(2).uid("c").phase("Running").deleted(t0()).b(),
        pod(3).uid("d").phase("Pending").deleted(t0()).b(),
        pod(4)
            .uid("e")
            .phase("Running")
            .deleted(t0())
            .no_finalizer()
            .b(),
        pod(5)
            .uid("f")
            .phase("Pending")
            .deleted(t0())
            .no_finalizer()
            .b(),
    ];
    let plan = run(&j, &pods);
    assert_eq!((plan.summary.succeeded, plan.summary.failed), (2, 4));
}

/// ⚑ gates-on: `terminating` is published (4 terminating + 1 deleted).
#[test]
fn case_63_more_terminating_than_parallelism_with_policy() {
    let j = job(1, Some(1)).policy(vec![]).b();
    let pods = [
        pod(0).phase("Running").b(),
        pod(1).phase("Running").b(),
        pod(2).phase("Running").deleted(t0()).b(),
        pod(3).phase("Running").deleted(t0()).b(),
        pod(4).phase("Running").deleted(t0()).b(),
        pod(5).phase("Running").deleted(t0()).b(),
    ];
    let plan = run(&j, &pods);
    assert_eq!(plan.deleted_pods().len(), 1);
    assert!(plan.created_pods().is_empty());
    let st = final_status(&j, &plan);
    assert_eq!(counters(&st).0, 1);
    assert_eq!(st.terminating, Some(5));
}

// ---- E. Back-off (cases 64–70) --------------------------------------------

#[test]
fn case_64_three_failures_five_second_base() {
    let r = remaining_for_failures(t0(), secs(5), secs(700), 3, Some(t0()));
    assert_eq!(r, secs(20));
}

#[test]
fn case_65_cap_and_elapsed_time() {
    assert_eq!(
        remaining_for_failures(t0(), secs(5), secs(700), 8, Some(t0())),
        secs(640)
    );
    assert_eq!(
        remaining_for_failures(t0(), secs(5), secs(700), 9, Some(t0())),
        secs(700)
    );
    let failed = t0();
    assert_eq!(
        remaining_for_failures(t0() + secs(1), secs(5), secs(700), 1, Some(failed)),
        secs(4)
    );
    assert_eq!(
        remaining_for_failures(t0() + secs(5), secs(5), secs(700), 1, Some(failed)),
        secs(0)
    );
    // A1: 10 s doubling, capped at 600 s.
    let seq: Vec<i64> = (1..=8)
        .map(|n| {
            delay_for_failures(
                backoff::DEFAULT_POD_FAILURE_BACKOFF,
                backoff::MAX_POD_FAILURE_BACKOFF,
                n,
            )
            .as_secs()
        })
        .collect();
    assert_eq!(seq, vec![10, 20, 40, 80, 160, 320, 600, 600]);
}

#[test]
fn case_66_ignored_failures_lengthen_per_index_backoff() {
    let p = pod(0)
        .phase("Failed")
        .index(0)
        .fcount(1)
        .icount(1)
        .exit_at("main", 1, t0())
        .b();
    assert_eq!(
        remaining_for_index_with(t0(), secs(5), secs(600), Some(&p)),
        secs(20)
    );
}

#[test]
fn case_67_backoff_on_restart_policy_never() {
    // not enough failures with backoffLimit 1 - single pod
    let j = job(1, Some(1)).backoff_limit(1).b();
    let st = final_status(&j, &run(&j, &[pod(0).phase("Failed").b()]));
    assert_eq!(counters(&st), (1, 1, 0));
    assert!(types(&st).is_empty());
    // too many failures with backoffLimit 1 - single pod
    let pods = [pod(0).phase("Failed").b(), pod(1).phase("Failed").b()];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st), (0, 2, 0));
    let m = "Job has reached the specified backoff limit";
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "BackoffLimitExceeded", m),
            pair("Failed", "BackoffLimitExceeded", m)
        ]
    );
    // not enough failures with backoffLimit 6 - multiple pods
    let j = job(2, Some(2)).backoff_limit(6).b();
    let mut pods: Vec<Pod> = (0..6).map(|i| pod(i).phase("Failed").b()).collect();
    pods.push(pod(6).phase("Running").b());
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st), (2, 6, 0));
}

/// ⚑ gates-on for the first sub-case: the running pod is terminating, so
/// only `FailureTarget` is written (upstream recorded `Failed` directly).
#[test]
fn case_68_backoff_for_on_failure() {
    let on_failure = |p: i32, limit: i32| {
        job(p, Some(p))
            .backoff_limit(limit)
            .spec(
                "template",
                json!({"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "main"}]}}),
            )
            .b()
    };
    let j = on_failure(1, 1);
    let st = final_status(
        &j,
        &run(
            &j,
            &[pod(0).phase("Running").running("main").restarts(1).b()],
        ),
    );
    assert_eq!(counters(&st), (0, 1, 0));
    assert_eq!(types(&st), vec!["FailureTarget"]);
    assert_eq!(conds(&st)[0].1, "BackoffLimitExceeded");
    // not enough failures
    let j = on_failure(2, 3);
    let pods = [
        pod(0).phase("Running").running("main").restarts(1).b(),
        pod(1).phase("Running").running("main").restarts(1).b(),
    ];
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(counters(&st).0, 2);
    assert!(types(&st).is_empty());
    // too many job failures with podRunning - multiple pods
    let j = on_failure(2, 2);
    let st = final_status(&j, &run(&j, &pods));
    assert_eq!(
        conds(&st),
        vec![pair(
            "FailureTarget",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit"
        )]
    );
}

#[test]
fn case_69_active_back_off_blocks_creation() {
    let j = job(1, Some(1)).b();
    let record = BackoffRecord {
        failures_after_last_success: 1,
        last_failure_time: Some(t0()),
    };
    let plan = run_full(&j, &[], &record, t0());
    assert!(plan.created_pods().is_empty());
    assert_eq!(counters(&final_status(&j, &plan)).0, 0);
    assert_eq!(plan.requeue_after, Some(secs(10)));
    let plan = run_full(&j, &[], &BackoffRecord::default(), t0());
    assert_eq!(plan.created_pods().len(), 1);
}

#[test]
fn case_70_per_index_creation_waits_for_backoff() {
    let failed_at = |i: usize, ix: i64, at: Timestamp| {
        pod(i)
            .phase("Failed")
            .index(ix)
            .fcount(0)
            .exit_at("main", 1, at)
            .b()
    };
    let pods = [
        failed_at(1, 1, t0()),
        failed_at(2, 2, t0()),
        failed_at(3, 3, t0()),
    ];
    let delayed: BTreeMap<i64, &Pod> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| (i as i64 + 1, p))
        .collect();
    assert_eq!(
        indexes_ready_now(&[1, 2, 3], &delayed, t0()),
        (vec![], secs(10))
    );
    let long_ago = t0() - secs(3600);
    let pods = [
        failed_at(1, 1, t0()),
        failed_at(2, 2, t0()),
        failed_at(3, 3, long_ago),
    ];
    let delayed: BTreeMap<i64, &Pod> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| (i as i64 + 1, p))
        .collect();
    assert_eq!(
        indexes_ready_now(&[1, 2, 3], &delayed, t0()),
        (vec![3], secs(0))
    );
}

// ---- F. Per-index helpers (cases 71–74) ------------------------------------

#[test]
fn case_71_is_index_failed() {
    let failed = |c: i32| {
        pod(0)
            .phase("Failed")
            .index(0)
            .fcount(c)
            .exit("main", 3)
            .b()
    };
    assert!(is_index_failed(
        &job(1, Some(1)).indexed().per_index(0).b(),
        &failed(0)
    ));
    assert!(is_index_failed(
        &job(1, Some(1)).indexed().per_index(1).b(),
        &failed(1)
    ));
    assert!(!is_index_failed(
        &job(1, Some(1)).indexed().per_index(1).b(),
        &failed(0)
    ));
    let j = job(1, Some(1))
        .indexed()
        .per_index(1)
        .policy(vec![exit_rule("FailIndex", "In", &[3], None)])
        .b();
    assert!(is_index_failed(&j, &failed(0)));
}

#[test]
fn case_72_new_index_failure_count_value() {
    let j = job(1, Some(1))
        .indexed()
        .per_index(5)
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .b();
    let prev = pod(0).phase("Failed").index(0).fcount(3).dt().b();
    assert_eq!(new_index_failure_counts(&j, Some(&prev)), (3, 1));
    let j = job(1, Some(1)).indexed().per_index(5).b();
    let prev = pod(0).phase("Failed").index(0).fcount(3).b();
    assert_eq!(new_index_failure_counts(&j, Some(&prev)), (4, 0));
    assert_eq!(new_index_failure_counts(&j, None), (0, 0));
    // unparsable / negative annotations read as 0
    let odd = pod(0).b();
    let mut odd = odd;
    odd.metadata.annotations = Some(BTreeMap::from([(
        "batch.kubernetes.io/job-index-failure-count".to_owned(),
        "-4".to_owned(),
    )]));
    assert_eq!(index_failure_count(&odd), 0);
}

#[test]
fn case_73_pods_with_delayed_deletion_per_index() {
    let j = job(2, Some(2)).indexed().per_index(3).b();
    let a = |i: usize, c: i32, at: i64| {
        pod(i)
            .phase("Failed")
            .index(0)
            .fcount(c)
            .exit_at("main", 1, t0() + secs(at))
            .b()
    };
    let pods = [a(1, 0, 0), a(2, 1, 10), a(3, 2, 20)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let none = Intervals::default();
    let kept = pods_with_delayed_deletion(&j, &refs, &[], &none, &none);
    assert_eq!(
        kept.get(&0).and_then(|p| p.metadata.name.as_deref()),
        Some("mypod-3")
    );
    // quirk kept: a higher count that finished earlier does not displace the candidate
    let pods = [a(1, 0, 20), a(2, 5, 10)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let kept = pods_with_delayed_deletion(&j, &refs, &[], &none, &none);
    assert_eq!(
        kept.get(&0).and_then(|p| p.metadata.name.as_deref()),
        Some("mypod-1")
    );
    // failed pod for an active index: not delayed, it is already replaced
    let failed = pod(1).phase("Failed").index(0).b();
    let active = pod(2).phase("Running").index(0).b();
    let kept = pods_with_delayed_deletion(&j, &[&failed], &[&active], &none, &none);
    assert!(kept.is_empty());
}

#[test]
fn case_74_calculate_failed_indexes() {
    let j = job(2, Some(2))
        .indexed()
        .per_index(0)
        .status("failedIndexes", json!("0"))
        .b();
    let p = pod(1).phase("Failed").index(1).fcount(0).b();
    assert_eq!(indexes::failed_indexes(&j, &[&p]).render(), "0,1");
    let j = job(2, Some(2))
        .indexed()
        .per_index(0)
        .status("failedIndexes", json!("9"))
        .b();
    assert_eq!(indexes::failed_indexes(&j, &[&p]).render(), "1");
    // compact rendering and clipping
    assert_eq!(Intervals::parse("1-3,7,x,5-", 10).render(), "1-3,7");
    assert_eq!(Intervals::parse("0,1,2,4", 10).render(), "0-2,4");
    assert_eq!(Intervals::parse("3-20", 5).render(), "3,4");
}

// ---- K. v1.36 sources and observed behaviour (cases 128, 129, 136–140) ----

#[test]
fn case_128_sidecar_finish_time_is_consulted() {
    let p = pod(0)
        .sidecar("sidecar")
        .phase("Failed")
        .exit_at("main", 1, t0() - secs(1))
        .status_list(
            "initContainerStatuses",
            cs(
                "sidecar",
                json!({"terminated": {"exitCode": 143, "finishedAt": t0().to_string()}}),
            ),
        )
        .b();
    assert_eq!(finished_time(&p), t0());
    // a running sidecar voids the container-based time (Ready=False is next)
    let p = pod(0)
        .sidecar("sidecar")
        .exit_at("main", 1, t0() - secs(100))
        .status_list(
            "initContainerStatuses",
            cs("sidecar", json!({"running": {}})),
        )
        .created(t0() - secs(500))
        .b();
    assert_eq!(finished_time(&p), t0() - secs(500));
    // observed: main now−100 s, sidecar now−1 s, first failure → ~9 s
    let j = job(1, Some(1)).b();
    let p = pod(0)
        .sidecar("sidecar")
        .phase("Failed")
        .exit_at("main", 1, t0() - secs(100))
        .status_list(
            "initContainerStatuses",
            cs("sidecar", json!({"terminated": {"exitCode": 143, "finishedAt": (t0() - secs(1)).to_string()}})),
        )
        .b();
    assert_eq!(run(&j, &[p]).requeue_after, Some(secs(9)));
}

#[test]
fn case_129_backoff_cap_is_600_seconds() {
    let j = job(7, None).backoff_limit(100).b();
    let pods_at = |ago: i64| -> Vec<Pod> {
        (0..7)
            .map(|i| {
                pod(i)
                    .phase("Failed")
                    .exit_at("main", 1, t0() - secs(ago))
                    .b()
            })
            .collect()
    };
    let plan = run(&j, &pods_at(585));
    assert!(plan.created_pods().is_empty());
    assert_eq!(plan.requeue_after, Some(secs(15)));
    let plan = run(&j, &pods_at(630));
    assert_eq!(plan.created_pods().len(), 7);
    // per-index variant
    let j = job(1, Some(1)).indexed().per_index(100).b();
    let retained = |count: i32, ago: i64| {
        pod(0)
            .phase("Failed")
            .index(0)
            .fcount(count)
            .exit_at("main", 1, t0() - secs(ago))
            .b()
    };
    assert_eq!(run(&j, &[retained(6, 585)]).requeue_after, Some(secs(15)));
    let plan = run(&j, &[retained(6, 630)]);
    let created = plan.created_pods();
    assert_eq!(created.len(), 1);
    let ann = created[0]
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-failure-count")
            .map(String::as_str),
        Some("7")
    );
    assert_eq!(run(&j, &[retained(5, 305)]).requeue_after, Some(secs(15)));
    assert_eq!(run(&j, &[retained(0, 0)]).requeue_after, Some(secs(10)));
}

#[test]
fn case_136_failure_target_waits_for_terminating_pods() {
    let j = job(2, None)
        .policy(vec![exit_rule("FailJob", "In", &[42], None)])
        .b();
    let pods = vec![
        pod(0)
            .uid("A")
            .node("n1")
            .phase("Failed")
            .exit("main", 42)
            .b(),
        pod(1)
            .uid("B")
            .node("n1")
            .phase("Running")
            .running("main")
            .b(),
    ];
    let mut store = Store::new(j, pods);
    store.sync();
    let msg = msg_exit("main", "mypod-0", 42, 0);
    assert_eq!(store.status_writes.len(), 2);
    let w1 = &store.status_writes[0];
    assert_eq!(
        conds(w1),
        vec![pair("FailureTarget", "PodFailurePolicy", &msg)]
    );
    assert_eq!(uncounted(w1).1, vec!["A".to_owned(), "B".to_owned()]);
    assert_eq!(w1.terminating, Some(1));
    assert_eq!(store.status_writes[1].failed, Some(2));
    // 25 s later: still terminating
    store.now = t0() + secs(25);
    store.sync();
    assert_eq!(types(&store.status()), vec!["FailureTarget"]);
    assert_eq!(store.status().terminating, Some(1));
    // B's phase becomes Failed
    let now = store.now;
    set_phase(store.pod_mut("mypod-1"), "Failed", Some((143, now)));
    store.sync();
    let st = store.status();
    assert_eq!(types(&st), vec!["FailureTarget", "Failed"]);
    assert_eq!(st.terminating, Some(0));
    assert_eq!(st.failed, Some(2));
    assert_eq!(
        store.events,
        vec![(EventType::Warning, "PodFailurePolicy".to_owned(), msg)]
    );
}

#[test]
fn case_137_two_phase_status_writes() {
    let j = job(1, Some(1)).backoff_limit(0).b();
    let plan = run(&j, &[pod(0).uid("u1").phase("Failed").b()]);
    let writes = plan.status_writes();
    assert_eq!(writes.len(), 2);
    let m = "Job has reached the specified backoff limit";
    assert_eq!(uncounted(writes[0]), (vec![], vec!["u1".to_owned()]));
    assert_eq!(
        conds(writes[0]),
        vec![pair("FailureTarget", "BackoffLimitExceeded", m)]
    );
    assert_eq!(writes[0].failed, None);
    assert_eq!(writes[1].failed, Some(1));
    assert_eq!(uncounted(writes[1]), (vec![], vec![]));
    assert_eq!(types(writes[1]), vec!["FailureTarget", "Failed"]);
    // order: write 1 (+ back-off record), finalizer removal, write 2, event
    let kinds: Vec<&str> = plan
        .steps
        .iter()
        .map(|s| match s {
            Step::UpdateStatus(_) => "status",
            Step::SaveBackoffRecord(_) => "backoff",
            Step::RemoveFinalizers(_) => "finalizers",
            Step::Event(_) => "event",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["status", "backoff", "finalizers", "status", "event"]
    );
    let ev = plan.events();
    assert_eq!(
        (ev[0].type_, ev[0].reason.as_str(), ev[0].message.as_str()),
        (EventType::Warning, "BackoffLimitExceeded", m)
    );
}

#[test]
fn case_138_pod_replacement_policy() {
    // TerminatingOrFailed: counted at once, replaced after the back-off
    let running_deleted = || {
        pod(0)
            .node("n1")
            .phase("Running")
            .running("main")
            .deleted(t0() + secs(30))
            .grace(30)
            .b()
    };
    let j = job(1, Some(1))
        .spec("podReplacementPolicy", json!("TerminatingOrFailed"))
        .b();
    let mut store = Store::new(j, vec![running_deleted()]);
    let plan = store.sync();
    assert_eq!(
        (store.status().failed, store.status().terminating),
        (Some(1), Some(1))
    );
    assert!(plan.created_pods().is_empty());
    assert_eq!(plan.requeue_after, Some(secs(10)));
    store.now = t0() + secs(10);
    assert_eq!(store.sync().created_pods().len(), 1);
    // Failed (no pod failure policy): not counted, not replaced until terminal
    let j = job(1, Some(1))
        .spec("podReplacementPolicy", json!("Failed"))
        .b();
    let mut store = Store::new(j, vec![running_deleted()]);
    let plan = store.sync();
    assert_eq!(
        (store.status().failed, store.status().terminating),
        (None, Some(1))
    );
    assert!(plan.created_pods().is_empty() && plan.requeue_after.is_none());
    store.now = t0() + secs(25);
    assert!(store.sync().created_pods().is_empty());
    set_phase(store.pod_mut("mypod-0"), "Failed", Some((137, t0())));
    let plan = store.sync();
    assert_eq!(store.status().failed, Some(1));
    assert_eq!(plan.created_pods().len(), 1);
    // an unscheduled deleted pod turned Failed by PodGC (no condition) counts
    let j = job(1, Some(1))
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .b();
    let gc_failed = pod(0).phase("Failed").deleted(t0()).b();
    let st = final_status(
        &j,
        &run_full(&j, &[gc_failed], &BackoffRecord::default(), t0() + secs(20)),
    );
    assert_eq!(st.failed, Some(1));
}

#[test]
fn case_139_failed_indexes_progression_and_annotations() {
    let j = job(6, Some(6))
        .indexed()
        .per_index(0)
        .spec("maxFailedIndexes", json!(5))
        .b();
    let mut store = Store::new(j, vec![]);
    let plan = store.sync();
    assert_eq!(store.status().failed_indexes.as_deref(), Some(""));
    let batches: Vec<usize> = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::CreatePods { batches } => Some(batches.iter().map(Vec::len).collect()),
            _ => None,
        })
        .next()
        .unwrap_or_default();
    assert_eq!(batches, vec![1, 2, 3], "slow start 1, 2, 4 (truncated)");
    assert_eq!(store.pods.len(), 6);
    let fail = |store: &mut Store, ix: i64| {
        let now = store.now;
        set_phase(store.by_index(ix), "Failed", Some((1, now)));
    };
    fail(&mut store, 1);
    fail(&mut store, 2);
    store.sync();
    assert_eq!(store.status().failed_indexes.as_deref(), Some("1,2"));
    fail(&mut store, 4);
    store.sync();
    assert_eq!(store.status().failed_indexes.as_deref(), Some("1,2,4"));
    fail(&mut store, 3);
    store.sync();
    assert_eq!(store.status().failed_indexes.as_deref(), Some("1-4"));
    for ix in [0, 5] {
        let now = store.now;
        set_phase(store.by_index(ix), "Succeeded", Some((0, now)));
    }
    store.sync();
    let st = store.status();
    assert_eq!(st.completed_indexes.as_deref(), Some("0,5"));
    assert_eq!(counters(&st), (0, 4, 2));
    let m = "Job has failed indexes";
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "FailedIndexes", m),
            pair("Failed", "FailedIndexes", m)
        ]
    );

    // 1/1, backoffLimitPerIndex 1, Ignore on DisruptionTarget
    let j = job(1, Some(1))
        .indexed()
        .per_index(1)
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .b();
    let first = pod(0)
        .index(0)
        .fcount(0)
        .phase("Failed")
        .dt()
        .exit_at("main", 137, t0())
        .b();
    let mut store = Store::new(j, vec![first]);
    let plan = store.sync();
    assert!(plan.created_pods().is_empty());
    assert_eq!(plan.requeue_after, Some(secs(10)));
    assert!(
        store.pods[0]
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == FINALIZER)
    );
    store.now = t0() + secs(10);
    let plan = store.sync();
    let created = plan.created_pods();
    let ann = created[0]
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-failure-count")
            .map(String::as_str),
        Some("0")
    );
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-ignored-failure-count")
            .map(String::as_str),
        Some("1")
    );
    store.sync();
    assert!(store.pods.iter().all(|p| {
        p.metadata.name.as_deref() != Some("mypod-0")
            || !p
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == FINALIZER)
    }));
    assert_eq!(
        store.status().failed,
        None,
        "ignored failure is never counted"
    );
    let t1 = store.now + secs(5);
    store.now = t1;
    set_phase(store.by_index(0), "Failed", Some((1, t1)));
    let plan = store.sync();
    assert_eq!(plan.requeue_after, Some(secs(20)));
    store.now = t1 + secs(20);
    let plan = store.sync();
    let ann = plan.created_pods()[0]
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-failure-count")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        ann.get("batch.kubernetes.io/job-index-ignored-failure-count")
            .map(String::as_str),
        Some("1")
    );
}

#[test]
fn case_140_fail_job_from_pod_without_finalizer() {
    let j = job(3, None)
        .policy(vec![exit_rule("FailJob", "In", &[42], None)])
        .b();
    let foreign = pod(9)
        .name("foreign")
        .uid("foreign")
        .no_finalizer()
        .phase("Failed")
        .exit("main", 42)
        .b();
    let mut pods: Vec<Pod> = (0..3)
        .map(|i| pod(i).node("n1").phase("Running").running("main").b())
        .collect();
    pods.push(foreign);
    let mut store = Store::new(j, pods);
    store.sync();
    let msg = "Container main for pod default/foreign failed with exit code 42 matching FailJob rule at index 0";
    assert_eq!(
        conds(&store.status()),
        vec![pair("FailureTarget", "PodFailurePolicy", msg)]
    );
    assert_eq!(store.status().failed, Some(3));
    for i in 0..3 {
        set_phase(
            store.pod_mut(&format!("mypod-{i}")),
            "Failed",
            Some((143, t0())),
        );
    }
    store.sync();
    let st = store.status();
    assert_eq!(
        conds(&st),
        vec![
            pair("FailureTarget", "PodFailurePolicy", msg),
            pair("Failed", "PodFailurePolicy", msg)
        ]
    );
    assert_eq!(st.failed, Some(3), "the foreign pod is not counted");
}

// ---- A5: deterministic FailJob choice; explain --------------------------

#[test]
fn a5_first_failed_pod_by_creation_time_decides_the_message() {
    let j = job(2, None)
        .policy(vec![exit_rule("FailJob", "In", &[42, 43], None)])
        .b();
    let older = pod(1)
        .created(t0() - secs(60))
        .phase("Failed")
        .exit("main", 43)
        .b();
    let newer = pod(0).created(t0()).phase("Failed").exit("main", 42).b();
    for pods in [[older.clone(), newer.clone()], [newer, older]] {
        let st = final_status(&j, &run(&j, &pods));
        assert_eq!(conds(&st)[0].2, msg_exit("main", "mypod-1", 43, 0));
    }
}

#[test]
fn explain_reuses_the_sync_decision() {
    let j = job(3, None)
        .backoff_limit(1)
        .policy(vec![
            exit_rule("Ignore", "In", &[1], None),
            exit_rule("Count", "In", &[2], None),
        ])
        .b();
    let pods = [
        pod(0).phase("Failed").exit("main", 1).b(),
        pod(1).phase("Failed").exit("main", 2).b(),
        pod(2).phase("Failed").exit("main", 9).b(),
        pod(3).phase("Running").b(),
    ];
    let e = explain(&j, &pods, t0());
    let verdicts: Vec<&str> = e.failed_pods.iter().map(|p| p.verdict.as_str()).collect();
    assert_eq!(
        verdicts,
        vec![
            "rule 0 (Ignore) — ignored",
            "rule 1 (Count) — counted",
            "no rule — counted"
        ]
    );
    assert_eq!(
        (e.counters.failed, e.counters.succeeded, e.counters.ignored),
        (3, 0, 1)
    );
    assert_eq!(
        e.decision,
        JobDecision::FailureTarget {
            reason: "BackoffLimitExceeded".to_owned(),
            message: "Job has reached the specified backoff limit".to_owned()
        }
    );
    let v = serde_json::to_value(&e).expect("serializable");
    assert_eq!(v["failedPods"][1]["action"], json!("Count"));
    assert_eq!(v["decision"]["state"], json!("FailureTarget"));
}

#[test]
fn partial_delete_failure_forgets_the_finished_condition() {
    let j = job(2, None)
        .policy(vec![exit_rule("FailJob", "In", &[42], None)])
        .b();
    let pods = [
        pod(0).phase("Failed").exit("main", 42).b(),
        pod(1).phase("Running").b(),
    ];
    let expected = BTreeSet::new();
    let input = SyncInput {
        job: &j,
        pods: &pods,
        backoff: &BackoffRecord::default(),
        expected_removed_finalizers: &expected,
        expectations_satisfied: true,
        now: t0(),
    };
    let outcome = ManageOutcome {
        failed_deletions: BTreeSet::from(["mypod-1".to_owned()]),
        failed_creations: 0,
    };
    let plan = sync_job_after_manage(&input, &outcome, false);
    assert!(plan.deleted_pods().is_empty(), "manage step excluded");
    assert!(
        plan.status_writes().iter().all(|s| types(s).is_empty()),
        "no FailureTarget this sync"
    );
    assert_eq!(plan.removed_finalizers(), vec!["mypod-0"]);
}

// ---- property: the two-phase counting protocol survives crashes ----------

#[derive(Clone, Debug)]
struct PodSpec {
    phase: &'static str,
    finalizer: bool,
    deleted: bool,
    exit: i32,
    dt: bool,
    bound: bool,
}

fn pod_spec_s() -> impl Strategy<Value = PodSpec> {
    (
        prop::sample::select(vec!["Pending", "Running", "Succeeded", "Failed"]),
        prop::bool::weighted(0.85),
        prop::bool::weighted(0.2),
        prop::sample::select(vec![0, 1, 2, 42]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(phase, finalizer, deleted, exit, dt, bound)| PodSpec {
            phase,
            finalizer,
            deleted,
            exit,
            dt,
            bound,
        })
}

fn build_pod(i: usize, s: &PodSpec) -> Pod {
    let mut p = pod(i).phase(s.phase).exit("main", s.exit);
    if s.dt {
        p = p.dt();
    }
    if !s.finalizer {
        p = p.no_finalizer();
    }
    if s.deleted {
        p = p.deleted(t0());
    }
    if s.bound {
        p = p.node("n1");
    }
    p.b()
}

fn build_job(policy_kind: u8, limit: i32, completions: Option<i32>, parallelism: i32) -> Job {
    let j = job(parallelism, completions).backoff_limit(limit);
    match policy_kind {
        0 => j.b(),
        1 => j
            .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
            .b(),
        2 => j
            .policy(vec![
                exit_rule("FailJob", "In", &[42], None),
                exit_rule("Ignore", "In", &[1], None),
            ])
            .b(),
        _ => j.policy(vec![exit_rule("Count", "In", &[1], None)]).b(),
    }
}

/// UIDs newly appended to the uncounted lists by a write, given the
/// previously persisted status.
fn appended(prev: &JobStatus, next: &JobStatus) -> Vec<String> {
    let (ps, pf) = uncounted(prev);
    let (ns, nf) = uncounted(next);
    let before: BTreeSet<String> = ps.into_iter().chain(pf).collect();
    ns.into_iter()
        .chain(nf)
        .filter(|u| !before.contains(u))
        .collect()
}

/// Applies `steps` (all, or the first `crash_after`), recording appended UIDs.
fn apply_tracking(
    store: &mut Store,
    steps: &[Step],
    crash_after: Option<usize>,
    seen: &mut BTreeMap<String, u32>,
) {
    let limit = crash_after.unwrap_or(steps.len());
    for step in steps.iter().take(limit) {
        if let Step::UpdateStatus(next) = step {
            for uid in appended(&store.status(), next) {
                *seen.entry(uid).or_insert(0) += 1;
            }
        }
        store.apply_one(step);
    }
    if crash_after.is_some() {
        // The controller restarts: its in-memory back-off record is lost.
        store.backoff = BackoffRecord::default();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A crash between any two steps of a sync, followed by plain syncs,
    /// never counts a pod twice and never loses one.
    #[test]
    fn two_phase_counting_is_crash_safe(
        specs in prop::collection::vec(pod_spec_s(), 0..8),
        policy_kind in 0u8..4,
        limit in prop::sample::select(vec![0, 1, 3, 100]),
        completions in prop::option::of(1..6i32),
        parallelism in 0..4i32,
        crash1 in 0usize..8,
        crash2 in 0usize..8,
    ) {
        let job = build_job(policy_kind, limit, completions, parallelism);
        let pods: Vec<Pod> = specs.iter().enumerate().map(|(i, s)| build_pod(i, s)).collect();
        let mut store = Store::new(job.clone(), pods.clone());
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();

        let plan = store.plan();
        apply_tracking(&mut store, &plan.steps, Some(crash1.min(plan.steps.len())), &mut seen);
        let plan = store.plan();
        apply_tracking(&mut store, &plan.steps, Some(crash2.min(plan.steps.len())), &mut seen);
        let mut stable = false;
        for _ in 0..12 {
            let plan = store.plan();
            let busy = plan.steps.iter().any(|s| matches!(s, Step::UpdateStatus(_) | Step::RemoveFinalizers(_)));
            apply_tracking(&mut store, &plan.steps, None, &mut seen);
            if !busy {
                stable = true;
                break;
            }
        }
        prop_assert!(stable, "protocol must converge");

        // never counted twice
        for (uid, n) in &seen {
            prop_assert_eq!(*n, 1, "uid {} appended {} times", uid, n);
        }
        let st = store.status();
        let (us, uf) = uncounted(&st);
        prop_assert!(us.is_empty() && uf.is_empty(), "uncounted lists drained: {:?} {:?}", us, uf);
        let total = i64::from(st.succeeded.unwrap_or(0)) + i64::from(st.failed.unwrap_or(0));
        prop_assert_eq!(total, seen.len() as i64, "counters equal distinct appended UIDs");

        // never lost: every tracked, finished pod that counts was appended
        let policy = job.spec.as_ref().and_then(|s| s.pod_failure_policy.as_ref());
        for p in &pods {
            let uid = p.metadata.uid.clone().unwrap_or_default();
            let tracked = p.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER);
            let phase = p.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
            let failed = exitplan_control::job::classify::is_pod_failed(p, &job);
            let counts = phase == "Succeeded"
                || (failed && exitplan_control::job::match_pod_failure_policy(policy, p).count_failed);
            if tracked && counts {
                prop_assert!(seen.contains_key(&uid), "pod {} lost", uid);
            }
        }
        // and nothing that finished keeps the tracking finalizer
        for p in &store.pods {
            let phase = p.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
            let tracked = p.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER);
            prop_assert!(!(tracked && (phase == "Succeeded" || phase == "Failed")), "finished pod keeps finalizer");
        }
    }
}

// ---------------------------------------------------------------------------
// Hostile stored values never panic (found by review).

/// A terminating pod whose completion-index annotation is `i64::MAX` (Go's
/// `Atoi` accepts it) must not overflow the pending-index computation. With
/// `podReplacementPolicy: Failed` it still counts as terminating (§7: create
/// wantActive − terminating − active = 2 − 1 − 0), so index 0 is created.
#[test]
fn extreme_completion_index_on_a_terminating_pod() {
    let job: Job = serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": "foobar", "uid": "job-uid"},
        "spec": {"parallelism": 2, "completions": 2, "backoffLimit": 6,
                 "completionMode": "Indexed", "podReplacementPolicy": "Failed",
                 "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main"}]}}},
        "status": {}
    }))
    .expect("job");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": "odd", "uid": "odd",
                     "finalizers": ["batch.kubernetes.io/job-tracking"],
                     "deletionTimestamp": "2026-03-01T12:00:00Z",
                     "annotations": {"batch.kubernetes.io/job-completion-index": "9223372036854775807"}},
        "spec": {"containers": [{"name": "main"}]},
        "status": {"phase": "Running"}
    }))
    .expect("pod");
    let (backoff, expected) = (BackoffRecord::default(), BTreeSet::new());
    let plan = sync_job(&SyncInput {
        job: &job,
        pods: &[pod],
        backoff: &backoff,
        expected_removed_finalizers: &expected,
        expectations_satisfied: true,
        now: "2026-03-01T12:00:00Z".parse().expect("time"),
    });
    let created: Vec<_> = plan.created_pods().into_iter().map(|p| p.index).collect();
    assert_eq!(created, vec![Some(0)]);
}

/// `deletionGracePeriodSeconds: i64::MIN` must not overflow the finish time.
#[test]
fn extreme_deletion_grace_period() {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": "p", "uid": "p",
                     "deletionTimestamp": "2026-03-01T12:00:00Z",
                     "deletionGracePeriodSeconds": i64::MIN},
        "status": {"phase": "Failed"}
    }))
    .expect("pod");
    assert_eq!(
        finished_time(&pod),
        Timestamp::MAX,
        "saturates instead of panicking"
    );
}
