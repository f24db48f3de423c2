//! The Pod strategy (upstream's `pkg/registry/core/pod/strategy.go`):
//! core/v1 defaults, then [`validation`](super::validation)'s
//! `ValidatePodCreate`, `ValidatePodUpdate` and `ValidatePodStatusUpdate`;
//! and the Pod rule exitplan owns (eviction spec §3):
//! `spec.evictionResponders`, validated on create and inside every pod
//! template.

use k8s_openapi::api::core::v1::{EvictionResponder, Pod, PodCondition, PodSpec, PodStatus};

use super::constants::PHASE_PENDING;
use super::disabled_fields::drop_disabled_pod_spec_fields;
use super::validation::PodValidationOptions;
use super::validation::defaults::default_pod_spec;
use super::validation::pod::{validate_pod_create, validate_pod_update};
use super::validation::pod_annotations::apply_apparmor_version_skew;
use super::validation::pod_status::validate_pod_status_update;
use super::validation::qos::compute_pod_qos;
use crate::absent::Absent;
use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::keyed_list::validate_keyed_list;
use crate::lifecycle::constants::{
    MAX_POD_RESPONDERS, MAX_PRIORITY, MIN_USER_PRIORITY, MSG_RESERVED_PRIORITY,
};
use crate::nonnegative::validate_nonnegative_field;
use crate::render;
use crate::strategy::{Context, Strategy, next_generation};

/// The detail of the declarative `dependentForbidden` rule tying
/// `schedulingGroup` to `evictionResponders`.
pub const SCHEDULING_GROUP_FORBIDDEN: &str = "may not be set when evictionResponders is set";

/// Validates `evictionResponders` of the pod spec at `spec_path` (`spec` for a
/// Pod, `spec.template.spec` for a Deployment/Job/ReplicaSet, `template.spec`
/// for a PodTemplate, `spec.jobTemplate.spec.template.spec` for a CronJob),
/// with create semantics:
///
/// * a non-empty list next to a set `schedulingGroup` → `Forbidden
///   <spec>.schedulingGroup` (origin `dependentForbidden`);
/// * more than 10 items → only `TooMany` (origin `maxItems`);
/// * a repeated name → `Duplicate` at the later index;
/// * `name`: Required, reserved domains, prefixed label key;
/// * `priority`: Required (when missing from the submitted JSON, per
///   `absent`), 0–999 reserved, at most 100000 (`maximum`), at least 0
///   (`minimum`).
pub fn validate_eviction_responders(
    responders: &[EvictionResponder],
    scheduling_group_set: bool,
    spec_path: &Path,
    absent: &Absent,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if !responders.is_empty() && scheduling_group_set {
        errs.push(
            Error::forbidden(
                &spec_path.child("schedulingGroup"),
                SCHEDULING_GROUP_FORBIDDEN,
            )
            .with_origin("dependentForbidden"),
        );
    }
    let path = spec_path.child("evictionResponders");
    let priority_of = |i: usize, r: &EvictionResponder| {
        (!absent.contains(&path.index(i).child("priority"))).then_some(r.priority)
    };
    match validate_keyed_list(
        responders,
        &path,
        MAX_POD_RESPONDERS,
        |r| r.name.as_str(),
        |j, r| render::eviction_responder(r, priority_of(j, r)),
    ) {
        Ok(duplicates) => errs.append(duplicates),
        Err(too_many) => {
            errs.append(too_many);
            return errs;
        }
    }
    for (i, r) in responders.iter().enumerate() {
        let name_path = path.index(i).child("name");
        if r.name.is_empty() {
            errs.push(Error::required(&name_path, ""));
        } else {
            errs.append(formats::validate_not_reserved_domain(&name_path, &r.name));
            errs.append(formats::validate_prefixed_label_key(&name_path, &r.name));
        }
        let priority_path = path.index(i).child("priority");
        match priority_of(i, r) {
            None => errs.push(Error::required(&priority_path, "")),
            Some(p) if (0..MIN_USER_PRIORITY).contains(&p) => {
                errs.push(Error::invalid(&priority_path, p, MSG_RESERVED_PRIORITY));
            }
            Some(p) if p > MAX_PRIORITY => errs.push(
                Error::invalid(
                    &priority_path,
                    p,
                    format!("must be less than or equal to {MAX_PRIORITY}"),
                )
                .with_origin("maximum"),
            ),
            Some(p) if p < 0 => {
                errs.append(validate_nonnegative_field(i64::from(p), &priority_path));
            }
            Some(_) => {}
        }
    }
    errs
}

/// `spec.evictionResponders` of a pod spec (empty when the spec or the list is unset).
pub(crate) fn responders_of(spec: Option<&PodSpec>) -> &[EvictionResponder] {
    spec.and_then(|s| s.eviction_responders.as_deref())
        .unwrap_or_default()
}

/// The reason of the `PodScheduled=False` condition of a gated pod.
pub const REASON_SCHEDULING_GATED: &str = "SchedulingGated";
/// Its message.
pub const MSG_SCHEDULING_GATED: &str = "Scheduling is blocked due to non-empty scheduling gates";

