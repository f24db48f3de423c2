//! The handwritten `/status` rules of Eviction (spec §5.4 steps 1–8,
//! upstream `pkg/apis/lifecycle/validation`): frozen final conditions, the
//! frozen responder key set, reserved priorities, the order-independent
//! responder state machine, the heartbeat deadline, and the time checks on
//! each `ResponderStatus`.
//!
//! The state machine is judged on the responders in activation order (the
//! §6 sort of the submitted `targetResponders`, old states looked up by
//! name), so shuffling any list does not change the verdict; errors name the
//! index of the item in the submitted list (spec §11 #17).

use jiff::Timestamp;
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionStatus, ResponderStatus, TargetResponder,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::constants::{
    ALLOWED_CLOCK_SKEW, CONDITION_FAILED, CONDITION_TARGET_EVICTED, DEFAULT_RESPONDER_NAME,
    DEFAULT_RESPONDER_PRIORITY, HEARTBEAT_VALIDATION_DEADLINE, MAX_EXPECTED_COMPLETION,
    MAX_TARGET_RESPONDERS, MIN_USER_PRIORITY, MSG_CORE_RESPONDER_PRIORITY,
    MSG_HEARTBEAT_IN_PROGRESS, MSG_MISSING_COMPLETION_TIME, MSG_RESERVED_PRIORITY, STATE_ACTIVE,
    STATE_CANCELED, STATE_COMPLETED, STATE_INACTIVE, STATE_INTERRUPTED, is_final_state,
};
use super::eviction::{items, submitted_priority};
use super::sort;
use crate::conditions;
use crate::core::constants::CONDITION_TRUE;
use crate::field::{BadValue, Error, ErrorList, Path, go_quote};
use crate::meta::{self, FIELD_IMMUTABLE};
use crate::render;
use crate::strategy::Context;
use crate::time::add;

const REASON_FINAL_IMMUTABLE: &str = "final state is immutable";
const REASON_MUST_FINISH: &str = "this responder must reach a final state";
const REASON_STAYS_ACTIVE: &str = "the eviction request stays active";
const REASON_FINISHED: &str = "the eviction request has finished processing";
const REASON_NEXT_IN_LINE: &str = "this responder is next in line";
const REASON_NOT_FINISHED: &str = "the previously active has not finished processing";
const FINAL_STATES: &[&str] = &[STATE_CANCELED, STATE_COMPLETED, STATE_INTERRUPTED];

/// The handwritten `/status` validation of an Eviction (upstream
/// `ValidateEvictionStatusUpdate`): ObjectMeta update rules, each condition,
/// then §5.4 steps 1–8. Time comes from `ctx.now`; `ctx.absent` tells which
/// `targetResponders[i].priority` were missing from the submitted JSON.
pub fn validate_eviction_status_update(
    new: &Eviction,
    old: &Eviction,
    ctx: &Context<'_>,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let empty = EvictionStatus::default();
    let ns = new.status.as_ref().unwrap_or(&empty);
    let os = old.status.as_ref().unwrap_or(&empty);
    let conditions_path = Path::new("status").child("conditions");
    errs.append(conditions::validate_conditions(
        items(&ns.conditions),
        &conditions_path,
        ctx.absent,
    ));
    let (frozen_errs, is_final) = validate_frozen_conditions(ns, os, &conditions_path);
    errs.append(frozen_errs);
    errs.append(validate_target_responders(ns, os, is_final, ctx));
    errs.append(validate_responder_statuses(ns, os, ctx.now));
    errs
}

fn is_condition_true(list: &[Condition], type_: &str) -> bool {
    list.iter()
        .find(|c| c.type_ == type_)
        .is_some_and(|c| c.status == CONDITION_TRUE)
}

