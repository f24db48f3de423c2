//! `exitplan bench jobs` at small scale, in virtual time (`--virtual-time`:
//! tokio's paused clock, so the Job controller's pod-failure back-off passes
//! at once): it converges and its counts add up. No timed assertions.

use std::collections::HashMap;

mod benchrun;

/// Runs `exitplan bench jobs --virtual-time` with `args`: its stdout and
/// the `result:` line's fields.
fn bench(args: &[&str]) -> (String, HashMap<String, i64>) {
    let all: Vec<&str> = ["--virtual-time"].iter().chain(args).copied().collect();
    benchrun::run("jobs", &all)
}

fn assert_adds_up(out: &str, r: &HashMap<String, i64>, jobs: i64, pods_per_job: i64) {
    let f = |k: &str| *r.get(k).unwrap_or_else(|| panic!("{k} in:\n{out}"));
    // Converged: every Job terminal, Complete or Failed.
    assert_eq!(f("jobs"), jobs, "{out}");
    assert_eq!(f("complete") + f("failed_jobs"), jobs, "{out}");
    // Counted failures are exactly the pods that failed without
    // DisruptionTarget; the ignored ones exactly the disrupted pods (not
    // counted); successes add up; no pod left running.
    assert_eq!(f("counted"), f("pods_failed"), "{out}");
    assert_eq!(f("ignored"), f("pods_disrupted"), "{out}");
    assert_eq!(f("succeeded"), f("pods_succeeded"), "{out}");
    assert_eq!(f("pods_active"), 0, "{out}");
    assert_eq!(
        f("pods"),
        f("pods_succeeded") + f("pods_failed") + f("pods_disrupted") + f("pods_removed"),
        "{out}"
    );
    // A Complete Job has all its completions.
    assert!(f("succeeded") >= f("complete") * pods_per_job, "{out}");
    // The chaos did something, and the Job controller synced.
    assert!(f("drawn_fail") > 0 && f("drawn_disrupt") > 0, "{out}");
    assert!(f("pods_failed") > 0 && f("pods_disrupted") > 0, "{out}");
    assert!(f("syncs") >= jobs, "{out}");
    assert!(out.contains("counts add up: yes"), "{out}");
}

#[test]
fn twenty_jobs_converge_and_the_failure_counts_add_up() {
    let (out, r) = bench(&["--jobs", "20", "--pods-per-job", "4", "--nodes", "3"]);
    assert_adds_up(&out, &r, 20, 4);
    // Ignored disruptions never exhaust backoffLimit 6 here: most complete.
    assert!(r["complete"] > 0, "{out}");
}

#[test]
fn by_default_only_the_first_attempts_fail_and_every_replacement_succeeds() {
    // Every one of the 5 x 2 first attempts fails or is disrupted; their
    // replacements get no fate and succeed: 10 draws, 20 pods, every Job
    // Complete (at most 2 counted failures, backoffLimit 6). Were
    // replacements drawn too, no pod would ever succeed.
    let args = [
        "--jobs",
        "5",
        "--pods-per-job",
        "2",
        "--nodes",
        "2",
        "--fail-percent",
        "50",
        "--disrupt-percent",
        "50",
    ];
    let (out, r) = bench(&args);
    assert_adds_up(&out, &r, 5, 2);
    assert_eq!(r["drawn_fail"] + r["drawn_disrupt"], 10, "{out}");
    assert_eq!(r["pods"], 20, "{out}");
    assert_eq!(r["counted"] + r["ignored"], 10, "{out}");
    assert_eq!(r["complete"], 5, "{out}");
}

#[test]
fn jobs_out_of_retries_fail_and_their_failures_still_add_up() {
    // Half the pods fail, replacements too, one retry allowed: some Jobs
    // fail (their remaining pods deleted and counted as failed), some
    // complete.
    let (out, r) = bench(&[
        "--chaos-replacements",
        "--jobs",
        "12",
        "--pods-per-job",
        "3",
        "--nodes",
        "2",
        "--fail-percent",
        "50",
        "--backoff-limit",
        "1",
        "--seed",
        "3",
    ]);
    assert_adds_up(&out, &r, 12, 3);
    assert!(r["failed_jobs"] > 0, "{out}");
}
