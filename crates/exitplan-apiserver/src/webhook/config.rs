//! The webhook configurations, read from the store as k8s-openapi types and
//! cached: a request checks the store's revision (and, when it moved, the
//! [`Store::fingerprint`] of the configurations) and reuses the parsed
//! hooks and their HTTPS clients until a configuration changes. With no
//! configuration stored, a request costs one revision compare.

use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MutatingWebhookConfiguration, RuleWithOperations,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::storage::{Prefix, Store, StoredObject};

/// Where the mutating configurations are stored.
pub const MUTATING_STORAGE: &str = "mutatingwebhookconfigurations.admissionregistration.k8s.io";
/// Where the validating configurations are stored.
pub const VALIDATING_STORAGE: &str = "validatingwebhookconfigurations.admissionregistration.k8s.io";

/// `timeoutSeconds` when unset (the v1 default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One webhook of a configuration, with its defaults applied.
#[derive(Debug)]
pub struct Hook {
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's name.
    pub name: String,
    /// Unique among the hooks of one snapshot (reinvocation bookkeeping).
    pub uid: usize,
    /// Where to call.
    pub client_config: WebhookClientConfig,
    /// The rules.
    pub rules: Vec<RuleWithOperations>,
    /// `failurePolicy: Ignore` (default `Fail`).
    pub ignore_failures: bool,
    /// `matchPolicy: Exact` (default `Equivalent`).
    pub exact: bool,
    /// `namespaceSelector` (unset: everything).
    pub namespace_selector: Option<LabelSelector>,
    /// `objectSelector` (unset: everything).
    pub object_selector: Option<LabelSelector>,
    /// `sideEffects` (empty when unset).
    pub side_effects: String,
    /// `timeoutSeconds` (default 10 s).
    pub timeout: Duration,
    /// `matchConditions`.
    pub match_conditions: Vec<MatchCondition>,
    /// `reinvocationPolicy: IfNeeded` (mutating only).
    pub reinvoke: bool,
    client: OnceLock<Result<Arc<super::client::Client>, String>>,
    conditions: OnceLock<Result<super::conditions::Compiled, String>>,
}

impl Hook {
    /// The HTTPS client of this webhook (built once from `caBundle`).
    pub fn client(&self) -> Result<Arc<super::client::Client>, String> {
        self.client
            .get_or_init(|| {
                super::client::Client::new(self.client_config.ca_bundle.as_ref().map(|b| &b.0[..]))
                    .map(Arc::new)
            })
            .clone()
    }

    /// The compiled `matchConditions`.
    pub fn conditions(&self) -> &Result<super::conditions::Compiled, String> {
        self.conditions
            .get_or_init(|| super::conditions::Compiled::new(&self.match_conditions))
    }
}

/// The hooks of every configuration at one state of the store, in call
/// order (configurations by name, then webhooks in order).
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Store revision this snapshot was checked against.
    revision: u64,
    /// [`Store::fingerprint`] of the mutating, then the validating configurations.
    fingerprint: [(usize, u64); 2],
    /// The mutating webhooks.
    pub mutating: Vec<Arc<Hook>>,
    /// The validating webhooks.
    pub validating: Vec<Arc<Hook>>,
}

/// The cached webhook configurations of one server.
#[derive(Debug, Default)]
pub struct Webhooks {
    cache: RwLock<Option<Arc<Snapshot>>>,
}

impl Webhooks {
    /// An empty cache.
    pub fn new() -> Webhooks {
        Webhooks::default()
    }

    /// The current hooks: the cached ones while the store has not moved or
    /// no configuration changed, read again otherwise.
    pub fn snapshot(&self, store: &Store) -> Arc<Snapshot> {
        let revision = store.revision();
        let cached = self.cache.read().ok().and_then(|c| c.clone());
        if let Some(s) = &cached
            && s.revision == revision
        {
            return Arc::clone(s);
        }
        let mutating = Prefix::new(MUTATING_STORAGE, None);
        let validating = Prefix::new(VALIDATING_STORAGE, None);
        let fingerprint = [store.fingerprint(&mutating), store.fingerprint(&validating)];
        let fresh = match cached {
            Some(s) if s.fingerprint == fingerprint => Arc::new(Snapshot {
                revision,
                fingerprint,
                mutating: s.mutating.clone(),
                validating: s.validating.clone(),
            }),
            _ => Arc::new(build(
                revision,
                fingerprint,
                &store.list(&mutating).0,
                &store.list(&validating).0,
            )),
        };
        if let Ok(mut c) = self.cache.write()
            && c.as_ref().is_none_or(|s| s.revision <= revision)
        {
            *c = Some(Arc::clone(&fresh));
        }
        fresh
    }
}

fn build(
    revision: u64,
    fingerprint: [(usize, u64); 2],
    mutating: &[Arc<StoredObject>],
    validating: &[Arc<StoredObject>],
) -> Snapshot {
    let mut uid = 0;
    let mut next = || {
        uid += 1;
        uid
    };
    let mut snapshot = Snapshot {
        revision,
        fingerprint,
        ..Snapshot::default()
    };
    for stored in mutating {
        let Some(config) = parse::<MutatingWebhookConfiguration>(stored) else {
            continue;
        };
        let configuration = config.metadata.name.unwrap_or_default();
        for w in config.webhooks.unwrap_or_default() {
            snapshot.mutating.push(Arc::new(Hook {
                configuration: configuration.clone(),
                name: w.name,
                uid: next(),
                client_config: w.client_config,
                rules: w.rules.unwrap_or_default(),
                ignore_failures: w.failure_policy.as_deref() == Some("Ignore"),
                exact: w.match_policy.as_deref() == Some("Exact"),
                namespace_selector: w.namespace_selector,
                object_selector: w.object_selector,
                side_effects: w.side_effects,
                timeout: timeout(w.timeout_seconds),
                match_conditions: w.match_conditions.unwrap_or_default(),
                reinvoke: w.reinvocation_policy.as_deref() == Some("IfNeeded"),
                client: OnceLock::new(),
                conditions: OnceLock::new(),
            }));
        }
    }
    for stored in validating {
        let Some(config) = parse::<ValidatingWebhookConfiguration>(stored) else {
            continue;
        };
        let configuration = config.metadata.name.unwrap_or_default();
        for w in config.webhooks.unwrap_or_default() {
            snapshot.validating.push(Arc::new(Hook {
                configuration: configuration.clone(),
                name: w.name,
                uid: next(),
                client_config: w.client_config,
                rules: w.rules.unwrap_or_default(),
                ignore_failures: w.failure_policy.as_deref() == Some("Ignore"),
                exact: w.match_policy.as_deref() == Some("Exact"),
                namespace_selector: w.namespace_selector,
                object_selector: w.object_selector,
                side_effects: w.side_effects,
                timeout: timeout(w.timeout_seconds),
                match_conditions: w.match_conditions.unwrap_or_default(),
                reinvoke: false,
                client: OnceLock::new(),
                conditions: OnceLock::new(),
            }));
        }
    }
    snapshot
}

fn timeout(seconds: Option<i32>) -> Duration {
    seconds
        .and_then(|s| u64::try_from(s).ok())
        .filter(|s| *s > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
}

fn parse<T: serde::de::DeserializeOwned>(stored: &StoredObject) -> Option<T> {
    match serde_json::from_slice(&stored.json) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(key = stored.key.as_str(), error = %e, "unreadable webhook configuration: skipped");
            None
        }
    }
}
