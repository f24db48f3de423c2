//! batch/v1 Job defaulting (`pkg/apis/batch/v1/defaults.go`,
//! job-failure spec §1), with every feature gate on (§15).
//!
//! Besides `SetDefaults_Job` and
//! `SetDefaults_PodFailurePolicyOnPodConditionsPattern`, the generated
//! defaulter also runs the core/v1 PodSpec defaults on the template
//! ([`crate::core::validation::defaults::default_pod_spec`]).

use k8s_openapi::api::batch::v1::{Job, PodFailurePolicy};

use super::constants::{
    COMPLETION_NON_INDEXED, REPLACEMENT_FAILED, REPLACEMENT_TERMINATING_OR_FAILED,
};
use crate::core::constants::CONDITION_TRUE;

/// Fills in the defaults a batch/v1 Job gets on decode:
///
/// * `completions` and `parallelism` 1 when both are unset, else
///   `parallelism` 1 when unset;
/// * `backoffLimit` 6, or `i32::MAX` when `backoffLimitPerIndex` is set;
/// * `metadata.labels` copied from the template when the Job has none;
/// * `completionMode` NonIndexed, `suspend` false, `manualSelector` false;
/// * `podReplacementPolicy` Failed with a podFailurePolicy, else
///   TerminatingOrFailed (gate JobPodReplacementPolicy, GA);
/// * every empty `onPodConditions[*].status` becomes `True`;
/// * the core/v1 PodSpec defaults on the template (`restartPolicy` Always,
///   `dnsPolicy` ClusterFirst, container pull and termination message
///   policies, …).
pub fn default_job(job: &mut Job) {
    let spec = job.spec.get_or_insert_with(Default::default);
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
        spec.parallelism = Some(1);
    }
    if spec.parallelism.is_none() {
        spec.parallelism = Some(1);
    }
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() {
            i32::MAX
        } else {
            6
        });
    }
    let template_labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone());
    if let Some(labels) = template_labels
        && job.metadata.labels.as_ref().is_none_or(|l| l.is_empty())
    {
        job.metadata.labels = Some(labels);
    }
    if spec.completion_mode.is_none() {
        spec.completion_mode = Some(COMPLETION_NON_INDEXED.to_owned());
    }
    if spec.suspend.is_none() {
        spec.suspend = Some(false);
    }
    if spec.pod_replacement_policy.is_none() {
        spec.pod_replacement_policy = Some(
            if spec.pod_failure_policy.is_some() {
                REPLACEMENT_FAILED
            } else {
                REPLACEMENT_TERMINATING_OR_FAILED
            }
            .to_owned(),
        );
    }
    if spec.manual_selector.is_none() {
        spec.manual_selector = Some(false);
    }
    if let Some(policy) = &mut spec.pod_failure_policy {
        default_pod_failure_policy(policy);
    }
    crate::core::validation::defaults::default_pod_spec(
        spec.template.spec.get_or_insert_with(Default::default),
        false,
    );
}

/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern` on every rule:
/// an empty `onPodConditions[*].status` becomes `True`.
pub fn default_pod_failure_policy(policy: &mut PodFailurePolicy) {
    for rule in &mut policy.rules {
        for pattern in rule.on_pod_conditions.iter_mut().flatten() {
            if pattern.status.as_deref().unwrap_or_default().is_empty() {
                pattern.status = Some(CONDITION_TRUE.to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::{
        JobSpec, PodFailurePolicy, PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
    };

    #[test]
    fn empty_job_gets_upstream_defaults() {
        let mut job = Job::default();
        default_job(&mut job);
        let spec = job.spec.expect("spec is created");
        assert_eq!(spec.completions, Some(1));
        assert_eq!(spec.parallelism, Some(1));
        assert_eq!(spec.backoff_limit, Some(6));
        assert_eq!(spec.completion_mode.as_deref(), Some("NonIndexed"));
        assert_eq!(spec.suspend, Some(false));
        assert_eq!(spec.manual_selector, Some(false));
        assert_eq!(
            spec.pod_replacement_policy.as_deref(),
            Some("TerminatingOrFailed")
        );
        assert_eq!(
            spec.template.spec.and_then(|s| s.restart_policy).as_deref(),
            Some("Always")
        );
    }

    #[test]
    fn only_parallelism_defaults_when_completions_set() {
        let mut job = Job {
            spec: Some(JobSpec {
                completions: Some(5),
                backoff_limit_per_index: Some(1),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_job(&mut job);
        let spec = job.spec.expect("spec");
        assert_eq!(spec.completions, Some(5));
        assert_eq!(spec.parallelism, Some(1));
        assert_eq!(spec.backoff_limit, Some(i32::MAX));
    }

    #[test]
    fn policy_defaults_replacement_and_pattern_status() {
        let mut job = Job {
            spec: Some(JobSpec {
                parallelism: Some(3),
                pod_failure_policy: Some(PodFailurePolicy {
                    rules: vec![PodFailurePolicyRule {
                        action: "Ignore".into(),
                        on_pod_conditions: Some(vec![
                            PodFailurePolicyOnPodConditionsPattern {
                                type_: "DisruptionTarget".into(),
                                status: None,
                            },
                            PodFailurePolicyOnPodConditionsPattern {
                                type_: "Custom".into(),
                                status: Some("False".into()),
                            },
                        ]),
                        ..Default::default()
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_job(&mut job);
        let spec = job.spec.expect("spec");
        assert_eq!(spec.completions, None);
        assert_eq!(spec.pod_replacement_policy.as_deref(), Some("Failed"));
        let patterns = spec
            .pod_failure_policy
            .and_then(|p| p.rules.into_iter().next())
            .and_then(|r| r.on_pod_conditions)
            .expect("patterns");
        assert_eq!(patterns[0].status.as_deref(), Some("True"));
        assert_eq!(patterns[1].status.as_deref(), Some("False"));
    }
}
