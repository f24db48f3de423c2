//! PodDisruptionBudget validation: case 133's second half (status
//! `disruptionsAllowed: -1` → 422) from `job-failure-cases.md` §K, plus the
//! policy/v1 spec rules of `ValidatePodDisruptionBudgetSpec` and the
//! strategy's create/update/status behaviour.

use exitplan_api::absent::Absent;
use exitplan_api::field::ErrorType;
use exitplan_api::policy::pdb::PodDisruptionBudgetStrategy;
use exitplan_api::strategy::{Context, Strategy, admit_create, admit_status_update, admit_update};
use k8s_openapi::api::policy::v1::{
    PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use ErrorType::{Forbidden, Invalid, NotSupported, Required};

fn ctx(absent: &Absent) -> Context<'_> {
    Context {
        now: "2026-01-01T00:00:00Z".parse().expect("timestamp"),
        absent,
    }
}

fn pdb(name: &str, spec: PodDisruptionBudgetSpec) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

fn app_selector() -> Option<LabelSelector> {
    Some(LabelSelector {
        match_labels: Some([("app".to_owned(), "web".to_owned())].into()),
        match_expressions: None,
    })
}

fn stored(name: &str, spec: PodDisruptionBudgetSpec) -> PodDisruptionBudget {
    let absent = Absent::default();
    let mut p = pdb(name, spec);
    admit_create::<PodDisruptionBudgetStrategy>(&mut p, &ctx(&absent)).expect("valid PDB");
    p.metadata.resource_version = Some("1".into());
    p
}

fn create_errors(spec: PodDisruptionBudgetSpec) -> Vec<(ErrorType, String, String)> {
    let absent = Absent::default();
    PodDisruptionBudgetStrategy::validate_create(&pdb("web", spec), &ctx(&absent))
        .iter()
        .map(|e| (e.error_type, e.field.clone(), e.body()))
        .collect()
}

fn w(t: ErrorType, f: &str, b: &str) -> (ErrorType, String, String) {
    (t, f.to_owned(), b.to_owned())
}

#[test]
fn case_133_negative_disruptions_allowed_is_rejected() {
    let absent = Absent::default();
    let old = stored(
        "jp3",
        PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(1)),
            selector: app_selector(),
            ..Default::default()
        },
    );
    let mut new = old.clone();
    if let Some(s) = new.status.as_mut() {
        s.disruptions_allowed = Some(-1);
    }
    let err = admit_status_update::<PodDisruptionBudgetStrategy>(&mut new, &old, &ctx(&absent))
        .expect_err("negative counter");
    assert_eq!(
        err.message(),
        r#"PodDisruptionBudget.policy "jp3" is invalid: status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"#
    );
    assert_eq!(err.to_status().code, Some(422));
}

#[test]
fn status_counters_and_conditions() {
    let absent = Absent::default();
    let old = stored(
        "web",
        PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(1)),
            selector: app_selector(),
            ..Default::default()
        },
    );
    let mut new = old.clone();
    new.status = Some(PodDisruptionBudgetStatus {
        current_healthy: Some(-1),
        desired_healthy: Some(-2),
        disruptions_allowed: Some(0),
        expected_pods: Some(-3),
        conditions: Some(vec![Condition {
            type_: "DisruptionAllowed".into(),
            status: "Maybe".into(),
            reason: "InsufficientPods".into(),
            message: String::new(),
            last_transition_time: Time("2026-01-01T00:00:00Z".parse().expect("ts")),
            observed_generation: None,
        }]),
        ..Default::default()
    });
    let errs = PodDisruptionBudgetStrategy::validate_status_update(&new, &old, &ctx(&absent));
    let got: Vec<(ErrorType, &str)> = errs
        .iter()
        .map(|e| (e.error_type, e.field.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (NotSupported, "status.conditions[0].status"),
            (Invalid, "status.currentHealthy"),
            (Invalid, "status.desiredHealthy"),
            (Invalid, "status.expectedPods"),
        ]
    );

    // A healthy controller write goes through; the spec cannot be changed via /status.
    let mut new = old.clone();
    new.status = Some(PodDisruptionBudgetStatus {
        current_healthy: Some(2),
        desired_healthy: Some(1),
        disruptions_allowed: Some(1),
        expected_pods: Some(2),
        observed_generation: Some(1),
        ..Default::default()
    });
    if let Some(s) = new.spec.as_mut() {
        s.min_available = Some(IntOrString::String("500%".into()));
    }
    admit_status_update::<PodDisruptionBudgetStrategy>(&mut new, &old, &ctx(&absent))
        .expect("valid status");
    assert_eq!(new.spec, old.spec);
}

