//! The served kinds beyond the collector's fixed table, found as upstream's
//! collector finds them (`GetDeletableResources`): every resource that
//! discovery lists with the `delete`, `list` and `watch` verbs, in its
//! group's preferred version, subresources left out. Each gets a light
//! watch on [`DynamicObject`] (only the metadata of the objects the
//! collector may act on is kept). Discovery runs at start, every
//! [`DISCOVERY_PERIOD`] (upstream resyncs its monitors every 30 s) and when
//! a CustomResourceDefinition changes or goes; kinds no longer served stop
//! being watched. The server starts serving a CRD's resource just after
//! writing its `Established` status, so while an established CRD's resource
//! is missing from discovery, discovery is retried after [`RETRY`] (a few
//! times, then at the period: a CRD the server refuses to serve must not
//! cost a discovery a second).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject};
use kube::discovery::{Discovery, Scope, verbs};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event as WatchEvent};
use tokio::sync::Notify;
use tokio::task::{AbortHandle, JoinSet};

use super::{Collector, GcKind, Light, Remote};

/// How often the served kinds are discovered again.
pub(super) const DISCOVERY_PERIOD: Duration = Duration::from_secs(30);

/// How soon discovery is retried when an established CRD's resource is not
/// served yet (the server registers it just after writing the CRD's
/// status), and how many times before waiting for the period.
const RETRY: Duration = Duration::from_secs(1);
const RETRIES: u32 = 5;

/// The `(group, plural)` of the established CRDs not being deleted.
type Established = Arc<Mutex<BTreeSet<(String, String)>>>;

/// One discovered resource, as watched: a change of any part (a new
/// preferred version, another scope) is a new watch.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Served {
    group: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
}

/// The discovery loop and the light watches it started.
pub(super) struct Discovered {
    collector: Collector,
    client: kube::Client,
    /// Each watched resource's slot in the collector's table and its watch.
    running: HashMap<Served, (usize, AbortHandle)>,
    /// The watches (and the CRD watch); dropped with the loop, which aborts
    /// them.
    tasks: JoinSet<()>,
    /// Notified when a CustomResourceDefinition changed.
    changed: Arc<Notify>,
    /// What the CRDs say should be served.
    established: Established,
}

impl Discovered {
    /// The discovery of `client`'s served kinds for `collector`.
    pub(super) fn new(collector: Collector, client: kube::Client) -> Self {
        Discovered {
            collector,
            client,
            running: HashMap::new(),
            tasks: JoinSet::new(),
            changed: Arc::new(Notify::new()),
            established: Established::default(),
        }
    }

