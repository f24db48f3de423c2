//! apps/v1 DaemonSet: validation (`ValidateDaemonSet`,
//! `ValidateDaemonSetSpec`, `ValidateDaemonSetUpdateStrategy`,
//! `ValidateRollingUpdateDaemonSet`, `ValidateDaemonSetStatusUpdate`) and
//! the registry strategy (`pkg/registry/apps/daemonset`).
//!
//! The internal `spec.templateGeneration` lives in apps/v1 as the
//! annotation [`TEMPLATE_GENERATION_ANNOTATION`] (upstream's conversion):
//! set to 1 on create and incremented, by the server only, whenever the
//! template changes.
//!
//! * create: defaults → status cleared, generation 1, template generation
//!   at least 1 → [`validate_daemon_set`], `evictionResponders`, generic
//!   metadata;
//! * update: status and template generation kept (both bumped when the
//!   template changed; the generation also on any other spec change) →
//!   generic common fields, [`validate_daemon_set`] and
//!   [`validate_daemon_set_update`], `spec.selector` immutable;
//! * `/status`: spec reset → [`validate_daemon_set_status_update`].

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, DaemonSetStatus, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::defaults::default_daemon_set;
use super::workload::{
    int_or_percent_value, int_or_string, int_or_zero, is_empty_selector, nonnegative, selector_of,
    selector_value, strategy_json, validate_collision_count, validate_selector_immutable,
    validate_template_labels_match, validate_template_responders, validate_workload_pod_policies,
};
use crate::absent::Absent;
use crate::core::validation::PodValidationOptions;
use crate::core::validation::pod_spec::validate_pod_template_spec;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::nonnegative::validate_nonnegative_field;
use crate::policy::pdb::{is_not_more_than_100_percent, validate_positive_int_or_percent};
use crate::render;
use crate::selector::{as_selector, validate_label_selector};
use crate::strategy::{Context, Strategy, next_generation};

/// The annotation carrying the internal `spec.templateGeneration`.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
/// `RollingUpdate`: replace daemon pods node by node.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `OnDelete`: replace a daemon pod only when it is deleted.
pub const ON_DELETE: &str = "OnDelete";

