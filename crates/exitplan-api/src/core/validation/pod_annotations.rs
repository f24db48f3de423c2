//! The pod-specific annotations (`ValidatePodSpecificAnnotations`,
//! `ValidatePodSpecificAnnotationUpdates`): the mirror pod annotation, the
//! legacy tolerations annotation, the pod deletion cost and the deprecated
//! seccomp and AppArmor annotations; on create, the consistency of those
//! annotations with the seccomp and AppArmor fields, and AppArmor's version
//! skew (an annotation alone fills the container's field).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    AppArmorProfile, Pod, PodSpec, SeccompProfile, SecurityContext, Toleration,
};

use super::pod::spec_of;
use super::scheduling::validate_tolerations;
use super::volume::validate_local_descending_path;
use crate::field::{Error, ErrorList, Path};

/// The legacy tolerations annotation.
pub const TOLERATIONS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/tolerations";
/// The deprecated pod seccomp annotation.
pub const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
/// The deprecated per-container seccomp annotation prefix.
pub const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// The mirror pod annotation (`kubernetes.io/config.mirror`).
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The pod deletion cost annotation.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// The deprecated per-container AppArmor annotation prefix.
pub const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn has_container(spec: &PodSpec, name: &str) -> bool {
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .any(|c| c.name == name)
        || spec
            .ephemeral_containers
            .iter()
            .flatten()
            .any(|c| c.name == name)
}

/// `ValidatePodSpecificAnnotations`.
pub(crate) fn validate_pod_annotations(
    annotations: &BTreeMap<String, String>,
    spec: &PodSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(v) = annotations.get(MIRROR_POD_ANNOTATION)
        && spec.node_name.as_deref().unwrap_or_default().is_empty()
    {
        errs.push(Error::invalid(
            &path.key(MIRROR_POD_ANNOTATION),
            v.as_str(),
            "must set spec.nodeName if mirror pod annotation is set",
        ));
    }
    if annotations
        .get(TOLERATIONS_ANNOTATION)
        .is_some_and(|v| !v.is_empty())
    {
        errs.append(validate_tolerations_annotation(annotations, path));
    }
    if let Some(v) = annotations.get(POD_DELETION_COST)
        && v.parse::<i32>().is_err()
    {
        errs.push(Error::invalid(
            &path.key(POD_DELETION_COST),
            v.as_str(),
            "must be a 32bit integer",
        ));
    }
    errs.append(validate_seccomp_annotations(annotations, path));
    for (k, v) in annotations {
        let Some(container) = k.strip_prefix(APPARMOR_PREFIX) else {
            continue;
        };
        if !has_container(spec, container) {
            errs.push(Error::invalid(
                &path.key(k),
                container,
                "container not found",
            ));
        }
        if !(v.is_empty()
            || v == "runtime/default"
            || v == "unconfined"
            || v.starts_with("localhost/"))
        {
            errs.push(Error::invalid(
                &path.key(k),
                v.as_str(),
                format!(
                    "invalid AppArmor profile name: {}",
                    crate::field::go_quote(v)
                ),
            ));
        }
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

/// `ValidateSeccompProfile`.
fn validate_seccomp_profile(profile: &str, path: &Path) -> ErrorList {
    if matches!(profile, "runtime/default" | "docker/default" | "unconfined") {
        return ErrorList::new();
    }
    match profile.strip_prefix("localhost/") {
        Some(local) => validate_local_descending_path(local, path),
        None => ErrorList(vec![Error::invalid(
            path,
            profile,
            "must be a valid seccomp profile",
        )]),
    }
}

/// `ValidateSeccompPodAnnotations` (paths name the annotation as a child,
/// as upstream's do).
fn validate_seccomp_annotations(annotations: &BTreeMap<String, String>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(p) = annotations.get(SECCOMP_POD_ANNOTATION) {
        errs.append(validate_seccomp_profile(
            p,
            &path.child(SECCOMP_POD_ANNOTATION),
        ));
    }
    for (k, p) in annotations {
        if k.starts_with(SECCOMP_CONTAINER_PREFIX) {
            errs.append(validate_seccomp_profile(p, &path.child(k)));
        }
    }
    errs
}

/// Every container of the spec (init, regular, ephemeral — upstream's
/// visiting order) with its path and security context.
fn containers_with_paths<'a>(
    spec: &'a PodSpec,
    spec_path: &Path,
) -> Vec<(&'a str, Path, Option<&'a SecurityContext>)> {
    let mut out = Vec::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        out.push((
            c.name.as_str(),
            spec_path.child("initContainers").index(i),
            c.security_context.as_ref(),
        ));
    }
    for (i, c) in spec.containers.iter().enumerate() {
        out.push((
            c.name.as_str(),
            spec_path.child("containers").index(i),
            c.security_context.as_ref(),
        ));
    }
    for (i, c) in spec.ephemeral_containers.iter().flatten().enumerate() {
        out.push((
            c.name.as_str(),
            spec_path.child("ephemeralContainers").index(i),
            c.security_context.as_ref(),
        ));
    }
    out
}

