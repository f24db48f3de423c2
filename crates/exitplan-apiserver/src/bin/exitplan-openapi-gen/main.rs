//! Regenerates `crates/exitplan-api/src/openapi/definitions.json`: the OpenAPI schemas
//! of every served kind, from k8s-openapi's `schemars` implementations, with
//! the list and map merge strategies k8s-openapi encodes (`DeepMerge`)
//! written back as `x-kubernetes-*` extensions.
//!
//! ```text
//! cargo run -p exitplan-apiserver --features openapi-gen --bin exitplan-openapi-gen \
//!     > crates/exitplan-api/src/openapi/definitions.json
//! ```
//!
//! The feature compiles k8s-openapi's schemas (minutes of build time), so
//! the server itself embeds the generated file instead.

mod probe;

use std::io::Write as _;

use k8s_openapi::api::{
    apps, autoscaling, batch, coordination, core, discovery, events, lifecycle, networking, policy,
    rbac, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use probe::{Root, merge_as};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    // Each served kind: its schema, and its definition name with a typed
    // merge (the probe reads list/map strategies through it).
    let mut roots: Vec<Root> = Vec::new();
    macro_rules! kinds {
        ($($name:literal => $t:ty),* $(,)?) => {
            $(
                generator.subschema_for::<$t>();
                roots.push(($name, merge_as::<$t>));
            )*
        };
    }
    kinds!(
        "io.k8s.api.core.v1.Pod" => core::v1::Pod,
        "io.k8s.api.core.v1.Node" => core::v1::Node,
        "io.k8s.api.core.v1.Namespace" => core::v1::Namespace,
        "io.k8s.api.core.v1.Event" => core::v1::Event,
        "io.k8s.api.core.v1.ConfigMap" => core::v1::ConfigMap,
        "io.k8s.api.core.v1.Secret" => core::v1::Secret,
        "io.k8s.api.core.v1.Service" => core::v1::Service,
        "io.k8s.api.core.v1.ServiceAccount" => core::v1::ServiceAccount,
        "io.k8s.api.core.v1.Endpoints" => core::v1::Endpoints,
        "io.k8s.api.core.v1.PersistentVolumeClaim" => core::v1::PersistentVolumeClaim,
        "io.k8s.api.core.v1.PersistentVolume" => core::v1::PersistentVolume,
        "io.k8s.api.core.v1.ResourceQuota" => core::v1::ResourceQuota,
        "io.k8s.api.core.v1.LimitRange" => core::v1::LimitRange,
        "io.k8s.api.core.v1.PodTemplate" => core::v1::PodTemplate,
        "io.k8s.api.core.v1.ReplicationController" => core::v1::ReplicationController,
        "io.k8s.api.apps.v1.Deployment" => apps::v1::Deployment,
        "io.k8s.api.apps.v1.ReplicaSet" => apps::v1::ReplicaSet,
        "io.k8s.api.apps.v1.StatefulSet" => apps::v1::StatefulSet,
        "io.k8s.api.apps.v1.DaemonSet" => apps::v1::DaemonSet,
        "io.k8s.api.apps.v1.ControllerRevision" => apps::v1::ControllerRevision,
        "io.k8s.api.autoscaling.v1.Scale" => autoscaling::v1::Scale,
        "io.k8s.api.discovery.v1.EndpointSlice" => discovery::v1::EndpointSlice,
        "io.k8s.api.networking.v1.Ingress" => networking::v1::Ingress,
        "io.k8s.api.networking.v1.IngressClass" => networking::v1::IngressClass,
        "io.k8s.api.networking.v1.NetworkPolicy" => networking::v1::NetworkPolicy,
        "io.k8s.api.batch.v1.CronJob" => batch::v1::CronJob,
        "io.k8s.api.scheduling.v1.PriorityClass" => scheduling::v1::PriorityClass,
        "io.k8s.api.rbac.v1.Role" => rbac::v1::Role,
        "io.k8s.api.rbac.v1.ClusterRole" => rbac::v1::ClusterRole,
        "io.k8s.api.rbac.v1.RoleBinding" => rbac::v1::RoleBinding,
        "io.k8s.api.rbac.v1.ClusterRoleBinding" => rbac::v1::ClusterRoleBinding,
        "io.k8s.api.storage.v1.StorageClass" => storage::v1::StorageClass,
        "io.k8s.api.events.v1.Event" => events::v1::Event,
        "io.k8s.api.batch.v1.Job" => batch::v1::Job,
        "io.k8s.api.policy.v1.PodDisruptionBudget" => policy::v1::PodDisruptionBudget,
        "io.k8s.api.coordination.v1.Lease" => coordination::v1::Lease,
        "io.k8s.api.lifecycle.v1alpha1.EvictionRequest" => lifecycle::v1alpha1::EvictionRequest,
        "io.k8s.api.lifecycle.v1alpha1.Eviction" => lifecycle::v1alpha1::Eviction,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition" => apiextensions::CustomResourceDefinition,
    );
    macro_rules! schemas {
        ($($t:ty),* $(,)?) => { $( generator.subschema_for::<$t>(); )* };
    }
    schemas!(
        core::v1::Binding,
        policy::v1::Eviction,
        meta::ListMeta,
        meta::DeleteOptions,
        meta::Status,
        meta::Patch,
        meta::WatchEvent<()>,
    );
    let mut definitions: serde_json::Map<String, Value> = generator.take_definitions(true);

    let report = probe::annotate(&mut definitions, &roots);
    for line in report {
        eprintln!("{line}");
    }

    let doc = json!({
        "source": "k8s-openapi 0.29 (feature v1_37) schemars schemas; list/map strategies from its DeepMerge impls",
        "definitions": definitions,
    });
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &doc)?;
    writeln!(out)?;
    Ok(())
}
