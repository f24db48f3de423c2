//! Composing components into a running system: register every component
//! (indexes, handlers, queues) against the shared informers, start the
//! watches, then the workers.

use std::collections::BTreeSet;

use tokio::task::JoinSet;

use crate::context::{Context, Task};

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
#[derive(Clone, Debug, Default)]
pub struct RuntimeConfig {
    /// The components.
    pub components: BTreeSet<Component>,
    /// Names of simulated nodes to run (empty: none).
    pub nodes: Vec<String>,
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
            workers.extend(c.register(&ctx));
        }
        for name in &config.nodes {
            workers.extend(crate::cluster::nodes::register(&ctx, name));
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