#[test]
fn spec_min_available_xor_max_unavailable() {
    assert_eq!(
        create_errors(PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(1)),
            max_unavailable: Some(IntOrString::String("10%".into())),
            selector: app_selector(),
            ..Default::default()
        }),
        [w(
            Invalid,
            "spec",
            r#"Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set"#,
        )]
    );
}

#[test]
fn spec_int_or_percent_rules() {
    assert_eq!(
        create_errors(PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(-1)),
            ..Default::default()
        }),
        [w(
            Invalid,
            "spec.minAvailable",
            "Invalid value: -1: must be greater than or equal to 0"
        )]
    );
    assert_eq!(
        create_errors(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::String("101%".into())),
            ..Default::default()
        }),
        [w(
            Invalid,
            "spec.maxUnavailable",
            r#"Invalid value: "101%": must not be greater than 100%"#
        )]
    );
    assert_eq!(
        create_errors(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::String("half".into())),
            ..Default::default()
        }),
        [w(
            Invalid,
            "spec.maxUnavailable",
            r#"Invalid value: "half": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"#
        )]
    );
    assert!(
        create_errors(PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::String("100%".into())),
            ..Default::default()
        })
        .is_empty(),
        "100% and no selector are fine"
    );
}

#[test]
fn spec_selector_and_unhealthy_pod_eviction_policy() {
    assert_eq!(
        create_errors(PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(1)),
            selector: Some(LabelSelector {
                match_labels: None,
                match_expressions: Some(vec![
                    LabelSelectorRequirement {
                        key: "app".into(),
                        operator: "In".into(),
                        values: None,
                    },
                    LabelSelectorRequirement {
                        key: "tier".into(),
                        operator: "Exists".into(),
                        values: Some(vec!["x".into()]),
                    },
                ]),
            }),
            unhealthy_pod_eviction_policy: Some("Sometimes".into()),
            ..Default::default()
        }),
        [
            w(
                Required,
                "spec.selector.matchExpressions[0].values",
                "Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ),
            w(
                Forbidden,
                "spec.selector.matchExpressions[1].values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ),
            w(
                NotSupported,
                "spec.unhealthyPodEvictionPolicy",
                r#"Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget""#
            ),
        ]
    );
}

#[test]
fn create_checks_metadata_only_after_the_spec() {
    let absent = Absent::default();
    let mut p = pdb(
        "a/b",
        PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(-1)),
            ..Default::default()
        },
    );
    let err = admit_create::<PodDisruptionBudgetStrategy>(&mut p, &ctx(&absent)).expect_err("spec");
    assert_eq!(
        err.message(),
        r#"PodDisruptionBudget.policy "a/b" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"#
    );
    if let Some(s) = p.spec.as_mut() {
        s.min_available = Some(IntOrString::Int(1));
    }
    let err = admit_create::<PodDisruptionBudgetStrategy>(&mut p, &ctx(&absent)).expect_err("name");
    assert_eq!(
        err.message(),
        r#"PodDisruptionBudget.policy "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'"#
    );
}

#[test]
fn create_clears_status_and_update_bumps_generation() {
    let absent = Absent::default();
    let mut p = pdb(
        "web",
        PodDisruptionBudgetSpec {
            min_available: Some(IntOrString::Int(1)),
            selector: app_selector(),
            ..Default::default()
        },
    );
    p.status = Some(PodDisruptionBudgetStatus {
        disruptions_allowed: Some(5),
        ..Default::default()
    });
    admit_create::<PodDisruptionBudgetStrategy>(&mut p, &ctx(&absent)).expect("valid");
    assert_eq!(p.metadata.generation, Some(1));
    assert_eq!(
        p.status,
        Some(PodDisruptionBudgetStatus {
            current_healthy: Some(0),
            desired_healthy: Some(0),
            disruptions_allowed: Some(0),
            expected_pods: Some(0),
            ..Default::default()
        })
    );
    p.metadata.resource_version = Some("1".into());

    let mut new = p.clone();
    new.status = None;
    if let Some(s) = new.spec.as_mut() {
        s.min_available = Some(IntOrString::Int(2));
    }
    admit_update::<PodDisruptionBudgetStrategy>(&mut new, &p, &ctx(&absent)).expect("mutable spec");
    assert_eq!(new.metadata.generation, Some(2));
    assert_eq!(new.status, p.status, "update keeps the stored status");

    let mut same = p.clone();
    same.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
    admit_update::<PodDisruptionBudgetStrategy>(&mut same, &p, &ctx(&absent)).expect("labels");
    assert_eq!(same.metadata.generation, Some(1));
}
