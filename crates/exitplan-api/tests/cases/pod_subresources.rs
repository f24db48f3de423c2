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

/// `getResources(cpu, memory, ephemeral-storage)` of upstream's tables.
fn res(cpu: &str, memory: &str, storage: &str) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in [
        ("cpu", cpu),
        ("memory", memory),
        ("ephemeral-storage", storage),
    ] {
        if !v.is_empty() {
            m.insert(k.into(), v.into());
        }
    }
    Value::Object(m)
}

/// `TestValidatePodResize`, through the resize strategy (so the pod
/// defaults — requests copied from limits — apply to both pods, as they do
/// in kube-apiserver). `mkPod(requests, limits, resizePolicy)`.
#[test]
fn validate_pod_resize_table() {
    let mk = |req: Value, lim: Value, memory_policy: Option<&str>| {
        let mut c = json!({"name": "container", "image": "image", "resources": {"requests": req, "limits": lim}});
        if let Some(p) = memory_policy {
            c["resizePolicy"] = json!([{"resourceName": "memory", "restartPolicy": p}]);
        }
        json!({"containers": [c]})
    };
    let none = || json!({});
    let qos = |class: &'static str| -> Want {
        (
            Invalid,
            "spec",
            match class {
                "Guaranteed" => {
                    "Invalid value: \"Guaranteed\": Pod QOS Class may not change as a result of resizing"
                }
                "Burstable" => {
                    "Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing"
                }
                _ => {
                    "Invalid value: \"BestEffort\": Pod QOS Class may not change as a result of resizing"
                }
            },
        )
    };
    let only_cpu_memory: Want = (
        Forbidden,
        "spec",
        "Forbidden: only cpu and memory resources are mutable",
    );
    let memory_down: Want = (
        Forbidden,
        "spec.containers[0].resources.limits[memory]",
        "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer",
    );
    let memory_added: Want = (
        Forbidden,
        "spec.containers[0].resources.limits[memory]",
        "Forbidden: memory limits cannot be added unless resizePolicy is RestartContainer",
    );
    let requests_removed: Want = (
        Forbidden,
        "spec.containers[0].resources.requests",
        "Forbidden: resource requests cannot be removed",
    );
    let limits_removed: Want = (
        Forbidden,
        "spec.containers[0].resources.limits",
        "Forbidden: resource limits cannot be removed",
    );
    let pod_level = json!({"resources": {"limits": {"cpu": "100m", "memory": "200Mi"}}});
    let with_pod_level = |mut spec: Value| {
        spec["resources"] = pod_level["resources"].clone();
        spec
    };
    let rows: Vec<(&str, Value, Value, Vec<Want>)> = vec![
        (
            "pod-level resources with container cpu limit change",
            with_pod_level(mk(none(), res("200m", "100Mi", ""), None)),
            with_pod_level(mk(none(), res("100m", "100Mi", ""), None)),
            vec![(
                Forbidden,
                "",
                "Forbidden: pods with pod-level resources cannot be resized",
            )],
        ),
        (
            "cpu limit change",
            mk(none(), res("100m", "0", "1Gi"), None),
            mk(none(), res("200m", "0", "1Gi"), None),
            vec![],
        ),
        (
            "memory limit increase",
            mk(none(), res("100m", "100Mi", ""), None),
            mk(none(), res("100m", "200Mi", ""), None),
            vec![],
        ),
        (
            "no restart policy: memory limit decrease",
            mk(none(), res("100m", "200Mi", ""), None),
            mk(res("100m", "100Mi", ""), res("100m", "100Mi", ""), None),
            vec![memory_down],
        ),
        (
            "restart NotRequired: memory limit decrease",
            mk(none(), res("100m", "200Mi", ""), Some("NotRequired")),
            mk(
                res("100m", "100Mi", ""),
                res("100m", "100Mi", ""),
                Some("NotRequired"),
            ),
            vec![memory_down],
        ),
        (
            "RestartContainer: memory limit decrease",
            mk(none(), res("100m", "200Mi", ""), Some("RestartContainer")),
            mk(
                res("100m", "100Mi", ""),
                res("100m", "100Mi", ""),
                Some("RestartContainer"),
            ),
            vec![],
        ),
        (
            "storage limit change",
            mk(none(), res("100m", "100Mi", "2Gi"), None),
            mk(
                res("100m", "100Mi", "1Gi"),
                res("100m", "100Mi", "1Gi"),
                None,
            ),
            vec![only_cpu_memory],
        ),
        (
            "cpu request change",
            mk(res("200m", "0", ""), none(), None),
            mk(res("100m", "0", ""), none(), None),
            vec![],
        ),
        (
            "memory request change",
            mk(res("0", "100Mi", ""), none(), None),
            mk(res("0", "200Mi", ""), none(), None),
            vec![],
        ),
        (
            "storage request change",
            mk(res("100m", "0", "1Gi"), none(), None),
            mk(res("100m", "0", "2Gi"), none(), None),
            vec![only_cpu_memory],
        ),
        (
            "Pod QoS unchanged, guaranteed -> guaranteed",
            mk(
                res("100m", "100Mi", "1Gi"),
                res("100m", "100Mi", "1Gi"),
                Some("RestartContainer"),
            ),
            mk(
                res("200m", "400Mi", "1Gi"),
                res("200m", "400Mi", "1Gi"),
                Some("RestartContainer"),
            ),
            vec![],
        ),
        (
            "Pod QoS unchanged, burstable -> burstable",
            mk(
                res("200m", "100Mi", "1Gi"),
                res("400m", "200Mi", "2Gi"),
                None,
            ),
            mk(
                res("100m", "200Mi", "1Gi"),
                res("200m", "400Mi", "2Gi"),
                None,
            ),
            vec![],
        ),
        (
            "Pod QoS unchanged, burstable -> burstable, add limits",
            mk(res("100m", "100Mi", ""), none(), None),
            mk(res("100m", "100Mi", ""), res("200m", "", ""), None),
            vec![],
        ),
        (
            // Upstream's table validates undefaulted pods, where this old pod
            // (limits only) is Burstable; stored, its requests were defaulted
            // from its limits, so it is Guaranteed and the resize changes that.
            "add requests to a pod created with limits only",
            mk(none(), res("200m", "500Mi", "1Gi"), None),
            mk(
                res("300m", "500Mi", "1Gi"),
                res("400m", "500Mi", "1Gi"),
                None,
            ),
            vec![qos("Guaranteed")],
        ),
        (
            "Pod QoS change, guaranteed -> burstable",
            mk(res("100m", "100Mi", ""), res("100m", "100Mi", ""), None),
            mk(res("100m", "100Mi", ""), res("200m", "200Mi", ""), None),
            vec![qos("Guaranteed")],
        ),
        (
            "Pod QoS change, burstable -> guaranteed",
            mk(res("100m", "100Mi", ""), none(), None),
            mk(res("100m", "100Mi", ""), res("100m", "100Mi", ""), None),
            vec![qos("Burstable"), memory_added],
        ),
        (
            "Pod QoS change, besteffort -> burstable",
            mk(none(), none(), None),
            mk(res("100m", "100Mi", ""), res("200m", "200Mi", ""), None),
            vec![qos("BestEffort"), memory_added],
        ),
        (
            "Pod QoS change, burstable -> besteffort",
            mk(res("100m", "100Mi", ""), res("200m", "200Mi", ""), None),
            mk(none(), none(), None),
            vec![qos("Burstable"), requests_removed, limits_removed],
        ),
        (
            "windows pod, no resource change",
            {
                let mut s = mk(none(), res("100m", "0", "1Gi"), None);
                s["os"] = json!({"name": "windows"});
                s
            },
            {
                let mut s = mk(none(), res("100m", "0", "1Gi"), None);
                s["os"] = json!({"name": "windows"});
                s
            },
            vec![(Forbidden, "", "Forbidden: windows pods cannot be resized")],
        ),
        (
            "Pod QoS unchanged, burstable -> burstable, remove cpu limit",
            mk(res("100m", "100Mi", ""), res("200m", "200Mi", ""), None),
            mk(res("100m", "100Mi", ""), res("", "200Mi", ""), None),
            vec![limits_removed],
        ),
        (
            "Pod QoS unchanged, burstable -> burstable, remove cpu request",
            mk(res("100m", "100Mi", ""), none(), None),
            mk(res("", "100Mi", ""), none(), None),
            vec![requests_removed],
        ),
    ];
    for (name, old_spec, new_spec, want) in rows {
        let old = resize_pod(json!({}), old_spec);
        let mut new = edited(&old, json!({}), new_spec);
        check(
            name,
            &update_errors::<PodResizeStrategy>(&mut new, &old),
            &want,
        );
    }
}
