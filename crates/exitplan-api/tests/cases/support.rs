//! Helpers shared by the case modules of this test binary.

use exitplan_api::field::{ErrorList, ErrorType};
use jiff::Timestamp;

/// The clock the lifecycle cases run at.
pub fn now() -> Timestamp {
    "2026-07-01T12:00:00Z".parse().expect("valid timestamp")
}

/// Asserts `(type, field, origin)` of every error, in order.
pub fn assert_errors(errs: &ErrorList, want: &[(ErrorType, &str, Option<&str>)]) {
    let got: Vec<(ErrorType, &str, Option<&str>)> = errs
        .iter()
        .map(|e| (e.error_type, e.field.as_str(), e.origin.as_deref()))
        .collect();
    assert_eq!(got, want, "errors: {errs}");
}
