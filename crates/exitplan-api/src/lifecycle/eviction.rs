//! Eviction (`lifecycle.k8s.io/v1alpha1`, spec §5.4): validation on create
//! and update, the declarative part of `/status` validation, and the
//! registry strategy. The handwritten `/status` rules (the responder state
//! machine and the time checks) are in [`super::eviction_status`].
//!
//! Error values that are not scalars are rendered by [`crate::render`].

use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionSpec, EvictionStatus, Requester, ResponderStatus, TargetResponder,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::constants::{
    MAX_PRIORITY, MAX_REQUESTERS, MAX_RESPONDER_MESSAGE, MAX_TARGET_RESPONDERS, STATES,
};
use super::eviction_status;
use super::evictionrequest::{
    validate_condition_count, validate_intent, validate_observed_generation, validate_target,
};
use crate::absent::Absent;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::keyed_list::validate_keyed_list;
use crate::meta::{self, NameRule};
use crate::nonnegative::validate_nonnegative_field;
use crate::render;
use crate::strategy::{Context, Strategy, next_generation, reset_metadata_for_status};

/// The registry strategy of Eviction (upstream
/// `pkg/registry/lifecycle/eviction/strategy.go`).
#[derive(Clone, Copy, Debug, Default)]
pub struct EvictionStrategy;

impl Strategy for EvictionStrategy {
    type Object = Eviction;

    /// Clears the status and starts the generation at 1.
    fn prepare_for_create(obj: &mut Eviction) {
        obj.status = Some(EvictionStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &Eviction, _ctx: &Context<'_>) -> ErrorList {
        validate_eviction_create(obj)
    }

    /// Keeps the stored status; bumps the generation only when the spec changed.
    fn prepare_for_update(new: &mut Eviction, old: &Eviction) {
        new.status.clone_from(&old.status);
        new.metadata.generation = next_generation(old.metadata.generation, new.spec != old.spec);
    }

    fn validate_update(new: &Eviction, old: &Eviction, _ctx: &Context<'_>) -> ErrorList {
        validate_eviction_update(new, old)
    }

    /// Copies the spec from the stored object and resets the metadata a
    /// `/status` write may not change.
    fn prepare_for_status_update(new: &mut Eviction, old: &Eviction) {
        new.spec.clone_from(&old.spec);
        reset_metadata_for_status(&mut new.metadata, &old.metadata);
    }

    fn validate_status_update(new: &Eviction, old: &Eviction, ctx: &Context<'_>) -> ErrorList {
        validate_eviction_status(new, old, ctx)
    }
}

fn pod_of(spec: &EvictionSpec) -> Option<(String, String)> {
    spec.target
        .pod
        .as_ref()
        .map(|p| (p.name.clone(), p.uid.clone()))
}

/// Validates a new Eviction: ObjectMeta, then `spec.target` (union, pod name
/// and UID). The status is wiped on create and not validated.
pub fn validate_eviction_create(obj: &Eviction) -> ErrorList {
    let mut errs = meta::validate_object_meta(&obj.metadata, true, NameRule::Subdomain);
    errs.append(validate_target(
        pod_of(&obj.spec),
        None,
        &Path::new("spec").child("target"),
    ));
    errs
}

/// Validates an update of the main resource: ObjectMeta update rules and an
/// immutable `spec.target` (labels and owner references are free).
pub fn validate_eviction_update(new: &Eviction, old: &Eviction) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_target(
        pod_of(&new.spec),
        Some(pod_of(&old.spec)),
        &Path::new("spec").child("target"),
    ));
    errs
}

/// The whole `/status` validation the strategy runs: the handwritten rules
/// ([`eviction_status::validate_eviction_status_update`]) followed by the
/// declarative ones ([`validate_eviction_status_declarative`]), in
/// kube-apiserver's order.
pub fn validate_eviction_status(new: &Eviction, old: &Eviction, ctx: &Context<'_>) -> ErrorList {
    let mut errs = eviction_status::validate_eviction_status_update(new, old, ctx);
    errs.append(validate_eviction_status_declarative(new, old, ctx));
    errs
}

/// The items of an optional list (`nil` and empty are the same, as for
/// apimachinery's semantic equality).
pub(crate) fn items<T>(list: &Option<Vec<T>>) -> &[T] {
    list.as_deref().unwrap_or_default()
}

