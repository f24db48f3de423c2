//! eviction-cases.md §A — formats and EvictionRequest validation (cases 1–15).

use crate::support::{assert_errors, now};
use std::collections::BTreeMap;

use exitplan_api::absent::Absent;
use exitplan_api::field::{ErrorList, ErrorType};
use exitplan_api::formats;
use exitplan_api::lifecycle::{
    EvictionRequestStrategy, validate_eviction_request_create,
    validate_eviction_request_status_update, validate_eviction_request_update,
};
use exitplan_api::strategy::{Context, admit_create, admit_status_update, admit_update};
use k8s_openapi::api::lifecycle::v1alpha1::{
    EvictionRequest, EvictionRequestPodReference, EvictionRequestSpec, EvictionRequestStatus,
    EvictionRequestTarget,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};

// ---------------------------------------------------------------- builders

const UID: &str = "bd23f542-ac79-4b44-a628-9735e18b8037";

/// The valid ER of case 1.
fn er() -> EvictionRequest {
    EvictionRequest {
        metadata: ObjectMeta {
            name: Some("bar".into()),
            namespace: Some("foo".into()),
            ..ObjectMeta::default()
        },
        spec: EvictionRequestSpec {
            target: EvictionRequestTarget {
                pod: Some(EvictionRequestPodReference {
                    name: "foo.pod".into(),
                    uid: UID.into(),
                }),
            },
            requester: "foo.example.com/bar".into(),
            intent: "Eviction".into(),
        },
        status: None,
    }
}

fn with(f: impl FnOnce(&mut EvictionRequest)) -> EvictionRequest {
    let mut e = er();
    f(&mut e);
    e
}

/// A stored (old) and an updated (new) copy with resourceVersions set.
fn pair(
    old: impl FnOnce(&mut EvictionRequest),
    new: impl FnOnce(&mut EvictionRequest),
) -> (EvictionRequest, EvictionRequest) {
    let mut o = with(old);
    o.metadata.resource_version = Some("0".into());
    let mut n = o.clone();
    n.metadata.resource_version = Some("1".into());
    new(&mut n);
    (o, n)
}

fn cond(type_: &str, status: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: format!("{type_}Reason"),
        message: String::new(),
        last_transition_time: Time(now()),
        observed_generation: None,
    }
}

fn status(generation: Option<i64>, conditions: Vec<Condition>) -> Option<EvictionRequestStatus> {
    Some(EvictionRequestStatus {
        observed_generation: generation,
        conditions: (!conditions.is_empty()).then_some(conditions),
    })
}

fn status_update(
    old: Option<EvictionRequestStatus>,
    new: Option<EvictionRequestStatus>,
) -> ErrorList {
    let (o, n) = pair(|e| e.status = old, |e| e.status = new);
    validate_eviction_request_status_update(&n, &o, &Absent::default())
}

use ErrorType::{Duplicate, Invalid, NotSupported, Required, TooMany};

// ---------------------------------------------------------------- cases

#[test]
fn case_01_valid_eviction_request() {
    assert_errors(&validate_eviction_request_create(&er()), &[]);
    let mut obj = with(|e| {
        e.status = status(Some(3), vec![cond("TargetEvicted", "True")]);
        e.metadata.generation = Some(7);
    });
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    admit_create::<EvictionRequestStrategy>(&mut obj, &ctx).expect("valid ER is admitted");
    assert_eq!(obj.metadata.generation, Some(1));
    assert_eq!(obj.status, Some(EvictionRequestStatus::default()));
}

#[test]
fn case_02_missing_namespace() {
    let errs = validate_eviction_request_create(&with(|e| e.metadata.namespace = None));
    assert_errors(&errs, &[(Required, "metadata.namespace", None)]);
    assert_eq!(errs.to_string(), "metadata.namespace: Required value");
}