/// Step 1: a `TargetEvicted` or `Failed` condition that was True must stay
/// identical. Returns the errors and whether the Eviction is final (a
/// reverted condition still counts as True).
fn validate_frozen_conditions(
    ns: &EvictionStatus,
    os: &EvictionStatus,
    path: &Path,
) -> (ErrorList, bool) {
    let new_conds = items(&ns.conditions);
    let mut errs = ErrorList::new();
    let mut is_final = is_condition_true(new_conds, CONDITION_TARGET_EVICTED)
        || is_condition_true(new_conds, CONDITION_FAILED);
    for old_cond in items(&os.conditions) {
        let frozen = [CONDITION_TARGET_EVICTED, CONDITION_FAILED]
            .contains(&old_cond.type_.as_str())
            && old_cond.status == CONDITION_TRUE;
        if frozen && new_conds.iter().find(|c| c.type_ == old_cond.type_) != Some(old_cond) {
            errs.push(Error::invalid(
                path,
                BadValue::Json(render::list(ns.conditions.as_deref(), |_, c| {
                    render::condition(c)
                })),
                format!("{} condition status cannot be reverted", old_cond.type_),
            ));
            is_final = true;
        }
    }
    (errs, is_final)
}

/// The names of a keyed list, sorted.
fn sorted_names<'a, T: 'a>(list: &'a [T], name: impl Fn(&'a T) -> &'a str) -> Vec<&'a str> {
    let mut v: Vec<&str> = list.iter().map(name).collect();
    v.sort_unstable();
    v
}

/// Whether two sorted name lists hold the same keys; otherwise the detail
/// to report: `len_detail` when the lengths differ, else `keys_detail`.
fn key_set_mismatch(
    names: &[&str],
    expected: &[&str],
    len_detail: &'static str,
    keys_detail: &'static str,
) -> Option<&'static str> {
    if names.len() != expected.len() {
        Some(len_detail)
    } else if names != expected {
        Some(keys_detail)
    } else {
        None
    }
}

/// Whether the per-item rules can judge a list with these sorted names: it
/// is initialized (non-empty), within the maximum and without duplicate
/// names (otherwise the declarative rules report it).
fn judgeable(names: &[&str]) -> bool {
    !names.is_empty()
        && names.len() <= MAX_TARGET_RESPONDERS
        && !names.windows(2).any(|w| w[0] == w[1])
}

/// What state a responder may be in after this write, and why.
struct Expected {
    states: Vec<String>,
    reason: &'static str,
}

impl Expected {
    fn of(states: &[&str], reason: &'static str) -> Self {
        Expected {
            states: states.iter().map(|s| (*s).to_owned()).collect(),
            reason,
        }
    }

    fn allows(&self, state: &str) -> bool {
        self.states.iter().any(|s| s == state)
    }

    /// `must be one of: <sorted states>, because <reason>`.
    fn detail(&self) -> String {
        let mut states = self.states.clone();
        states.sort_unstable();
        format!(
            "must be one of: {}, because {}",
            states.join(", "),
            self.reason
        )
    }
}