/// The priority of `status.targetResponders[i]` as submitted: `None` when
/// the JSON lacked it (k8s-openapi then holds 0).
pub(crate) fn submitted_priority(t: &TargetResponder, i: usize, absent: &Absent) -> Option<i32> {
    let path = Path::new("status")
        .child("targetResponders")
        .index(i)
        .child("priority");
    (!absent.contains(&path)).then_some(t.priority)
}

/// The declarative `/status` rules (`zz_generated.validations.go`):
/// condition count; `observedGeneration`; `requesters` (≤ 100, unique names,
/// name and intent); `targetResponders` (≤ 11, unique names, name, priority
/// 0..100000 and immutable, state); `responders` (≤ 11, unique names, name,
/// `startTime`/`completionTime` immutable once set, message ≤ 4000
/// characters). Values deep-equal to the old ones (lists as a whole, items
/// correlated by name) are not validated again.
pub fn validate_eviction_status_declarative(
    new: &Eviction,
    old: &Eviction,
    ctx: &Context<'_>,
) -> ErrorList {
    let empty = EvictionStatus::default();
    let ns = new.status.as_ref().unwrap_or(&empty);
    let os = old.status.as_ref().unwrap_or(&empty);
    let path = Path::new("status");
    let mut errs = validate_condition_count(
        items(&ns.conditions),
        items(&os.conditions),
        &path.child("conditions"),
    );
    errs.append(validate_observed_generation(
        ns.observed_generation,
        os.observed_generation,
        &path.child("observedGeneration"),
    ));
    errs.append(validate_requesters(
        items(&ns.requesters),
        items(&os.requesters),
        &path.child("requesters"),
    ));
    errs.append(validate_target_responders(
        items(&ns.target_responders),
        items(&os.target_responders),
        &path.child("targetResponders"),
        ctx.absent,
    ));
    errs.append(validate_responders(
        items(&ns.responders),
        items(&os.responders),
        &path.child("responders"),
    ));
    errs
}

/// A required name in the prefixed-label-key format (Required short-circuits).
fn validate_name(path: &Path, name: &str) -> ErrorList {
    if name.is_empty() {
        ErrorList(vec![Error::required(path, "")])
    } else {
        formats::validate_prefixed_label_key(path, name)
    }
}

/// An item of a status list keyed by `name`.
trait Named {
    fn name(&self) -> &str;
}

