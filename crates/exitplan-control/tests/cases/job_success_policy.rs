//! Job `spec.successPolicy` (job-failure spec §5 step 7; upstream
//! `success_policy.go`, GA since 1.33): the matching table of upstream's
//! `TestMatchSuccessPolicy`, the sync table of `TestSyncJobWithJobSuccessPolicy`
//! (all gates on: ⚑ marks cases upstream recorded with a gate off, asserted
//! here with every gate on) and the whole life of a Job that meets its policy:
//! `SuccessCriteriaMet` (reason `SuccessPolicy`, message `Matched rules at
//! index N`), the remaining pods deleted, `Complete` with the same reason and
//! message once none is terminating. Every status write is also checked
//! against the server's `/status` validation.

use exitplan_control::job::backoff::BackoffRecord;
use exitplan_control::job::explain::JobDecision;
use exitplan_control::job::indexes::Intervals;
use exitplan_control::job::plan::EventType;
use exitplan_control::job::success_policy::{
    evaluate_rules, match_succeeded_indexes_rule, match_success_policy,
};
use exitplan_control::job::{Step, explain};
use k8s_openapi::api::batch::v1::{Job, SuccessPolicy, SuccessPolicyRule};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::job_status_validity::first_refused_write;
use super::job_sync::{J, Store, conds, final_status, job, pair, pod, run_full, secs, t0};
use super::pod_failure_policy::cond_rule;

fn rule(indexes: Option<&str>, count: Option<i32>) -> SuccessPolicyRule {
    SuccessPolicyRule {
        succeeded_indexes: indexes.map(str::to_owned),
        succeeded_count: count,
    }
}

fn iv(ranges: &[(i64, i64)]) -> Intervals {
    Intervals::from_ranges(ranges.iter().copied())
}

// ---- TestMatchSuccessPolicy ----------------------------------------------

