//! Spec job-failure.md §2: `TestMatchPodFailurePolicy` (cases 1–22) and the
//! property that matching is total and first-match.
//!
//! ⚑ All gates are on: cases 9 and 14 ("JobBackoffLimitPerIndex disabled")
//! cannot be reproduced; their tests assert the gates-on result (FailIndex).

use exitplan_control::job::{Action, PolicyMatch, match_pod_failure_policy};
use k8s_openapi::api::batch::v1::PodFailurePolicy;
use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A rule matching exit codes.
pub fn exit_rule(action: &str, op: &str, values: &[i32], container: Option<&str>) -> Value {
    let mut req = json!({"operator": op, "values": values});
    if let Some(c) = container {
        req["containerName"] = json!(c);
    }
    json!({"action": action, "onExitCodes": req})
}

/// A rule matching one pod condition pattern.
pub fn cond_rule(action: &str, type_: &str, status: &str) -> Value {
    json!({"action": action, "onPodConditions": [{"type": type_, "status": status}]})
}

/// A policy from rules.
pub fn policy(rules: Vec<Value>) -> PodFailurePolicy {
    serde_json::from_value(json!({ "rules": rules })).expect("policy")
}

/// A terminated container status.
pub fn terminated(name: &str, code: i32) -> Value {
    json!({"name": name, "image": "", "imageID": "", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": code}}})
}

/// A pod `default/mypod`, phase Failed, with the given statuses and conditions.
pub fn failed_pod(containers: Vec<Value>, init: Vec<Value>, conditions: Vec<(&str, &str)>) -> Pod {
    let conds: Vec<Value> = conditions
        .iter()
        .map(|(t, s)| json!({"type": t, "status": s}))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": "mypod"},
        "status": {"phase": "Failed", "containerStatuses": containers,
                   "initContainerStatuses": init, "conditions": conds}
    }))
    .expect("pod")
}

fn m(rules: Vec<Value>, pod: &Pod) -> PolicyMatch {
    match_pod_failure_policy(Some(&policy(rules)), pod)
}

fn exit_pod(name: &str, code: i32) -> Pod {
    failed_pod(vec![terminated(name, code)], vec![], vec![])
}

fn dt_pod(status: &str) -> Pod {
    failed_pod(vec![], vec![], vec![("DisruptionTarget", status)])
}

fn assert_match(got: &PolicyMatch, msg: Option<&str>, count: bool, action: Option<Action>) {
    assert_eq!(got.fail_job_message.as_deref(), msg);
    assert_eq!(got.count_failed, count);
    assert_eq!(got.action, action);
}

const MSG_MAIN_2_AT_1: &str = "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 1";

#[test]
fn case_01_unknown_action_for_exit_codes_skipped() {
    let got = m(
        vec![
            exit_rule("UnknownAction", "In", &[1, 2], None),
            exit_rule("FailJob", "In", &[2, 3], None),
        ],
        &exit_pod("main-container", 2),
    );
    assert_match(&got, Some(MSG_MAIN_2_AT_1), true, Some(Action::FailJob));
    assert_eq!(got.rule_index, Some(1));
}

#[test]
fn case_02_unknown_action_for_pod_conditions_skipped() {
    let got = m(
        vec![
            cond_rule("UnkonwnAction", "DisruptionTarget", "True"),
            cond_rule("Ignore", "DisruptionTarget", "True"),
        ],
        &dt_pod("True"),
    );
    assert_match(&got, None, false, Some(Action::Ignore));
}

#[test]
fn case_03_unknown_operator_skipped() {
    let got = m(
        vec![
            exit_rule("Ignore", "UnknownOperator", &[1, 2], None),
            exit_rule("FailJob", "In", &[2, 3], None),
        ],
        &exit_pod("main-container", 2),
    );
    assert_match(&got, Some(MSG_MAIN_2_AT_1), true, Some(Action::FailJob));
}

#[test]
fn case_04_no_policy_rules() {
    let got = match_pod_failure_policy(None, &exit_pod("main-container", 2));
    assert_match(&got, None, true, None);
}

#[test]
fn case_05_ignore_rule_matched_for_exit_codes() {
    let got = m(
        vec![exit_rule("Ignore", "In", &[1, 2, 3], None)],
        &exit_pod("", 2),
    );
    assert_match(&got, None, false, Some(Action::Ignore));
}

