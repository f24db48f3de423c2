//! Quantities at decode time. Upstream's `resource.Quantity` refuses a
//! malformed value while the body is decoded (`Quantity.UnmarshalJSON` calls
//! `ParseQuantity`), so kube-apiserver answers 400 `Pod in version "v1" cannot
//! be handled as a Pod: quantities must match the regular expression
//! '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'` before any validation
//! runs. k8s-openapi keeps a quantity as its string, so the admission layer
//! asks [`first_malformed`] after decoding.
//!
//! [`Quantities`] lists every quantity of a served kind: container, init
//! and ephemeral container resources, `resourceFieldRef.divisor` (env and
//! downward API volumes), pod `overhead`, pod-level `resources`,
//! `emptyDir.sizeLimit`, generic ephemeral volume claim resources, the
//! container statuses' `allocatedResources` and `resources`, the pod
//! status' `allocatedResources` and `resources`, and a Node's `capacity`
//! and `allocatable`.
//!
//! Upstream's decoder stops at the first bad quantity in the order of the
//! request body; exitplan reports the first in field order (the same one
//! whenever the body has a single bad quantity).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, EnvVar, EphemeralContainer, Node, Pod, PodSpec, PodStatus,
    ResourceRequirements, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use crate::core::validation::quantity::Quantity;

/// A kind whose quantities are checked at decode.
pub trait Quantities {
    /// Calls `f` with every quantity of the object, in field order.
    fn visit_quantities<'a>(&'a self, _f: &mut dyn FnMut(&'a WireQuantity)) {}
}

/// The parse error of the object's first malformed quantity, if any
/// (`ErrFormatWrong`, `ErrSuffix` or `ErrNumeric`). Surrounding whitespace
/// is allowed, as `UnmarshalJSON` trims it.
pub fn first_malformed<T: Quantities + ?Sized>(obj: &T) -> Option<&'static str> {
    let mut found = None;
    obj.visit_quantities(&mut |q| {
        if found.is_none() {
            found = Quantity::parse(q.0.trim()).err();
        }
    });
    found
}

type List = BTreeMap<String, WireQuantity>;

fn list<'a>(l: Option<&'a List>, f: &mut dyn FnMut(&'a WireQuantity)) {
    for q in l.into_iter().flat_map(BTreeMap::values) {
        f(q);
    }
}

fn requirements<'a>(r: Option<&'a ResourceRequirements>, f: &mut dyn FnMut(&'a WireQuantity)) {
    if let Some(r) = r {
        list(r.limits.as_ref(), f);
        list(r.requests.as_ref(), f);
    }
}

fn env<'a>(vars: Option<&'a Vec<EnvVar>>, f: &mut dyn FnMut(&'a WireQuantity)) {
    for v in vars.into_iter().flatten() {
        if let Some(d) = v
            .value_from
            .as_ref()
            .and_then(|s| s.resource_field_ref.as_ref())
            .and_then(|r| r.divisor.as_ref())
        {
            f(d);
        }
    }
}

fn container<'a>(c: &'a Container, f: &mut dyn FnMut(&'a WireQuantity)) {
    env(c.env.as_ref(), f);
    requirements(c.resources.as_ref(), f);
}

fn ephemeral<'a>(c: &'a EphemeralContainer, f: &mut dyn FnMut(&'a WireQuantity)) {
    env(c.env.as_ref(), f);
    requirements(c.resources.as_ref(), f);
}

fn volume<'a>(v: &'a Volume, f: &mut dyn FnMut(&'a WireQuantity)) {
    if let Some(q) = v.empty_dir.as_ref().and_then(|e| e.size_limit.as_ref()) {
        f(q);
    }
    let downward = v.downward_api.iter().flat_map(|d| d.items.iter().flatten());
    let projected = v
        .projected
        .iter()
        .flat_map(|p| p.sources.iter().flatten())
        .filter_map(|s| s.downward_api.as_ref())
        .flat_map(|d| d.items.iter().flatten());
    for item in downward.chain(projected) {
        if let Some(d) = item
            .resource_field_ref
            .as_ref()
            .and_then(|r| r.divisor.as_ref())
        {
            f(d);
        }
    }
    if let Some(r) = v
        .ephemeral
        .as_ref()
        .and_then(|e| e.volume_claim_template.as_ref())
        .and_then(|t| t.spec.resources.as_ref())
    {
        list(r.limits.as_ref(), f);
        list(r.requests.as_ref(), f);
    }
}

impl Quantities for PodSpec {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        for v in self.volumes.iter().flatten() {
            volume(v, f);
        }
        for c in self.init_containers.iter().flatten() {
            container(c, f);
        }
        for c in &self.containers {
            container(c, f);
        }
        for c in self.ephemeral_containers.iter().flatten() {
            ephemeral(c, f);
        }
        list(self.overhead.as_ref(), f);
        requirements(self.resources.as_ref(), f);
    }
}

fn statuses<'a>(s: Option<&'a Vec<ContainerStatus>>, f: &mut dyn FnMut(&'a WireQuantity)) {
    for cs in s.into_iter().flatten() {
        list(cs.allocated_resources.as_ref(), f);
        requirements(cs.resources.as_ref(), f);
    }
}

impl Quantities for PodStatus {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        statuses(self.init_container_statuses.as_ref(), f);
        statuses(self.container_statuses.as_ref(), f);
        statuses(self.ephemeral_container_statuses.as_ref(), f);
        list(self.allocated_resources.as_ref(), f);
        requirements(self.resources.as_ref(), f);
    }
}

