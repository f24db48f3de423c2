//! Well-known strings of Job failure handling (job-failure spec §1). Pod
//! phases, pod condition types and condition statuses are core strings:
//! [`crate::core::constants`].

/// Finalizer that keeps a pod until the Job controller has counted it.
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// Annotation (and label) carrying an Indexed Job pod's completion index.
pub const JOB_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// Per-index failure count annotation (backoffLimitPerIndex).
pub const JOB_INDEX_FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-failure-count";
/// Per-index ignored-failure count annotation.
pub const JOB_INDEX_IGNORED_FAILURE_COUNT: &str =
    "batch.kubernetes.io/job-index-ignored-failure-count";

/// Job condition: a terminal failure has been decided; pods are being cleaned up.
pub const CONDITION_FAILURE_TARGET: &str = "FailureTarget";
/// Job condition: the Job failed (terminal).
pub const CONDITION_FAILED: &str = "Failed";
/// Job condition: success has been decided; pods are being cleaned up.
pub const CONDITION_SUCCESS_CRITERIA_MET: &str = "SuccessCriteriaMet";
/// Job condition: the Job completed (terminal).
pub const CONDITION_COMPLETE: &str = "Complete";
/// Job condition: the Job is suspended.
pub const CONDITION_SUSPENDED: &str = "Suspended";

/// Failure reason: a FailJob rule matched.
pub const REASON_POD_FAILURE_POLICY: &str = "PodFailurePolicy";
/// Failure reason: more counted failures than `backoffLimit`.
pub const REASON_BACKOFF_LIMIT_EXCEEDED: &str = "BackoffLimitExceeded";
/// Failure reason: `activeDeadlineSeconds` elapsed.
pub const REASON_DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
/// Failure reason: more failed indexes than `maxFailedIndexes`.
pub const REASON_MAX_FAILED_INDEXES_EXCEEDED: &str = "MaxFailedIndexesExceeded";
/// Failure reason: all indexes finished and some failed.
pub const REASON_FAILED_INDEXES: &str = "FailedIndexes";
/// Reason of `SuccessCriteriaMet` (and then `Complete`) when the Job reached
/// its completions (upstream `JobReasonCompletionsReached`).
pub const REASON_COMPLETIONS_REACHED: &str = "CompletionsReached";
/// Message that goes with [`REASON_COMPLETIONS_REACHED`] (upstream's text).
pub const MESSAGE_COMPLETIONS_REACHED: &str = "Reached expected number of succeeded pods";

/// podFailurePolicy action: fail the whole Job.
pub const ACTION_FAIL_JOB: &str = "FailJob";
/// podFailurePolicy action: fail the pod's index (backoffLimitPerIndex).
pub const ACTION_FAIL_INDEX: &str = "FailIndex";
/// podFailurePolicy action: do not count the failure.
pub const ACTION_IGNORE: &str = "Ignore";
/// podFailurePolicy action: count the failure (the default handling).
pub const ACTION_COUNT: &str = "Count";
/// onExitCodes operator: exit code in the set.
pub const OPERATOR_IN: &str = "In";
/// onExitCodes operator: exit code not in the set.
pub const OPERATOR_NOT_IN: &str = "NotIn";

/// podReplacementPolicy: replace only once the old pod is terminal.
pub const REPLACEMENT_FAILED: &str = "Failed";
/// podReplacementPolicy: replace as soon as the old pod is terminating.
pub const REPLACEMENT_TERMINATING_OR_FAILED: &str = "TerminatingOrFailed";

/// completionMode: pods are interchangeable.
pub const COMPLETION_NON_INDEXED: &str = "NonIndexed";
/// completionMode: each pod owns an index.
pub const COMPLETION_INDEXED: &str = "Indexed";

/// `spec.managedBy` value naming the built-in Job controller.
pub const JOB_CONTROLLER_NAME: &str = "kubernetes.io/job-controller";

/// Template label naming the Job (added by selector generation).
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// Legacy unprefixed form of [`JOB_NAME_LABEL`].
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// Template label and selector key carrying the Job's UID.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// Legacy unprefixed form of [`CONTROLLER_UID_LABEL`].
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";

/// Pod restart policy: restart containers forever (invalid for Jobs).
pub const RESTART_POLICY_ALWAYS: &str = "Always";
/// Pod restart policy: restart failed containers in place.
pub const RESTART_POLICY_ON_FAILURE: &str = "OnFailure";
/// Pod restart policy: never restart; failures surface as failed pods.
pub const RESTART_POLICY_NEVER: &str = "Never";