    /// Discovers now, then every `period` and on every CRD change.
    pub(super) async fn run(mut self, period: Duration) {
        self.tasks.spawn(crd_changes(
            self.client.clone(),
            self.changed.clone(),
            self.established.clone(),
        ));
        let mut retries = 0;
        loop {
            self.refresh().await;
            self.collector.discovered.send_replace(true);
            while self.tasks.try_join_next().is_some() {}
            let wait = if self.missing() && retries < RETRIES {
                retries += 1;
                RETRY
            } else {
                retries = 0;
                period
            };
            let changed = self.changed.clone();
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = changed.notified() => {}
            }
        }
    }

    /// Whether an established CRD's resource is not watched yet.
    fn missing(&self) -> bool {
        let Ok(established) = self.established.lock() else {
            return false;
        };
        established.iter().any(|(group, plural)| {
            !self
                .running
                .keys()
                .any(|s| &s.group == group && &s.plural == plural)
        })
    }

    /// Starts watching the newly served kinds, stops watching the gone ones
    /// (a failed discovery changes nothing: retried later).
    async fn refresh(&mut self) {
        let found = match self.served().await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "garbage collector: discovery failed; retrying later");
                return;
            }
        };
        let gone: Vec<Served> = self
            .running
            .keys()
            .filter(|s| !found.contains(*s))
            .cloned()
            .collect();
        for served in gone {
            if let Some((slot, watch)) = self.running.remove(&served) {
                tracing::info!(group = %served.group, resource = %served.plural, "garbage collector: resource no longer served");
                watch.abort();
                self.collector.remove(slot);
            }
        }
        for served in found {
            if self.running.contains_key(&served) {
                continue;
            }
            let ar = kube::discovery::ApiResource {
                group: served.group.clone(),
                version: served.version.clone(),
                api_version: if served.group.is_empty() {
                    served.version.clone()
                } else {
                    format!("{}/{}", served.group, served.version)
                },
                kind: served.kind.clone(),
                plural: served.plural.clone(),
            };
            let remote = Remote::<DynamicObject>::dynamic(&self.client, &ar, served.namespaced);
            let kind: Arc<dyn GcKind> =
                Arc::new(Light::new(remote, &[&served.group], &served.kind));
            let slot = self.collector.add(kind.clone());
            let Some(watch) = kind.run() else { continue };
            tracing::debug!(group = %served.group, resource = %served.plural, slot, "garbage collector: watching resource");
            let handle = self.tasks.spawn(watch);
            self.collector
                .recheck_dependents_of(&served.group, &served.kind);
            self.running.insert(served, (slot, handle));
        }
    }

    /// The deletable resources the fixed table does not cover.
    async fn served(&self) -> Result<BTreeSet<Served>, kube::Error> {
        let discovery = Discovery::new(self.client.clone()).run().await?;
        let fixed: Vec<Arc<dyn GcKind>> = self
            .collector
            .table()
            .iter()
            .take(self.collector.fixed)
            .flatten()
            .cloned()
            .collect();
        let mut found = BTreeSet::new();
        for group in discovery.groups() {
            for (ar, caps) in group.recommended_resources() {
                let deletable = [verbs::DELETE, verbs::LIST, verbs::WATCH]
                    .iter()
                    .all(|v| caps.supports_operation(v));
                if !deletable || fixed.iter().any(|k| k.is(&ar.group, &ar.kind)) {
                    continue;
                }
                found.insert(Served {
                    namespaced: caps.scope == Scope::Namespaced,
                    group: ar.group,
                    version: ar.version,
                    kind: ar.kind,
                    plural: ar.plural,
                });
            }
        }
        Ok(found)
    }
}

/// The `(group, plural)` `crd` makes served, if it is established and not
/// being deleted.
fn serves(crd: &CustomResourceDefinition) -> Option<(String, String)> {
    let established = crd
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        });
    (established && crd.metadata.deletion_timestamp.is_none())
        .then(|| (crd.spec.group.clone(), crd.spec.names.plural.clone()))
}

/// Notifies `changed` whenever a CustomResourceDefinition is added, changes
/// (it becomes established) or goes, keeping `established` up to date.
async fn crd_changes(client: kube::Client, changed: Arc<Notify>, established: Established) {
    let api: Api<CustomResourceDefinition> = Api::all(client);
    let mut stream = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    let mut listing = BTreeSet::new();
    let mut by_name: HashMap<String, (String, String)> = HashMap::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(WatchEvent::Apply(crd)) => {
                let name = crd.metadata.name.clone().unwrap_or_default();
                match serves(&crd) {
                    Some(gr) => by_name.insert(name, gr),
                    None => by_name.remove(&name),
                };
                set(&established, by_name.values().cloned().collect());
                changed.notify_one();
            }
            Ok(WatchEvent::Delete(crd)) => {
                by_name.remove(&crd.metadata.name.clone().unwrap_or_default());
                set(&established, by_name.values().cloned().collect());
                changed.notify_one();
            }
            Ok(WatchEvent::Init) => listing.clear(),
            Ok(WatchEvent::InitApply(crd)) => {
                if let Some(gr) = serves(&crd) {
                    listing.insert((crd.metadata.name.clone().unwrap_or_default(), gr));
                }
            }
            Ok(WatchEvent::InitDone) => {
                by_name = std::mem::take(&mut listing).into_iter().collect();
                set(&established, by_name.values().cloned().collect());
                changed.notify_one();
            }
            Err(e) => {
                tracing::debug!(error = %e, "garbage collector: CRD watch failed; retrying");
            }
        }
    }
}

fn set(established: &Established, now: BTreeSet<(String, String)>) {
    if let Ok(mut e) = established.lock() {
        *e = now;
    }
}
