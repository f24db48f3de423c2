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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Binding, Node, ObjectReference, Pod, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use exitplan_api::core::podutil::is_terminal;
use exitplan_api::time::{format_rfc3339, truncate_to_seconds};
use exitplan_control::simulation::scheduler::{choose_node, needs_scheduling};

use super::{PODS_BY_NODE, index_pods_by_node, is_status, node_name};
use crate::context::{Context, Task};
use crate::informer::{Change, Informer, ObjectKey};
use crate::queue::Queue;

/// The reason of `PodScheduled=False` for a pod no node fits (upstream's).
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";

/// Pods bound by this scheduler that the cache still shows unbound: key →
/// (UID, node).
type Assumed = Arc<Mutex<HashMap<ObjectKey, (String, String)>>>;

#[derive(Clone)]
struct Scheduler {
    ctx: Context,
    queue: Queue<ObjectKey>,
    assumed: Assumed,
}

/// Queues every pod that still needs a node.
fn retry_pending(pods: &Informer<Pod>, queue: &Queue<ObjectKey>) {
    for pod in pods.by_index(PODS_BY_NODE, "") {
        if needs_scheduling(&pod) {
            queue.add(ObjectKey::of(&*pod));
        }
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
        assumed: Arc::default(),
    };
    {
        let queue = scheduler.queue.clone();
        let pods = ctx.informers.pods.clone();
        let assumed = scheduler.assumed.clone();
        let forget = move |pod: &Pod| {
            if let Ok(mut a) = assumed.lock() {
                a.remove(&ObjectKey::of(pod));
            }
        };
        ctx.informers.pods.on_change(move |change| match change {
            Change::Added(pod) => {
                if needs_scheduling(pod) {
                    queue.add(ObjectKey::of(&**pod));
                }
            }
            Change::Updated { old, new } => {
                if !node_name(new).is_empty() {
                    forget(new);
                }
                if needs_scheduling(new) {
                    queue.add(ObjectKey::of(&**new));
                }
                if !node_name(new).is_empty() && !is_terminal(old) && is_terminal(new) {
                    retry_pending(&pods, &queue);
                }
            }
            Change::Deleted(pod) => {
                forget(pod);
                if !node_name(pod).is_empty() && !is_terminal(pod) {
                    retry_pending(&pods, &queue);
                }
            }
        });
    }
    {
        let queue = scheduler.queue.clone();
        let pods = ctx.informers.pods.clone();
        ctx.informers.nodes.on_change(move |change| match change {
            Change::Added(_) => retry_pending(&pods, &queue),
            Change::Updated { old, new } => {
                if node_changed_for_scheduling(old, new) {
                    retry_pending(&pods, &queue);
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

    /// The load the scheduler sees: every pod's node and phase, with the
    /// assumed bindings applied.
    fn load(&self) -> Vec<Pod> {
        let assumed = self.assumed.lock().map(|a| a.clone()).unwrap_or_default();
        self.ctx
            .informers
            .pods
            .list()
            .iter()
            .map(|p| {
                let key = ObjectKey::of(&**p);
                let node = match assumed.get(&key) {
                    Some((uid, node))
                        if node_name(p).is_empty()
                            && p.metadata.uid.as_deref() == Some(uid.as_str()) =>
                    {
                        node.clone()
                    }
                    _ => node_name(p).to_owned(),
                };
                Pod {
                    spec: Some(PodSpec {
                        node_name: Some(node).filter(|n| !n.is_empty()),
                        ..Default::default()
                    }),
                    status: Some(PodStatus {
                        phase: p.status.as_ref().and_then(|s| s.phase.clone()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }
            })
            .collect()
    }

    fn is_assumed(&self, key: &ObjectKey, pod: &Pod) -> bool {
        self.assumed.lock().is_ok_and(|a| {
            a.get(key)
                .is_some_and(|(uid, _)| pod.metadata.uid.as_deref() == Some(uid.as_str()))
        })
    }

    async fn sync(&self, key: &ObjectKey) -> Result<(), kube::Error> {
        let Some(pod) = self.ctx.informers.pods.get(key) else {
            return Ok(());
        };
        if !needs_scheduling(&pod) || self.is_assumed(key, &pod) {
            return Ok(());
        }
        let mut nodes: Vec<Node> = self
            .ctx
            .informers
            .nodes
            .list()
            .iter()
            .map(|n| (**n).clone())
            .collect();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let load = self.load();
        let ns = key.namespace.as_deref().unwrap_or("default");
        let api: Api<Pod> = Api::namespaced(self.ctx.client.clone(), ns);
        match choose_node(&pod, &nodes, &load) {
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
                        name: Some(node.to_owned()),
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
                        if let (Ok(mut a), Some(uid)) =
                            (self.assumed.lock(), pod.metadata.uid.clone())
                        {
                            a.insert(key.clone(), (uid, node.to_owned()));
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
