//! The served resources: what each one is called, where it is stored, which
//! fields selectors may use, and how writes are admitted (defaulting, the
//! registry strategy and validation from `exitplan_api` — the same functions
//! `exitplan validate` runs).

mod admission;
mod attrs;
mod crd_admission;
mod custom;
mod scale;
mod selectable;
mod served;

use serde_json::Value;

pub use admission::{Admission, AdmissionError, MetadataOnly, PodAdmission, Typed};
pub use attrs::attrs_of;
pub use crd_admission::CrdAdmission;
pub use custom::{CustomResource, Unservable, resources_for};
pub use scale::{APPS_SCALE, RC_SCALE, ScaleDef, SelectorSource};
pub use served::{Registry, Served};

use exitplan_api::batch::JobStrategy;
use exitplan_api::coordination::LeaseStrategy;
use exitplan_api::core::event::EventStrategy;
use exitplan_api::core::namespace::NamespaceStrategy;
use exitplan_api::core::node::NodeStrategy;
use exitplan_api::events::EventsEventStrategy;
use exitplan_api::lifecycle::eviction::EvictionStrategy;
use exitplan_api::lifecycle::evictionrequest::EvictionRequestStrategy;
use exitplan_api::policy::pdb::PodDisruptionBudgetStrategy;

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
    /// Which `fieldSelector` labels the kind accepts and the attribute each
    /// reads (upstream's field label conversion).
    pub field_labels: FieldLabels,
    /// Derives attributes that are not a plain JSON path of the stored
    /// object (`status.successful` of Jobs, `source` of Events, booleans that
    /// default to `false`).
    pub attrs_hook: Option<fn(&Value, &mut Attrs)>,
    /// The storage resource: resources that are views of the same objects
    /// (core and events.k8s.io Events) share it.
    pub storage: &'static str,
    /// How objects of this resource convert to and from the stored shape,
    /// when it differs (events.k8s.io Events are stored as core Events).
    pub conversion: Option<&'static Conversion>,
    /// Admission of writes.
    pub admission: &'static dyn Admission,
    /// The `scale` subresource's view of the objects, when served.
    pub scale: Option<&'static ScaleDef>,
    /// What the CRD says, for a custom resource.
    pub custom: Option<&'static CustomResource>,
}

/// Which field selector labels a kind accepts.
#[derive(Clone, Copy, Debug)]
pub enum FieldLabels {
    /// No conversion registered upstream: only `metadata.name` and
    /// `metadata.namespace` (`DefaultMetaV1FieldSelectorConversion`).
    Default,
    /// A registered conversion: each accepted label and the attribute
    /// (`Attrs::fields` key) it reads.
    Convert(&'static [(&'static str, &'static str)]),
}

/// Conversion between a resource's own shape and the stored shape.
#[derive(Debug)]
pub struct Conversion {
    /// The object as this resource serves it (with its `apiVersion` and
    /// `kind`) → the stored object.
    pub to_storage: fn(&Value) -> Result<Value, String>,
    /// The stored object → the object as this resource serves it.
    pub from_storage: fn(&Value) -> Value,
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

    /// Labels and selectable fields of `object` in its **stored** shape.
    pub fn attrs(&self, object: &Value) -> Attrs {
        let mut attrs = attrs_of(object, self.namespaced, self.selectable_fields);
        if let Some(hook) = self.attrs_hook {
            hook(object, &mut attrs);
        }
        attrs
    }

    /// The object to store for `object` as this resource serves it.
    pub fn to_storage(&self, object: &Value) -> Result<Value, String> {
        if let Some(c) = self.custom {
            return Ok(c.to_storage(object));
        }
        match self.conversion {
            Some(c) => (c.to_storage)(object),
            None => Ok(object.clone()),
        }
    }

    /// The object as this resource serves it, from its stored shape.
    pub fn from_storage(&self, stored: &Value) -> Value {
        match self.conversion {
            Some(c) => (c.from_storage)(stored),
            None => stored.clone(),
        }
    }

