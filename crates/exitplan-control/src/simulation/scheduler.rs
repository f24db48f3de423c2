//! A simulated scheduler: binds a pending pod to a node that is Ready,
//! schedulable (not cordoned), matches the pod's `nodeSelector`, tolerates
//! the node's `NoSchedule`/`NoExecute` taints, and has room (fewer
//! non-terminal pods than its `allocatable.pods`). Among those it picks the
//! least loaded, then the first by name, so runs are deterministic.

use k8s_openapi::api::core::v1::{Node, Pod, Taint, Toleration};

use exitplan_api::core::podutil::is_terminal;

/// Pods a node takes when it does not say (`allocatable.pods` default).
pub const DEFAULT_MAX_PODS: usize = 110;

/// Whether the pod still needs a node (no `nodeName`, not deleting, not terminal).
pub fn needs_scheduling(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .is_some_and(|s| s.node_name.as_deref().unwrap_or_default().is_empty())
        && pod.metadata.deletion_timestamp.is_none()
        && !is_terminal(pod)
}

fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn max_pods(node: &Node) -> usize {
    node.status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get("pods"))
        .and_then(|q| q.0.parse::<usize>().ok())
        .unwrap_or(DEFAULT_MAX_PODS)
}

fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| {
        let key_ok = t
            .key
            .as_deref()
            .is_none_or(|k| k.is_empty() || k == taint.key);
        let effect_ok = t
            .effect
            .as_deref()
            .is_none_or(|e| e.is_empty() || e == taint.effect);
        let value_ok = match t.operator.as_deref() {
            Some("Exists") => true,
            _ => {
                t.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default()
            }
        };
        key_ok && effect_ok && value_ok
    })
}

fn fits(pod: &Pod, node: &Node) -> bool {
    let spec = pod.spec.as_ref();
    let node_labels = node.metadata.labels.clone().unwrap_or_default();
    let selector_ok = spec
        .and_then(|s| s.node_selector.as_ref())
        .is_none_or(|sel| sel.iter().all(|(k, v)| node_labels.get(k) == Some(v)));
    let tolerations = spec.and_then(|s| s.tolerations.clone()).unwrap_or_default();
    let taints_ok = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_none_or(|taints| {
            taints
                .iter()
                .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
                .all(|t| tolerates(&tolerations, t))
        });
    let unschedulable = node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false);
    is_ready(node) && !unschedulable && selector_ok && taints_ok
}

/// The node to bind `pod` to, given every node and every pod (for load).
pub fn choose_node<'a>(pod: &Pod, nodes: &'a [Node], pods: &[Pod]) -> Option<&'a str> {
    let load = |name: &str| {
        pods.iter()
            .filter(|p| !is_terminal(p))
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(name))
            .count()
    };
    nodes
        .iter()
        .filter(|n| fits(pod, n))
        .filter_map(|n| {
            let name = n.metadata.name.as_deref()?;
            let l = load(name);
            (l < max_pods(n)).then_some((l, name))
        })
        .min()
        .map(|(_, name)| name)
}
