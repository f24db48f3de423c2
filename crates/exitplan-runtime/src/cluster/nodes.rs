//! A simulated node: registers (or adopts) its `Node` object, reports a
//! Ready status with a heartbeat every
//! [`node::HEARTBEAT_INTERVAL`](exitplan_control::simulation::node::HEARTBEAT_INTERVAL),
//! and runs a kubelet over the pods bound to it.
//!
//! The kubelet keeps a queue of its pods (pods indexed by `spec.nodeName`);
//! each sync asks [`sync_pod`] what the pod looks like at `now`, writes that
//! status (`replace_status` with the pod's resourceVersion, so a condition
//! another component set meanwhile — `DisruptionTarget` — is never lost: the
//! write conflicts and the next sync starts from the newer pod), confirms a
//! finished deletion with a grace-0 DELETE carrying the pod's UID, and looks
//! again when the next transition is due. Container lifetimes come from the
//! timestamps in the pod's status, so a restarted node resumes its pods where
//! they were.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use serde_json::json;

use exitplan_api::time::{add, truncate_to_seconds};
use exitplan_control::simulation::kubelet::sync_pod;
use exitplan_control::simulation::node::{HEARTBEAT_INTERVAL, node_status};
use exitplan_control::simulation::scheduler::DEFAULT_MAX_PODS;
use exitplan_control::simulation::script::PodScript;

use super::{index_pods_by_node, is_status, node_name};
use crate::context::{Context, Task};
use crate::informer::{Change, ObjectKey};
use crate::queue::Queue;

/// The label every node carries with its name.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// The node's operating-system label.
pub const LABEL_OS: &str = "kubernetes.io/os";
/// The node's architecture label.
pub const LABEL_ARCH: &str = "kubernetes.io/arch";

/// Registers the simulated node `name` and returns its workers: the
/// registration and heartbeat loop, and the kubelet.
pub fn register(ctx: &Context, name: &str) -> Vec<Task> {
    index_pods_by_node(ctx);
    let queue: Queue<ObjectKey> = Queue::new(&format!("kubelet/{name}"));
    {
        let queue = queue.clone();
        let name = name.to_owned();
        ctx.informers.pods.on_change(move |change| match change {
            Change::Added(pod) | Change::Updated { new: pod, .. } => {
                if node_name(pod) == name {
                    queue.add(ObjectKey::of(&**pod));
                }
            }
            Change::Deleted(_) => {}
        });
    }
    let node = SimNode {
        ctx: ctx.clone(),
        name: name.to_owned(),
        queue,
    };
    vec![Box::pin(node.clone().heartbeat()), Box::pin(node.kubelet())]
}

#[derive(Clone)]
struct SimNode {
    ctx: Context,
    name: String,
    queue: Queue<ObjectKey>,
}

/// The node's ordinal for its address: the number its name ends with
/// (`node-3` → 2), else a stable hash of the name.
fn ordinal(name: &str) -> usize {
    let digits: String = name
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    match digits.parse::<usize>() {
        Ok(n) => n.saturating_sub(1) % 62_500,
        Err(_) => {
            // FNV-1a: stable across runs, unlike std's hasher.
            let h = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            usize::try_from(h % 62_500).unwrap_or(0)
        }
    }
}

/// The pods a node takes: what its status already says (so an adopted node
/// keeps an `allocatable.pods` set on it), else the default.
fn max_pods(node: Option<&Node>) -> usize {
    node.and_then(|n| n.status.as_ref())
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get("pods"))
        .and_then(|q| q.0.parse::<usize>().ok())
        .unwrap_or(DEFAULT_MAX_PODS)
}

/// A std duration for a non-negative signed one (zero otherwise).
fn std_duration(d: SignedDuration) -> Duration {
    Duration::try_from(d).unwrap_or_default()
}

impl SimNode {
    fn nodes(&self) -> Api<Node> {
        Api::all(self.ctx.client.clone())
    }

