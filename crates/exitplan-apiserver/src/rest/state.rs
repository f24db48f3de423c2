//! What every handler shares (the store, the clock, the token, the
//! authenticator and authorizer, the shutdown signal) and the one resolved
//! request a handler works on.

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use bytes::Bytes;

use super::query::Query;
use crate::clock::SharedClock;
use crate::registry::{Registry, ResourceDef};
use crate::storage::Store;

/// The server's shared state.
#[derive(Debug)]
pub struct State {
    /// Object storage.
    pub store: Store,
    /// The one clock.
    pub clock: SharedClock,
    /// The admin bearer token (user `kubernetes-admin` in `system:masters`).
    /// `None`: requests without credentials are that admin (in-process
    /// clients); with a token, they get a 401. Service account tokens are
    /// accepted either way.
    pub token: Option<String>,
    /// Flips to `true` when the server shuts down; watches end.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// How often a watch with `allowWatchBookmarks` sends a BOOKMARK.
    pub bookmark_interval: Duration,
    /// The server's metrics (`/metrics`).
    pub metrics: Arc<super::metrics::ApiMetrics>,
    /// Held across a Service write: address allocation reads the stored
    /// Services, so their writes go one at a time.
    pub service_writes: tokio::sync::Mutex<()>,
    /// The resources served (built-in, and custom ones from established CRDs).
    pub registry: Registry,
    /// Held while the CRD controllers run ([`super::crd::sync`]).
    pub crd_sync: tokio::sync::Mutex<()>,
    /// The RBAC policy snapshot requests are authorized against.
    pub rbac: super::rbac::RbacCache,
    /// Held while ClusterRoles are aggregated ([`super::rbac::aggregate`]).
    pub rbac_aggregation: tokio::sync::Mutex<()>,
    /// Authenticates bearer tokens; holds the service account signing key.
    pub authn: crate::authn::Authenticator,
    /// Authorizes impersonation (and, with RBAC, every request).
    pub authorizer: Arc<dyn crate::authn::Authorize>,
    /// The admission webhook configurations, cached ([`crate::webhook`]).
    pub webhooks: crate::webhook::Webhooks,
}

/// One request against a served resource.
#[derive(Debug)]
pub struct Call {
    /// Shared state.
    pub state: Arc<State>,
    /// The resource addressed.
    pub def: &'static ResourceDef,
    /// Namespace from the path (namespaced resources only).
    pub namespace: Option<String>,
    /// Object name from the path.
    pub name: Option<String>,
    /// Subresource from the path.
    pub subresource: Option<String>,
    /// Query parameters.
    pub query: Query,
    /// Request headers.
    pub headers: HeaderMap,
    /// Request body.
    pub body: Bytes,
    /// Who the request is (after impersonation).
    pub user: Arc<exitplan_authz::UserInfo>,
}

impl Call {
    /// The object name (handlers for named verbs only run with one).
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    /// The namespace to use for keys (`None` for cluster-scoped resources).
    pub fn ns(&self) -> Option<&str> {
        self.namespace.as_deref().filter(|_| self.def.namespaced)
    }
}
