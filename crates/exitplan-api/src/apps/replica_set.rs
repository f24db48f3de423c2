//! apps/v1 ReplicaSet: validation (`ValidateReplicaSet`,
//! `ValidateReplicaSetSpec`, `ValidateReplicaSetStatus(Update)`) and the
//! registry strategy (`pkg/registry/apps/replicaset`).
//!
//! * create: defaults → status cleared, generation 1 →
//!   [`validate_replica_set`], the template's `evictionResponders`, then
//!   the generic metadata check;
//! * update: status kept, generation bumped when the spec changed →
//!   generic common fields, [`validate_replica_set`] *and*
//!   [`validate_replica_set_update`] (a spec error shows twice, as
//!   upstream), `spec.selector` immutable;
//! * `/status`: spec reset to the stored one →
//!   [`validate_replica_set_status_update`].

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::defaults::default_replica_set;
use super::workload::{
    ReplicaCounts, nonnegative, selector_of, validate_pod_template_for_replicas,
    validate_replica_counts, validate_required_selector, validate_selector_immutable,
    validate_template_responders,
};
use crate::absent::Absent;
use crate::equality::semantic_eq;
use crate::field::{ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy, next_generation};

fn template_of(spec: &ReplicaSetSpec) -> PodTemplateSpec {
    spec.template.clone().unwrap_or_default()
}

/// `ValidateReplicaSetSpec` at `path` (`spec`); `selector` is `None` when
/// the submitted object had none.
pub fn validate_replica_set_spec(
    spec: &ReplicaSetSpec,
    selector: Option<&LabelSelector>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    nonnegative(&mut errs, spec.replicas, &path.child("replicas"));
    nonnegative(
        &mut errs,
        spec.min_ready_seconds,
        &path.child("minReadySeconds"),
    );
    // Upstream says "deployment" here too.
    let (sel_errs, sel) = validate_required_selector(
        selector,
        "deployment",
        "invalid label selector",
        &path.child("selector"),
    );
    errs.append(sel_errs);
    if let Some(sel) = sel {
        errs.append(validate_pod_template_for_replicas(
            &template_of(spec),
            &sel,
            "ReplicaSet",
            &path.child("template"),
        ));
    }
    errs
}

