//! apps/v1 defaulting (`pkg/apis/apps/v1/defaults.go` and the generated
//! defaulters), with every feature gate on. Each function also runs the
//! core/v1 pod defaults on the template
//! ([`crate::core::validation::defaults::default_pod_spec`]).

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetUpdateStrategy, Deployment, DeploymentStrategy, ReplicaSet,
    RollingUpdateDaemonSet, RollingUpdateDeployment, RollingUpdateStatefulSetStrategy, StatefulSet,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimStatus, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::core::validation::defaults::default_pod_spec;

/// `RollingUpdate`, the default strategy of every workload.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `OrderedReady`, the default StatefulSet pod management policy.
pub const ORDERED_READY: &str = "OrderedReady";
/// `Retain`, the default PVC retention policy of StatefulSets.
pub const RETAIN: &str = "Retain";
/// Default `revisionHistoryLimit` of Deployments, StatefulSets and DaemonSets.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
/// Default `progressDeadlineSeconds` of Deployments.
pub const DEFAULT_PROGRESS_DEADLINE_SECONDS: i32 = 600;

/// The pod defaults of a workload template.
pub fn default_template(template: &mut PodTemplateSpec) {
    default_pod_spec(template.spec.get_or_insert_with(Default::default), false);
}

fn is_empty(s: Option<&String>) -> bool {
    s.is_none_or(String::is_empty)
}

/// `SetDefaults_Deployment`: replicas 1; strategy `RollingUpdate` with
/// maxUnavailable and maxSurge 25%; revisionHistoryLimit 10;
/// progressDeadlineSeconds 600; then the template's pod defaults.
pub fn default_deployment(d: &mut Deployment) {
    let spec = &mut d.spec;
    spec.replicas.get_or_insert(1);
    let strategy = spec
        .strategy
        .get_or_insert_with(DeploymentStrategy::default);
    if is_empty(strategy.type_.as_ref()) {
        strategy.type_ = Some(ROLLING_UPDATE.to_owned());
    }
    if strategy.type_.as_deref() == Some(ROLLING_UPDATE) {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateDeployment::default);
        ru.max_unavailable
            .get_or_insert_with(|| IntOrString::String("25%".into()));
        ru.max_surge
            .get_or_insert_with(|| IntOrString::String("25%".into()));
    }
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    spec.progress_deadline_seconds
        .get_or_insert(DEFAULT_PROGRESS_DEADLINE_SECONDS);
    default_template(&mut spec.template);
}

/// `SetDefaults_ReplicaSet`: replicas 1; then the template's pod defaults.
pub fn default_replica_set(rs: &mut ReplicaSet) {
    let spec = &mut rs.spec;
    spec.replicas.get_or_insert(1);
    default_template(spec.template.get_or_insert_with(Default::default));
}

/// `SetDefaults_DaemonSet`: updateStrategy `RollingUpdate` with
/// maxUnavailable 1 and maxSurge 0; revisionHistoryLimit 10; then the
/// template's pod defaults.
pub fn default_daemon_set(ds: &mut DaemonSet) {
    let spec = &mut ds.spec;
    let strategy = spec
        .update_strategy
        .get_or_insert_with(DaemonSetUpdateStrategy::default);
    if is_empty(strategy.type_.as_ref()) {
        strategy.type_ = Some(ROLLING_UPDATE.to_owned());
    }
    if strategy.type_.as_deref() == Some(ROLLING_UPDATE) {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateDaemonSet::default);
        ru.max_unavailable.get_or_insert(IntOrString::Int(1));
        ru.max_surge.get_or_insert(IntOrString::Int(0));
    }
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_template(&mut spec.template);
}

/// `SetDefaults_StatefulSet`: podManagementPolicy `OrderedReady`;
/// updateStrategy `RollingUpdate` with partition 0 (maxUnavailable is not
/// defaulted: gate MaxUnavailableStatefulSet is off by default upstream,
/// so real servers omit it); PVC retention `Retain`/`Retain`;
/// replicas 1; revisionHistoryLimit 10; then the template's pod defaults
/// and each volumeClaimTemplate's PVC defaults (`volumeMode: Filesystem`,
/// `status.phase: Pending`).
pub fn default_stateful_set(sts: &mut StatefulSet) {
    let spec = &mut sts.spec;
    if is_empty(spec.pod_management_policy.as_ref()) {
        spec.pod_management_policy = Some(ORDERED_READY.to_owned());
    }
    let strategy = spec
        .update_strategy
        .get_or_insert_with(StatefulSetUpdateStrategy::default);
    if is_empty(strategy.type_.as_ref()) {
        strategy.type_ = Some(ROLLING_UPDATE.to_owned());
        strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateStatefulSetStrategy::default);
    }
    if strategy.type_.as_deref() == Some(ROLLING_UPDATE)
        && let Some(ru) = &mut strategy.rolling_update
    {
        ru.partition.get_or_insert(0);
    }
    let retention = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    for policy in [&mut retention.when_deleted, &mut retention.when_scaled] {
        if is_empty(policy.as_ref()) {
            *policy = Some(RETAIN.to_owned());
        }
    }
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_template(&mut spec.template);
    for pvc in spec.volume_claim_templates.iter_mut().flatten() {
        default_claim_template(pvc);
    }
}

