//! JobSpec validation (upstream `ValidateJobSpec` / `validateJobSpec`;
//! job-failure spec §10.5, rules S1–S17).
//!
//! Order inside [`validate_job_spec_fields`], as upstream appends: numeric
//! fields → `maxFailedIndexes`/`backoffLimitPerIndex` pairing → `managedBy`
//! → completion mode and the Indexed-only limits → NonIndexed misuse of
//! per-index fields → podFailurePolicy → successPolicy →
//! podReplacementPolicy → pod template → the Job's restartPolicy chain
//! (S15–S17, at most one error). [`validate_job_spec`] then adds the
//! selector checks.

use k8s_openapi::api::batch::v1::JobSpec;

use super::constants::{
    COMPLETION_INDEXED, COMPLETION_NON_INDEXED, REPLACEMENT_FAILED,
    REPLACEMENT_TERMINATING_OR_FAILED, RESTART_POLICY_ALWAYS, RESTART_POLICY_NEVER,
    RESTART_POLICY_ON_FAILURE,
};
use super::job::JobValidationOptions;
use super::pod_failure_policy::validate_pod_failure_policy;
use super::pod_template::validate_pod_template_spec;
use super::success_policy::validate_success_policy;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::nonnegative::validate_nonnegative_field;
use crate::render;
use crate::selector::{as_selector, validate_label_selector};

/// Highest parallelism of an Indexed Job.
pub const MAX_PARALLELISM_FOR_INDEXED_JOB: i32 = 100_000;
/// Highest `maxFailedIndexes` of an Indexed Job.
pub const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i32 = 100_000;
/// Above this many completions, per-index backoff needs tighter limits.
pub const COMPLETIONS_SOFT_LIMIT: i32 = 100_000;
/// Highest parallelism above [`COMPLETIONS_SOFT_LIMIT`] with per-index backoff.
pub const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i32 = 10_000;
/// Highest `maxFailedIndexes` above [`COMPLETIONS_SOFT_LIMIT`].
pub const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS: i32 = 10_000;
/// Longest `managedBy`.
pub const MAX_MANAGED_BY_LENGTH: usize = 63;

const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";