    /// Whether `sub` is served.
    pub fn has_subresource(&self, sub: &str) -> bool {
        self.subresources.contains(&sub)
    }
}

static POD: PodAdmission = PodAdmission;
static JOB: Typed<JobStrategy> = Typed::new();
static PDB: Typed<PodDisruptionBudgetStrategy> = Typed::new();
static EVICTION_REQUEST: Typed<EvictionRequestStrategy> = Typed::new();
static EVICTION: Typed<EvictionStrategy> = Typed::new();
static NAMESPACE: admission::NamespaceAdmission =
    admission::NamespaceAdmission(Typed::<NamespaceStrategy>::new());
static NODE: Typed<NodeStrategy> = Typed::new();
static CORE_EVENT: Typed<EventStrategy> = Typed::new();
static EVENTS_EVENT: Typed<EventsEventStrategy> = Typed::new();
static EVENTS_CONVERSION: Conversion = Conversion {
    to_storage: exitplan_api::events::to_core_json,
    from_storage: exitplan_api::events::from_core_json,
};
static LEASE: Typed<LeaseStrategy> = Typed::new();

static CONFIG_MAP: Typed<exitplan_api::core::configmap::ConfigMapStrategy> = Typed::new();
static SECRET: Typed<exitplan_api::core::secret::SecretStrategy> = Typed::new();
static SERVICE: Typed<exitplan_api::core::service::ServiceStrategy> = Typed::new();
static SERVICE_ACCOUNT: Typed<exitplan_api::core::service_account::ServiceAccountStrategy> =
    Typed::new();
static ENDPOINTS: Typed<exitplan_api::core::endpoints::EndpointsStrategy> = Typed::new();
static PVC: Typed<exitplan_api::core::persistent_volume_claim::PersistentVolumeClaimStrategy> =
    Typed::new();
static PV: Typed<exitplan_api::core::persistent_volume::PersistentVolumeStrategy> = Typed::new();
static RESOURCE_QUOTA: Typed<exitplan_api::core::resource_quota::ResourceQuotaStrategy> =
    Typed::new();
static LIMIT_RANGE: Typed<exitplan_api::core::limit_range::LimitRangeStrategy> = Typed::new();
static POD_TEMPLATE: Typed<exitplan_api::core::pod_template::PodTemplateStrategy> = Typed::new();
static RC: Typed<exitplan_api::core::replication_controller::ReplicationControllerStrategy> =
    Typed::new();
static DEPLOYMENT: Typed<exitplan_api::apps::DeploymentStrategy> = Typed::new();
static REPLICA_SET: Typed<exitplan_api::apps::ReplicaSetStrategy> = Typed::new();
static STATEFUL_SET: Typed<exitplan_api::apps::StatefulSetStrategy> = Typed::new();
static DAEMON_SET: Typed<exitplan_api::apps::DaemonSetStrategy> = Typed::new();
static CONTROLLER_REVISION: Typed<exitplan_api::apps::ControllerRevisionStrategy> = Typed::new();
static ENDPOINT_SLICE: Typed<exitplan_api::discovery::endpoint_slice::EndpointSliceStrategy> =
    Typed::new();
static INGRESS: Typed<exitplan_api::networking::ingress::IngressStrategy> = Typed::new();
static INGRESS_CLASS: Typed<exitplan_api::networking::ingress_class::IngressClassStrategy> =
    Typed::new();
static NETWORK_POLICY: Typed<exitplan_api::networking::network_policy::NetworkPolicyStrategy> =
    Typed::new();
static CRON_JOB: Typed<exitplan_api::batch::cron_job::CronJobStrategy> = Typed::new();
static PRIORITY_CLASS: Typed<exitplan_api::scheduling::priority_class::PriorityClassStrategy> =
    Typed::new();
static CRD: CrdAdmission = CrdAdmission;
static ROLE: Typed<exitplan_api::rbac::role::RoleStrategy> = Typed::new();
static CLUSTER_ROLE: Typed<exitplan_api::rbac::role::ClusterRoleStrategy> = Typed::new();
static ROLE_BINDING: Typed<exitplan_api::rbac::binding::RoleBindingStrategy> = Typed::new();
static CLUSTER_ROLE_BINDING: Typed<exitplan_api::rbac::binding::ClusterRoleBindingStrategy> =
    Typed::new();
static STORAGE_CLASS: Typed<exitplan_api::storage::storage_class::StorageClassStrategy> =
    Typed::new();
static VALIDATING_WEBHOOK_CONFIGURATION: Typed<
    exitplan_api::admissionregistration::ValidatingWebhookConfigurationStrategy<
        exitplan_cel::admission::AdmissionCompiler,
    >,
> = Typed::new();
static MUTATING_WEBHOOK_CONFIGURATION: Typed<
    exitplan_api::admissionregistration::MutatingWebhookConfigurationStrategy<
        exitplan_cel::admission::AdmissionCompiler,
    >,
> = Typed::new();
static VALIDATING_ADMISSION_POLICY: Typed<
    exitplan_api::admissionregistration::ValidatingAdmissionPolicyStrategy<
        exitplan_cel::admission::AdmissionCompiler,
    >,
> = Typed::new();
static VALIDATING_ADMISSION_POLICY_BINDING: Typed<
    exitplan_api::admissionregistration::ValidatingAdmissionPolicyBindingStrategy,
> = Typed::new();

/// A resource with no short names, categories, subresources or selectable
/// fields; entries override what they have.
#[allow(clippy::too_many_arguments)]
const fn plain(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    singular: &'static str,
    namespaced: bool,
    storage: &'static str,
    admission: &'static dyn Admission,
) -> ResourceDef {
    ResourceDef {
        group,
        version,
        kind,
        plural,
        singular,
        namespaced,
        short_names: &[],
        categories: &[],
        subresources: &[],
        selectable_fields: &[],
        field_labels: FieldLabels::Default,
        attrs_hook: None,
        storage,
        conversion: None,
        admission,
        scale: None,
        custom: None,
    }
}

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
        subresources: &["status", "finalize"],
        selectable_fields: &["status.phase"],
        field_labels: FieldLabels::Convert(selectable::NAMESPACE_LABELS),
        attrs_hook: None,
        storage: "namespaces",
        conversion: None,
        admission: &NAMESPACE,
        scale: None,
        custom: None,
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
        field_labels: FieldLabels::Convert(selectable::NODE_LABELS),
        attrs_hook: Some(selectable::node_attrs),
        storage: "nodes",
        conversion: None,
        admission: &NODE,
        scale: None,
        custom: None,
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
        subresources: &[
            "status",
            "eviction",
            "binding",
            "ephemeralcontainers",
            "resize",
        ],
        selectable_fields: selectable::POD_FIELDS,
        field_labels: FieldLabels::Convert(selectable::POD_LABELS),
        attrs_hook: Some(selectable::pod_attrs),
        storage: "pods",
        conversion: None,
        admission: &POD,
        scale: None,
        custom: None,
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
        selectable_fields: selectable::EVENT_FIELDS,
        field_labels: FieldLabels::Convert(selectable::CORE_EVENT_LABELS),
        attrs_hook: Some(selectable::event_attrs),
        storage: "events",
        conversion: None,
        admission: &CORE_EVENT,
        scale: None,
        custom: None,
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
        selectable_fields: selectable::EVENT_FIELDS,
        field_labels: FieldLabels::Convert(selectable::EVENTS_EVENT_LABELS),
        attrs_hook: Some(selectable::event_attrs),
        storage: "events",
        conversion: Some(&EVENTS_CONVERSION),
        admission: &EVENTS_EVENT,
        scale: None,
        custom: None,
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
        field_labels: FieldLabels::Default,
        attrs_hook: None,
        storage: "poddisruptionbudgets.policy",
        conversion: None,
        admission: &PDB,
        scale: None,
        custom: None,
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
        selectable_fields: &[],
        field_labels: FieldLabels::Convert(selectable::JOB_LABELS),
        attrs_hook: Some(selectable::job_attrs),
        storage: "jobs.batch",
        conversion: None,
        admission: &JOB,
        scale: None,
        custom: None,
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
        field_labels: FieldLabels::Default,
        attrs_hook: None,
        storage: "leases.coordination.k8s.io",
        conversion: None,
        admission: &LEASE,
        scale: None,
        custom: None,
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
        field_labels: FieldLabels::Default,
        attrs_hook: None,
        storage: "evictionrequests.lifecycle.k8s.io",
        conversion: None,
        admission: &EVICTION_REQUEST,
        scale: None,
        custom: None,
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
        field_labels: FieldLabels::Default,
        attrs_hook: None,
        storage: "evictions.lifecycle.k8s.io",
        conversion: None,
        admission: &EVICTION,
        scale: None,
        custom: None,
    },
    ResourceDef {
        short_names: &["cm"],
        ..plain(
            "",
            "v1",
            "ConfigMap",
            "configmaps",
            "configmap",
            true,
            "configmaps",
            &CONFIG_MAP,
        )
    },
    ResourceDef {
        selectable_fields: &["type"],
        field_labels: FieldLabels::Convert(selectable::SECRET_LABELS),
        ..plain(
            "", "v1", "Secret", "secrets", "secret", true, "secrets", &SECRET,
        )
    },
    ResourceDef {
        short_names: &["svc"],
        categories: &["all"],
        subresources: &["status"],
        selectable_fields: &["spec.clusterIP", "spec.type"],
        field_labels: FieldLabels::Convert(selectable::SERVICE_LABELS),
        ..plain(
            "", "v1", "Service", "services", "service", true, "services", &SERVICE,
        )
    },
    ResourceDef {
        short_names: &["sa"],
        subresources: &["token"],
        ..plain(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            "serviceaccount",
            true,
            "serviceaccounts",
            &SERVICE_ACCOUNT,
        )
    },
    ResourceDef {
        short_names: &["ep"],
        ..plain(
            "",
            "v1",
            "Endpoints",
            "endpoints",
            "endpoints",
            true,
            "endpoints",
            &ENDPOINTS,
        )
    },
    ResourceDef {
        short_names: &["pvc"],
        subresources: &["status"],
        ..plain(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            "persistentvolumeclaim",
            true,
            "persistentvolumeclaims",
            &PVC,
        )
    },
    ResourceDef {
        short_names: &["pv"],
        subresources: &["status"],
        ..plain(
            "",
            "v1",
            "PersistentVolume",
            "persistentvolumes",
            "persistentvolume",
            false,
            "persistentvolumes",
            &PV,
        )
    },
    ResourceDef {
        short_names: &["quota"],
        subresources: &["status"],
        ..plain(
            "",
            "v1",
            "ResourceQuota",
            "resourcequotas",
            "resourcequota",
            true,
            "resourcequotas",
            &RESOURCE_QUOTA,
        )
    },
    ResourceDef {
        short_names: &["limits"],
        ..plain(
            "",
            "v1",
            "LimitRange",
            "limitranges",
            "limitrange",
            true,
            "limitranges",
            &LIMIT_RANGE,
        )
    },
    plain(
        "",
        "v1",
        "PodTemplate",
        "podtemplates",
        "podtemplate",
        true,
        "podtemplates",
        &POD_TEMPLATE,
    ),
    ResourceDef {
        short_names: &["rc"],
        categories: &["all"],
        subresources: &["scale", "status"],
        scale: Some(&RC_SCALE),
        custom: None,
        field_labels: FieldLabels::Convert(selectable::REPLICAS_LABELS),
        attrs_hook: Some(selectable::replicas_attrs),
        ..plain(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            "replicationcontroller",
            true,
            "controllers",
            &RC,
        )
    },
    ResourceDef {
        short_names: &["deploy"],
        categories: &["all"],
        subresources: &["scale", "status"],
        scale: Some(&APPS_SCALE),
        custom: None,
        ..plain(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            "deployment",
            true,
            "deployments.apps",
            &DEPLOYMENT,
        )
    },
    ResourceDef {
        short_names: &["rs"],
        categories: &["all"],
        subresources: &["scale", "status"],
        scale: Some(&APPS_SCALE),
        custom: None,
        field_labels: FieldLabels::Convert(selectable::REPLICAS_LABELS),
        attrs_hook: Some(selectable::replicas_attrs),
        ..plain(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            "replicaset",
            true,
            "replicasets.apps",
            &REPLICA_SET,
        )
    },
    ResourceDef {
        short_names: &["sts"],
        categories: &["all"],
        subresources: &["scale", "status"],
        scale: Some(&APPS_SCALE),
        custom: None,
        ..plain(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            "statefulset",
            true,
            "statefulsets.apps",
            &STATEFUL_SET,
        )
    },
    ResourceDef {
        short_names: &["ds"],
        categories: &["all"],
        subresources: &["status"],
        ..plain(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            "daemonset",
            true,
            "daemonsets.apps",
            &DAEMON_SET,
        )
    },
    plain(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        "controllerrevision",
        true,
        "controllerrevisions.apps",
        &CONTROLLER_REVISION,
    ),
    plain(
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        "endpointslice",
        true,
        "endpointslices.discovery.k8s.io",
        &ENDPOINT_SLICE,
    ),
    ResourceDef {
        short_names: &["ing"],
        subresources: &["status"],
        ..plain(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            "ingress",
            true,
            "ingresses.networking.k8s.io",
            &INGRESS,
        )
    },
    plain(
        "networking.k8s.io",
        "v1",
        "IngressClass",
        "ingressclasses",
        "ingressclass",
        false,
        "ingressclasses.networking.k8s.io",
        &INGRESS_CLASS,
    ),
    ResourceDef {
        short_names: &["netpol"],
        ..plain(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            "networkpolicy",
            true,
            "networkpolicies.networking.k8s.io",
            &NETWORK_POLICY,
        )
    },
    ResourceDef {
        short_names: &["cj"],
        categories: &["all"],
        subresources: &["status"],
        ..plain(
            "batch",
            "v1",
            "CronJob",
            "cronjobs",
            "cronjob",
            true,
            "cronjobs.batch",
            &CRON_JOB,
        )
    },
    ResourceDef {
        short_names: &["pc"],
        ..plain(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            "priorityclass",
            false,
            "priorityclasses.scheduling.k8s.io",
            &PRIORITY_CLASS,
        )
    },
    ResourceDef {
        ..plain(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            "role",
            true,
            "roles.rbac.authorization.k8s.io",
            &ROLE,
        )
    },
    ResourceDef {
        ..plain(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            "clusterrole",
            false,
            "clusterroles.rbac.authorization.k8s.io",
            &CLUSTER_ROLE,
        )
    },
    ResourceDef {
        ..plain(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            "rolebinding",
            true,
            "rolebindings.rbac.authorization.k8s.io",
            &ROLE_BINDING,
        )
    },
    ResourceDef {
        ..plain(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            "clusterrolebinding",
            false,
            "clusterrolebindings.rbac.authorization.k8s.io",
            &CLUSTER_ROLE_BINDING,
        )
    },
    ResourceDef {
        short_names: &["sc"],
        ..plain(
            "storage.k8s.io",
            "v1",
            "StorageClass",
            "storageclasses",
            "storageclass",
            false,
            "storageclasses.storage.k8s.io",
            &STORAGE_CLASS,
        )
    },
    ResourceDef {
        categories: &["api-extensions"],
        ..plain(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            "validatingwebhookconfiguration",
            false,
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
            &VALIDATING_WEBHOOK_CONFIGURATION,
        )
    },
    ResourceDef {
        categories: &["api-extensions"],
        ..plain(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            "mutatingwebhookconfiguration",
            false,
            "mutatingwebhookconfigurations.admissionregistration.k8s.io",
            &MUTATING_WEBHOOK_CONFIGURATION,
        )
    },
    ResourceDef {
        categories: &["api-extensions"],
        subresources: &["status"],
        ..plain(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            "validatingadmissionpolicy",
            false,
            "validatingadmissionpolicies.admissionregistration.k8s.io",
            &VALIDATING_ADMISSION_POLICY,
        )
    },
    ResourceDef {
        categories: &["api-extensions"],
        ..plain(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            "validatingadmissionpolicybinding",
            false,
            "validatingadmissionpolicybindings.admissionregistration.k8s.io",
            &VALIDATING_ADMISSION_POLICY_BINDING,
        )
    },
    ResourceDef {
        group: "apiextensions.k8s.io",
        version: "v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        namespaced: false,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        subresources: &["status"],
        selectable_fields: &[],
        field_labels: FieldLabels::Default,
        attrs_hook: None,
        storage: "customresourcedefinitions",
        conversion: None,
        admission: &CRD,
        scale: None,
        custom: None,
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
    use exitplan_api::strategy::SystemFields;

    fn system() -> SystemFields {
        SystemFields {
            uid: "3f9a3c1e-4f1e-4a53-9a4c-8f1b2c3d4e5f".into(),
            creation_timestamp: "2026-01-01T00:00:00Z".parse().expect("time"),
            generated_name_suffix: "abcde".into(),
        }
    }

    fn create(group: &str, version: &str, plural: &str, mut obj: Value) -> Result<Value, String> {
        let def = find(group, version, plural).expect("served");
        def.admission
            .create(&mut obj, &system(), system().creation_timestamp)
            .map(|()| obj)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn simple_kinds_are_admitted_by_their_strategies() {
        let ns = create(
            "",
            "v1",
            "namespaces",
            serde_json::json!({"metadata": {"name": "team-a"}}),
        )
        .expect("namespace");
        assert_eq!(ns["status"]["phase"], "Active");
        assert_eq!(ns["spec"]["finalizers"], serde_json::json!(["kubernetes"]));
        let err = create(
            "",
            "v1",
            "namespaces",
            serde_json::json!({"metadata": {"name": "a.b"}}),
        )
        .expect_err("DNS label");
        assert!(err.contains("must not contain dots"), "{err}");

        let err = create(
            "events.k8s.io",
            "v1",
            "events",
            serde_json::json!({"metadata": {"name": "e", "namespace": "default"},
                               "eventTime": "2026-01-01T00:00:00.000000Z", "type": "Normal",
                               "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}),
        )
        .expect_err("strict events");
        assert!(err.contains("reportingController: Required value"), "{err}");
        let core = create(
            "",
            "v1",
            "events",
            serde_json::json!({"metadata": {"name": "e", "namespace": "default"},
                               "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}),
        )
        .expect("legacy events");
        assert_eq!(core["involvedObject"]["name"], "p");

        let err = create(
            "coordination.k8s.io",
            "v1",
            "leases",
            serde_json::json!({"metadata": {"name": "l", "namespace": "default"}, "spec": {"leaseDurationSeconds": 0}}),
        )
        .expect_err("lease");
        assert!(
            err.contains("spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"),
            "{err}"
        );
        let err = create(
            "",
            "v1",
            "nodes",
            serde_json::json!({"metadata": {"name": "n1", "namespace": "x"}}),
        )
        .expect_err("cluster-scoped");
        assert!(
            err.contains("metadata.namespace: Forbidden: not allowed on this type"),
            "{err}"
        );
    }

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