/// `preserveOldObservedGeneration`: a zero or unset `observedGeneration`
/// keeps the stored one, for the status and for each condition (the n-th
/// condition of a type takes the n-th stored condition of that type).
fn keep_observed_generation(new: &mut PodStatus, old: &PodStatus) {
    if new.observed_generation.unwrap_or(0) == 0 {
        new.observed_generation = old.observed_generation;
    }
    let mut stored: Vec<(&str, Option<i64>)> = old
        .conditions
        .iter()
        .flatten()
        .map(|c| (c.type_.as_str(), c.observed_generation))
        .collect();
    for c in new.conditions.iter_mut().flatten() {
        let kept = stored
            .iter()
            .position(|(t, _)| *t == c.type_)
            .map(|i| stored.remove(i).1)
            .unwrap_or_default();
        if c.observed_generation.unwrap_or(0) == 0 {
            c.observed_generation = kept;
        }
    }
}

/// The Pod strategy: defaults, then upstream's Pod validation plus
/// `spec.evictionResponders` on create; `/status` writes keep the spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodStrategy;

impl Strategy for PodStrategy {
    type Object = Pod;

    /// `SetDefaults_Pod` and `SetDefaults_PodSpec`.
    fn default(obj: &mut Pod) {
        default_pod_spec(obj.spec.get_or_insert_with(Default::default), true);
    }

    /// `PrepareForCreate`: the pod starts `Pending` with generation 1 and
    /// its QoS class (`status.qosClass`, immutable from now on); a pod with
    /// scheduling gates also starts `PodScheduled=False` (`SchedulingGated`),
    /// stamped with the creation time; AppArmor annotations fill the
    /// containers' missing profile fields (`applyAppArmorVersionSkew`);
    /// fields of disabled feature gates are dropped.
    fn prepare_for_create(obj: &mut Pod) {
        if let Some(spec) = obj.spec.as_mut() {
            drop_disabled_pod_spec_fields(spec, None);
        }
        let spec = obj.spec.clone().unwrap_or_default();
        let mut status = PodStatus {
            phase: Some(PHASE_PENDING.to_owned()),
            qos_class: Some(compute_pod_qos(&spec).to_owned()),
            ..PodStatus::default()
        };
        if spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty())
        {
            status.conditions = Some(vec![PodCondition {
                type_: "PodScheduled".to_owned(),
                status: "False".to_owned(),
                reason: Some(REASON_SCHEDULING_GATED.to_owned()),
                message: Some(MSG_SCHEDULING_GATED.to_owned()),
                last_transition_time: obj.metadata.creation_timestamp.clone(),
                ..PodCondition::default()
            }]);
        }
        obj.status = Some(status);
        obj.metadata.generation = Some(1);
        apply_apparmor_version_skew(obj);
    }

    fn validate_create(obj: &Pod, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_pod_create(obj, PodValidationOptions::default());
        if let Some(spec) = &obj.spec {
            errs.append(validate_eviction_responders(
                responders_of(Some(spec)),
                spec.scheduling_group.is_some(),
                &Path::new("spec"),
                ctx.absent,
            ));
        }
        errs
    }

    /// Keeps the stored status; drops fields of disabled feature gates the
    /// stored pod did not use; bumps the generation when the spec changed.
    fn prepare_for_update(new: &mut Pod, old: &Pod) {
        if let Some(spec) = new.spec.as_mut() {
            drop_disabled_pod_spec_fields(spec, old.spec.as_ref());
        }
        new.status.clone_from(&old.status);
        new.metadata.generation = next_generation(old.metadata.generation, new.spec != old.spec);
    }

    /// `ValidatePodUpdate` (a changed `spec.evictionResponders` is one of
    /// the forbidden spec changes).
    fn validate_update(new: &Pod, old: &Pod, _ctx: &Context<'_>) -> ErrorList {
        let opts = PodValidationOptions {
            allow_invalid_label_value_in_selector: true,
            ..PodValidationOptions::default()
        };
        validate_pod_update(new, old, opts)
    }

    /// Upstream's `podStatusStrategy.PrepareForUpdate`: the spec and owner
    /// references are the stored ones and the deletion timestamp cannot be
    /// set here; labels, annotations and finalizers may change. An empty
    /// `qosClass` keeps the stored one (old kubelets drop it), and an unset
    /// `observedGeneration` (of the status or of a condition, matched by
    /// type in order) keeps the stored value.
    fn prepare_for_status_update(new: &mut Pod, old: &Pod) {
        new.spec.clone_from(&old.spec);
        new.metadata.deletion_timestamp = None;
        new.metadata
            .owner_references
            .clone_from(&old.metadata.owner_references);
        let old_status = old.status.clone().unwrap_or_default();
        let status = new.status.get_or_insert_with(PodStatus::default);
        if status.qos_class.as_deref().unwrap_or_default().is_empty() {
            status.qos_class.clone_from(&old_status.qos_class);
        }
        keep_observed_generation(status, &old_status);
    }

    fn validate_status_update(new: &Pod, old: &Pod, _ctx: &Context<'_>) -> ErrorList {
        validate_pod_status_update(new, old)
    }
}