/// Step 5: the expected state of every submitted target responder, indexed
/// like the submitted list, computed in activation order.
fn expected_states(
    new_tr: &[TargetResponder],
    old_tr: &[TargetResponder],
    priorities: &[Option<i32>],
    is_final: bool,
) -> Vec<Expected> {
    let mut order: Vec<usize> = (0..new_tr.len()).collect();
    order.sort_by(|&a, &b| {
        sort::compare(
            priorities.get(a).copied().flatten(),
            &new_tr[a].name,
            priorities.get(b).copied().flatten(),
            &new_tr[b].name,
        )
    });
    let old_state = |i: usize| {
        old_tr
            .iter()
            .find(|o| o.name == new_tr[i].name)
            .map(|o| o.state.as_str())
    };
    let active = order
        .iter()
        .position(|&i| old_state(i) == Some(STATE_ACTIVE));
    let never_active = old_tr.is_empty();
    let active_changed = active.is_some_and(|a| new_tr[order[a]].state != STATE_ACTIVE);

    let mut expected: Vec<Option<Expected>> = (0..new_tr.len()).map(|_| None).collect();
    for (k, &i) in order.iter().enumerate() {
        let previous = old_state(i);
        let e = if let Some(previous) = previous.filter(|s| is_final_state(s)) {
            Expected::of(&[previous], REASON_FINAL_IMMUTABLE)
        } else if active.is_some_and(|a| k < a) || (!never_active && active.is_none() && is_final) {
            Expected::of(&[previous.unwrap_or_default()], REASON_FINAL_IMMUTABLE)
        } else if active == Some(k) && active_changed {
            Expected::of(FINAL_STATES, REASON_MUST_FINISH)
        } else if active == Some(k) {
            if is_final {
                Expected::of(FINAL_STATES, REASON_FINISHED)
            } else {
                Expected::of(&[STATE_ACTIVE], REASON_STAYS_ACTIVE)
            }
        } else if (k == 0 && never_active) || (active.is_some_and(|a| k == a + 1) && active_changed)
        {
            if is_final {
                Expected::of(&[STATE_INACTIVE], REASON_FINISHED)
            } else {
                Expected::of(&[STATE_ACTIVE], REASON_NEXT_IN_LINE)
            }
        } else {
            Expected::of(&[STATE_INACTIVE], REASON_NOT_FINISHED)
        };
        if let Some(slot) = expected.get_mut(i) {
            *slot = Some(e);
        }
    }
    expected
        .into_iter()
        .map(|e| e.unwrap_or_else(|| Expected::of(&[STATE_INACTIVE], REASON_NOT_FINISHED)))
        .collect()
}

/// Steps 3–6 on `status.targetResponders`.
fn validate_target_responders(
    ns: &EvictionStatus,
    os: &EvictionStatus,
    is_final: bool,
    ctx: &Context<'_>,
) -> ErrorList {
    let path = Path::new("status").child("targetResponders");
    let new_tr = items(&ns.target_responders);
    let old_tr = items(&os.target_responders);
    let priorities: Vec<Option<i32>> = new_tr
        .iter()
        .enumerate()
        .map(|(i, t)| submitted_priority(t, i, ctx.absent))
        .collect();
    let list_value = || {
        BadValue::Json(render::list(ns.target_responders.as_deref(), |i, t| {
            render::target_responder(t, priorities.get(i).copied().flatten())
        }))
    };
    let mut errs = ErrorList::new();

    // Step 3: the key set is fixed once initialized.
    let new_names = sorted_names(new_tr, |t| t.name.as_str());
    if !old_tr.is_empty()
        && let Some(detail) = key_set_mismatch(
            &new_names,
            &sorted_names(old_tr, |t| t.name.as_str()),
            "must preserve the same length and the same keys",
            "must preserve the same keys",
        )
    {
        errs.push(Error::invalid(&path, list_value(), detail));
        return errs;
    }
    // Empty (not initialized), too long or with duplicate names (declarative
    // errors): no transition can be judged.
    if !judgeable(&new_names) {
        return errs;
    }

    let expected = expected_states(new_tr, old_tr, &priorities, is_final);
    let new_rs = items(&ns.responders);
    for (i, t) in new_tr.iter().enumerate() {
        let item_path = path.index(i);
        let priority = priorities.get(i).copied().flatten();
        errs.append(validate_reserved_priority(
            &item_path.child("priority"),
            &t.name,
            priority,
        ));

        // Step 6: the responder must be tracked in status.responders.
        let Some(rs) = new_rs.iter().find(|r| r.name == t.name) else {
            errs.push(Error::invalid(
                &item_path,
                BadValue::Json(render::target_responder(t, priority)),
                format!(
                    "{} has to be tracked in status.responders first",
                    go_quote(&t.name)
                ),
            ));
            continue;
        };
        let Some(expected) = expected.get(i) else {
            continue;
        };
        let state_path = item_path.child("state");
        let allowed = expected.allows(&t.state);
        if !allowed {
            errs.push(Error::invalid(
                &state_path,
                t.state.as_str(),
                expected.detail(),
            ));
        }
        if !expected.allows(STATE_ACTIVE) && heartbeat_pending(rs, is_final, ctx.now) {
            errs.push(Error::forbidden(&state_path, MSG_HEARTBEAT_IN_PROGRESS));
        }
        if allowed && t.state == STATE_COMPLETED && rs.completion_time.is_none() {
            errs.push(Error::invalid(
                &state_path,
                t.state.as_str(),
                MSG_MISSING_COMPLETION_TIME,
            ));
        }
    }
    errs
}