    /// Creates the Node, or adopts an existing one (adding the labels it
    /// lacks).
    async fn ensure_registered(&self) -> Result<Node, kube::Error> {
        let labels = [
            (LABEL_HOSTNAME, self.name.as_str()),
            (LABEL_OS, "linux"),
            (LABEL_ARCH, "amd64"),
        ];
        let node = Node {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        };
        match self.nodes().create(&PostParams::default(), &node).await {
            Ok(n) => {
                tracing::info!(node = %self.name, "registered");
                Ok(n)
            }
            Err(e) if is_status(&e, 409) => {
                let existing = self.nodes().get(&self.name).await?;
                let have = existing.metadata.labels.clone().unwrap_or_default();
                let missing: serde_json::Map<String, serde_json::Value> = labels
                    .iter()
                    .filter(|(k, _)| !have.contains_key(*k))
                    .map(|(k, v)| ((*k).to_owned(), (*v).into()))
                    .collect();
                tracing::info!(node = %self.name, "adopted an existing node");
                if missing.is_empty() {
                    return Ok(existing);
                }
                self.nodes()
                    .patch(
                        &self.name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"metadata": {"labels": missing}})),
                    )
                    .await
            }
            Err(e) => Err(e),
        }
    }

    /// Writes the node's status at `now` from its previous one (the cached
    /// Node when fresher than the last write's answer, so an
    /// `allocatable.pods` someone set sticks).
    async fn post_status(&self, last: &Node) -> Result<Node, kube::Error> {
        let cached = self
            .ctx
            .informers
            .nodes
            .get(&ObjectKey::new(None, &self.name))
            .filter(|n| n.metadata.uid == last.metadata.uid);
        let previous = cached.as_deref().unwrap_or(last);
        let status = node_status(
            &self.name,
            ordinal(&self.name),
            max_pods(Some(previous)),
            previous.status.as_ref(),
            self.ctx.clock.now(),
        );
        self.nodes()
            .patch_status(
                &self.name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
    }

    /// Registers the node, then refreshes its status every heartbeat
    /// interval (registering again if the Node was deleted).
    async fn heartbeat(self) {
        let mut last: Option<Node> = None;
        loop {
            let result = match last.take() {
                Some(node) => self.post_status(&node).await,
                None => match self.ensure_registered().await {
                    Ok(node) => self.post_status(&node).await,
                    Err(e) => Err(e),
                },
            };
            match result {
                Ok(node) => {
                    last = Some(node);
                    tokio::time::sleep(std_duration(HEARTBEAT_INTERVAL)).await;
                }
                Err(e) => {
                    tracing::warn!(node = %self.name, error = %e, "node status not written; registering again");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    async fn kubelet(self) {
        // Pods whose terminal status this kubelet wrote: their deletion is
        // confirmed no earlier than this.
        let mut confirm_at: std::collections::HashMap<ObjectKey, tokio::time::Instant> =
            std::collections::HashMap::new();
        while let Some(key) = self.queue.get().await {
            match self.sync(&key, &mut confirm_at).await {
                Ok(next) => {
                    self.queue.forget(&key);
                    if let Some(delay) = next {
                        self.queue.add_after(key.clone(), delay);
                    }
                }
                Err(e) => {
                    if is_status(&e, 409) {
                        tracing::debug!(node = %self.name, pod = %key, error = %e, "stale pod; retrying");
                    } else {
                        tracing::warn!(node = %self.name, pod = %key, error = %e, "pod sync failed; retrying");
                    }
                    self.queue.add_rate_limited(key.clone());
                }
            }
            self.queue.done(&key);
        }
    }

    /// Syncs one pod; answers when to look again.
    async fn sync(
        &self,
        key: &ObjectKey,
        confirm_at: &mut std::collections::HashMap<ObjectKey, tokio::time::Instant>,
    ) -> Result<Option<Duration>, kube::Error> {
        let Some(pod) = self.ctx.informers.pods.get(key) else {
            confirm_at.remove(key);
            return Ok(None);
        };
        if node_name(&pod) != self.name {
            return Ok(None);
        }
        let now = self.ctx.clock.now();
        let plan = sync_pod(&pod, now);
        let api: Api<Pod> = Api::namespaced(
            self.ctx.client.clone(),
            key.namespace.as_deref().unwrap_or("default"),
        );
        let mut wrote_terminal = false;
        if let Some(status) = plan.status {
            let problems = PodScript::of(&pod).problems();
            if !problems.is_empty()
                && pod
                    .status
                    .as_ref()
                    .and_then(|s| s.start_time.as_ref())
                    .is_none()
            {
                tracing::warn!(node = %self.name, pod = %key, ?problems, "unparsable scripting annotations; their defaults apply");
            }
            let phase = status.phase.clone().unwrap_or_default();
            wrote_terminal = phase == "Succeeded" || phase == "Failed";
            let mut updated = (*pod).clone();
            updated.status = Some(status);
            match api
                .replace_status(&key.name, &PostParams::default(), &updated)
                .await
            {
                Ok(_) => {
                    tracing::debug!(node = %self.name, pod = %key, %phase, "pod status written")
                }
                Err(e) if is_status(&e, 404) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        if plan.confirm_deletion {
            // The terminal status was just written: confirm the deletion a
            // moment later, so every watcher (the evictionrequest-controller:
            // `PodTerminal`) sees the final status before the object goes —
            // not one or the other depending on task scheduling.
            let now_t = tokio::time::Instant::now();
            if wrote_terminal {
                confirm_at.insert(key.clone(), now_t + CONFIRM_AFTER_TERMINAL);
            }
            if let Some(at) = confirm_at.get(key).copied()
                && at > now_t
            {
                return Ok(Some(at - now_t));
            }
            confirm_at.remove(key);
            let confirm = DeleteParams {
                grace_period_seconds: Some(0),
                preconditions: Some(Preconditions {
                    uid: pod.metadata.uid.clone(),
                    resource_version: None,
                }),
                ..Default::default()
            };
            match api.delete(&key.name, &confirm).await {
                Ok(_) => tracing::info!(node = %self.name, pod = %key, "pod deletion confirmed"),
                Err(e) if is_status(&e, 404) || is_status(&e, 409) => {}
                Err(e) => return Err(e),
            }
            return Ok(None);
        }
        Ok(plan.requeue_after.map(|after| until_due(now, after)))
    }
}

/// How long after writing a deleted pod's terminal status the kubelet
/// confirms its deletion.
pub const CONFIRM_AFTER_TERMINAL: Duration = Duration::from_secs(1);

/// The wait until a transition `after` past `now` (truncated to seconds, as
/// [`sync_pod`] sees it) is due: the first whole second at or after it.
fn until_due(now: Timestamp, after: SignedDuration) -> Duration {
    let base = truncate_to_seconds(now);
    let at = add(base, after);
    let whole = truncate_to_seconds(at);
    let due = if whole < at {
        add(whole, SignedDuration::from_secs(1))
    } else {
        whole
    };
    let wait = std_duration(due.duration_since(now));
    if wait.is_zero() {
        Duration::from_secs(1)
    } else {
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_and_due_times() {
        assert_eq!(ordinal("node-1"), 0);
        assert_eq!(ordinal("node-12"), 11);
        assert_eq!(ordinal("edge"), ordinal("edge"));
        let now: Timestamp = "2026-11-29T10:00:00.400Z".parse().expect("time");
        // Due at 10:00:30 (whole second): 29.6 s from now.
        assert_eq!(
            until_due(now, SignedDuration::from_secs(30)),
            Duration::from_millis(29_600)
        );
        // Due at 10:00:01.5: looked at 10:00:02.
        assert_eq!(
            until_due(now, SignedDuration::from_millis(1_500)),
            Duration::from_millis(1_600)
        );
    }
}
