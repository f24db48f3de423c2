//! `TestComputePodQOS` (upstream's `pkg/apis/core/v1/helper/qos`): the QoS
//! class of a pod spec as submitted (no defaults), with pod-level resources
//! (`PodLevelResources`, on by default) where the case sets them.

use exitplan_api::core::validation::qos::compute_pod_qos;
use k8s_openapi::api::core::v1::PodSpec;
use serde_json::{Value, json};

/// `getResourceList(cpu, memory)`.
fn list(cpu: &str, memory: &str) -> Value {
    let mut m = serde_json::Map::new();
    if !cpu.is_empty() {
        m.insert("cpu".into(), cpu.into());
    }
    if !memory.is_empty() {
        m.insert("memory".into(), memory.into());
    }
    Value::Object(m)
}

/// `newContainer(name, requests, limits)`.
fn ctr(requests: Value, limits: Value) -> Value {
    json!({"name": "c", "resources": {"requests": requests, "limits": limits}})
}

fn qos(spec: Value) -> &'static str {
    let spec: PodSpec = serde_json::from_value(spec).expect("spec");
    compute_pod_qos(&spec)
}

#[test]
fn compute_pod_qos_table() {
    let g = || ctr(list("100m", "100Mi"), list("100m", "100Mi"));
    let be = || ctr(list("", ""), list("", ""));
    let mut hugepages = list("0", "0");
    hugepages["hugepages-2Mi"] = json!("1Gi");
    let cases: Vec<(&str, Value, &str)> = vec![
        ("guaranteed", json!({"containers": [g()]}), "Guaranteed"),
        (
            "guaranteed-guaranteed",
            json!({"containers": [g(), g()]}),
            "Guaranteed",
        ),
        (
            "best-effort-best-effort",
            json!({"containers": [be(), be()]}),
            "BestEffort",
        ),
        ("best-effort", json!({"containers": [be()]}), "BestEffort"),
        (
            "best-effort-burstable",
            json!({"containers": [be(), ctr(list("1", ""), list("2", ""))]}),
            "Burstable",
        ),
        (
            "best-effort-guaranteed",
            json!({"containers": [be(), ctr(list("10m", "100Mi"), list("10m", "100Mi"))]}),
            "Burstable",
        ),
        (
            "burstable-cpu-guaranteed-memory",
            json!({"containers": [ctr(list("", "100Mi"), list("", "100Mi"))]}),
            "Burstable",
        ),
        (
            "burstable-no-limits",
            json!({"containers": [ctr(list("100m", "100Mi"), list("", ""))]}),
            "Burstable",
        ),
        (
            "burstable-guaranteed",
            json!({"containers": [ctr(list("1", "100Mi"), list("2", "100Mi")), g()]}),
            "Burstable",
        ),
        (
            "burstable-unbounded-but-requests-match-limits",
            json!({"containers": [ctr(list("100m", "100Mi"), list("200m", "200Mi")), ctr(list("100m", "100Mi"), list("", ""))]}),
            "Burstable",
        ),
        (
            "burstable-1",
            json!({"containers": [ctr(list("10m", "100Mi"), list("100m", "200Mi"))]}),
            "Burstable",
        ),
        (
            "burstable-2 (zero requests count as none)",
            json!({"containers": [ctr(list("0", "0"), list("100m", "200Mi"))]}),
            "Burstable",
        ),
        (
            "best-effort-hugepages",
            json!({"containers": [ctr(hugepages.clone(), hugepages)]}),
            "BestEffort",
        ),
        (
            "init-container",
            json!({"containers": [be()], "initContainers": [ctr(list("10m", "100Mi"), list("100m", "200Mi"))]}),
            "Burstable",
        ),
        (
            "guaranteed-with-pod-level-resources",
            json!({"containers": [be()], "resources": {"requests": list("10m", "100Mi"), "limits": list("10m", "100Mi")}}),
            "Guaranteed",
        ),
        (
            "guaranteed-with-pod-and-container-level-resources",
            json!({"containers": [ctr(list("3m", "10Mi"), list("5m", "20Mi"))], "resources": {"requests": list("10m", "100Mi"), "limits": list("10m", "100Mi")}}),
            "Guaranteed",
        ),
        (
            "burstable-with-pod-level-resources",
            json!({"containers": [be()], "resources": {"requests": list("10m", "10Mi"), "limits": list("20m", "50Mi")}}),
            "Burstable",
        ),
        (
            "burstable-with-pod-and-container-level-resources",
            json!({"containers": [ctr(list("5m", "10Mi"), list("5m", "10Mi"))], "resources": {"requests": list("10m", "10Mi"), "limits": list("20m", "50Mi")}}),
            "Burstable",
        ),
        (
            "burstable-with-pod-and-container-level-requests",
            json!({"containers": [ctr(list("5m", "10Mi"), list("", ""))], "resources": {"requests": list("10m", "10Mi"), "limits": list("", "")}}),
            "Burstable",
        ),
        (
            "burstable-with-pod-and-container-level-resources-2",
            json!({"containers": [ctr(list("5m", "10Mi"), list("", "")), g()], "resources": {"requests": list("10m", "10Mi"), "limits": list("5m", "")}}),
            "Burstable",
        ),
        (
            "equal quantities in different units are equal",
            json!({"containers": [ctr(list("1", "1Gi"), list("1000m", "1073741824"))]}),
            "Guaranteed",
        ),
    ];
    for (name, spec, want) in cases {
        assert_eq!(qos(spec), want, "{name}");
    }
}
