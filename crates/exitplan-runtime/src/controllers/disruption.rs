//! The disruption controller (upstream `pkg/controller/disruption`): keeps
//! every PodDisruptionBudget's status current through
//! [`sync_pdb`](exitplan_control::disruption::sync_pdb), and flips stale
//! `DisruptionTarget` pod conditions back to `False`
//! ([`stale_disruption_target`]).
//!
//! Wiring: a queue of PDB keys, fed by PDB changes and by pod changes that a
//! budget of the pod's namespace selects (old or new labels); a second queue
//! of pod keys for the stale-condition cleanup. Only pods exist as
//! workloads here: the scale lookup is [`Workloads`] over no workloads, then
//! [`without_scale_subresources`], so budgets with a percentage or
//! `maxUnavailable` over controller-owned pods fail safe as upstream would
//! without the controller, and ownerless pods are reported unmanaged.

use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, PostParams};

use exitplan_api::selector;
use exitplan_control::disruption::{
    EventType, StaleCleanup, Workloads, fail_safe, stale_disruption_target, sync_pdb,
    without_scale_subresources,
};

use crate::context::{Context, Task};
use crate::informer::{Change, Informer, ObjectKey};
use crate::queue::Queue;

/// Index of pods and budgets by namespace.
const NAMESPACE_INDEX: &str = "disruption/namespace";

/// Name of the budget work queue.
pub const PDB_QUEUE_NAME: &str = "disruption";
/// Name of the stale-condition pod queue.
pub const STALE_POD_QUEUE_NAME: &str = "disruption_recheck";

#[derive(Clone)]
struct Disruption {
    client: kube::Client,
    clock: exitplan_clock::SharedClock,
    pods: Informer<Pod>,
    pdbs: Informer<PodDisruptionBudget>,
    pdb_queue: Queue<ObjectKey>,
    stale_queue: Queue<ObjectKey>,
}

fn namespace_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Vec<String> {
    vec![meta.namespace.clone().unwrap_or_default()]
}

fn std_duration(d: SignedDuration) -> Duration {
    Duration::try_from(d).unwrap_or_default()
}

/// Registers the disruption controller's indexes and handlers and returns
/// its workers.
pub fn register(ctx: &Context) -> Vec<Task> {
    let d = Disruption {
        client: ctx.client.clone(),
        clock: ctx.clock.clone(),
        pods: ctx.informers.pods.clone(),
        pdbs: ctx.informers.pdbs.clone(),
        pdb_queue: Queue::new(PDB_QUEUE_NAME),
        stale_queue: Queue::new(STALE_POD_QUEUE_NAME),
    };
    d.pods
        .add_index(NAMESPACE_INDEX, |p: &Pod| namespace_of(&p.metadata));
    d.pdbs
        .add_index(NAMESPACE_INDEX, |p: &PodDisruptionBudget| {
            namespace_of(&p.metadata)
        });
    let h = d.clone();
    d.pdbs
        .on_change(move |change: &Change<PodDisruptionBudget>| {
            let pdb = match change {
                Change::Added(p) | Change::Deleted(p) => p,
                Change::Updated { new, .. } => new,
            };
            h.pdb_queue.add(ObjectKey::of(pdb.as_ref()));
        });
    let h = d.clone();
    d.pods.on_change(move |change: &Change<Pod>| match change {
        Change::Added(p) => {
            h.enqueue_budgets_of(p);
            h.check_stale(p);
        }
        Change::Updated { old, new } => {
            h.enqueue_budgets_of(new);
            if old.metadata.labels != new.metadata.labels {
                h.enqueue_budgets_of(old);
            }
            h.check_stale(new);
        }
        Change::Deleted(p) => h.enqueue_budgets_of(p),
    });
    let pdb_worker = d.clone();
    let stale_worker = d;
    vec![
        Box::pin(async move { pdb_worker.pdb_work().await }),
        Box::pin(async move { stale_worker.stale_work().await }),
    ]
}