#[test]
fn case_03_bad_name() {
    let errs =
        validate_eviction_request_create(&with(|e| e.metadata.name = Some("-invalid-name".into())));
    assert_errors(
        &errs,
        &[(Invalid, "metadata.name", Some("format=k8s-long-name"))],
    );
}

#[test]
fn case_04_no_target_member() {
    let errs = validate_eviction_request_create(&with(|e| e.spec.target.pod = None));
    assert_errors(&errs, &[(Invalid, "spec.target", Some("union"))]);
    assert_eq!(
        errs.to_string(),
        "spec.target: Invalid value: \"\": must specify one of: `pod`"
    );
}

#[test]
fn case_05_pod_name() {
    let set = |name: &str| {
        let name = name.to_owned();
        with(move |e| {
            if let Some(p) = e.spec.target.pod.as_mut() {
                p.name = name;
            }
        })
    };
    assert_errors(
        &validate_eviction_request_create(&set("")),
        &[(Required, "spec.target.pod.name", None)],
    );
    assert_errors(
        &validate_eviction_request_create(&set("_test")),
        &[(
            Invalid,
            "spec.target.pod.name",
            Some("format=k8s-long-name"),
        )],
    );
}

#[test]
fn case_06_pod_uid() {
    let set = |uid: &str| {
        let uid = uid.to_owned();
        with(move |e| {
            if let Some(p) = e.spec.target.pod.as_mut() {
                p.uid = uid;
            }
        })
    };
    assert_errors(
        &validate_eviction_request_create(&set("")),
        &[(Required, "spec.target.pod.uid", None)],
    );
    let errs = validate_eviction_request_create(&set("invalid-uid"));
    assert_errors(
        &errs,
        &[(Invalid, "spec.target.pod.uid", Some("format=k8s-uuid"))],
    );
    assert_eq!(
        errs.to_string(),
        "spec.target.pod.uid: Invalid value: \"invalid-uid\": must be a lowercase UUID in 8-4-4-4-12 format"
    );
}

#[test]
fn case_07_requester_required_short_circuits_format() {
    let errs = validate_eviction_request_create(&with(|e| e.spec.requester = String::new()));
    assert_errors(&errs, &[(Required, "spec.requester", None)]);
    let errs = validate_eviction_request_create(&with(|e| e.spec.requester = "foo".into()));
    assert_errors(
        &errs,
        &[(
            Invalid,
            "spec.requester",
            Some("format=k8s-prefixed-label-key"),
        )],
    );
    assert_eq!(
        errs.to_string(),
        "spec.requester: Invalid value: \"foo\": must include a prefix (e.g. 'example.com/key')"
    );
}

#[test]
fn case_08_reserved_requester_domains() {
    for requester in ["k8s.io/key", "dev.kubernetes.io/key"] {
        let errs = validate_eviction_request_create(&with(|e| e.spec.requester = requester.into()));
        assert_errors(&errs, &[(Invalid, "spec.requester", None)]);
        assert_eq!(
            errs.to_string(),
            format!(
                "spec.requester: Invalid value: \"{requester}\": domain names *.k8s.io, *.kubernetes.io are reserved"
            )
        );
    }
    let long = format!("{}.k8s.io", "a".repeat(64));
    for rejected in [
        "Dev.k8s.io",
        "dev.k8s.io...",
        "k8s.io./path",
        " dev.kubernetes.io",
        "dev.Kubernetes.io/with/a/long/path",
        long.as_str(),
    ] {
        assert!(
            formats::has_reserved_domain(rejected),
            "{rejected:?} must be reserved"
        );
    }
    for accepted in [
        "dev-k8s.io/path",
        "foo.dev-k8s.io",
        "dev-kubernetes.io",
        "example.co.uk",
        "10.0.0.1",
        "",
    ] {
        assert!(
            !formats::has_reserved_domain(accepted),
            "{accepted:?} must not be reserved"
        );
    }
}

