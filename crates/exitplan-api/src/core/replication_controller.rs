//! core/v1 ReplicationController: defaulting (`SetDefaults_ReplicationController`),
//! validation (`ValidateReplicationController`, `…Spec`, `…Update`,
//! `…Status(Update)`, `ValidatePodTemplateSpecForRC`) and the registry
//! strategy (`pkg/registry/core/replicationcontroller`).
//!
//! * create: defaults → status cleared, generation 1 →
//!   [`validate_replication_controller`], `evictionResponders`, generic
//!   metadata;
//! * update: status kept, generation bumped when the spec changed →
//!   generic common fields, [`validate_replication_controller`] and
//!   [`validate_replication_controller_update`] (the selector may change);
//! * `/status`: spec reset → [`validate_replication_controller_status_update`].

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    PodTemplateSpec, ReplicationController, ReplicationControllerSpec, ReplicationControllerStatus,
};

use crate::apps::defaults::default_template;
use crate::apps::workload::{
    ReplicaCounts, SELECTOR_MISMATCH, labels_value, nonnegative, template_labels,
    validate_replica_counts, validate_workload_pod_policies,
};
use crate::batch::pod_template::validate_template_eviction_responders;
use crate::core::validation::PodValidationOptions;
use crate::core::validation::pod_spec::validate_pod_template_spec;
use crate::equality::semantic_eq;
use crate::field::{Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy, next_generation};

/// `SetDefaults_ReplicationController`: with template labels, an empty
/// selector and empty object labels are copied from them; replicas 1;
/// then the template's pod defaults.
pub fn default_replication_controller(rc: &mut ReplicationController) {
    let spec = rc.spec.get_or_insert_with(Default::default);
    if let Some(labels) = spec.template.as_ref().and_then(template_labels).cloned() {
        if spec.selector.as_ref().is_none_or(BTreeMap::is_empty) {
            spec.selector = Some(labels.clone());
        }
        if rc.metadata.labels.as_ref().is_none_or(BTreeMap::is_empty) {
            rc.metadata.labels = Some(labels);
        }
    }
    spec.replicas.get_or_insert(1);
    if let Some(t) = &mut spec.template {
        default_template(t);
    }
}

/// `ValidatePodTemplateSpecForRC` at `path` (`spec.template`): present,
/// labels selected by a non-empty `selector`, the Pod rules, and the
/// workload pod policies.
pub fn validate_pod_template_spec_for_rc(
    template: Option<&PodTemplateSpec>,
    selector: Option<&BTreeMap<String, String>>,
    path: &Path,
) -> ErrorList {
    let Some(template) = template else {
        return ErrorList(vec![Error::required(path, "")]);
    };
    let mut errs = ErrorList::new();
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        let labels = template_labels(template);
        let matches = selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !matches {
            errs.push(Error::invalid(
                &path.child("metadata").child("labels"),
                labels_value(labels),
                SELECTOR_MISMATCH,
            ));
        }
    }
    errs.append(validate_pod_template_spec(
        template,
        path,
        PodValidationOptions::default(),
    ));
    errs.append(validate_workload_pod_policies(
        template,
        "ReplicationController",
        path,
    ));
    errs
}

/// `ValidateReplicationControllerSpec` at `path` (`spec`).
pub fn validate_replication_controller_spec(
    spec: &ReplicationControllerSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    nonnegative(
        &mut errs,
        spec.min_ready_seconds,
        &path.child("minReadySeconds"),
    );
    if spec.selector.as_ref().is_none_or(BTreeMap::is_empty) {
        errs.push(Error::required(&path.child("selector"), ""));
    }
    nonnegative(&mut errs, spec.replicas, &path.child("replicas"));
    errs.append(validate_pod_template_spec_for_rc(
        spec.template.as_ref(),
        spec.selector.as_ref(),
        &path.child("template"),
    ));
    errs
}

fn spec_of(rc: &ReplicationController) -> ReplicationControllerSpec {
    rc.spec.clone().unwrap_or_default()
}

