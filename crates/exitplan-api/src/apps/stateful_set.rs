//! apps/v1 StatefulSet: validation (`ValidateStatefulSet`,
//! `ValidateStatefulSetSpec`, `ValidateStatefulSetUpdate`,
//! `ValidateStatefulSetStatus(Update)`) and the registry strategy
//! (`pkg/registry/apps/statefulset`).
//!
//! As upstream, the template's pod spec is **not** run through the Pod
//! rules (upstream leaves it as a TODO because the volumes come from
//! `volumeClaimTemplates`): only the selector match, the template labels
//! and annotations, `restartPolicy: Always` and no `activeDeadlineSeconds`
//! are checked. Names must be DNS labels (they prefix pod hostnames).
//!
//! * create: defaults → status cleared, generation 1 →
//!   [`validate_stateful_set`], `evictionResponders`, generic metadata;
//! * update: status kept, generation bumped when the spec changed →
//!   generic common fields, [`validate_stateful_set_update`] (only
//!   replicas, ordinals, template, updateStrategy,
//!   persistentVolumeClaimRetentionPolicy and minReadySeconds may change);
//! * `/status`: spec reset → [`validate_stateful_set_status_update`].

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::defaults::default_stateful_set;
use super::workload::{
    ABOVE_REPLICAS, int_or_percent_value, int_or_string, nonnegative, not_above, selector_of,
    strategy_json, validate_collision_count, validate_required_selector,
    validate_template_labels_match, validate_template_responders, validate_workload_pod_policies,
};
use crate::absent::Absent;
use crate::core::validation::security_annotations::validate_pod_specific_annotations;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::nonnegative::validate_nonnegative_field;
use crate::policy::pdb::{is_not_more_than_100_percent, validate_positive_int_or_percent};
use crate::render;
use crate::strategy::{Context, Strategy, next_generation};

/// `OrderedReady`: pods are created and deleted one at a time, in order.
pub const ORDERED_READY: &str = "OrderedReady";
/// `Parallel`: pods are created and deleted together.
pub const PARALLEL: &str = "Parallel";
/// `RollingUpdate`: pods are replaced in reverse ordinal order.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `OnDelete`: pods are replaced only when deleted.
pub const ON_DELETE: &str = "OnDelete";
/// PVC retention: keep the claims.
pub const RETAIN: &str = "Retain";
/// PVC retention: delete the claims.
pub const DELETE: &str = "Delete";
/// The error detail of a change to a field the spec does not let change.
pub const FORBIDDEN_UPDATE: &str = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

fn rolling_update_json(ru: &RollingUpdateStatefulSetStrategy) -> String {
    format!(
        "{{\"Partition\":{},\"MaxUnavailable\":{}}}",
        ru.partition.unwrap_or(0),
        ru.max_unavailable
            .as_ref()
            .map_or_else(|| "null".to_owned(), render::int_or_string)
    )
}

/// `validateRollingUpdateStatefulSet`: partition ≥ 0; maxUnavailable a
/// non-zero int or percent, at most 100%.
pub fn validate_rolling_update(ru: &RollingUpdateStatefulSetStrategy, path: &Path) -> ErrorList {
    let mut errs = validate_nonnegative_field(
        i64::from(ru.partition.unwrap_or(0)),
        &path.child("partition"),
    );
    if let Some(mu) = &ru.max_unavailable {
        let p = path.child("maxUnavailable");
        errs.append(validate_positive_int_or_percent(mu, &p));
        if int_or_percent_value(mu) == 0 {
            errs.push(Error::invalid(&p, int_or_string(mu), "cannot be 0"));
        }
        errs.append(is_not_more_than_100_percent(mu, &p));
    }
    errs
}

