//! The Jobs demo (`exitplan demo jobs`, examples/scenarios/jobs.yaml) end to
//! end with the real Job controller, evictor, scheduler and simulated nodes,
//! in virtual time: a rolling drain (node-1 at 2m, node-2 at 4m) hits a Job
//! whose pod failure policy ignores DisruptionTarget and one without. Every
//! Job line at its exact instant, the pods' failures as counted or ignored,
//! and the per-Job summary to the figure.

use std::sync::Arc;

use exitplan_sim::responder::BuiltinResponders;
use exitplan_sim::timeline::JobSummary;
use exitplan_sim::{Report, Scenario, engine};

fn jobs_demo(seed: Option<u64>) -> Report {
    let mut s = Scenario::parse("jobs.yaml", exitplan_sim::JOBS_DEMO).expect("valid jobs demo");
    if let Some(seed) = seed {
        s.seed = seed;
    }
    engine::run_blocking(&s, Arc::new(BuiltinResponders)).expect("ran")
}

fn lines(r: &Report, kind: &str, object_prefix: &str) -> Vec<String> {
    r.timeline
        .iter()
        .filter(|e| e.kind == kind && e.object.starts_with(object_prefix))
        .map(|e| format!("{} {} {}", e.at, e.subject(), e.message))
        .collect()
}

/// Pod lines of `job`'s pods whose message contains `what`, as (instant, message).
fn pod_lines(r: &Report, job: &str, what: &str) -> Vec<(String, String)> {
    r.timeline
        .iter()
        .filter(|e| e.kind == "Pod" && e.object.starts_with(&format!("default/{job}-")))
        .filter(|e| e.message.contains(what))
        .map(|e| (e.at.clone(), e.message.clone()))
        .collect()
}

#[test]
fn the_drain_costs_the_plain_job_its_backoff_limit_and_the_tolerant_one_nothing() {
    let r = jobs_demo(None);
    assert!(r.errors.is_empty(), "{:?}\n{}", r.errors, r.to_text());
    assert_eq!(
        lines(&r, "Job", "default/plain"),
        [
            "t+0s Job default/plain created (parallelism 3, completions 6, backoffLimit 3, podFailurePolicy none), active 3, succeeded 0, failed 0",
            "t+2m1s Job default/plain active 0, succeeded 0, failed 3",
            "t+2m40s Job default/plain active 3, succeeded 0, failed 3",
            "t+4m1s Job default/plain active 0, succeeded 0, failed 6, FailureTarget (BackoffLimitExceeded), Failed (BackoffLimitExceeded)",
        ],
        "{}",
        r.to_text()
    );
    // Ignored failures are not counted but still delay the replacements:
    // 40 s after the first three (10 s · 2²), 5m20s after the sixth (10 s · 2⁵).
    assert_eq!(
        lines(&r, "Job", "default/tolerant"),
        [
            "t+0s Job default/tolerant created (parallelism 3, completions 6, backoffLimit 3, podFailurePolicy Ignore on DisruptionTarget), active 3, succeeded 0, failed 0",
            "t+2m1s Job default/tolerant active 0, succeeded 0, failed 0",
            "t+2m40s Job default/tolerant active 3, succeeded 0, failed 0",
            "t+4m1s Job default/tolerant active 0, succeeded 0, failed 0",
            "t+9m20s Job default/tolerant active 3, succeeded 0, failed 0",
            "t+13m21s Job default/tolerant active 3, succeeded 3, failed 0",
            "t+17m22s Job default/tolerant active 0, succeeded 6, failed 0, SuccessCriteriaMet (CompletionsReached), Complete (CompletionsReached)",
        ],
        "{}",
        r.to_text()
    );
    // Every evicted pod: DisruptionTarget, then Failed with 143 — counted
    // for plain, ignored by tolerant's rule.
    for (job, verdict) in [
        ("plain", "failure counted"),
        (
            "tolerant",
            "failure ignored (podFailurePolicy rules[0]: Ignore)",
        ),
    ] {
        let disrupted = pod_lines(&r, job, "DisruptionTarget (EvictionByEvictionAPI)");
        let failed = pod_lines(&r, job, "Failed, container main exited 143");
        let at: Vec<&str> = failed.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(
            at,
            ["t+2m", "t+2m", "t+2m", "t+4m", "t+4m", "t+4m"],
            "{job}"
        );
        assert_eq!(disrupted.len(), 6, "{job}");
        for (_, m) in &failed {
            assert_eq!(m, &format!("Failed, container main exited 143, {verdict}"));
        }
    }
    assert!(pod_lines(&r, "plain", "Succeeded").is_empty());
    assert_eq!(pod_lines(&r, "tolerant", "Succeeded").len(), 6);

    let job = |name: &str, policy: &str| JobSummary {
        job: format!("default/{name}"),
        pod_failure_policy: policy.to_owned(),
        backoff_limit: 3,
        ..JobSummary::default()
    };
    assert_eq!(
        r.jobs,
        [
            JobSummary {
                pods_created: 6,
                pods_failed: 6,
                failures_counted: 6,
                failures_ignored: 0,
                backoff_limit_spent: "6/3".into(),
                succeeded: 0,
                outcome: "Failed (BackoffLimitExceeded)".into(),
                finished_at: Some("t+4m1s".into()),
                took: Some("4m1s".into()),
                ..job("plain", "none")
            },
            JobSummary {
                pods_created: 12,
                pods_failed: 6,
                failures_counted: 0,
                failures_ignored: 6,
                backoff_limit_spent: "0/3".into(),
                succeeded: 6,
                outcome: "Complete".into(),
                finished_at: Some("t+17m22s".into()),
                took: Some("17m22s".into()),
                ..job("tolerant", "Ignore on DisruptionTarget")
            },
        ]
    );
    let text = r.to_text();
    let jobs = text
        .split_once("\nJobs\n")
        .map(|(_, j)| j)
        .expect("a Jobs section");
    assert_eq!(
        jobs,
        "  job               outcome                        at        took    pods  failed  counted  ignored  backoffLimit  succeeded
  default/plain     Failed (BackoffLimitExceeded)  t+4m1s    4m1s    6     6       6        0        6/3           0
  default/tolerant  Complete                       t+17m22s  17m22s  12    6       0        6        0/3           6
  default/plain: podFailurePolicy none
  default/tolerant: podFailurePolicy Ignore on DisruptionTarget
"
    );
    // Twelve evictions, each by the default evictor at once.
    assert_eq!(r.summary.len(), 12);
    assert!(
        r.summary
            .iter()
            .all(|s| s.outcome == "TargetEvicted (PodTerminal)")
    );
    assert_eq!(r.stopped, "quiet");
    assert_eq!(r.end, "t+47m22s");
}

