//! The deprecated seccomp and AppArmor annotations: their own format
//! (`ValidateSeccompPodAnnotations`, `ValidateAppArmorPodAnnotations`) and
//! their agreement with the `seccompProfile` / `appArmorProfile` fields
//! (`validateSeccompAnnotationsAndFields`,
//! `validateAppArmorAnnotationsAndFieldsMatchOnCreate`), plus
//! `ValidatePodSpecificAnnotations`, which pod templates run on their
//! annotations.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{AppArmorProfile, PodSpec, SeccompProfile};

use super::os::container_security_contexts;
use super::volume::validate_local_descending_path;
use crate::field::{Error, ErrorList, Path, go_quote};

/// `v1.SeccompPodAnnotationKey`.
pub const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
/// `v1.SeccompContainerAnnotationKeyPrefix`.
pub const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
/// `v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix`.
pub const APPARMOR_CONTAINER_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
/// `core.MirrorPodAnnotationKey`.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// `core.PodDeletionCost`.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

const RUNTIME_DEFAULT: &str = "runtime/default";
const DOCKER_DEFAULT: &str = "docker/default";
const UNCONFINED: &str = "unconfined";
const LOCALHOST: &str = "localhost/";

/// `ValidateSeccompProfile`: an annotation's seccomp profile name.
pub fn validate_seccomp_profile(p: &str, path: &Path) -> ErrorList {
    if p == RUNTIME_DEFAULT || p == DOCKER_DEFAULT || p == UNCONFINED {
        return ErrorList::new();
    }
    if let Some(local) = p.strip_prefix(LOCALHOST) {
        return validate_local_descending_path(local, path);
    }
    ErrorList(vec![Error::invalid(
        path,
        p,
        "must be a valid seccomp profile",
    )])
}

/// `ValidateSeccompPodAnnotations`. The fields are upstream's
/// `fldPath.Child(key)`: `metadata.annotations.<key>`.
pub fn validate_seccomp_pod_annotations(a: &BTreeMap<String, String>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(p) = a.get(SECCOMP_POD_ANNOTATION) {
        errs.append(validate_seccomp_profile(
            p,
            &path.child(SECCOMP_POD_ANNOTATION),
        ));
    }
    for (k, p) in a {
        if k.starts_with(SECCOMP_CONTAINER_PREFIX) {
            errs.append(validate_seccomp_profile(p, &path.child(k)));
        }
    }
    errs
}

fn has_container(spec: &PodSpec, name: &str) -> bool {
    spec.init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .any(|c| c.name == name)
        || spec
            .ephemeral_containers
            .iter()
            .flatten()
            .any(|c| c.name == name)
}

/// `ValidateAppArmorPodAnnotations`: each AppArmor annotation names a
/// container and a valid profile.
pub fn validate_app_armor_pod_annotations(
    a: &BTreeMap<String, String>,
    spec: &PodSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    for (k, v) in a {
        let Some(container) = k.strip_prefix(APPARMOR_CONTAINER_PREFIX) else {
            continue;
        };
        if !has_container(spec, container) {
            errs.push(Error::invalid(
                &path.key(k),
                container,
                "container not found",
            ));
        }
        if !(v.is_empty() || v == RUNTIME_DEFAULT || v == UNCONFINED || v.starts_with(LOCALHOST)) {
            errs.push(Error::invalid(
                &path.key(k),
                v.as_str(),
                format!("invalid AppArmor profile name: {}", go_quote(v)),
            ));
        }
    }
    errs
}

/// `ValidatePodSpecificAnnotations` (without the deprecated tolerations
/// annotation): mirror pods need a node, the deletion cost is an int32,
/// then the seccomp and AppArmor annotations.
pub fn validate_pod_specific_annotations(
    a: &BTreeMap<String, String>,
    spec: &PodSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(v) = a.get(MIRROR_POD_ANNOTATION)
        && spec.node_name.as_deref().unwrap_or_default().is_empty()
    {
        errs.push(Error::invalid(
            &path.key(MIRROR_POD_ANNOTATION),
            v.as_str(),
            "must set spec.nodeName if mirror pod annotation is set",
        ));
    }
    if let Some(v) = a.get(POD_DELETION_COST)
        && v.parse::<i32>().is_err()
    {
        errs.push(Error::invalid(
            &path.key(POD_DELETION_COST),
            v.as_str(),
            "must be a 32bit integer",
        ));
    }
    errs.append(validate_seccomp_pod_annotations(a, path));
    errs.append(validate_app_armor_pod_annotations(a, spec, path));
    errs
}

