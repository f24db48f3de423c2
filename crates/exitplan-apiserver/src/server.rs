//! The server: state, router, bootstrap and serving.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use exitplan_apiserver::server::Server;
//! use exitplan_apiserver::storage::Store;
//! let server = Server::builder().store(Store::in_memory()?).build().await?;
//! let client = kube::Client::new(server.router(), "default");
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use serde_json::json;

use crate::authn::{Authenticator, Authorize, SigningKey};
use crate::clock::{SharedClock, SystemClock};
use crate::registry::find;
use crate::rest::State;
use crate::rest::create::create_object;
use crate::serving::ConnectionLimits;
use crate::storage::{StorageError, Store};

/// Namespaces every cluster has, created at first start.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Default interval between BOOKMARK events of a watch.
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// No store was given.
    #[error("the server needs a store")]
    NoStore,
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Bootstrapping an object failed.
    #[error("bootstrap failed: {0}")]
    Bootstrap(String),
    /// The service account signing key could not be made.
    #[error(transparent)]
    Key(#[from] crate::authn::jwt::KeyError),
}

/// Builds a [`Server`].
#[derive(Debug, Default)]
pub struct ServerBuilder {
    store: Option<Store>,
    clock: Option<SharedClock>,
    token: Option<String>,
    bookmark_interval: Option<Duration>,
    limits: ConnectionLimits,
    service_account_key: Option<SigningKey>,
    authorizer: Option<Arc<dyn Authorize>>,
}

impl ServerBuilder {
    /// The store to serve (required).
    pub fn store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }

    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The admin token (`kubernetes-admin`, in `system:masters`): requests
    /// but health checks need it or a service account token (default: none,
    /// and requests without credentials are the admin, for in-process
    /// clients).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// How often watches with `allowWatchBookmarks` get a BOOKMARK.
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = Some(every);
        self
    }

    /// Time and size limits of client connections (default: kube-apiserver's,
    /// see [`ConnectionLimits`]).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The key that signs and verifies service account tokens (default: a
    /// new key per server, so tokens do not outlive it; `exitplan up`
    /// passes [`SigningKey::load_or_create`] of its data directory).
    pub fn service_account_key(mut self, key: SigningKey) -> Self {
        self.service_account_key = Some(key);
        self
    }

    /// The authorizer every request (and each impersonation) is checked
    /// against (default: `system:masters`, then RBAC).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorize>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Builds the server and creates the system namespaces if missing.
    pub async fn build(self) -> Result<Server, ServerError> {
        let store = self.store.ok_or(ServerError::NoStore)?;
        let key = match self.service_account_key {
            Some(key) => key,
            None => SigningKey::generate()?,
        };
        let (shutdown_tx, shutdown) = tokio::sync::watch::channel(false);
        let metrics = Arc::new(crate::rest::metrics::ApiMetrics::new());
        store.observe_commits(metrics.commit_histogram());
        let state = Arc::new(State {
            store,
            clock: self.clock.unwrap_or_else(|| Arc::new(SystemClock)),
            token: self.token,
            shutdown,
            bookmark_interval: self.bookmark_interval.unwrap_or(DEFAULT_BOOKMARK_INTERVAL),
            metrics,
            service_writes: tokio::sync::Mutex::new(()),
            registry: crate::registry::Registry::new(),
            crd_sync: tokio::sync::Mutex::new(()),
            rbac: crate::rest::rbac::RbacCache::default(),
            rbac_aggregation: tokio::sync::Mutex::new(()),
            authn: Authenticator::new(key),
            authorizer: self
                .authorizer
                .unwrap_or_else(|| Arc::new(crate::rest::rbac::RbacAuthorizer)),
            webhooks: crate::webhook::Webhooks::new(),
        });
        let server = Server {
            state,
            shutdown: Arc::new(shutdown_tx),
            limits: self.limits,
        };
        server.bootstrap().await?;
        Ok(server)
    }
}

/// A Kubernetes-compatible API server over one store.
#[derive(Debug, Clone)]
pub struct Server {
    state: Arc<State>,
    shutdown: Arc<tokio::sync::watch::Sender<bool>>,
    limits: ConnectionLimits,
}

impl Server {
    /// A builder.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The HTTP API as an axum router: serve it over TCP or hand it to
    /// `kube::Client::new(router, namespace)` in-process.
    pub fn router(&self) -> Router {
        crate::rest::router::router(self.state.clone())
    }

    /// The store served.
    pub fn store(&self) -> &Store {
        &self.state.store
    }

    /// Appends the metrics `source` renders (another registry, such as the
    /// controllers running next to the server) to every `/metrics` scrape.
    pub fn add_metrics(&self, source: crate::rest::metrics::Source) {
        self.state.metrics.add_source(source);
    }

    /// Ends every open watch; used on shutdown.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    async fn bootstrap(&self) -> Result<(), ServerError> {
        let Some(def) = find("", "v1", "namespaces") else {
            return Ok(());
        };
        for ns in SYSTEM_NAMESPACES {
            if self.state.store.get(&def.key(None, ns)).is_some() {
                continue;
            }
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            match create_object(&self.state, def, obj, "kube-apiserver", false, true, None).await {
                Ok(_) => tracing::info!(namespace = ns, "created system namespace"),
                Err(e) if e.reason() == "AlreadyExists" => {}
                Err(e) => return Err(ServerError::Bootstrap(e.to_string())),
            }
        }
        self.bootstrap_priority_classes().await?;
        crate::rest::rbac::bootstrap(&self.state).await;
        crate::rest::crd::sync(&self.state).await;
        crate::rest::namespace::sync_all(&self.state).await;
        Ok(())
    }

    /// `system-node-critical` and `system-cluster-critical`, as
    /// kube-apiserver's scheduling post-start hook creates them.
    async fn bootstrap_priority_classes(&self) -> Result<(), ServerError> {
        let Some(def) = find("scheduling.k8s.io", "v1", "priorityclasses") else {
            return Ok(());
        };
        for class in exitplan_api::scheduling::priority_class::system_priority_classes() {
            let name = class.metadata.name.clone().unwrap_or_default();
            if self.state.store.get(&def.key(None, &name)).is_some() {
                continue;
            }
            let obj =
                serde_json::to_value(&class).map_err(|e| ServerError::Bootstrap(e.to_string()))?;
            match create_object(&self.state, def, obj, "kube-apiserver", false, true, None).await {
                Ok(_) => tracing::info!(priority_class = %name, "created system priority class"),
                Err(e) if e.reason() == "AlreadyExists" => {}
                Err(e) => return Err(ServerError::Bootstrap(e.to_string())),
            }
        }
        Ok(())
    }

    /// Serves HTTP on `listener` until `signal` completes; then stops
    /// accepting, ends watches and lets in-flight requests finish. Each
    /// connection is served in its own task under the
    /// [`ConnectionLimits`].
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        self.serve_with(listener, None, signal).await
    }

    /// Serves HTTPS with `config` on `listener` until `signal` completes
    /// (see [`Server::serve`]); each TLS handshake runs in its
    /// connection's task, within the handshake timeout.
    pub async fn serve_tls(
        &self,
        listener: tokio::net::TcpListener,
        config: Arc<rustls::ServerConfig>,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        self.serve_with(listener, Some(acceptor), signal).await
    }

    async fn serve_with(
        &self,
        listener: tokio::net::TcpListener,
        tls: Option<tokio_rustls::TlsAcceptor>,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let this = self.clone();
        crate::serving::serve(
            listener,
            tls,
            self.router(),
            self.limits,
            signal,
            move || this.shutdown(),
        )
        .await
    }
}
