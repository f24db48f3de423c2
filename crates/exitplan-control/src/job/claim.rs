//! Which pods a Job owns (upstream `getPodsForJob` with
//! `PodControllerRefManager.ClaimPods` / `claimObject`,
//! `pkg/controller/controller_ref_manager.go`).
//!
//! Data flow: the Job + every pod of its namespace → one [`Claim`] per pod:
//!
//! | pod's controller ref | selector matches | Job being deleted | claim |
//! |---|---|---|---|
//! | another owner (UID ≠ Job's) | – | – | ignored |
//! | this Job | yes | – | [`Claim::Owned`] |
//! | this Job | no | no | [`Claim::Release`] |
//! | this Job | no | yes | ignored (nothing changes while deleting) |
//! | none | yes | no, pod not being deleted | [`Claim::Adopt`] |
//! | none | otherwise | – | ignored |
//!
//! The runtime applies adoptions (after re-checking with a fresh read that
//! the Job is not being deleted, upstream `RecheckDeletionTimestamp`) and
//! releases as patches; an adopted pod then counts as the Job's, with the
//! tracking finalizer its adoption added.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use exitplan_api::selector::{SelectorError, as_selector};

/// `apiVersion` of the owner reference the Job controller sets.
pub const JOB_API_VERSION: &str = "batch/v1";
/// `kind` of the owner reference the Job controller sets.
pub const JOB_KIND: &str = "Job";

/// What the Job does with one pod of its namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Controlled by the Job and selected: the Job's pod.
    Owned,
    /// An orphan the selector matches: add the controller reference (and
    /// the tracking finalizer); the Job's pod once that succeeded.
    Adopt,
    /// Controlled by the Job but no longer selected: remove the reference
    /// (and the tracking finalizer); no longer the Job's pod.
    Release,
}

/// The pod's controller owner reference (`metav1.GetControllerOf`).
pub fn controller_of(pod: &Pod) -> Option<&OwnerReference> {
    pod.metadata
        .owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|r| r.controller == Some(true))
}

/// `claimObject` for one pod: `None` when the Job leaves the pod alone.
/// `selected` is whether the Job's selector matches the pod's labels.
pub fn claim(job: &Job, pod: &Pod, selected: bool) -> Option<Claim> {
    let job_uid = job.metadata.uid.as_deref().unwrap_or_default();
    let job_deleting = job.metadata.deletion_timestamp.is_some();
    if pod.metadata.namespace != job.metadata.namespace {
        return None;
    }
    match controller_of(pod) {
        Some(r) if r.uid != job_uid => None,
        Some(_) if selected => Some(Claim::Owned),
        // Still allowed to keep what it owns while deleted, but no release.
        Some(_) if job_deleting => None,
        Some(_) => Some(Claim::Release),
        None if job_deleting || !selected => None,
        None if pod.metadata.deletion_timestamp.is_some() => None,
        None => Some(Claim::Adopt),
    }
}

/// `ClaimPods` over `pods` (every cached pod of the Job's namespace; pods
/// of other namespaces are ignored): the claimed pods with their claim, in
/// input order. Fails when the Job's selector cannot be converted
/// (upstream: `couldn't convert Job selector`).
pub fn claim_pods<'a>(job: &Job, pods: &'a [Pod]) -> Result<Vec<(&'a Pod, Claim)>, SelectorError> {
    let selector = as_selector(job.spec.as_ref().and_then(|s| s.selector.as_ref()))?;
    Ok(pods
        .iter()
        .filter_map(|p| {
            let selected = selector.matches(p.metadata.labels.as_ref());
            claim(job, p, selected).map(|c| (p, c))
        })
        .collect())
}

/// The controller owner reference an adoption adds (upstream
/// `ownerRefControllerPatch`: controller and blockOwnerDeletion true).
pub fn controller_ref(job: &Job) -> OwnerReference {
    OwnerReference {
        api_version: JOB_API_VERSION.to_owned(),
        kind: JOB_KIND.to_owned(),
        name: job.metadata.name.clone().unwrap_or_default(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn job(deleting: bool) -> Job {
        let mut j = json!({
            "metadata": {"namespace": "default", "name": "j", "uid": "job-uid"},
            "spec": {"selector": {"matchLabels": {"app": "a"}},
                     "template": {"spec": {"containers": []}}}
        });
        if deleting {
            j["metadata"]["deletionTimestamp"] = json!("2026-03-01T12:00:00Z");
        }
        serde_json::from_value(j).expect("job")
    }

    fn pod(name: &str, app: &str, owner: Option<(&str, bool)>) -> Value {
        let mut p = json!({"metadata": {"namespace": "default", "name": name, "uid": name,
                                        "labels": {"app": app}}});
        if let Some((uid, controller)) = owner {
            p["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "Job",
                "name": "j", "uid": uid, "controller": controller}]);
        }
        p
    }

    fn pods(values: Vec<Value>) -> Vec<Pod> {
        values
            .into_iter()
            .map(|v| serde_json::from_value(v).expect("pod"))
            .collect()
    }

    fn claims(job: &Job, pods: &[Pod]) -> Vec<(String, Claim)> {
        claim_pods(job, pods)
            .expect("selector")
            .into_iter()
            .map(|(p, c)| (p.metadata.name.clone().unwrap_or_default(), c))
            .collect()
    }

    fn all() -> Vec<Pod> {
        let mut terminating = pod("orphan-deleting", "a", None);
        terminating["metadata"]["deletionTimestamp"] = json!("2026-03-01T12:00:00Z");
        let mut elsewhere = pod("orphan-elsewhere", "a", None);
        elsewhere["metadata"]["namespace"] = json!("other");
        pods(vec![
            pod("owned", "a", Some(("job-uid", true))),
            pod("orphan", "a", None),
            pod("orphan-unselected", "b", None),
            pod("non-controller-ref", "a", Some(("job-uid", false))),
            pod("foreign", "a", Some(("other-uid", true))),
            pod("relabelled", "b", Some(("job-uid", true))),
            terminating,
            elsewhere,
        ])
    }

    #[test]
    fn adopts_orphans_releases_unselected_ignores_foreign() {
        assert_eq!(
            claims(&job(false), &all()),
            vec![
                ("owned".to_owned(), Claim::Owned),
                ("orphan".to_owned(), Claim::Adopt),
                // A non-controller reference does not make it anyone's.
                ("non-controller-ref".to_owned(), Claim::Adopt),
                ("relabelled".to_owned(), Claim::Release),
            ]
        );
    }

    #[test]
    fn a_job_being_deleted_keeps_its_pods_and_changes_nothing() {
        assert_eq!(
            claims(&job(true), &all()),
            vec![("owned".to_owned(), Claim::Owned)]
        );
    }

    #[test]
    fn an_unconvertible_selector_is_an_error_and_a_nil_one_selects_nothing() {
        let mut j = job(false);
        if let Some(s) = j.spec.as_mut() {
            s.selector = serde_json::from_value(
                json!({"matchExpressions": [{"key": "app", "operator": "Near"}]}),
            )
            .expect("selector");
        }
        assert!(claim_pods(&j, &all()).is_err());
        if let Some(s) = j.spec.as_mut() {
            s.selector = None;
        }
        assert_eq!(
            claims(&j, &all()),
            vec![
                ("owned".to_owned(), Claim::Release),
                ("relabelled".to_owned(), Claim::Release),
            ]
        );
    }
}
