//! A simulated scheduler: binds a pending pod to a node that is Ready,
//! schedulable (not cordoned), matches the pod's `nodeSelector`, tolerates
//! the node's `NoSchedule`/`NoExecute` taints, and has room (fewer
//! non-terminal pods than its `allocatable.pods`). Among those it picks the
//! least loaded, then the first by name, so runs are deterministic.
//!
//! The load is kept incrementally ([`NodeUsage`]: fed every pod change and
//! every binding made, it answers a node's load in O(1)), so one decision
//! ([`choose_node_by`]) costs O(nodes), whatever the number of pods.
//! [`choose_node`] takes every pod instead (O(pods + nodes)), for callers
//! holding a plain list.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

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
    let node_labels = node.metadata.labels.as_ref();
    let selector_ok = spec
        .and_then(|s| s.node_selector.as_ref())
        .is_none_or(|sel| {
            sel.iter()
                .all(|(k, v)| node_labels.and_then(|l| l.get(k)) == Some(v))
        });
    let tolerations = spec
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    let taints_ok = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_none_or(|taints| {
            taints
                .iter()
                .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
                .all(|t| tolerates(tolerations, t))
        });
    let unschedulable = node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false);
    is_ready(node) && !unschedulable && selector_ok && taints_ok
}

/// The node to bind `pod` to, given every node and every pod (for load):
/// counts the pods per node once, then [`choose_node_by`].
pub fn choose_node<'a>(pod: &Pod, nodes: &'a [Node], pods: &[Pod]) -> Option<&'a str> {
    let mut load: HashMap<&str, usize> = HashMap::new();
    for p in pods.iter().filter(|p| !is_terminal(p)) {
        if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
            *load.entry(n).or_default() += 1;
        }
    }
    choose_node_by(pod, nodes, |n| load.get(n).copied().unwrap_or(0))
}

/// The node to bind `pod` to among `nodes`, `load(name)` giving the
/// non-terminal pods on a node (usually [`NodeUsage::load`]): O(nodes).
pub fn choose_node_by<'a, N>(
    pod: &Pod,
    nodes: impl IntoIterator<Item = &'a N>,
    load: impl Fn(&str) -> usize,
) -> Option<&'a str>
where
    N: Borrow<Node> + 'a,
{
    nodes
        .into_iter()
        .map(Borrow::borrow)
        .filter(|n| fits(pod, n))
        .filter_map(|n| {
            let name = n.metadata.name.as_deref()?;
            let l = load(name);
            (l < max_pods(n)).then_some((l, name))
        })
        .min()
        .map(|(_, name)| name)
}

/// What one pod adds to a node's load.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Counted {
    uid: String,
    node: String,
    /// Bound by the scheduler, not yet seen bound.
    assumed: bool,
}

/// The non-terminal pods per node, kept incrementally from pod changes
/// (keyed by `K`, the pod's namespace/name) and the scheduler's own
/// bindings, so a node's load is an O(1) lookup.
///
/// A pod counts on its node while it is bound (`spec.nodeName`) and not
/// terminal (deleting pods still count, as they still run), or while it is
/// *assumed* there: bound by this scheduler ([`NodeUsage::assume`]) but not
/// yet seen bound (upstream's scheduler cache), so a burst spreads evenly.
#[derive(Clone, Debug)]
pub struct NodeUsage<K> {
    pods: HashMap<K, Counted>,
    nodes: HashMap<String, usize>,
}

impl<K> Default for NodeUsage<K> {
    fn default() -> Self {
        NodeUsage {
            pods: HashMap::new(),
            nodes: HashMap::new(),
        }
    }
}

fn uid_of(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or_default()
}

