//! Whole-Pod rules: `ValidatePodCreate`, `ValidatePodUpdate` (with its spec
//! diff), the pod annotations and `ValidatePodBinding`. Status updates are
//! in [`super::pod_status`], the subresources in [`super::pod_subresources`].

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Binding, Container, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodSpec,
};

use super::PodValidationOptions;
use super::container::validate_container_only_for_pod;
use super::diff::diff;
use super::pod_annotations::{
    validate_annotations_match_fields, validate_pod_annotation_updates, validate_pod_annotations,
};
use super::pod_spec::validate_pod_spec;
use super::scheduling::validate_only_added_tolerations;
use super::strings::inclusive_range_error;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::NameRule;
use crate::{meta, render};

/// Fields of a pod spec an update may change (`updatablePodSpecFields`).
pub const UPDATABLE_POD_SPEC_FIELDS: &[&str] = &[
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/// The start of the detail of a forbidden pod spec change; the spec diff
/// follows after a newline.
pub fn pod_update_forbidden_prefix() -> String {
    format!(
        "pod updates may not change fields other than {}",
        UPDATABLE_POD_SPEC_FIELDS.join(",")
    )
}

/// The pod's spec (the zero value when absent).
pub(crate) fn spec_of(pod: &Pod) -> PodSpec {
    pod.spec.clone().unwrap_or_default()
}

/// `validatePodMetadataAndSpec`: metadata, pod annotations, the spec, and
/// the pod-only checks (projected tokens need a service account, no
/// whitespace around images).
pub(crate) fn validate_pod_metadata_and_spec(pod: &Pod, opts: PodValidationOptions) -> ErrorList {
    let meta_path = Path::new("metadata");
    let spec_path = Path::new("spec");
    let spec = spec_of(pod);
    let mut errs = meta::validate_object_meta(&pod.metadata, true, NameRule::Subdomain);
    if let Some(a) = &pod.metadata.annotations {
        errs.append(validate_pod_annotations(
            a,
            &spec,
            &meta_path.child("annotations"),
        ));
    }
    let opts = PodValidationOptions {
        resource_is_pod: true,
        ..opts
    };
    errs.append(validate_pod_spec(
        &spec,
        Some(&pod.metadata),
        &spec_path,
        opts,
    ));
    if spec
        .service_account_name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        for (vi, v) in spec.volumes.iter().flatten().enumerate() {
            let Some(p) = &v.projected else { continue };
            for (si, s) in p.sources.iter().flatten().enumerate() {
                if s.service_account_token.is_some() {
                    errs.push(Error::forbidden(
                        &spec_path
                            .child("volumes")
                            .index(vi)
                            .child("projected")
                            .child("sources")
                            .index(si)
                            .child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }
    for (list, name) in [
        (&spec.containers, "containers"),
        (
            spec.init_containers.as_ref().unwrap_or(&Vec::new()),
            "initContainers",
        ),
    ] {
        for (i, c) in list.iter().enumerate() {
            errs.append(validate_container_only_for_pod(
                c,
                &spec_path.child(name).index(i),
            ));
        }
    }
    errs
}

/// `ValidatePodCreate`.
pub fn validate_pod_create(pod: &Pod, opts: PodValidationOptions) -> ErrorList {
    let mut errs = validate_pod_metadata_and_spec(pod, opts);
    let spec = spec_of(pod);
    let path = Path::new("spec");
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(Error::forbidden(
            &path.child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    if !spec.node_name.as_deref().unwrap_or_default().is_empty()
        && spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty())
    {
        errs.push(Error::forbidden(
            &path.child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs.append(validate_annotations_match_fields(pod, &spec));
    errs
}

/// `ValidateContainerUpdates`: same number of containers, each with an image.
fn validate_container_updates(
    new: &[Container],
    old: &[Container],
    path: &Path,
) -> (ErrorList, bool) {
    if new.len() != old.len() {
        return (
            ErrorList(vec![Error::forbidden(
                path,
                "pod updates may not add or remove containers",
            )]),
            true,
        );
    }
    let mut errs = ErrorList::new();
    for (i, c) in new.iter().enumerate() {
        let image = c.image.as_deref().unwrap_or_default();
        if image.is_empty() {
            errs.push(Error::required(&path.index(i).child("image"), ""));
        }
        if image.trim() != image {
            errs.push(Error::invalid(
                &path.index(i).child("image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
    }
    (errs, false)
}

/// `ValidatePodUpdate`: metadata and spec valid, and only the updatable
/// fields changed (else `Forbidden spec` with the diff).
pub fn validate_pod_update(new: &Pod, old: &Pod, opts: PodValidationOptions) -> ErrorList {
    let meta_path = Path::new("metadata");
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_pod_metadata_and_spec(new, opts));
    errs.append(validate_pod_annotation_updates(
        new,
        old,
        &meta_path.child("annotations"),
    ));
    let spec_path = Path::new("spec");
    let new_spec = spec_of(new);
    let old_spec = spec_of(old);
    let (e, stop) = validate_container_updates(
        &new_spec.containers,
        &old_spec.containers,
        &spec_path.child("containers"),
    );
    errs.append(e);
    if stop {
        return errs;
    }
    let empty = Vec::new();
    let (e, stop) = validate_container_updates(
        new_spec.init_containers.as_ref().unwrap_or(&empty),
        old_spec.init_containers.as_ref().unwrap_or(&empty),
        &spec_path.child("initContainers"),
    );
    errs.append(e);
    if stop {
        return errs;
    }
    let ads_path = spec_path.child("activeDeadlineSeconds");
    match (
        new_spec.active_deadline_seconds,
        old_spec.active_deadline_seconds,
    ) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.push(Error::invalid(
                &ads_path,
                n,
                inclusive_range_error(0, i64::from(i32::MAX)),
            ));
            return errs;
        }
        (Some(n), Some(o)) if o < n => {
            errs.push(Error::invalid(
                &ads_path,
                n,
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        (None, Some(_)) => errs.push(Error::invalid(
            &ads_path,
            BadValue::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    errs.append(validate_only_added_tolerations(
        new_spec.tolerations.as_deref().unwrap_or_default(),
        old_spec.tolerations.as_deref().unwrap_or_default(),
        &spec_path.child("tolerations"),
    ));
    errs.append(validate_only_deleted_scheduling_gates(
        &new_spec,
        &old_spec,
        &spec_path.child("schedulingGates"),
    ));
    if crate::equality::semantic_eq(&new_spec, &old_spec) {
        return errs;
    }
    let mut munged = new_spec.clone();
    for (c, o) in munged.containers.iter_mut().zip(&old_spec.containers) {
        c.image.clone_from(&o.image);
    }
    for (c, o) in munged
        .init_containers
        .iter_mut()
        .flatten()
        .zip(old_spec.init_containers.iter().flatten())
    {
        c.image.clone_from(&o.image);
    }
    munged.active_deadline_seconds = old_spec.active_deadline_seconds;
    munged
        .scheduling_gates
        .clone_from(&old_spec.scheduling_gates);
    munged.tolerations.clone_from(&old_spec.tolerations);
    if old_spec
        .termination_grace_period_seconds
        .is_some_and(|g| g < 0)
        && munged.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old_spec.termination_grace_period_seconds;
    }
    if old_spec
        .scheduling_gates
        .as_ref()
        .is_some_and(|g| !g.is_empty())
    {
        // Gated pods may add to nodeSelector and node affinity (checked
        // loosely: additions only).
        if munged.node_selector != old_spec.node_selector {
            errs.append(validate_node_selector_mutation(
                munged.node_selector.as_ref(),
                old_spec.node_selector.as_ref(),
                &spec_path.child("nodeSelector"),
            ));
            munged.node_selector.clone_from(&old_spec.node_selector);
        }
        // ... and to required node affinity terms.
        let old_na = old_spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.clone());
        let munged_na = munged
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.clone());
        if !crate::equality::semantic_eq(&old_na, &munged_na) {
            errs.append(validate_node_affinity_mutation(
                munged_na.as_ref(),
                old_na.as_ref(),
                &spec_path.child("affinity").child("nodeAffinity"),
            ));
            match munged.affinity.as_mut() {
                None if old_na.is_none() => {}
                None => {
                    munged.affinity = Some(Affinity {
                        node_affinity: old_na,
                        ..Affinity::default()
                    });
                }
                Some(a)
                    if old_spec.affinity.is_none()
                        && a.pod_affinity.is_none()
                        && a.pod_anti_affinity.is_none() =>
                {
                    munged.affinity = None;
                }
                Some(a) => a.node_affinity = old_na,
            }
        }
    }
    if !crate::equality::semantic_eq(&munged, &old_spec) {
        let detail = format!(
            "{}\n{}",
            pod_update_forbidden_prefix(),
            diff("core.PodSpec", &old_spec, &munged)
        );
        errs.push(Error::forbidden(&spec_path, detail));
    }
    errs
}

fn validate_node_selector_mutation(
    new: Option<&BTreeMap<String, String>>,
    old: Option<&BTreeMap<String, String>>,
    path: &Path,
) -> ErrorList {
    let empty = BTreeMap::new();
    let new = new.unwrap_or(&empty);
    for (k, v) in old.unwrap_or(&empty) {
        if new.get(k) != Some(v) {
            return ErrorList(vec![Error::invalid(
                path,
                BadValue::Json(render::string_map(new)),
                "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            )]);
        }
    }
    ErrorList::new()
}

/// `validateNodeAffinityMutation`: a gated pod's required node selector
/// terms may only gain requirements (none added or removed, and an empty
/// term stays empty).
fn validate_node_affinity_mutation(
    new: Option<&NodeAffinity>,
    old: Option<&NodeAffinity>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(old_required) = old.and_then(|o| {
        o.required_during_scheduling_ignored_during_execution
            .as_ref()
    }) else {
        return errs;
    };
    let old_terms = &old_required.node_selector_terms;
    let new_terms: &[NodeSelectorTerm] = new
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|r| r.node_selector_terms.as_slice())
        .unwrap_or_default();
    let terms_path = path
        .child("requiredDuringSchedulingIgnoredDuringExecution")
        .child("nodeSelectorTerms");
    if !old_terms.is_empty() && old_terms.len() != new_terms.len() {
        errs.push(Error::invalid(
            &terms_path,
            BadValue::Json(render::json(&new_terms)),
            "no additions/deletions to non-empty NodeSelectorTerms list are allowed",
        ));
        return errs;
    }
    for (i, (o, n)) in old_terms.iter().zip(new_terms).enumerate() {
        if !term_has_only_additions(n, o) {
            errs.push(Error::invalid(
                &terms_path.index(i),
                BadValue::Json(render::json(n)),
                "only additions are allowed (no mutations or deletions)",
            ));
        }
    }
    errs
}

/// `validateNodeSelectorTermHasOnlyAdditions`.
fn term_has_only_additions(new: &NodeSelectorTerm, old: &NodeSelectorTerm) -> bool {
    let list = |l: &Option<Vec<NodeSelectorRequirement>>| l.clone().unwrap_or_default();
    let (old_e, old_f) = (list(&old.match_expressions), list(&old.match_fields));
    let (new_e, new_f) = (list(&new.match_expressions), list(&new.match_fields));
    if old_e.is_empty() && old_f.is_empty() && (!new_e.is_empty() || !new_f.is_empty()) {
        return false;
    }
    let keeps = |new: &[NodeSelectorRequirement], old: &[NodeSelectorRequirement]| {
        old.is_empty()
            || (new.len() >= old.len()
                && crate::equality::semantic_eq(&new[..old.len()].to_vec(), &old.to_vec()))
    };
    keeps(&new_e, &old_e) && keeps(&new_f, &old_f)
}

fn validate_only_deleted_scheduling_gates(new: &PodSpec, old: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let old_names: Vec<&str> = old
        .scheduling_gates
        .iter()
        .flatten()
        .map(|g| g.name.as_str())
        .collect();
    let mut added: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in new.scheduling_gates.iter().flatten().enumerate() {
        added.insert(g.name.as_str(), i);
    }
    for n in old_names {
        added.remove(n);
    }
    for (gate, i) in added {
        errs.push(Error::forbidden(
            &path.index(i).child("name"),
            format!("only deletion is allowed, but found new scheduling gate '{gate}'"),
        ));
    }
    errs
}

/// `ValidatePodBinding`: the target is a Node (kind empty or `Node`) with a name.
pub fn validate_pod_binding(binding: &Binding) -> ErrorList {
    let mut errs = ErrorList::new();
    let target = Path::new("target");
    let kind = binding.target.kind.as_deref().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errs.push(Error::not_supported(
            &target.child("kind"),
            kind,
            &["Node", "<empty>"],
        ));
    }
    if binding
        .target
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        errs.push(Error::required(&target.child("name"), ""));
    }
    errs
}
