//! What a Pod (not a template) adds to the pod-specific annotations of
//! [`super::security_annotations`]: the legacy tolerations annotation
//! (`ValidateTolerationsInPodAnnotations`), the annotation rules of updates
//! (`ValidatePodSpecificAnnotationUpdates`), the annotation-versus-field
//! checks of `ValidatePodCreate`, and AppArmor's version skew in
//! `PrepareForCreate` (an annotation alone fills the container's field).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{AppArmorProfile, Pod, PodSpec, SecurityContext, Toleration};

use super::pod::spec_of;
use super::scheduling::validate_tolerations;
use super::security_annotations::{
    APPARMOR_CONTAINER_PREFIX as APPARMOR_PREFIX, MIRROR_POD_ANNOTATION,
    validate_app_armor_annotations_and_fields_match_on_create, validate_pod_specific_annotations,
    validate_seccomp_annotations_and_fields,
};
use crate::field::{Error, ErrorList, Path};

/// The legacy tolerations annotation.
pub const TOLERATIONS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/tolerations";

/// `ValidatePodSpecificAnnotations` of a Pod: the template rules plus the
/// tolerations annotation (reported after the others; upstream checks it
/// second).
pub(crate) fn validate_pod_annotations(
    annotations: &BTreeMap<String, String>,
    spec: &PodSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = validate_pod_specific_annotations(annotations, spec, path);
    if annotations
        .get(TOLERATIONS_ANNOTATION)
        .is_some_and(|v| !v.is_empty())
    {
        errs.append(validate_tolerations_annotation(annotations, path));
    }
    errs
}

/// `ValidatePodSpecificAnnotationUpdates`: the mirror and AppArmor
/// annotations cannot be added, changed or removed.
pub(crate) fn validate_pod_annotation_updates(new: &Pod, old: &Pod, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let empty = BTreeMap::new();
    let new_a = new.metadata.annotations.as_ref().unwrap_or(&empty);
    let old_a = old.metadata.annotations.as_ref().unwrap_or(&empty);
    for (k, v) in old_a {
        if new_a.get(k) == Some(v) {
            continue;
        }
        if k.starts_with(APPARMOR_PREFIX) {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not remove or update AppArmor annotations",
            ));
        }
        if k == MIRROR_POD_ANNOTATION {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not remove or update mirror pod annotation",
            ));
        }
    }
    for k in new_a.keys() {
        if old_a.contains_key(k) {
            continue;
        }
        if k.starts_with(APPARMOR_PREFIX) {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not add AppArmor annotations",
            ));
        }
        if k == MIRROR_POD_ANNOTATION {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not add mirror pod annotation",
            ));
        }
    }
    errs.append(validate_pod_annotations(new_a, &spec_of(new), path));
    errs
}

/// `ValidateTolerationsInPodAnnotations`: the annotation holds a JSON list of
/// valid tolerations.
fn validate_tolerations_annotation(
    annotations: &BTreeMap<String, String>,
    path: &Path,
) -> ErrorList {
    let raw = annotations
        .get(TOLERATIONS_ANNOTATION)
        .map(String::as_str)
        .unwrap_or_default();
    match serde_json::from_str::<Vec<Toleration>>(raw) {
        Ok(tolerations) => validate_tolerations(&tolerations, &path.child(TOLERATIONS_ANNOTATION)),
        Err(e) => ErrorList(vec![Error::invalid(
            path,
            TOLERATIONS_ANNOTATION,
            e.to_string(),
        )]),
    }
}

/// `validateSeccompAnnotationsAndFields` and
/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate` of `ValidatePodCreate`.
pub(crate) fn validate_annotations_match_fields(pod: &Pod, spec: &PodSpec) -> ErrorList {
    let annotations = pod.metadata.annotations.as_ref();
    let spec_path = Path::new("spec");
    let mut errs = validate_seccomp_annotations_and_fields(annotations, spec, &spec_path);
    errs.append(validate_app_armor_annotations_and_fields_match_on_create(
        annotations,
        spec,
        &spec_path,
    ));
    errs
}

fn is_windows(spec: &PodSpec) -> bool {
    spec.os.as_ref().is_some_and(|o| o.name == "windows")
}

/// `ApparmorFieldForAnnotation`, keeping only a valid profile.
fn apparmor_field_for(annotation: &str) -> Option<AppArmorProfile> {
    let profile = |t: &str, local: Option<&str>| AppArmorProfile {
        type_: t.to_owned(),
        localhost_profile: local.map(str::to_owned),
    };
    match annotation {
        "runtime/default" => Some(profile("RuntimeDefault", None)),
        "unconfined" => Some(profile("Unconfined", None)),
        _ => {
            let local = annotation.strip_prefix("localhost/")?;
            (!local.is_empty() && local.trim() == local && local.len() <= 4095)
                .then(|| profile("Localhost", Some(local)))
        }
    }
}

/// `applyAppArmorVersionSkew` (on create): a container with an AppArmor
/// annotation and no profile field gets the profile the annotation names,
/// unless it is the pod's own. Windows pods are left alone.
pub fn apply_apparmor_version_skew(pod: &mut Pod) {
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    if is_windows(spec) {
        return;
    }
    let pod_profile = spec
        .security_context
        .as_ref()
        .and_then(|sc| sc.app_armor_profile.clone());
    let apply = |name: &str, sc: &mut Option<SecurityContext>| {
        if sc
            .as_ref()
            .and_then(|s| s.app_armor_profile.as_ref())
            .is_some()
        {
            return;
        }
        let Some(field) = annotations
            .get(&format!("{APPARMOR_PREFIX}{name}"))
            .and_then(|a| apparmor_field_for(a))
        else {
            return;
        };
        if Some(&field) != pod_profile.as_ref() {
            sc.get_or_insert_with(SecurityContext::default)
                .app_armor_profile = Some(field);
        }
    };
    for c in spec.init_containers.iter_mut().flatten() {
        apply(&c.name, &mut c.security_context);
    }
    for c in &mut spec.containers {
        apply(&c.name, &mut c.security_context);
    }
    for c in spec.ephemeral_containers.iter_mut().flatten() {
        apply(&c.name, &mut c.security_context);
    }
}
