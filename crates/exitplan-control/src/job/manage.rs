//! Pods to create and delete (`manageJob`, job-failure spec §6, §7, §9).
//!
//! Data flow: the sync context (active / terminating pods, counters,
//! succeeded and failed indexes, back-off) → `wantActive` → either the
//! excess active pods to delete (preference order, duplicates and invalid
//! indexes first) or the pods to create (pending indexes, per-index
//! annotations, slow-start batches, at most 500) — never both — or a
//! requeue while the recreation back-off runs.

use std::collections::BTreeMap;

use jiff::SignedDuration;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, ObjectFieldSelector, Pod, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use exitplan_api::batch::constants::{
    JOB_COMPLETION_INDEX, JOB_INDEX_FAILURE_COUNT, JOB_INDEX_IGNORED_FAILURE_COUNT,
    JOB_TRACKING_FINALIZER,
};

use super::backoff::remaining_for_index;
use super::classify::{completion_index, deletion_preference, is_indexed};
use super::indexes::{first_pending_indexes, new_index_failure_counts};
use super::plan::NewPod;

/// At most this many pods are created or deleted per sync (`MaxPodCreateDeletePerSync`).
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// First slow-start batch size (`SlowStartInitialBatchSize`).
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;
/// Environment variable carrying the completion index.
pub const COMPLETION_INDEX_ENV_NAME: &str = "JOB_COMPLETION_INDEX";
/// Longest `generateName` prefix (`names.MaxGeneratedNameLength`: 63 − 5).
pub const MAX_GENERATED_NAME_LENGTH: usize = 58;
/// Smallest delay for a back-off requeue (`DefaultJobApiBackOff`).
pub const MIN_REQUEUE_DELAY: SignedDuration = SignedDuration::from_secs(1);

/// `wantActive` (§7): without completions `parallelism` until the first
/// success, then what runs; with completions `min(completions − succeeded,
/// parallelism)`, at least 0.
pub fn want_active(job: &Job, active: i32, succeeded: i32) -> i32 {
    let spec = job.spec.as_ref();
    let parallelism = spec.and_then(|s| s.parallelism).unwrap_or(1);
    match spec.and_then(|s| s.completions) {
        None => {
            if succeeded > 0 {
                active
            } else {
                parallelism
            }
        }
        Some(completions) => completions
            .saturating_sub(succeeded)
            .min(parallelism)
            .max(0),
    }
}

/// `activePodsForRemoval`: for Indexed Jobs every pod with a duplicate,
/// unknown or out-of-range index first; then, if fewer than `rm_at_least`,
/// the remaining pods in deletion-preference order.
pub fn active_pods_for_removal<'a>(
    job: &Job,
    active: &[&'a Pod],
    rm_at_least: usize,
) -> Vec<&'a Pod> {
    let (mut rm, mut left) = if is_indexed(job) {
        duplicated_index_pods_for_removal(active, super::indexes::completions(job))
    } else {
        (Vec::new(), active.to_vec())
    };
    if rm.len() < rm_at_least {
        left.sort_by(|a, b| deletion_preference(a, b));
        let more = (rm_at_least - rm.len()).min(left.len());
        rm.extend(left.drain(..more));
    }
    rm
}

/// Splits active pods of an Indexed Job into (to remove, to keep): pods with
/// an unknown or out-of-range index are removed; of several pods sharing an
/// index all but the most valuable one (last in deletion preference) are.
fn duplicated_index_pods_for_removal<'a>(
    pods: &[&'a Pod],
    completions: i32,
) -> (Vec<&'a Pod>, Vec<&'a Pod>) {
    let key = |p: &Pod| completion_index(p).unwrap_or(-1);
    let mut sorted = pods.to_vec();
    sorted.sort_by_key(|p| key(p));
    let mut groups: BTreeMap<i64, Vec<&'a Pod>> = BTreeMap::new();
    for pod in sorted {
        groups.entry(key(pod)).or_default().push(pod);
    }
    let (mut rm, mut left) = (Vec::new(), Vec::new());
    for (ix, mut group) in groups {
        if ix < 0 || ix >= i64::from(completions) {
            rm.extend(group);
        } else if group.len() == 1 {
            left.extend(group);
        } else {
            group.sort_by(|a, b| deletion_preference(a, b));
            if let Some(keep) = group.pop() {
                rm.extend(group);
                left.push(keep);
            }
        }
    }
    (rm, left)
}

/// Of `indexes`, those whose per-index back-off is over; if none is, the
/// smallest remaining delay (`getPodCreationInfoForIndependentIndexes`).
pub fn indexes_ready_now(
    indexes: &[i64],
    delayed: &BTreeMap<i64, &Pod>,
    now: jiff::Timestamp,
) -> (Vec<i64>, SignedDuration) {
    let mut ready = Vec::new();
    let mut min_remaining: Option<SignedDuration> = None;
    for ix in indexes {
        let remaining = remaining_for_index(now, delayed.get(ix).copied());
        if remaining.is_zero() {
            ready.push(*ix);
        } else if min_remaining.is_none_or(|m| remaining < m) {
            min_remaining = Some(remaining);
        }
    }
    if ready.is_empty() {
        (ready, min_remaining.unwrap_or(SignedDuration::ZERO))
    } else {
        (ready, SignedDuration::ZERO)
    }
}

