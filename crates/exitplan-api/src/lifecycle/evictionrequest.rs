//! EvictionRequest (`lifecycle.k8s.io/v1alpha1`, spec §4): validation on
//! create, update and `/status` update, and the registry strategy (§4.3).
//!
//! Upstream splits the rules between handwritten validation
//! (`pkg/apis/lifecycle/validation`: ObjectMeta, conditions) and declarative
//! validation (`zz_generated.validations.go`: everything tagged on the
//! types). The apiserver reports the handwritten errors first, then the
//! declarative ones; the functions here do the same. Declarative rules are
//! "ratcheted": on update, a value deep-equal to the old one is not
//! validated again.
//!
//! The helpers shared with [`super::eviction`] (pod target, observed
//! generation, condition count) live here as `pub(crate)` functions.

use k8s_openapi::api::lifecycle::v1alpha1::{
    EvictionRequest, EvictionRequestSpec, EvictionRequestStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::constants::{INTENTS, MAX_CONDITIONS};
use crate::absent::Absent;
use crate::conditions;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::strategy::{Context, Strategy, next_generation, reset_metadata_for_status};

/// The detail of the declarative `union` rule on `spec.target` (only `pod` exists).
pub const TARGET_UNION_DETAIL: &str = "must specify one of: `pod`";

/// The registry strategy of EvictionRequest (upstream
/// `pkg/registry/lifecycle/evictionrequest/strategy.go`).
#[derive(Clone, Copy, Debug, Default)]
pub struct EvictionRequestStrategy;

impl Strategy for EvictionRequestStrategy {
    type Object = EvictionRequest;

    /// Clears the status and starts the generation at 1.
    fn prepare_for_create(obj: &mut EvictionRequest) {
        obj.status = Some(EvictionRequestStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &EvictionRequest, _ctx: &Context<'_>) -> ErrorList {
        validate_eviction_request_create(obj)
    }

    /// Keeps the stored status; bumps the generation only when the spec changed
    /// (the generation a client sends is ignored, as `rest.BeforeUpdate` does).
    fn prepare_for_update(new: &mut EvictionRequest, old: &EvictionRequest) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !spec_equal(&new.spec, &old.spec));
    }

    fn validate_update(
        new: &EvictionRequest,
        old: &EvictionRequest,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_eviction_request_update(new, old)
    }

    /// Copies the spec from the stored object and resets the metadata a
    /// `/status` write may not change.
    fn prepare_for_status_update(new: &mut EvictionRequest, old: &EvictionRequest) {
        new.spec.clone_from(&old.spec);
        reset_metadata_for_status(&mut new.metadata, &old.metadata);
    }

    fn validate_status_update(
        new: &EvictionRequest,
        old: &EvictionRequest,
        ctx: &Context<'_>,
    ) -> ErrorList {
        validate_eviction_request_status_update(new, old, ctx.absent)
    }
}

fn spec_equal(a: &EvictionRequestSpec, b: &EvictionRequestSpec) -> bool {
    a == b
}

/// Validates a new EvictionRequest (§4.4 "Create"): ObjectMeta, then the
/// declarative spec rules.
pub fn validate_eviction_request_create(obj: &EvictionRequest) -> ErrorList {
    let mut errs = meta::validate_object_meta(&obj.metadata, true, NameRule::Subdomain);
    errs.append(validate_spec(&obj.spec, None));
    errs
}

/// Validates an update of the main resource (§4.4 "Update"): ObjectMeta
/// update rules, `spec.target` and `spec.requester` immutable, `spec.intent`
/// required and enumerated. Unchanged fields are not validated again.
pub fn validate_eviction_request_update(new: &EvictionRequest, old: &EvictionRequest) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    if !spec_equal(&new.spec, &old.spec) {
        errs.append(validate_spec(&new.spec, Some(&old.spec)));
    }
    errs.append(validate_status_declarative(
        new.status.as_ref(),
        old.status.as_ref(),
    ));
    errs
}

/// Validates a `/status` update (§4.4 "Status update"): ObjectMeta update
/// rules and every condition (handwritten), then the condition count and
/// `observedGeneration` (declarative). `absent` lists required fields missing
/// from the submitted JSON (condition `lastTransitionTime`).
pub fn validate_eviction_request_status_update(
    new: &EvictionRequest,
    old: &EvictionRequest,
    absent: &Absent,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let conds = new.status.as_ref().and_then(|s| s.conditions.as_deref());
    errs.append(conditions::validate_conditions(
        conds.unwrap_or_default(),
        &Path::new("status").child("conditions"),
        absent,
    ));
    errs.append(validate_status_declarative(
        new.status.as_ref(),
        old.status.as_ref(),
    ));
    errs
}