impl Named for Requester {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for TargetResponder {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for ResponderStatus {
    fn name(&self) -> &str {
        &self.name
    }
}

/// The declarative rules of a status list keyed by `name`, ratcheted: nothing
/// when the list is empty or unchanged; the list-level rules
/// ([`validate_keyed_list`], `json` renders item `j`); then for each item
/// that is new or differs from the stored item of the same name, its name
/// (new items only) and `item(i, new, stored, item_path)`. `submitted(i)`
/// says whether item `i` carried every required field in the submitted JSON;
/// an item without them counts as changed.
fn validate_status_list<T: Named + PartialEq>(
    new: &[T],
    old: &[T],
    path: &Path,
    max: usize,
    json: impl Fn(usize, &T) -> String,
    submitted: impl Fn(usize) -> bool,
    mut item: impl FnMut(usize, &T, Option<&T>, &Path) -> ErrorList,
) -> ErrorList {
    if new.is_empty() || (new == old && (0..new.len()).all(&submitted)) {
        return ErrorList::new();
    }
    let mut errs = match validate_keyed_list(new, path, max, |t| t.name(), json) {
        Ok(errs) => errs,
        Err(too_many) => return too_many,
    };
    for (i, t) in new.iter().enumerate() {
        let stored = old.iter().find(|o| o.name() == t.name());
        if stored == Some(t) && submitted(i) {
            continue;
        }
        let item_path = path.index(i);
        if stored.is_none() {
            errs.append(validate_name(&item_path.child("name"), t.name()));
        }
        errs.append(item(i, t, stored, &item_path));
    }
    errs
}

fn validate_requesters(new: &[Requester], old: &[Requester], path: &Path) -> ErrorList {
    validate_status_list(
        new,
        old,
        path,
        MAX_REQUESTERS,
        |_, r| render::requester(r),
        |_| true,
        |_, r, stored, item_path| {
            if stored.map(|o| o.intent.as_str()) == Some(r.intent.as_str()) {
                return ErrorList::new();
            }
            validate_intent(&item_path.child("intent"), &r.intent)
        },
    )
}

fn validate_target_responders(
    new: &[TargetResponder],
    old: &[TargetResponder],
    path: &Path,
    absent: &Absent,
) -> ErrorList {
    let priorities: Vec<Option<i32>> = new
        .iter()
        .enumerate()
        .map(|(i, t)| submitted_priority(t, i, absent))
        .collect();
    let priority = |i: usize| priorities.get(i).copied().flatten();
    let mut states: Vec<&str> = STATES.to_vec();
    states.sort_unstable();
    validate_status_list(
        new,
        old,
        path,
        MAX_TARGET_RESPONDERS,
        |j, t| render::target_responder(t, priority(j)),
        |i| priority(i).is_some(),
        |i, t, stored, item_path| {
            let mut errs = ErrorList::new();
            let old_priority = stored.map(|o| o.priority);
            if old_priority.is_none() || old_priority != priority(i) {
                errs.append(validate_priority(
                    &item_path.child("priority"),
                    priority(i),
                    old_priority,
                ));
            }
            if stored.map(|o| o.state.as_str()) != Some(t.state.as_str()) {
                let state_path = item_path.child("state");
                if t.state.is_empty() {
                    errs.push(Error::required(&state_path, ""));
                } else if !STATES.contains(&t.state.as_str()) {
                    errs.push(Error::not_supported(&state_path, t.state.as_str(), &states));
                }
            }
            errs
        },
    )
}

/// `targetResponders[i].priority`: required, immutable once set (origin
/// `update`), then at most 100000 (origin `maximum`) and at least 0 (origin
/// `minimum`).
fn validate_priority(path: &Path, priority: Option<i32>, old: Option<i32>) -> ErrorList {
    let mut errs = ErrorList::new();
    if priority.is_none() {
        errs.push(Error::required(path, ""));
    }
    if old.is_some() {
        let detail = if priority.is_none() {
            "field cannot be cleared once set"
        } else {
            "field cannot be modified once set"
        };
        errs.push(Error::invalid(path, BadValue::Null, detail).with_origin("update"));
    }
    let Some(p) = priority.filter(|_| errs.is_empty()) else {
        return errs;
    };
    if p > MAX_PRIORITY {
        errs.push(
            Error::invalid(
                path,
                p,
                format!("must be less than or equal to {MAX_PRIORITY}"),
            )
            .with_origin("maximum"),
        );
    }
    errs.append(validate_nonnegative_field(i64::from(p), path));
    errs
}

/// NoUnset/NoModify on an optional time (origin `update`).
fn validate_frozen_time(path: &Path, new: Option<&Time>, old: Option<&Time>) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(old) = old
        && new != Some(old)
    {
        let detail = if new.is_none() {
            "field cannot be cleared once set"
        } else {
            "field cannot be modified once set"
        };
        errs.push(Error::invalid(path, BadValue::Null, detail).with_origin("update"));
    }
    errs
}

fn validate_responders(new: &[ResponderStatus], old: &[ResponderStatus], path: &Path) -> ErrorList {
    validate_status_list(
        new,
        old,
        path,
        MAX_TARGET_RESPONDERS,
        |_, r| render::responder_status(r),
        |_| true,
        |_, r, stored, item_path| {
            let mut errs = validate_frozen_time(
                &item_path.child("startTime"),
                r.start_time.as_ref(),
                stored.and_then(|o| o.start_time.as_ref()),
            );
            errs.append(validate_frozen_time(
                &item_path.child("completionTime"),
                r.completion_time.as_ref(),
                stored.and_then(|o| o.completion_time.as_ref()),
            ));
            if let Some(message) = &r.message
                && stored.and_then(|o| o.message.as_ref()) != Some(message)
                && message.chars().count() > MAX_RESPONDER_MESSAGE
            {
                errs.push(
                    Error::too_long_characters(&item_path.child("message"), MAX_RESPONDER_MESSAGE)
                        .with_origin("maxLength"),
                );
            }
            errs
        },
    )
}
