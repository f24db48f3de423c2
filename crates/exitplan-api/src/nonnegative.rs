//! `ValidateNonnegativeField` (apimachinery): ObjectMeta `generation`, Job
//! spec and status counters, PodDisruptionBudget spec and status, responder
//! priorities.

use crate::field::{Error, ErrorList, Path};

/// Upstream's `IsNegativeErrorMsg`.
pub const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";

/// An `Invalid` error (origin `minimum`) when `value` is negative.
pub fn validate_nonnegative_field(value: i64, path: &Path) -> ErrorList {
    if value < 0 {
        ErrorList(vec![
            Error::invalid(path, value, IS_NEGATIVE_ERROR_MSG).with_origin("minimum"),
        ])
    } else {
        ErrorList::new()
    }
}