#[test]
fn the_jobs_demo_is_the_same_every_run_and_the_seed_names_the_pods() {
    let a = jobs_demo(None);
    let b = jobs_demo(None);
    assert_eq!(a.to_text(), b.to_text());
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.to_yaml(), b.to_yaml());
    // Another seed: other generated pod names, the same story.
    let c = jobs_demo(Some(7));
    assert_eq!(c.seed, 7);
    let pods = |r: &Report| -> Vec<String> { r.summary.iter().map(|s| s.pod.clone()).collect() };
    assert_ne!(pods(&a), pods(&c));
    let figures = |r: &Report| -> Vec<(String, String, String, usize)> {
        r.jobs
            .iter()
            .map(|j| {
                (
                    j.job.clone(),
                    j.outcome.clone(),
                    j.backoff_limit_spent.clone(),
                    j.failures_ignored,
                )
            })
            .collect()
    };
    assert_eq!(figures(&a), figures(&c));
    assert_eq!(lines(&a, "Job", ""), lines(&c, "Job", ""));
}

#[test]
fn the_jobs_summary_is_data_too() {
    let r = jobs_demo(None);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).expect("json");
    assert_eq!(
        v["jobs"][1],
        serde_json::json!({
            "job": "default/tolerant",
            "podFailurePolicy": "Ignore on DisruptionTarget",
            "backoffLimit": 3,
            "podsCreated": 12,
            "podsFailed": 6,
            "failuresCounted": 0,
            "failuresIgnored": 6,
            "backoffLimitSpent": "0/3",
            "succeeded": 6,
            "outcome": "Complete",
            "finishedAt": "t+17m22s",
            "took": "17m22s",
        })
    );
    let y: serde_json::Value = serde_saphyr::from_str(&r.to_yaml()).expect("yaml");
    assert_eq!(y["jobs"], v["jobs"]);
}
