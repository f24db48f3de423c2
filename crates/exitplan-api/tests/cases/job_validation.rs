//! `job-failure-cases.md` sections G (75–98, `TestValidateJob`), H (99–100,
//! Job strategy) and case 141 (Job status validation), plus the §10.5
//! spec-level rules and upstream's `TestStatusStrategy_ValidateUpdate`
//! cases that case 141 samples.
//!
//! Every expected error is `(type, field, body)` where the body is the
//! rendered message without the field (value rendering included), compared
//! in order against the full error list. Cases marked ⚑ gates-on follow the
//! all-gates-on behaviour where upstream's test pinned a gate off.

use exitplan_api::absent::Absent;
use exitplan_api::batch::{JobStrategy, JobValidationOptions, default_job, validate_job};
use exitplan_api::field::{ErrorList, ErrorType, Path};
use exitplan_api::strategy::{Context, Strategy, admit_create, admit_status_update, admit_update};
use k8s_openapi::api::batch::v1::{
    Job, JobCondition, JobSpec, JobStatus, PodFailurePolicy,
    PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyOnPodConditionsPattern,
    PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{Container, EvictionResponder, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};

use ErrorType::{Duplicate, Invalid, NotSupported, Required, TooMany};

type Want = (ErrorType, &'static str, String);

fn w(t: ErrorType, field: &'static str, body: &str) -> Want {
    (t, field, body.to_owned())
}

/// Compares the whole list, in order: type, field and rendered body.
fn assert_errors(case: &str, got: &ErrorList, want: &[Want]) {
    let got: Vec<(ErrorType, String, String)> = got
        .iter()
        .map(|e| (e.error_type, e.field.clone(), e.body()))
        .collect();
    let want: Vec<(ErrorType, String, String)> = want
        .iter()
        .map(|(t, f, b)| (*t, (*f).to_owned(), b.clone()))
        .collect();
    assert_eq!(got, want, "{case}");
}

fn labels(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn generated_labels() -> std::collections::BTreeMap<String, String> {
    labels(&[
        ("batch.kubernetes.io/controller-uid", "1a2b3c"),
        ("controller-uid", "1a2b3c"),
        ("batch.kubernetes.io/job-name", "myjob"),
        ("job-name", "myjob"),
    ])
}

/// A container as upstream's fixtures build it (`podtest.MakeContainer`:
/// the defaulted pull and termination message policies set).
fn container(name: &str) -> Container {
    Container {
        name: name.into(),
        image: Some("image".into()),
        image_pull_policy: Some("IfNotPresent".into()),
        termination_message_policy: Some("File".into()),
        ..Default::default()
    }
}

/// The section-G fixture: `default/myjob` (uid `1a2b3c`), generated
/// selector, template with container `abc` and init container `def`,
/// `restartPolicy: Never`.
fn valid_job() -> Job {
    Job {
        metadata: ObjectMeta {
            name: Some("myjob".into()),
            namespace: Some("default".into()),
            uid: Some("1a2b3c".into()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            selector: Some(LabelSelector {
                match_labels: Some(generated_labels()),
                match_expressions: None,
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(generated_labels()),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container("abc")],
                    init_containers: Some(vec![container("def")]),
                    restart_policy: Some("Never".into()),
                    dns_policy: Some("ClusterFirst".into()),
                    termination_grace_period_seconds: Some(30),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

fn job_with(f: impl FnOnce(&mut JobSpec)) -> Job {
    let mut job = valid_job();
    if let Some(spec) = job.spec.as_mut() {
        f(spec);
    }
    job
}

fn exit_rule(
    action: &str,
    container: Option<&str>,
    op: &str,
    values: &[i32],
) -> PodFailurePolicyRule {
    PodFailurePolicyRule {
        action: action.into(),
        on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
            container_name: container.map(str::to_owned),
            operator: op.into(),
            values: values.to_vec(),
        }),
        on_pod_conditions: None,
    }
}

fn cond_rule(action: &str, patterns: &[(&str, Option<&str>)]) -> PodFailurePolicyRule {
    PodFailurePolicyRule {
        action: action.into(),
        on_exit_codes: None,
        on_pod_conditions: Some(
            patterns
                .iter()
                .map(|(t, s)| PodFailurePolicyOnPodConditionsPattern {
                    type_: (*t).into(),
                    status: s.map(str::to_owned),
                })
                .collect(),
        ),
    }
}

fn with_rules(rules: Vec<PodFailurePolicyRule>) -> Job {
    job_with(|s| s.pod_failure_policy = Some(PodFailurePolicy { rules }))
}

fn restart_policy(spec: &mut JobSpec, policy: &str) {
    if let Some(p) = spec.template.spec.as_mut() {
        p.restart_policy = Some(policy.into());
    }
}

fn create_opts() -> JobValidationOptions {
    JobValidationOptions {
        require_prefixed_labels: true,
        ..Default::default()
    }
}

fn run(cases: Vec<(&str, Job, Vec<Want>)>) {
    for (name, job, want) in cases {
        assert_errors(name, &validate_job(&job, &create_opts()), &want);
    }
}

const QUALIFIED_NAME_ERR: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

#[test]
fn case_75_76_valid_pod_failure_policies() {
    run(vec![
        (
            "75 valid pod failure policy",
            with_rules(vec![
                cond_rule("Ignore", &[("DisruptionTarget", Some("True"))]),
                cond_rule("FailJob", &[("CustomConditionType", Some("False"))]),
                exit_rule("Count", Some("abc"), "In", &[1, 2, 3]),
                exit_rule("Ignore", Some("def"), "In", &[4]),
                exit_rule("FailJob", None, "NotIn", &[5, 6, 7]),
            ]),
            vec![],
        ),
        (
            "76 valid pod failure policy with FailIndex",
            job_with(|s| {
                s.completion_mode = Some("Indexed".into());
                s.completions = Some(2);
                s.backoff_limit_per_index = Some(1);
                s.manual_selector = Some(true);
                s.pod_failure_policy = Some(PodFailurePolicy {
                    rules: vec![exit_rule("FailIndex", None, "In", &[10])],
                });
            }),
            vec![],
        ),
    ]);
}

#[test]
fn case_77_to_84_rule_shape_and_exit_code_values() {
    let p = "spec.podFailurePolicy.rules[0].onExitCodes.values";
    run(vec![
        (
            "77 specifying one of OnExitCodes and OnPodConditions is required",
            with_rules(vec![PodFailurePolicyRule {
                action: "FailJob".into(),
                ..Default::default()
            }]),
            vec![w(
                Invalid,
                "spec.podFailurePolicy.rules[0]",
                "Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            )],
        ),
        (
            "78 values[1]: Duplicate value: 11",
            with_rules(vec![exit_rule("FailJob", None, "In", &[11, 11])]),
            vec![w(
                Duplicate,
                "spec.podFailurePolicy.rules[0].onExitCodes.values[1]",
                "Duplicate value: 11",
            )],
        ),
        (
            "79 values: Too many: 256 (and values[0] is 0 for In)",
            with_rules(vec![exit_rule(
                "FailJob",
                None,
                "In",
                &(0..256).collect::<Vec<i32>>(),
            )]),
            vec![
                w(TooMany, p, "Too many: 256: must have at most 255 items"),
                w(
                    Invalid,
                    "spec.podFailurePolicy.rules[0].onExitCodes.values[0]",
                    "Invalid value: 0: must not be 0 for the In operator",
                ),
            ],
        ),
        (
            "80 rules: Too many: 21",
            with_rules(
                (1..=21)
                    .map(|i| exit_rule("FailJob", None, "In", &[i]))
                    .collect(),
            ),
            vec![w(
                TooMany,
                "spec.podFailurePolicy.rules",
                "Too many: 21: must have at most 20 items",
            )],
        ),
        (
            "81 onPodConditions: Too many: 21",
            with_rules(vec![PodFailurePolicyRule {
                action: "FailJob".into(),
                on_exit_codes: None,
                on_pod_conditions: Some(
                    (0..21)
                        .map(|i| PodFailurePolicyOnPodConditionsPattern {
                            type_: format!("CustomType_{i}"),
                            status: Some("True".into()),
                        })
                        .collect(),
                ),
            }]),
            vec![w(
                TooMany,
                "spec.podFailurePolicy.rules[0].onPodConditions",
                "Too many: 21: must have at most 20 items",
            )],
        ),
        (
            "82 values[2]: Duplicate value: 13 (every repeat reported)",
            with_rules(vec![exit_rule("FailJob", None, "In", &[12, 13, 13, 13])]),
            vec![
                w(
                    Duplicate,
                    "spec.podFailurePolicy.rules[0].onExitCodes.values[2]",
                    "Duplicate value: 13",
                ),
                w(
                    Duplicate,
                    "spec.podFailurePolicy.rules[0].onExitCodes.values[3]",
                    "Duplicate value: 13",
                ),
            ],
        ),
        (
            "83 values: must be ordered",
            with_rules(vec![exit_rule("FailJob", None, "In", &[19, 11])]),
            vec![w(Invalid, p, "Invalid value: [19,11]: must be ordered")],
        ),
        (
            "84 values: at least one value is required",
            with_rules(vec![exit_rule("FailJob", None, "In", &[])]),
            vec![w(
                Invalid,
                p,
                "Invalid value: []: at least one value is required",
            )],
        ),
    ]);
}

#[test]
fn case_85_to_91_action_operator_container() {
    run(vec![
        (
            "85 action: Required value",
            with_rules(vec![exit_rule("", None, "In", &[1, 2, 3])]),
            vec![w(
                Required,
                "spec.podFailurePolicy.rules[0].action",
                r#"Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]"#,
            )],
        ),
        (
            "86 operator: Required value",
            with_rules(vec![exit_rule("FailJob", None, "", &[1, 2, 3])]),
            vec![w(
                Required,
                "spec.podFailurePolicy.rules[0].onExitCodes.operator",
                r#"Required value: valid values: ["In" "NotIn"]"#,
            )],
        ),
        (
            "87 specifying both OnExitCodes and OnPodConditions is not supported",
            with_rules(vec![PodFailurePolicyRule {
                on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                    type_: "DisruptionTarget".into(),
                    status: Some("True".into()),
                }]),
                ..exit_rule("FailJob", Some("abc"), "In", &[1, 2, 3])
            }]),
            vec![w(
                Invalid,
                "spec.podFailurePolicy.rules[0]",
                "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
            )],
        ),
        (
            "88 values[1]: must not be 0 for the In operator (+ must be ordered)",
            with_rules(vec![exit_rule("Ignore", None, "In", &[1, 0, 2])]),
            vec![
                w(
                    Invalid,
                    "spec.podFailurePolicy.rules[0].onExitCodes.values[1]",
                    "Invalid value: 0: must not be 0 for the In operator",
                ),
                w(
                    Invalid,
                    "spec.podFailurePolicy.rules[0].onExitCodes.values",
                    "Invalid value: [1,0,2]: must be ordered",
                ),
            ],
        ),
        (
            "89 rules[1].onExitCodes.containerName: xyz",
            with_rules(vec![
                exit_rule("Ignore", Some("abc"), "In", &[1, 2, 3]),
                exit_rule("FailJob", Some("xyz"), "In", &[5, 6, 7]),
            ]),
            vec![w(
                Invalid,
                "spec.podFailurePolicy.rules[1].onExitCodes.containerName",
                r#"Invalid value: "xyz": must be one of the container or initContainer names in the pod template"#,
            )],
        ),
        (
            "90 action: Unsupported value: UnknownAction",
            with_rules(vec![exit_rule(
                "UnknownAction",
                Some("abc"),
                "In",
                &[1, 2, 3],
            )]),
            vec![w(
                NotSupported,
                "spec.podFailurePolicy.rules[0].action",
                r#"Unsupported value: "UnknownAction": supported values: "Count", "FailIndex", "FailJob", "Ignore""#,
            )],
        ),
        (
            "91 operator: Unsupported value: UnknownOperator",
            with_rules(vec![exit_rule(
                "Ignore",
                None,
                "UnknownOperator",
                &[1, 2, 3],
            )]),
            vec![w(
                NotSupported,
                "spec.podFailurePolicy.rules[0].onExitCodes.operator",
                r#"Unsupported value: "UnknownOperator": supported values: "In", "NotIn""#,
            )],
        ),
        (
            "91 (E6 uses the literal operator: 0 under an unknown or empty operator is not flagged)",
            with_rules(vec![
                exit_rule("Ignore", None, "UnknownOperator", &[0, 1]),
                exit_rule("Ignore", None, "NotIn", &[0, 1]),
            ]),
            vec![w(
                NotSupported,
                "spec.podFailurePolicy.rules[0].onExitCodes.operator",
                r#"Unsupported value: "UnknownOperator": supported values: "In", "NotIn""#,
            )],
        ),
    ]);
}

#[test]
fn case_92_to_94_on_pod_conditions() {
    let t = "spec.podFailurePolicy.rules[0].onPodConditions[0].type";
    let s = "spec.podFailurePolicy.rules[0].onPodConditions[0].status";
    run(vec![
        (
            "92 status: Required value (no defaulting applied)",
            with_rules(vec![cond_rule("Ignore", &[("DisruptionTarget", None)])]),
            vec![w(
                Required,
                s,
                r#"Required value: valid values: ["False" "True" "Unknown"]"#,
            )],
        ),
        (
            "93 status: Unsupported value: UnknownStatus",
            with_rules(vec![cond_rule(
                "Ignore",
                &[("DisruptionTarget", Some("UnknownStatus"))],
            )]),
            vec![w(
                NotSupported,
                s,
                r#"Unsupported value: "UnknownStatus": supported values: "False", "True", "Unknown""#,
            )],
        ),
        (
            "94 type: Invalid value: \"\": name part must be non-empty",
            with_rules(vec![cond_rule("Ignore", &[("", Some("True"))])]),
            vec![
                w(
                    Invalid,
                    t,
                    r#"Invalid value: "": name part must be non-empty"#,
                ),
                w(
                    Invalid,
                    t,
                    &format!(r#"Invalid value: "": {QUALIFIED_NAME_ERR}"#),
                ),
            ],
        ),
        (
            "94 type: Invalid value: \"Invalid Condition Type\"",
            with_rules(vec![cond_rule(
                "Ignore",
                &[("Invalid Condition Type", Some("True"))],
            )]),
            vec![w(
                Invalid,
                t,
                &format!(r#"Invalid value: "Invalid Condition Type": {QUALIFIED_NAME_ERR}"#),
            )],
        ),
    ]);
}

/// Case 92 through the v1 API: the empty status is defaulted to `True`
/// before validation, so the Required error is unreachable there.
#[test]
fn case_92_status_is_defaulted_through_the_v1_api() {
    let absent = Absent::default();
    let mut job = submitted(|s| {
        s.pod_failure_policy = Some(PodFailurePolicy {
            rules: vec![cond_rule("Ignore", &[("DisruptionTarget", None)])],
        });
    });
    admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect("defaulted status");
    let status = job
        .spec
        .and_then(|s| s.pod_failure_policy)
        .and_then(|p| p.rules.into_iter().next())
        .and_then(|r| r.on_pod_conditions)
        .and_then(|c| c.into_iter().next())
        .and_then(|c| c.status);
    assert_eq!(status.as_deref(), Some("True"));
}

#[test]
fn case_95_96_replacement_and_restart_policy() {
    run(vec![
        (
            "95 podReplacementPolicy: TerminatingOrFailed with a policy",
            job_with(|s| {
                s.pod_replacement_policy = Some("TerminatingOrFailed".into());
                s.pod_failure_policy = Some(PodFailurePolicy {
                    rules: vec![cond_rule("Ignore", &[("DisruptionTarget", Some("True"))])],
                });
            }),
            vec![w(
                NotSupported,
                "spec.podReplacementPolicy",
                r#"Unsupported value: "TerminatingOrFailed": supported values: "Failed""#,
            )],
        ),
        (
            "95 related: podReplacementPolicy \"\" without a policy (S14)",
            job_with(|s| s.pod_replacement_policy = Some(String::new())),
            vec![w(
                NotSupported,
                "spec.podReplacementPolicy",
                r#"Unsupported value: "": supported values: "Failed", "TerminatingOrFailed""#,
            )],
        ),
        (
            "96 restartPolicy OnFailure with a zero-rule policy",
            job_with(|s| {
                restart_policy(s, "OnFailure");
                s.pod_failure_policy = Some(PodFailurePolicy { rules: vec![] });
            }),
            vec![w(
                Invalid,
                "spec.template.spec.restartPolicy",
                r#"Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified"#,
            )],
        ),
        (
            "96 related: an empty rule list is otherwise valid",
            with_rules(vec![]),
            vec![],
        ),
    ]);
}

#[test]
fn case_97_98_per_index_fields() {
    run(vec![
        (
            "97 backoffLimitPerIndex requires indexed completion mode",
            job_with(|s| s.backoff_limit_per_index = Some(1)),
            vec![w(
                Invalid,
                "spec.backoffLimitPerIndex",
                "Invalid value: 1: requires indexed completion mode",
            )],
        ),
        (
            "97 backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
            job_with(|s| {
                s.max_failed_indexes = Some(1);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![
                w(
                    Required,
                    "spec.backoffLimitPerIndex",
                    "Required value: when maxFailedIndexes is specified",
                ),
                w(
                    Required,
                    "spec.completions",
                    "Required value: when completion mode is Indexed",
                ),
            ],
        ),
        (
            "97 maxFailedIndexes: must be less than or equal to completions",
            job_with(|s| {
                s.completions = Some(10);
                s.max_failed_indexes = Some(11);
                s.backoff_limit_per_index = Some(1);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![w(
                Invalid,
                "spec.maxFailedIndexes",
                "Invalid value: 11: must be less than or equal to completions",
            )],
        ),
        (
            "98 FailIndex without backoffLimitPerIndex",
            job_with(|s| {
                s.completion_mode = Some("Indexed".into());
                s.completions = Some(2);
                s.pod_failure_policy = Some(PodFailurePolicy {
                    rules: vec![exit_rule("FailIndex", None, "In", &[1])],
                });
            }),
            vec![w(
                Invalid,
                "spec.podFailurePolicy.rules[0].action",
                r#"Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set"#,
            )],
        ),
    ]);
}

/// §10.5: the spec-level rules not covered by a numbered case, with
/// upstream's `TestValidateJob` names.
#[test]
fn spec_level_rules_s1_to_s17() {
    let ge0 = "Invalid value: -1: must be greater than or equal to 0";
    let high = "when completions are above 100000 and used with backoff limit per index";
    run(vec![
        (
            "S1 spec.backoffLimit: must be greater than or equal to 0",
            job_with(|s| s.backoff_limit = Some(-1)),
            vec![w(Invalid, "spec.backoffLimit", ge0)],
        ),
        (
            "S2 spec.backoffLimitPerIndex: must be greater than or equal to 0",
            job_with(|s| {
                s.backoff_limit_per_index = Some(-1);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![
                w(Invalid, "spec.backoffLimitPerIndex", ge0),
                w(
                    Required,
                    "spec.completions",
                    "Required value: when completion mode is Indexed",
                ),
            ],
        ),
        (
            "S3 spec.maxFailedIndexes: must be greater than or equal to 0",
            job_with(|s| {
                s.backoff_limit_per_index = Some(1);
                s.max_failed_indexes = Some(-1);
                s.completion_mode = Some("Indexed".into());
                s.completions = Some(10);
            }),
            vec![w(Invalid, "spec.maxFailedIndexes", ge0)],
        ),
        (
            "S6 maxFailedIndexes requires indexed completion mode",
            job_with(|s| {
                s.backoff_limit_per_index = Some(1);
                s.max_failed_indexes = Some(1);
            }),
            vec![
                w(
                    Invalid,
                    "spec.backoffLimitPerIndex",
                    "Invalid value: 1: requires indexed completion mode",
                ),
                w(
                    Invalid,
                    "spec.maxFailedIndexes",
                    "Invalid value: 1: requires indexed completion mode",
                ),
            ],
        ),
        (
            "S8+S11 spec.maxFailedIndexes: Invalid value: 100001",
            job_with(|s| {
                s.completions = Some(100_001);
                s.backoff_limit_per_index = Some(1);
                s.max_failed_indexes = Some(100_001);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![
                w(
                    Invalid,
                    "spec.maxFailedIndexes",
                    "Invalid value: 100001: must be less than or equal to 100000",
                ),
                w(
                    Invalid,
                    "spec.maxFailedIndexes",
                    &format!("Invalid value: 100001: must be less than or equal to 10000 {high}"),
                ),
            ],
        ),
        (
            "S9 spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
            job_with(|s| {
                s.completions = Some(100_001);
                s.backoff_limit_per_index = Some(1);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![w(
                Required,
                "spec.maxFailedIndexes",
                "Required value: must be specified when completions is above 100000",
            )],
        ),
        (
            "S10 spec.parallelism: Invalid value: 50000",
            job_with(|s| {
                s.completions = Some(100_001);
                s.parallelism = Some(50_000);
                s.backoff_limit_per_index = Some(1);
                s.max_failed_indexes = Some(1);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![w(
                Invalid,
                "spec.parallelism",
                &format!("Invalid value: 50000: must be less than or equal to 10000 {high}"),
            )],
        ),
        (
            "valid parallelism and maxFailedIndexes for high completions when backoffLimitPerIndex is used",
            job_with(|s| {
                s.completions = Some(100_000);
                s.parallelism = Some(100_000);
                s.max_failed_indexes = Some(100_000);
                s.backoff_limit_per_index = Some(1);
                s.completion_mode = Some("Indexed".into());
            }),
            vec![],
        ),
        (
            "spec.parallelism: must be less than or equal to 100000 when completion mode is Indexed",
            job_with(|s| {
                s.completion_mode = Some("Indexed".into());
                s.completions = Some(2);
                s.parallelism = Some(100_001);
            }),
            vec![w(
                Invalid,
                "spec.parallelism",
                "Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed",
            )],
        ),
        (
            "non-negative parallelism, completions, activeDeadlineSeconds, ttlSecondsAfterFinished",
            job_with(|s| {
                s.parallelism = Some(-1);
                s.completions = Some(-1);
                s.active_deadline_seconds = Some(-1);
                s.ttl_seconds_after_finished = Some(-1);
            }),
            vec![
                w(Invalid, "spec.parallelism", ge0),
                w(Invalid, "spec.completions", ge0),
                w(Invalid, "spec.activeDeadlineSeconds", ge0),
                w(Invalid, "spec.ttlSecondsAfterFinished", ge0),
            ],
        ),
        (
            "completionMode enum",
            job_with(|s| s.completion_mode = Some("Sideways".into())),
            vec![w(
                NotSupported,
                "spec.completionMode",
                r#"Unsupported value: "Sideways": supported values: "NonIndexed", "Indexed""#,
            )],
        ),
        (
            "S15 spec.template.spec.restartPolicy: Required value (Always)",
            job_with(|s| restart_policy(s, "Always")),
            vec![w(
                Required,
                "spec.template.spec.restartPolicy",
                r#"Required value: valid values: "OnFailure", "Never""#,
            )],
        ),
        (
            "S16 spec.template.spec.restartPolicy: Unsupported value (pod rule, then Job rule)",
            job_with(|s| restart_policy(s, "Invalid")),
            vec![
                w(
                    NotSupported,
                    "spec.template.spec.restartPolicy",
                    r#"Unsupported value: "Invalid": supported values: "Always", "OnFailure", "Never""#,
                ),
                w(
                    NotSupported,
                    "spec.template.spec.restartPolicy",
                    r#"Unsupported value: "Invalid": supported values: "OnFailure", "Never""#,
                ),
            ],
        ),
        (
            "spec.managedBy: Invalid value: \"invalid custom controller name\"",
            job_with(|s| s.managed_by = Some("invalid custom controller name".into())),
            vec![w(
                Invalid,
                "spec.managedBy",
                r#"Invalid value: "invalid custom controller name": must be a domain-prefixed path (such as "acme.io/foo")"#,
            )],
        ),
        (
            "spec.managedBy: Too long: may not be longer than 63",
            job_with(|s| s.managed_by = Some(format!("example.com/{}", "x".repeat(60)))),
            vec![w(
                ErrorType::TooLong,
                "spec.managedBy",
                "Too long: may not be longer than 63",
            )],
        ),
        (
            "spec.successPolicy requires indexed completion mode",
            job_with(|s| {
                s.success_policy =
                    Some(k8s_openapi::api::batch::v1::SuccessPolicy { rules: vec![] })
            }),
            vec![w(
                Invalid,
                "spec.successPolicy",
                r#"Invalid value: {"Rules":[]}: requires indexed completion mode"#,
            )],
        ),
    ]);
}

#[test]
fn selector_and_template_label_rules() {
    let mut no_selector = valid_job();
    if let Some(s) = no_selector.spec.as_mut() {
        s.selector = None;
    }
    let mut manual_mismatch = job_with(|s| {
        s.manual_selector = Some(true);
        s.selector = Some(LabelSelector {
            match_labels: Some(labels(&[("a", "b")])),
            match_expressions: None,
        });
    });
    if let Some(m) = manual_mismatch
        .spec
        .as_mut()
        .and_then(|s| s.template.metadata.as_mut())
    {
        m.labels = Some(labels(&[("y", "z")]));
    }
    let not_generated = job_with(|s| {
        s.selector = Some(LabelSelector {
            match_labels: Some(labels(&[("a", "b")])),
            match_expressions: None,
        });
    });
    let generated = r#"{"batch.kubernetes.io/controller-uid":"1a2b3c","batch.kubernetes.io/job-name":"myjob","controller-uid":"1a2b3c","job-name":"myjob"}"#;
    run(vec![
        (
            "spec.selector:Required value",
            no_selector,
            vec![
                w(Required, "spec.selector", "Required value"),
                w(
                    Invalid,
                    "spec.template.metadata.labels",
                    &format!(
                        "Invalid value: {generated}: `selector` does not match template `labels`"
                    ),
                ),
            ],
        ),
        (
            "spec.template.metadata.labels: `selector` does not match template `labels`",
            manual_mismatch,
            vec![w(
                Invalid,
                "spec.template.metadata.labels",
                r#"Invalid value: {"y":"z"}: `selector` does not match template `labels`"#,
            )],
        ),
        (
            "spec.selector: `selector` not auto-generated",
            not_generated,
            vec![
                w(
                    Invalid,
                    "spec.selector",
                    r#"Invalid value: {"matchLabels":{"a":"b"}}: `selector` not auto-generated"#,
                ),
                w(
                    Invalid,
                    "spec.template.metadata.labels",
                    &format!(
                        "Invalid value: {generated}: `selector` does not match template `labels`"
                    ),
                ),
            ],
        ),
    ]);
}

/// Upstream's "metadata.uid: Required value" runs without prefixed labels.
#[test]
fn metadata_uid_required_without_prefixed_labels() {
    let mut job = job_with(|s| {
        s.selector = Some(LabelSelector {
            match_labels: Some(labels(&[("controller-uid", "test")])),
            match_expressions: None,
        });
        if let Some(m) = s.template.metadata.as_mut() {
            m.labels = Some(labels(&[("job-name", "myjob")]));
        }
    });
    job.metadata.uid = None;
    let errs = validate_job(&job, &JobValidationOptions::default());
    assert_errors(
        "metadata.uid: Required value",
        &errs,
        &[
            w(Required, "metadata.uid", "Required value"),
            w(
                Required,
                "spec.template.metadata.labels[controller-uid]",
                "Required value: must be ''",
            ),
            w(
                Invalid,
                "spec.selector",
                r#"Invalid value: {"matchLabels":{"controller-uid":"test"}}: `selector` not auto-generated"#,
            ),
            w(
                Invalid,
                "spec.template.metadata.labels",
                r#"Invalid value: {"job-name":"myjob"}: `selector` does not match template `labels`"#,
            ),
        ],
    );
}

// ---------------------------------------------------------------------
// H. Create/update strategy
// ---------------------------------------------------------------------

fn ctx(absent: &Absent) -> Context<'_> {
    Context {
        now: "2026-01-01T00:00:00Z".parse().expect("timestamp"),
        absent,
    }
}

/// A Job as a client submits it: no selector, labels or uid-derived fields.
fn submitted(f: impl FnOnce(&mut JobSpec)) -> Job {
    let mut job = valid_job();
    if let Some(s) = job.spec.as_mut() {
        s.selector = None;
        s.template.metadata = None;
        f(s);
    }
    job
}

fn indexed_fail_index(rules: Vec<PodFailurePolicyRule>) -> Job {
    submitted(|s| {
        s.completion_mode = Some("Indexed".into());
        s.completions = Some(2);
        s.backoff_limit_per_index = Some(1);
        s.pod_failure_policy = Some(PodFailurePolicy { rules });
    })
}

/// ⚑ gates-on: upstream's expectation (fields dropped, FailIndex rules
/// removed) was recorded with JobBackoffLimitPerIndex off; with every gate
/// on nothing is dropped and the Job is admitted as submitted.
#[test]
fn case_99_prepare_for_create_keeps_fail_index() {
    let absent = Absent::default();
    let mut job = indexed_fail_index(vec![exit_rule("FailIndex", None, "In", &[1])]);
    admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect("admitted");
    let spec = job.spec.clone().expect("spec");
    assert_eq!(spec.backoff_limit_per_index, Some(1));
    assert_eq!(
        spec.pod_failure_policy.map(|p| p.rules),
        Some(vec![exit_rule("FailIndex", None, "In", &[1])])
    );
    // PrepareForCreate: status cleared, generation 1, selector generated.
    assert_eq!(job.status, Some(JobStatus::default()));
    assert_eq!(job.metadata.generation, Some(1));
    assert_eq!(
        spec.selector.and_then(|s| s.match_labels),
        Some(labels(&[("batch.kubernetes.io/controller-uid", "1a2b3c")]))
    );
    assert_eq!(
        spec.template.metadata.and_then(|m| m.labels),
        Some(generated_labels())
    );

    let rules = vec![
        exit_rule("FailJob", None, "In", &[2]),
        exit_rule("FailIndex", None, "In", &[1]),
        exit_rule("Ignore", None, "In", &[13]),
    ];
    let mut job = indexed_fail_index(rules.clone());
    admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect("admitted");
    assert_eq!(
        job.spec.and_then(|s| s.pod_failure_policy).map(|p| p.rules),
        Some(rules)
    );
}

fn stored(mut job: Job) -> Job {
    let absent = Absent::default();
    admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect("admitted");
    job.metadata.resource_version = Some("1".into());
    job
}

#[test]
fn case_100_annotation_only_update_with_fail_index() {
    let absent = Absent::default();
    let old = stored(indexed_fail_index(vec![exit_rule(
        "FailIndex",
        None,
        "In",
        &[1],
    )]));
    let mut new = old.clone();
    new.metadata.annotations = Some(labels(&[("foo", "bar")]));
    admit_update::<JobStrategy>(&mut new, &old, &ctx(&absent)).expect("no errors");
    assert_eq!(new.metadata.generation, Some(1), "metadata-only change");
}

#[test]
fn update_immutability_and_mutable_fields() {
    let absent = Absent::default();
    let old = stored(indexed_fail_index(vec![exit_rule(
        "FailIndex",
        None,
        "In",
        &[1],
    )]));

    // backoffLimit, parallelism and maxFailedIndexes may change; generation bumps.
    let mut new = old.clone();
    if let Some(s) = new.spec.as_mut() {
        s.backoff_limit = Some(3);
        s.parallelism = Some(2);
        s.max_failed_indexes = Some(1);
    }
    admit_update::<JobStrategy>(&mut new, &old, &ctx(&absent)).expect("mutable fields");
    assert_eq!(new.metadata.generation, Some(2));

    let mut new = old.clone();
    if let Some(s) = new.spec.as_mut() {
        s.pod_failure_policy = Some(PodFailurePolicy {
            rules: vec![exit_rule("FailIndex", None, "In", &[2])],
        });
        s.backoff_limit_per_index = Some(2);
        s.managed_by = Some("example.com/other".into());
    }
    let errs = JobStrategy::validate_update(&new, &old, &ctx(&absent));
    assert_errors(
        "podFailurePolicy, backoffLimitPerIndex and managedBy are immutable",
        &errs,
        &[
            w(
                Invalid,
                "spec.podFailurePolicy",
                r#"Invalid value: {"Rules":[{"Action":"FailIndex","OnExitCodes":{"ContainerName":null,"Operator":"In","Values":[2]},"OnPodConditions":null}]}: field is immutable"#,
            ),
            w(
                Invalid,
                "spec.backoffLimitPerIndex",
                "Invalid value: 2: field is immutable",
            ),
            w(
                Invalid,
                "spec.managedBy",
                r#"Invalid value: "example.com/other": field is immutable"#,
            ),
        ],
    );

    let mut new = old.clone();
    if let Some(s) = new.spec.as_mut() {
        s.completion_mode = Some("NonIndexed".into());
        s.backoff_limit_per_index = None;
        s.pod_failure_policy = None;
        s.pod_replacement_policy = Some("TerminatingOrFailed".into());
    }
    let errs = JobStrategy::validate_update(&new, &old, &ctx(&absent));
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.completionMode",
            "spec.podFailurePolicy",
            "spec.backoffLimitPerIndex"
        ]
    );
    assert_eq!(errs.0[1].body(), "Invalid value: null: field is immutable");

    // Elastic Indexed Jobs: completions only in tandem with parallelism.
    let mut new = old.clone();
    if let Some(s) = new.spec.as_mut() {
        s.completions = Some(3);
        s.max_failed_indexes = None;
    }
    let errs = JobStrategy::validate_update(&new, &old, &ctx(&absent));
    assert_errors(
        "completions alone",
        &errs,
        &[w(
            Invalid,
            "spec.completions",
            "Invalid value: 3: can only be modified in tandem with spec.parallelism",
        )],
    );
    if let Some(s) = new.spec.as_mut() {
        s.parallelism = Some(3);
    }
    assert!(JobStrategy::validate_update(&new, &old, &ctx(&absent)).is_empty());
}

#[test]
fn update_template_is_immutable_unless_suspended_and_never_started() {
    let absent = Absent::default();
    let old = stored(submitted(|_| {}));
    let mut new = old.clone();
    if let Some(p) = new.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
        p.node_selector = Some(labels(&[("zone", "a")]));
    }
    let errs = JobStrategy::validate_update(&new, &old, &ctx(&absent));
    let fields: Vec<(&str, ErrorType)> = errs
        .iter()
        .map(|e| (e.field.as_str(), e.error_type))
        .collect();
    assert_eq!(fields, [("spec.template", Invalid)]);
    assert!(errs.0[0].body().ends_with(": field is immutable"));

    let mut old_suspended = old.clone();
    if let Some(s) = old_suspended.spec.as_mut() {
        s.suspend = Some(true);
    }
    let mut new = old_suspended.clone();
    if let Some(p) = new.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
        p.node_selector = Some(labels(&[("zone", "a")]));
    }
    assert!(JobStrategy::validate_update(&new, &old_suspended, &ctx(&absent)).is_empty());
    if let Some(p) = new.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
        p.containers[0].image = Some("other".into());
    }
    assert_eq!(
        JobStrategy::validate_update(&new, &old_suspended, &ctx(&absent)).len(),
        1,
        "only scheduling directives are mutable"
    );
}

fn with_responders(job: &mut Job, responders: Vec<EvictionResponder>) {
    if let Some(p) = job.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
        p.eviction_responders = Some(responders);
    }
}

fn responder(name: &str, priority: i32) -> EvictionResponder {
    EvictionResponder {
        name: name.into(),
        priority,
    }
}

/// The template's pod spec carries `evictionResponders` (eviction spec §3):
/// validated at `spec.template.spec` on create, after the Job rules.
#[test]
fn template_eviction_responders_are_validated_on_create() {
    let absent = Absent::default();
    let mut job = submitted(|_| {});
    with_responders(&mut job, vec![responder("k8s.io/x", 10000)]);
    let err = admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect_err("reserved domain");
    assert_errors(
        "reserved domain",
        &err.errors,
        &[w(
            Invalid,
            "spec.template.spec.evictionResponders[0].name",
            r#"Invalid value: "k8s.io/x": domain names *.k8s.io, *.kubernetes.io are reserved"#,
        )],
    );
    assert_eq!(
        err.errors.to_string(),
        r#"spec.template.spec.evictionResponders[0].name: Invalid value: "k8s.io/x": domain names *.k8s.io, *.kubernetes.io are reserved"#
    );

    // A priority missing from the submitted JSON is required.
    let mut absent = Absent::default();
    absent.insert(
        &Path::new("spec")
            .child("template")
            .child("spec")
            .child("evictionResponders")
            .index(0)
            .child("priority"),
    );
    let mut job = submitted(|_| {});
    with_responders(&mut job, vec![responder("example.com/drain", 0)]);
    let err = admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect_err("required");
    assert_errors(
        "missing priority",
        &err.errors,
        &[w(
            Required,
            "spec.template.spec.evictionResponders[0].priority",
            "Required value",
        )],
    );

    let mut job = submitted(|_| {});
    with_responders(&mut job, vec![responder("example.com/drain", 10000)]);
    admit_create::<JobStrategy>(&mut job, &ctx(&Absent::default())).expect("valid responder");
}

/// On update the list is validated only when it changed (declarative
/// validation ratchets unchanged fields).
#[test]
fn template_eviction_responders_are_ratcheted_on_update() {
    let absent = Absent::default();
    let mut old = stored(submitted(|_| {}));
    // Stored before the rule existed.
    with_responders(&mut old, vec![responder("k8s.io/x", 10000)]);
    let mut new = old.clone();
    if let Some(s) = new.spec.as_mut() {
        s.parallelism = Some(3);
    }
    assert_errors(
        "unchanged list",
        &JobStrategy::validate_update(&new, &old, &ctx(&absent)),
        &[],
    );

    with_responders(&mut new, vec![responder("kubernetes.io/y", 10000)]);
    let errs = JobStrategy::validate_update(&new, &old, &ctx(&absent));
    let fields: Vec<(&str, ErrorType)> = errs
        .iter()
        .map(|e| (e.field.as_str(), e.error_type))
        .collect();
    assert_eq!(
        fields,
        [
            ("spec.template", Invalid),
            ("spec.template.spec.evictionResponders[0].name", Invalid),
        ]
    );
}

/// Spec errors are reported by ValidateJob and again by ValidateJobSpecUpdate.
#[test]
fn update_reports_spec_errors_twice_like_upstream() {
    let absent = Absent::default();
    let old = stored(submitted(|_| {}));
    let mut new = old.clone();
    if let Some(s) = new.spec.as_mut() {
        s.backoff_limit = Some(-1);
    }
    let errs = JobStrategy::validate_update(&new, &old, &ctx(&absent));
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["spec.backoffLimit", "spec.backoffLimit"]);
    assert_eq!(
        errs.aggregate().as_deref(),
        Some("spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0")
    );
}

#[test]
fn defaulted_job_without_restart_policy_is_rejected_like_upstream() {
    let absent = Absent::default();
    let mut job = submitted(|s| {
        if let Some(p) = s.template.spec.as_mut() {
            p.restart_policy = None;
        }
    });
    let err =
        admit_create::<JobStrategy>(&mut job, &ctx(&absent)).expect_err("Always is not allowed");
    assert_eq!(
        err.message(),
        r#"Job.batch "myjob" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#
    );
    let mut job = submitted(|_| {});
    default_job(&mut job);
    assert_eq!(
        job.spec.and_then(|s| s.backoff_limit),
        Some(6),
        "defaults applied once more are stable"
    );
}

// ---------------------------------------------------------------------
// Case 141 and §5 status validation
// ---------------------------------------------------------------------

fn time(s: &str) -> Time {
    Time(s.parse().expect("timestamp"))
}

fn cond(type_: &str, status: &str) -> JobCondition {
    JobCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some("Reason".into()),
        message: Some("message".into()),
        last_transition_time: Some(time("2026-01-01T00:00:00Z")),
        last_probe_time: None,
    }
}

fn managed_job() -> Job {
    let mut job = stored(submitted(|s| {
        s.managed_by = Some("example.com/other".into())
    }));
    job.status = Some(JobStatus {
        start_time: Some(time("2026-01-01T00:00:00Z")),
        ..Default::default()
    });
    job
}

fn write_status(old: &Job, f: impl FnOnce(&mut JobStatus)) -> Result<Job, String> {
    let absent = Absent::default();
    let mut new = old.clone();
    f(new.status.get_or_insert_with(Default::default));
    admit_status_update::<JobStrategy>(&mut new, old, &ctx(&absent))
        .map(|()| new)
        .map_err(|e| e.message())
}

#[test]
fn case_141_status_validation_sequence() {
    let job = managed_job();

    let absent = Absent::default();
    let mut attempt = job.clone();
    if let Some(s) = attempt.status.as_mut() {
        s.conditions = Some(vec![cond("Failed", "True")]);
    }
    let status = admit_status_update::<JobStrategy>(&mut attempt, &job, &ctx(&absent))
        .expect_err("422")
        .to_status();
    assert_eq!(status.code, Some(422));
    assert_eq!(status.reason.as_deref(), Some("Invalid"));

    let err = write_status(&job, |s| s.conditions = Some(vec![cond("Failed", "True")]))
        .expect_err("Failed without FailureTarget");
    assert_eq!(
        err,
        r#"Job.batch "myjob" is invalid: status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"#
    );

    let with_two = write_status(&job, |s| s.failed = Some(2)).expect("failed 2");
    let err = write_status(&with_two, |s| s.failed = Some(1)).expect_err("decrease");
    assert_eq!(
        err,
        r#"Job.batch "myjob" is invalid: status.failed: Invalid value: 1: cannot decrease the failed counter"#
    );

    let failed = write_status(&with_two, |s| {
        s.conditions = Some(vec![cond("FailureTarget", "True"), cond("Failed", "True")]);
    })
    .expect("[FailureTarget, Failed] is accepted");

    let err = write_status(&failed, |s| {
        s.conditions = Some(vec![cond("Failed", "True")])
    })
    .expect_err("dropping FailureTarget");
    assert_eq!(
        err,
        r#"Job.batch "myjob" is invalid: status.conditions: Invalid value: cannot disable the terminal FailureTarget=True condition"#
    );
}

#[test]
fn case_141_without_start_time_also_needs_one() {
    let mut job = managed_job();
    job.status = Some(JobStatus::default());
    let err = write_status(&job, |s| s.conditions = Some(vec![cond("Failed", "True")]))
        .expect_err("two errors");
    assert_eq!(
        err,
        r#"Job.batch "myjob" is invalid: [status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition, status.startTime: Required value: startTime is required for finished job]"#
    );
}

/// A `/status` write cannot change the spec (reset to the stored one), but may
/// change labels, as upstream's `jobStatusStrategy` allows; a client-sent
/// generation or creation time is ignored (`rest.BeforeUpdate`).
#[test]
fn status_write_resets_spec_but_not_labels() {
    let job = managed_job();
    let absent = Absent::default();
    let mut new = job.clone();
    new.metadata.labels = Some(labels(&[("x", "y")]));
    if let Some(s) = new.spec.as_mut() {
        s.backoff_limit = Some(-5);
    }
    new.metadata.generation = Some(99);
    new.metadata.creation_timestamp = None;
    new.metadata.uid = None;
    admit_status_update::<JobStrategy>(&mut new, &job, &ctx(&absent)).expect("nothing to reject");
    assert_eq!(new.spec, job.spec);
    assert_eq!(new.metadata.labels, Some(labels(&[("x", "y")])));
    assert_eq!(new.metadata.generation, job.metadata.generation);
    assert_eq!(
        new.metadata.creation_timestamp,
        job.metadata.creation_timestamp
    );
    assert_eq!(new.metadata.uid, job.metadata.uid);
}

type SpecFn = fn(&mut JobSpec);
type StatusFn = Box<dyn Fn(&mut JobStatus)>;
/// `(name, spec tweak, old status, new status, expected (type, field))`.
type StatusCase = (
    &'static str,
    SpecFn,
    StatusFn,
    StatusFn,
    Vec<(ErrorType, &'static str)>,
);

/// Upstream `TestStatusStrategy_ValidateUpdate` cases (JobManagedBy on):
/// `(name, old status, new status, spec tweak, expected (type, field))`.
#[test]
fn status_strategy_validate_update_upstream_cases() {
    let now = || Some(time("2026-01-01T00:00:00Z"));
    let later = || Some(time("2026-01-01T00:01:00Z"));
    let conds = |cs: &[(&str, &str)]| Some(cs.iter().map(|(t, s)| cond(t, s)).collect::<Vec<_>>());
    let c = "status.conditions";
    let none: SpecFn = |_| {};
    let indexed5: SpecFn = |s| {
        s.completion_mode = Some("Indexed".into());
        s.completions = Some(5);
        s.parallelism = Some(1);
    };
    let cases: Vec<StatusCase> = vec![
        (
            "invalid addition of both Failed=True and Complete=True",
            none,
            Box::new(|_| {}),
            Box::new(move |s| {
                s.start_time = now();
                s.completion_time = now();
                s.conditions = conds(&[("Complete", "True"), ("Failed", "True")]);
            }),
            vec![(Invalid, c), (Invalid, c), (Invalid, c)],
        ),
        (
            "invalid addition of Complete=True without SuccessCriteriaMet=True",
            none,
            Box::new(|_| {}),
            Box::new(move |s| {
                s.start_time = now();
                s.completion_time = now();
                s.conditions = conds(&[("Complete", "True")]);
            }),
            vec![(Invalid, c)],
        ),
        (
            "invalid attempt to transition to Failed=True without startTime",
            none,
            Box::new(move |s| s.conditions = conds(&[("FailureTarget", "True")])),
            Box::new(move |s| {
                s.conditions = conds(&[("FailureTarget", "True"), ("Failed", "True")])
            }),
            vec![(Required, "status.startTime")],
        ),
        (
            "invalid attempt to transition to Failed=True with terminating > 0",
            none,
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("FailureTarget", "True")]);
                s.terminating = Some(1);
            }),
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("FailureTarget", "True"), ("Failed", "True")]);
                s.terminating = Some(1);
            }),
            vec![(Invalid, "status.terminating")],
        ),
        (
            "invalid attempt to transition to Failed=True with active > 0",
            none,
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("FailureTarget", "True")]);
                s.active = Some(1);
            }),
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("FailureTarget", "True"), ("Failed", "True")]);
                s.active = Some(1);
            }),
            vec![(Invalid, "status.active")],
        ),
        (
            "invalid attempt to transition to Failed=True with uncountedTerminatedPods.Failed>0",
            none,
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("FailureTarget", "True")]);
                s.uncounted_terminated_pods =
                    Some(k8s_openapi::api::batch::v1::UncountedTerminatedPods {
                        failed: Some(vec!["a".into()]),
                        succeeded: None,
                    });
            }),
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("FailureTarget", "True"), ("Failed", "True")]);
                s.uncounted_terminated_pods =
                    Some(k8s_openapi::api::batch::v1::UncountedTerminatedPods {
                        failed: Some(vec!["a".into()]),
                        succeeded: None,
                    });
            }),
            vec![(Invalid, "status.uncountedTerminatedPods")],
        ),
        (
            "invalid removal of terminal condition Failed=True",
            none,
            Box::new(move |s| s.conditions = conds(&[("Failed", "True")])),
            Box::new(|_| {}),
            vec![(Invalid, c)],
        ),
        (
            "invalid removal of terminal condition Complete=True",
            none,
            Box::new(move |s| s.conditions = conds(&[("Complete", "True")])),
            Box::new(|_| {}),
            vec![(Invalid, c)],
        ),
        (
            "invalid addition of FailureTarget=True when Complete=True",
            none,
            Box::new(move |s| {
                s.start_time = now();
                s.completion_time = now();
                s.conditions = conds(&[("Complete", "True")]);
            }),
            Box::new(move |s| {
                s.start_time = now();
                s.completion_time = now();
                s.conditions = conds(&[("Complete", "True"), ("FailureTarget", "True")]);
            }),
            vec![(Invalid, c)],
        ),
        (
            "invalid attempt to decrease the succeeded counter",
            none,
            Box::new(|s| s.succeeded = Some(3)),
            Box::new(|s| s.succeeded = Some(1)),
            vec![(Invalid, "status.succeeded")],
        ),
        (
            "succeeded may decrease for an Indexed Job with completions == parallelism (scale down)",
            |s| {
                s.completion_mode = Some("Indexed".into());
                s.completions = Some(5);
                s.parallelism = Some(5);
            },
            Box::new(|s| s.succeeded = Some(3)),
            Box::new(|s| s.succeeded = Some(1)),
            vec![],
        ),
        (
            "invalid attempt to set more ready pods than active",
            none,
            Box::new(|_| {}),
            Box::new(|s| {
                s.active = Some(1);
                s.ready = Some(2);
            }),
            vec![(Invalid, "status.ready")],
        ),
        (
            "more ready pods than active, but allowed",
            none,
            Box::new(|s| {
                s.active = Some(1);
                s.ready = Some(2);
            }),
            Box::new(|s| {
                s.active = Some(1);
                s.ready = Some(2);
                s.succeeded = Some(1);
            }),
            vec![],
        ),
        (
            "verify startTime cannot be updated for unsuspended job",
            none,
            Box::new(move |s| s.start_time = now()),
            Box::new(move |s| s.start_time = later()),
            vec![(Required, "status.startTime")],
        ),
        (
            "verify startTime can be updated when resuming job (JobSuspended: True -> False)",
            none,
            Box::new(move |s| {
                s.start_time = now();
                s.conditions = conds(&[("Suspended", "True")]);
            }),
            Box::new(move |s| {
                s.start_time = later();
                s.conditions = conds(&[("Suspended", "False")]);
            }),
            vec![],
        ),
        (
            "invalid attempt to modify completionTime",
            none,
            Box::new(move |s| {
                s.completion_time = now();
                s.conditions = conds(&[("Complete", "True")]);
            }),
            Box::new(move |s| {
                s.completion_time = later();
                s.start_time = now();
                s.conditions = conds(&[("Complete", "True")]);
            }),
            vec![(Invalid, "status.completionTime")],
        ),
        (
            "invalid attempt setting FailedIndexes when not backoffLimitPerIndex",
            indexed5,
            Box::new(|_| {}),
            Box::new(|s| s.failed_indexes = Some("0".into())),
            vec![(Invalid, "status.failedIndexes")],
        ),
        (
            "invalid attempt to set bad format for CompletedIndexes",
            indexed5,
            Box::new(|_| {}),
            Box::new(|s| s.completed_indexes = Some("invalid format".into())),
            vec![(Invalid, "status.completedIndexes")],
        ),
        (
            "invalid format for CompletedIndexes, but allowed",
            indexed5,
            Box::new(|s| s.completed_indexes = Some("invalid format".into())),
            Box::new(|s| {
                s.completed_indexes = Some("invalid format".into());
                s.active = Some(1);
            }),
            vec![],
        ),
        (
            "valid transition to Complete for suspended Job with completions=0; without startTime",
            |s| {
                s.completions = Some(0);
                s.suspend = Some(true);
            },
            Box::new(|_| {}),
            Box::new(move |s| {
                s.completion_time = now();
                s.conditions = conds(&[("SuccessCriteriaMet", "True"), ("Complete", "True")]);
            }),
            vec![],
        ),
    ];
    let absent = Absent::default();
    for (name, spec_fn, old_fn, new_fn, want) in cases {
        let mut old = stored(submitted(spec_fn));
        let mut s = JobStatus::default();
        old_fn(&mut s);
        old.status = Some(s);
        let mut new = old.clone();
        let mut s = JobStatus::default();
        new_fn(&mut s);
        new.status = Some(s);
        let errs = JobStrategy::validate_status_update(&new, &old, &ctx(&absent));
        let got: Vec<(ErrorType, &str)> = errs
            .iter()
            .map(|e| (e.error_type, e.field.as_str()))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}