/// `ValidateReplicaSet`: metadata (name a DNS subdomain) and the spec.
pub fn validate_replica_set(rs: &ReplicaSet, absent: &Absent) -> ErrorList {
    let mut errs = meta::validate_object_meta(&rs.metadata, true, NameRule::Subdomain);
    errs.append(validate_replica_set_spec(
        &rs.spec,
        selector_of(&rs.spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateReplicaSetUpdate`: metadata update rules and the spec again.
pub fn validate_replica_set_update(
    new: &ReplicaSet,
    old: &ReplicaSet,
    absent: &Absent,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_replica_set_spec(
        &new.spec,
        selector_of(&new.spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateReplicaSetStatus` at `path` (`status`).
pub fn validate_replica_set_status(status: &ReplicaSetStatus, path: &Path) -> ErrorList {
    validate_replica_counts(
        &ReplicaCounts {
            replicas: status.replicas,
            fully_labeled: status.fully_labeled_replicas,
            ready: status.ready_replicas,
            available: status.available_replicas,
            terminating: status.terminating_replicas,
            observed_generation: status.observed_generation,
        },
        path,
    )
}

/// `ValidateReplicaSetStatusUpdate`: metadata update rules and the status.
pub fn validate_replica_set_status_update(new: &ReplicaSet, old: &ReplicaSet) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_replica_set_status(
        &new.status.clone().unwrap_or_default(),
        &Path::new("status"),
    ));
    errs
}

/// Create, update and status-update rules of apps/v1 ReplicaSets.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicaSetStrategy;

impl Strategy for ReplicaSetStrategy {
    type Object = ReplicaSet;

    fn default(obj: &mut ReplicaSet) {
        default_replica_set(obj);
    }

    fn prepare_for_create(obj: &mut ReplicaSet) {
        obj.status = Some(ReplicaSetStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &ReplicaSet, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_replica_set(obj, ctx.absent);
        errs.append(validate_template_responders(
            &template_of(&obj.spec),
            None,
            ctx.absent,
        ));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut ReplicaSet, old: &ReplicaSet) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(new: &ReplicaSet, old: &ReplicaSet, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_replica_set(new, ctx.absent));
        errs.append(validate_replica_set_update(new, old, ctx.absent));
        errs.append(validate_template_responders(
            &template_of(&new.spec),
            Some(&template_of(&old.spec)),
            ctx.absent,
        ));
        errs.append(validate_selector_immutable(
            selector_of(&new.spec.selector, ctx.absent),
            Some(&old.spec.selector),
        ));
        errs
    }

    fn prepare_for_status_update(new: &mut ReplicaSet, old: &ReplicaSet) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &ReplicaSet, old: &ReplicaSet, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_replica_set_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::admit_update;
    use crate::strategy::testing::{created, edited};
    use serde_json::{Value, json};

    fn valid() -> Value {
        json!({
            "metadata": {"name": "abc", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent"}]}
                }
            }
        })
    }

    fn create(v: &Value) -> Result<ReplicaSet, ErrorList> {
        created::<ReplicaSetStrategy>(v)
    }

    fn edit(f: impl FnOnce(&mut Value)) -> Value {
        edited(valid(), f)
    }

    // Upstream TestValidateReplicaSet: the error cases and the field each reports.
    #[test]
    fn validate_replica_set_cases() {
        assert!(create(&valid()).is_ok());
        assert!(create(&edit(|v| v["spec"]["replicas"] = json!(0))).is_ok());
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
                edit(|v| v["spec"]["selector"] = json!({})),
                "spec.selector",
            ),
            (
                "selector_doesnt_match",
                edit(|v| v["spec"]["selector"] = json!({"matchLabels": {"foo": "bar"}})),
                "spec.template.metadata.labels",
            ),
            (
                "invalid manifest",
                edit(|v| v["spec"]["template"] = json!(null)),
                "spec.template.metadata.labels",
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
                        json!({"NoUppercaseOrSpecialCharsLike=Equals": "bar"})
                }),
                "spec.template.metadata.labels",
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
        ];
        for (name, v, field) in cases {
            let errs = create(&v).expect_err(name);
            assert!(
                errs.iter().any(|e| e.field.starts_with(field)),
                "{name}: {errs}"
            );
        }
        assert_eq!(
            create(&edit(
                |v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")
            ))
            .expect_err("never")
            .to_string(),
            r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#
        );
        assert_eq!(
            create(&edit(|v| v["spec"]["selector"] = json!({})))
                .expect_err("empty")
                .to_string(),
            "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
        );
    }

    // Upstream TestValidateReplicaSetUpdate.
    #[test]
    fn update_cases() {
        let old = create(&valid()).expect("valid");
        let old_json = serde_json::to_value(&old).expect("json");
        let absent = Absent::default();
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let run = |f: &dyn Fn(&mut Value)| {
            let mut v = old_json.clone();
            f(&mut v);
            let mut rs: ReplicaSet = serde_json::from_value(v).expect("rs");
            admit_update::<ReplicaSetStrategy>(&mut rs, &old, &ctx)
                .map(|()| rs)
                .map_err(|e| e.errors)
        };
        let scaled = run(&|v| v["spec"]["replicas"] = json!(3)).expect("scale");
        assert_eq!(scaled.metadata.generation, Some(2));
        assert!(
            run(&|v| v["spec"]["template"]["spec"]["containers"][0]["image"] = json!("image2"))
                .is_ok()
        );
        let errs = run(&|v| v["spec"]["replicas"] = json!(-1)).expect_err("negative");
        assert_eq!(
            errs.len(),
            2,
            "reported by validate and validate-update: {errs}"
        );
        assert_eq!(
            errs.aggregate().as_deref(),
            Some("spec.replicas: Invalid value: -1: must be greater than or equal to 0")
        );
        let errs = run(&|v| {
            v["spec"]["selector"] = json!({"matchLabels": {"a": "b", "c": "d"}});
            v["spec"]["template"]["metadata"]["labels"] = json!({"a": "b", "c": "d"});
        })
        .expect_err("selector");
        assert_eq!(
            errs.to_string(),
            r#"spec.selector: Invalid value: {"matchLabels":{"a":"b","c":"d"}}: field is immutable"#
        );
    }

    // Upstream TestValidateReplicaSetStatus.
    #[test]
    fn status_cases() {
        let cases: Vec<(&str, Value, bool)> = vec![
            (
                "valid",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 2}),
                true,
            ),
            (
                "invalid replicas",
                json!({"replicas": -1, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 2}),
                false,
            ),
            (
                "invalid fullyLabeledReplicas",
                json!({"replicas": 3, "fullyLabeledReplicas": -1, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 2}),
                false,
            ),
            (
                "invalid readyReplicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": -1, "availableReplicas": 1, "observedGeneration": 2}),
                false,
            ),
            (
                "invalid availableReplicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": -1, "observedGeneration": 2}),
                false,
            ),
            (
                "invalid observedGeneration",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": -1}),
                false,
            ),
            (
                "fullyLabeledReplicas greater than replicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 4, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 1}),
                false,
            ),
            (
                "readyReplicas greater than replicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 4, "availableReplicas": 3, "observedGeneration": 1}),
                false,
            ),
            (
                "availableReplicas greater than replicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 4, "observedGeneration": 1}),
                false,
            ),
            (
                "availableReplicas greater than readyReplicas",
                json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 3, "observedGeneration": 1}),
                false,
            ),
        ];
        for (name, status, ok) in cases {
            let status: ReplicaSetStatus = serde_json::from_value(status).expect("status");
            let errs = validate_replica_set_status(&status, &Path::new("status"));
            assert_eq!(errs.is_empty(), ok, "{name}: {errs}");
        }
    }
}
