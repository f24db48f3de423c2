//! `metav1.Condition` list validation (`metav1validation.ValidateConditions`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::absent::Absent;
use crate::core::constants::{CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN};
use crate::field::{Error, ErrorList, Path};
use crate::formats;

/// Maximum length of a condition reason.
pub const MAX_REASON_LEN: usize = 1024;
/// Maximum length of a condition message.
pub const MAX_MESSAGE_LEN: usize = 32768;
const REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
const REASON_ERR: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

fn is_valid_reason(reason: &str) -> bool {
    let b = reason.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphabetic()
        && (b.len() == 1 || last.is_ascii_alphanumeric() || last == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// Validates one condition at `path` (`ValidateCondition`). `absent` tells
/// whether `lastTransitionTime` was missing from the submitted JSON (the
/// typed value then holds a default).
pub fn validate_condition(c: &Condition, path: &Path, absent: &Absent) -> ErrorList {
    let mut errs = formats::validate_qualified_name(&path.child("type"), &c.type_);
    let statuses = [CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN];
    if !statuses.contains(&c.status.as_str()) {
        errs.push(Error::not_supported(
            &path.child("status"),
            c.status.as_str(),
            &statuses,
        ));
    }
    if let Some(g) = c.observed_generation.filter(|g| *g < 0) {
        errs.push(Error::invalid(
            &path.child("observedGeneration"),
            g,
            "must be greater than or equal to zero",
        ));
    }
    let ltt = path.child("lastTransitionTime");
    if absent.contains(&ltt) || c.last_transition_time.0 == jiff::Timestamp::UNIX_EPOCH {
        errs.push(Error::required(&ltt, "must be set"));
    }
    if c.reason.is_empty() {
        errs.push(Error::required(&path.child("reason"), "must be set"));
    } else {
        if !is_valid_reason(&c.reason) {
            errs.push(Error::invalid(
                &path.child("reason"),
                c.reason.as_str(),
                formats::regex_error(
                    REASON_ERR,
                    REASON_FMT,
                    &[
                        "my_name",
                        "MY_NAME",
                        "MyName",
                        "ReasonA,ReasonB",
                        "ReasonA:ReasonB",
                    ],
                ),
            ));
        }
        if c.reason.len() > MAX_REASON_LEN {
            errs.push(Error::too_long(&path.child("reason"), MAX_REASON_LEN));
        }
    }
    if c.message.len() > MAX_MESSAGE_LEN {
        errs.push(Error::too_long(&path.child("message"), MAX_MESSAGE_LEN));
    }
    errs
}

/// Validates a condition list at `path`: duplicate types
/// (`Duplicate <path>[i].type`) and each condition.
pub fn validate_conditions(conditions: &[Condition], path: &Path, absent: &Absent) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        if seen.contains(&c.type_.as_str()) {
            errs.push(Error::duplicate(
                &path.index(i).child("type"),
                c.type_.as_str(),
            ));
        } else {
            seen.push(&c.type_);
        }
        errs.append(validate_condition(c, &path.index(i), absent));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn cond(t: &str, reason: &str) -> Condition {
        Condition {
            type_: t.into(),
            status: "True".into(),
            reason: reason.into(),
            message: String::new(),
            last_transition_time: Time("2026-01-01T00:00:00Z".parse().expect("valid time")),
            observed_generation: None,
        }
    }

    #[test]
    fn bad_type_and_reason_give_two_errors() {
        let errs = validate_conditions(
            &[cond("-bad-name", "-Reason")],
            &Path::new("status").child("conditions"),
            &Absent::default(),
        );
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["status.conditions[0].type", "status.conditions[0].reason"]
        );
    }

    #[test]
    fn reasons() {
        for ok in ["A", "AwaitingEviction", "a_", "ReasonA,ReasonB", "x:y"] {
            assert!(is_valid_reason(ok), "{ok}");
        }
        for bad in ["", "-Reason", "1a", "a,", "a b"] {
            assert!(!is_valid_reason(bad), "{bad}");
        }
    }
}