/// `ValidateReplicationController`: metadata (name a DNS subdomain) and the spec.
pub fn validate_replication_controller(rc: &ReplicationController) -> ErrorList {
    let mut errs = meta::validate_object_meta(&rc.metadata, true, NameRule::Subdomain);
    errs.append(validate_replication_controller_spec(
        &spec_of(rc),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateReplicationControllerUpdate`: metadata update rules and the spec again.
pub fn validate_replication_controller_update(
    new: &ReplicationController,
    old: &ReplicationController,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_replication_controller_spec(
        &spec_of(new),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateReplicationControllerStatus` at `path` (`status`).
pub fn validate_replication_controller_status(
    status: &ReplicationControllerStatus,
    path: &Path,
) -> ErrorList {
    validate_replica_counts(
        &ReplicaCounts {
            replicas: status.replicas,
            fully_labeled: status.fully_labeled_replicas,
            ready: status.ready_replicas,
            available: status.available_replicas,
            terminating: None,
            observed_generation: status.observed_generation,
        },
        path,
    )
}

/// `ValidateReplicationControllerStatusUpdate`: metadata update rules and the status.
pub fn validate_replication_controller_status_update(
    new: &ReplicationController,
    old: &ReplicationController,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_replication_controller_status(
        &new.status.clone().unwrap_or_default(),
        &Path::new("status"),
    ));
    errs
}

fn responders(
    new: &ReplicationController,
    old: Option<&ReplicationController>,
    ctx: &Context<'_>,
) -> ErrorList {
    let template = spec_of(new).template.unwrap_or_default();
    let old_template = old.map(|o| spec_of(o).template.unwrap_or_default());
    validate_template_eviction_responders(
        &template,
        old_template.as_ref(),
        &Path::new("spec").child("template"),
        ctx.absent,
    )
}

/// Create, update and status-update rules of core/v1 ReplicationControllers.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicationControllerStrategy;

impl Strategy for ReplicationControllerStrategy {
    type Object = ReplicationController;

    fn default(obj: &mut ReplicationController) {
        default_replication_controller(obj);
    }

    fn prepare_for_create(obj: &mut ReplicationController) {
        obj.status = Some(ReplicationControllerStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &ReplicationController, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_replication_controller(obj);
        errs.append(responders(obj, None, ctx));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut ReplicationController, old: &ReplicationController) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(
        new: &ReplicationController,
        old: &ReplicationController,
        ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_replication_controller(new));
        errs.append(validate_replication_controller_update(new, old));
        errs.append(responders(new, Some(old), ctx));
        errs
    }

    fn prepare_for_status_update(new: &mut ReplicationController, old: &ReplicationController) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(
        new: &ReplicationController,
        old: &ReplicationController,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_replication_controller_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};
    use serde_json::{Value, json};

    fn valid() -> Value {
        json!({
            "metadata": {"name": "abc", "namespace": "default"},
            "spec": {
                "selector": {"a": "b"},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent"}]}
                }
            }
        })
    }

    fn ctx(absent: &Absent) -> Context<'_> {
        Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent,
        }
    }

    fn create(v: &Value) -> Result<ReplicationController, ErrorList> {
        let absent = Absent::default();
        let mut rc: ReplicationController = serde_json::from_value(v.clone()).expect("rc");
        admit_create::<ReplicationControllerStrategy>(&mut rc, &ctx(&absent))
            .map(|()| {
                rc.metadata.resource_version = Some("1".into());
                rc
            })
            .map_err(|e| e.errors)
    }

    fn edit(f: impl FnOnce(&mut Value)) -> Value {
        let mut v = valid();
        f(&mut v);
        v
    }

    #[test]
    fn defaults() {
        let rc = create(&edit(|v| {
            v["spec"].as_object_mut().expect("spec").remove("selector");
        }))
        .expect("selector defaulted from the template");
        let spec = rc.spec.expect("spec");
        assert_eq!(
            spec.selector,
            Some([("a".to_owned(), "b".to_owned())].into())
        );
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(rc.metadata.labels, spec.selector);
        assert_eq!(rc.metadata.generation, Some(1));
        assert_eq!(
            serde_json::to_value(&rc.status).expect("json"),
            json!({"replicas": 0})
        );
    }

    // Upstream TestValidateReplicationController.
    #[test]
    fn validate_cases() {
        assert!(create(&valid()).is_ok());
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "zero-length ID",
                edit(|v| v["metadata"]["name"] = json!("")),
                "metadata.name",
            ),
            (
                "missing-namespace",
                edit(|v| {
                    v["metadata"]
                        .as_object_mut()
                        .expect("m")
                        .remove("namespace");
                }),
                "metadata.namespace",
            ),
            (
                "empty selector",
                edit(|v| {
                    v["spec"]["selector"] = json!({});
                    v["spec"].as_object_mut().expect("spec").remove("template");
                }),
                "spec.selector",
            ),
            (
                "selector_doesnt_match",
                edit(|v| v["spec"]["selector"] = json!({"foo": "bar"})),
                "spec.template.metadata.labels",
            ),
            (
                "invalid manifest",
                edit(|v| {
                    v["spec"].as_object_mut().expect("spec").remove("template");
                }),
                "spec.template",
            ),
            (
                "negative_replicas",
                edit(|v| v["spec"]["replicas"] = json!(-1)),
                "spec.replicas",
            ),
            (
                "invalid_label",
                edit(|v| {
                    v["metadata"]["labels"] = json!({"NoUppercaseOrSpecialCharsLike=Equals": "bar"})
                }),
                "metadata.labels",
            ),
            (
                "invalid_label 2",
                edit(|v| {
                    v["spec"]["template"]["metadata"]["labels"] =
                        json!({"a": "b", "NoUppercaseOrSpecialCharsLike=Equals": "bar"})
                }),
                "spec.template.labels",
            ),
            (
                "invalid_annotation",
                edit(|v| {
                    v["metadata"]["annotations"] =
                        json!({"NoUppercaseOrSpecialCharsLike=Equals": "bar"})
                }),
                "metadata.annotations",
            ),
            (
                "invalid restart policy 1",
                edit(|v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure")),
                "spec.template.spec.restartPolicy",
            ),
            (
                "invalid restart policy 2",
                edit(|v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")),
                "spec.template.spec.restartPolicy",
            ),
            (
                "template may not contain ephemeral containers",
                edit(
                    |v| v["spec"]["template"]["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]),
                ),
                "spec.template.spec.ephemeralContainers",
            ),
        ];
        for (name, v, field) in cases {
            let errs = create(&v).expect_err(name);
            assert!(
                errs.iter().any(|e| e.field.starts_with(field)),
                "{name}: {errs}"
            );
        }
        assert_eq!(
            create(&edit(|v| {
                v["spec"].as_object_mut().expect("spec").remove("template");
            }))
            .expect_err("no template")
            .to_string(),
            "spec.template: Required value"
        );
        assert_eq!(
            create(&edit(
                |v| v["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(1)
            ))
            .expect_err("deadline")
            .to_string(),
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported"
        );
    }

    // Upstream TestValidateReplicationControllerUpdate: the selector may change.
    #[test]
    fn update_cases() {
        let old = create(&valid()).expect("valid");
        let absent = Absent::default();
        let mut v = serde_json::to_value(&old).expect("json");
        v["spec"]["selector"] = json!({"a": "b", "c": "d"});
        v["spec"]["template"]["metadata"]["labels"] = json!({"a": "b", "c": "d"});
        let mut new: ReplicationController = serde_json::from_value(v.clone()).expect("rc");
        admit_update::<ReplicationControllerStrategy>(&mut new, &old, &ctx(&absent))
            .expect("selector change");
        assert_eq!(new.metadata.generation, Some(2));
        v["spec"]["replicas"] = json!(-1);
        let mut bad: ReplicationController = serde_json::from_value(v).expect("rc");
        let errs = admit_update::<ReplicationControllerStrategy>(&mut bad, &old, &ctx(&absent))
            .expect_err("negative");
        assert_eq!(
            errs.to_string(),
            r#"ReplicationController "abc" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#
        );
    }

    // Upstream TestValidateReplicationControllerStatus.
    #[test]
    fn status_cases() {
        let cases: Vec<(&str, Value, bool)> = vec![
            (
                "valid",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 2}),
                true,
            ),
            ("invalid replicas", json!({"replicas": -1}), false),
            (
                "invalid fullyLabeledReplicas",
                json!({"replicas": 3, "fullyLabeledReplicas": -1}),
                false,
            ),
            (
                "invalid readyReplicas",
                json!({"replicas": 3, "readyReplicas": -1}),
                false,
            ),
            (
                "invalid availableReplicas",
                json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": -1}),
                false,
            ),
            (
                "invalid observedGeneration",
                json!({"replicas": 3, "observedGeneration": -1}),
                false,
            ),
            (
                "fullyLabeledReplicas greater than replicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 4}),
                false,
            ),
            (
                "readyReplicas greater than replicas",
                json!({"replicas": 3, "readyReplicas": 4}),
                false,
            ),
            (
                "availableReplicas greater than replicas",
                json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 4}),
                false,
            ),
            (
                "availableReplicas greater than readyReplicas",
                json!({"replicas": 3, "readyReplicas": 2, "availableReplicas": 3}),
                false,
            ),
        ];
        for (name, status, ok) in cases {
            let status: ReplicationControllerStatus =
                serde_json::from_value(status).expect("status");
            let errs = validate_replication_controller_status(&status, &Path::new("status"));
            assert_eq!(errs.is_empty(), ok, "{name}: {errs}");
        }
    }
}
