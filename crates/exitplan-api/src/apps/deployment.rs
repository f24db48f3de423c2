//! apps/v1 Deployment: validation (`ValidateDeployment`,
//! `ValidateDeploymentSpec`, `ValidateDeploymentStrategy`,
//! `ValidateRollingUpdateDeployment`, `ValidateDeploymentStatus(Update)`)
//! and the registry strategy (`pkg/registry/apps/deployment`).
//!
//! * create: defaults → status cleared, generation 1 →
//!   [`validate_deployment`], the template's `evictionResponders`, then the
//!   generic metadata check;
//! * update: status kept, generation bumped when the spec *or the
//!   annotations* changed → generic common fields,
//!   [`validate_deployment_update`], `spec.selector` immutable;
//! * `/status`: spec and labels reset to the stored object →
//!   [`validate_deployment_status_update`].

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStatus, DeploymentStrategy as V1Strategy,
    RollingUpdateDeployment,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::defaults::default_deployment;
use super::workload::{
    ABOVE_REPLICAS, int_or_percent_value, int_or_string, int_or_zero, nonnegative, not_above,
    selector_of, strategy_json, validate_collision_count, validate_pod_template_for_replicas,
    validate_required_selector, validate_selector_immutable, validate_template_responders,
};
use crate::absent::Absent;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::nonnegative::validate_nonnegative_field;
use crate::policy::pdb::{is_not_more_than_100_percent, validate_positive_int_or_percent};
use crate::render;
use crate::strategy::{Context, Strategy, next_generation};

/// `Recreate`: kill every old pod before creating new ones.
pub const RECREATE: &str = "Recreate";
/// `RollingUpdate`: replace pods gradually.
pub const ROLLING_UPDATE: &str = "RollingUpdate";

fn rolling_update_json(ru: &RollingUpdateDeployment) -> String {
    format!(
        "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
        render::int_or_string(&int_or_zero(ru.max_unavailable.as_ref())),
        render::int_or_string(&int_or_zero(ru.max_surge.as_ref()))
    )
}