/// The template generation recorded on a DaemonSet (0 when absent or not
/// a number).
pub fn template_generation(m: &ObjectMeta) -> i64 {
    m.annotations
        .as_ref()
        .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn set_template_generation(m: &mut ObjectMeta, generation: i64) {
    m.annotations.get_or_insert_with(Default::default).insert(
        TEMPLATE_GENERATION_ANNOTATION.to_owned(),
        generation.to_string(),
    );
}

fn rolling_update_json(ru: &RollingUpdateDaemonSet) -> String {
    format!(
        "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
        render::int_or_string(&int_or_zero(ru.max_unavailable.as_ref())),
        render::int_or_string(&int_or_zero(ru.max_surge.as_ref()))
    )
}

/// `ValidateRollingUpdateDaemonSet`: both limits non-negative ints or
/// percents of at most 100%, exactly one of them non-zero.
pub fn validate_rolling_update(ru: &RollingUpdateDaemonSet, path: &Path) -> ErrorList {
    let unavailable = int_or_zero(ru.max_unavailable.as_ref());
    let surge = int_or_zero(ru.max_surge.as_ref());
    let (u_path, s_path) = (path.child("maxUnavailable"), path.child("maxSurge"));
    let mut errs = validate_positive_int_or_percent(&unavailable, &u_path);
    errs.append(validate_positive_int_or_percent(&surge, &s_path));
    errs.append(is_not_more_than_100_percent(&unavailable, &u_path));
    errs.append(is_not_more_than_100_percent(&surge, &s_path));
    let has_unavailable = int_or_percent_value(&unavailable) != 0;
    let has_surge = int_or_percent_value(&surge) != 0;
    if has_unavailable && has_surge {
        errs.push(Error::invalid(
            &s_path,
            int_or_string(&surge),
            "may not be set when maxUnavailable is non-zero",
        ));
    } else if !has_unavailable && !has_surge {
        errs.push(Error::required(&u_path, "cannot be 0 when maxSurge is 0"));
    }
    errs
}

/// `ValidateDaemonSetUpdateStrategy`.
pub fn validate_update_strategy(strategy: &DaemonSetUpdateStrategy, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    match strategy.type_.as_deref().unwrap_or_default() {
        ON_DELETE => {}
        ROLLING_UPDATE => match &strategy.rolling_update {
            None => errs.push(Error::required(&path.child("rollingUpdate"), "")),
            Some(ru) => errs.append(validate_rolling_update(ru, &path.child("rollingUpdate"))),
        },
        _ => errs.push(Error::not_supported(
            path,
            BadValue::Json(strategy_json(
                strategy.type_.as_deref(),
                strategy.rolling_update.as_ref().map(rolling_update_json),
            )),
            &[ROLLING_UPDATE, ON_DELETE],
        )),
    }
    errs
}

/// `ValidateDaemonSetSpec` at `path` (`spec`); `selector` is `None` when
/// the submitted object had none (a DaemonSet then fails the template
/// match only).
pub fn validate_daemon_set_spec(
    spec: &DaemonSetSpec,
    selector: Option<&LabelSelector>,
    path: &Path,
) -> ErrorList {
    let sel_path = path.child("selector");
    let mut errs = validate_label_selector(selector, false, &sel_path);
    let template_path = path.child("template");
    if let Ok(sel) = as_selector(selector) {
        errs.append(validate_template_labels_match(
            &spec.template,
            &sel,
            &template_path,
        ));
    }
    if let Some(s) = selector.filter(|s| is_empty_selector(s)) {
        errs.push(Error::invalid(
            &sel_path,
            selector_value(s),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.append(validate_pod_template_spec(
        &spec.template,
        &template_path,
        PodValidationOptions::default(),
    ));
    errs.append(validate_workload_pod_policies(
        &spec.template,
        "DaemonSet",
        &template_path,
    ));
    nonnegative(
        &mut errs,
        spec.min_ready_seconds,
        &path.child("minReadySeconds"),
    );
    errs.append(validate_update_strategy(
        &spec.update_strategy.clone().unwrap_or_default(),
        &path.child("updateStrategy"),
    ));
    if let Some(limit) = spec.revision_history_limit {
        nonnegative(&mut errs, Some(limit), &path.child("revisionHistoryLimit"));
    }
    errs
}

/// `ValidateDaemonSet`: metadata (name a DNS subdomain) and the spec.
pub fn validate_daemon_set(ds: &DaemonSet, absent: &Absent) -> ErrorList {
    let mut errs = meta::validate_object_meta(&ds.metadata, true, NameRule::Subdomain);
    errs.append(validate_daemon_set_spec(
        &ds.spec,
        selector_of(&ds.spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateDaemonSetUpdate`: metadata update rules, the spec again. (The
/// template generation rules of `ValidateDaemonSetSpecUpdate` always hold:
/// the strategy sets it.)
pub fn validate_daemon_set_update(new: &DaemonSet, old: &DaemonSet, absent: &Absent) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_daemon_set_spec(
        &new.spec,
        selector_of(&new.spec.selector, absent),
        &Path::new("spec"),
    ));
    errs
}

/// `validateDaemonSetStatus` at `path` (`status`): every counter ≥ 0.
pub fn validate_daemon_set_status(status: &DaemonSetStatus, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (name, value) in [
        (
            "currentNumberScheduled",
            Some(status.current_number_scheduled),
        ),
        ("numberMisscheduled", Some(status.number_misscheduled)),
        (
            "desiredNumberScheduled",
            Some(status.desired_number_scheduled),
        ),
        ("numberReady", Some(status.number_ready)),
    ] {
        nonnegative(&mut errs, value, &path.child(name));
    }
    errs.append(validate_nonnegative_field(
        status.observed_generation.unwrap_or(0),
        &path.child("observedGeneration"),
    ));
    for (name, value) in [
        ("updatedNumberScheduled", status.updated_number_scheduled),
        ("numberAvailable", status.number_available),
        ("numberUnavailable", status.number_unavailable),
    ] {
        nonnegative(&mut errs, value, &path.child(name));
    }
    if let Some(c) = status.collision_count {
        nonnegative(&mut errs, Some(c), &path.child("collisionCount"));
    }
    errs
}

/// `ValidateDaemonSetStatusUpdate`: metadata update rules, the status and
/// a collisionCount that never drops.
pub fn validate_daemon_set_status_update(new: &DaemonSet, old: &DaemonSet) -> ErrorList {
    let status = new.status.clone().unwrap_or_default();
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_daemon_set_status(&status, &Path::new("status")));
    errs.append(validate_collision_count(
        status.collision_count,
        old.status.as_ref().and_then(|s| s.collision_count),
    ));
    errs
}

/// Create, update and status-update rules of apps/v1 DaemonSets.
#[derive(Clone, Copy, Debug, Default)]
pub struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
    type Object = DaemonSet;

    fn default(obj: &mut DaemonSet) {
        default_daemon_set(obj);
    }

    fn prepare_for_create(obj: &mut DaemonSet) {
        obj.status = Some(DaemonSetStatus::default());
        obj.metadata.generation = Some(1);
        let tg = template_generation(&obj.metadata).max(1);
        set_template_generation(&mut obj.metadata, tg);
    }

    fn validate_create(obj: &DaemonSet, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_daemon_set(obj, ctx.absent);
        errs.append(validate_template_responders(
            &obj.spec.template,
            None,
            ctx.absent,
        ));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut DaemonSet, old: &DaemonSet) {
        new.status.clone_from(&old.status);
        let old_tg = template_generation(&old.metadata);
        let template_changed = !semantic_eq(&new.spec.template, &old.spec.template);
        let tg = if template_changed { old_tg + 1 } else { old_tg };
        set_template_generation(&mut new.metadata, tg);
        new.metadata.generation = next_generation(
            old.metadata.generation,
            template_changed || !semantic_eq(&new.spec, &old.spec),
        );
    }

    fn validate_update(new: &DaemonSet, old: &DaemonSet, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_daemon_set(new, ctx.absent));
        errs.append(validate_daemon_set_update(new, old, ctx.absent));
        errs.append(validate_template_responders(
            &new.spec.template,
            Some(&old.spec.template),
            ctx.absent,
        ));
        errs.append(validate_selector_immutable(
            selector_of(&new.spec.selector, ctx.absent),
            Some(&old.spec.selector),
        ));
        errs
    }

    /// The spec is the stored one, and so is the template generation
    /// (part of the spec upstream, an annotation in apps/v1).
    fn prepare_for_status_update(new: &mut DaemonSet, old: &DaemonSet) {
        new.spec.clone_from(&old.spec);
        set_template_generation(&mut new.metadata, template_generation(&old.metadata));
    }

    fn validate_status_update(new: &DaemonSet, old: &DaemonSet, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_daemon_set_status_update(new, old));
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

    fn create(v: &Value) -> Result<DaemonSet, ErrorList> {
        created::<DaemonSetStrategy>(v)
    }

    fn edit(f: impl FnOnce(&mut Value)) -> Value {
        edited(valid(), f)
    }

    // Upstream TestValidateDaemonSet.
    #[test]
    fn validate_daemon_set_cases() {
        let ds = create(&valid()).expect("valid");
        assert_eq!(template_generation(&ds.metadata), 1);
        for ok in [
            edit(|v| v["spec"]["updateStrategy"] = json!({"type": "OnDelete"})),
            edit(
                |v| v["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}}),
            ),
        ] {
            assert!(create(&ok).is_ok(), "{ok}");
        }
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "zero-length ID",
                edit(|v| v["metadata"]["name"] = json!("")),
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "nil selector",
                edit(|v| {
                    v["spec"].as_object_mut().expect("spec").remove("selector");
                }),
                r#"spec.template.metadata.labels: Invalid value: {"a":"b"}: `selector` does not match template `labels`"#,
            ),
            (
                "empty selector",
                edit(|v| v["spec"]["selector"] = json!({})),
                "spec.selector: Invalid value: {}: empty selector is invalid for daemonset",
            ),
            (
                "selector_doesnt_match",
                edit(|v| v["spec"]["selector"] = json!({"matchLabels": {"foo": "bar"}})),
                r#"spec.template.metadata.labels: Invalid value: {"a":"b"}: `selector` does not match template `labels`"#,
            ),
            (
                "invalid restart policy",
                edit(|v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure")),
                r#"spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always""#,
            ),
            (
                "active deadline",
                edit(|v| v["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5)),
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported",
            ),
            (
                "no containers",
                edit(|v| v["spec"]["template"]["spec"]["containers"] = json!([])),
                "spec.template.spec.containers: Required value",
            ),
            (
                "negative minReadySeconds",
                edit(|v| v["spec"]["minReadySeconds"] = json!(-1)),
                "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "bad strategy type",
                edit(|v| v["spec"]["updateStrategy"] = json!({"type": "Foo"})),
                r#"spec.updateStrategy: Unsupported value: {"Type":"Foo","RollingUpdate":null}: supported values: "RollingUpdate", "OnDelete""#,
            ),
            (
                "both zero",
                edit(
                    |v| v["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
                ),
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
            ),
            (
                "both set",
                edit(
                    |v| v["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}}),
                ),
                r#"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "10%": may not be set when maxUnavailable is non-zero"#,
            ),
            (
                "surge over 100%",
                edit(
                    |v| v["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "101%"}}),
                ),
                r#"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "101%": must not be greater than 100%"#,
            ),
            (
                "negative revisionHistoryLimit",
                edit(|v| v["spec"]["revisionHistoryLimit"] = json!(-1)),
                "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            ),
        ];
        for (name, v, want) in cases {
            assert_eq!(create(&v).expect_err(name).to_string(), want, "{name}");
        }
    }

    // Upstream TestValidateDaemonSetUpdate and the strategy's generation rules.
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
            let mut ds: DaemonSet = serde_json::from_value(v).expect("ds");
            admit_update::<DaemonSetStrategy>(&mut ds, &old, &ctx)
                .map(|()| ds)
                .map_err(|e| e.errors)
        };
        let image =
            run(&|v| v["spec"]["template"]["spec"]["containers"][0]["image"] = json!("image2"))
                .expect("image");
        assert_eq!(
            (
                image.metadata.generation,
                template_generation(&image.metadata)
            ),
            (Some(2), 2)
        );
        let limit = run(&|v| v["spec"]["revisionHistoryLimit"] = json!(3)).expect("limit");
        assert_eq!(
            (
                limit.metadata.generation,
                template_generation(&limit.metadata)
            ),
            (Some(2), 1)
        );
        let forged =
            run(&|v| v["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] = json!("7"))
                .expect("forged");
        assert_eq!(
            (
                forged.metadata.generation,
                template_generation(&forged.metadata)
            ),
            (Some(1), 1)
        );
        let mut status: DaemonSet = serde_json::from_value(old_json.clone()).expect("ds");
        status.metadata.annotations = None;
        status.status = Some(DaemonSetStatus {
            number_ready: 1,
            ..Default::default()
        });
        crate::strategy::admit_status_update::<DaemonSetStrategy>(&mut status, &old, &ctx)
            .expect("status");
        assert_eq!(template_generation(&status.metadata), 1);
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

    // Upstream TestValidateDaemonSetStatusUpdate.
    #[test]
    fn status_cases() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "valid",
                json!({"currentNumberScheduled": 1, "numberMisscheduled": 2, "desiredNumberScheduled": 3, "numberReady": 1, "updatedNumberScheduled": 1, "numberAvailable": 1, "numberUnavailable": 2}),
                "",
            ),
            (
                "negative values",
                json!({"currentNumberScheduled": -1, "numberMisscheduled": -1, "desiredNumberScheduled": -3, "numberReady": -1, "observedGeneration": -3, "updatedNumberScheduled": -1, "numberAvailable": -1, "numberUnavailable": -2, "collisionCount": -1}),
                "[status.currentNumberScheduled: Invalid value: -1: must be greater than or equal to 0, status.numberMisscheduled: Invalid value: -1: must be greater than or equal to 0, status.desiredNumberScheduled: Invalid value: -3: must be greater than or equal to 0, status.numberReady: Invalid value: -1: must be greater than or equal to 0, status.observedGeneration: Invalid value: -3: must be greater than or equal to 0, status.updatedNumberScheduled: Invalid value: -1: must be greater than or equal to 0, status.numberAvailable: Invalid value: -1: must be greater than or equal to 0, status.numberUnavailable: Invalid value: -2: must be greater than or equal to 0, status.collisionCount: Invalid value: -1: must be greater than or equal to 0]",
            ),
        ];
        for (name, status, want) in cases {
            let status: DaemonSetStatus = serde_json::from_value(status).expect("status");
            assert_eq!(
                validate_daemon_set_status(&status, &Path::new("status")).to_string(),
                want,
                "{name}"
            );
        }
    }
}
