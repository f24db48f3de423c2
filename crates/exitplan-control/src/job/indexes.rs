//! Completion indexes of Indexed Jobs (job-failure spec §3, §6, §7).
//!
//! Data flow: `status.completedIndexes` / `status.failedIndexes` strings and
//! the Job's pods → [`Intervals`] (parse, merge, render the compact form) →
//! succeeded and failed index sets, the per-index failure annotations of
//! replacement pods, the pod retained per index for delayed finalizer
//! removal, and the first pending indexes to create.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use exitplan_api::batch::constants::{JOB_INDEX_FAILURE_COUNT, JOB_INDEX_IGNORED_FAILURE_COUNT};
use exitplan_api::core::constants::PHASE_SUCCEEDED;
use exitplan_api::core::podutil::phase;

use super::backoff::finished_time;
use super::classify::{completion_index, has_tracking_finalizer, is_pod_failed, valid_index};
use super::pod_failure_policy::{Action, match_pod_failure_policy};

/// An ordered list of disjoint, non-adjacent closed intervals of indexes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Intervals(Vec<(i64, i64)>);

impl Intervals {
    /// Parses the compact form (`"1-3,7"`), clipped to `completions` the way
    /// upstream does: corrupted pieces are skipped, parsing stops at the first
    /// interval starting at or beyond `completions`, ends are clamped.
    pub fn parse(s: &str, completions: i32) -> Self {
        let completions = i64::from(completions);
        let mut out: Vec<(i64, i64)> = Vec::new();
        if s.is_empty() {
            return Self(out);
        }
        for piece in s.split(',') {
            let mut limits = piece.split('-');
            let Some(Ok(first)) = limits.next().map(str::parse::<i64>) else {
                continue;
            };
            if first >= completions {
                break;
            }
            let last = match limits.next() {
                Some(l) => match l.parse::<i64>() {
                    Ok(l) => l.min(completions - 1),
                    Err(_) => continue,
                },
                None => first,
            };
            match out.last_mut() {
                Some(prev) if prev.1 == first - 1 => prev.1 = last,
                _ => out.push((first, last)),
            }
        }
        Self(out)
    }

    /// These intervals plus `indexes` (given in increasing order).
    pub fn with_indexes(&self, indexes: impl IntoIterator<Item = i64>) -> Self {
        let other = Self(indexes.into_iter().map(|i| (i, i)).collect());
        self.merge(&other)
    }

    /// The union of two interval lists (upstream `merge`).
    pub fn merge(&self, other: &Self) -> Self {
        let mut out: Vec<(i64, i64)> = Vec::new();
        let mut push = |iv: (i64, i64)| match out.last_mut() {
            Some(last) if iv.0 <= last.1 + 1 => {
                if last.1 < iv.1 {
                    last.1 = iv.1;
                }
            }
            _ => out.push(iv),
        };
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            if self.0[i].0 < other.0[j].0 {
                push(self.0[i]);
                i += 1;
            } else {
                push(other.0[j]);
                j += 1;
            }
        }
        self.0[i..]
            .iter()
            .chain(&other.0[j..])
            .for_each(|iv| push(*iv));
        Self(out)
    }

    /// The union of closed intervals `(first, last)` given in any order
    /// (empty intervals, `last < first`, are dropped).
    pub fn from_ranges(ranges: impl IntoIterator<Item = (i64, i64)>) -> Self {
        let mut sorted: Vec<(i64, i64)> = ranges.into_iter().filter(|(f, l)| f <= l).collect();
        sorted.sort_unstable();
        Self::default().merge(&Self(sorted))
    }

    /// Number of indexes covered.
    pub fn total(&self) -> i64 {
        self.0.iter().map(|(f, l)| l - f + 1).sum()
    }

    /// Number of indexes covered by both lists: one walk over the two
    /// ordered lists (upstream `matchSucceededIndexesRule`'s overlap count).
    pub fn intersection_total(&self, other: &Self) -> i64 {
        let (mut i, mut j, mut total) = (0, 0, 0);
        while let (Some(a), Some(b)) = (self.0.get(i), other.0.get(j)) {
            let overlap = a.1.min(b.1) - a.0.max(b.0) + 1;
            if overlap > 0 {
                total += overlap;
            }
            match b.1.cmp(&a.1) {
                std::cmp::Ordering::Less => j += 1,
                std::cmp::Ordering::Greater => i += 1,
                std::cmp::Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
            }
        }
        total
    }

    /// Whether `ix` is covered.
    pub fn has(&self, ix: i64) -> bool {
        let pos = self.0.partition_point(|(_, last)| *last < ix);
        self.0.get(pos).is_some_and(|(first, _)| *first <= ix)
    }

    /// Whether no index is covered.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The covered indexes, in order.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.0.iter().flat_map(|(f, l)| *f..=*l)
    }

    /// The compact form: `"0,2"`, `"1-3,7"`; two adjacent indexes are written
    /// `"a,b"`; nothing is `""`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (first, last) in &self.0 {
            if !out.is_empty() {
                out.push(',');
            }
            out.push_str(&first.to_string());
            if last > first {
                out.push(if *last == first + 1 { ',' } else { '-' });
                out.push_str(&last.to_string());
            }
        }
        out
    }
}

