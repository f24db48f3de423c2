//! `spec.successPolicy` validation (upstream `validateSuccessPolicy` and
//! `validateSuccessPolicyRule`; gate JobSuccessPolicy, GA). Only reached
//! for Indexed Jobs: the caller reports "requires indexed completion mode"
//! otherwise.

use k8s_openapi::api::batch::v1::{JobSpec, SuccessPolicy, SuccessPolicyRule};

use super::indexes::validate_indexes_format;
use crate::field::{Error, ErrorList, Path};
use crate::nonnegative::validate_nonnegative_field;

/// At most this many success policy rules.
pub const MAX_RULES: usize = 20;
/// At most this many bytes in `succeededIndexes`.
pub const MAX_SUCCEEDED_INDEXES_LEN: usize = 64 * 1024;

/// Validates the rules of a success policy at `path` (`spec.successPolicy`).
pub fn validate_success_policy(spec: &JobSpec, policy: &SuccessPolicy, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let rules_path = path.child("rules");
    if policy.rules.is_empty() {
        errs.push(Error::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if policy.rules.len() > MAX_RULES {
        errs.push(Error::too_many(&rules_path, policy.rules.len(), MAX_RULES));
    }
    for (i, rule) in policy.rules.iter().enumerate() {
        errs.append(validate_success_policy_rule(
            spec,
            rule,
            &rules_path.index(i),
        ));
    }
    errs
}

/// One rule: at least one criterion; indexes well-formed and below
/// `completions`; the count non-negative and within both bounds.
///
/// Upstream dereferences `spec.completions` here without a nil check (an
/// Indexed Job without completions is already rejected with "Required");
/// this port reads a missing value as 0 instead of panicking.
pub fn validate_success_policy_rule(
    spec: &JobSpec,
    rule: &SuccessPolicyRule,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let completions = spec.completions.unwrap_or(0);
    if rule.succeeded_count.is_none() && rule.succeeded_indexes.is_none() {
        errs.push(Error::required(
            path,
            "at least one of succeededCount or succeededIndexes must be specified",
        ));
    }
    let mut total_indexes: i64 = 0;
    if let Some(indexes) = &rule.succeeded_indexes {
        let p = path.child("succeededIndexes");
        if indexes.len() > MAX_SUCCEEDED_INDEXES_LEN {
            errs.push(Error::too_long_detail(
                &p,
                format!("must have at most {MAX_SUCCEEDED_INDEXES_LEN} bytes"),
            ));
        }
        match validate_indexes_format(indexes, completions) {
            Ok(total) => total_indexes = total,
            Err(e) => errs.push(Error::invalid(
                &p,
                indexes.as_str(),
                format!("error parsing succeededIndexes: {e}"),
            )),
        }
    }
    if let Some(count) = rule.succeeded_count {
        let p = path.child("succeededCount");
        errs.append(validate_nonnegative_field(i64::from(count), &p));
        if count > completions {
            errs.push(Error::invalid(
                &p,
                count,
                format!(
                    "must be less than or equal to {completions} (the number of specified completions)"
                ),
            ));
        }
        if rule.succeeded_indexes.is_some() && i64::from(count) > total_indexes {
            errs.push(Error::invalid(
                &p,
                count,
                format!(
                    "must be less than or equal to {total_indexes} (the number of indexes in the specified succeededIndexes field)"
                ),
            ));
        }
    }
    errs
}
