//! [`TestEnv`]: the API server in the test's process, its client, the
//! optional controllers, simulated nodes and listener; and its builder.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderValue, Request, header};
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_clock::{SharedClock, TokioClock};
use exitplan_runtime::context::Context;
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};
use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::error::Error;
use crate::listen::{Listening, new_token};

/// How long CRD installation waits by default for each batch of CRDs to be
/// `Established` and served (tokio time).
pub const DEFAULT_CRD_TIMEOUT: Duration = Duration::from_secs(10);

/// Every controller `exitplan up` runs, which `.controllers(true)` selects.
pub const CONTROLLERS: [Component; 6] = [
    Component::EvictionRequest,
    Component::ImperativeEvictor,
    Component::Disruption,
    Component::GarbageCollector,
    Component::Scheduler,
    Component::Job,
];

/// Configures and starts a [`TestEnv`]; made by [`TestEnv::builder`].
#[derive(Debug, Clone)]
pub struct TestEnvBuilder {
    crds: Vec<CustomResourceDefinition>,
    components: BTreeSet<Component>,
    nodes: Vec<String>,
    listen: bool,
    start_time: Option<Timestamp>,
    crd_timeout: Duration,
}

impl Default for TestEnvBuilder {
    fn default() -> Self {
        TestEnvBuilder {
            crds: Vec::new(),
            components: BTreeSet::new(),
            nodes: Vec::new(),
            listen: false,
            start_time: None,
            crd_timeout: DEFAULT_CRD_TIMEOUT,
        }
    }
}

impl TestEnvBuilder {
    /// CRDs to install at start (for example `Widget::crd()` of a
    /// `#[derive(CustomResource)]` type): each is created, then
    /// [`start`](Self::start) waits until each is `Established` and served.
    pub fn crds(mut self, crds: impl IntoIterator<Item = CustomResourceDefinition>) -> Self {
        self.crds.extend(crds);
        self
    }

    /// Whether to run exitplan's controllers next to the server (default
    /// no): the evictionrequest-controller, the imperative evictor, the
    /// disruption controller (PodDisruptionBudget status), the garbage
    /// collector, the scheduler and the Job controller — [`CONTROLLERS`].
    pub fn controllers(mut self, on: bool) -> Self {
        if on {
            self.components.extend(CONTROLLERS);
        } else {
            self.components.clear();
        }
        self
    }

    /// Runs the given exitplan components next to the server (added to any
    /// chosen before), instead of all of them.
    pub fn components(mut self, components: impl IntoIterator<Item = Component>) -> Self {
        self.components.extend(components);
        self
    }

    /// Simulated nodes to run: each registers its `Node`, heartbeats and
    /// runs the pods bound to it with a simulated kubelet. Pods are bound
    /// by the scheduler ([`Component::Scheduler`], in `.controllers(true)`).
    pub fn nodes<S: Into<String>>(mut self, nodes: impl IntoIterator<Item = S>) -> Self {
        self.nodes.extend(nodes.into_iter().map(Into::into));
        self
    }

    /// Also serve the API on a real `127.0.0.1` port, over HTTPS with a
    /// private CA and a bearer token, and write a kubeconfig for it
    /// ([`TestEnv::kubeconfig_path`]) — for kubectl or another process.
    /// The in-process [`TestEnv::client`] works either way. Prefer a
    /// test with real time (`#[tokio::test]`) for this: under a paused
    /// clock tokio jumps time forward while the runtime waits on another
    /// process, and the server's connection timeouts with it.
    pub fn listen(mut self) -> Self {
        self.listen = true;
        self
    }

    /// What the server's clock reads at start (default: the wall clock at
    /// start). The clock then follows tokio time, so under
    /// `tokio::time::pause` (`#[tokio::test(start_paused = true)]`) server
    /// timestamps are exact and reproducible.
    pub fn start_time(mut self, start: Timestamp) -> Self {
        self.start_time = Some(start);
        self
    }

    /// How long to wait for CRDs to become `Established` and served
    /// (default [`DEFAULT_CRD_TIMEOUT`], tokio time).
    pub fn crd_timeout(mut self, timeout: Duration) -> Self {
        self.crd_timeout = timeout;
        self
    }

