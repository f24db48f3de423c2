//! The kinds a scenario may name: what the embedded API server serves.

use kube::discovery::ApiResource;

/// A kind the embedded API server serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// `Pod`.
    pub kind: &'static str,
    /// The API group (`""` for core).
    pub group: &'static str,
    /// The version.
    pub version: &'static str,
    /// The resource (`pods`).
    pub plural: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
}

/// Every kind a scenario may create, patch, delete or show.
pub const KINDS: &[KindInfo] = &[
    k("Namespace", "", "v1", "namespaces", false),
    k("Node", "", "v1", "nodes", false),
    k("Pod", "", "v1", "pods", true),
    k("Event", "", "v1", "events", true),
    k(
        "PodDisruptionBudget",
        "policy",
        "v1",
        "poddisruptionbudgets",
        true,
    ),
    k("Job", "batch", "v1", "jobs", true),
    k("Lease", "coordination.k8s.io", "v1", "leases", true),
    k(
        "EvictionRequest",
        "lifecycle.k8s.io",
        "v1alpha1",
        "evictionrequests",
        true,
    ),
    k(
        "Eviction",
        "lifecycle.k8s.io",
        "v1alpha1",
        "evictions",
        true,
    ),
];

const fn k(
    kind: &'static str,
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> KindInfo {
    KindInfo {
        kind,
        group,
        version,
        plural,
        namespaced,
    }
}

impl KindInfo {
    /// The kind named `kind` (exact, or case-insensitive, or by resource name).
    pub fn find(kind: &str) -> Option<KindInfo> {
        KINDS
            .iter()
            .copied()
            .find(|i| i.kind == kind || i.kind.eq_ignore_ascii_case(kind) || i.plural == kind)
    }

    /// `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kube-rs resource description.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            api_version: self.api_version(),
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
        }
    }

    /// The names of every kind, for error messages.
    pub fn names() -> String {
        KINDS.iter().map(|k| k.kind).collect::<Vec<_>>().join(", ")
    }
}