/// `spec.completions` (0 when unset; validation requires it for Indexed Jobs).
pub fn completions(job: &Job) -> i32 {
    job.spec.as_ref().and_then(|s| s.completions).unwrap_or(0)
}

/// `spec.backoffLimitPerIndex` (always honoured: gate JobBackoffLimitPerIndex is on).
pub fn backoff_limit_per_index(job: &Job) -> Option<i32> {
    job.spec.as_ref().and_then(|s| s.backoff_limit_per_index)
}

/// Previously counted succeeded indexes and those plus the indexes of
/// succeeded pods that still carry the finalizer and are not already listed
/// in `status.uncountedTerminatedPods.failed` (`calculateSucceededIndexes`).
pub fn succeeded_indexes(job: &Job, pods: &[&Pod]) -> (Intervals, Intervals) {
    let completions = completions(job);
    let status_str = job
        .status
        .as_ref()
        .and_then(|s| s.completed_indexes.as_deref())
        .unwrap_or_default();
    let prev = Intervals::parse(status_str, completions);
    // Deviation: a pod already recorded as failed (deleted while running,
    // then exited 0 before its finalizer went) stays failed, as the counting
    // step treats it; upstream would also mark its index completed, next to
    // the same index in failedIndexes, which status validation refuses.
    let recorded_failed: BTreeSet<&str> = job
        .status
        .as_ref()
        .and_then(|s| s.uncounted_terminated_pods.as_ref())
        .and_then(|u| u.failed.as_deref())
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .collect();
    let new: BTreeSet<i64> = pods
        .iter()
        .filter(|p| phase(p) == PHASE_SUCCEEDED)
        .filter(|p| has_tracking_finalizer(p))
        .filter(|p| !recorded_failed.contains(super::classify::uid(p)))
        .filter_map(|p| valid_index(p, completions))
        .collect();
    let all = prev.with_indexes(new);
    (prev, all)
}

/// `status.failedIndexes` plus the indexes of finalizer-carrying pods whose
/// failure fails their index (`calculateFailedIndexes`, §6).
pub fn failed_indexes(job: &Job, pods: &[&Pod]) -> Intervals {
    let completions = completions(job);
    let prev = job
        .status
        .as_ref()
        .and_then(|s| s.failed_indexes.as_deref())
        .map(|s| Intervals::parse(s, completions))
        .unwrap_or_default();
    let new: BTreeSet<i64> = pods
        .iter()
        .filter(|p| has_tracking_finalizer(p) && is_index_failed(job, p))
        .filter_map(|p| valid_index(p, completions))
        .collect();
    prev.with_indexes(new)
}

/// `isIndexFailed` (§6): the pod failed and either matched `FailIndex`, or
/// its counted failure reaches `backoffLimitPerIndex` through its failure
/// count annotation.
pub fn is_index_failed(job: &Job, pod: &Pod) -> bool {
    if !is_pod_failed(pod, job) {
        return false;
    }
    let policy = job
        .spec
        .as_ref()
        .and_then(|s| s.pod_failure_policy.as_ref());
    let m = match_pod_failure_policy(policy, pod);
    if m.action == Some(Action::FailIndex) {
        return true;
    }
    let limit = backoff_limit_per_index(job).unwrap_or(i32::MAX);
    m.count_failed && index_failure_count(pod) >= limit
}