fn validate_update_strategy(strategy: &StatefulSetUpdateStrategy, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    match strategy.type_.as_deref().unwrap_or_default() {
        "" => errs.push(Error::required(path, "")),
        ON_DELETE => {
            if let Some(ru) = &strategy.rolling_update {
                errs.push(Error::invalid(
                    &path.child("rollingUpdate"),
                    BadValue::Json(rolling_update_json(ru)),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        ROLLING_UPDATE => {
            if let Some(ru) = &strategy.rolling_update {
                errs.append(validate_rolling_update(ru, &path.child("rollingUpdate")));
            }
        }
        _ => errs.push(Error::invalid(
            path,
            BadValue::Json(strategy_json(
                strategy.type_.as_deref(),
                strategy.rolling_update.as_ref().map(rolling_update_json),
            )),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    errs
}

fn validate_retention_policy(
    policy: Option<&StatefulSetPersistentVolumeClaimRetentionPolicy>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(policy) = policy else {
        return errs;
    };
    for (name, value) in [
        ("whenDeleted", &policy.when_deleted),
        ("whenScaled", &policy.when_scaled),
    ] {
        let value = value.as_deref().unwrap_or_default();
        if value != RETAIN && value != DELETE {
            errs.push(Error::not_supported(
                &path.child(name),
                value,
                &[RETAIN, DELETE],
            ));
        }
    }
    errs
}

/// `ValidateStatefulSetSpec` at `path` (`spec`); `selector` is `None` when
/// the submitted object had none.
pub fn validate_stateful_set_spec(
    spec: &StatefulSetSpec,
    selector: Option<&LabelSelector>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let pmp_path = path.child("podManagementPolicy");
    match spec.pod_management_policy.as_deref().unwrap_or_default() {
        "" => errs.push(Error::required(&pmp_path, "")),
        ORDERED_READY | PARALLEL => {}
        other => errs.push(Error::invalid(
            &pmp_path,
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errs.append(validate_update_strategy(
        &spec.update_strategy.clone().unwrap_or_default(),
        &path.child("updateStrategy"),
    ));
    errs.append(validate_retention_policy(
        spec.persistent_volume_claim_retention_policy.as_ref(),
        &path.child("persistentVolumeClaimRetentionPolicy"),
    ));
    nonnegative(&mut errs, spec.replicas, &path.child("replicas"));
    nonnegative(
        &mut errs,
        spec.min_ready_seconds,
        &path.child("minReadySeconds"),
    );
    if let Some(ordinals) = &spec.ordinals {
        nonnegative(&mut errs, ordinals.start, &path.child("ordinals.start"));
    }
    let (sel_errs, sel) =
        validate_required_selector(selector, "statefulset", "", &path.child("selector"));
    errs.append(sel_errs);
    let template_path = path.child("template");
    if let Some(sel) = sel {
        let template = &spec.template;
        errs.append(validate_template_labels_match(
            template,
            &sel,
            &template_path,
        ));
        let m = template.metadata.clone().unwrap_or_default();
        if let Some(labels) = &m.labels {
            errs.append(meta::validate_labels(
                labels,
                &template_path.child("labels"),
            ));
        }
        if let Some(annotations) = &m.annotations {
            let ann_path = template_path.child("annotations");
            errs.append(meta::validate_annotations(annotations, &ann_path));
            errs.append(validate_pod_specific_annotations(
                annotations,
                &template.spec.clone().unwrap_or_default(),
                &ann_path,
            ));
        }
    }
    errs.append(validate_workload_pod_policies(
        &spec.template,
        "StatefulSet",
        &template_path,
    ));
    errs
}

/// `ValidateStatefulSet`: metadata (name a DNS label) and the spec.
pub fn validate_stateful_set(sts: &StatefulSet, absent: &Absent) -> ErrorList {
    let mut errs = meta::validate_object_meta(&sts.metadata, true, NameRule::Label);
    errs.append(validate_stateful_set_spec(
        &sts.spec,
        selector_of(&sts.spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateStatefulSetUpdate`: metadata update rules, the spec (without
/// the name rule), and that only the mutable fields changed.
pub fn validate_stateful_set_update(
    new: &StatefulSet,
    old: &StatefulSet,
    absent: &Absent,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_stateful_set_spec(
        &new.spec,
        selector_of(&new.spec.selector, absent),
        &Path::new("spec"),
    ));
    let mut clone = new.spec.clone();
    clone.replicas = old.spec.replicas;
    clone.template.clone_from(&old.spec.template);
    clone.update_strategy.clone_from(&old.spec.update_strategy);
    clone.min_ready_seconds = old.spec.min_ready_seconds;
    clone.ordinals.clone_from(&old.spec.ordinals);
    clone
        .persistent_volume_claim_retention_policy
        .clone_from(&old.spec.persistent_volume_claim_retention_policy);
    if absent.contains(&Path::new("spec").child("selector")) || !semantic_eq(&clone, &old.spec) {
        errs.push(Error::forbidden(&Path::new("spec"), FORBIDDEN_UPDATE));
    }
    errs
}

/// `ValidateStatefulSetStatus` at `path` (`status`).
pub fn validate_stateful_set_status(status: &StatefulSetStatus, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (name, value) in [
        ("replicas", Some(status.replicas)),
        ("readyReplicas", status.ready_replicas),
        ("currentReplicas", status.current_replicas),
        ("updatedReplicas", status.updated_replicas),
        ("availableReplicas", status.available_replicas),
    ] {
        nonnegative(&mut errs, value, &path.child(name));
    }
    if let Some(g) = status.observed_generation {
        errs.append(validate_nonnegative_field(
            g,
            &path.child("observedGeneration"),
        ));
    }
    if let Some(c) = status.collision_count {
        nonnegative(&mut errs, Some(c), &path.child("collisionCount"));
    }
    for (name, value) in [
        ("readyReplicas", status.ready_replicas),
        ("currentReplicas", status.current_replicas),
        ("updatedReplicas", status.updated_replicas),
        ("availableReplicas", status.available_replicas),
    ] {
        not_above(
            &mut errs,
            value,
            Some(status.replicas),
            &path.child(name),
            ABOVE_REPLICAS,
        );
    }
    not_above(
        &mut errs,
        status.available_replicas,
        status.ready_replicas,
        &path.child("availableReplicas"),
        "cannot be greater than status.readyReplicas",
    );
    errs
}

/// `ValidateStatefulSetStatusUpdate`: the status, metadata update rules and
/// a collisionCount that never drops.
pub fn validate_stateful_set_status_update(new: &StatefulSet, old: &StatefulSet) -> ErrorList {
    let status = new.status.clone().unwrap_or_default();
    let mut errs = validate_stateful_set_status(&status, &Path::new("status"));
    errs.append(meta::validate_object_meta_update(
        &new.metadata,
        &old.metadata,
    ));
    errs.append(validate_collision_count(
        status.collision_count,
        old.status.as_ref().and_then(|s| s.collision_count),
    ));
    errs
}

/// Create, update and status-update rules of apps/v1 StatefulSets.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatefulSetStrategy;

impl Strategy for StatefulSetStrategy {
    type Object = StatefulSet;

    fn default(obj: &mut StatefulSet) {
        default_stateful_set(obj);
    }

    fn prepare_for_create(obj: &mut StatefulSet) {
        obj.status = Some(StatefulSetStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &StatefulSet, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_stateful_set(obj, ctx.absent);
        errs.append(validate_template_responders(
            &obj.spec.template,
            None,
            ctx.absent,
        ));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut StatefulSet, old: &StatefulSet) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(new: &StatefulSet, old: &StatefulSet, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_stateful_set_update(new, old, ctx.absent));
        errs.append(validate_template_responders(
            &new.spec.template,
            Some(&old.spec.template),
            ctx.absent,
        ));
        errs
    }

    fn prepare_for_status_update(new: &mut StatefulSet, old: &StatefulSet) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(
        new: &StatefulSet,
        old: &StatefulSet,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_stateful_set_status_update(new, old));
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
                "serviceName": "abc",
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "abc", "image": "image"}]}
                }
            }
        })
    }

    fn create(v: &Value) -> Result<StatefulSet, ErrorList> {
        created::<StatefulSetStrategy>(v)
    }

    fn edit(f: impl FnOnce(&mut Value)) -> Value {
        edited(valid(), f)
    }

    // Upstream TestValidateStatefulSet (the error cases, with their full errors).
    #[test]
    fn validate_stateful_set_cases() {
        for ok in [
            valid(),
            edit(|v| v["spec"]["podManagementPolicy"] = json!("Parallel")),
            edit(|v| v["spec"]["updateStrategy"] = json!({"type": "OnDelete"})),
            edit(
                |v| v["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2, "maxUnavailable": "50%"}}),
            ),
            edit(|v| v["spec"]["minReadySeconds"] = json!(10)),
            edit(|v| v["spec"]["ordinals"] = json!({"start": 2})),
            edit(|v| {
                v["spec"]["persistentVolumeClaimRetentionPolicy"] =
                    json!({"whenDeleted": "Delete", "whenScaled": "Delete"})
            }),
        ] {
            assert!(create(&ok).is_ok(), "{ok}");
        }
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "zero-length name",
                edit(|v| v["metadata"]["name"] = json!("")),
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "name not a DNS label",
                edit(|v| v["metadata"]["name"] = json!("a.b")),
                "metadata.name: Invalid value: \"a.b\": must not contain dots",
            ),
            (
                "empty selector",
                edit(|v| v["spec"]["selector"] = json!({})),
                "spec.selector: Invalid value: {}: empty selector is invalid for statefulset",
            ),
            (
                "selector_doesnt_match",
                edit(|v| v["spec"]["selector"] = json!({"matchLabels": {"foo": "bar"}})),
                r#"spec.template.metadata.labels: Invalid value: {"a":"b"}: `selector` does not match template `labels`"#,
            ),
            (
                "negative_replicas",
                edit(|v| v["spec"]["replicas"] = json!(-1)),
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "invalid_label 2",
                edit(|v| {
                    v["spec"]["template"]["metadata"]["labels"] =
                        json!({"a": "b", "NoUppercaseOrSpecialCharsLike=Equals": "bar"})
                }),
                "spec.template.labels: Invalid value: \"NoUppercaseOrSpecialCharsLike=Equals\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            (
                "invalid restart policy 1",
                edit(|v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure")),
                r#"spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always""#,
            ),
            (
                "active deadline",
                edit(|v| v["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(1)),
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
            ),
            (
                "invalid pod management policy 2",
                edit(|v| v["spec"]["podManagementPolicy"] = json!("foo")),
                "spec.podManagementPolicy: Invalid value: \"foo\": must be 'OrderedReady' or 'Parallel'",
            ),
            (
                "set active deadline seconds",
                edit(|v| v["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(10)),
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
            ),
            (
                "empty update strategy",
                edit(|v| v["spec"]["updateStrategy"] = json!({"type": "foo"})),
                r#"spec.updateStrategy: Invalid value: {"Type":"foo","RollingUpdate":null}: must be 'RollingUpdate' or 'OnDelete'"#,
            ),
            (
                "invalid rolling update",
                edit(|v| {
                    v["spec"]["updateStrategy"] =
                        json!({"type": "OnDelete", "rollingUpdate": {"partition": 1}})
                }),
                r#"spec.updateStrategy.rollingUpdate: Invalid value: {"Partition":1,"MaxUnavailable":null}: only allowed for updateStrategy 'RollingUpdate'"#,
            ),
            (
                "negative partition",
                edit(|v| {
                    v["spec"]["updateStrategy"] =
                        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": -1}})
                }),
                "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "empty pod template",
                edit(|v| v["spec"]["template"] = json!({})),
                r#"spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`"#,
            ),
            (
                "negative minReadySeconds",
                edit(|v| v["spec"]["minReadySeconds"] = json!(-1)),
                "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "invalid ordinals.start",
                edit(|v| v["spec"]["ordinals"] = json!({"start": -2})),
                "spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0",
            ),
            (
                "invalid PersistentVolumeClaimRetentionPolicy",
                edit(
                    |v| v["spec"]["persistentVolumeClaimRetentionPolicy"] = json!({"whenDeleted": "invalid-policy-type", "whenScaled": "invalid-policy-type"}),
                ),
                r#"[spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "invalid-policy-type": supported values: "Retain", "Delete", spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "invalid-policy-type": supported values: "Retain", "Delete"]"#,
            ),
            (
                "zero maxUnavailable",
                edit(|v| {
                    v["spec"]["updateStrategy"] =
                        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}})
                }),
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0",
            ),
            (
                "zero percent maxUnavailable",
                edit(|v| {
                    v["spec"]["updateStrategy"] =
                        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "0%"}})
                }),
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": cannot be 0",
            ),
            (
                "greater than 100 percent maxUnavailable",
                edit(|v| {
                    v["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "101%"}})
                }),
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"101%\": must not be greater than 100%",
            ),
        ];
        for (name, v, want) in cases {
            let errs = create(&v).expect_err(name);
            assert_eq!(errs.to_string(), want, "{name}");
        }
    }

    // The StatefulSet of the Kubernetes docs ("web", with a claim template).
    #[test]
    fn docs_example() {
        let v = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "nginx"}}, "serviceName": "nginx", "replicas": 3, "minReadySeconds": 10,
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"terminationGracePeriodSeconds": 10, "containers": [{"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.24",
                        "ports": [{"containerPort": 80, "name": "web"}], "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "www"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "my-storage-class", "resources": {"requests": {"storage": "1Gi"}}}}]}});
        let s = create(&v).expect("docs example");
        assert_eq!(s.metadata.generation, Some(1));
        assert_eq!(
            s.spec.pod_management_policy.as_deref(),
            Some("OrderedReady")
        );
    }

    // The pod spec itself is not validated for StatefulSets (upstream TODO).
    #[test]
    fn pod_spec_not_validated() {
        assert!(
            create(&edit(
                |v| v["spec"]["template"]["spec"]["containers"] = json!([])
            ))
            .is_ok()
        );
    }

    // Upstream TestValidateStatefulSetUpdate.
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
            let mut s: StatefulSet = serde_json::from_value(v).expect("sts");
            admit_update::<StatefulSetStrategy>(&mut s, &old, &ctx)
                .map(|()| s)
                .map_err(|e| e.errors)
        };
        for (name, f) in [
            (
                "update replicas",
                &(|v: &mut Value| v["spec"]["replicas"] = json!(3)) as &dyn Fn(&mut Value),
            ),
            ("update template", &|v: &mut Value| {
                v["spec"]["template"]["spec"]["containers"][0]["image"] = json!("image2")
            }),
            ("update strategy", &|v: &mut Value| {
                v["spec"]["updateStrategy"] = json!({"type": "OnDelete"})
            }),
            ("update min ready seconds", &|v: &mut Value| {
                v["spec"]["minReadySeconds"] = json!(5)
            }),
            ("update ordinals", &|v: &mut Value| {
                v["spec"]["ordinals"] = json!({"start": 3})
            }),
            ("update retention", &|v: &mut Value| {
                v["spec"]["persistentVolumeClaimRetentionPolicy"] =
                    json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
            }),
        ] {
            let s = run(f).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.metadata.generation, Some(2), "{name}");
        }
        for (name, f) in [
            (
                "update service name",
                &(|v: &mut Value| v["spec"]["serviceName"] = json!("other")) as &dyn Fn(&mut Value),
            ),
            ("update pod management policy", &|v: &mut Value| {
                v["spec"]["podManagementPolicy"] = json!("Parallel")
            }),
            ("update volume claim templates", &|v: &mut Value| {
                v["spec"]["volumeClaimTemplates"] = json!([{"metadata": {"name": "data"}}])
            }),
            ("update revision history limit", &|v: &mut Value| {
                v["spec"]["revisionHistoryLimit"] = json!(3)
            }),
            ("update selector", &|v: &mut Value| {
                v["spec"]["selector"] = json!({"matchLabels": {"a": "b", "c": "d"}});
                v["spec"]["template"]["metadata"]["labels"] = json!({"a": "b", "c": "d"});
            }),
        ] {
            let errs = run(f).expect_err(name);
            assert_eq!(
                errs.to_string(),
                format!("spec: Forbidden: {FORBIDDEN_UPDATE}"),
                "{name}"
            );
        }
        let errs = run(&|v| v["spec"]["replicas"] = json!(-1)).expect_err("negative");
        assert_eq!(
            errs.to_string(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
    }

    // Upstream TestValidateStatefulSetStatus.
    #[test]
    fn status_cases() {
        let cases: Vec<(&str, Value, bool)> = vec![
            (
                "valid",
                json!({"replicas": 3, "readyReplicas": 3, "currentReplicas": 2, "updatedReplicas": 1, "availableReplicas": 3, "observedGeneration": 3, "collisionCount": 2}),
                true,
            ),
            ("invalid replicas", json!({"replicas": -1}), false),
            (
                "invalid readyReplicas",
                json!({"replicas": 3, "readyReplicas": -1}),
                false,
            ),
            (
                "invalid currentReplicas",
                json!({"replicas": 3, "currentReplicas": -1}),
                false,
            ),
            (
                "invalid updatedReplicas",
                json!({"replicas": 3, "updatedReplicas": -1}),
                false,
            ),
            (
                "invalid availableReplicas",
                json!({"replicas": 3, "availableReplicas": -1}),
                false,
            ),
            (
                "invalid observedGeneration",
                json!({"replicas": 3, "observedGeneration": -3}),
                false,
            ),
            (
                "invalid collisionCount",
                json!({"replicas": 3, "collisionCount": -3}),
                false,
            ),
            (
                "readyReplicas greater than replicas",
                json!({"replicas": 3, "readyReplicas": 4}),
                false,
            ),
            (
                "currentReplicas greater than replicas",
                json!({"replicas": 3, "currentReplicas": 4}),
                false,
            ),
            (
                "updatedReplicas greater than replicas",
                json!({"replicas": 3, "updatedReplicas": 4}),
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
            let status: StatefulSetStatus = serde_json::from_value(status).expect("status");
            let errs = validate_stateful_set_status(&status, &Path::new("status"));
            assert_eq!(errs.is_empty(), ok, "{name}: {errs}");
        }
        let status: StatefulSetStatus = serde_json::from_value(
            json!({"replicas": 3, "readyReplicas": 2, "availableReplicas": 3}),
        )
        .expect("s");
        assert_eq!(
            validate_stateful_set_status(&status, &Path::new("status")).to_string(),
            "status.availableReplicas: Invalid value: 3: cannot be greater than status.readyReplicas"
        );
    }
}
