//! Pod templates of Jobs: the full `ValidatePodTemplateSpec` shared with
//! every pod template ([`validate_pod_template_spec`], from
//! [`crate::core::validation`]) and the declarative `evictionResponders`
//! rules of the template's pod spec
//! ([`validate_template_eviction_responders`], eviction spec §3).
//!
//! Paths and texts match upstream, including its quirk of reporting template
//! labels at `spec.template.labels` (not `spec.template.metadata.labels`).

use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::absent::Absent;
use crate::core::pod::{responders_of, validate_eviction_responders};
use crate::core::validation::PodValidationOptions;
use crate::field::{ErrorList, Path};

/// `ValidatePodTemplateSpec` at `path` (`spec.template`).
pub fn validate_pod_template_spec(template: &PodTemplateSpec, path: &Path) -> ErrorList {
    crate::core::validation::pod_spec::validate_pod_template_spec(
        template,
        path,
        PodValidationOptions::default(),
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    fn container(name: &str) -> Container {
        let mut c = Container {
            name: name.into(),
            image: Some("img".into()),
            ..Default::default()
        };
        crate::core::validation::defaults::default_container(&mut c, false);
        c
    }

    #[test]
    fn container_names() {
        let t = PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                containers: vec![container("abc"), container("abc"), container("Bad_Name")],
                init_containers: Some(vec![container("abc"), container("")]),
                restart_policy: Some("Never".into()),
                dns_policy: Some("ClusterFirst".into()),
                termination_grace_period_seconds: Some(30),
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
                dns_policy: Some("ClusterFirst".into()),
                termination_grace_period_seconds: Some(30),
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
