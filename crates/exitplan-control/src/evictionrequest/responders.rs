//! The responder walk (§7.4-8/9, §5.2; cases 57, 65, 69–75).
//!
//! `status.targetResponders` is initialized once from the pod, sorted (§6),
//! and advanced **one step per sync**:
//!
//! ```text
//!   Inactive ──activate──▶ Active ──completionTime──────────▶ Completed
//!                            ├──── silent ≥ 20 min ─────────▶ Interrupted
//!                            ├──── target gone/terminal ────▶ Completed | Interrupted
//!                            └──── no Eviction intent ──────▶ Canceled
//! ```
//!
//! When the Active responder leaves Active during normal progression, the next
//! one becomes Active in the same step.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{ResponderStatus, TargetResponder};

use exitplan_api::lifecycle::constants::{
    GRACEFUL_COMPLETION_DELAY, HEARTBEAT_DEADLINE, STATE_ACTIVE, STATE_CANCELED, STATE_COMPLETED,
    STATE_INACTIVE, STATE_INTERRUPTED, is_final_state,
};

use super::target::pod_responders_with_default;

/// What the target situation lets the walk do (§7.4-7; mutually exclusive,
/// in this precedence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressionMode {
    /// Pod absent, or present with another UID.
    TargetGone,
    /// Pod phase Succeeded or Failed.
    TargetTerminal,
    /// No EvictionRequest with intent `Eviction` and without deletionTimestamp.
    Canceled,
    /// Normal progression.
    Normal,
}

/// The result of one progression step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progression {
    /// The walk was already over before this step: no responders, or the last
    /// one is final.
    pub done: bool,
    /// When to look again (heartbeat deadline or completion grace).
    pub resync: Option<SignedDuration>,
}

/// The initial `targetResponders` for a pod: its declared responders in
/// declaration order plus the default responder, all `Inactive` (unsorted).
pub fn initial_target_responders(pod: &Pod) -> Vec<TargetResponder> {
    pod_responders_with_default(pod)
        .into_iter()
        .map(|(name, priority)| TargetResponder {
            name: name.to_owned(),
            priority,
            state: STATE_INACTIVE.to_owned(),
        })
        .collect()
}

/// The current list copied if already initialized (names and priorities never
/// change), else the initial list from the pod found by name — even one with
/// another UID (§7.4-8 quirk) — with `true` for "freshly initialized".
/// Without a pod and without a list, empty (case 57).
pub fn get_or_initialize(
    current: &[TargetResponder],
    pod_by_name: Option<&Pod>,
) -> (Vec<TargetResponder>, bool) {
    if !current.is_empty() {
        return (current.to_vec(), false);
    }
    match pod_by_name {
        Some(pod) => (initial_target_responders(pod), true),
        None => (Vec::new(), false),
    }
}

/// The ResponderStatus entry named `name`.
pub(crate) fn find_status<'a>(
    statuses: &'a [ResponderStatus],
    name: &str,
) -> Option<&'a ResponderStatus> {
    statuses.iter().find(|s| s.name == name)
}

/// Index of the first responder in `state`.
pub(crate) fn find_state(responders: &[TargetResponder], state: &str) -> Option<usize> {
    responders.iter().position(|r| r.state == state)
}

/// How long to hold back the final condition so the Active responder can
/// report `completionTime` (case 75, upstream `shouldDeferCompletion`):
/// `deletionTimestamp + 5 s − now` while positive, for an Active responder that
/// has a status entry without `completionTime` and a pod (the one found by
/// name) with a deletionTimestamp. `None`: no deferral.
pub fn should_defer_completion(
    now: Timestamp,
    active_status: Option<&ResponderStatus>,
    pod: Option<&Pod>,
) -> Option<SignedDuration> {
    let status = active_status?;
    if status.completion_time.is_some() {
        return None;
    }
    let deleted_at = pod?.metadata.deletion_timestamp.as_ref()?.0;
    let remaining = GRACEFUL_COMPLETION_DELAY - now.duration_since(deleted_at);
    remaining.is_positive().then_some(remaining)
}

/// The Active (or about to be activated) responder's next state and resync
/// (upstream `computeResponderStateAndNextResync`):
/// no entry yet → Active for 20 min; `completionTime` → Completed; else the
/// last sign of life (`heartbeatTime`, else `startTime`, else now) decides:
/// silent for ≥ 20 min → Interrupted, otherwise Active until the deadline.
pub fn responder_state_and_resync(
    now: Timestamp,
    status: Option<&ResponderStatus>,
) -> (&'static str, Option<SignedDuration>) {
    let Some(status) = status else {
        return (STATE_ACTIVE, Some(HEARTBEAT_DEADLINE));
    };
    if status.completion_time.is_some() {
        return (STATE_COMPLETED, None);
    }
    let last = status
        .heartbeat_time
        .as_ref()
        .or(status.start_time.as_ref())
        .map_or(now, |t| t.0);
    let elapsed = now.duration_since(last);
    if elapsed >= HEARTBEAT_DEADLINE {
        (STATE_INTERRUPTED, None)
    } else {
        (STATE_ACTIVE, Some(HEARTBEAT_DEADLINE - elapsed))
    }
}

/// One progression step over **sorted** `responders` (upstream
/// `computeResponderProgression`); `statuses` is the current
/// `status.responders`, `pod` the pod found by name (for the completion grace).
pub fn progress(
    now: Timestamp,
    statuses: &[ResponderStatus],
    responders: &mut [TargetResponder],
    pod: Option<&Pod>,
    mode: ProgressionMode,
) -> Progression {
    let done = Progression {
        done: true,
        resync: None,
    };
    let Some(last) = responders.last() else {
        return done;
    };
    if is_final_state(&last.state) {
        return done;
    }
    let active = find_state(responders, STATE_ACTIVE);
    match mode {
        ProgressionMode::TargetGone | ProgressionMode::TargetTerminal => {
            // Never start a new responder once the target is gone.
            let Some(i) = active else {
                return Progression::default();
            };
            let status = find_status(statuses, &responders[i].name);
            if status.is_some_and(|s| s.completion_time.is_some()) {
                responders[i].state = STATE_COMPLETED.to_owned();
                return Progression::default();
            }
            if let Some(wait) = should_defer_completion(now, status, pod) {
                return Progression {
                    done: false,
                    resync: Some(wait),
                };
            }
            responders[i].state = STATE_INTERRUPTED.to_owned();
            Progression::default()
        }
        ProgressionMode::Canceled => {
            if let Some(i) = active {
                responders[i].state = STATE_CANCELED.to_owned();
            }
            Progression::default()
        }
        ProgressionMode::Normal => {
            // Unreachable for valid states (the last one is not final, so an
            // Active or Inactive one exists); unknown states make no progress.
            let Some(i) = active.or_else(|| find_state(responders, STATE_INACTIVE)) else {
                return Progression::default();
            };
            let status = find_status(statuses, &responders[i].name);
            let (state, mut resync) = responder_state_and_resync(now, status);
            responders[i].state = state.to_owned();
            if state != STATE_ACTIVE
                && let Some(next) = responders.get_mut(i + 1)
            {
                next.state = STATE_ACTIVE.to_owned();
                resync = Some(HEARTBEAT_DEADLINE);
            }
            Progression {
                done: false,
                resync,
            }
        }
    }
}