/// Step 4: the default responder must have its assigned priority; every
/// other name (including unknown `*.k8s.io` ones) may not use 0–999.
/// Missing or negative priorities are left to the declarative rules.
fn validate_reserved_priority(path: &Path, name: &str, priority: Option<i32>) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(p) = priority.filter(|p| *p >= 0) else {
        return errs;
    };
    if name == DEFAULT_RESPONDER_NAME {
        if p != DEFAULT_RESPONDER_PRIORITY {
            errs.push(Error::invalid(path, p, MSG_CORE_RESPONDER_PRIORITY));
        }
    } else if p < MIN_USER_PRIORITY {
        errs.push(Error::invalid(path, p, MSG_RESERVED_PRIORITY));
    }
    errs
}

/// Step 6 heartbeat rule: a started, unfinished responder of a non-final
/// Eviction is still within its deadline (`now < last + 20m − 30s`, with
/// `last = heartbeatTime ?? startTime` of the submitted entry).
fn heartbeat_pending(rs: &ResponderStatus, is_final: bool, now: Timestamp) -> bool {
    if is_final || rs.completion_time.is_some() {
        return false;
    }
    let Some(last) = rs.heartbeat_time.as_ref().or(rs.start_time.as_ref()) else {
        return false;
    };
    rs.start_time.is_some() && now < add(last.0, HEARTBEAT_VALIDATION_DEADLINE)
}

/// Steps 7–8 on `status.responders`.
fn validate_responder_statuses(
    ns: &EvictionStatus,
    os: &EvictionStatus,
    now: Timestamp,
) -> ErrorList {
    let path = Path::new("status").child("responders");
    let new_tr = items(&ns.target_responders);
    let new_rs = items(&ns.responders);
    let old_rs = items(&os.responders);
    let list_value = || {
        BadValue::Json(render::list(ns.responders.as_deref(), |_, r| {
            render::responder_status(r)
        }))
    };
    let mut errs = ErrorList::new();

    // Step 7: the same keys as the new targetResponders.
    let names = sorted_names(new_rs, |r| r.name.as_str());
    if let Some(detail) = key_set_mismatch(
        &names,
        &sorted_names(new_tr, |t| t.name.as_str()),
        "must be the same length as status.targetResponders and contain the same keys",
        "must contain the same keys as status.targetResponders",
    ) {
        errs.push(Error::invalid(&path, list_value(), detail));
        return errs;
    }
    if !judgeable(&names) {
        return errs;
    }

    // Step 8: each entry.
    for (i, rs) in new_rs.iter().enumerate() {
        let state = new_tr
            .iter()
            .find(|t| t.name == rs.name)
            .map_or("", |t| t.state.as_str());
        let old = old_rs.iter().find(|o| o.name == rs.name);
        errs.append(validate_responder_status(
            rs,
            old,
            state,
            &path.index(i),
            now,
        ));
    }
    errs
}

/// Whether `t` lies strictly inside `(now − 30s, now + 30s)`.
fn near(t: &Time, now: Timestamp) -> bool {
    t.0 > add(now, -ALLOWED_CLOCK_SKEW) && t.0 < add(now, ALLOWED_CLOCK_SKEW)
}