fn bound_node(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

impl<K: Hash + Eq + Clone> NodeUsage<K> {
    /// Non-terminal pods bound or assumed on `node`.
    pub fn load(&self, node: &str) -> usize {
        self.nodes.get(node).copied().unwrap_or(0)
    }

    /// Whether `key` is assumed on a node (bound by the scheduler, not yet
    /// seen bound) with this `uid`.
    pub fn is_assumed(&self, key: &K, uid: &str) -> bool {
        self.pods
            .get(key)
            .is_some_and(|c| c.assumed && c.uid == uid)
    }

    fn set(&mut self, key: &K, counted: Option<Counted>) {
        if let Some(old) = self.pods.remove(key) {
            self.decrement(&old.node);
        }
        if let Some(c) = counted {
            *self.nodes.entry(c.node.clone()).or_default() += 1;
            self.pods.insert(key.clone(), c);
        }
    }

    fn decrement(&mut self, node: &str) {
        if let Some(n) = self.nodes.get_mut(node) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.nodes.remove(node);
            }
        }
    }

    /// The pod at `key` is now `pod` (added or updated in the cache).
    pub fn observe(&mut self, key: &K, pod: &Pod) {
        let uid = uid_of(pod);
        let node = bound_node(pod);
        let counted = if is_terminal(pod) {
            None
        } else if !node.is_empty() {
            Some(Counted {
                uid: uid.to_owned(),
                node: node.to_owned(),
                assumed: false,
            })
        } else {
            // Unbound: still assumed if this scheduler bound this very pod.
            self.pods
                .get(key)
                .filter(|c| c.assumed && c.uid == uid)
                .cloned()
        };
        self.set(key, counted);
    }

    /// The pod `pod` at `key` was deleted.
    pub fn forget(&mut self, key: &K, pod: &Pod) {
        if self.pods.get(key).is_some_and(|c| c.uid == uid_of(pod)) {
            self.set(key, None);
        }
    }

    /// This scheduler bound the pod at `key` with UID `uid` to `node`;
    /// `cached` is the pod as the cache shows it now. Counted on `node`
    /// unless the cache already shows it bound (then [`NodeUsage::observe`]
    /// counted it, or will), terminal, gone or replaced by another UID.
    /// Returns whether it was assumed.
    pub fn assume(&mut self, key: &K, uid: &str, node: &str, cached: Option<&Pod>) -> bool {
        let Some(pod) = cached.filter(|p| uid_of(p) == uid) else {
            return false;
        };
        if is_terminal(pod) || !bound_node(pod).is_empty() {
            return false;
        }
        self.set(
            key,
            Some(Counted {
                uid: uid.to_owned(),
                node: node.to_owned(),
                assumed: true,
            }),
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodSpec, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(uid: &str, node: Option<&str>, phase: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                uid: Some(uid.to_owned()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: node.map(str::to_owned),
                ..Default::default()
            }),
            status: Some(PodStatus {
                phase: Some(phase.to_owned()),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn usage_follows_bindings_phases_and_deletions() {
        let mut u: NodeUsage<&str> = NodeUsage::default();
        u.observe(&"a", &pod("ua", Some("n1"), "Running"));
        u.observe(&"b", &pod("ub", Some("n1"), "Pending"));
        u.observe(&"c", &pod("uc", None, "Pending"));
        assert_eq!((u.load("n1"), u.load("n2")), (2, 0));
        // Updates of a bound pod do not count it twice.
        u.observe(&"a", &pod("ua", Some("n1"), "Running"));
        assert_eq!(u.load("n1"), 2);
        // A terminal pod no longer counts; deleting it changes nothing more.
        u.observe(&"a", &pod("ua", Some("n1"), "Succeeded"));
        assert_eq!(u.load("n1"), 1);
        u.forget(&"a", &pod("ua", Some("n1"), "Succeeded"));
        assert_eq!(u.load("n1"), 1);
        // A bound pod deleted while running stops counting.
        u.forget(&"b", &pod("ub", Some("n1"), "Running"));
        assert_eq!(u.load("n1"), 0);
        assert!(u.nodes.is_empty() && u.pods.is_empty());
    }

    #[test]
    fn assumed_pods_count_until_seen_bound_and_never_twice() {
        let mut u: NodeUsage<&str> = NodeUsage::default();
        let unbound = pod("uc", None, "Pending");
        u.observe(&"c", &unbound);
        assert!(u.assume(&"c", "uc", "n2", Some(&unbound)));
        assert!(u.is_assumed(&"c", "uc"));
        assert_eq!(u.load("n2"), 1);
        // Another update still unbound (a status write): stays assumed.
        u.observe(&"c", &unbound);
        assert_eq!(u.load("n2"), 1);
        // Seen bound: counted once, no longer assumed.
        u.observe(&"c", &pod("uc", Some("n2"), "Pending"));
        assert_eq!(u.load("n2"), 1);
        assert!(!u.is_assumed(&"c", "uc"));
        // The cache already shows it bound when the binding call returns.
        let bound = pod("ud", Some("n2"), "Pending");
        u.observe(&"d", &bound);
        assert!(!u.assume(&"d", "ud", "n2", Some(&bound)));
        assert_eq!(u.load("n2"), 2);
        // Gone, replaced by another UID, or terminal: not assumed.
        assert!(!u.assume(&"e", "ue", "n1", None));
        assert!(!u.assume(&"e", "ue", "n1", Some(&pod("other", None, "Pending"))));
        assert!(!u.assume(&"e", "ue", "n1", Some(&pod("ue", None, "Failed"))));
        assert_eq!(u.load("n1"), 0);
        // An assumed pod recreated under the same name (new UID) drops out.
        let f = pod("uf", None, "Pending");
        assert!(u.assume(&"f", "uf", "n1", Some(&f)));
        u.observe(&"f", &pod("uf2", None, "Pending"));
        assert_eq!(u.load("n1"), 0);
        // An assumed pod deleted drops out.
        let g = pod("ug", None, "Pending");
        assert!(u.assume(&"g", "ug", "n1", Some(&g)));
        u.forget(&"g", &g);
        assert_eq!(u.load("n1"), 0);
    }
}