/// `ValidateJobSpec`: the spec rules, the selector (required, well-formed)
/// and that the selector matches the template labels.
pub fn validate_job_spec(spec: &JobSpec, path: &Path, opts: &JobValidationOptions) -> ErrorList {
    let mut errs = validate_job_spec_fields(spec, path);
    match &spec.selector {
        None => errs.push(Error::required(&path.child("selector"), "")),
        Some(sel) => errs.append(validate_label_selector(
            Some(sel),
            opts.allow_invalid_label_value_in_selector,
            &path.child("selector"),
        )),
    }
    if let Ok(selector) = as_selector(spec.selector.as_ref()) {
        let labels = spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref());
        if !selector.matches(labels) {
            let value = match labels {
                Some(l) => BadValue::Json(render::string_map(l)),
                None => BadValue::Null,
            };
            errs.push(Error::invalid(
                &path.child("template").child("metadata").child("labels"),
                value,
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs
}

/// `validateJobSpec`: everything but the selector (shared with CronJob
/// job templates upstream).
pub fn validate_job_spec_fields(spec: &JobSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let nonneg = |errs: &mut ErrorList, v: Option<i64>, name: &str| {
        if let Some(v) = v {
            errs.append(validate_nonnegative_field(v, &path.child(name)));
        }
    };
    nonneg(&mut errs, spec.parallelism.map(i64::from), "parallelism");
    nonneg(&mut errs, spec.completions.map(i64::from), "completions");
    nonneg(
        &mut errs,
        spec.active_deadline_seconds,
        "activeDeadlineSeconds",
    );
    nonneg(&mut errs, spec.backoff_limit.map(i64::from), "backoffLimit");
    nonneg(
        &mut errs,
        spec.ttl_seconds_after_finished.map(i64::from),
        "ttlSecondsAfterFinished",
    );
    nonneg(
        &mut errs,
        spec.backoff_limit_per_index.map(i64::from),
        "backoffLimitPerIndex",
    );
    if let Some(mfi) = spec.max_failed_indexes {
        errs.append(validate_nonnegative_field(
            i64::from(mfi),
            &path.child("maxFailedIndexes"),
        ));
        if spec.backoff_limit_per_index.is_none() {
            errs.push(Error::required(
                &path.child("backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(managed_by) = &spec.managed_by {
        let p = path.child("managedBy");
        errs.append(validate_domain_prefixed_path(&p, managed_by));
        if managed_by.len() > MAX_MANAGED_BY_LENGTH {
            errs.push(Error::too_long_detail(
                &p,
                format!("may not be longer than {MAX_MANAGED_BY_LENGTH}"),
            ));
        }
    }
    errs.append(validate_completion_mode(spec, path));
    if let Some(policy) = &spec.pod_failure_policy {
        errs.append(validate_pod_failure_policy(
            spec,
            policy,
            &path.child("podFailurePolicy"),
        ));
    }
    if let Some(policy) = &spec.success_policy {
        let p = path.child("successPolicy");
        if spec.completion_mode.as_deref() != Some(COMPLETION_INDEXED) {
            errs.push(Error::invalid(
                &p,
                BadValue::Json(render::success_policy(policy)),
                "requires indexed completion mode",
            ));
        } else {
            errs.append(validate_success_policy(spec, policy, &p));
        }
    }
    errs.append(validate_pod_replacement_policy(
        spec,
        &path.child("podReplacementPolicy"),
    ));
    errs.append(validate_pod_template_spec(
        &spec.template,
        &path.child("template"),
    ));
    errs.append(validate_restart_policy(spec, path));
    errs
}

/// The completion mode enum, the Indexed-only limits (S7–S11) and the
/// per-index fields on NonIndexed Jobs (S5, S6).
fn validate_completion_mode(spec: &JobSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(mode) = &spec.completion_mode {
        if mode != COMPLETION_NON_INDEXED && mode != COMPLETION_INDEXED {
            errs.push(Error::not_supported(
                &path.child("completionMode"),
                mode.as_str(),
                &[COMPLETION_NON_INDEXED, COMPLETION_INDEXED],
            ));
        }
        if mode == COMPLETION_INDEXED {
            errs.append(validate_indexed_limits(spec, path));
        }
    }
    if spec
        .completion_mode
        .as_deref()
        .is_none_or(|m| m == COMPLETION_NON_INDEXED)
    {
        if let Some(v) = spec.backoff_limit_per_index {
            errs.push(Error::invalid(
                &path.child("backoffLimitPerIndex"),
                v,
                "requires indexed completion mode",
            ));
        }
        if let Some(v) = spec.max_failed_indexes {
            errs.push(Error::invalid(
                &path.child("maxFailedIndexes"),
                v,
                "requires indexed completion mode",
            ));
        }
    }
    errs
}

fn validate_indexed_limits(spec: &JobSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mfi_path = path.child("maxFailedIndexes");
    if spec.completions.is_none() {
        errs.push(Error::required(
            &path.child("completions"),
            format!("when completion mode is {COMPLETION_INDEXED}"),
        ));
    }
    if let Some(p) = spec
        .parallelism
        .filter(|p| *p > MAX_PARALLELISM_FOR_INDEXED_JOB)
    {
        errs.push(Error::invalid(
            &path.child("parallelism"),
            p,
            format!(
                "must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is {COMPLETION_INDEXED}"
            ),
        ));
    }
    if let (Some(c), Some(m)) = (spec.completions, spec.max_failed_indexes)
        && m > c
    {
        errs.push(Error::invalid(
            &mfi_path,
            m,
            "must be less than or equal to completions",
        ));
    }
    if let Some(m) = spec
        .max_failed_indexes
        .filter(|m| *m > MAX_FAILED_INDEXES_FOR_INDEXED_JOB)
    {
        errs.push(Error::invalid(
            &mfi_path,
            m,
            format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"),
        ));
    }
    if spec.completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT)
        && spec.backoff_limit_per_index.is_some()
    {
        if spec.max_failed_indexes.is_none() {
            errs.push(Error::required(
                &mfi_path,
                format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            ));
        }
        let high = format!(
            "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        if let Some(p) = spec
            .parallelism
            .filter(|p| *p > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
        {
            errs.push(Error::invalid(
                &path.child("parallelism"),
                p,
                format!(
                    "must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
        if let Some(m) = spec
            .max_failed_indexes
            .filter(|m| *m > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS)
        {
            errs.push(Error::invalid(
                &mfi_path,
                m,
                format!(
                    "must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
    }
    errs
}

/// S13/S14: with a podFailurePolicy only `Failed`; otherwise `Failed` or
/// `TerminatingOrFailed`.
fn validate_pod_replacement_policy(spec: &JobSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(policy) = &spec.pod_replacement_policy else {
        return errs;
    };
    if spec.pod_failure_policy.is_some() {
        if policy != REPLACEMENT_FAILED {
            errs.push(Error::not_supported(
                path,
                policy.as_str(),
                &[REPLACEMENT_FAILED],
            ));
        }
    } else if policy != REPLACEMENT_FAILED && policy != REPLACEMENT_TERMINATING_OR_FAILED {
        errs.push(Error::not_supported(
            path,
            policy.as_str(),
            &[REPLACEMENT_FAILED, REPLACEMENT_TERMINATING_OR_FAILED],
        ));
    }
    errs
}

/// S15–S17: `Always`/empty is Required, anything but OnFailure/Never is
/// NotSupported, and OnFailure is Invalid under a podFailurePolicy (even
/// one with zero rules).
fn validate_restart_policy(spec: &JobSpec, path: &Path) -> ErrorList {
    let p = path.child("template").child("spec").child("restartPolicy");
    let policy = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or_default();
    let err = if policy == RESTART_POLICY_ALWAYS || policy.is_empty() {
        Some(Error::required(
            &p,
            format!(
                "valid values: {}, {}",
                crate::field::go_quote(RESTART_POLICY_ON_FAILURE),
                crate::field::go_quote(RESTART_POLICY_NEVER)
            ),
        ))
    } else if policy != RESTART_POLICY_ON_FAILURE && policy != RESTART_POLICY_NEVER {
        Some(Error::not_supported(
            &p,
            policy,
            &[RESTART_POLICY_ON_FAILURE, RESTART_POLICY_NEVER],
        ))
    } else if spec.pod_failure_policy.is_some() && policy != RESTART_POLICY_NEVER {
        Some(Error::invalid(
            &p,
            policy,
            format!(
                "only {} is supported when podFailurePolicy is specified",
                crate::field::go_quote(RESTART_POLICY_NEVER)
            ),
        ))
    } else {
        None
    };
    err.into_iter().collect()
}

/// `IsDomainPrefixedPath`: `<DNS subdomain>/<HTTP path>` (`acme.io/foo`).
pub fn validate_domain_prefixed_path(path: &Path, value: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    if value.is_empty() {
        errs.push(Error::required(path, ""));
        return errs;
    }
    let (host, rest) = match value.split_once('/') {
        Some((h, r)) if !h.is_empty() && !r.is_empty() => (h, r),
        _ => {
            errs.push(Error::invalid(
                path,
                value,
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            ));
            return errs;
        }
    };
    for msg in formats::is_dns1123_subdomain(host) {
        errs.push(Error::invalid(path, host, msg));
    }
    let valid_path = rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b));
    if !valid_path {
        errs.push(Error::invalid(
            path,
            rest,
            formats::regex_error("must be a valid path", HTTP_PATH_FMT, &[]),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_prefixed_paths() {
        let p = Path::new("spec").child("managedBy");
        assert!(validate_domain_prefixed_path(&p, "example.com/foo").is_empty());
        assert_eq!(
            validate_domain_prefixed_path(&p, "invalid custom controller name").to_string(),
            r#"spec.managedBy: Invalid value: "invalid custom controller name": must be a domain-prefixed path (such as "acme.io/foo")"#
        );
        assert_eq!(
            validate_domain_prefixed_path(&p, "example.com/a b").to_string(),
            r#"spec.managedBy: Invalid value: "a b": must be a valid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')"#
        );
        assert_eq!(validate_domain_prefixed_path(&p, "Example.com/a").len(), 1);
    }
}
