//! The pod QoS class (`pkg/apis/core/helper/qos`): `ComputePodQOS` and
//! `GetPodQOS`. The API server stores the class in `status.qosClass` when a
//! pod is created; afterwards it never changes.
//!
//! Only cpu and memory count, and only quantities above zero:
//!
//! * **pod-level resources** (`spec.resources` naming cpu, memory or a huge
//!   page size) decide alone: Guaranteed when the limits name both cpu and
//!   memory and every request equals its limit (and as many requests as
//!   limits), BestEffort when neither lists cpu or memory;
//! * otherwise every regular and init container counts (ephemeral containers
//!   have no resources): Guaranteed when each limits both cpu and memory and
//!   requests exactly its limits, BestEffort when none requests or limits
//!   cpu or memory, else Burstable.
//!
//! Upstream sums requests and limits over the containers before comparing;
//! with requests at most their limits (which validation requires of every
//! stored pod) that sum comparison and the per-container one above agree.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::quantity::Quantity;

/// `PodQOSGuaranteed`.
pub const GUARANTEED: &str = "Guaranteed";
/// `PodQOSBurstable`.
pub const BURSTABLE: &str = "Burstable";
/// `PodQOSBestEffort`.
pub const BEST_EFFORT: &str = "BestEffort";

/// The resources QoS looks at (`supportedQoSComputeResources`).
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

type List = BTreeMap<String, WireQuantity>;

/// The quantity of `name` in `list` when it parses and is above zero.
fn positive(list: Option<&List>, name: &str) -> Option<Quantity> {
    list.and_then(|l| l.get(name))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .filter(|q| !q.is_zero() && !q.is_negative())
}

/// `isPodLevelResourcesSet`: `spec.resources` names a resource that can be
/// set at pod level (cpu, memory, huge pages).
fn pod_level_set(r: &ResourceRequirements) -> bool {
    let supported =
        |name: &String| QOS_RESOURCES.contains(&name.as_str()) || name.starts_with("hugepages-");
    r.requests.iter().flatten().any(|(k, _)| supported(k))
        || r.limits.iter().flatten().any(|(k, _)| supported(k))
}

/// The class from one set of requests and limits (pod level).
fn from_pod_level(r: &ResourceRequirements) -> &'static str {
    let (req, lim) = (r.requests.as_ref(), r.limits.as_ref());
    let requests: Vec<(&str, Quantity)> = QOS_RESOURCES
        .iter()
        .filter_map(|n| positive(req, n).map(|q| (*n, q)))
        .collect();
    let limits: Vec<(&str, Quantity)> = QOS_RESOURCES
        .iter()
        .filter_map(|n| positive(lim, n).map(|q| (*n, q)))
        .collect();
    if requests.is_empty() && limits.is_empty() {
        return BEST_EFFORT;
    }
    // A pod-level limit list that misses cpu or memory rules Guaranteed
    // out; no limit list at all leaves it to the comparison below.
    let limits_listed = lim.is_some_and(|l| !l.is_empty());
    let mut guaranteed = !limits_listed || limits.len() == QOS_RESOURCES.len();
    if guaranteed {
        guaranteed = requests
            .iter()
            .all(|(n, q)| limits.iter().any(|(ln, lq)| ln == n && lq == q));
    }
    if guaranteed && requests.len() == limits.len() {
        GUARANTEED
    } else {
        BURSTABLE
    }
}

/// `ComputePodQOS`: the class the pod's resources give, ignoring any stored one.
pub fn compute_pod_qos(spec: &PodSpec) -> &'static str {
    if let Some(r) = spec.resources.as_ref().filter(|r| pod_level_set(r)) {
        return from_pod_level(r);
    }
    let containers: Vec<&Container> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in containers {
        let r = c.resources.as_ref();
        let (req, lim) = (
            r.and_then(|r| r.requests.as_ref()),
            r.and_then(|r| r.limits.as_ref()),
        );
        for name in QOS_RESOURCES {
            let (rq, lm) = (positive(req, name), positive(lim, name));
            any |= rq.is_some() || lm.is_some();
            match (rq, lm) {
                (Some(a), Some(b)) if a == b => {}
                _ => guaranteed = false,
            }
        }
    }
    if !any {
        BEST_EFFORT
    } else if guaranteed {
        GUARANTEED
    } else {
        BURSTABLE
    }
}

/// `GetPodQOS`: the stored `status.qosClass`, or the computed class when
/// none is stored.
pub fn get_pod_qos(pod: &Pod) -> String {
    match pod
        .status
        .as_ref()
        .and_then(|s| s.qos_class.as_deref())
        .filter(|q| !q.is_empty())
    {
        Some(stored) => stored.to_owned(),
        None => compute_pod_qos(&pod.spec.clone().unwrap_or_default()).to_owned(),
    }
}
