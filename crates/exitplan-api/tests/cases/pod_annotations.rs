//! The pod-specific annotations on create (`TestValidatePodCreate`'s
//! annotation cases and `TestValidatePodSpecificAnnotations` of upstream's
//! `pkg/apis/core/validation`), and AppArmor's version skew in
//! `PrepareForCreate` (`TestApplyAppArmorVersionSkew` of the pod strategy).

use exitplan_api::absent::Absent;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::field::ErrorList;
use exitplan_api::field::ErrorType::{Forbidden, Invalid};
use exitplan_api::strategy::{Context, admit_create};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::pod_fixture::{Want, check, submitted};
use crate::support::now;

fn create(p: &mut Pod) -> ErrorList {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    match admit_create::<PodStrategy>(p, &ctx) {
        Ok(()) => ErrorList::new(),
        Err(e) => e.errors,
    }
}

fn ctr_with(sc: Value) -> Value {
    json!({"containers": [{"name": "ctr", "image": "image", "securityContext": sc}]})
}

#[test]
fn annotation_cases() {
    let apparmor = "container.apparmor.security.beta.kubernetes.io/ctr";
    let cases: Vec<(&str, Value, Value, Vec<Want>)> = vec![
        (
            "mismatched AppArmor field and annotation types",
            json!({ apparmor: "runtime/default" }),
            ctr_with(json!({"appArmorProfile": {"type": "Unconfined"}})),
            vec![(
                Forbidden,
                "spec.containers[0].securityContext.appArmorProfile.type",
                "Forbidden: apparmor type in annotation and field must match",
            )],
        ),
        (
            // Upstream's validation alone refuses this; through the strategy
            // (as through kube-apiserver) the version skew first gives the
            // container the annotation's profile, which then matches.
            "AppArmor pod field and annotation types differ",
            json!({ apparmor: "runtime/default" }),
            json!({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}),
            vec![],
        ),
        (
            "mismatched AppArmor localhost profiles",
            json!({ apparmor: "localhost/foo" }),
            ctr_with(json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": "bar"}})),
            vec![(
                Forbidden,
                "spec.containers[0].securityContext.appArmorProfile.localhostProfile",
                "Forbidden: apparmor profile in annotation and field must match",
            )],
        ),
        (
            "matching AppArmor annotation and field",
            json!({ apparmor: "localhost/foo" }),
            ctr_with(json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": "foo"}})),
            vec![],
        ),
        (
            "mismatched seccomp field and annotation",
            json!({"container.seccomp.security.alpha.kubernetes.io/ctr": "unconfined"}),
            ctr_with(json!({"seccompProfile": {"type": "RuntimeDefault"}})),
            vec![(
                Forbidden,
                "spec.containers[0].securityContext.seccompProfile.type",
                "Forbidden: seccomp type in annotation and field must match",
            )],
        ),
        (
            "mismatched pod seccomp localhost profile",
            json!({"seccomp.security.alpha.kubernetes.io/pod": "localhost/a"}),
            json!({"securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "b"}}}),
            vec![(
                Forbidden,
                "spec.securityContext.seccompProfile.localhostProfile",
                "Forbidden: seccomp profile in annotation and field must match",
            )],
        ),
        (
            "docker/default matches RuntimeDefault",
            json!({"seccomp.security.alpha.kubernetes.io/pod": "docker/default"}),
            json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}),
            vec![],
        ),
        (
            "invalid seccomp annotation",
            json!({"seccomp.security.alpha.kubernetes.io/pod": "foo"}),
            json!({}),
            vec![(
                Invalid,
                "metadata.annotations.seccomp.security.alpha.kubernetes.io/pod",
                "Invalid value: \"foo\": must be a valid seccomp profile",
            )],
        ),
        (
            "seccomp localhost profile with backsteps",
            json!({"container.seccomp.security.alpha.kubernetes.io/ctr": "localhost/../etc"}),
            json!({}),
            vec![(
                Invalid,
                "metadata.annotations.container.seccomp.security.alpha.kubernetes.io/ctr",
                "Invalid value: \"../etc\": must not contain '..'",
            )],
        ),
        (
            "invalid toleration in the tolerations annotation",
            json!({"scheduler.alpha.kubernetes.io/tolerations": "[{\"key\": \"a\", \"operator\": \"Exists\", \"value\": \"b\"}]"}),
            json!({}),
            vec![(
                Invalid,
                "metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator",
                "Invalid value: \"b\": value must be empty when `operator` is 'Exists'",
            )],
        ),
        (
            "valid tolerations annotation",
            json!({"scheduler.alpha.kubernetes.io/tolerations": "[{\"key\": \"a\", \"operator\": \"Exists\"}]"}),
            json!({}),
            vec![],
        ),
    ];
    for (name, annotations, spec, want) in cases {
        let mut p = submitted(json!({ "annotations": annotations }), spec);
        check(name, &create(&mut p), &want);
    }
}

#[test]
fn apparmor_annotations_fill_missing_fields() {
    let apparmor = |c: &str| format!("container.apparmor.security.beta.kubernetes.io/{c}");
    let mut p = submitted(
        json!({"annotations": {
            apparmor("a"): "runtime/default",
            apparmor("b"): "localhost/prof",
            apparmor("c"): "unconfined",
            apparmor("d"): "localhost/ padded"
        }}),
        json!({
            "securityContext": {"appArmorProfile": {"type": "Unconfined"}},
            "containers": [
                {"name": "a", "image": "image"},
                {"name": "b", "image": "image"},
                {"name": "c", "image": "image"},
                {"name": "d", "image": "image"}
            ]
        }),
    );
    let errs = create(&mut p);
    let profiles: Vec<Value> = p
        .spec
        .expect("spec")
        .containers
        .iter()
        .map(|c| {
            serde_json::to_value(
                c.security_context
                    .as_ref()
                    .and_then(|s| s.app_armor_profile.as_ref()),
            )
            .expect("json")
        })
        .collect();
    assert_eq!(
        profiles,
        [
            json!({"type": "RuntimeDefault"}),
            json!({"type": "Localhost", "localhostProfile": "prof"}),
            // Same as the pod's profile: not copied.
            Value::Null,
            // Not a valid profile: not copied (and the pod-level Unconfined
            // profile then disagrees with the annotation).
            Value::Null,
        ]
    );
    check(
        "padded localhost annotation",
        &errs,
        &[(
            Forbidden,
            "spec.containers[3].securityContext.appArmorProfile.type",
            "Forbidden: apparmor type in annotation and field must match",
        )],
    );
}
