//! The Job registry strategy (`pkg/registry/batch/job/strategy.go`), with
//! every feature gate on (job-failure spec §15): the create-time dropping of
//! podFailurePolicy, backoffLimitPerIndex/maxFailedIndexes/FailIndex rules,
//! podReplacementPolicy, managedBy and successPolicy (§1) never happens.
//!
//! * create: defaults → selector generation (unless `manualSelector`),
//!   status cleared, generation 1 → [`validate_job`], the template's
//!   `evictionResponders` ([`validate_template_eviction_responders`]), then
//!   the generic metadata check;
//! * update: status kept, generation bumped when the spec changed → generic
//!   common fields, [`validate_job`], [`validate_job_update`] and the
//!   template's `evictionResponders` when they changed;
//! * `/status`: spec and metadata reset to the stored object → generic
//!   common fields and [`validate_job_update_status`] with
//!   [`status_validation_options`].

use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::constants::{
    CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL,
};
use super::defaults::default_job;
use super::job::{validate_job, validate_job_update, validation_options_for_job};
use super::job_status::{status_validation_options, validate_job_update_status};
use super::pod_template::validate_template_eviction_responders;
use crate::equality::semantic_eq;
use crate::field::{ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::strategy::{Context, Strategy, next_generation};

/// Create, update and status-update rules of `batch/v1` Jobs.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobStrategy;

/// `generateSelector`: label the template with the Job's name and UID (both
/// legacy and `batch.kubernetes.io/` keys, keeping labels the user set) and
/// select `batch.kubernetes.io/controller-uid=<uid>`. Conflicting
/// user-provided labels are left for validation to reject.
pub fn generate_selector(job: &mut Job) {
    let name = job.metadata.name.clone().unwrap_or_default();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let spec = job.spec.get_or_insert_with(Default::default);
    let labels = spec
        .template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(Default::default);
    for key in [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL] {
        labels.entry(key.to_owned()).or_insert_with(|| name.clone());
    }
    for key in [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL] {
        labels.entry(key.to_owned()).or_insert_with(|| uid.clone());
    }
    spec.selector
        .get_or_insert_with(LabelSelector::default)
        .match_labels
        .get_or_insert_with(Default::default)
        .entry(CONTROLLER_UID_LABEL.to_owned())
        .or_insert(uid);
}

fn template_of(job: &Job) -> PodTemplateSpec {
    job.spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default()
}

fn template_path() -> Path {
    Path::new("spec").child("template")
}

impl Strategy for JobStrategy {
    type Object = Job;

    fn default(obj: &mut Job) {
        default_job(obj);
    }

    fn prepare_for_create(obj: &mut Job) {
        let manual = obj.spec.as_ref().and_then(|s| s.manual_selector) == Some(true);
        if !manual {
            generate_selector(obj);
        }
        obj.status = Some(JobStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &Job, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_job(obj, &validation_options_for_job(obj, None));
        errs.append(validate_template_eviction_responders(
            &template_of(obj),
            None,
            &template_path(),
            ctx.absent,
        ));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut Job, old: &Job) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(new: &Job, old: &Job, ctx: &Context<'_>) -> ErrorList {
        let opts = validation_options_for_job(new, Some(old));
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_job(new, &opts));
        errs.append(validate_job_update(new, old, &opts));
        errs.append(validate_template_eviction_responders(
            &template_of(new),
            Some(&template_of(old)),
            &template_path(),
            ctx.absent,
        ));
        errs
    }

    /// Upstream's `jobStatusStrategy.PrepareForUpdate`: the spec is the stored one.
    fn prepare_for_status_update(new: &mut Job, old: &Job) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &Job, old: &Job, _ctx: &Context<'_>) -> ErrorList {
        let opts = status_validation_options(new, old);
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_job_update_status(new, old, &opts));
        errs
    }
}