/// `ValidateRollingUpdateDeployment`: both limits non-negative ints or
/// percents, not both 0, maxUnavailable at most 100%.
pub fn validate_rolling_update(ru: &RollingUpdateDeployment, path: &Path) -> ErrorList {
    let unavailable = int_or_zero(ru.max_unavailable.as_ref());
    let surge = int_or_zero(ru.max_surge.as_ref());
    let unavailable_path = path.child("maxUnavailable");
    let mut errs = validate_positive_int_or_percent(&unavailable, &unavailable_path);
    errs.append(validate_positive_int_or_percent(
        &surge,
        &path.child("maxSurge"),
    ));
    if int_or_percent_value(&unavailable) == 0 && int_or_percent_value(&surge) == 0 {
        errs.push(Error::invalid(
            &unavailable_path,
            int_or_string(&unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    errs.append(is_not_more_than_100_percent(
        &unavailable,
        &unavailable_path,
    ));
    errs
}

/// `ValidateDeploymentStrategy`: `Recreate` without rollingUpdate, or
/// `RollingUpdate` with valid limits.
pub fn validate_strategy(strategy: &V1Strategy, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    match strategy.type_.as_deref().unwrap_or_default() {
        RECREATE => {
            if strategy.rolling_update.is_some() {
                errs.push(Error::forbidden(
                    &path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        ROLLING_UPDATE => match &strategy.rolling_update {
            None => errs.push(Error::required(
                &path.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            )),
            Some(ru) => errs.append(validate_rolling_update(ru, &path.child("rollingUpdate"))),
        },
        _ => errs.push(Error::not_supported(
            path,
            BadValue::Json(strategy_json(
                strategy.type_.as_deref(),
                strategy.rolling_update.as_ref().map(rolling_update_json),
            )),
            &[RECREATE, ROLLING_UPDATE],
        )),
    }
    errs
}

/// `ValidateDeploymentSpec` at `path` (`spec`); `selector` is `None` when
/// the submitted object had none ([`selector_of`]).
pub fn validate_deployment_spec(
    spec: &DeploymentSpec,
    selector: Option<&LabelSelector>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    nonnegative(&mut errs, spec.replicas, &path.child("replicas"));
    let (sel_errs, sel) = validate_required_selector(
        selector,
        "deployment",
        "invalid label selector",
        &path.child("selector"),
    );
    errs.append(sel_errs);
    if let Some(sel) = sel {
        errs.append(validate_pod_template_for_replicas(
            &spec.template,
            &sel,
            "ReplicaSet",
            &path.child("template"),
        ));
    }
    errs.append(validate_strategy(
        &spec.strategy.clone().unwrap_or_default(),
        &path.child("strategy"),
    ));
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    nonnegative(
        &mut errs,
        spec.min_ready_seconds,
        &path.child("minReadySeconds"),
    );
    if let Some(limit) = spec.revision_history_limit {
        nonnegative(&mut errs, Some(limit), &path.child("revisionHistoryLimit"));
    }
    if let Some(deadline) = spec.progress_deadline_seconds {
        let p = path.child("progressDeadlineSeconds");
        errs.append(validate_nonnegative_field(i64::from(deadline), &p));
        if deadline <= min_ready {
            errs.push(Error::invalid(
                &p,
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn spec_of(d: &Deployment) -> &DeploymentSpec {
    &d.spec
}

/// `ValidateDeployment`: metadata (name a DNS subdomain) and the spec.
pub fn validate_deployment(d: &Deployment, absent: &Absent) -> ErrorList {
    let spec = spec_of(d);
    let mut errs = meta::validate_object_meta(&d.metadata, true, NameRule::Subdomain);
    errs.append(validate_deployment_spec(
        spec,
        selector_of(&spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateDeploymentUpdate`: metadata update rules and the spec again.
pub fn validate_deployment_update(
    new: &Deployment,
    old: &Deployment,
    absent: &Absent,
) -> ErrorList {
    let spec = spec_of(new);
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_deployment_spec(
        spec,
        selector_of(&spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateDeploymentStatus` at `path` (`status`): every counter ≥ 0,
/// none above `replicas`, `availableReplicas` ≤ `readyReplicas`.
pub fn validate_deployment_status(status: &DeploymentStatus, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    errs.append(validate_nonnegative_field(
        status.observed_generation.unwrap_or(0),
        &path.child("observedGeneration"),
    ));
    for (name, value) in [
        ("replicas", status.replicas),
        ("updatedReplicas", status.updated_replicas),
        ("readyReplicas", status.ready_replicas),
        ("availableReplicas", status.available_replicas),
        ("unavailableReplicas", status.unavailable_replicas),
    ] {
        nonnegative(&mut errs, value, &path.child(name));
    }
    if let Some(t) = status.terminating_replicas {
        nonnegative(&mut errs, Some(t), &path.child("terminatingReplicas"));
    }
    if let Some(c) = status.collision_count {
        nonnegative(&mut errs, Some(c), &path.child("collisionCount"));
    }
    for (name, value) in [
        ("updatedReplicas", status.updated_replicas),
        ("readyReplicas", status.ready_replicas),
        ("availableReplicas", status.available_replicas),
    ] {
        not_above(
            &mut errs,
            value,
            status.replicas,
            &path.child(name),
            ABOVE_REPLICAS,
        );
    }
    not_above(
        &mut errs,
        status.available_replicas,
        status.ready_replicas,
        &path.child("availableReplicas"),
        "cannot be greater than readyReplicas",
    );
    errs
}

/// `ValidateDeploymentStatusUpdate`: metadata update rules, the status,
/// and a collisionCount that never drops.
pub fn validate_deployment_status_update(new: &Deployment, old: &Deployment) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let status = new.status.clone().unwrap_or_default();
    errs.append(validate_deployment_status(&status, &Path::new("status")));
    errs.append(validate_collision_count(
        status.collision_count,
        old.status.as_ref().and_then(|s| s.collision_count),
    ));
    errs
}

/// Create, update and status-update rules of apps/v1 Deployments.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
    type Object = Deployment;

    fn default(obj: &mut Deployment) {
        default_deployment(obj);
    }

    fn prepare_for_create(obj: &mut Deployment) {
        obj.status = Some(DeploymentStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &Deployment, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_deployment(obj, ctx.absent);
        errs.append(validate_template_responders(
            &spec_of(obj).template,
            None,
            ctx.absent,
        ));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut Deployment, old: &Deployment) {
        new.status.clone_from(&old.status);
        let changed = !semantic_eq(&new.spec, &old.spec)
            || !semantic_eq(&new.metadata.annotations, &old.metadata.annotations);
        new.metadata.generation = next_generation(old.metadata.generation, changed);
    }

    fn validate_update(new: &Deployment, old: &Deployment, ctx: &Context<'_>) -> ErrorList {
        let (new_spec, old_spec) = (spec_of(new), spec_of(old));
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_deployment_update(new, old, ctx.absent));
        errs.append(validate_template_responders(
            &new_spec.template,
            Some(&old_spec.template),
            ctx.absent,
        ));
        errs.append(validate_selector_immutable(
            selector_of(&new_spec.selector, ctx.absent),
            Some(&old_spec.selector),
        ));
        errs
    }

    fn prepare_for_status_update(new: &mut Deployment, old: &Deployment) {
        new.spec.clone_from(&old.spec);
        new.metadata.labels.clone_from(&old.metadata.labels);
    }

    fn validate_status_update(new: &Deployment, old: &Deployment, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_deployment_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::find_absent;
    use crate::strategy::{admit_create, admit_status_update, admit_update};
    use serde_json::{Value, json};

    fn valid() -> Value {
        json!({
            "metadata": {"name": "abc", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"name": "abc"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
                "template": {
                    "metadata": {"labels": {"name": "abc"}},
                    "spec": {"containers": [{"name": "nginx", "image": "image", "imagePullPolicy": "Never"}]}
                }
            }
        })
    }

    fn create(v: &Value) -> Result<Deployment, ErrorList> {
        let absent = find_absent(v);
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let mut d: Deployment = serde_json::from_value(v.clone()).expect("deployment");
        d.metadata.uid = Some("u".into());
        match admit_create::<DeploymentStrategy>(&mut d, &ctx) {
            Ok(()) => {
                d.metadata.resource_version = Some("1".into());
                Ok(d)
            }
            Err(e) => Err(e.errors),
        }
    }

    fn update(old: &Deployment, v: &Value) -> Result<Deployment, ErrorList> {
        let absent = find_absent(v);
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let mut d: Deployment = serde_json::from_value(v.clone()).expect("deployment");
        match admit_update::<DeploymentStrategy>(&mut d, old, &ctx) {
            Ok(()) => Ok(d),
            Err(e) => Err(e.errors),
        }
    }

    fn edit(f: impl FnOnce(&mut Value)) -> Value {
        let mut v = valid();
        f(&mut v);
        v
    }

    // Upstream TestValidateDeployment: each case's first error contains its key.
    #[test]
    fn validate_deployment_cases() {
        assert!(create(&valid()).is_ok());
        let cases: Vec<(&str, Value)> = vec![
            (
                "metadata.name: Required value",
                json!({"metadata": {"namespace": "default"}}),
            ),
            (
                "`selector` does not match template `labels`",
                edit(|v| v["spec"]["selector"] = json!({"matchLabels": {"name": "def"}})),
            ),
            (
                r#"Unsupported value: "Never""#,
                edit(|v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")),
            ),
            (
                r#"supported values: "Recreate", "RollingUpdate""#,
                edit(|v| v["spec"]["strategy"]["type"] = json!("randomType")),
            ),
            (
                "may not be specified when strategy `type` is 'Recreate'",
                edit(|v| v["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {}})),
            ),
            (
                "a valid percent string must be",
                edit(|v| {
                    v["spec"]["strategy"] =
                        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "20Percent"}})
                }),
            ),
            (
                "may not be 0 when `maxSurge` is 0",
                edit(
                    |v| v["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}}),
                ),
            ),
            (
                "must not be greater than 100%",
                edit(|v| {
                    v["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "110%"}})
                }),
            ),
            (
                "must be greater than minReadySeconds",
                edit(|v| {
                    v["spec"]["progressDeadlineSeconds"] = json!(600);
                    v["spec"]["minReadySeconds"] = json!(600);
                }),
            ),
            (
                "ephemeral containers not allowed",
                edit(
                    |v| v["spec"]["template"]["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]),
                ),
            ),
            (
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                edit(|v| v["spec"]["replicas"] = json!(-1)),
            ),
            (
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
                edit(|v| v["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(3)),
            ),
            (
                "spec.revisionHistoryLimit: Invalid value: -2",
                edit(|v| v["spec"]["revisionHistoryLimit"] = json!(-2)),
            ),
            (
                "spec.template.spec.containers: Required value",
                edit(|v| v["spec"]["template"]["spec"]["containers"] = json!([])),
            ),
        ];
        for (key, v) in cases {
            let errs = create(&v).expect_err(key);
            assert!(errs.0[0].to_string().contains(key), "{key}: got {errs}");
        }
    }

    // `kubectl create` of a Deployment without a selector: both errors, as kube-apiserver reports them.
    #[test]
    fn missing_and_empty_selector() {
        let errs = create(&edit(|v| {
            v["spec"].as_object_mut().expect("spec").remove("selector");
        }))
        .expect_err("no selector");
        assert_eq!(
            errs.to_string(),
            r#"[spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"name":"abc"}: `selector` does not match template `labels`]"#
        );
        let errs = create(&edit(|v| v["spec"]["selector"] = json!({}))).expect_err("empty");
        assert_eq!(
            errs.to_string(),
            "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
        );
        let errs =
            create(&edit(
                |v| {
                    v["spec"]["selector"] =
                        json!({"matchExpressions": [{"key": "name", "operator": "Bad"}]})
                },
            ))
            .expect_err("bad operator");
        assert_eq!(
            errs.to_string(),
            r#"[spec.selector.matchExpressions[0].operator: Invalid value: "Bad": not a valid selector operator, spec.selector: Invalid value: {"matchExpressions":[{"key":"name","operator":"Bad"}]}: invalid label selector]"#
        );
    }

    // What `kubectl create deployment nginx --image=nginx` sends (namespace filled by the server).
    #[test]
    fn kubectl_create_deployment() {
        let v = json!({"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "nginx", "namespace": "default", "creationTimestamp": null, "labels": {"app": "nginx"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"creationTimestamp": null, "labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}},
                "strategy": {}},
            "status": {}});
        let d = create(&v).expect("kubectl's deployment");
        let strategy = serde_json::to_value(&d.spec.strategy).expect("json");
        assert_eq!(
            strategy,
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        );
    }

    #[test]
    fn strategy_errors_render_internal_values() {
        let errs = create(&edit(|v| {
            v["spec"]["strategy"]["type"] = json!("randomType")
        }))
        .expect_err("type");
        assert_eq!(
            errs.to_string(),
            r#"spec.strategy: Unsupported value: {"Type":"randomType","RollingUpdate":{"MaxUnavailable":1,"MaxSurge":1}}: supported values: "Recreate", "RollingUpdate""#
        );
        let errs = create(&edit(|v| {
            v["spec"]["strategy"]["rollingUpdate"] = json!({"maxSurge": 0, "maxUnavailable": "0%"})
        }))
        .expect_err("zero");
        assert_eq!(
            errs.to_string(),
            r#"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0"#
        );
    }

    #[test]
    fn create_defaults_and_resets() {
        let d = create(&edit(|v| v["status"] = json!({"replicas": 3}))).expect("valid");
        assert_eq!(d.metadata.generation, Some(1));
        assert_eq!(d.status, Some(DeploymentStatus::default()));
        let spec = d.spec;
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.revision_history_limit, Some(10));
        assert_eq!(spec.progress_deadline_seconds, Some(600));
    }

    #[test]
    fn update_rules() {
        let old = create(&valid()).expect("valid");
        let old_json = serde_json::to_value(&old).expect("json");
        // Scaling bumps the generation; status sent with it is ignored.
        let mut v = old_json.clone();
        v["spec"]["replicas"] = json!(3);
        v["status"] = json!({"replicas": 9});
        let new = update(&old, &v).expect("scale");
        assert_eq!(new.metadata.generation, Some(2));
        assert_eq!(new.status, old.status);
        // An annotation change bumps it too; a label change does not.
        let mut v = old_json.clone();
        v["metadata"]["annotations"] = json!({"a": "b"});
        assert_eq!(
            update(&old, &v).expect("annotate").metadata.generation,
            Some(2)
        );
        let mut v = old_json.clone();
        v["metadata"]["labels"] = json!({"a": "b"});
        assert_eq!(
            update(&old, &v).expect("label").metadata.generation,
            Some(1)
        );
        // The selector is immutable.
        let mut v = old_json.clone();
        v["spec"]["selector"] = json!({"matchLabels": {"name": "abc", "x": "y"}});
        v["spec"]["template"]["metadata"]["labels"] = json!({"name": "abc", "x": "y"});
        assert_eq!(
            update(&old, &v).expect_err("selector").to_string(),
            r#"spec.selector: Invalid value: {"matchLabels":{"name":"abc","x":"y"}}: field is immutable"#
        );
    }

    // Upstream TestValidateDeploymentStatus.
    #[test]
    fn status_cases() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "valid",
                json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 2}),
                "",
            ),
            (
                "invalid replicas",
                json!({"replicas": -1, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 1, "observedGeneration": 2}),
                "[status.replicas: Invalid value: -1: must be greater than or equal to 0, status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas, status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 1: cannot be greater than status.replicas]",
            ),
            (
                "invalid updatedReplicas",
                json!({"replicas": 2, "updatedReplicas": -1}),
                "status.updatedReplicas: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "invalid readyReplicas",
                json!({"replicas": 3, "readyReplicas": -1}),
                "[status.readyReplicas: Invalid value: -1: must be greater than or equal to 0, status.availableReplicas: Invalid value: 0: cannot be greater than readyReplicas]",
            ),
            (
                "invalid availableReplicas",
                json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": -1}),
                "status.availableReplicas: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "invalid observedGeneration",
                json!({"replicas": 3, "observedGeneration": -1}),
                "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "updatedReplicas greater than replicas",
                json!({"replicas": 3, "updatedReplicas": 4}),
                "status.updatedReplicas: Invalid value: 4: cannot be greater than status.replicas",
            ),
            (
                "readyReplicas greater than replicas",
                json!({"replicas": 3, "readyReplicas": 4}),
                "status.readyReplicas: Invalid value: 4: cannot be greater than status.replicas",
            ),
            (
                "availableReplicas greater than replicas",
                json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 4}),
                "[status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 4: cannot be greater than readyReplicas]",
            ),
            (
                "availableReplicas greater than readyReplicas",
                json!({"replicas": 3, "readyReplicas": 2, "availableReplicas": 3}),
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
            ),
            (
                "invalid collisionCount",
                json!({"replicas": 3, "collisionCount": -3}),
                "status.collisionCount: Invalid value: -3: must be greater than or equal to 0",
            ),
        ];
        for (name, status, want) in cases {
            let status: DeploymentStatus = serde_json::from_value(status).expect("status");
            assert_eq!(
                validate_deployment_status(&status, &Path::new("status")).to_string(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn status_update_resets_spec_and_labels() {
        let old = create(&valid()).expect("valid");
        let mut v = serde_json::to_value(&old).expect("json");
        v["spec"]["replicas"] = json!(7);
        v["metadata"]["labels"] = json!({"x": "y"});
        v["status"] = json!({"replicas": 1, "collisionCount": 1});
        let mut new: Deployment = serde_json::from_value(v).expect("d");
        let absent = Absent::default();
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        admit_status_update::<DeploymentStrategy>(&mut new, &old, &ctx).expect("status");
        assert_eq!(new.spec, old.spec);
        assert_eq!(new.metadata.labels, old.metadata.labels);
        assert_eq!(new.status.as_ref().and_then(|s| s.replicas), Some(1));
        let mut dropped = new.clone();
        dropped.status = Some(DeploymentStatus {
            replicas: Some(1),
            ..Default::default()
        });
        let errs = admit_status_update::<DeploymentStrategy>(&mut dropped, &new, &ctx)
            .expect_err("decrement");
        assert_eq!(
            errs.errors.to_string(),
            "status.collisionCount: Invalid value: 0: cannot be decremented"
        );
    }
}
