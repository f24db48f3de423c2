//! What every component shares: the client, the clock, and one informer per
//! resource (so each kind is watched and cached once, whatever the number of
//! controllers reading it).

use futures_util::future::BoxFuture;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::Api;

use exitplan_clock::SharedClock;

use crate::informer::Informer;

/// The shared informers, one per resource the components read.
#[derive(Clone, Debug)]
pub struct Informers {
    /// Pods (all namespaces).
    pub pods: Informer<Pod>,
    /// Nodes.
    pub nodes: Informer<Node>,
    /// Evictions (all namespaces).
    pub evictions: Informer<Eviction>,
    /// EvictionRequests (all namespaces).
    pub eviction_requests: Informer<EvictionRequest>,
    /// PodDisruptionBudgets (all namespaces).
    pub pdbs: Informer<PodDisruptionBudget>,
    /// Jobs (all namespaces).
    pub jobs: Informer<Job>,
}

impl Informers {
    /// Informers over every namespace of `client`'s cluster (not yet running).
    pub fn new(client: &kube::Client) -> Self {
        Informers {
            pods: Informer::new(Api::all(client.clone())),
            nodes: Informer::new(Api::all(client.clone())),
            evictions: Informer::new(Api::all(client.clone())),
            eviction_requests: Informer::new(Api::all(client.clone())),
            pdbs: Informer::new(Api::all(client.clone())),
            jobs: Informer::new(Api::all(client.clone())),
        }
    }

    /// The watch loops of every informer, to be spawned once all components
    /// registered their indexes and handlers.
    pub fn runs(&self) -> Vec<BoxFuture<'static, ()>> {
        vec![
            Box::pin(self.pods.clone().run()),
            Box::pin(self.nodes.clone().run()),
            Box::pin(self.evictions.clone().run()),
            Box::pin(self.eviction_requests.clone().run()),
            Box::pin(self.pdbs.clone().run()),
            Box::pin(self.jobs.clone().run()),
        ]
    }

    /// Waits until every informer has its first full list.
    pub async fn wait_synced(&self) {
        self.pods.wait_synced().await;
        self.nodes.wait_synced().await;
        self.evictions.wait_synced().await;
        self.eviction_requests.wait_synced().await;
        self.pdbs.wait_synced().await;
        self.jobs.wait_synced().await;
    }
}

/// Everything a component needs to register itself.
#[derive(Clone)]
pub struct Context {
    /// The API client (in-process router or a real cluster).
    pub client: kube::Client,
    /// The one clock; decisions get `clock.now()`.
    pub clock: SharedClock,
    /// Shared informers.
    pub informers: Informers,
    /// The process's metrics registry.
    pub metrics: crate::metrics::Metrics,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A context over `client` with `clock`.
    pub fn new(client: kube::Client, clock: SharedClock) -> Self {
        let informers = Informers::new(&client);
        Context {
            client,
            clock,
            informers,
            metrics: crate::metrics::Metrics::new(),
        }
    }

    /// The same informers, clock and metrics, with the component's own
    /// `client` for its writes (its identity; see [`crate::identity`]).
    pub fn with_client(&self, client: kube::Client) -> Self {
        Context {
            client,
            ..self.clone()
        }
    }

    /// A Lease API in `namespace` (leader election).
    pub fn leases(&self, namespace: &str) -> Api<Lease> {
        Api::namespaced(self.client.clone(), namespace)
    }
}

/// The long-running work of a component (worker loops), spawned after the
/// informers started.
pub type Task = BoxFuture<'static, ()>;
