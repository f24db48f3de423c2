//! Every Job status the pure sync decides passes the API server's own
//! `/status` validation (`exitplan_api::batch::JobStrategy`, the rules of
//! job-failure spec §5 "Status validation interplay") given the Job as it was
//! stored before the write — the property DESIGN.md promises for every
//! controller. A regression test pins the case the live drain example hit
//! (`status.ready: Invalid value: 1: cannot set more ready pods than
//! active` while the recreation back-off held a replacement pod back), then
//! a property test drives random pod populations, failure and success
//! policies, kubelet transitions, clock steps and controller crashes.

use exitplan_api::absent::Absent;
use exitplan_api::batch::JobStrategy;
use exitplan_api::field::ErrorList;
use exitplan_api::strategy::{Context, Strategy as _};
use exitplan_control::job::backoff::BackoffRecord;
use exitplan_control::job::{Step, SyncPlan};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::Pod;

use super::job_sync::{P, cs, job, pod, run_full, secs, t0};
use super::pod_failure_policy::cond_rule;

/// What kube-apiserver's Job `/status` validation says about replacing the
/// status of `old` with `status` at `now` (the real strategy, not a model).
pub(super) fn status_errors(old: &Job, status: &JobStatus, now: Timestamp) -> ErrorList {
    let mut old = old.clone();
    old.metadata.resource_version = Some("1".to_owned());
    let mut new = old.clone();
    new.status = Some(status.clone());
    JobStrategy::prepare_for_status_update(&mut new, &old);
    let absent = Absent::default();
    JobStrategy::validate_status_update(
        &new,
        &old,
        &Context {
            now,
            absent: &absent,
        },
    )
}

/// The errors of the first status write of `plan` the server would refuse,
/// each write checked against the Job as stored after the previous one.
pub(super) fn first_refused_write(job: &Job, plan: &SyncPlan, now: Timestamp) -> Option<String> {
    let mut stored = job.clone();
    for step in &plan.steps {
        if let Step::UpdateStatus(status) = step {
            let errs = status_errors(&stored, status, now);
            if !errs.is_empty() {
                return Some(format!(
                    "{errs:?}\nold: {:?}\nnew: {status:?}",
                    stored.status
                ));
            }
            stored.status = Some((**status).clone());
        }
    }
    None
}

fn running_ready(p: P) -> P {
    p.phase("Running").node("n1").cond("Ready", "True")
}

/// The live drain example (`examples/job/drain-tolerant.yaml`): two pods,
/// `Ignore` on `DisruptionTarget`; one is evicted and fails, the other runs
/// and is ready. The replacement waits for the 10 s recreation back-off.
/// Upstream kubernetes#139428 (fixed by #139457): while the back-off holds
/// the creation back, `status.active` is the number of active pods, not 0 —
/// with 0 the server refuses `ready: 1` (`cannot set more ready pods than
/// active`) and nothing of the sync is written until the back-off is over.
#[test]
fn recreation_backoff_keeps_the_real_active_count() {
    let job = job(2, Some(2))
        .policy(vec![cond_rule("Ignore", "DisruptionTarget", "True")])
        .backoff_limit(0)
        .b();
    let evicted = pod(1)
        .phase("Failed")
        .node("n1")
        .dt()
        .status_list(
            "containerStatuses",
            cs(
                "main",
                serde_json::json!({"terminated": {"exitCode": 143, "finishedAt": t0().to_string()}}),
            ),
        )
        .b();
    let pods: Vec<Pod> = vec![running_ready(pod(0)).b(), evicted];
    let now = t0() + secs(2);
    let plan = run_full(&job, &pods, &BackoffRecord::default(), now);
    assert!(
        plan.created_pods().is_empty(),
        "the back-off holds the replacement"
    );
    assert_eq!(plan.requeue_after, Some(secs(8)));
    let status = plan
        .status_writes()
        .last()
        .map(|s| (*s).clone())
        .expect("a status write");
    assert_eq!((status.active, status.ready), (Some(1), Some(1)));
    assert_eq!(
        plan.removed_finalizers(),
        vec!["mypod-1"],
        "the ignored pod is released"
    );
    assert_eq!(first_refused_write(&job, &plan, now), None);
}

/// The same during the per-index back-off (`backoffLimitPerIndex`), the
/// second early return of upstream's `manageJob`.
#[test]
fn per_index_backoff_keeps_the_real_active_count() {
    let job = job(2, Some(2)).indexed().per_index(1).b();
    let failed = pod(1)
        .index(1)
        .fcount(0)
        .phase("Failed")
        .node("n1")
        .status_list(
            "containerStatuses",
            cs(
                "main",
                serde_json::json!({"terminated": {"exitCode": 1, "finishedAt": t0().to_string()}}),
            ),
        )
        .b();
    let pods: Vec<Pod> = vec![running_ready(pod(0).index(0).fcount(0)).b(), failed];
    let now = t0() + secs(2);
    let plan = run_full(&job, &pods, &BackoffRecord::default(), now);
    assert!(plan.created_pods().is_empty(), "index 1 waits");
    assert_eq!(plan.requeue_after, Some(secs(8)));
    let status = plan
        .status_writes()
        .last()
        .map(|s| (*s).clone())
        .expect("a status write");
    assert_eq!((status.active, status.ready), (Some(1), Some(1)));
    assert_eq!(first_refused_write(&job, &plan, now), None);
}
