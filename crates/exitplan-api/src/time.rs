//! Time helpers. Every component takes "now" from one injected clock as a
//! [`jiff::Timestamp`]; Kubernetes serializes `metav1.Time` with second
//! precision, so anything the system stamps is truncated to whole seconds
//! first (otherwise a value would change merely by being written and read).

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// `ts` with the sub-second part dropped (towards the past).
pub fn truncate_to_seconds(ts: Timestamp) -> Timestamp {
    let secs = ts.as_second() - i64::from(ts.subsec_nanosecond() < 0);
    Timestamp::from_second(secs).unwrap_or(ts)
}

/// A `metav1.Time` for `ts`, truncated to whole seconds as the wire format is.
pub fn mtime(ts: Timestamp) -> Time {
    Time(truncate_to_seconds(ts))
}

/// `ts` as Kubernetes renders it: `2026-11-29T15:02:43Z`.
pub fn format_rfc3339(ts: Timestamp) -> String {
    jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", ts).unwrap_or_else(|_| ts.to_string())
}

/// `ts + d`, saturating at the representable range instead of failing.
pub fn add(ts: Timestamp, d: SignedDuration) -> Timestamp {
    ts.checked_add(d).unwrap_or(if d.is_negative() {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// `a - b` as a signed duration.
pub fn since(a: Timestamp, b: Timestamp) -> SignedDuration {
    a.duration_since(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_and_formats() {
        let ts: Timestamp = "2026-11-29T15:02:43.987Z".parse().expect("valid timestamp");
        assert_eq!(format_rfc3339(mtime(ts).0), "2026-11-29T15:02:43Z");
        let neg: Timestamp = "1969-12-31T23:59:59.5Z".parse().expect("valid timestamp");
        assert_eq!(
            format_rfc3339(truncate_to_seconds(neg)),
            "1969-12-31T23:59:59Z"
        );
    }
}