/// `job-index-failure-count` of a pod; unparsable, negative or oversized
/// values read as 0.
pub fn index_failure_count(pod: &Pod) -> i32 {
    annotation_count(pod, JOB_INDEX_FAILURE_COUNT)
}

/// `job-index-ignored-failure-count` of a pod, read like [`index_failure_count`].
pub fn index_ignored_failure_count(pod: &Pod) -> i32 {
    annotation_count(pod, JOB_INDEX_IGNORED_FAILURE_COUNT)
}

/// Failure plus ignored-failure annotations.
pub fn index_absolute_failure_count(pod: &Pod) -> i64 {
    i64::from(index_failure_count(pod)) + i64::from(index_ignored_failure_count(pod))
}

fn annotation_count(pod: &Pod, key: &str) -> i32 {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| (0..=i64::from(i32::MAX)).contains(v))
        .and_then(|v| i32::try_from(v).ok())
        .unwrap_or(0)
}

/// Annotations for the pod replacing `replaced` in its index (§6):
/// `(failure count, ignored failure count)`.
pub fn new_index_failure_counts(job: &Job, replaced: Option<&Pod>) -> (i32, i32) {
    let Some(pod) = replaced else {
        return (0, 0);
    };
    let (mut failures, mut ignored) = (index_failure_count(pod), index_ignored_failure_count(pod));
    let policy = job
        .spec
        .as_ref()
        .and_then(|s| s.pod_failure_policy.as_ref());
    if match_pod_failure_policy(policy, pod).count_failed {
        failures = failures.saturating_add(1);
    } else {
        ignored = ignored.saturating_add(1);
    }
    (failures, ignored)
}

/// The failed pod kept per index for delayed finalizer removal
/// (`getPodsWithDelayedDeletionPerIndex`, §6): for each index that is not
/// succeeded, not failed and has no active pod, a single pass in list order
/// keeps the first candidate and lets a later pod replace it only if its
/// absolute count is ≥ and its finish time is not earlier.
/// `eligible` holds the pods that pass the counting filter (finalizer, not
/// expected-removed, valid index).
pub fn pods_with_delayed_deletion<'a>(
    job: &Job,
    eligible: &[&'a Pod],
    active: &[&Pod],
    succeeded: &Intervals,
    failed: &Intervals,
) -> BTreeMap<i64, &'a Pod> {
    let completions = completions(job);
    let active_indexes: BTreeSet<i64> = active.iter().filter_map(|p| completion_index(p)).collect();
    let mut kept: BTreeMap<i64, &'a Pod> = BTreeMap::new();
    for pod in eligible {
        if !is_pod_failed(pod, job) {
            continue;
        }
        let Some(ix) = valid_index(pod, completions) else {
            continue;
        };
        if succeeded.has(ix) || failed.has(ix) || active_indexes.contains(&ix) {
            continue;
        }
        match kept.get(&ix) {
            Some(candidate) => {
                if index_absolute_failure_count(candidate) <= index_absolute_failure_count(pod)
                    && finished_time(pod) >= finished_time(candidate)
                {
                    kept.insert(ix, pod);
                }
            }
            None => {
                kept.insert(ix, pod);
            }
        }
    }
    kept
}

/// The first `count` indexes below `completions` that are neither
/// succeeded, failed, active nor — when only failed pods are replaced —
/// held by a terminating pod (`firstPendingIndexes`).
pub fn first_pending_indexes(non_pending: &Intervals, count: usize, completions: i32) -> Vec<i64> {
    let completions = i64::from(completions);
    let mut out = Vec::new();
    let mut candidate = 0;
    for (first, last) in &non_pending.0 {
        while candidate < completions && out.len() < count && candidate < *first {
            out.push(candidate);
            candidate += 1;
        }
        // Saturating: a stored index annotation can be any i64 (Go wraps here).
        if candidate < last.saturating_add(1) {
            candidate = last.saturating_add(1);
        }
    }
    while candidate < completions && out.len() < count {
        out.push(candidate);
        candidate += 1;
    }
    out
}

/// The set of (known) completion indexes of `pods`.
pub fn indexes_of(pods: &[&Pod]) -> BTreeSet<i64> {
    pods.iter().filter_map(|p| completion_index(p)).collect()
}