#[test]
fn match_success_policy_table() {
    struct Case {
        name: &'static str,
        policy: Option<Vec<SuccessPolicyRule>>,
        succeeded: &'static [(i64, i64)],
        want: Option<&'static str>,
    }
    let r = rule;
    let cases = [
        // "JobSuccessPolicy is disabled" — the gate is always on; that case
        // has no policy either, so it is "successPolicy is null".
        Case {
            name: "successPolicy is null",
            policy: None,
            succeeded: &[(0, 0)],
            want: None,
        },
        Case {
            name: "any rules are nothing",
            policy: Some(vec![]),
            succeeded: &[(0, 0)],
            want: None,
        },
        Case {
            name: "rules.succeededIndexes is invalid format",
            policy: Some(vec![r(Some("invalid-form"), None)]),
            succeeded: &[(0, 0)],
            want: None,
        },
        Case {
            name: "succeededIndexes matched rules",
            policy: Some(vec![r(Some("0-2"), None)]),
            succeeded: &[(0, 2), (4, 7)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "succeededIndexes didn't match rules",
            policy: Some(vec![r(Some("3"), None)]),
            succeeded: &[(0, 2)],
            want: None,
        },
        Case {
            name: "succeededCount matched rules",
            policy: Some(vec![r(None, Some(2))]),
            succeeded: &[(0, 2)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "succeededCount didn't match rules",
            policy: Some(vec![r(None, Some(4))]),
            succeeded: &[(0, 2)],
            want: None,
        },
        Case {
            name: "multiple rules; met one of rules",
            policy: Some(vec![r(Some("9"), None), r(Some("4,6"), None)]),
            succeeded: &[(0, 2), (4, 7)],
            want: Some("Matched rules at index 1"),
        },
        Case {
            name: "multiple rules; met all rules",
            policy: Some(vec![r(Some("0,1"), None), r(Some("5"), None)]),
            succeeded: &[(0, 2), (4, 7)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "succeededIndexes and succeededCount; met",
            policy: Some(vec![r(Some("3-6"), Some(2))]),
            succeeded: &[(0, 2), (4, 7)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "succeededIndexes and succeededCount; didn't match",
            policy: Some(vec![r(Some("3-6"), Some(2))]),
            succeeded: &[(0, 2), (6, 7)],
            want: None,
        },
        Case {
            name: "succeededIndexes are nothing",
            policy: Some(vec![r(None, Some(4))]),
            succeeded: &[],
            want: None,
        },
        Case {
            name: "rules is proper subset of succeededIndexes",
            policy: Some(vec![r(Some("2-4,6-8"), None)]),
            succeeded: &[(1, 5), (6, 9)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules equals succeededIndexes",
            policy: Some(vec![r(Some("2-4,6-9"), None)]),
            succeeded: &[(2, 4), (6, 9)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules is subset of succeededIndexes",
            policy: Some(vec![r(Some("2-4,8-12"), None)]),
            succeeded: &[(2, 5), (7, 15)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules is an empty set",
            policy: Some(vec![r(Some(""), None)]),
            succeeded: &[(1, 3)],
            want: None,
        },
        Case {
            name: "succeededIndexes is an empty set",
            policy: Some(vec![r(Some(""), None)]),
            succeeded: &[],
            want: None,
        },
        Case {
            name: "no element of rules.succeededIndexes succeeded",
            policy: Some(vec![r(Some("10-12,14-16"), None)]),
            succeeded: &[(1, 3), (5, 7)],
            want: None,
        },
        Case {
            name: "rules overlaps succeededIndexes at first",
            policy: Some(vec![r(Some("1-3,5-7"), None)]),
            succeeded: &[(2, 4), (6, 8)],
            want: None,
        },
        Case {
            name: "with succeededCount; rules overlaps succeededIndexes at first",
            policy: Some(vec![r(Some("1-3,5-7"), Some(4))]),
            succeeded: &[(2, 4), (6, 8)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules overlaps succeededIndexes at last",
            policy: Some(vec![r(Some("2-4,6-9"), None)]),
            succeeded: &[(1, 3), (5, 7)],
            want: None,
        },
        Case {
            name: "with succeededCount; rules overlaps succeededIndexes at last",
            policy: Some(vec![r(Some("2-4,6-9"), Some(4))]),
            succeeded: &[(1, 3), (5, 7)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules completely overlaps succeededIndexes",
            policy: Some(vec![r(Some("0-4,6-9"), None)]),
            succeeded: &[(1, 3), (7, 8)],
            want: None,
        },
        Case {
            name: "with succeededCount; rules completely overlaps succeededIndexes",
            policy: Some(vec![r(Some("0-4,6-9"), Some(5))]),
            succeeded: &[(1, 3), (7, 8)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules overlaps multiple succeededIndexes at last",
            policy: Some(vec![r(Some("0-6,8-9"), None)]),
            succeeded: &[(1, 3), (5, 9)],
            want: None,
        },
        Case {
            name: "with succeededCount; rules overlaps multiple succeededIndexes at last",
            policy: Some(vec![r(Some("0-6,8-9"), Some(7))]),
            succeeded: &[(1, 3), (5, 9)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "rules overlaps at first, equals at last",
            policy: Some(vec![r(Some("0-5,7-9"), None)]),
            succeeded: &[(1, 5), (7, 10)],
            want: None,
        },
        Case {
            name: "with succeededCount; rules overlaps at first, equals at last",
            policy: Some(vec![r(Some("0-5,7-9"), Some(8))]),
            succeeded: &[(1, 5), (7, 10)],
            want: Some("Matched rules at index 0"),
        },
        Case {
            name: "the first rule overlaps succeededIndexes at first",
            policy: Some(vec![r(Some("0-3,6-9"), None)]),
            succeeded: &[(1, 10)],
            want: None,
        },
        Case {
            name: "with succeededCount; the first rule overlaps succeededIndexes at first",
            policy: Some(vec![r(Some("0-3,6-9"), Some(7))]),
            succeeded: &[(1, 10)],
            want: Some("Matched rules at index 0"),
        },
    ];
    for c in cases {
        let policy = c.policy.map(|rules| SuccessPolicy { rules });
        let got = match_success_policy(policy.as_ref(), 10, &iv(c.succeeded));
        assert_eq!(
            got.as_ref().map(|m| m.message.as_str()),
            c.want,
            "{}",
            c.name
        );
        if let Some(m) = got {
            assert_eq!(
                m.message,
                format!("Matched rules at index {}", m.rule_index)
            );
        }
    }
}

#[test]
fn succeeded_indexes_rule_counts_the_overlap() {
    // every rule index succeeded
    assert!(match_succeeded_indexes_rule(
        &iv(&[(2, 4)]),
        &iv(&[(0, 9)]),
        None
    ));
    // 2 of 3 without a count: no; with count 2: yes
    assert!(!match_succeeded_indexes_rule(
        &iv(&[(2, 4)]),
        &iv(&[(3, 4)]),
        None
    ));
    assert!(match_succeeded_indexes_rule(
        &iv(&[(2, 4)]),
        &iv(&[(3, 4)]),
        Some(2)
    ));
    assert_eq!(iv(&[(0, 2), (5, 9)]).intersection_total(&iv(&[(1, 6)])), 4);
    assert_eq!(iv(&[(7, 8), (0, 1), (2, 3)]).render(), "0-3,7,8");
}

/// The explanation's per-rule view uses the same evaluation.
#[test]
fn evaluate_rules_reports_progress_and_skipped_rules() {
    let policy = SuccessPolicy {
        rules: vec![
            rule(Some("0-3"), None),
            rule(Some("0-3"), Some(2)),
            rule(None, Some(5)),
            rule(Some("12"), None),
        ],
    };
    let got = evaluate_rules(&policy, 10, &iv(&[(1, 2), (7, 7)]));
    let view: Vec<(i64, i64, bool, bool)> = got
        .iter()
        .map(|e| (e.succeeded, e.needed, e.matched, e.skipped.is_some()))
        .collect();
    assert_eq!(
        view,
        vec![
            (2, 4, false, false),
            (2, 2, true, false),
            (3, 5, false, false),
            (0, 0, false, true),
        ]
    );
}

// ---- TestSyncJobWithJobSuccessPolicy ---------------------------------------

fn sp_job(parallelism: i32, completions: i32, rules: serde_json::Value) -> J {
    job(parallelism, Some(completions))
        .indexed()
        .backoff_limit(i32::MAX)
        .spec("successPolicy", json!({ "rules": rules }))
}

fn idx_pod(i: usize, uid: &str, index: i64, phase: &str) -> super::job_sync::P {
    pod(i).uid(uid).index(index).phase(phase)
}

fn scm() -> (String, String, String) {
    pair(
        "SuccessCriteriaMet",
        "SuccessPolicy",
        "Matched rules at index 0",
    )
}

fn complete() -> (String, String, String) {
    pair("Complete", "SuccessPolicy", "Matched rules at index 0")
}

const FAIL_JOB_MSG: &str =
    "Pod default/mypod-0 has condition DisruptionTarget matching FailJob rule at index 0";

struct Want {
    active: i32,
    failed: i32,
    succeeded: i32,
    terminating: i32,
    completed: &'static str,
    failed_indexes: Option<&'static str>,
    conditions: Vec<(String, String, String)>,
}

fn check(name: &str, job: &Job, pods: &[Pod], want: &Want) {
    let now = t0();
    let plan = run_full(job, pods, &BackoffRecord::default(), now);
    let st = final_status(job, &plan);
    let got = (
        st.active.unwrap_or(0),
        st.failed.unwrap_or(0),
        st.succeeded.unwrap_or(0),
        st.terminating.unwrap_or(0),
        st.completed_indexes.clone().unwrap_or_default(),
        st.failed_indexes.clone(),
    );
    let expected = (
        want.active,
        want.failed,
        want.succeeded,
        want.terminating,
        want.completed.to_owned(),
        want.failed_indexes.map(str::to_owned),
    );
    assert_eq!(got, expected, "{name}");
    assert_eq!(conds(&st), want.conditions, "{name}");
    let u = st.uncounted_terminated_pods.clone().unwrap_or_default();
    assert!(
        u.succeeded.unwrap_or_default().is_empty() && u.failed.unwrap_or_default().is_empty(),
        "{name}: uncounted drained"
    );
    assert_eq!(first_refused_write(job, &plan, now), None, "{name}");
}

#[test]
fn sync_job_with_success_policy_table() {
    let rules_01_count1 = json!([{"succeededIndexes": "0,1", "succeededCount": 1}]);
    let fail_job_on_dt = vec![cond_rule("FailJob", "DisruptionTarget", "True")];
    let scm_status = |j: J| {
        j.condition(
            "SuccessCriteriaMet",
            "SuccessPolicy",
            "Matched rules at index 0",
        )
    };

    // 1. (and its ⚑ JobPodReplacementPolicy-off twin, which upstream expects
    // to add Complete at once: with every gate on, Complete waits for the
    // two deleted pods).
    check(
        "SuccessCriteriaMet when the policy is met and some indexes fail",
        &sp_job(3, 3, rules_01_count1.clone()).b(),
        &[
            idx_pod(0, "a1", 0, "Failed").b(),
            idx_pod(1, "a2", 0, "Running").b(),
            idx_pod(2, "b", 1, "Succeeded").b(),
            idx_pod(3, "c", 2, "Running").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 2,
            completed: "1",
            failed_indexes: None,
            conditions: vec![scm()],
        },
    );
    // 2. (and its ⚑ gate-off twin)
    check(
        "successPolicy met, podFailurePolicy not met",
        &sp_job(2, 2, rules_01_count1.clone())
            .policy(fail_job_on_dt.clone())
            .b(),
        &[
            idx_pod(0, "a1", 0, "Failed").b(),
            idx_pod(1, "a2", 0, "Running").b(),
            idx_pod(2, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 1,
            completed: "1",
            failed_indexes: None,
            conditions: vec![scm()],
        },
    );
    // 3.
    check(
        "successPolicy met, backoffLimitPerIndex not met",
        &sp_job(2, 2, rules_01_count1.clone()).per_index(2).b(),
        &[
            idx_pod(0, "a1", 0, "Failed").b(),
            idx_pod(1, "a2", 0, "Running").b(),
            idx_pod(2, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 1,
            completed: "1",
            failed_indexes: Some(""),
            conditions: vec![scm()],
        },
    );
    // 4. ⚑ recorded with JobBackoffLimitPerIndex off: failedIndexes "" here.
    check(
        "SuccessCriteriaMet already, all pods gone: Complete",
        &scm_status(sp_job(2, 2, rules_01_count1.clone()).per_index(2)).b(),
        &[
            idx_pod(0, "a", 0, "Failed").b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: Some(""),
            conditions: vec![scm(), complete()],
        },
    );
    // 5. kubernetes#123775 (and its ⚑ JobManagedBy-only twin, which
    // upstream expects without status.terminating; it is always published
    // here). ⚑ recorded with JobBackoffLimitPerIndex off.
    check(
        "SuccessCriteriaMet already, pods still running: they are deleted, no Complete yet",
        &scm_status(sp_job(3, 3, rules_01_count1.clone()).per_index(3)).b(),
        &[
            idx_pod(0, "a1", 0, "Failed").b(),
            idx_pod(1, "a2", 1, "Running").b(),
            idx_pod(2, "b", 1, "Succeeded").b(),
            idx_pod(3, "c", 2, "Running").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 2,
            completed: "1",
            failed_indexes: Some(""),
            conditions: vec![scm()],
        },
    );
    // 6. A FailJob decision in the same sync wins over the success policy.
    check(
        "successPolicy and podFailurePolicy both met: FailureTarget",
        &sp_job(2, 2, rules_01_count1.clone())
            .policy(fail_job_on_dt.clone())
            .b(),
        &[
            idx_pod(0, "a1", 0, "Failed").dt().b(),
            idx_pod(1, "a2", 0, "Running").b(),
            idx_pod(2, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 2,
            succeeded: 1,
            terminating: 1,
            completed: "1",
            failed_indexes: None,
            conditions: vec![pair("FailureTarget", "PodFailurePolicy", FAIL_JOB_MSG)],
        },
    );
    // 7.
    check(
        "successPolicy and backoffLimitPerIndex both met: FailedIndexes",
        &sp_job(2, 2, rules_01_count1.clone()).per_index(1).b(),
        &[
            idx_pod(0, "a", 0, "Failed").fcount(1).b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: Some("0"),
            conditions: vec![
                pair("FailureTarget", "FailedIndexes", "Job has failed indexes"),
                pair("Failed", "FailedIndexes", "Job has failed indexes"),
            ],
        },
    );
    // 8.
    let backoff_msg = "Job has reached the specified backoff limit";
    check(
        "successPolicy and backoffLimit both met: BackoffLimitExceeded",
        &sp_job(2, 2, rules_01_count1.clone()).backoff_limit(1).b(),
        &[
            idx_pod(0, "a1", 0, "Failed").b(),
            idx_pod(1, "a2", 0, "Failed").b(),
            idx_pod(2, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 2,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: None,
            conditions: vec![
                pair("FailureTarget", "BackoffLimitExceeded", backoff_msg),
                pair("Failed", "BackoffLimitExceeded", backoff_msg),
            ],
        },
    );
    // 9. Once SuccessCriteriaMet is set, failures are no longer evaluated.
    let counted = |j: J| {
        j.status("succeeded", json!(1))
            .status("terminating", json!(0))
            .status("completedIndexes", json!("1"))
            .status("uncountedTerminatedPods", json!({}))
    };
    check(
        "SuccessCriteriaMet never turns into FailureTarget on a FailJob match",
        &scm_status(counted(
            sp_job(2, 2, json!([{"succeededCount": 1}])).policy(fail_job_on_dt.clone()),
        ))
        .b(),
        &[
            idx_pod(0, "a", 0, "Failed").dt().b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: None,
            conditions: vec![scm(), complete()],
        },
    );
    // 10.
    check(
        "SuccessCriteriaMet never turns into FailureTarget on failed indexes",
        &scm_status(counted(
            sp_job(2, 2, json!([{"succeededIndexes": "1"}])).per_index(1),
        ))
        .b(),
        &[
            idx_pod(0, "a", 0, "Failed").fcount(1).b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: Some("0"),
            conditions: vec![scm(), complete()],
        },
    );
    // 11.
    check(
        "SuccessCriteriaMet never turns into FailureTarget on backoffLimit",
        &scm_status(counted(
            sp_job(2, 2, rules_01_count1.clone()).backoff_limit(1),
        ))
        .b(),
        &[
            idx_pod(0, "a", 0, "Failed").b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: None,
            conditions: vec![scm(), complete()],
        },
    );
    // 12. And a persisted FailureTarget never turns into SuccessCriteriaMet.
    check(
        "FailureTarget never turns into SuccessCriteriaMet",
        &sp_job(2, 2, rules_01_count1.clone())
            .policy(fail_job_on_dt)
            .status("failed", json!(1))
            .status("terminating", json!(0))
            .status("completedIndexes", json!("1"))
            .status("uncountedTerminatedPods", json!({}))
            .condition("FailureTarget", "PodFailurePolicy", FAIL_JOB_MSG)
            .b(),
        &[
            idx_pod(0, "a", 0, "Failed").dt().no_finalizer().b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
        ],
        &Want {
            active: 0,
            failed: 1,
            succeeded: 1,
            terminating: 0,
            completed: "1",
            failed_indexes: None,
            conditions: vec![
                pair("FailureTarget", "PodFailurePolicy", FAIL_JOB_MSG),
                pair("Failed", "PodFailurePolicy", FAIL_JOB_MSG),
            ],
        },
    );
    // 13. ⚑ upstream's "JobSuccessPolicy disabled" case: with the gate on
    // (GA) the policy is met.
    check(
        "the policy is evaluated (gate GA)",
        &sp_job(3, 3, rules_01_count1).b(),
        &[
            idx_pod(0, "a2", 0, "Running").b(),
            idx_pod(1, "b", 1, "Succeeded").b(),
            idx_pod(2, "c", 2, "Running").b(),
        ],
        &Want {
            active: 0,
            failed: 0,
            succeeded: 1,
            terminating: 2,
            completed: "1",
            failed_indexes: None,
            conditions: vec![scm()],
        },
    );
}

/// Not met yet: the Job goes on, pods are created for the pending indexes.
#[test]
fn unmatched_policy_keeps_the_job_running() {
    let j = sp_job(3, 3, json!([{"succeededIndexes": "0-1"}])).b();
    let pods = [idx_pod(0, "b", 1, "Succeeded").b()];
    let plan = run_full(&j, &pods, &BackoffRecord::default(), t0());
    let st = final_status(&j, &plan);
    assert!(conds(&st).is_empty());
    let created: Vec<Option<i64>> = plan.created_pods().iter().map(|p| p.index).collect();
    assert_eq!(created, vec![Some(0), Some(2)]);
}

/// A failure that decides nothing (counted, under `backoffLimit`) does not
/// stop the success policy: it matches in the same sync.
#[test]
fn an_undecided_failure_does_not_block_the_policy() {
    let j = sp_job(2, 2, json!([{"succeededIndexes": "1"}]))
        .backoff_limit(3)
        .b();
    let pods = [
        idx_pod(0, "a", 0, "Failed").b(),
        idx_pod(1, "b", 1, "Succeeded").b(),
    ];
    let plan = run_full(&j, &pods, &BackoffRecord::default(), t0());
    let st = final_status(&j, &plan);
    assert_eq!(conds(&st), vec![scm(), complete()]);
    assert_eq!((st.failed, st.succeeded), (Some(1), Some(1)));
    assert!(st.completion_time.is_some());
}

// ---- the whole life ------------------------------------------------------

fn set_phase_exit(p: &mut Pod, phase: &str, code: i32, at: jiff::Timestamp) {
    p.status = serde_json::from_value(json!({
        "phase": phase,
        "containerStatuses": [super::job_sync::cs("main", json!({"terminated": {"exitCode": code, "finishedAt": at.to_string()}}))],
    }))
    .ok();
}

/// Indexed, 4 completions, `succeededCount: 2`: two indexes succeed →
/// `SuccessCriteriaMet` and the two running pods are deleted (a plain
/// DELETE, then released uncounted: success was decided) → once the kubelet
/// has stopped them, `Complete` with the same reason and message,
/// `completionTime`, and the `Completed` event. Every write passes status
/// validation.
#[test]
fn success_policy_life_success_criteria_met_then_complete() {
    let j = sp_job(4, 4, json!([{"succeededCount": 2}])).b();
    let mut store = Store::new(j, vec![]);
    let check_writes = |store: &mut Store| {
        let plan = store.plan();
        assert_eq!(
            first_refused_write(&store.job, &plan, store.now),
            None,
            "status writes valid"
        );
        store.apply(&plan.steps);
        plan
    };
    check_writes(&mut store);
    assert_eq!(store.pods.len(), 4);
    for p in &mut store.pods {
        p.spec.get_or_insert_with(Default::default).node_name = Some("n1".into());
        p.status = serde_json::from_value(json!({"phase": "Running"})).ok();
    }
    store.now += secs(30);
    let now = store.now;
    set_phase_exit(store.by_index(0), "Succeeded", 0, now);
    set_phase_exit(store.by_index(2), "Succeeded", 0, now);

    let plan = check_writes(&mut store);
    let deleted: Vec<&str> = plan
        .deleted_pods()
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(deleted.len(), 2, "indexes 1 and 3 are deleted");
    assert!(
        plan.steps.iter().all(|s| !matches!(
            s,
            Step::DeletePods {
                remove_finalizer_first: true,
                ..
            }
        )),
        "finalizers stay on while the pods are deleted"
    );
    let released = plan.removed_finalizers().len();
    assert_eq!(
        released, 4,
        "succeeded pods counted, deleted ones released uncounted"
    );
    let st = store.status();
    assert_eq!(conds(&st), vec![scm_with(0)]);
    assert_eq!(st.completed_indexes.as_deref(), Some("0,2"));
    assert_eq!(st.terminating, Some(2));
    assert!(store.events.is_empty());

    // Nothing changes while they terminate.
    let plan = check_writes(&mut store);
    assert!(plan.status_writes().is_empty() || conds(&store.status()) == vec![scm_with(0)]);

    // The kubelet stops them (SIGTERM, exit 143).
    store.now += secs(5);
    let now = store.now;
    for p in store
        .pods
        .iter_mut()
        .filter(|p| p.metadata.deletion_timestamp.is_some())
    {
        set_phase_exit(p, "Failed", 143, now);
    }
    check_writes(&mut store);
    check_writes(&mut store);
    let st = store.status();
    assert_eq!(
        conds(&st),
        vec![
            scm_with(0),
            pair("Complete", "SuccessPolicy", "Matched rules at index 0")
        ]
    );
    assert_eq!(
        (st.succeeded, st.failed, st.terminating),
        (Some(2), None, Some(0))
    );
    assert!(st.completion_time.is_some());
    assert_eq!(
        store.events,
        vec![(
            EventType::Normal,
            "Completed".to_owned(),
            "Job completed".to_owned()
        )]
    );
}

fn scm_with(i: usize) -> (String, String, String) {
    pair(
        "SuccessCriteriaMet",
        "SuccessPolicy",
        &format!("Matched rules at index {i}"),
    )
}

// ---- explain ---------------------------------------------------------------

/// `explain` names the rule that matched (and what the others lack), and
/// carries the decision's reason and message.
#[test]
fn explain_names_the_matching_success_rule() {
    let j = sp_job(
        3,
        3,
        json!([{"succeededIndexes": "0-2"}, {"succeededIndexes": "0,1", "succeededCount": 1}]),
    )
    .b();
    let pods = [
        idx_pod(0, "a", 0, "Running").b(),
        idx_pod(1, "b", 1, "Succeeded").b(),
    ];
    let e = explain(&j, &pods, t0());
    let sp = e.success_policy.as_ref().expect("success policy explained");
    assert_eq!(sp.matched_rule, Some(1));
    let view: Vec<(usize, i64, i64, bool)> = sp
        .rules
        .iter()
        .map(|r| (r.rule_index, r.succeeded, r.needed, r.matched))
        .collect();
    assert_eq!(view, vec![(0, 1, 3, false), (1, 1, 1, true)]);
    assert_eq!(sp.succeeded_indexes, "1");
    assert_eq!(
        e.decision,
        JobDecision::SuccessCriteriaMet {
            reason: "SuccessPolicy".into(),
            message: "Matched rules at index 1".into(),
        }
    );

    // Without a match: the rules, no decision.
    let e = explain(&j, &[idx_pod(0, "a", 0, "Running").b()], t0());
    let sp = e.success_policy.as_ref().expect("success policy explained");
    assert_eq!(sp.matched_rule, None);
    assert_eq!(e.decision, JobDecision::Running);

    // A Job without a success policy has none in its explanation.
    let plain = job(1, Some(1)).b();
    assert!(explain(&plain, &[], t0()).success_policy.is_none());
}