#[test]
fn case_06_fail_job_rule_matched_for_exit_codes() {
    let got = m(
        vec![exit_rule("FailJob", "In", &[1, 2, 3], None)],
        &exit_pod("main-container", 2),
    );
    assert_match(
        &got,
        Some(
            "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 0",
        ),
        true,
        Some(Action::FailJob),
    );
}

#[test]
fn case_07_successful_containers_are_skipped() {
    let pod = failed_pod(
        vec![
            terminated("main-container", 111),
            terminated("suppport-container", 0),
        ],
        vec![terminated("init-container", 0)],
        vec![],
    );
    let got = m(vec![exit_rule("FailJob", "NotIn", &[111], None)], &pod);
    assert_match(&got, None, true, None);
}

#[test]
fn case_08_fail_index_matched_for_exit_codes() {
    let got = m(
        vec![exit_rule("FailIndex", "In", &[1, 2, 3], None)],
        &exit_pod("main-container", 2),
    );
    assert_match(&got, None, true, Some(Action::FailIndex));
}

/// ⚑ gates-on: JobBackoffLimitPerIndex cannot be disabled; FailIndex applies.
#[test]
fn case_09_fail_index_gate_off_is_gates_on_fail_index() {
    let got = m(
        vec![exit_rule("FailIndex", "In", &[1, 2, 3], None)],
        &exit_pod("main-container", 2),
    );
    assert_match(&got, None, true, Some(Action::FailIndex));
}

#[test]
fn case_10_not_in_with_value_zero() {
    let pod = failed_pod(
        vec![
            terminated("main-container", 1),
            terminated("suppport-container", 0),
        ],
        vec![],
        vec![],
    );
    let got = m(vec![exit_rule("FailJob", "NotIn", &[0], None)], &pod);
    assert_match(
        &got,
        Some(
            "Container main-container for pod default/mypod failed with exit code 1 matching FailJob rule at index 0",
        ),
        true,
        Some(Action::FailJob),
    );
}

#[test]
fn case_11_second_fail_job_rule_matched() {
    let got = m(
        vec![
            exit_rule("Count", "In", &[1, 2, 3], None),
            exit_rule("FailJob", "In", &[4, 5, 6], None),
        ],
        &exit_pod("main-container", 6),
    );
    assert_match(
        &got,
        Some(
            "Container main-container for pod default/mypod failed with exit code 6 matching FailJob rule at index 1",
        ),
        true,
        Some(Action::FailJob),
    );
}

#[test]
fn case_12_count_rule_with_unterminated_container() {
    let foo = json!({"name": "foo", "image": "", "imageID": "", "ready": false, "restartCount": 0});
    let pod = failed_pod(vec![foo, terminated("bar", 2)], vec![], vec![]);
    let got = m(vec![exit_rule("Count", "In", &[1, 2, 3], None)], &pod);
    assert_match(&got, None, true, Some(Action::Count));
}

#[test]
fn case_13_fail_index_matched_for_pod_conditions() {
    let got = m(
        vec![cond_rule("FailIndex", "DisruptionTarget", "True")],
        &dt_pod("True"),
    );
    assert_match(&got, None, true, Some(Action::FailIndex));
}

/// ⚑ gates-on: JobBackoffLimitPerIndex cannot be disabled; FailIndex applies.
#[test]
fn case_14_fail_index_conditions_gate_off_is_gates_on_fail_index() {
    let got = m(
        vec![cond_rule("FailIndex", "DisruptionTarget", "True")],
        &dt_pod("True"),
    );
    assert_match(&got, None, true, Some(Action::FailIndex));
}

#[test]
fn case_15_ignore_rule_matched_for_pod_conditions() {
    let got = m(
        vec![cond_rule("Ignore", "DisruptionTarget", "True")],
        &dt_pod("True"),
    );
    assert_match(&got, None, false, Some(Action::Ignore));
}

#[test]
fn case_16_ignore_rule_matches_status_false() {
    let got = m(
        vec![cond_rule("Ignore", "DisruptionTarget", "False")],
        &dt_pod("False"),
    );
    assert_match(&got, None, false, Some(Action::Ignore));
}

