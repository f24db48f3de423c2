//! `syncEviction` (§7.4): the core state machine of one Eviction.
//!
//! ```text
//!  final? ──yes──▶ (nothing, ever again)
//!    │no
//!  duplicate / unsupported / PodGroup? ──▶ Failed=True/EvictionInvalid
//!    │no
//!  requesters ◀─ live EvictionRequests ∪ status leftovers (cap 100)
//!  flags: gone ▸ terminal ▸ canceled
//!  targetResponders: copy or initialize from pod, sort (§6)
//!  one progression step ──▶ conditions (§7.4-10) ──▶ full new status + resync
//! ```
//!
//! The returned status is the *complete* new `status`: the controller-owned
//! parts (conditions `Failed`/`TargetEvicted`, `observedGeneration`,
//! `requesters`, `targetResponders`, and `name`/`startTime` of every
//! `responders` entry) are replaced; responder-owned fields (`heartbeatTime`,
//! `expectedCompletionTime`, `completionTime`, `message`) and other condition
//! types are kept, as a Server-Side Apply by the controller's field manager
//! would leave them. It is `None` when nothing the controller owns changed.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionRequest, EvictionStatus, ResponderStatus, TargetResponder,
};

use exitplan_api::lifecycle::constants::{
    HEARTBEAT_DEADLINE, MAX_REQUESTERS, MSG_DUPLICATE_EVICTION, MSG_SCHEDULING_GROUP,
    MSG_UNSUPPORTED_TARGET, STATE_ACTIVE, TARGET_TYPE_POD,
};
use exitplan_api::lifecycle::sort::sort_target_responders;
use exitplan_api::time::mtime;

use super::completion::has_eviction_completed;
use super::metrics::EvictionMetrics;
use super::outcome::Outcome;
use super::relevant::find_relevant_eviction;
use super::requesters::{aggregate_requesters, has_eviction_intent};
use super::responders::{
    ProgressionMode, find_state, find_status, get_or_initialize, progress, should_defer_completion,
};
use super::target::Target;

/// Everything `sync_eviction` looks at.
#[derive(Clone, Copy, Debug)]
pub struct EvictionSyncInput<'a> {
    /// The Eviction to sync.
    pub eviction: &'a Eviction,
    /// The pod named `spec.target.pod.name` in the Eviction's namespace, if
    /// any (whatever its UID).
    pub pod: Option<&'a Pod>,
    /// All Evictions of the same target (index `<ns>/pod/<uid>`), including this one.
    pub target_evictions: &'a [&'a Eviction],
    /// All EvictionRequests of the same target (index `<ns>/pod/<uid>`).
    pub target_requests: &'a [&'a EvictionRequest],
}

/// What to do after an Eviction sync.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvictionSyncPlan {
    /// The complete new status to write, if anything controller-owned changed.
    pub status: Option<EvictionStatus>,
    /// Sync this Eviction again after this long (heartbeat deadline or
    /// completion grace), whether or not a status is written.
    pub requeue_after: Option<SignedDuration>,
    /// Gauge values, when the responder walk was evaluated.
    pub metrics: Option<EvictionMetrics>,
}

/// Same object: name and UID equal.
fn same_object(a: &Eviction, b: &Eviction) -> bool {
    a.metadata.uid == b.metadata.uid && a.metadata.name == b.metadata.name
}

