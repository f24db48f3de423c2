//! Cluster-wide classes: scheduling.k8s.io PriorityClasses and
//! storage.k8s.io StorageClasses (upstream's `printPriorityClass`,
//! `printStorageClass`).

use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::StorageClass;
use serde_json::json;

use super::cells;
use super::{Column, Printer, Row, decode};
use crate::discovery::openapi::describe;

/// The PriorityClass printer: NAME VALUE GLOBAL-DEFAULT AGE
/// PREEMPTIONPOLICY.
pub const PRIORITY_CLASS: Printer = Printer {
    columns: || {
        let d = |p: &str| describe("io.k8s.api.scheduling.v1.PriorityClass", p);
        vec![
            Column::name(),
            Column::new("Value", "integer", d("value")),
            Column::new("Global-Default", "boolean", d("globalDefault")),
            Column::age(),
            Column::new("PreemptionPolicy", "string", d("preemptionPolicy")),
        ]
    },
    row: |v, now| {
        let pc = decode::<PriorityClass>(v)?;
        Some(Row::from(vec![
            cells::name(&pc.metadata),
            json!(pc.value),
            json!(pc.global_default.unwrap_or(false)),
            cells::age(&pc.metadata, now),
            json!(pc.preemption_policy.clone().unwrap_or_default()),
        ]))
    },
};

/// The annotations marking the default StorageClass (GA and beta).
const DEFAULT_CLASS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// The StorageClass printer: NAME (`(default)` marked) PROVISIONER
/// RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE.
pub const STORAGE_CLASS: Printer = Printer {
    columns: || {
        let d = |p: &str| describe("io.k8s.api.storage.v1.StorageClass", p);
        vec![
            Column::name(),
            Column::new("Provisioner", "string", d("provisioner")),
            Column::new("ReclaimPolicy", "string", d("reclaimPolicy")),
            Column::new("VolumeBindingMode", "string", d("volumeBindingMode")),
            Column::new("AllowVolumeExpansion", "string", d("allowVolumeExpansion")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let sc = decode::<StorageClass>(v)?;
        let is_default = sc.metadata.annotations.as_ref().is_some_and(|a| {
            DEFAULT_CLASS
                .iter()
                .any(|k| a.get(*k).is_some_and(|v| v == "true"))
        });
        let mut name = sc.metadata.name.clone().unwrap_or_default();
        if is_default {
            name.push_str(" (default)");
        }
        Some(Row::from(vec![
            json!(name),
            json!(sc.provisioner),
            json!(
                sc.reclaim_policy
                    .clone()
                    .unwrap_or_else(|| "Delete".to_owned())
            ),
            json!(
                sc.volume_binding_mode
                    .clone()
                    .unwrap_or_else(|| "Immediate".to_owned())
            ),
            json!(sc.allow_volume_expansion.unwrap_or(false)),
            cells::age(&sc.metadata, now),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use serde_json::Value;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    fn cells_of(p: Printer, v: Value) -> Vec<Value> {
        (p.row)(&v, now()).expect("decodes").cells
    }

    /// Upstream `TestPrintPriorityClass`.
    #[test]
    fn priority_classes() {
        assert_eq!(
            cells_of(
                PRIORITY_CLASS,
                json!({"metadata": {"name": "pc1", "creationTimestamp": "2025-12-24T00:00:00Z"},
                       "value": 1, "preemptionPolicy": "PreemptLowerPriority"})
            ),
            vec![
                json!("pc1"),
                json!(1),
                json!(false),
                json!("10d"),
                json!("PreemptLowerPriority")
            ]
        );
        assert_eq!(
            cells_of(
                PRIORITY_CLASS,
                json!({"metadata": {"name": "pc2"}, "value": 1000000000, "globalDefault": true})
            ),
            vec![
                json!("pc2"),
                json!(1000000000),
                json!(true),
                json!("<unknown>"),
                json!("")
            ]
        );
    }

    /// Upstream `TestPrintStorageClass`.
    #[test]
    fn storage_classes() {
        assert_eq!(
            cells_of(
                STORAGE_CLASS,
                json!({"metadata": {"name": "sc1"}, "provisioner": "kubernetes.io/glusterfs"})
            ),
            vec![
                json!("sc1"),
                json!("kubernetes.io/glusterfs"),
                json!("Delete"),
                json!("Immediate"),
                json!(false),
                json!("<unknown>")
            ]
        );
        assert_eq!(
            cells_of(
                STORAGE_CLASS,
                json!({"metadata": {"name": "sc2",
                                    "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"}},
                       "provisioner": "kubernetes.io/nfs", "reclaimPolicy": "Retain",
                       "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true})
            ),
            vec![
                json!("sc2 (default)"),
                json!("kubernetes.io/nfs"),
                json!("Retain"),
                json!("WaitForFirstConsumer"),
                json!(true),
                json!("<unknown>")
            ]
        );
    }
}