impl Disruption {
    /// Queues every budget of the pod's namespace whose selector matches it
    /// (upstream `getPdbsForPod`; a budget with a bad selector is synced too,
    /// so its fail-safe status is written).
    fn enqueue_budgets_of(&self, pod: &Pod) {
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        for pdb in self.pdbs.by_index(NAMESPACE_INDEX, &ns) {
            let sel = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
            let matches = match selector::as_selector(sel) {
                Ok(s) => s.matches(pod.metadata.labels.as_ref()),
                Err(_) => true,
            };
            if matches {
                self.pdb_queue.add(ObjectKey::of(pdb.as_ref()));
            }
        }
    }

    fn check_stale(&self, pod: &Pod) {
        if stale_disruption_target(pod, self.clock.now()).is_some() {
            self.stale_queue.add(ObjectKey::of(pod));
        }
    }

    async fn pdb_work(self) {
        self.pdb_queue
            .run_worker("PodDisruptionBudget sync", |key| {
                let this = &self;
                async move { this.sync_pdb(&key).await }
            })
            .await;
    }

    async fn sync_pdb(&self, key: &ObjectKey) -> Result<(), kube::Error> {
        let Some(pdb) = self.pdbs.get(key) else {
            return Ok(());
        };
        let ns = key.namespace.clone().unwrap_or_default();
        let pods: Vec<Pod> = self
            .pods
            .by_index(NAMESPACE_INDEX, &ns)
            .iter()
            .map(|p| Pod::clone(p))
            .collect();
        let workloads = Workloads::default();
        let lookup = |owner: &_| workloads.lookup(owner, without_scale_subresources);
        let now = self.clock.now();
        let plan = sync_pdb(&pdb, &pods, &lookup, now);
        for event in &plan.events {
            match event.type_ {
                EventType::Normal => {
                    tracing::info!(pdb = %key, target = ?event.target, reason = event.reason, message = %event.message, "event")
                }
                EventType::Warning => {
                    tracing::warn!(pdb = %key, target = ?event.target, reason = event.reason, message = %event.message, "event")
                }
            }
        }
        if let Some(err) = &plan.sync_error {
            tracing::warn!(pdb = %key, error = %err, "PodDisruptionBudget status failed safe");
        }
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client.clone(), &ns);
        if let Some(written) = plan.write {
            match api
                .replace_status(&key.name, &PostParams::default(), &written)
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => {
                    // Stale read or gone: the watch brings the new state.
                    return Err(kube::Error::Api(s));
                }
                Err(err) => {
                    let safe = fail_safe(&pdb, &err.to_string(), self.clock.now());
                    api.replace_status(&key.name, &PostParams::default(), &safe)
                        .await?;
                    return Err(err);
                }
            }
        }
        if let Some(after) = plan.recheck_after {
            self.pdb_queue.add_after(key.clone(), std_duration(after));
        }
        Ok(())
    }

    async fn stale_work(self) {
        self.stale_queue
            .run_worker("stale DisruptionTarget cleanup", |key| {
                let this = &self;
                async move { this.sync_stale(&key).await }
            })
            .await;
    }

    async fn sync_stale(&self, key: &ObjectKey) -> Result<(), kube::Error> {
        let Some(pod) = self.pods.get(key) else {
            return Ok(());
        };
        match stale_disruption_target(&pod, self.clock.now()) {
            None => Ok(()),
            Some(StaleCleanup::RequeueAfter(after)) => {
                self.stale_queue.add_after(key.clone(), std_duration(after));
                Ok(())
            }
            Some(StaleCleanup::UpdateStatus(updated)) => {
                let api: Api<Pod> = Api::namespaced(
                    self.client.clone(),
                    key.namespace.as_deref().unwrap_or_default(),
                );
                api.replace_status(&key.name, &PostParams::default(), &updated)
                    .await?;
                tracing::info!(pod = %key, "reset stale DisruptionTarget condition");
                Ok(())
            }
        }
    }
}
