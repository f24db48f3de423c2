//! Job create and update validation (upstream `ValidateJob`,
//! `validateGeneratedSelector`, `ValidateJobUpdate`, `ValidateJobSpecUpdate`,
//! `validatePodTemplateUpdate`, `validateCompletions`) and the options the
//! registry derives for them (`validationOptionsForJob`).
//!
//! As upstream, an update runs [`validate_job`] *and* [`validate_job_update`];
//! the latter validates the spec again, so a spec error shows up twice in an
//! update's error list (the aggregated message de-duplicates it).

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Affinity, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::constants::{
    COMPLETION_INDEXED, CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
};
use super::job_spec::validate_job_spec;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::render;
use crate::selector::{as_selector, has_invalid_label_value};

/// Options of Job validation (upstream `JobValidationOptions`, with every
/// gate on: elastic Indexed Jobs are always allowed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobValidationOptions {
    /// The template's node affinity, node selector, tolerations, labels,
    /// annotations and scheduling gates may change (suspended Jobs that
    /// never started).
    pub allow_mutable_scheduling_directives: bool,
    /// matchExpressions values need not be valid label values (the stored
    /// selector already had such a value).
    pub allow_invalid_label_value_in_selector: bool,
    /// The generated selector must also use the `batch.kubernetes.io/`
    /// labels (always on create; on update only if the stored template
    /// already had both).
    pub require_prefixed_labels: bool,
}

/// `validationOptionsForJob`: the options for creating `new` (no `old`) or
/// updating `old` to `new`.
/// (`new` feeds upstream's pod-template options, which exitplan does not
/// model; it is kept so callers read like upstream.)
pub fn validation_options_for_job(_new: &Job, old: Option<&Job>) -> JobValidationOptions {
    let Some(old) = old else {
        return JobValidationOptions {
            require_prefixed_labels: true,
            ..Default::default()
        };
    };
    let old_spec = old.spec.clone().unwrap_or_default();
    let suspended = old_spec.suspend == Some(true);
    let not_started = old.status.as_ref().is_none_or(|s| s.start_time.is_none());
    let old_labels = old_spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref());
    let has = |key: &str| old_labels.is_some_and(|l| l.contains_key(key));
    JobValidationOptions {
        allow_mutable_scheduling_directives: suspended && not_started,
        allow_invalid_label_value_in_selector: has_invalid_label_value(old_spec.selector.as_ref()),
        require_prefixed_labels: has(JOB_NAME_LABEL) && has(CONTROLLER_UID_LABEL),
    }
}

fn spec_of(job: &Job) -> JobSpec {
    job.spec.clone().unwrap_or_default()
}

