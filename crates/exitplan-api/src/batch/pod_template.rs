//! The part of `apivalidation.ValidatePodTemplateSpec` that Job failure
//! handling depends on: template labels and annotations, container and
//! init-container names (podFailurePolicy `containerName` refers to them),
//! the pod-level `restartPolicy` enum, and the ban on ephemeral containers
//! in templates ([`validate_pod_template_spec`]); and the declarative
//! `evictionResponders` rules of the template's pod spec
//! ([`validate_template_eviction_responders`], eviction spec §3).
//!
//! **Not covered** (full PodSpec validation is out of scope for exitplan's
//! API layer): images, ports, resources, probes, volumes, security
//! contexts, container-level restart policies and rules, DNS, affinity,
//! tolerations, topology spread, scheduling gates, resource claims, …
//! Paths and texts of what *is* covered match upstream, including its quirk
//! of reporting template labels at `spec.template.labels` (not
//! `spec.template.metadata.labels`).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, PodTemplateSpec};

use super::constants::{RESTART_POLICY_ALWAYS, RESTART_POLICY_NEVER, RESTART_POLICY_ON_FAILURE};
use crate::absent::Absent;
use crate::core::pod::{responders_of, validate_eviction_responders};
use crate::field::{Error, ErrorList, Path};
use crate::{formats, meta};

/// Validates the covered part of a pod template at `path` (`spec.template`).
pub fn validate_pod_template_spec(template: &PodTemplateSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(m) = &template.metadata {
        if let Some(labels) = &m.labels {
            errs.append(meta::validate_labels(labels, &path.child("labels")));
        }
        if let Some(annotations) = &m.annotations {
            errs.append(meta::validate_annotations(
                annotations,
                &path.child("annotations"),
            ));
        }
    }
    let spec_path = path.child("spec");
    let spec = template.spec.clone().unwrap_or_default();
    errs.append(validate_containers(
        &spec.containers,
        &spec_path.child("containers"),
    ));
    errs.append(validate_init_containers(
        spec.init_containers.as_deref().unwrap_or_default(),
        &spec.containers,
        &spec_path.child("initContainers"),
    ));
    errs.append(validate_restart_policy(
        spec.restart_policy.as_deref().unwrap_or_default(),
        &spec_path.child("restartPolicy"),
    ));
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(Error::forbidden(
            &spec_path.child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}

/// `evictionResponders` of the template at `path` (`spec.template`), checked
/// with [`validate_eviction_responders`] at `<path>.spec`. Upstream validates
/// them declaratively, after the handwritten Job rules and with ratcheting:
/// on create (`old` is `None`) always; on update only when the list differs
/// from the stored template's (`old`) — an unchanged list is not validated
/// again. A priority missing from the submitted JSON (per `absent`) counts
/// as a change.
pub fn validate_template_eviction_responders(
    template: &PodTemplateSpec,
    old: Option<&PodTemplateSpec>,
    path: &Path,
    absent: &Absent,
) -> ErrorList {
    let spec_path = path.child("spec");
    let responders = responders_of(template.spec.as_ref());
    let list_path = spec_path.child("evictionResponders");
    let all_submitted =
        (0..responders.len()).all(|i| !absent.contains(&list_path.index(i).child("priority")));
    if old.is_some_and(|o| responders_of(o.spec.as_ref()) == responders && all_submitted) {
        return ErrorList::new();
    }
    let scheduling_group_set = template
        .spec
        .as_ref()
        .is_some_and(|s| s.scheduling_group.is_some());
    validate_eviction_responders(responders, scheduling_group_set, &spec_path, absent)
}

/// The name rule common to every container type (`validateContainerCommon`).
fn validate_container_name(c: &Container, path: &Path) -> ErrorList {
    let name_path = path.child("name");
    if c.name.is_empty() {
        return ErrorList(vec![Error::required(&name_path, "")]);
    }
    formats::is_dns1123_label(&c.name)
        .into_iter()
        .map(|m| Error::invalid(&name_path, c.name.as_str(), m))
        .collect()
}

/// `validateContainers`: at least one container; unique names.
fn validate_containers(containers: &[Container], path: &Path) -> ErrorList {
    if containers.is_empty() {
        return ErrorList(vec![Error::required(path, "")]);
    }
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let p = path.index(i);
        errs.append(validate_container_name(c, &p));
        if !names.insert(c.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), c.name.as_str()));
        }
    }
    errs
}

/// `validateInitContainers`: names unique across regular and init containers.
fn validate_init_containers(init: &[Container], regular: &[Container], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names: BTreeSet<&str> = regular.iter().map(|c| c.name.as_str()).collect();
    for (i, c) in init.iter().enumerate() {
        let p = path.index(i);
        errs.append(validate_container_name(c, &p));
        if names.contains(c.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), c.name.as_str()));
        } else if !c.name.is_empty() {
            names.insert(c.name.as_str());
        }
    }
    errs
}

/// `validateRestartPolicy` (pod level): Always, OnFailure or Never.
fn validate_restart_policy(policy: &str, path: &Path) -> ErrorList {
    match policy {
        RESTART_POLICY_ALWAYS | RESTART_POLICY_ON_FAILURE | RESTART_POLICY_NEVER => {
            ErrorList::new()
        }
        "" => ErrorList(vec![Error::required(path, "")]),
        other => ErrorList(vec![Error::not_supported(
            path,
            other,
            &[
                RESTART_POLICY_ALWAYS,
                RESTART_POLICY_ON_FAILURE,
                RESTART_POLICY_NEVER,
            ],
        )]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;

    fn container(name: &str) -> Container {
        Container {
            name: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn container_names() {
        let t = PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                containers: vec![container("abc"), container("abc"), container("Bad_Name")],
                init_containers: Some(vec![container("abc"), container("")]),
                restart_policy: Some("Never".into()),
                ..Default::default()
            }),
        };
        let errs = validate_pod_template_spec(&t, &Path::new("spec").child("template"));
        let got: Vec<String> = errs
            .iter()
            .map(|e| format!("{}|{:?}", e.field, e.error_type))
            .collect();
        assert_eq!(
            got,
            [
                "spec.template.spec.containers[1].name|Duplicate",
                "spec.template.spec.containers[2].name|Invalid",
                "spec.template.spec.initContainers[0].name|Duplicate",
                "spec.template.spec.initContainers[1].name|Required",
            ]
        );
    }

    #[test]
    fn no_containers_and_bad_restart_policy() {
        let t = PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                restart_policy: Some("Invalid".into()),
                ..Default::default()
            }),
        };
        let errs = validate_pod_template_spec(&t, &Path::new("spec").child("template"));
        assert_eq!(
            errs.to_string(),
            r#"[spec.template.spec.containers: Required value, spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: "Always", "OnFailure", "Never"]"#
        );
    }
}