impl Quantities for Pod {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        if let Some(s) = &self.spec {
            s.visit_quantities(f);
        }
        if let Some(s) = &self.status {
            s.visit_quantities(f);
        }
    }
}

impl Quantities for k8s_openapi::api::batch::v1::Job {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        if let Some(s) = self.spec.as_ref().and_then(|s| s.template.spec.as_ref()) {
            s.visit_quantities(f);
        }
    }
}

impl Quantities for Node {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        if let Some(s) = &self.status {
            list(s.allocatable.as_ref(), f);
            list(s.capacity.as_ref(), f);
        }
    }
}

impl Quantities for k8s_openapi::api::core::v1::Namespace {}
impl Quantities for k8s_openapi::api::core::v1::Event {}
impl Quantities for k8s_openapi::api::core::v1::Binding {}
impl Quantities for k8s_openapi::api::events::v1::Event {}
impl Quantities for k8s_openapi::api::policy::v1::PodDisruptionBudget {}
impl Quantities for k8s_openapi::api::coordination::v1::Lease {}
impl Quantities for k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest {}
impl Quantities for k8s_openapi::api::lifecycle::v1alpha1::Eviction {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::validation::quantity::{ERR_FORMAT_WRONG, ERR_SUFFIX};

    fn pod(spec: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "p"}, "spec": spec}))
            .expect("pod")
    }

    #[test]
    fn finds_the_first_malformed_quantity_anywhere_in_a_pod() {
        let ctr = |res: serde_json::Value| serde_json::json!({"containers": [{"name": "c", "image": "i", "resources": res}]});
        assert_eq!(
            first_malformed(&pod(ctr(serde_json::json!({"limits": {"cpu": "1"}})))),
            None
        );
        assert_eq!(
            first_malformed(&pod(ctr(serde_json::json!({"limits": {"cpu": " 1 "}})))),
            None,
            "UnmarshalJSON trims whitespace"
        );
        assert_eq!(
            first_malformed(&pod(ctr(serde_json::json!({"limits": {"cpu": "abc"}})))),
            Some(ERR_FORMAT_WRONG)
        );
        assert_eq!(
            first_malformed(&pod(ctr(
                serde_json::json!({"requests": {"memory": "1kk"}})
            ))),
            Some(ERR_SUFFIX)
        );
        for spec in [
            serde_json::json!({"containers": [], "overhead": {"cpu": "x"}}),
            serde_json::json!({"containers": [], "resources": {"requests": {"cpu": "x"}}}),
            serde_json::json!({"containers": [], "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "x"}}]}),
            serde_json::json!({"containers": [], "initContainers": [{"name": "i", "resources": {"limits": {"cpu": ""}}}]}),
            serde_json::json!({"containers": [{"name": "c", "env": [{"name": "E", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "x"}}}]}]}),
            serde_json::json!({"containers": [], "volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "x"}}}}}}]}),
        ] {
            assert_eq!(
                first_malformed(&pod(spec.clone())),
                Some(ERR_FORMAT_WRONG),
                "{spec}"
            );
        }
    }
}

/// The pod template's quantities of a workload.
fn template<'a>(
    t: Option<&'a k8s_openapi::api::core::v1::PodTemplateSpec>,
    f: &mut dyn FnMut(&'a WireQuantity),
) {
    if let Some(s) = t.and_then(|t| t.spec.as_ref()) {
        s.visit_quantities(f);
    }
}

/// Kinds whose quantities are those of one pod template.
macro_rules! template_quantities {
    ($($ty:ty => |$o:ident| $t:expr),* $(,)?) => {
        $(
            impl Quantities for $ty {
                fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
                    let $o = self;
                    template($t, f);
                }
            }
        )*
    };
}

template_quantities! {
    k8s_openapi::api::apps::v1::Deployment => |o| Some(&o.spec.template),
    k8s_openapi::api::apps::v1::ReplicaSet => |o| o.spec.template.as_ref(),
    k8s_openapi::api::apps::v1::DaemonSet => |o| Some(&o.spec.template),
    k8s_openapi::api::core::v1::ReplicationController =>
        |o| o.spec.as_ref().and_then(|s| s.template.as_ref()),
    k8s_openapi::api::core::v1::PodTemplate => |o| o.template.as_ref(),
    k8s_openapi::api::batch::v1::CronJob =>
        |o| o.spec.job_template.spec.as_ref().map(|s| &s.template),
}

impl Quantities for k8s_openapi::api::apps::v1::StatefulSet {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        let spec = &self.spec;
        template(Some(&spec.template), f);
        for claim in spec.volume_claim_templates.iter().flatten() {
            claim.visit_quantities(f);
        }
    }
}

impl Quantities
    for k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition
{
}
impl Quantities for k8s_openapi::api::core::v1::ConfigMap {}
impl Quantities for k8s_openapi::api::core::v1::Secret {}
impl Quantities for k8s_openapi::api::core::v1::Service {}
impl Quantities for k8s_openapi::api::core::v1::ServiceAccount {}
impl Quantities for k8s_openapi::api::core::v1::Endpoints {}
impl Quantities for k8s_openapi::api::discovery::v1::EndpointSlice {}
impl Quantities for k8s_openapi::api::apps::v1::ControllerRevision {}
