//! The simulated scheduler: a queue of pending pods, each bound to the node
//! [`exitplan_control::simulation::scheduler::choose_node`] picks (Ready, not
//! cordoned, matching `nodeSelector`, tolerated taints, room under
//! `allocatable.pods`; least loaded, then first by name) with a `v1 Binding`
//! posted to `pods/<name>/binding`, so the API server sets `spec.nodeName`
//! and `PodScheduled=True`.
//!
//! A pod no node fits gets `PodScheduled=False` (reason `Unschedulable`) and
//! waits: every change that may make room — a node added, becoming Ready,
//! uncordoned, relabelled, untainted or given more pods; a bound pod
//! finishing or going away — queues every pending pod again.
//!
//! Pods bound but not yet seen bound in the cache are *assumed* on their node
//! (as upstream's scheduler cache does), so a burst of pods spreads evenly.
//!
//! The load per node is kept incrementally ([`NodeUsage`], fed by the pod
//! informer's changes and the scheduler's own bindings), so a decision costs
//! O(nodes), not O(pods), and a pod finishing re-queues only the pods found
//! unschedulable, not every pending one: placing 10,000 pods is linear.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Binding, Node, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use exitplan_api::core::podutil::is_terminal;
use exitplan_api::time::{format_rfc3339, truncate_to_seconds};
use exitplan_control::simulation::scheduler::{NodeUsage, choose_node_by, needs_scheduling};

use super::{index_pods_by_node, is_status, node_name};
use crate::context::{Context, Task};
use crate::informer::{Change, ObjectKey};
use crate::queue::Queue;

/// The reason of `PodScheduled=False` for a pod no node fits (upstream's).
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";

/// The scheduler's state, under one lock. Updated *after* the cache (the
/// informer stores, then calls handlers); [`NodeUsage::assume`] reads the
/// cache under the same lock, so a binding seen by the watch before its call
/// returns is never counted twice; a decision finding no node records the pod
/// unschedulable under the same lock as the usage it read, so room freed
/// after that decision always re-queues it.
#[derive(Default)]
struct State {
    /// The non-terminal pods per node, assumed bindings included.
    usage: NodeUsage<ObjectKey>,
    /// Pending pods no node fitted when last decided.
    unschedulable: HashSet<ObjectKey>,
}

type Usage = Arc<Mutex<State>>;

#[derive(Clone)]
struct Scheduler {
    ctx: Context,
    queue: Queue<ObjectKey>,
    usage: Usage,
}

/// Queues every pod found unschedulable.
fn retry_unschedulable(usage: &Usage, queue: &Queue<ObjectKey>) {
    let keys: Vec<ObjectKey> = usage
        .lock()
        .map(|s| s.unschedulable.iter().cloned().collect())
        .unwrap_or_default();
    for key in keys {
        queue.add(key);
    }
}

fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Whether a node change can make a pending pod fit.
fn node_changed_for_scheduling(old: &Node, new: &Node) -> bool {
    old.spec != new.spec
        || old.metadata.labels != new.metadata.labels
        || is_ready(old) != is_ready(new)
        || old.status.as_ref().and_then(|s| s.allocatable.as_ref())
            != new.status.as_ref().and_then(|s| s.allocatable.as_ref())
}

/// Registers the scheduler's handlers and returns its worker.
pub fn register(ctx: &Context) -> Vec<Task> {
    index_pods_by_node(ctx);
    let scheduler = Scheduler {
        ctx: ctx.clone(),
        queue: Queue::new("scheduler"),
        usage: Arc::default(),
    };
    {
        let queue = scheduler.queue.clone();
        let usage = scheduler.usage.clone();
        ctx.informers.pods.on_change(move |change| {
            if let Ok(mut s) = usage.lock() {
                match change {
                    Change::Added(pod) | Change::Updated { new: pod, .. } => {
                        let key = ObjectKey::of(&**pod);
                        s.usage.observe(&key, pod);
                        if !needs_scheduling(pod) {
                            s.unschedulable.remove(&key);
                        }
                    }
                    Change::Deleted(pod) => {
                        let key = ObjectKey::of(&**pod);
                        s.usage.forget(&key, pod);
                        s.unschedulable.remove(&key);
                    }
                }
            }
            match change {
                Change::Added(pod) => {
                    if needs_scheduling(pod) {
                        queue.add(ObjectKey::of(&**pod));
                    }
                }
                Change::Updated { old, new } => {
                    if needs_scheduling(new) {
                        queue.add(ObjectKey::of(&**new));
                    }
                    if !node_name(new).is_empty() && !is_terminal(old) && is_terminal(new) {
                        retry_unschedulable(&usage, &queue);
                    }
                }
                Change::Deleted(pod) => {
                    if !node_name(pod).is_empty() && !is_terminal(pod) {
                        retry_unschedulable(&usage, &queue);
                    }
                }
            }
        });
    }
    {
        let queue = scheduler.queue.clone();
        let usage = scheduler.usage.clone();
        ctx.informers.nodes.on_change(move |change| match change {
            Change::Added(_) => retry_unschedulable(&usage, &queue),
            Change::Updated { old, new } => {
                if node_changed_for_scheduling(old, new) {
                    retry_unschedulable(&usage, &queue);
                }
            }
            Change::Deleted(_) => {}
        });
    }
    vec![Box::pin(scheduler.run())]
}

