//! Back-off between `/eviction` calls (spec §8 "Evict step") and the
//! in-memory record of the last failed attempt per pod UID.
//!
//! The number of failures lives only in the status message
//! (`(attempts=N)`); the time of the last failure lives only in memory, so
//! after a restart the first retry is immediate.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use super::messages::recorded_attempts;
use super::{BACKOFF_BASE, MAX_BACKOFF};

/// `base × 2^exponent`, capped at `max`; an overflowing product yields `max`
/// (upstream `exponentialBackoff`). Integer arithmetic: identical to
/// upstream's float computation for every base whose nanoseconds a float64
/// represents exactly (all bases below ~104 days).
pub fn exponential_backoff(
    base: SignedDuration,
    max: SignedDuration,
    exponent: u64,
) -> SignedDuration {
    let Ok(base_ns) = i64::try_from(base.as_nanos()) else {
        return max;
    };
    let product = u32::try_from(exponent)
        .ok()
        .and_then(|e| 1i64.checked_shl(e).filter(|f| *f > 0))
        .and_then(|factor| base_ns.checked_mul(factor));
    match product {
        Some(ns) => SignedDuration::from_nanos(ns).min(max),
        // Either the factor or the product exceeds i64 nanoseconds.
        None if base_ns == 0 => SignedDuration::ZERO,
        None => max,
    }
}

/// How long to wait after the failure that made the recorded count
/// `attempts` before calling `/eviction` again: `5 s × 2^(max(N,1)−1)`,
/// capped at 10 min (`attempts = 0` — a record without a counted failure —
/// waits 5 s).
pub fn wait_after_attempts(attempts: u64) -> SignedDuration {
    exponential_backoff(BACKOFF_BASE, MAX_BACKOFF, attempts.saturating_sub(1))
}

/// The requeue delay after a failed call when `previous_attempts` failures
/// were recorded before it: `5 s × 2^previous` capped at 10 min, or the
/// server's suggested delay (Retry-After) when that is larger. (Before the
/// 3-minute heartbeat cap the sync applies.)
pub fn requeue_after_failure(
    previous_attempts: u64,
    retry_after: Option<SignedDuration>,
) -> SignedDuration {
    let backoff = exponential_backoff(BACKOFF_BASE, MAX_BACKOFF, previous_attempts);
    match retry_after {
        Some(delay) if backoff < delay => delay,
        _ => backoff,
    }
}

/// The remaining back-off before the next `/eviction` call, if the last
/// failed attempt (`attempt`) is recent enough to gate it; `None` when a call
/// is due. The count of failures is read from the current status message.
pub fn backoff_remaining(
    attempt: Option<&AttemptRecord>,
    last_message: &str,
    now: Timestamp,
) -> Option<SignedDuration> {
    let at = attempt?.at;
    let wait = wait_after_attempts(recorded_attempts(last_message));
    let remaining = exitplan_api::time::add(at, wait).duration_since(now);
    remaining.is_positive().then_some(remaining)
}

/// The in-memory time of the last failed `/eviction` call for a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    /// UID of the pod the call targeted (the key of the record).
    pub pod_uid: String,
    /// When the failed call was made.
    pub at: Timestamp,
}

/// A change to the in-memory attempt records the runtime must make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttemptUpdate {
    /// Remember (or overwrite) the time of a failed call.
    Record(AttemptRecord),
    /// Forget the record of this pod UID.
    Clear {
        /// UID of the pod whose record is dropped.
        pod_uid: String,
    },
}

/// The attempt records keyed by pod UID (upstream `lastEvictionAttempts`);
/// a plain map the runtime keeps behind its own lock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttemptRecords {
    by_pod_uid: HashMap<String, Timestamp>,
}

impl AttemptRecords {
    /// The record of `pod_uid`, if any.
    pub fn get(&self, pod_uid: &str) -> Option<AttemptRecord> {
        self.by_pod_uid.get(pod_uid).map(|at| AttemptRecord {
            pod_uid: pod_uid.to_owned(),
            at: *at,
        })
    }

    /// Applies an update produced by the decisions.
    pub fn apply(&mut self, update: AttemptUpdate) {
        match update {
            AttemptUpdate::Record(AttemptRecord { pod_uid, at }) => {
                self.by_pod_uid.insert(pod_uid, at);
            }
            AttemptUpdate::Clear { pod_uid } => {
                self.by_pod_uid.remove(&pod_uid);
            }
        }
    }

    /// Number of pods with a record.
    pub fn len(&self) -> usize {
        self.by_pod_uid.len()
    }

    /// Whether no pod has a record.
    pub fn is_empty(&self) -> bool {
        self.by_pod_uid.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_set_get_clear() {
        let t: Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let mut r = AttemptRecords::default();
        r.apply(AttemptUpdate::Record(AttemptRecord {
            pod_uid: "a".into(),
            at: t,
        }));
        r.apply(AttemptUpdate::Record(AttemptRecord {
            pod_uid: "b".into(),
            at: t,
        }));
        assert_eq!(r.get("a").map(|a| a.at), Some(t));
        r.apply(AttemptUpdate::Clear {
            pod_uid: "a".into(),
        });
        assert_eq!(r.get("a"), None);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn backoff_edges() {
        let s = SignedDuration::from_secs;
        assert_eq!(exponential_backoff(s(5), s(600), 0), s(5));
        assert_eq!(exponential_backoff(s(5), s(600), 63), s(600));
        assert_eq!(exponential_backoff(s(5), s(600), 64), s(600));
        assert_eq!(exponential_backoff(s(5), s(600), u64::MAX), s(600));
        assert_eq!(exponential_backoff(s(0), s(600), 70), s(0));
        assert_eq!(wait_after_attempts(0), s(5));
        assert_eq!(wait_after_attempts(1), s(5));
        assert_eq!(wait_after_attempts(2), s(10));
        assert_eq!(wait_after_attempts(u64::MAX), s(600));
        assert_eq!(requeue_after_failure(0, Some(s(3))), s(5));
        assert_eq!(requeue_after_failure(0, Some(s(30))), s(30));
        assert_eq!(requeue_after_failure(u64::MAX, None), s(600));
    }
}