    /// Starts the server (in-memory store), the listener if asked, installs
    /// the CRDs and waits for them, then starts the components and nodes
    /// and waits until their informers have listed.
    pub async fn start(self) -> Result<TestEnv, Error> {
        let start = self.start_time.unwrap_or_else(Timestamp::now);
        let clock: SharedClock = Arc::new(TokioClock::starting_at(start));
        let token = if self.listen {
            Some(new_token()?)
        } else {
            None
        };
        let mut server = Server::builder()
            .store(Store::in_memory()?)
            .clock(clock.clone());
        if let Some(token) = &token {
            server = server.token(token.clone());
        }
        let server = server.build().await?;
        let (client, listening) = match &token {
            None => (kube::Client::new(server.router(), "default"), None),
            Some(token) => (
                with_token(&server, token)?,
                Some(Listening::start(&server, token).await?),
            ),
        };
        let mut env = TestEnv {
            server,
            client,
            clock,
            runtime: None,
            listening,
            crd_timeout: self.crd_timeout,
        };
        if !self.crds.is_empty() {
            env.install_crds(self.crds).await?;
        }
        if !self.components.is_empty() || !self.nodes.is_empty() {
            let ctx = Context::new(env.client.clone(), env.clock.clone());
            let config = RuntimeConfig {
                components: self.components,
                nodes: self.nodes,
                clients: None,
            };
            env.runtime = Some(Runtime::start(ctx, config).await);
        }
        Ok(env)
    }
}

/// An in-process client whose requests carry `token` (the server requires
/// it once it listens on a port).
fn with_token(server: &Server, token: &str) -> Result<kube::Client, Error> {
    let bearer = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|e| Error::Token(e.to_string()))?;
    let service = tower::ServiceExt::map_request(
        server.router(),
        move |mut req: Request<kube::client::Body>| {
            req.headers_mut()
                .insert(header::AUTHORIZATION, bearer.clone());
            req
        },
    );
    Ok(kube::Client::new(service, "default"))
}

/// A Kubernetes-compatible API server running inside the test's process,
/// with a [`kube::Client`] on it — envtest for Rust.
///
/// The store is in memory and the clock follows tokio time, so a
/// `TestEnv` starts in milliseconds and works under `tokio::time::pause`.
/// Each `TestEnv` is independent: several can run in one process. Dropping
/// it stops everything it started (the components, the listener, open
/// watches); [`shutdown`](Self::shutdown) does the same and waits.
pub struct TestEnv {
    server: Server,
    client: kube::Client,
    clock: SharedClock,
    runtime: Option<Runtime>,
    listening: Option<Listening>,
    crd_timeout: Duration,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("now", &self.clock.now())
            .field("controllers", &self.runtime.is_some())
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

impl TestEnv {
    /// A builder: CRDs, controllers, simulated nodes, a listener.
    pub fn builder() -> TestEnvBuilder {
        TestEnvBuilder::default()
    }

    /// The API server alone, with nothing installed:
    /// `TestEnv::builder().start()`.
    pub async fn start() -> Result<TestEnv, Error> {
        TestEnv::builder().start().await
    }

    /// A client on the server (in-process, no socket), default namespace
    /// `default`. Clones share one connection-free transport.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The server itself (its store, router, metrics).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The clock the server stamps timestamps with (and the controllers
    /// decide by).
    pub fn clock(&self) -> SharedClock {
        self.clock.clone()
    }

    /// The server clock's reading.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Installs more CRDs: creates each (replacing one of the same name),
    /// then waits until each is `Established` and its served versions are
    /// served. Returns them as the server stored them.
    pub async fn install_crds(
        &self,
        crds: impl IntoIterator<Item = CustomResourceDefinition>,
    ) -> Result<Vec<CustomResourceDefinition>, Error> {
        crate::crds::install(&self.client, crds.into_iter().collect(), self.crd_timeout).await
    }

    /// Installs one CRD; see [`install_crds`](Self::install_crds).
    pub async fn install_crd(
        &self,
        crd: CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition, Error> {
        let mut installed = self.install_crds([crd]).await?;
        installed.pop().ok_or(Error::CrdUnnamed)
    }

    /// With `.listen()`: the address served.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.listening.as_ref().map(|l| l.addr)
    }

    /// With `.listen()`: the server's URL (`https://127.0.0.1:<port>`).
    pub fn url(&self) -> Option<&str> {
        self.listening.as_ref().map(|l| l.url.as_str())
    }

    /// With `.listen()`: a kubeconfig for the listener (server URL, CA and
    /// token; context namespace `default`), for
    /// `kubectl --kubeconfig <path>`. Removed when the `TestEnv` stops.
    pub fn kubeconfig_path(&self) -> Option<&Path> {
        self.listening.as_ref().map(|l| l.kubeconfig.as_path())
    }

    /// Stops the components and nodes, then the listener (letting
    /// in-flight requests finish), and ends every open watch.
    pub async fn shutdown(mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown().await;
        }
        if let Some(listening) = self.listening.as_mut() {
            listening.stop().await;
        }
        self.server.shutdown();
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        // The runtime's tasks are aborted as it drops, the listener is
        // told to stop as it drops; open watches end here.
        self.server.shutdown();
    }
}
