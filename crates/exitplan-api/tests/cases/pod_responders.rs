//! eviction-cases.md §B — Pod `spec.evictionResponders` (cases 16–23).

use crate::support::{assert_errors, now};
use exitplan_api::absent::{Absent, find_absent};
use exitplan_api::core::pod::{PodStrategy, validate_eviction_responders};
use exitplan_api::field::{ErrorList, ErrorType, Path};
use exitplan_api::strategy::{Context, Strategy, admit_create, admit_status_update, admit_update};
use k8s_openapi::api::core::v1::{
    Container, EvictionResponder, Pod, PodSchedulingGroup, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use ErrorType::{Duplicate, Forbidden, Invalid, Required, TooMany};

// ---------------------------------------------------------------- builders

fn er(name: &str, priority: i32) -> EvictionResponder {
    EvictionResponder {
        name: name.into(),
        priority,
    }
}

fn check(list: &[EvictionResponder]) -> ErrorList {
    validate_eviction_responders(list, false, &Path::new("spec"), &Absent::default())
}

fn pod(responders: Option<Vec<EvictionResponder>>) -> Pod {
    let mut p = Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            namespace: Some("ns".into()),
            resource_version: Some("1".into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("registry.k8s.io/pause:3.10".into()),
                ..Container::default()
            }],
            eviction_responders: responders,
            ..PodSpec::default()
        }),
        status: None,
    };
    // As the API server decodes it: with the core/v1 defaults.
    <PodStrategy as Strategy>::default(&mut p);
    p
}

// ---------------------------------------------------------------- cases

#[test]
fn case_16_valid_lists() {
    let long = format!(
        "{}.{}.{}.{}.example.com/bar",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(49)
    );
    let lists = [
        vec![],
        vec![er("foo.example.com/bar", 1000)],
        vec![er("a.b.c.d.e.f.g.h.i.foo.example.com/bar", 10000)],
        vec![er(&long, 7000)],
        vec![er("5.3.5.9/bar", 1000)],
        vec![
            er("foo.example.com/test", 7500),
            er("bar.example.com/baz", 7501),
        ],
        vec![
            er("foo.example.com/test", 7500),
            er("bar.example.com/baz", 7500),
        ],
    ];
    for list in lists {
        assert_errors(&check(&list), &[]);
    }
}

#[test]
fn case_17_at_most_ten_responders() {
    let list: Vec<EvictionResponder> = (0..11)
        .map(|i| er(&format!("{i}-foo.example.com"), 1000 + i))
        .collect();
    let errs = check(&list);
    assert_errors(
        &errs,
        &[(TooMany, "spec.evictionResponders", Some("maxItems"))],
    );
    assert_eq!(
        errs.to_string(),
        "spec.evictionResponders: Too many: 11: must have at most 10 items"
    );
    assert_errors(
        &check(&list[..10]),
        &[
            (
                Invalid,
                "spec.evictionResponders[0].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[1].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[2].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[3].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[4].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[5].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[6].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[7].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[8].name",
                Some("format=k8s-prefixed-label-key"),
            ),
            (
                Invalid,
                "spec.evictionResponders[9].name",
                Some("format=k8s-prefixed-label-key"),
            ),
        ],
    );
}

#[test]
fn case_18_duplicate_name() {
    let errs = check(&[
        er("foo.example.com/test", 10000),
        er("bar.example.com/test", 9000),
        er("foo.example.com/test", 8000),
    ]);
    assert_errors(&errs, &[(Duplicate, "spec.evictionResponders[2]", None)]);
    assert_eq!(
        errs.to_string(),
        r#"spec.evictionResponders[2]: Duplicate value: {"name":"foo.example.com/test","priority":8000}"#
    );
}

#[test]
fn case_19_names() {
    assert_errors(
        &check(&[er("", 5000), er("foo.example.com/test", 10000)]),
        &[(Required, "spec.evictionResponders[0].name", None)],
    );
    for bad in ["invalid", "underscores_are_bad.example.com/bar"] {
        assert_errors(
            &check(&[er(bad, 10000)]),
            &[(
                Invalid,
                "spec.evictionResponders[0].name",
                Some("format=k8s-prefixed-label-key"),
            )],
        );
    }
    for reserved in ["k8s.io/key", "dev.kubernetes.io/key"] {
        let errs = check(&[er(reserved, 10000)]);
        assert_errors(&errs, &[(Invalid, "spec.evictionResponders[0].name", None)]);
        assert_eq!(
            errs.to_string(),
            format!(
                "spec.evictionResponders[0].name: Invalid value: \"{reserved}\": domain names *.k8s.io, *.kubernetes.io are reserved"
            )
        );
    }
}

#[test]
fn case_20_priorities() {
    // A priority missing from the submitted JSON (nil upstream).
    let json =
        serde_json::json!({"spec": {"evictionResponders": [{"name": "foo.example.com/bar"}]}});
    let absent = find_absent(&json);
    let errs = validate_eviction_responders(
        &[er("foo.example.com/bar", 0)],
        false,
        &Path::new("spec"),
        &absent,
    );
    assert_errors(
        &errs,
        &[(Required, "spec.evictionResponders[0].priority", None)],
    );

    let errs = check(&[er("foo.example.com/bar", -1)]);
    assert_errors(
        &errs,
        &[(
            Invalid,
            "spec.evictionResponders[0].priority",
            Some("minimum"),
        )],
    );
    assert_eq!(
        errs.to_string(),
        "spec.evictionResponders[0].priority: Invalid value: -1: must be greater than or equal to 0"
    );
    let errs = check(&[er("foo.example.com/bar", 100_001)]);
    assert_errors(
        &errs,
        &[(
            Invalid,
            "spec.evictionResponders[0].priority",
            Some("maximum"),
        )],
    );
    assert_eq!(
        errs.to_string(),
        "spec.evictionResponders[0].priority: Invalid value: 100001: must be less than or equal to 100000"
    );
    let errs = check(&[er("foo.example.com/bar", 999)]);
    assert_errors(
        &errs,
        &[(Invalid, "spec.evictionResponders[0].priority", None)],
    );
    assert_eq!(
        errs.to_string(),
        "spec.evictionResponders[0].priority: Invalid value: 999: priorities 0-999 are reserved for responders with *.k8s.io suffix"
    );
    for ok in [1000, 10000, 100_000] {
        assert_errors(&check(&[er("foo.example.com/bar", ok)]), &[]);
    }
}

