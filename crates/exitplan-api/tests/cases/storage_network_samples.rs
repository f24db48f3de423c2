//! The API server's CRUD samples (`exitplan-apiserver/tests/rest_crud.rs`)
//! for PersistentVolumeClaim, PersistentVolume, ResourceQuota, LimitRange,
//! Ingress, IngressClass, NetworkPolicy, PriorityClass and StorageClass pass
//! their strategies the way the server runs them: system fields, create,
//! then an unchanged update.

use exitplan_api::absent::{Absent, find_absent};
use exitplan_api::core::limit_range::LimitRangeStrategy;
use exitplan_api::core::persistent_volume::PersistentVolumeStrategy;
use exitplan_api::core::persistent_volume_claim::PersistentVolumeClaimStrategy;
use exitplan_api::core::resource_quota::ResourceQuotaStrategy;
use exitplan_api::networking::ingress::IngressStrategy;
use exitplan_api::networking::ingress_class::IngressClassStrategy;
use exitplan_api::networking::network_policy::NetworkPolicyStrategy;
use exitplan_api::scheduling::priority_class::PriorityClassStrategy;
use exitplan_api::storage::storage_class::StorageClassStrategy;
use exitplan_api::strategy::{
    Context, Strategy, SystemFields, admit_create, admit_update, fill_system_fields,
};
use k8s_openapi::Metadata as _;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn admit<S>(mut body: Value) -> S::Object
where
    S: Strategy,
    S::Object: DeserializeOwned,
{
    if S::NAMESPACED
        && let Some(m) = body["metadata"].as_object_mut()
    {
        m.insert("namespace".into(), "default".into());
    }
    let absent: Absent = find_absent(&body);
    let now = "2026-11-29T10:00:00Z".parse().expect("time");
    let ctx = Context {
        now,
        absent: &absent,
    };
    let mut obj: S::Object = serde_json::from_value(body).expect("decodes");
    fill_system_fields(
        obj.metadata_mut(),
        &SystemFields {
            uid: "6b1f3f4e-2c4d-4b8a-9e4f-1d2c3b4a5f60".into(),
            creation_timestamp: now,
            generated_name_suffix: "abcde".into(),
        },
    );
    admit_create::<S>(&mut obj, &ctx).expect("create admitted");
    obj.metadata_mut().resource_version = Some("1".into());
    let mut again = obj.clone();
    admit_update::<S>(&mut again, &obj, &ctx).expect("unchanged update admitted");
    again
}

fn meta(kind: &str) -> Value {
    json!({"name": format!("crud-{}", kind.to_lowercase())})
}

#[test]
fn server_samples_are_admitted() {
    admit::<PersistentVolumeClaimStrategy>(json!({
        "metadata": meta("PersistentVolumeClaim"),
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }));
    admit::<PersistentVolumeStrategy>(json!({
        "metadata": meta("PersistentVolume"),
        "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"}
        }
    }));
    admit::<ResourceQuotaStrategy>(
        json!({"metadata": meta("ResourceQuota"), "spec": {"hard": {"pods": "10"}}}),
    );
    let lr = admit::<LimitRangeStrategy>(json!({
        "metadata": meta("LimitRange"),
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}
    }));
    let item = &lr.spec.expect("spec").limits[0];
    assert_eq!(
        item.default_request
            .as_ref()
            .and_then(|d| d.get("cpu"))
            .map(|q| q.0.as_str()),
        Some("2"),
        "max → default → defaultRequest"
    );
    admit::<IngressStrategy>(json!({
        "metadata": meta("Ingress"),
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    }));
    admit::<IngressClassStrategy>(
        json!({"metadata": meta("IngressClass"), "spec": {"controller": "example.com/ingress"}}),
    );
    let np = admit::<NetworkPolicyStrategy>(
        json!({"metadata": meta("NetworkPolicy"), "spec": {"podSelector": {}}}),
    );
    assert_eq!(
        np.spec.and_then(|s| s.policy_types),
        Some(vec!["Ingress".to_owned()])
    );
    let pc =
        admit::<PriorityClassStrategy>(json!({"metadata": meta("PriorityClass"), "value": 1000}));
    assert_eq!(
        pc.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
    let sc = admit::<StorageClassStrategy>(
        json!({"metadata": meta("StorageClass"), "provisioner": "example.com/disk"}),
    );
    assert_eq!(
        (
            sc.reclaim_policy.as_deref(),
            sc.volume_binding_mode.as_deref()
        ),
        (Some("Delete"), Some("Immediate"))
    );
}