/// Step 8 for one entry: only the Active responder's entry may change; then
/// the rules for `startTime`, `heartbeatTime`, `expectedCompletionTime` and
/// `completionTime` (first failing rule per field wins).
fn validate_responder_status(
    new: &ResponderStatus,
    old: Option<&ResponderStatus>,
    state: &str,
    path: &Path,
    now: Timestamp,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(old) = old
        && old != new
        && state != STATE_ACTIVE
    {
        errs.push(
            Error::invalid(
                path,
                BadValue::Json(render::responder_status(new)),
                FIELD_IMMUTABLE,
            )
            .with_origin("immutable"),
        );
        return errs;
    }
    let old = old.cloned().unwrap_or_default();
    let start_path = path.child("startTime");
    let start = new.start_time.as_ref();

    // startTime (changing or removing a set one is the declarative rule's job).
    let start_frozen = old.start_time.is_some() && old.start_time != new.start_time;
    if !start_frozen {
        if start.is_none() && state == STATE_ACTIVE {
            errs.push(Error::required(
                &start_path,
                "is required for an active responder",
            ));
        } else if let Some(s) = start
            && old.start_time.as_ref() != Some(s)
            && !near(s, now)
        {
            errs.push(Error::invalid(
                &start_path,
                s,
                "must be set to the present time",
            ));
        }
    }

    let before_start = format!("cannot be set before {start_path} is set");
    let after_start = format!("must occur after {start_path}");

    // heartbeatTime
    let hb_path = path.child("heartbeatTime");
    if old.heartbeat_time.is_some() && new.heartbeat_time.is_none() {
        errs.push(Error::required(&hb_path, "is required once set"));
    }
    if let Some(hb) = &new.heartbeat_time
        && old.heartbeat_time.as_ref() != Some(hb)
    {
        let detail = match start {
            None => Some(before_start.clone()),
            Some(_) if old.heartbeat_time.as_ref().is_some_and(|o| hb.0 < o.0) => {
                Some("cannot be decreased".to_owned())
            }
            Some(s) if hb.0 < s.0 => Some(after_start.clone()),
            Some(_) if !near(hb, now) => Some("must be set to the present time".to_owned()),
            Some(_) => None,
        };
        if let Some(detail) = detail {
            errs.push(Error::invalid(&hb_path, hb, detail));
        }
    }

    // expectedCompletionTime (clearing it is allowed)
    if let Some(ect) = &new.expected_completion_time
        && old.expected_completion_time.as_ref() != Some(ect)
    {
        let detail = match start {
            None => Some(before_start.clone()),
            Some(s) if ect.0 < s.0 => Some(after_start.clone()),
            Some(_) if ect.0 < add(now, -ALLOWED_CLOCK_SKEW) => {
                Some("cannot be set to the past time".to_owned())
            }
            Some(_) if ect.0 > add(now, MAX_EXPECTED_COMPLETION) => {
                Some("must complete within 10 years".to_owned())
            }
            Some(_) => None,
        };
        if let Some(detail) = detail {
            errs.push(Error::invalid(
                &path.child("expectedCompletionTime"),
                ect,
                detail,
            ));
        }
    }

    // completionTime (changing or removing a set one is the declarative rule's job)
    let ct_frozen = old.completion_time.is_some() && old.completion_time != new.completion_time;
    if let Some(ct) = new.completion_time.as_ref().filter(|_| !ct_frozen) {
        let detail = match start {
            None => Some(before_start),
            Some(s) if ct.0 < s.0 => Some(after_start),
            Some(_) if old.completion_time.as_ref() != Some(ct) && !near(ct, now) => {
                Some("must be set to the present time".to_owned())
            }
            Some(_) => None,
        };
        if let Some(detail) = detail {
            errs.push(Error::invalid(&path.child("completionTime"), ct, detail));
        }
    }
    errs
}