#[test]
fn case_17_ignore_rule_matches_status_unknown() {
    let got = m(
        vec![cond_rule("Ignore", "DisruptionTarget", "Unknown")],
        &dt_pod("Unknown"),
    );
    assert_match(&got, None, false, Some(Action::Ignore));
}

#[test]
fn case_18_pattern_false_actual_true_no_match() {
    let got = m(
        vec![cond_rule("Ignore", "DisruptionTarget", "False")],
        &dt_pod("True"),
    );
    assert_match(&got, None, true, None);
}

#[test]
fn case_19_pattern_true_actual_false_no_match() {
    let got = m(
        vec![cond_rule("Ignore", "DisruptionTarget", "True")],
        &dt_pod("False"),
    );
    assert_match(&got, None, true, None);
    // "default - do not match condition with status=False": same input/output.
    let defaulted = json!({"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]});
    assert_match(&m(vec![defaulted], &dt_pod("False")), None, true, None);
}

#[test]
fn case_20_fail_job_rule_matched_for_pod_conditions() {
    let got = m(
        vec![cond_rule("FailJob", "DisruptionTarget", "True")],
        &dt_pod("True"),
    );
    assert_match(
        &got,
        Some("Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0"),
        true,
        Some(Action::FailJob),
    );
}

#[test]
fn case_21_count_rule_matched_for_pod_conditions() {
    let got = m(
        vec![cond_rule("Count", "DisruptionTarget", "True")],
        &dt_pod("True"),
    );
    assert_match(&got, None, true, Some(Action::Count));
}

#[test]
fn case_22_first_rule_wins() {
    let got = m(
        vec![
            exit_rule("Count", "NotIn", &[8], None),
            exit_rule("Ignore", "In", &[1, 2, 3], None),
            exit_rule("FailJob", "NotIn", &[5, 6, 7], None),
            cond_rule("Count", "ResourceLimitExceeded", "True"),
            cond_rule("Ignore", "DisruptionTarget", "True"),
        ],
        &exit_pod("main-container", 32),
    );
    assert_match(&got, None, true, Some(Action::Count));
    assert_eq!(got.rule_index, Some(0));
}

// ---- properties ----------------------------------------------------------

#[derive(Clone, Debug)]
enum Sel {
    Exit(Option<String>, String, Vec<i32>),
    Conds(Vec<(String, String)>),
    Both(Option<String>, String, Vec<i32>, Vec<(String, String)>),
    Neither,
}

fn action_s() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["FailJob", "FailIndex", "Ignore", "Count", "Later", ""])
        .prop_map(str::to_owned)
}
fn name_s() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c"]).prop_map(str::to_owned)
}
fn status_s() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["True", "False", "Unknown"]).prop_map(str::to_owned)
}
fn ctype_s() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["DisruptionTarget", "Ready", "X"]).prop_map(str::to_owned)
}
fn sel_s() -> impl Strategy<Value = Sel> {
    let op = || prop::sample::select(vec!["In", "NotIn", "Between"]).prop_map(str::to_owned);
    let vals = || prop::collection::vec(0..6i32, 0..4);
    let conds = || prop::collection::vec((ctype_s(), status_s()), 0..3);
    prop_oneof![
        (prop::option::of(name_s()), op(), vals()).prop_map(|(c, o, v)| Sel::Exit(c, o, v)),
        conds().prop_map(Sel::Conds),
        (prop::option::of(name_s()), op(), vals(), conds())
            .prop_map(|(c, o, v, p)| Sel::Both(c, o, v, p)),
        Just(Sel::Neither),
    ]
}

fn rule_json(action: &str, sel: &Sel) -> Value {
    let exit = |c: &Option<String>, o: &str, v: &[i32]| {
        let mut r = json!({"operator": o, "values": v});
        if let Some(c) = c {
            r["containerName"] = json!(c);
        }
        r
    };
    let pats = |p: &[(String, String)]| -> Value {
        p.iter()
            .map(|(t, s)| json!({"type": t, "status": s}))
            .collect()
    };
    match sel {
        Sel::Exit(c, o, v) => json!({"action": action, "onExitCodes": exit(c, o, v)}),
        Sel::Conds(p) => json!({"action": action, "onPodConditions": pats(p)}),
        Sel::Both(c, o, v, p) => {
            json!({"action": action, "onExitCodes": exit(c, o, v), "onPodConditions": pats(p)})
        }
        Sel::Neither => json!({"action": action}),
    }
}