#[test]
fn case_21_k8s_name_with_reserved_priority() {
    let errs = check(&[er("dev.kubernetes.io/key", 0)]);
    assert_errors(
        &errs,
        &[
            (Invalid, "spec.evictionResponders[0].name", None),
            (Invalid, "spec.evictionResponders[0].priority", None),
        ],
    );
}

#[test]
fn case_22_pod_group_pods_cannot_declare_responders() {
    let list = [er("foo.example.com/test", 10000)];
    for prefix in [
        "spec",
        "spec.template.spec",
        "template.spec",
        "spec.jobTemplate.spec.template.spec",
    ] {
        let mut path = Path::default();
        for seg in prefix.split('.') {
            path = path.child(seg);
        }
        let errs = validate_eviction_responders(&list, true, &path, &Absent::default());
        let field = format!("{prefix}.schedulingGroup");
        assert_errors(&errs, &[(Forbidden, &field, Some("dependentForbidden"))]);
        assert_eq!(
            errs.to_string(),
            format!("{field}: Forbidden: may not be set when evictionResponders is set")
        );
        assert_errors(
            &validate_eviction_responders(&[], true, &path, &Absent::default()),
            &[],
        );
    }
    // Through the Pod strategy.
    let mut p = pod(Some(list.to_vec()));
    if let Some(spec) = p.spec.as_mut() {
        spec.scheduling_group = Some(PodSchedulingGroup {
            pod_group_name: Some("blue".into()),
        });
    }
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    assert_errors(
        &PodStrategy::validate_create(&p, &ctx),
        &[(
            Forbidden,
            "spec.schedulingGroup",
            Some("dependentForbidden"),
        )],
    );
}

#[test]
fn case_23_responders_are_immutable() {
    let a = er("a.example.com/x", 2000);
    let b = er("b.example.com/y", 3000);
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let old = pod(Some(vec![a.clone(), b.clone()]));
    for changed in [
        Some(vec![a.clone(), b.clone(), er("c.example.com/z", 4000)]),
        Some(vec![a.clone()]),
        Some(vec![b.clone(), a.clone()]),
        None,
    ] {
        let mut new = pod(changed);
        new.metadata.resource_version = Some("2".into());
        let err = admit_update::<PodStrategy>(&mut new, &old, &ctx)
            .expect_err("evictionResponders cannot change");
        assert_errors(&err.errors, &[(Forbidden, "spec", None)]);
        assert!(
            err.errors.to_string().starts_with(
                "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
            ),
            "{}",
            err.errors
        );
    }
    // Unchanged responders (nil and empty are the same) are fine.
    let mut new = pod(Some(vec![a.clone(), b.clone()]));
    admit_update::<PodStrategy>(&mut new, &old, &ctx).expect("no change");
    let mut new = pod(Some(vec![]));
    admit_update::<PodStrategy>(&mut new, &pod(None), &ctx).expect("nil equals empty");
}

#[test]
fn pod_strategy_create_and_status() {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let mut p = pod(Some(vec![er("foo.example.com/bar", 10000)]));
    p.status = Some(PodStatus {
        phase: Some("Running".into()),
        ..PodStatus::default()
    });
    admit_create::<PodStrategy>(&mut p, &ctx).expect("valid pod");
    assert_eq!(
        p.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );
    assert_eq!(p.metadata.generation, Some(1));

    let mut bad = pod(Some(vec![er("k8s.io/key", 10000)]));
    let err = admit_create::<PodStrategy>(&mut bad, &ctx).expect_err("reserved name");
    assert_errors(
        &err.errors,
        &[(Invalid, "spec.evictionResponders[0].name", None)],
    );

    // A /status write cannot change the spec.
    let old = p.clone();
    let mut new = p.clone();
    new.metadata.resource_version = Some("2".into());
    if let Some(spec) = new.spec.as_mut() {
        spec.eviction_responders = None;
    }
    // The QoS class set on create is immutable: a status write keeps it.
    new.status = Some(PodStatus {
        phase: Some("Running".into()),
        ..old.status.clone().unwrap_or_default()
    });
    // Labels may change through /status (upstream's podStatusStrategy);
    // owner references and the deletion timestamp may not.
    new.metadata.labels = Some([("phase".to_owned(), "running".to_owned())].into());
    new.metadata.owner_references = Some(vec![Default::default()]);
    new.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now()));
    admit_status_update::<PodStrategy>(&mut new, &old, &ctx).expect("status write");
    assert_eq!(new.spec, old.spec);
    assert_eq!(
        new.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running")
    );
    assert_eq!(
        new.metadata.labels,
        Some([("phase".to_owned(), "running".to_owned())].into())
    );
    assert_eq!(new.metadata.owner_references, old.metadata.owner_references);
    assert_eq!(new.metadata.deletion_timestamp, None);
}
