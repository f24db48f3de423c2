//! The served resources: what each one is called, where it is stored, which
//! fields selectors may use, and how writes are admitted (defaulting, the
//! registry strategy and validation from `exitplan_api` — the same functions
//! `exitplan validate` runs).

mod admission;
mod attrs;

use serde_json::Value;

pub use admission::{Admission, AdmissionError, MetadataOnly, Typed};
pub use attrs::attrs_of;

use exitplan_api::batch::JobStrategy;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::lifecycle::eviction::EvictionStrategy;
use exitplan_api::lifecycle::evictionrequest::EvictionRequestStrategy;
use exitplan_api::policy::pdb::PodDisruptionBudgetStrategy;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Namespace, Node};
use k8s_openapi::api::events::v1::Event as EventsEvent;

use crate::storage::{Attrs, Key, Prefix};

/// One served resource (an entry of discovery and a REST collection).
#[derive(Debug)]
pub struct ResourceDef {
    /// API group (`""` for core).
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Kind of its objects.
    pub kind: &'static str,
    /// Plural resource name used in URLs.
    pub plural: &'static str,
    /// Singular name.
    pub singular: &'static str,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// `kubectl` short names.
    pub short_names: &'static [&'static str],
    /// Categories (`all`).
    pub categories: &'static [&'static str],
    /// Subresources served (`status`, `eviction`, `binding`).
    pub subresources: &'static [&'static str],
    /// Field paths `fieldSelector` may use besides `metadata.name` and
    /// `metadata.namespace` (upstream's selectable fields).
    pub selectable_fields: &'static [&'static str],
    /// The storage resource: resources that are views of the same objects
    /// (core and events.k8s.io Events) share it.
    pub storage: &'static str,
    /// Admission of writes.
    pub admission: &'static dyn Admission,
}

impl ResourceDef {
    /// `v1` or `<group>/<version>`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `<Kind>List`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The storage key of one object.
    pub fn key(&self, namespace: Option<&str>, name: &str) -> Key {
        Key::new(
            self.storage,
            namespace.filter(|_| self.namespaced).unwrap_or_default(),
            name,
        )
    }

    /// The storage prefix of a collection (one namespace, or all).
    pub fn prefix(&self, namespace: Option<&str>) -> Prefix {
        Prefix::new(self.storage, namespace.filter(|_| self.namespaced))
    }

    /// Labels and selectable fields of `object`.
    pub fn attrs(&self, object: &Value) -> Attrs {
        attrs_of(object, self.namespaced, self.selectable_fields)
    }

    /// Whether `sub` is served.
    pub fn has_subresource(&self, sub: &str) -> bool {
        self.subresources.contains(&sub)
    }
}

static POD: Typed<PodStrategy> = Typed::new();
static JOB: Typed<JobStrategy> = Typed::new();
static PDB: Typed<PodDisruptionBudgetStrategy> = Typed::new();
static EVICTION_REQUEST: Typed<EvictionRequestStrategy> = Typed::new();
static EVICTION: Typed<EvictionStrategy> = Typed::new();
static NAMESPACE: MetadataOnly<Namespace, false> = Typed::new();
static NODE: MetadataOnly<Node, false> = Typed::new();
static CORE_EVENT: MetadataOnly<CoreEvent, true> = Typed::new();
static EVENTS_EVENT: MetadataOnly<EventsEvent, true> = Typed::new();
static LEASE: MetadataOnly<Lease, true> = Typed::new();

/// Every served resource.
pub static RESOURCES: &[ResourceDef] = &[
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        singular: "namespace",
        namespaced: false,
        short_names: &["ns"],
        categories: &[],
        subresources: &["status"],
        selectable_fields: &["status.phase"],
        storage: "namespaces",
        admission: &NAMESPACE,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        singular: "node",
        namespaced: false,
        short_names: &["no"],
        categories: &[],
        subresources: &["status"],
        selectable_fields: &["spec.unschedulable"],
        storage: "nodes",
        admission: &NODE,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        singular: "pod",
        namespaced: true,
        short_names: &["po"],
        categories: &["all"],
        subresources: &["status", "eviction", "binding"],
        selectable_fields: &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        storage: "pods",
        admission: &POD,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        subresources: &[],
        selectable_fields: &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        storage: "events",
        admission: &CORE_EVENT,
    },
    ResourceDef {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        subresources: &[],
        selectable_fields: &[],
        storage: "events.events.k8s.io",
        admission: &EVENTS_EVENT,
    },
    ResourceDef {
        group: "policy",
        version: "v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        namespaced: true,
        short_names: &["pdb"],
        categories: &[],
        subresources: &["status"],
        selectable_fields: &[],
        storage: "poddisruptionbudgets.policy",
        admission: &PDB,
    },
    ResourceDef {
        group: "batch",
        version: "v1",
        kind: "Job",
        plural: "jobs",
        singular: "job",
        namespaced: true,
        short_names: &[],
        categories: &["all"],
        subresources: &["status"],
        selectable_fields: &["status.successful"],
        storage: "jobs.batch",
        admission: &JOB,
    },
    ResourceDef {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        singular: "lease",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &[],
        selectable_fields: &[],
        storage: "leases.coordination.k8s.io",
        admission: &LEASE,
    },
    ResourceDef {
        group: "lifecycle.k8s.io",
        version: "v1alpha1",
        kind: "EvictionRequest",
        plural: "evictionrequests",
        singular: "evictionrequest",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &["status"],
        selectable_fields: &[],
        storage: "evictionrequests.lifecycle.k8s.io",
        admission: &EVICTION_REQUEST,
    },
    ResourceDef {
        group: "lifecycle.k8s.io",
        version: "v1alpha1",
        kind: "Eviction",
        plural: "evictions",
        singular: "eviction",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &["status"],
        selectable_fields: &[],
        storage: "evictions.lifecycle.k8s.io",
        admission: &EVICTION,
    },
];

/// The resource served at `/api[s]/<group>/<version>/<plural>`.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The resource of a kind in a group.
pub fn find_kind(group: &str, kind: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_is_findable_and_has_a_distinct_url() {
        for r in RESOURCES {
            let found = find(r.group, r.version, r.plural).expect("findable");
            assert!(std::ptr::eq(found, r), "{} is served once", r.plural);
        }
        let pods = find("", "v1", "pods").expect("pods");
        assert_eq!(
            pods.key(Some("default"), "web-0").as_str(),
            "pods/default/web-0"
        );
        let nodes = find("", "v1", "nodes").expect("nodes");
        assert_eq!(nodes.key(Some("ignored"), "n1").as_str(), "nodes//n1");
        assert_eq!(
            find("lifecycle.k8s.io", "v1alpha1", "evictions")
                .map(|r| r.api_version())
                .as_deref(),
            Some("lifecycle.k8s.io/v1alpha1")
        );
    }
}