#[test]
fn case_09_prefixed_label_key_table() {
    let valid = [
        "1.2.3.4/5678".to_owned(),
        "example.com/Uppercase_Is_OK_123".to_owned(),
        format!("{}/{}", "a".repeat(253), "b".repeat(63)),
    ];
    for requester in valid {
        let errs =
            validate_eviction_request_create(&with(|e| e.spec.requester = requester.clone()));
        assert_errors(&errs, &[]);
    }
    let invalid = [
        "only/one/slash".to_owned(),
        "Example.com/abc".to_owned(),
        "example_com/abc".to_owned(),
        "example.com/".to_owned(),
        "/simple".to_owned(),
        "a".repeat(63),
        format!("{}/abc", "a".repeat(254)),
    ];
    for requester in invalid {
        let errs =
            validate_eviction_request_create(&with(|e| e.spec.requester = requester.clone()));
        assert!(!errs.is_empty(), "{requester} must be rejected");
        assert!(
            errs.iter().all(|e| e.field == "spec.requester"
                && e.origin.as_deref() == Some("format=k8s-prefixed-label-key")),
            "{requester}: {errs}"
        );
    }
}

#[test]
fn case_10_intent() {
    let errs = validate_eviction_request_create(&with(|e| e.spec.intent = String::new()));
    assert_errors(&errs, &[(Required, "spec.intent", None)]);
    let errs = validate_eviction_request_create(&with(|e| e.spec.intent = "Invalid".into()));
    assert_errors(&errs, &[(NotSupported, "spec.intent", None)]);
    assert_eq!(
        errs.to_string(),
        "spec.intent: Unsupported value: \"Invalid\": supported values: \"Eviction\", \"Withdrawn\""
    );
}

#[test]
fn case_11_update_intent_bumps_generation_and_keeps_status() {
    let (old, new) = pair(
        |e| {
            e.metadata.generation = Some(1);
            e.status = status(Some(1), vec![]);
        },
        |e| {
            e.spec.intent = "Withdrawn".into();
            e.status = status(Some(9), vec![cond("Failed", "True")]);
            e.metadata.generation = Some(40);
        },
    );
    assert_errors(&validate_eviction_request_update(&new, &old), &[]);
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let mut admitted = new.clone();
    admit_update::<EvictionRequestStrategy>(&mut admitted, &old, &ctx).expect("intent may change");
    assert_eq!(admitted.metadata.generation, Some(2));
    assert_eq!(admitted.status, old.status);
    assert_eq!(admitted.spec.intent, "Withdrawn");

    // A metadata-only update keeps the generation.
    let (old, new) = pair(
        |e| e.metadata.generation = Some(2),
        |e| e.metadata.labels = Some(BTreeMap::from([("a".into(), "b".into())])),
    );
    let mut admitted = new;
    admit_update::<EvictionRequestStrategy>(&mut admitted, &old, &ctx).expect("labels may change");
    assert_eq!(admitted.metadata.generation, Some(2));
}

#[test]
fn case_12_target_is_immutable() {
    let clear = |e: &mut EvictionRequest| e.spec.target.pod = None;
    let rename = |e: &mut EvictionRequest| {
        if let Some(p) = e.spec.target.pod.as_mut() {
            p.name = "change".into();
        }
    };
    let new_uid = |e: &mut EvictionRequest| {
        if let Some(p) = e.spec.target.pod.as_mut() {
            p.uid = String::new();
        }
    };
    let changes: [&dyn Fn(&mut EvictionRequest); 3] = [&clear, &rename, &new_uid];
    for change in changes {
        let (old, new) = pair(|_| {}, change);
        let errs = validate_eviction_request_update(&new, &old);
        assert_errors(&errs, &[(Invalid, "spec.target", Some("immutable"))]);
        assert_eq!(
            errs.to_string(),
            "spec.target: Invalid value: null: field is immutable"
        );
    }
}

