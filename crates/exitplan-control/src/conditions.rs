//! `metav1.Condition` bookkeeping shared by the controllers.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use exitplan_api::core::constants::CONDITION_TRUE;
use exitplan_api::time::mtime;

/// The controller-owned fields of a condition; the transition time is derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionSpec<'a> {
    /// Condition type.
    pub type_: &'a str,
    /// `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// Machine-readable reason.
    pub reason: &'a str,
    /// Human-readable message.
    pub message: &'a str,
    /// Generation the condition was computed from, if tracked.
    pub observed_generation: Option<i64>,
}

/// The condition of type `type_`, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether a condition of type `type_` is present with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == CONDITION_TRUE)
}

/// A condition built from `spec`: `lastTransitionTime` is `now` unless
/// `previous` had the same status and a non-zero transition time, which is
/// then kept (eviction spec §5.3; `meta.SetStatusCondition`'s rule).
pub fn derive(spec: &ConditionSpec<'_>, previous: Option<&Condition>, now: Timestamp) -> Condition {
    let last_transition_time = match previous {
        Some(p) if p.status == spec.status && p.last_transition_time.0 != Timestamp::UNIX_EPOCH => {
            p.last_transition_time.clone()
        }
        _ => mtime(now),
    };
    Condition {
        type_: spec.type_.to_owned(),
        status: spec.status.to_owned(),
        reason: spec.reason.to_owned(),
        message: spec.message.to_owned(),
        last_transition_time,
        observed_generation: spec.observed_generation,
    }
}

/// Sets a condition in a list (`meta.SetStatusCondition` with an injected
/// clock): appended if missing, otherwise updated in place, keeping the
/// transition time when the status does not change. Returns whether anything
/// changed.
pub fn set(conditions: &mut Vec<Condition>, spec: &ConditionSpec<'_>, now: Timestamp) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == spec.type_) {
        None => {
            conditions.push(derive(spec, None, now));
            true
        }
        Some(existing) => {
            let updated = derive(spec, Some(existing), now);
            let changed = *existing != updated;
            *existing = updated;
            changed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(status: &'static str) -> ConditionSpec<'static> {
        ConditionSpec {
            type_: "Failed",
            status,
            reason: "R",
            message: "m",
            observed_generation: None,
        }
    }

    #[test]
    fn transition_time_kept_while_status_unchanged() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let t1: Timestamp = "2026-01-01T00:05:00Z".parse().expect("time");
        let mut list = Vec::new();
        assert!(set(&mut list, &spec("False"), t0));
        assert!(!set(&mut list, &spec("False"), t1));
        assert_eq!(list[0].last_transition_time.0, t0);
        assert!(set(&mut list, &spec("True"), t1));
        assert_eq!(list[0].last_transition_time.0, t1);
        assert_eq!(list.len(), 1);
    }
}
