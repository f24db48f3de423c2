//! batch/v1 CronJob: defaulting (`SetDefaults_CronJob`), validation
//! (`ValidateCronJobCreate`, `ValidateCronJobUpdate`,
//! `validateCronJobSpec`, `validateScheduleFormat`, `validateTimeZone`,
//! `ValidateJobTemplateSpec`) and the registry strategy
//! (`pkg/registry/batch/cronjob`).
//!
//! The job template goes through the Job spec rules
//! ([`validate_job_spec_fields`]) and must not carry a selector. Time
//! zones are checked as far as possible without a zone database: the IANA
//! naming rules and `Local` are enforced, but an unknown well-formed name
//! (`Mars/Olympus`) is accepted where kube-apiserver's `time.LoadLocation`
//! would refuse it.
//!
//! * create: defaults → status cleared, generation 1 →
//!   [`validate_cron_job_create`], `evictionResponders`, generic metadata;
//! * update: status kept, generation bumped when the spec changed →
//!   generic common fields and [`validate_cron_job_update`];
//! * `/status`: spec reset; only the generic metadata rules run.

use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, CronJobStatus, JobSpec};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use super::cron_schedule::parse_standard;
use super::defaults::default_pod_failure_policy;
use super::job_spec::validate_job_spec_fields;
use super::pod_template::validate_template_eviction_responders;
use crate::core::validation::defaults::default_pod_spec;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::nonnegative::validate_nonnegative_field;
use crate::render;
use crate::strategy::{Context, Strategy, next_generation};

/// `Allow`: concurrent runs are allowed (the default).
pub const ALLOW: &str = "Allow";
/// `Forbid`: skip a run while the previous one is still running.
pub const FORBID: &str = "Forbid";
/// `Replace`: replace the running job with the new one.
pub const REPLACE: &str = "Replace";
/// Longest CronJob name: 63 minus the 11-character `-<timestamp>` suffix
/// of its Jobs.
pub const MAX_CRON_JOB_NAME_LENGTH: usize = 52;

/// `SetDefaults_CronJob`: concurrencyPolicy `Allow`, suspend false,
/// successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1; then the
/// job template's pod defaults and podFailurePolicy pattern defaults (the
/// Job-level defaults such as backoffLimit are not applied to templates).
pub fn default_cron_job(cj: &mut CronJob) {
    let spec = &mut cj.spec;
    if spec
        .concurrency_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        spec.concurrency_policy = Some(ALLOW.to_owned());
    }
    spec.suspend.get_or_insert(false);
    spec.successful_jobs_history_limit.get_or_insert(3);
    spec.failed_jobs_history_limit.get_or_insert(1);
    let job = spec.job_template.spec.get_or_insert_with(Default::default);
    if let Some(policy) = &mut job.pod_failure_policy {
        default_pod_failure_policy(policy);
    }
    default_pod_spec(
        job.template.spec.get_or_insert_with(Default::default),
        false,
    );
}

