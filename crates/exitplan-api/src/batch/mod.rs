//! batch/v1 Job: validation, defaulting and strategy for everything failure
//! handling touches (spec `job-failure.md` §1, §5, §10, §15).
//!
//! Layout follows upstream `pkg/apis/batch/{v1,validation}` and
//! `pkg/registry/batch/job`:
//!
//! * [`defaults`] — `SetDefaults_Job` ([`default_job`]);
//! * [`job`] — `ValidateJob` / `ValidateJobUpdate` and their options;
//! * [`job_spec`] — `ValidateJobSpec` (S1–S17);
//! * [`pod_failure_policy`] — §10.1–§10.4 (P1, R1–R7, E1–E8, C1–C4);
//! * [`success_policy`] — `validateSuccessPolicy`;
//! * [`pod_template`] — the covered part of `ValidatePodTemplateSpec`
//!   (container names, restartPolicy; full PodSpec validation is out of scope);
//! * [`job_status`] — `/status` rules and `getStatusValidationOptions`;
//! * [`job_strategy`] — [`JobStrategy`];
//! * [`indexes`] — the `completedIndexes` / `failedIndexes` interval lists;
//! * [`constants`] — the well-known strings of Job failure handling;
//! * [`cron_job`] — CronJob defaulting, validation and [`cron_job::CronJobStrategy`],
//!   with the schedule syntax in [`cron_schedule`].
//!
//! Shared rules live at the crate root: [`crate::selector`],
//! [`crate::render`], [`crate::equality`], [`crate::nonnegative`] and the
//! generic registry metadata checks in [`crate::meta::generic`].
//!
//! Every feature gate is treated as on (§15): nothing is dropped on create.

pub mod constants;
pub mod cron_job;
pub mod cron_schedule;
pub mod defaults;
pub mod indexes;
pub mod job;
pub mod job_spec;
pub mod job_status;
pub mod job_strategy;
pub mod pod_failure_policy;
pub mod pod_template;
pub mod success_policy;

pub use defaults::default_job;
pub use job::{
    JobValidationOptions, validate_job, validate_job_update, validation_options_for_job,
};
pub use job_spec::validate_job_spec;
pub use job_status::{
    JobStatusValidationOptions, status_validation_options, validate_job_update_status,
};
pub use job_strategy::JobStrategy;