/// The declarative status rules: at most 100 conditions, `observedGeneration`
/// ≥ 1, never decreasing, never removed.
fn validate_status_declarative(
    new: Option<&EvictionRequestStatus>,
    old: Option<&EvictionRequestStatus>,
) -> ErrorList {
    let path = Path::new("status");
    let conds = |s: Option<&EvictionRequestStatus>| {
        s.and_then(|s| s.conditions.as_deref())
            .unwrap_or_default()
            .to_vec()
    };
    let generation = |s: Option<&EvictionRequestStatus>| s.and_then(|s| s.observed_generation);
    let mut errs = validate_condition_count(&conds(new), &conds(old), &path.child("conditions"));
    errs.append(validate_observed_generation(
        generation(new),
        generation(old),
        &path.child("observedGeneration"),
    ));
    errs
}

/// The declarative spec rules; `old` is the stored spec on update.
fn validate_spec(spec: &EvictionRequestSpec, old: Option<&EvictionRequestSpec>) -> ErrorList {
    let path = Path::new("spec");
    let mut errs = ErrorList::new();

    let pod = |s: &EvictionRequestSpec| {
        s.target
            .pod
            .as_ref()
            .map(|p| (p.name.clone(), p.uid.clone()))
    };
    errs.append(validate_target(
        pod(spec),
        old.map(pod),
        &path.child("target"),
    ));

    let requester_path = path.child("requester");
    let old_requester = old.map(|o| o.requester.as_str());
    if old_requester != Some(spec.requester.as_str()) {
        let mut short_circuit = false;
        if old_requester.is_some() {
            errs.push(immutable(&requester_path));
            short_circuit = true;
        }
        if spec.requester.is_empty() {
            errs.push(Error::required(&requester_path, ""));
            short_circuit = true;
        }
        if !short_circuit {
            errs.append(formats::validate_not_reserved_domain(
                &requester_path,
                &spec.requester,
            ));
            errs.append(formats::validate_prefixed_label_key(
                &requester_path,
                &spec.requester,
            ));
        }
    }

    if old.map(|o| o.intent.as_str()) != Some(spec.intent.as_str()) {
        errs.append(validate_intent(&path.child("intent"), &spec.intent));
    }
    errs
}

/// Declarative `Invalid <path>: null: field is immutable` (origin `immutable`).
pub(crate) fn immutable(path: &Path) -> Error {
    Error::invalid(path, BadValue::Null, FIELD_IMMUTABLE).with_origin("immutable")
}

/// An intent (`spec.intent`, `status.requesters[i].intent`): required, then
/// one of `Eviction`, `Withdrawn`.
pub(crate) fn validate_intent(path: &Path, intent: &str) -> ErrorList {
    if intent.is_empty() {
        ErrorList(vec![Error::required(path, "")])
    } else if !INTENTS.contains(&intent) {
        ErrorList(vec![Error::not_supported(path, intent, INTENTS)])
    } else {
        ErrorList::new()
    }
}

/// `spec.target` of both kinds, given the pod member as `(name, uid)`.
/// On update (`old` is `Some`) any change is a single `immutable` error;
/// otherwise the union must have its one member and the pod reference must
/// carry a DNS-subdomain name and a lower-case UUID (Required short-circuits
/// the format check).
pub(crate) fn validate_target(
    pod: Option<(String, String)>,
    old: Option<Option<(String, String)>>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(old) = old {
        if old != pod {
            errs.push(immutable(path));
        }
        return errs;
    }
    let Some((name, uid)) = pod else {
        errs.push(Error::invalid(path, "", TARGET_UNION_DETAIL).with_origin("union"));
        return errs;
    };
    let pod_path = path.child("pod");
    let name_path = pod_path.child("name");
    if name.is_empty() {
        errs.push(Error::required(&name_path, ""));
    } else {
        errs.append(formats::validate_long_name(&name_path, &name));
    }
    let uid_path = pod_path.child("uid");
    if uid.is_empty() {
        errs.push(Error::required(&uid_path, ""));
    } else {
        errs.append(formats::validate_uuid(&uid_path, &uid));
    }
    errs
}

/// Declarative `status.observedGeneration`: cannot be removed once set
/// (origin `update`), at least 1 (origin `minimum`), never lower than before
/// (origin `monotonic`). Unchanged values are not checked.
pub(crate) fn validate_observed_generation(
    new: Option<i64>,
    old: Option<i64>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if new == old {
        return errs;
    }
    let Some(value) = new else {
        if old.is_some() {
            errs.push(
                Error::invalid(path, BadValue::Null, "field cannot be cleared once set")
                    .with_origin("update"),
            );
        }
        return errs;
    };
    if value < 1 {
        errs.push(
            Error::invalid(path, value, "must be greater than or equal to 1")
                .with_origin("minimum"),
        );
    }
    if let Some(old) = old.filter(|o| value < *o) {
        errs.push(
            Error::invalid(path, value, format!("may not be decreased from {old}"))
                .with_origin("monotonic"),
        );
    }
    errs
}

/// Declarative `status.conditions` count: at most 100 (origin `maxItems`).
pub(crate) fn validate_condition_count(
    new: &[Condition],
    old: &[Condition],
    path: &Path,
) -> ErrorList {
    if new != old && new.len() > MAX_CONDITIONS {
        ErrorList(vec![
            Error::too_many(path, new.len(), MAX_CONDITIONS).with_origin("maxItems"),
        ])
    } else {
        ErrorList::new()
    }
}