/// `validateSeccompAnnotationsAndFieldsMatch`.
fn seccomp_match(annotation: &str, field: &SeccompProfile, path: &Path) -> Option<Error> {
    const TYPE: &str = "seccomp type in annotation and field must match";
    match field.type_.as_str() {
        "Unconfined" if annotation != UNCONFINED => {
            Some(Error::forbidden(&path.child("type"), TYPE))
        }
        "RuntimeDefault" if annotation != RUNTIME_DEFAULT && annotation != DOCKER_DEFAULT => {
            Some(Error::forbidden(&path.child("type"), TYPE))
        }
        "Localhost" => match annotation.strip_prefix(LOCALHOST) {
            None => Some(Error::forbidden(&path.child("type"), TYPE)),
            Some(p) if field.localhost_profile.as_deref() != Some(p) => Some(Error::forbidden(
                &path.child("localhostProfile"),
                "seccomp profile in annotation and field must match",
            )),
            Some(_) => None,
        },
        _ => None,
    }
}

/// `validateSeccompAnnotationsAndFields`: where both a seccomp annotation
/// and the field are set (pod and each container), they agree.
pub fn validate_seccomp_annotations_and_fields(
    annotations: Option<&BTreeMap<String, String>>,
    spec: &PodSpec,
    spec_path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let empty = BTreeMap::new();
    let a = annotations.unwrap_or(&empty);
    if let Some(sp) = spec
        .security_context
        .as_ref()
        .and_then(|s| s.seccomp_profile.as_ref())
        && let Some(v) = a.get(SECCOMP_POD_ANNOTATION)
    {
        let p = spec_path.child("securityContext").child("seccompProfile");
        errs.0.extend(seccomp_match(v, sp, &p));
    }
    let names = container_names(spec);
    for ((sc, cp), name) in container_security_contexts(spec, spec_path)
        .into_iter()
        .zip(names)
    {
        let Some(field) = sc.and_then(|s| s.seccomp_profile.as_ref()) else {
            continue;
        };
        if let Some(v) = a.get(&format!("{SECCOMP_CONTAINER_PREFIX}{name}")) {
            let p = cp.child("securityContext").child("seccompProfile");
            errs.0.extend(seccomp_match(v, field, &p));
        }
    }
    errs
}

fn container_names(spec: &PodSpec) -> Vec<&str> {
    spec.init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| c.name.as_str())
        .chain(
            spec.ephemeral_containers
                .iter()
                .flatten()
                .map(|c| c.name.as_str()),
        )
        .collect()
}

fn app_armor_match(annotation: &str, profile: &AppArmorProfile, path: &Path) -> Option<Error> {
    const TYPE: &str = "apparmor type in annotation and field must match";
    match profile.type_.as_str() {
        "Unconfined" if annotation != UNCONFINED => {
            Some(Error::forbidden(&path.child("type"), TYPE))
        }
        "RuntimeDefault" if annotation != RUNTIME_DEFAULT => {
            Some(Error::forbidden(&path.child("type"), TYPE))
        }
        "Localhost" => match annotation.strip_prefix(LOCALHOST) {
            None => Some(Error::forbidden(&path.child("type"), TYPE)),
            Some(p) if profile.localhost_profile.as_deref() != Some(p) => Some(Error::forbidden(
                &path.child("localhostProfile"),
                "apparmor profile in annotation and field must match",
            )),
            Some(_) => None,
        },
        _ => None,
    }
}

/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate`: a container's
/// effective AppArmor profile (its own, else the pod's) agrees with its
/// annotation. Windows pods are skipped.
pub fn validate_app_armor_annotations_and_fields_match_on_create(
    annotations: Option<&BTreeMap<String, String>>,
    spec: &PodSpec,
    spec_path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if spec.os.as_ref().is_some_and(|o| o.name == "windows") {
        return errs;
    }
    let empty = BTreeMap::new();
    let a = annotations.unwrap_or(&empty);
    let pod_profile = spec
        .security_context
        .as_ref()
        .and_then(|s| s.app_armor_profile.as_ref());
    let names = container_names(spec);
    for ((sc, cp), name) in container_security_contexts(spec, spec_path)
        .into_iter()
        .zip(names)
    {
        let Some(profile) = sc
            .and_then(|s| s.app_armor_profile.as_ref())
            .or(pod_profile)
        else {
            continue;
        };
        if let Some(v) = a.get(&format!("{APPARMOR_CONTAINER_PREFIX}{name}")) {
            let p = cp.child("securityContext").child("appArmorProfile");
            errs.0.extend(app_armor_match(v, profile, &p));
        }
    }
    errs
}
