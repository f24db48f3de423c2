//! The simulated cluster: a scheduler and simulated nodes (kubelets) driven
//! by the pure decisions of `exitplan_control::simulation`.
//!
//! * [`scheduler`] binds pending pods to nodes through `pods/binding`;
//! * [`nodes`] registers a Node, keeps its status fresh and runs the pods
//!   bound to it (the kubelet), scripted by `sim.exitplan.io/*` annotations.
//!
//! `docs/simulated-cluster.md` describes the behaviour for users.

use k8s_openapi::api::core::v1::Pod;

use crate::context::Context;

pub mod nodes;
pub mod scheduler;

/// The pod index by `spec.nodeName` (`""` for unbound pods), shared by the
/// scheduler and every simulated node.
pub(crate) const PODS_BY_NODE: &str = "cluster/spec.nodeName";

/// The node a pod is bound to (`""` when none).
pub(crate) fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

/// Registers [`PODS_BY_NODE`] on the shared pod informer, once.
pub(crate) fn index_pods_by_node(ctx: &Context) {
    if !ctx.informers.pods.has_index(PODS_BY_NODE) {
        ctx.informers
            .pods
            .add_index(PODS_BY_NODE, |p: &Pod| vec![node_name(p).to_owned()]);
    }
}

/// Whether `e` is an API error with HTTP status `code`.
pub(crate) fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}