/// One sync of an Eviction (§7.4) at `now`.
pub fn sync_eviction(input: &EvictionSyncInput<'_>, now: Timestamp) -> EvictionSyncPlan {
    let eviction = input.eviction;
    // 1. A final Eviction is never touched again.
    if has_eviction_completed(eviction) {
        return EvictionSyncPlan::default();
    }
    let target = Target::of_eviction(&eviction.spec.target, input.pod);
    let current = eviction.status.clone().unwrap_or_default();
    let generation = eviction.metadata.generation;
    let generation_changed = generation.is_some() && current.observed_generation != generation;

    // 3.–4. Duplicate check and early validation.
    let relevant = find_relevant_eviction(input.target_evictions);
    let is_duplicate = relevant
        .eviction
        .is_some_and(|r| !has_eviction_completed(r) && !same_object(r, eviction));
    if let Some(message) = early_validation(&target, is_duplicate) {
        return invalid(&current, generation, generation_changed, message, now);
    }

    // 6. Requesters.
    let requesters = aggregate_requesters(
        current.requesters.as_deref().unwrap_or_default(),
        input.target_requests,
        MAX_REQUESTERS,
    );
    let mut changed = requesters.changed;

    // 7. Target flags, in precedence.
    let mode = if target.is_gone() {
        ProgressionMode::TargetGone
    } else if target.is_terminal() {
        ProgressionMode::TargetTerminal
    } else if !has_eviction_intent(input.target_requests) {
        ProgressionMode::Canceled
    } else {
        ProgressionMode::Normal
    };

    // 8. Responder list: copy or initialize, then sort.
    let current_statuses = current.responders.as_deref().unwrap_or_default();
    let (mut responders, initialized) = get_or_initialize(
        current.target_responders.as_deref().unwrap_or_default(),
        target.pod_by_name(),
    );
    changed |= initialized;
    sort_target_responders(&mut responders);
    let before = responders.clone();

    // 9. One progression step.
    let pod = target.found_pod();
    let progression = progress(now, current_statuses, &mut responders, pod, mode);
    changed |= before != responders;

    // 10. Status apply.
    let (statuses, started) = responder_statuses(current_statuses, &responders, now);
    changed |= started;
    let active_status = find_state(&responders, STATE_ACTIVE)
        .and_then(|i| find_status(current_statuses, &responders[i].name));
    let (requeue_after, waiting) = match mode {
        ProgressionMode::TargetGone | ProgressionMode::TargetTerminal => {
            let wait = should_defer_completion(now, active_status, pod);
            (wait, wait.is_some())
        }
        _ => (progression.resync, false),
    };
    let outcome = match mode {
        ProgressionMode::TargetGone if !waiting => Outcome::PodDeleted,
        ProgressionMode::TargetTerminal if !waiting => Outcome::PodTerminal,
        ProgressionMode::Canceled => Outcome::Canceled,
        _ if progression.done => Outcome::NoFurtherResponder,
        _ => Outcome::Awaiting,
    };
    let mut conditions = current.conditions.clone().unwrap_or_default();
    changed |= outcome.apply(&mut conditions, now);

    let metrics = EvictionMetrics {
        target_name: target.name().unwrap_or_default().to_owned(),
        target_type: TARGET_TYPE_POD,
        responder_states: responders
            .iter()
            .map(|r| (r.name.clone(), r.state.clone()))
            .collect(),
    };
    let status = (changed || generation_changed).then(|| EvictionStatus {
        conditions: Some(conditions),
        observed_generation: generation.or(current.observed_generation),
        requesters: Some(requesters.requesters),
        responders: Some(statuses),
        target_responders: Some(responders),
    });
    EvictionSyncPlan {
        status,
        requeue_after,
        metrics: Some(metrics),
    }
}

/// §7.4-4: the first failing early-validation rule's message.
///
/// Upstream checks the PodGroup membership of the pod found **by name**, even
/// a replacement with another UID; that is kept.
fn early_validation(target: &Target<'_>, is_duplicate: bool) -> Option<&'static str> {
    if !target.is_pod() {
        Some(MSG_UNSUPPORTED_TARGET)
    } else if is_duplicate {
        Some(MSG_DUPLICATE_EVICTION)
    } else if target.has_scheduling_group() {
        Some(MSG_SCHEDULING_GROUP)
    } else {
        None
    }
}

/// The early-validation write: `Failed=True/EvictionInvalid` + observedGeneration,
/// when either changed.
///
/// An Eviction whose walk already has an Active responder cannot be failed
/// validly (status validation requires the Active responder to reach a final
/// state in the same write). Upstream's apply is rejected there — it persists
/// nothing and retries with back-off; here no write is planned and the
/// Eviction is looked at again after the heartbeat deadline, so it is not
/// forgotten if no event of its own arrives.
fn invalid(
    current: &EvictionStatus,
    generation: Option<i64>,
    generation_changed: bool,
    message: &str,
    now: Timestamp,
) -> EvictionSyncPlan {
    let has_active = current
        .target_responders
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|r| r.state == STATE_ACTIVE);
    if has_active {
        return EvictionSyncPlan {
            requeue_after: Some(HEARTBEAT_DEADLINE),
            ..EvictionSyncPlan::default()
        };
    }
    let mut conditions = current.conditions.clone().unwrap_or_default();
    let changed = Outcome::Invalid(message).apply(&mut conditions, now);
    let status = (changed || generation_changed).then(|| EvictionStatus {
        conditions: Some(conditions),
        observed_generation: generation.or(current.observed_generation),
        ..current.clone()
    });
    EvictionSyncPlan {
        status,
        ..Default::default()
    }
}

/// One ResponderStatus per target responder, in activation order: the
/// existing entry (responder-owned fields kept) or a new one with the name
/// only; an Active responder without `startTime` gets `now` — reported as a
/// change.
fn responder_statuses(
    current: &[ResponderStatus],
    responders: &[TargetResponder],
    now: Timestamp,
) -> (Vec<ResponderStatus>, bool) {
    let mut started = false;
    let statuses = responders
        .iter()
        .map(|r| {
            let mut entry =
                find_status(current, &r.name)
                    .cloned()
                    .unwrap_or_else(|| ResponderStatus {
                        name: r.name.clone(),
                        ..Default::default()
                    });
            if entry.start_time.is_none() && r.state == STATE_ACTIVE {
                entry.start_time = Some(mtime(now));
                started = true;
            }
            entry
        })
        .collect();
    (statuses, started)
}