#[test]
fn case_13_requester_is_immutable() {
    let (old, new) = pair(|_| {}, |e| e.spec.requester = "foo.example.com/baz".into());
    let errs = validate_eviction_request_update(&new, &old);
    assert_errors(&errs, &[(Invalid, "spec.requester", Some("immutable"))]);
    // Unchanged invalid values are not validated again (ratcheting).
    let (old, new) = pair(
        |e| e.spec.requester = "k8s.io/legacy".into(),
        |e| e.spec.intent = "Withdrawn".into(),
    );
    assert_errors(&validate_eviction_request_update(&new, &old), &[]);
}

#[test]
fn case_14_observed_generation() {
    let errs = status_update(status(Some(1), vec![]), status(None, vec![]));
    assert_errors(
        &errs,
        &[(Invalid, "status.observedGeneration", Some("update"))],
    );
    assert_eq!(
        errs.to_string(),
        "status.observedGeneration: Invalid value: null: field cannot be cleared once set"
    );
    for bad in [0, -1] {
        let errs = status_update(status(None, vec![]), status(Some(bad), vec![]));
        assert_errors(
            &errs,
            &[(Invalid, "status.observedGeneration", Some("minimum"))],
        );
        assert_eq!(
            errs.to_string(),
            format!(
                "status.observedGeneration: Invalid value: {bad}: must be greater than or equal to 1"
            )
        );
    }
    let errs = status_update(status(Some(2), vec![]), status(Some(1), vec![]));
    assert_errors(
        &errs,
        &[(Invalid, "status.observedGeneration", Some("monotonic"))],
    );
    assert_eq!(
        errs.to_string(),
        "status.observedGeneration: Invalid value: 1: may not be decreased from 2"
    );
    assert_errors(
        &status_update(status(Some(1), vec![]), status(Some(5), vec![])),
        &[],
    );
    assert_errors(&status_update(None, status(Some(1), vec![])), &[]);
}

#[test]
fn case_15_conditions_are_revertible_and_bounded() {
    for type_ in ["TargetEvicted", "Failed"] {
        let errs = status_update(
            status(Some(1), vec![cond(type_, "True")]),
            status(Some(1), vec![cond(type_, "False")]),
        );
        assert_errors(&errs, &[]);
    }
    let many: Vec<Condition> = (0..101)
        .map(|i| cond(&format!("Condition{i}"), "True"))
        .collect();
    let errs = status_update(status(Some(1), vec![]), status(Some(1), many));
    assert_errors(&errs, &[(TooMany, "status.conditions", Some("maxItems"))]);
    assert_eq!(
        errs.to_string(),
        "status.conditions: Too many: 101: must have at most 100 items"
    );
    let mut bad = cond("-bad-name", "True");
    bad.reason = "-Reason".into();
    let errs = status_update(status(Some(1), vec![]), status(Some(1), vec![bad]));
    assert_errors(
        &errs,
        &[
            (Invalid, "status.conditions[0].type", None),
            (Invalid, "status.conditions[0].reason", None),
        ],
    );
    let errs = status_update(
        status(Some(1), vec![]),
        status(
            Some(1),
            vec![cond("TargetEvicted", "True"), cond("TargetEvicted", "True")],
        ),
    );
    assert_errors(&errs, &[(Duplicate, "status.conditions[1].type", None)]);
}

#[test]
fn status_update_copies_spec_and_resets_metadata() {
    let (old, mut new) = pair(
        |e| e.metadata.generation = Some(3),
        |e| {
            e.spec.intent = "Withdrawn".into();
            e.metadata.labels = Some(BTreeMap::from([("x".into(), "y".into())]));
            e.metadata.generation = Some(9);
            e.status = status(Some(3), vec![cond("Failed", "False")]);
        },
    );
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    admit_status_update::<EvictionRequestStrategy>(&mut new, &old, &ctx)
        .expect("status write is valid");
    assert_eq!(new.spec, old.spec);
    assert_eq!(new.metadata.labels, None);
    assert_eq!(new.metadata.generation, Some(3));
    assert_eq!(new.status, status(Some(3), vec![cond("Failed", "False")]));
}
