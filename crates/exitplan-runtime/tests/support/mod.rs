//! Shared helpers of the runtime tests: the embedded API server in-process
//! (`exitplan_testing::TestEnv`: in-memory store, a clock that follows tokio
//! time, a kube-rs client on its router), and the chosen components running
//! against it — all under tokio's paused clock, so minutes of controller time
//! pass in microseconds.
//!
//! Use with `#[tokio::test(start_paused = true)]`.

#![allow(dead_code)]

use std::time::Duration;

use jiff::Timestamp;
use kube::api::{Api, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use exitplan_apiserver::server::Server;
use exitplan_clock::SharedClock;
use exitplan_runtime::context::Context;
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};
use exitplan_testing::TestEnv;

/// The instant every test cluster starts at.
pub const START: &str = "2026-11-29T10:00:00Z";

/// An embedded API server with components running against it.
pub struct Cluster {
    /// The API server (in-process).
    pub server: Server,
    /// A client on the server's router.
    pub client: kube::Client,
    /// The one clock (server and components).
    pub clock: SharedClock,
    config: RuntimeConfig,
    runtime: Option<Runtime>,
    /// The context of the running components (their informers).
    pub ctx: Context,
    /// The in-process server's environment (its drop ends the watches).
    _env: TestEnv,
}

impl Cluster {
    /// A server, plus `components` and simulated `nodes` running against it.
    pub async fn start(components: &[Component], nodes: &[&str]) -> Cluster {
        let env = TestEnv::builder()
            .start_time(START.parse().expect("start time"))
            .start()
            .await
            .expect("test environment");
        let (server, clock) = (env.server().clone(), env.clock());
        let client = env.client();
        let config = RuntimeConfig {
            components: components.iter().copied().collect(),
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
            clients: None,
        };
        let ctx = Context::new(client.clone(), clock.clone());
        let runtime = Some(Runtime::start(ctx.clone(), config.clone()).await);
        Cluster {
            server,
            client,
            clock,
            config,
            runtime,
            ctx,
            _env: env,
        }
    }

    /// Stops every component (the server keeps running).
    pub async fn stop_components(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown().await;
        }
    }

    /// Stops the components and starts them again from scratch (new caches,
    /// queues and in-memory state), as a restarted controller process would.
    pub async fn restart_components(&mut self) {
        self.stop_components().await;
        self.ctx = Context::new(self.client.clone(), self.clock.clone());
        self.runtime = Some(Runtime::start(self.ctx.clone(), self.config.clone()).await);
    }

    /// The clock's reading.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Virtual time since the cluster started.
    pub fn elapsed(&self) -> Duration {
        let start: Timestamp = START.parse().expect("start time");
        Duration::try_from(self.now().duration_since(start)).unwrap_or_default()
    }

    /// A namespaced API in `default`.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::default_namespaced(self.client.clone())
    }

    /// A cluster-scoped API.
    pub fn cluster_api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::ClusterResourceScope>,
        K::DynamicType: Default,
    {
        Api::all(self.client.clone())
    }

    /// Creates the namespaced `obj` (JSON) in its namespace (default: `default`).
    pub async fn create<K>(&self, obj: serde_json::Value) -> K
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Serialize
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        let obj: K = serde_json::from_value(obj).expect("object");
        let ns = obj
            .meta()
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        Api::<K>::namespaced(self.client.clone(), &ns)
            .create(&PostParams::default(), &obj)
            .await
            .expect("create")
    }

    /// Creates the cluster-scoped `obj` (JSON).
    pub async fn create_cluster<K>(&self, obj: serde_json::Value) -> K
    where
        K: kube::Resource<Scope = k8s_openapi::ClusterResourceScope>
            + Clone
            + DeserializeOwned
            + Serialize
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        let obj: K = serde_json::from_value(obj).expect("object");
        Api::<K>::all(self.client.clone())
            .create(&PostParams::default(), &obj)
            .await
            .expect("create")
    }
}

/// Polls `check` every second of virtual time until it returns `Some`, for at
/// most `limit`; panics with `what` (and the last value seen, via `check`'s own
/// message) if it never does.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = tokio::time::Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        if start.elapsed() >= limit {
            panic!("timed out after {limit:?} (virtual time) waiting for: {what}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

impl Cluster {
    /// Like [`Cluster::start`], but every client (the components' and
    /// `cluster.client`) is `wrap(router)`: a router wrapped to inject faults,
    /// delays or to count requests.
    pub async fn start_wrapped(
        components: &[Component],
        nodes: &[&str],
        wrap: impl FnOnce(axum::Router) -> kube::Client,
    ) -> Cluster {
        let env = TestEnv::builder()
            .start_time(START.parse().expect("start time"))
            .start()
            .await
            .expect("test environment");
        let (server, clock) = (env.server().clone(), env.clock());
        let client = wrap(server.router());
        let config = RuntimeConfig {
            components: components.iter().copied().collect(),
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
            clients: None,
        };
        let ctx = Context::new(client.clone(), clock.clone());
        let runtime = Some(Runtime::start(ctx.clone(), config.clone()).await);
        Cluster {
            server,
            client,
            clock,
            config,
            runtime,
            ctx,
            _env: env,
        }
    }

    /// Like [`Cluster::start`], but each component (and the simulated
    /// nodes, and the shared informers) on its own client, of its identity
    /// from `clients(server, admin client)`, as `exitplan up` runs them;
    /// `cluster.client` stays the admin's.
    pub async fn start_as<F, Fut>(components: &[Component], nodes: &[&str], clients: F) -> Cluster
    where
        F: FnOnce(Server, kube::Client) -> Fut,
        Fut: std::future::Future<Output = exitplan_runtime::runtime::ClientFor>,
    {
        let env = TestEnv::builder()
            .start_time(START.parse().expect("start time"))
            .start()
            .await
            .expect("test environment");
        let (server, clock) = (env.server().clone(), env.clock());
        let client = env.client();
        let client_for = clients(server.clone(), client.clone()).await;
        let informers = client_for(exitplan_runtime::identity::Identity::SharedInformers);
        let config = RuntimeConfig {
            components: components.iter().copied().collect(),
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
            clients: Some(client_for),
        };
        let ctx = Context::new(informers, clock.clone());
        let runtime = Some(Runtime::start(ctx.clone(), config.clone()).await);
        Cluster {
            server,
            client,
            clock,
            config,
            runtime,
            ctx,
            _env: env,
        }
    }
}