/// `validateSeccompAnnotationsAndFieldsMatch`.
fn seccomp_mismatch(annotation: &str, field: &SeccompProfile, path: &Path) -> Option<Error> {
    let type_mismatch = || {
        Error::forbidden(
            &path.child("type"),
            "seccomp type in annotation and field must match",
        )
    };
    match field.type_.as_str() {
        "Unconfined" if annotation != "unconfined" => Some(type_mismatch()),
        "RuntimeDefault" if annotation != "runtime/default" && annotation != "docker/default" => {
            Some(type_mismatch())
        }
        "Localhost" => match annotation.strip_prefix("localhost/") {
            None => Some(type_mismatch()),
            Some(p) if field.localhost_profile.as_deref() != Some(p) => Some(Error::forbidden(
                &path.child("localhostProfile"),
                "seccomp profile in annotation and field must match",
            )),
            Some(_) => None,
        },
        _ => None,
    }
}

/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate`'s comparison.
fn apparmor_mismatch(annotation: &str, field: &AppArmorProfile, path: &Path) -> Option<Error> {
    let type_mismatch = || {
        Error::forbidden(
            &path.child("type"),
            "apparmor type in annotation and field must match",
        )
    };
    match field.type_.as_str() {
        "Unconfined" if annotation != "unconfined" => Some(type_mismatch()),
        "RuntimeDefault" if annotation != "runtime/default" => Some(type_mismatch()),
        "Localhost" => match annotation.strip_prefix("localhost/") {
            None => Some(type_mismatch()),
            Some(p) if field.localhost_profile.as_deref() != Some(p) => Some(Error::forbidden(
                &path.child("localhostProfile"),
                "apparmor profile in annotation and field must match",
            )),
            Some(_) => None,
        },
        _ => None,
    }
}

fn is_windows(spec: &PodSpec) -> bool {
    spec.os.as_ref().is_some_and(|o| o.name == "windows")
}

/// `validateSeccompAnnotationsAndFields` and
/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate`: where both an
/// annotation and the field are set, they agree.
pub(crate) fn validate_annotations_match_fields(pod: &Pod, spec: &PodSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    let empty = BTreeMap::new();
    let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
    let spec_path = Path::new("spec");
    let pod_sc = spec.security_context.as_ref();
    if let (Some(field), Some(annotation)) = (
        pod_sc.and_then(|sc| sc.seccomp_profile.as_ref()),
        annotations.get(SECCOMP_POD_ANNOTATION),
    ) {
        errs.extend(seccomp_mismatch(
            annotation,
            field,
            &spec_path.child("securityContext").child("seccompProfile"),
        ));
    }
    let containers = containers_with_paths(spec, &spec_path);
    for (name, path, sc) in &containers {
        let (Some(field), Some(annotation)) = (
            sc.and_then(|sc| sc.seccomp_profile.as_ref()),
            annotations.get(&format!("{SECCOMP_CONTAINER_PREFIX}{name}")),
        ) else {
            continue;
        };
        errs.extend(seccomp_mismatch(
            annotation,
            field,
            &path.child("securityContext").child("seccompProfile"),
        ));
    }
    if is_windows(spec) {
        return errs;
    }
    let pod_profile = pod_sc.and_then(|sc| sc.app_armor_profile.as_ref());
    for (name, path, sc) in &containers {
        let Some(field) = sc
            .and_then(|sc| sc.app_armor_profile.as_ref())
            .or(pod_profile)
        else {
            continue;
        };
        if let Some(annotation) = annotations.get(&format!("{APPARMOR_PREFIX}{name}")) {
            errs.extend(apparmor_mismatch(
                annotation,
                field,
                &path.child("securityContext").child("appArmorProfile"),
            ));
        }
    }
    errs
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