/// First pending indexes to create (`firstPendingIndexes`), see
/// [`first_pending_indexes`].
pub fn pending_indexes(
    non_pending: &super::indexes::Intervals,
    count: usize,
    job: &Job,
) -> Vec<i64> {
    first_pending_indexes(non_pending, count, super::indexes::completions(job))
}

/// Slow-start batch sizes for `n` creations: 1, 2, 4, … (the last one
/// truncated to what is left).
pub fn slow_start_batches(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = n;
    let mut size = SLOW_START_INITIAL_BATCH_SIZE.min(left);
    while left > 0 {
        out.push(size);
        left -= size;
        size = (2 * size).min(left);
    }
    out
}

/// The pods to create, grouped in slow-start batches. `indexes` is empty for
/// NonIndexed Jobs (then `count` interchangeable pods are built).
pub fn new_pods(
    job: &Job,
    count: usize,
    indexes: &[i64],
    per_index: bool,
    delayed: &BTreeMap<i64, &Pod>,
) -> Vec<Vec<NewPod>> {
    let base = base_template(job);
    let job_name = job.metadata.name.as_deref().unwrap_or_default();
    let pods: Vec<NewPod> = if is_indexed(job) {
        indexes
            .iter()
            .map(|ix| {
                let mut template = base.clone();
                let meta = template.metadata.get_or_insert_with(ObjectMeta::default);
                let value = ix.to_string();
                let annotations = meta.annotations.get_or_insert_with(Default::default);
                annotations.insert(JOB_COMPLETION_INDEX.to_owned(), value.clone());
                if per_index {
                    let (failures, ignored) =
                        new_index_failure_counts(job, delayed.get(ix).copied());
                    annotations.insert(JOB_INDEX_FAILURE_COUNT.to_owned(), failures.to_string());
                    if ignored > 0 {
                        annotations.insert(
                            JOB_INDEX_IGNORED_FAILURE_COUNT.to_owned(),
                            ignored.to_string(),
                        );
                    }
                }
                meta.labels
                    .get_or_insert_with(Default::default)
                    .insert(JOB_COMPLETION_INDEX.to_owned(), value);
                if let Some(spec) = template.spec.as_mut() {
                    spec.hostname = Some(format!("{job_name}-{ix}"));
                }
                NewPod {
                    generate_name: generate_name_with_index(job_name, *ix),
                    index: Some(*ix),
                    template,
                }
            })
            .collect()
    } else {
        (0..count)
            .map(|_| NewPod {
                generate_name: format!("{job_name}-"),
                index: None,
                template: base.clone(),
            })
            .collect()
    };
    let mut rest = pods.into_iter();
    slow_start_batches(if is_indexed(job) {
        indexes.len()
    } else {
        count
    })
    .into_iter()
    .map(|size| rest.by_ref().take(size).collect())
    .collect()
}

/// `podGenerateNameWithIndex`: `<job>-<ix>-`, the job name truncated so the
/// prefix fits [`MAX_GENERATED_NAME_LENGTH`].
pub fn generate_name_with_index(job_name: &str, index: i64) -> String {
    let suffix = format!("-{index}-");
    let prefix = format!("{job_name}{suffix}");
    if prefix.len() <= MAX_GENERATED_NAME_LENGTH {
        return prefix;
    }
    let keep = MAX_GENERATED_NAME_LENGTH.saturating_sub(suffix.len());
    let mut cut = keep.min(job_name.len());
    while !job_name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{suffix}", &job_name[..cut])
}

/// The Job's pod template with the tracking finalizer, the controller owner
/// reference and, for Indexed Jobs, the completion-index environment variable.
fn base_template(job: &Job) -> PodTemplateSpec {
    let mut template = job
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let meta = template.metadata.get_or_insert_with(ObjectMeta::default);
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == JOB_TRACKING_FINALIZER) {
        finalizers.push(JOB_TRACKING_FINALIZER.to_owned());
    }
    meta.owner_references = Some(vec![OwnerReference {
        api_version: "batch/v1".to_owned(),
        kind: "Job".to_owned(),
        name: job.metadata.name.clone().unwrap_or_default(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    meta.namespace = job.metadata.namespace.clone();
    if is_indexed(job)
        && let Some(spec) = template.spec.as_mut()
    {
        let containers = spec.init_containers.iter_mut().flatten();
        containers
            .chain(spec.containers.iter_mut())
            .for_each(add_index_env);
    }
    template
}

fn add_index_env(container: &mut Container) {
    let env = container.env.get_or_insert_with(Vec::new);
    if env.iter().any(|e| e.name == COMPLETION_INDEX_ENV_NAME) {
        return;
    }
    env.push(EnvVar {
        name: COMPLETION_INDEX_ENV_NAME.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: None,
                field_path: format!("metadata.labels['{JOB_COMPLETION_INDEX}']"),
            }),
            ..Default::default()
        }),
    });
}