/// `ValidateJob`: metadata (name a DNS subdomain), the generated selector,
/// the spec, and that an Indexed Job's last pod hostname is a DNS label.
pub fn validate_job(job: &Job, opts: &JobValidationOptions) -> ErrorList {
    let spec = spec_of(job);
    let mut errs = meta::validate_object_meta(&job.metadata, true, NameRule::Subdomain);
    errs.append(validate_generated_selector(
        job,
        &spec,
        opts.require_prefixed_labels,
    ));
    errs.append(validate_job_spec(&spec, &Path::new("spec"), opts));
    if spec.completion_mode.as_deref() == Some(COMPLETION_INDEXED)
        && let Some(c) = spec.completions.filter(|c| *c > 0)
    {
        let name = job.metadata.name.as_deref().unwrap_or_default();
        let hostname = format!("{name}-{}", c - 1);
        if !formats::is_dns1123_label(&hostname).is_empty() {
            errs.push(Error::invalid(
                &Path::new("metadata").child("name"),
                name,
                format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errs
}

/// `ValidateHasLabel`: `labels[key]` must be `expected`.
fn validate_has_label(
    meta: Option<&ObjectMeta>,
    path: &Path,
    key: &str,
    expected: &str,
) -> ErrorList {
    let labels = meta.and_then(|m| m.labels.as_ref());
    let p = path.child("labels").key(key);
    let detail = format!("must be '{expected}'");
    match labels.and_then(|l| l.get(key)) {
        None => ErrorList(vec![Error::required(&p, detail)]),
        Some(v) if v != expected => ErrorList(vec![Error::invalid(
            &p,
            BadValue::Json(labels.map(render::string_map).unwrap_or_default()),
            detail,
        )]),
        Some(_) => ErrorList::new(),
    }
}

/// `validateGeneratedSelector`: unless the selector is manual, the Job needs
/// a UID, the template carries the generated labels, and the selector
/// selects them.
pub fn validate_generated_selector(
    job: &Job,
    spec: &JobSpec,
    require_prefixed_labels: bool,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if spec.manual_selector == Some(true) {
        return errs;
    }
    let Some(selector) = &spec.selector else {
        return errs;
    };
    let uid = job.metadata.uid.as_deref().unwrap_or_default();
    let name = job.metadata.name.as_deref().unwrap_or_default();
    if uid.is_empty() {
        errs.push(Error::required(&Path::new("metadata").child("uid"), ""));
    }
    let tmeta = spec.template.metadata.as_ref();
    let tpath = Path::new("spec").child("template").child("metadata");
    errs.append(validate_has_label(
        tmeta,
        &tpath,
        LEGACY_CONTROLLER_UID_LABEL,
        uid,
    ));
    errs.append(validate_has_label(
        tmeta,
        &tpath,
        LEGACY_JOB_NAME_LABEL,
        name,
    ));
    let mut expected = std::collections::BTreeMap::new();
    if require_prefixed_labels {
        errs.append(validate_has_label(tmeta, &tpath, CONTROLLER_UID_LABEL, uid));
        errs.append(validate_has_label(tmeta, &tpath, JOB_NAME_LABEL, name));
        expected.insert(CONTROLLER_UID_LABEL.to_owned(), uid.to_owned());
        expected.insert(JOB_NAME_LABEL.to_owned(), name.to_owned());
    }
    expected.insert(LEGACY_CONTROLLER_UID_LABEL.to_owned(), uid.to_owned());
    expected.insert(LEGACY_JOB_NAME_LABEL.to_owned(), name.to_owned());
    if let Ok(sel) = as_selector(Some(selector))
        && !sel.matches(Some(&expected))
    {
        errs.push(Error::invalid(
            &Path::new("spec").child("selector"),
            BadValue::Json(render::label_selector(selector)),
            "`selector` not auto-generated",
        ));
    }
    errs
}

/// `ValidateJobUpdate`: metadata update rules, then [`validate_job_spec_update`].
pub fn validate_job_update(new: &Job, old: &Job, opts: &JobValidationOptions) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_job_spec_update(
        &spec_of(new),
        &spec_of(old),
        &Path::new("spec"),
        opts,
    ));
    errs
}

fn immutable(errs: &mut ErrorList, changed: bool, path: &Path, value: BadValue) {
    if changed {
        errs.push(Error::invalid(path, value, FIELD_IMMUTABLE).with_origin("immutable"));
    }
}

fn opt_string(v: Option<&String>) -> BadValue {
    v.map_or(BadValue::Null, |s| BadValue::Str(s.clone()))
}

/// `ValidateJobSpecUpdate`: the spec rules again, then completions (elastic
/// for Indexed Jobs), selector, pod template, completionMode,
/// podFailurePolicy, backoffLimitPerIndex, managedBy and successPolicy
/// immutability (`field is immutable`). `parallelism`, `backoffLimit`,
/// `maxFailedIndexes`, `activeDeadlineSeconds`, `suspend`, … may change.
pub fn validate_job_spec_update(
    new: &JobSpec,
    old: &JobSpec,
    path: &Path,
    opts: &JobValidationOptions,
) -> ErrorList {
    let mut errs = validate_job_spec(new, path, opts);
    errs.append(validate_completions(new, old, &path.child("completions")));
    immutable(
        &mut errs,
        !semantic_eq(&new.selector, &old.selector),
        &path.child("selector"),
        BadValue::Json(render::label_selector_opt(new.selector.as_ref())),
    );
    errs.append(validate_pod_template_update(new, old, path, opts));
    immutable(
        &mut errs,
        new.completion_mode != old.completion_mode,
        &path.child("completionMode"),
        opt_string(new.completion_mode.as_ref()),
    );
    immutable(
        &mut errs,
        !semantic_eq(&new.pod_failure_policy, &old.pod_failure_policy),
        &path.child("podFailurePolicy"),
        new.pod_failure_policy.as_ref().map_or(BadValue::Null, |p| {
            BadValue::Json(render::pod_failure_policy(p))
        }),
    );
    immutable(
        &mut errs,
        new.backoff_limit_per_index != old.backoff_limit_per_index,
        &path.child("backoffLimitPerIndex"),
        new.backoff_limit_per_index.into(),
    );
    immutable(
        &mut errs,
        new.managed_by != old.managed_by,
        &path.child("managedBy"),
        opt_string(new.managed_by.as_ref()),
    );
    immutable(
        &mut errs,
        !semantic_eq(&new.success_policy, &old.success_policy),
        &path.child("successPolicy"),
        new.success_policy.as_ref().map_or(BadValue::Null, |p| {
            BadValue::Json(render::success_policy(p))
        }),
    );
    errs
}

/// `validateCompletions` with elastic Indexed Jobs (GA): immutable for
/// NonIndexed Jobs; an Indexed Job may change it only together with
/// `parallelism` (to the same value).
fn validate_completions(new: &JobSpec, old: &JobSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let changed = new.completions != old.completions;
    if new.completion_mode.as_deref() != Some(COMPLETION_INDEXED) {
        immutable(&mut errs, changed, path, new.completions.into());
        return errs;
    }
    if let Some(c) = new.completions
        && changed
        && Some(c) != new.parallelism
    {
        errs.push(Error::invalid(
            path,
            c,
            "can only be modified in tandem with spec.parallelism",
        ));
    }
    errs
}

/// In Go the template's metadata and spec are struct values, so "absent"
/// and "empty" are the same value; k8s-openapi wraps them in `Option`.
fn canonical(t: &PodTemplateSpec) -> PodTemplateSpec {
    let mut t = t.clone();
    if t.metadata
        .as_ref()
        .is_some_and(|m| *m == ObjectMeta::default())
    {
        t.metadata = None;
    }
    if t.spec.as_ref().is_some_and(|s| *s == Default::default()) {
        t.spec = None;
    }
    t
}

/// `validatePodTemplateUpdate`: the template is immutable, except — for a
/// suspended Job that never started — node affinity, node selector,
/// tolerations, labels, annotations and scheduling gates.
fn validate_pod_template_update(
    new: &JobSpec,
    old: &JobSpec,
    path: &Path,
    opts: &JobValidationOptions,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let template = &new.template;
    let mut old_template: PodTemplateSpec = old.template.clone();
    if opts.allow_mutable_scheduling_directives {
        let new_spec = template.spec.clone().unwrap_or_default();
        let old_spec = old_template.spec.get_or_insert_with(Default::default);
        match (&new_spec.affinity, &mut old_spec.affinity) {
            (None, Some(old_aff)) => {
                old_aff.node_affinity = None;
                if *old_aff == Affinity::default() {
                    old_spec.affinity = None;
                }
            }
            (Some(new_aff), None) => {
                old_spec.affinity = Some(Affinity {
                    node_affinity: new_aff.node_affinity.clone(),
                    ..Default::default()
                });
            }
            (Some(new_aff), Some(old_aff)) => {
                old_aff.node_affinity = new_aff.node_affinity.clone();
            }
            (None, None) => {}
        }
        old_spec.node_selector = new_spec.node_selector.clone();
        old_spec.tolerations = new_spec.tolerations.clone();
        old_spec.scheduling_gates = new_spec.scheduling_gates.clone();
        let new_meta = template.metadata.clone().unwrap_or_default();
        let old_meta = old_template.metadata.get_or_insert_with(Default::default);
        old_meta.annotations = new_meta.annotations;
        old_meta.labels = new_meta.labels;
    }
    // Upstream renders the internal core.PodTemplateSpec; exitplan shows
    // the submitted (v1) template instead — see the module docs of `render`.
    immutable(
        &mut errs,
        !semantic_eq(&canonical(template), &canonical(&old_template)),
        &path.child("template"),
        BadValue::Json(render::json(template)),
    );
    errs
}
