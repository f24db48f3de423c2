//! The writable pod subresources: `TestValidatePodEphemeralContainersUpdate`
//! (upstream's `pkg/apis/core/validation`) through the
//! `pods/ephemeralcontainers` strategy, and `ValidatePodResize` through the
//! `pods/resize` strategy, each dropping what its subresource may not write.

use exitplan_api::core::pod_subresources::{PodEphemeralContainersStrategy, PodResizeStrategy};
use exitplan_api::field::ErrorType::{self, Forbidden, Invalid};
use serde_json::{Value, json};

use crate::pod_fixture::{Want, check, edited, stored, update_errors};

fn debugger(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image, "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"})
}

/// A row: old list, new list, expected errors (type, field, body).
type EphemeralRow = (
    &'static str,
    Value,
    Value,
    Vec<(ErrorType, &'static str, String)>,
);

/// `makePod(ephemeralContainers)`: restart policy OnFailure.
fn ephemeral_pod(list: Value) -> k8s_openapi::api::core::v1::Pod {
    stored(
        json!({"name": "pod", "labels": {}, "annotations": {}}),
        json!({"restartPolicy": "OnFailure", "ephemeralContainers": list}),
    )
}

#[test]
fn ephemeral_containers_update() {
    let d = debugger;
    let removed = |name: &str| -> String {
        format!("Forbidden: existing ephemeral containers \"{name}\" may not be removed\n")
    };
    let cases: Vec<EphemeralRow> = vec![
        ("no ephemeral containers", json!([]), json!([]), vec![]),
        (
            "no change",
            json!([d("debugger", "busybox"), d("debugger2", "busybox")]),
            json!([d("debugger", "busybox"), d("debugger2", "busybox")]),
            vec![],
        ),
        (
            "list order changes",
            json!([d("debugger", "busybox"), d("debugger2", "busybox")]),
            json!([d("debugger2", "busybox"), d("debugger", "busybox")]),
            vec![],
        ),
        (
            "add one",
            json!([]),
            json!([d("debugger", "busybox")]),
            vec![],
        ),
        (
            "add two",
            json!([]),
            json!([d("debugger1", "busybox"), d("debugger2", "busybox")]),
            vec![],
        ),
        (
            "add to existing, order changes",
            json!([d("debugger", "busybox"), d("debugger2", "busybox")]),
            json!([
                d("debugger3", "busybox"),
                d("debugger2", "busybox"),
                d("debugger", "busybox")
            ]),
            vec![],
        ),
        (
            "remove one",
            json!([d("debugger", "busybox")]),
            json!([]),
            vec![(Forbidden, "spec.ephemeralContainers", removed("debugger"))],
        ),
        (
            "replace one",
            json!([d("thentheother", "busybox")]),
            json!([d("firstone", "busybox")]),
            vec![(
                Forbidden,
                "spec.ephemeralContainers",
                removed("thentheother"),
            )],
        ),
    ];
    for (name, old_list, new_list, want) in cases {
        let old = ephemeral_pod(old_list);
        let mut new = edited(&old, json!({}), json!({"ephemeralContainers": new_list}));
        let errs = update_errors::<PodEphemeralContainersStrategy>(&mut new, &old);
        let got: Vec<(ErrorType, String, String)> = errs
            .iter()
            .map(|e| (e.error_type, e.field.clone(), e.body()))
            .collect();
        let want: Vec<(ErrorType, String, String)> = want
            .into_iter()
            .map(|(t, f, b)| (t, f.to_owned(), b))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    // A changed container is refused with its diff.
    let old = ephemeral_pod(json!([d("debugger1", "debian"), d("debugger2", "busybox")]));
    let mut new = edited(
        &old,
        json!({}),
        json!({"ephemeralContainers": [d("debugger1", "busybox"), d("debugger2", "busybox")]}),
    );
    check(
        "change",
        &update_errors::<PodEphemeralContainersStrategy>(&mut new, &old),
        &[(
            Forbidden,
            "spec.ephemeralContainers",
            "Forbidden: existing ephemeral containers \"debugger1\" may not be changed\n  core.EphemeralContainer{\n- \tImage: …",
        )],
    );
    // Static pods take none.
    let old = stored(
        json!({"name": "pod", "annotations": {"kubernetes.io/config.mirror": "foo"}}),
        json!({"nodeName": "some-name", "restartPolicy": "OnFailure"}),
    );
    let mut new = edited(
        &old,
        json!({}),
        json!({"ephemeralContainers": [d("debugger1", "debian")]}),
    );
    check(
        "static pod",
        &update_errors::<PodEphemeralContainersStrategy>(&mut new, &old),
        &[(
            Forbidden,
            "",
            "Forbidden: static pods do not support ephemeral containers",
        )],
    );
}

/// Only `spec.ephemeralContainers` is taken from the request: other spec,
/// status and label changes are dropped; the generation follows the spec.
#[test]
fn ephemeral_containers_strategy_drops_other_changes() {
    let old = ephemeral_pod(json!([]));
    let mut new = edited(
        &old,
        json!({"labels": {"a": "b"}}),
        json!({"nodeName": "elsewhere", "ephemeralContainers": [debugger("debugger", "busybox")]}),
    );
    new.status.as_mut().expect("status").phase = Some("Running".into());
    let errs = update_errors::<PodEphemeralContainersStrategy>(&mut new, &old);
    assert!(errs.is_empty(), "{errs}");
    let spec = new.spec.as_ref().expect("spec");
    assert_eq!(spec.node_name, None);
    assert_eq!(spec.ephemeral_containers.as_ref().map(Vec::len), Some(1));
    assert_eq!(new.status, old.status);
    assert_eq!(new.metadata.labels, old.metadata.labels);
    assert_eq!(new.metadata.generation, Some(2));
}

fn resources(requests: Value, limits: Value) -> Value {
    json!({"requests": requests, "limits": limits})
}

/// A running pod on a node that reports container resources.
fn resize_pod(meta: Value, spec: Value) -> k8s_openapi::api::core::v1::Pod {
    let mut p = stored(meta, spec);
    let mut v = serde_json::to_value(&p).expect("pod");
    v["status"]["containerStatuses"] = json!([{"name": "ctr", "image": "image", "imageID": "", "ready": true,
        "restartCount": 0, "state": {"running": {}}, "resources": {}}]);
    p = serde_json::from_value(v).expect("pod");
    p
}

#[test]
fn resize() {
    let burstable = || {
        json!({"containers": [{"name": "ctr", "image": "image",
            "resources": resources(json!({"cpu": "100m", "memory": "100Mi"}), json!({"cpu": "200m", "memory": "200Mi"}))}]})
    };
    let with =
        |r: Value| json!({"containers": [{"name": "ctr", "image": "image", "resources": r}]});
    let restart_memory = |limits: Value| {
        json!({"containers": [{"name": "ctr", "image": "image",
            "resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
            "resources": resources(json!({"cpu": "100m", "memory": "100Mi"}), limits)}]})
    };
    let cases: Vec<(&str, Value, Value, Vec<Want>)> = vec![
        (
            "cpu and memory up",
            burstable(),
            with(resources(
                json!({"cpu": "200m", "memory": "200Mi"}),
                json!({"cpu": "400m", "memory": "400Mi"}),
            )),
            vec![],
        ),
        (
            "memory limit down under NotRequired",
            burstable(),
            with(resources(
                json!({"cpu": "100m", "memory": "100Mi"}),
                json!({"cpu": "200m", "memory": "150Mi"}),
            )),
            vec![(
                Forbidden,
                "spec.containers[0].resources.limits[memory]",
                "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer",
            )],
        ),
        (
            "memory limit down with RestartContainer",
            restart_memory(json!({"cpu": "200m", "memory": "200Mi"})),
            restart_memory(json!({"cpu": "200m", "memory": "150Mi"})),
            vec![],
        ),
        (
            "resizePolicy itself is not resizable",
            burstable(),
            restart_memory(json!({"cpu": "200m", "memory": "200Mi"})),
            vec![(
                Forbidden,
                "spec",
                "Forbidden: only cpu and memory resources are mutable",
            )],
        ),
        (
            "requests removed",
            with(resources(
                json!({"cpu": "100m", "memory": "100Mi"}),
                json!({"cpu": "200m"}),
            )),
            with(resources(json!({"cpu": "100m"}), json!({"cpu": "200m"}))),
            vec![(
                Forbidden,
                "spec.containers[0].resources.requests",
                "Forbidden: resource requests cannot be removed",
            )],
        ),
        (
            "QoS class changes",
            burstable(),
            with(resources(
                json!({"cpu": "200m", "memory": "200Mi"}),
                json!({"cpu": "200m", "memory": "200Mi"}),
            )),
            vec![(
                Invalid,
                "spec",
                "Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing",
            )],
        ),
        (
            "ephemeral-storage is not resizable",
            burstable(),
            with(resources(
                json!({"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"}),
                json!({"cpu": "200m", "memory": "200Mi", "ephemeral-storage": "1Gi"}),
            )),
            vec![(
                Forbidden,
                "spec",
                "Forbidden: only cpu and memory resources are mutable",
            )],
        ),
    ];
    for (name, old_spec, new_spec, want) in cases {
        let old = resize_pod(json!({}), old_spec);
        let mut new = edited(&old, json!({}), new_spec);
        check(
            name,
            &update_errors::<PodResizeStrategy>(&mut new, &old),
            &want,
        );
    }
    // A plain init container keeps its resources.
    let init = json!({"initContainers": [{"name": "init", "image": "image",
        "resources": resources(json!({"cpu": "100m"}), json!({"cpu": "100m"}))}],
        "containers": [{"name": "ctr", "image": "image", "resources": resources(json!({"cpu": "100m"}), json!({"cpu": "200m"}))}]});
    let old = resize_pod(json!({}), init.clone());
    let mut new = edited(
        &old,
        json!({}),
        json!({"initContainers": [{"name": "init", "image": "image",
            "resources": resources(json!({"cpu": "50m"}), json!({"cpu": "100m"}))}],
            "containers": init["containers"].clone()}),
    );
    check(
        "non-sidecar init container",
        &update_errors::<PodResizeStrategy>(&mut new, &old),
        &[(
            Forbidden,
            "spec",
            "Forbidden: resources for non-sidecar init containers are immutable",
        )],
    );
    // Not resizable at all.
    let old = resize_pod(
        json!({"annotations": {"kubernetes.io/config.mirror": "x"}}),
        json!({"nodeName": "n", "containers": burstable()["containers"].clone()}),
    );
    let mut new = edited(
        &old,
        json!({}),
        with(resources(
            json!({"cpu": "150m", "memory": "100Mi"}),
            json!({"cpu": "200m", "memory": "200Mi"}),
        )),
    );
    new.spec.as_mut().expect("spec").node_name = Some("n".into());
    check(
        "static pod",
        &update_errors::<PodResizeStrategy>(&mut new, &old),
        &[(Forbidden, "", "Forbidden: static pods cannot be resized")],
    );
    let mut old = resize_pod(json!({}), burstable());
    if let Some(s) = old
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        s[0].resources = None;
    }
    let mut new = edited(
        &old,
        json!({}),
        with(resources(
            json!({"cpu": "150m", "memory": "100Mi"}),
            json!({"cpu": "200m", "memory": "200Mi"}),
        )),
    );
    check(
        "node does not report container resources",
        &update_errors::<PodResizeStrategy>(&mut new, &old),
        &[(
            Forbidden,
            "spec",
            "Forbidden: Pod running on node without support for resize",
        )],
    );
}

/// Only container `resources` and `resizePolicy` are taken from a resize:
/// an image change rides along unnoticed (dropped), the generation moves.
#[test]
fn resize_strategy_drops_other_changes() {
    let old = resize_pod(
        json!({}),
        json!({"containers": [{"name": "ctr", "image": "image",
            "resources": resources(json!({"cpu": "100m"}), json!({"cpu": "200m"}))}]}),
    );
    let mut new = edited(
        &old,
        json!({"labels": {"a": "b"}}),
        json!({"containers": [{"name": "ctr", "image": "other",
            "resources": resources(json!({"cpu": "150m"}), json!({"cpu": "200m"}))}]}),
    );
    let errs = update_errors::<PodResizeStrategy>(&mut new, &old);
    assert!(errs.is_empty(), "{errs}");
    let c = &new.spec.as_ref().expect("spec").containers[0];
    assert_eq!(c.image.as_deref(), Some("image"));
    assert_eq!(
        serde_json::to_value(&c.resources).expect("json")["requests"]["cpu"],
        json!("150m")
    );
    assert_eq!(new.metadata.labels, old.metadata.labels);
    assert_eq!(new.metadata.generation, Some(2));
}