impl Scheduler {
    async fn run(self) {
        self.queue
            .run_worker("scheduling", |key| {
                let this = &self;
                async move { this.sync(&key).await }
            })
            .await;
    }

    fn is_assumed(&self, key: &ObjectKey, pod: &Pod) -> bool {
        self.usage.lock().is_ok_and(|s| {
            s.usage
                .is_assumed(key, pod.metadata.uid.as_deref().unwrap_or_default())
        })
    }

    async fn sync(&self, key: &ObjectKey) -> Result<(), kube::Error> {
        let Some(pod) = self.ctx.informers.pods.get(key) else {
            return Ok(());
        };
        if !needs_scheduling(&pod) || self.is_assumed(key, &pod) {
            return Ok(());
        }
        let nodes: Vec<Arc<Node>> = self.ctx.informers.nodes.list();
        let chosen = match self.usage.lock() {
            Ok(mut s) => {
                let chosen = choose_node_by(&pod, &nodes, |n| s.usage.load(n)).map(str::to_owned);
                if chosen.is_none() {
                    s.unschedulable.insert(key.clone());
                }
                chosen
            }
            Err(_) => None,
        };
        let ns = key.namespace.as_deref().unwrap_or("default");
        let api: Api<Pod> = Api::namespaced(self.ctx.client.clone(), ns);
        match chosen {
            Some(node) => {
                let binding = Binding {
                    metadata: ObjectMeta {
                        name: Some(key.name.clone()),
                        namespace: Some(ns.to_owned()),
                        uid: pod.metadata.uid.clone(),
                        ..Default::default()
                    },
                    target: ObjectReference {
                        api_version: Some("v1".to_owned()),
                        kind: Some("Node".to_owned()),
                        name: Some(node.clone()),
                        ..Default::default()
                    },
                };
                match api
                    .create_subresource::<_, serde_json::Value>(
                        "binding",
                        &key.name,
                        &PostParams::default(),
                        &binding,
                    )
                    .await
                {
                    Ok(_) => {
                        tracing::info!(pod = %key, node, "scheduled");
                        if let Ok(mut s) = self.usage.lock() {
                            let cached = self.ctx.informers.pods.get(key);
                            let uid = pod.metadata.uid.as_deref().unwrap_or_default();
                            s.usage.assume(key, uid, &node, cached.as_deref());
                            s.unschedulable.remove(key);
                        }
                        Ok(())
                    }
                    // Bound by someone else, being deleted or gone: the cache
                    // will tell.
                    Err(e) if is_status(&e, 409) || is_status(&e, 404) => {
                        tracing::debug!(pod = %key, error = %e, "not bound");
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            None => self.mark_unschedulable(&api, key, &pod, nodes.len()).await,
        }
    }

    /// Sets `PodScheduled=False` (`Unschedulable`) unless it says so already.
    async fn mark_unschedulable(
        &self,
        api: &Api<Pod>,
        key: &ObjectKey,
        pod: &Pod,
        nodes: usize,
    ) -> Result<(), kube::Error> {
        let message = format!("0/{nodes} nodes are available.");
        let current = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled"));
        if current.is_some_and(|c| {
            c.status == "False"
                && c.reason.as_deref() == Some(REASON_UNSCHEDULABLE)
                && c.message.as_deref() == Some(message.as_str())
        }) {
            return Ok(());
        }
        let since = current
            .filter(|c| c.status == "False")
            .and_then(|c| c.last_transition_time.clone())
            .map_or_else(
                || format_rfc3339(truncate_to_seconds(self.ctx.clock.now())),
                |t| format_rfc3339(t.0),
            );
        tracing::info!(pod = %key, %message, "unschedulable");
        let patch = json!({
            "status": {"conditions": [{
                "type": "PodScheduled",
                "status": "False",
                "reason": REASON_UNSCHEDULABLE,
                "message": message,
                "lastProbeTime": null,
                "lastTransitionTime": since,
            }]}
        });
        match api
            .patch_status(&key.name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_status(&e, 404) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