/// `validateScheduleFormat`: the schedule parses, and it names no time
/// zone unless the stored one already did (`allow_tz`) and `timeZone` is
/// unset.
pub fn validate_schedule_format(
    schedule: &str,
    allow_tz: bool,
    time_zone: Option<&str>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Err(e) = parse_standard(schedule) {
        errs.push(Error::invalid(path, schedule, e));
    }
    let has_tz = schedule.contains("TZ");
    if allow_tz && has_tz && time_zone.is_some() {
        errs.push(Error::invalid(
            path,
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !allow_tz && has_tz {
        errs.push(Error::invalid(
            path,
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

/// One `/`-separated part of a zone name: `^[A-Za-z.\-_0-9+]{1,14}$`, not
/// `.`/`..`, not starting with `-`.
fn valid_zone_part(part: &str) -> bool {
    part != "."
        && part != ".."
        && !part.starts_with('-')
        && (1..=14).contains(&part.len())
        && part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
}

/// `validateTimeZone` without the zone database lookup: non-empty, IANA
/// naming rules, not `Local`.
pub fn validate_time_zone(time_zone: Option<&str>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(tz) = time_zone else {
        return errs;
    };
    if tz.is_empty() {
        errs.push(Error::invalid(
            path,
            tz,
            "timeZone must be nil or non-empty string",
        ));
        return errs;
    }
    if !tz.split('/').all(valid_zone_part) {
        errs.push(Error::invalid(path, tz, format!("unknown time zone {tz}")));
        return errs;
    }
    if tz.eq_ignore_ascii_case("Local") {
        errs.push(Error::invalid(
            path,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    errs
}

fn validate_concurrency_policy(policy: Option<&str>, path: &Path) -> ErrorList {
    match policy.unwrap_or_default() {
        ALLOW | FORBID | REPLACE => ErrorList::new(),
        "" => ErrorList(vec![Error::required(path, "")]),
        other => ErrorList(vec![Error::not_supported(
            path,
            other,
            &[ALLOW, FORBID, REPLACE],
        )]),
    }
}

fn job_spec_of(spec: &CronJobSpec) -> JobSpec {
    spec.job_template.spec.clone().unwrap_or_default()
}

/// `ValidateJobTemplateSpec` at `path` (`spec.jobTemplate`): the Job spec
/// rules, no selector, no manual selector.
pub fn validate_job_template_spec(job: &JobSpec, path: &Path) -> ErrorList {
    let spec_path = path.child("spec");
    let mut errs = validate_job_spec_fields(job, &spec_path);
    if let Some(selector) = &job.selector {
        errs.push(Error::invalid(
            &spec_path.child("selector"),
            BadValue::Json(render::label_selector(selector)),
            "`selector` will be auto-generated",
        ));
    }
    if job.manual_selector == Some(true) {
        errs.push(Error::not_supported(
            &spec_path.child("manualSelector"),
            true,
            &["nil", "false"],
        ));
    }
    errs
}

/// `validateCronJobSpec` at `path` (`spec`); `old` is the stored spec on
/// update.
pub fn validate_cron_job_spec(
    spec: &CronJobSpec,
    old: Option<&CronJobSpec>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let schedule_path = path.child("schedule");
    if spec.schedule.is_empty() {
        errs.push(Error::required(&schedule_path, ""));
    } else {
        let allow_tz = old.is_some_and(|o| o.schedule.contains("TZ"));
        errs.append(validate_schedule_format(
            &spec.schedule,
            allow_tz,
            spec.time_zone.as_deref(),
            &schedule_path,
        ));
    }
    if let Some(deadline) = spec.starting_deadline_seconds {
        errs.append(validate_nonnegative_field(
            deadline,
            &path.child("startingDeadlineSeconds"),
        ));
    }
    if old.is_none_or(|o| o.time_zone != spec.time_zone) {
        errs.append(validate_time_zone(
            spec.time_zone.as_deref(),
            &path.child("timeZone"),
        ));
    }
    errs.append(validate_concurrency_policy(
        spec.concurrency_policy.as_deref(),
        &path.child("concurrencyPolicy"),
    ));
    errs.append(validate_job_template_spec(
        &job_spec_of(spec),
        &path.child("jobTemplate"),
    ));
    for (name, limit) in [
        (
            "successfulJobsHistoryLimit",
            spec.successful_jobs_history_limit,
        ),
        ("failedJobsHistoryLimit", spec.failed_jobs_history_limit),
    ] {
        if let Some(limit) = limit {
            errs.append(validate_nonnegative_field(
                i64::from(limit),
                &path.child(name),
            ));
        }
    }
    errs
}

/// `ValidateCronJobCreate`: metadata (name a DNS subdomain), the spec,
/// and a name of at most 52 characters.
pub fn validate_cron_job_create(cj: &CronJob) -> ErrorList {
    let mut errs = meta::validate_object_meta(&cj.metadata, true, NameRule::Subdomain);
    errs.append(validate_cron_job_spec(&cj.spec, None, &Path::new("spec")));
    let name = cj.metadata.name.as_deref().unwrap_or_default();
    if name.len() > MAX_CRON_JOB_NAME_LENGTH {
        errs.push(Error::invalid(
            &Path::new("metadata").child("name"),
            name,
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// `ValidateCronJobUpdate`: metadata update rules and the spec (the name
/// length is not checked again).
pub fn validate_cron_job_update(new: &CronJob, old: &CronJob) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_cron_job_spec(
        &new.spec,
        Some(&old.spec),
        &Path::new("spec"),
    ));
    errs
}

fn template_of(cj: &CronJob) -> PodTemplateSpec {
    job_spec_of(&cj.spec).template
}

fn template_path() -> Path {
    Path::new("spec")
        .child("jobTemplate")
        .child("spec")
        .child("template")
}

/// Create, update and status-update rules of batch/v1 CronJobs.
#[derive(Clone, Copy, Debug, Default)]
pub struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    type Object = CronJob;

    fn default(obj: &mut CronJob) {
        default_cron_job(obj);
    }

    fn prepare_for_create(obj: &mut CronJob) {
        obj.status = Some(CronJobStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &CronJob, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_cron_job_create(obj);
        errs.append(validate_template_eviction_responders(
            &template_of(obj),
            None,
            &template_path(),
            ctx.absent,
        ));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut CronJob, old: &CronJob) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(new: &CronJob, old: &CronJob, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_cron_job_update(new, old));
        errs.append(validate_template_eviction_responders(
            &template_of(new),
            Some(&template_of(old)),
            &template_path(),
            ctx.absent,
        ));
        errs
    }

    fn prepare_for_status_update(new: &mut CronJob, old: &CronJob) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &CronJob, old: &CronJob, _ctx: &Context<'_>) -> ErrorList {
        validate_common_fields(&new.metadata, &old.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};
    use serde_json::{Value, json};

    fn valid() -> Value {
        json!({
            "metadata": {"name": "mycronjob", "namespace": "default", "uid": "u"},
            "spec": {
                "schedule": "* * * * ?",
                "concurrencyPolicy": "Allow",
                "jobTemplate": {"spec": {"template": {"spec": {
                    "restartPolicy": "OnFailure",
                    "containers": [{"name": "c", "image": "image"}]
                }}}}
            }
        })
    }

    fn ctx(absent: &Absent) -> Context<'_> {
        Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent,
        }
    }

    fn create(v: &Value) -> Result<CronJob, ErrorList> {
        let absent = Absent::default();
        let mut cj: CronJob = serde_json::from_value(v.clone()).expect("cronjob");
        admit_create::<CronJobStrategy>(&mut cj, &ctx(&absent))
            .map(|()| {
                cj.metadata.resource_version = Some("1".into());
                cj
            })
            .map_err(|e| e.errors)
    }

    fn edit(f: impl FnOnce(&mut Value)) -> Value {
        let mut v = valid();
        f(&mut v);
        v
    }

    #[test]
    fn defaults() {
        let cj = create(&edit(|v| {
            v["spec"]
                .as_object_mut()
                .expect("spec")
                .remove("concurrencyPolicy");
        }))
        .expect("valid");
        let spec = &cj.spec;
        assert_eq!(spec.concurrency_policy.as_deref(), Some("Allow"));
        assert_eq!(spec.suspend, Some(false));
        assert_eq!(spec.successful_jobs_history_limit, Some(3));
        assert_eq!(spec.failed_jobs_history_limit, Some(1));
        let job = spec.job_template.spec.clone().expect("job spec");
        assert_eq!(job.backoff_limit, None);
        assert_eq!(
            job.template.spec.and_then(|s| s.dns_policy).as_deref(),
            Some("ClusterFirst")
        );
        assert_eq!(cj.metadata.generation, Some(1));
    }

    // What `kubectl create cronjob x --image=busybox --schedule='*/1 * * * *'` sends.
    #[test]
    fn kubectl_create_cronjob() {
        let v = json!({"kind": "CronJob", "apiVersion": "batch/v1",
            "metadata": {"name": "x", "namespace": "default", "creationTimestamp": null},
            "spec": {"jobTemplate": {"metadata": {"name": "x", "creationTimestamp": null},
                "spec": {"template": {"metadata": {"creationTimestamp": null},
                    "spec": {"containers": [{"name": "x", "image": "busybox", "resources": {}}], "restartPolicy": "OnFailure"}}}},
                "schedule": "*/1 * * * *"},
            "status": {}});
        assert!(create(&v).is_ok());
    }

    // Upstream TestValidateCronJob (error cases with their full errors).
    #[test]
    fn validate_cases() {
        for ok in [
            valid(),
            edit(|v| v["spec"]["schedule"] = json!("@hourly")),
            edit(|v| v["spec"]["schedule"] = json!("@every 5m")),
            edit(|v| v["spec"]["timeZone"] = json!("America/New_York")),
            edit(|v| v["spec"]["timeZone"] = json!("Etc/GMT+5")),
            edit(|v| v["spec"]["concurrencyPolicy"] = json!("Forbid")),
        ] {
            assert!(create(&ok).is_ok(), "{ok}");
        }
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "spec.schedule: Invalid value",
                edit(|v| v["spec"]["schedule"] = json!("error")),
                r#"spec.schedule: Invalid value: "error": expected exactly 5 fields, found 1: [error]"#,
            ),
            (
                "spec.schedule: Required value",
                edit(|v| v["spec"]["schedule"] = json!("")),
                "spec.schedule: Required value",
            ),
            (
                "spec.schedule: cannot use TZ",
                edit(|v| v["spec"]["schedule"] = json!("TZ=UTC 0 * * * *")),
                r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#,
            ),
            (
                "spec.schedule: cannot use CRON_TZ",
                edit(|v| v["spec"]["schedule"] = json!("CRON_TZ=UTC 0 * * * *")),
                r#"spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#,
            ),
            (
                "spec.timeZone: timeZone must be nil or non-empty string",
                edit(|v| v["spec"]["timeZone"] = json!("")),
                r#"spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string"#,
            ),
            (
                "spec.timeZone: timeZone must be an explicit time zone",
                edit(|v| v["spec"]["timeZone"] = json!("Local")),
                r#"spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"#,
            ),
            (
                "spec.timeZone: Invalid value: \" Continent/Zone\": unknown time zone",
                edit(|v| v["spec"]["timeZone"] = json!(" Continent/Zone")),
                r#"spec.timeZone: Invalid value: " Continent/Zone": unknown time zone  Continent/Zone"#,
            ),
            (
                "spec.timeZone: ../Zone",
                edit(|v| v["spec"]["timeZone"] = json!("Continent/../Zone")),
                r#"spec.timeZone: Invalid value: "Continent/../Zone": unknown time zone Continent/../Zone"#,
            ),
            (
                "spec.timeZone: too long",
                edit(|v| v["spec"]["timeZone"] = json!("Continent/ABCDEFGHIJKLMNOP")),
                r#"spec.timeZone: Invalid value: "Continent/ABCDEFGHIJKLMNOP": unknown time zone Continent/ABCDEFGHIJKLMNOP"#,
            ),
            (
                "spec.startingDeadlineSeconds:must be greater than or equal to 0",
                edit(|v| v["spec"]["startingDeadlineSeconds"] = json!(-1)),
                "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "spec.successfulJobsHistoryLimit: must be greater than or equal to 0",
                edit(|v| v["spec"]["successfulJobsHistoryLimit"] = json!(-1)),
                "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "spec.failedJobsHistoryLimit: must be greater than or equal to 0",
                edit(|v| v["spec"]["failedJobsHistoryLimit"] = json!(-1)),
                "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "spec.concurrencyPolicy: Unsupported value",
                edit(|v| v["spec"]["concurrencyPolicy"] = json!("Sometimes")),
                r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#,
            ),
            (
                "spec.jobTemplate.spec.parallelism:must be greater than or equal to 0",
                edit(|v| v["spec"]["jobTemplate"]["spec"]["parallelism"] = json!(-1)),
                "spec.jobTemplate.spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "spec.jobTemplate.spec.completions:must be greater than or equal to 0",
                edit(|v| v["spec"]["jobTemplate"]["spec"]["completions"] = json!(-1)),
                "spec.jobTemplate.spec.completions: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "spec.jobTemplate.spec.activeDeadlineSeconds:must be greater than or equal to 0",
                edit(|v| v["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] = json!(-1)),
                "spec.jobTemplate.spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "spec.jobTemplate.spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: `selector` will be auto-generated",
                edit(|v| {
                    v["spec"]["jobTemplate"]["spec"]["selector"] =
                        json!({"matchLabels": {"a": "b"}})
                }),
                r#"spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated"#,
            ),
            (
                "metadata.name: must be no more than 52 characters",
                edit(|v| {
                    v["metadata"]["name"] =
                        json!("10000000002000000000300000000040000000005000000000123")
                }),
                r#"metadata.name: Invalid value: "10000000002000000000300000000040000000005000000000123": must be no more than 52 characters"#,
            ),
            (
                "spec.jobTemplate.spec.manualSelector: Unsupported value",
                edit(|v| v["spec"]["jobTemplate"]["spec"]["manualSelector"] = json!(true)),
                r#"spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false""#,
            ),
            (
                "spec.jobTemplate.spec.template.spec.restartPolicy: Required value",
                edit(|v| {
                    v["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] =
                        json!("Always")
                }),
                r#"spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#,
            ),
            (
                "spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value",
                edit(|v| {
                    v["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] =
                        json!("Invalid")
                }),
                r#"[spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: "Always", "OnFailure", "Never", spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: "OnFailure", "Never"]"#,
            ),
            (
                "spec.jobTemplate.spec.ttlSecondsAfterFinished:must be greater than or equal to 0",
                edit(|v| v["spec"]["jobTemplate"]["spec"]["ttlSecondsAfterFinished"] = json!(-1)),
                "spec.jobTemplate.spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0",
            ),
        ];
        for (name, v, want) in cases {
            assert_eq!(create(&v).expect_err(name).to_string(), want, "{name}");
        }
    }

    // Upstream TestValidateCronJobUpdate / TestValidateCronJobScheduleTZ.
    #[test]
    fn update_cases() {
        let absent = Absent::default();
        let old = create(&valid()).expect("valid");
        let update = |old: &CronJob, f: &dyn Fn(&mut Value)| {
            let mut v = serde_json::to_value(old).expect("json");
            f(&mut v);
            let mut cj: CronJob = serde_json::from_value(v).expect("cj");
            admit_update::<CronJobStrategy>(&mut cj, old, &ctx(&absent))
                .map(|()| cj)
                .map_err(|e| e.errors)
        };
        let changed =
            update(&old, &|v| v["spec"]["schedule"] = json!("0 * * * *")).expect("schedule");
        assert_eq!(changed.metadata.generation, Some(2));
        assert!(update(&old, &|v| v["spec"]["schedule"] = json!("TZ=UTC 0 * * * *")).is_err());

        // A stored TZ schedule may be kept, but not together with timeZone.
        let mut tz_old = old.clone();
        tz_old.spec.schedule = "TZ=UTC 0 * * * *".into();
        assert!(
            update(&tz_old, &|v| v["spec"]["schedule"] =
                json!("CRON_TZ=UTC 0 * * * *"))
            .is_ok()
        );
        assert_eq!(
            update(&tz_old, &|v| v["spec"]["timeZone"] = json!("Europe/Berlin"))
                .expect_err("both")
                .to_string(),
            r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule"#
        );
        // Long names may be updated.
        let mut long = old.clone();
        long.metadata.name = Some("x".repeat(60));
        assert!(update(&long, &|v| v["spec"]["suspend"] = json!(true)).is_ok());
    }
}
