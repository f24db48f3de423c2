//! Composing components into a running system: register every component
//! (indexes, handlers, queues) against the shared informers, start the
//! watches, then the workers.

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::context::{Context, Task};
use crate::identity::Identity;

/// Makes the client a part of the runtime uses for its own calls (its
/// identity's credentials); see [`RuntimeConfig::clients`].
pub type ClientFor = Arc<dyn Fn(Identity) -> kube::Client + Send + Sync>;

/// A part of the system that can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// The evictionrequest-controller (eviction spec §7).
    EvictionRequest,
    /// The default responder `imperative-eviction.k8s.io/evictor` (§8).
    ImperativeEvictor,
    /// The disruption controller (PodDisruptionBudget status).
    Disruption,
    /// The garbage collector (owner references).
    GarbageCollector,
    /// The simulated scheduler.
    Scheduler,
    /// The Job controller (issue 6).
    Job,
}

impl Component {
    /// Registers the component and returns its worker tasks.
    fn register(self, ctx: &Context) -> Vec<Task> {
        match self {
            Component::EvictionRequest => crate::controllers::evictionrequest::register(ctx),
            Component::ImperativeEvictor => crate::controllers::imperative::register(ctx),
            Component::Disruption => crate::controllers::disruption::register(ctx),
            Component::GarbageCollector => crate::controllers::gc::register(ctx),
            Component::Scheduler => crate::cluster::scheduler::register(ctx),
            Component::Job => crate::controllers::job::register(ctx),
        }
    }
}

/// What to run.
#[derive(Clone, Default)]
pub struct RuntimeConfig {
    /// The components.
    pub components: BTreeSet<Component>,
    /// Names of simulated nodes to run (empty: none).
    pub nodes: Vec<String>,
    /// Each component's own client ([`Identity::Component`]; the simulated
    /// nodes': [`Identity::NodeSimulator`]), all sharing the context's
    /// informers, as kube-controller-manager's
    /// `--use-service-account-credentials`. `None`: everything on the
    /// context's client.
    pub clients: Option<ClientFor>,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("components", &self.components)
            .field("nodes", &self.nodes)
            .field("clients", &self.clients.as_ref().map(|_| "per identity"))
            .finish()
    }
}

impl RuntimeConfig {
    /// The context `identity` runs with: `ctx` itself, or `ctx` with the
    /// identity's own client.
    fn context_of(&self, ctx: &Context, identity: Identity) -> Context {
        match &self.clients {
            Some(client_for) => ctx.with_client(client_for(identity)),
            None => ctx.clone(),
        }
    }
}

/// A running set of components; dropping it stops them.
#[derive(Debug)]
pub struct Runtime {
    tasks: JoinSet<()>,
}

impl Runtime {
    /// Registers every component, starts the informers, waits for their first
    /// lists, then starts the workers.
    pub async fn start(ctx: Context, config: RuntimeConfig) -> Runtime {
        let mut workers: Vec<Task> = Vec::new();
        for c in &config.components {
            workers.extend(c.register(&config.context_of(&ctx, Identity::Component(*c))));
        }
        if !config.nodes.is_empty() {
            let nodes = config.context_of(&ctx, Identity::NodeSimulator);
            for name in &config.nodes {
                workers.extend(crate::cluster::nodes::register(&nodes, name));
            }
        }
        let mut tasks = JoinSet::new();
        for run in ctx.informers.runs() {
            tasks.spawn(run);
        }
        ctx.informers.wait_synced().await;
        for w in workers {
            tasks.spawn(w);
        }
        Runtime { tasks }
    }

    /// Stops every task.
    pub async fn shutdown(mut self) {
        self.tasks.shutdown().await;
    }
}