/// `SetDefaults_PersistentVolumeClaim(Spec)` on a claim template.
fn default_claim_template(pvc: &mut PersistentVolumeClaim) {
    let spec = pvc.spec.get_or_insert_with(Default::default);
    spec.volume_mode
        .get_or_insert_with(|| "Filesystem".to_owned());
    let status = pvc
        .status
        .get_or_insert_with(PersistentVolumeClaimStatus::default);
    if is_empty(status.phase.as_ref()) {
        status.phase = Some("Pending".to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{DaemonSetSpec, DeploymentSpec, StatefulSetSpec};
    use serde_json::json;

    fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
        serde_json::to_value(v).expect("json")
    }

    // Upstream TestSetDefaultDeployment.
    #[test]
    fn deployment_defaults() {
        let cases: Vec<(&str, serde_json::Value, serde_json::Value)> = vec![
            (
                "empty",
                json!({}),
                json!({"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                       "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}),
            ),
            (
                "surge set",
                json!({"replicas": 5, "strategy": {"rollingUpdate": {"maxSurge": 1}}}),
                json!({"replicas": 5, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                       "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}}),
            ),
            (
                "recreate",
                json!({"replicas": 5, "strategy": {"type": "Recreate"}}),
                json!({"replicas": 5, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                       "strategy": {"type": "Recreate"}}),
            ),
            (
                "recreate with limits",
                json!({"replicas": 5, "strategy": {"type": "Recreate"}, "progressDeadlineSeconds": 30, "revisionHistoryLimit": 2}),
                json!({"replicas": 5, "revisionHistoryLimit": 2, "progressDeadlineSeconds": 30,
                       "strategy": {"type": "Recreate"}}),
            ),
        ];
        for (name, spec, want) in cases {
            let mut spec: serde_json::Value = spec;
            spec["template"] = json!({});
            let mut d = Deployment {
                spec: serde_json::from_value::<DeploymentSpec>(spec.clone())
                    .unwrap_or_else(|e| panic!("{name}: {e}")),
                ..Default::default()
            };
            default_deployment(&mut d);
            let mut got = to_json(&d.spec);
            let obj = got.as_object_mut().expect("object");
            obj.remove("template");
            obj.remove("selector");
            assert_eq!(got, want, "{name}");
            let restart = d.spec.template.spec.and_then(|s| s.restart_policy);
            assert_eq!(restart.as_deref(), Some("Always"), "{name}");
        }
    }

    // Upstream TestSetDefaultDaemonSetSpec.
    #[test]
    fn daemon_set_defaults() {
        let mut ds = DaemonSet {
            spec: DaemonSetSpec::default(),
            ..Default::default()
        };
        default_daemon_set(&mut ds);
        let spec = to_json(&ds.spec);
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(spec["revisionHistoryLimit"], json!(10));
        let mut on_delete: DaemonSet = serde_json::from_value(json!({"spec": {
            "selector": {}, "template": {}, "updateStrategy": {"type": "OnDelete"}, "revisionHistoryLimit": 1}}))
        .expect("ds");
        default_daemon_set(&mut on_delete);
        let spec = to_json(&on_delete.spec);
        assert_eq!(spec["updateStrategy"], json!({"type": "OnDelete"}));
        assert_eq!(spec["revisionHistoryLimit"], json!(1));
    }

    // Upstream TestSetDefaultStatefulSet.
    #[test]
    fn stateful_set_defaults() {
        let mut sts = StatefulSet {
            spec: StatefulSetSpec {
                volume_claim_templates: Some(vec![PersistentVolumeClaim::default()]),
                ..Default::default()
            },
            ..Default::default()
        };
        default_stateful_set(&mut sts);
        let spec = to_json(&sts.spec);
        assert_eq!(spec["podManagementPolicy"], json!("OrderedReady"));
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(spec["replicas"], json!(1));
        assert_eq!(spec["revisionHistoryLimit"], json!(10));
        assert_eq!(
            spec["volumeClaimTemplates"][0]["spec"]["volumeMode"],
            json!("Filesystem")
        );
        assert_eq!(
            spec["volumeClaimTemplates"][0]["status"]["phase"],
            json!("Pending")
        );

        let mut on_delete: StatefulSet = serde_json::from_value(json!({"spec": {
            "selector": {}, "template": {}, "serviceName": "",
            "podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}))
        .expect("sts");
        default_stateful_set(&mut on_delete);
        let spec = to_json(&on_delete.spec);
        assert_eq!(spec["podManagementPolicy"], json!("Parallel"));
        assert_eq!(spec["updateStrategy"], json!({"type": "OnDelete"}));
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
        );

        let mut partitioned: StatefulSet = serde_json::from_value(json!({"spec": {
            "selector": {}, "template": {}, "serviceName": "",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}}))
        .expect("sts");
        default_stateful_set(&mut partitioned);
        let spec = to_json(&partitioned.spec);
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
        );
    }

    #[test]
    fn replica_set_defaults() {
        let mut rs = ReplicaSet::default();
        default_replica_set(&mut rs);
        assert_eq!(rs.spec.replicas, Some(1));
    }
}