/// (name, exit code or None for a running container)
type Cs = (String, Option<i32>);

fn cs_json(c: &Cs) -> Value {
    let state = match c.1 {
        Some(code) => json!({"terminated": {"exitCode": code}}),
        None => json!({"running": {}}),
    };
    json!({"name": c.0, "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": state})
}

/// Independent oracle: does rule `sel` apply, and what does it report?
fn oracle_hit(
    sel: &Sel,
    regular: &[Cs],
    init: &[Cs],
    conds: &[(String, String)],
) -> Option<String> {
    let exit_hit = |c: &Option<String>, o: &str, v: &[i32]| {
        for list in [regular, init] {
            for (name, code) in list {
                let Some(code) = code else { continue };
                if c.as_ref().is_some_and(|c| c != name) || *code == 0 {
                    continue;
                }
                let inside = v.contains(code);
                let ok = (o == "In" && inside) || (o == "NotIn" && !inside);
                if ok {
                    return Some(format!("Container {name} code {code}"));
                }
            }
        }
        None
    };
    let cond_hit = |p: &[(String, String)]| {
        conds
            .iter()
            .find(|(t, s)| p.iter().any(|(pt, ps)| pt == t && ps == s))
            .map(|(t, _)| format!("Condition {t}"))
    };
    match sel {
        Sel::Exit(c, o, v) | Sel::Both(c, o, v, _) => exit_hit(c, o, v),
        Sel::Conds(p) => cond_hit(p),
        Sel::Neither => None,
    }
}

proptest! {
    /// Matching is total (never panics, always a defined result) and equals
    /// the first applicable rule with an understood action.
    #[test]
    fn matching_is_first_match_and_total(
        rules in prop::collection::vec((action_s(), sel_s()), 0..5),
        regular in prop::collection::vec((name_s(), prop::option::of(0..6i32)), 0..3),
        init in prop::collection::vec((name_s(), prop::option::of(0..6i32)), 0..2),
        conds in prop::collection::vec((ctype_s(), status_s()), 0..3),
        with_policy in any::<bool>(),
    ) {
        let rule_values: Vec<Value> = rules.iter().map(|(a, s)| rule_json(a, s)).collect();
        let pod = failed_pod(
            regular.iter().map(cs_json).collect(),
            init.iter().map(cs_json).collect(),
            conds.iter().map(|(t, s)| (t.as_str(), s.as_str())).collect(),
        );
        let pol = policy(rule_values);
        let got = match_pod_failure_policy(with_policy.then_some(&pol), &pod);
        let expected = if with_policy {
            rules.iter().enumerate().find_map(|(i, (a, s))| {
                let known = matches!(a.as_str(), "FailJob" | "FailIndex" | "Ignore" | "Count");
                oracle_hit(s, &regular, &init, &conds).filter(|_| known).map(|hit| (i, a.clone(), hit))
            })
        } else {
            None
        };
        match expected {
            None => {
                prop_assert_eq!(got, PolicyMatch::counted_by_default());
            }
            Some((i, a, hit)) => {
                prop_assert_eq!(got.rule_index, Some(i));
                prop_assert_eq!(got.action.as_ref().map(Action::as_str), Some(a.as_str()));
                prop_assert_eq!(got.count_failed, a != "Ignore");
                prop_assert_eq!(got.fail_job_message.is_some(), a == "FailJob");
                if let Some(msg) = &got.fail_job_message {
                    let expected_prefix = if let Some(rest) = hit.strip_prefix("Container ") {
                        let name = rest.split(' ').next().unwrap_or_default();
                        format!("Container {name} for pod default/mypod failed with exit code")
                    } else {
                        format!("Pod default/mypod has condition {}", hit.trim_start_matches("Condition "))
                    };
                    prop_assert!(msg.starts_with(&expected_prefix), "{} vs {}", msg, expected_prefix);
                    let suffix = format!("matching FailJob rule at index {i}");
                    prop_assert!(msg.ends_with(&suffix));
                }
            }
        }
    }
}
