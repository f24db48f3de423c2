//! `status.disruptedPods` bookkeeping and the healthy count (job-failure spec
//! §13 steps 3–4): evictions recorded by the eviction subresource keep a pod
//! out of `currentHealthy` until it is deleting or two minutes have passed.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use exitplan_api::core::podutil::is_ready;
use exitplan_api::time::add;

/// How long an eviction may take to show up as a deleting pod (`DeletionTimeout`).
pub const DELETION_TIMEOUT: SignedDuration = SignedDuration::from_secs(120);

/// The pruned `disruptedPods` map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisruptedPods {
    /// Entries still waiting for their pod's deletion.
    pub kept: BTreeMap<String, Time>,
    /// Pods whose entry expired without the pod being deleted, in pod order
    /// (each gets a `NotDeleted` warning).
    pub expired: Vec<String>,
    /// The earliest expiry among the kept entries: when to look again.
    pub recheck_at: Option<Timestamp>,
}

/// `buildDisruptedPodMap`: keeps an entry only for an existing, non-deleting
/// pod whose entry has not expired (`entry + 2 min` not before `now`).
pub fn build_disrupted_pod_map(
    pdb: &PodDisruptionBudget,
    pods: &[&Pod],
    now: Timestamp,
) -> DisruptedPods {
    let mut out = DisruptedPods::default();
    let Some(recorded) = pdb.status.as_ref().and_then(|s| s.disrupted_pods.as_ref()) else {
        return out;
    };
    for pod in pods {
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = pod.metadata.name.clone().unwrap_or_default();
        let Some(at) = recorded.get(&name) else {
            continue;
        };
        let expected_deletion = add(at.0, DELETION_TIMEOUT);
        if expected_deletion < now {
            out.expired.push(name);
        } else {
            if out.recheck_at.is_none_or(|r| expected_deletion < r) {
                out.recheck_at = Some(expected_deletion);
            }
            out.kept.insert(name, at.clone());
        }
    }
    out
}

/// `countHealthyPods`: Ready pods that are not deleting and not waiting in
/// `disrupted` (an entry counts until strictly after `entry + 2 min`).
pub fn count_healthy(pods: &[&Pod], disrupted: &BTreeMap<String, Time>, now: Timestamp) -> i32 {
    let healthy = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            let name = p.metadata.name.as_deref().unwrap_or_default();
            disrupted
                .get(name)
                .is_none_or(|at| add(at.0, DELETION_TIMEOUT) <= now)
        })
        .filter(|p| is_ready(p))
        .count();
    i32::try_from(healthy).unwrap_or(i32::MAX)
}
