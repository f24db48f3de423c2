//! Informers: a watch-fed cache of one resource, with secondary indexes and
//! change events that carry both the old and the new object (client-go's
//! shared informer, on kube-runtime's watcher).
//!
//! Controllers register indexes and handlers before [`Informer::run`] starts
//! the watch; several controllers share one informer per resource, so a
//! 10,000-pod cluster is cached once. Cached objects carry no
//! `metadata.managedFields`.
//!
//! A (re-)list is applied to the cache as its pages arrive, and the objects
//! it did not return are removed at its end: the cache never holds a second
//! copy of the collection, so a relist of large objects does not double the
//! informer's memory.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, RwLock};

use futures_util::StreamExt;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// Where an object lives: namespace (`None` for cluster-scoped) and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// The namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// The key of `obj`.
    pub fn of<K: Resource>(obj: &K) -> Self {
        ObjectKey {
            namespace: obj.meta().namespace.clone(),
            name: obj.meta().name.clone().unwrap_or_default(),
        }
    }

    /// A key from parts.
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        ObjectKey {
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// One change seen by an informer.
#[derive(Debug)]
pub enum Change<K> {
    /// A new object.
    Added(Arc<K>),
    /// An object changed (its resourceVersion differs).
    Updated {
        /// The previous version.
        old: Arc<K>,
        /// The new version.
        new: Arc<K>,
    },
    /// An object was deleted (its last known state).
    Deleted(Arc<K>),
}

type Indexer<K> = Box<dyn Fn(&K) -> Vec<String> + Send + Sync>;
type Handler<K> = Box<dyn Fn(&Change<K>) + Send + Sync>;

struct Cache<K> {
    objects: HashMap<ObjectKey, Arc<K>>,
    /// index name → value → keys.
    indexes: HashMap<&'static str, HashMap<String, BTreeSet<ObjectKey>>>,
}

struct Inner<K> {
    cache: RwLock<Cache<K>>,
    indexers: RwLock<Vec<(&'static str, Indexer<K>)>>,
    handlers: RwLock<Vec<Handler<K>>>,
    synced: watch::Sender<bool>,
}

/// A cache of one resource kept current by a watch.
pub struct Informer<K> {
    api: Api<K>,
    inner: Arc<Inner<K>>,
}

impl<K: Clone> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Informer {
            api: self.api.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<K> std::fmt::Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer").finish_non_exhaustive()
    }
}

impl<K> Informer<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default,
{
    /// An informer over `api` (all namespaces or one, as the `Api` says).
    pub fn new(api: Api<K>) -> Self {
        let (synced, _) = watch::channel(false);
        Informer {
            api,
            inner: Arc::new(Inner {
                cache: RwLock::new(Cache {
                    objects: HashMap::new(),
                    indexes: HashMap::new(),
                }),
                indexers: RwLock::new(Vec::new()),
                handlers: RwLock::new(Vec::new()),
                synced,
            }),
        }
    }

    /// Adds a secondary index: `f` maps an object to its index values.
    /// Register before [`Informer::run`].
    pub fn add_index(
        &self,
        name: &'static str,
        f: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) {
        if let Ok(mut ix) = self.inner.indexers.write() {
            ix.push((name, Box::new(f)));
        }
    }

    /// Whether an index called `name` is registered (so components sharing
    /// an index register it once).
    pub fn has_index(&self, name: &str) -> bool {
        self.inner
            .indexers
            .read()
            .is_ok_and(|ix| ix.iter().any(|(n, _)| *n == name))
    }

    /// Adds a change handler (called outside the cache lock, in watch order).
    /// Register before [`Informer::run`].
    pub fn on_change(&self, f: impl Fn(&Change<K>) + Send + Sync + 'static) {
        if let Ok(mut hs) = self.inner.handlers.write() {
            hs.push(Box::new(f));
        }
    }

    /// The cached object at `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.inner.cache.read().ok()?.objects.get(key).cloned()
    }

    /// Every cached object.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner
            .cache
            .read()
            .map(|c| c.objects.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The cached objects whose index `name` has `value`, in key order.
    pub fn by_index(&self, name: &str, value: &str) -> Vec<Arc<K>> {
        let Ok(c) = self.inner.cache.read() else {
            return Vec::new();
        };
        c.indexes
            .get(name)
            .and_then(|ix| ix.get(value))
            .map(|keys| {
                keys.iter()
                    .filter_map(|k| c.objects.get(k).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the first full list has been loaded.
    pub fn is_synced(&self) -> bool {
        *self.inner.synced.borrow()
    }

    /// Waits until the first full list has been loaded.
    pub async fn wait_synced(&self) {
        let mut rx = self.inner.synced.subscribe();
        // An error means the informer was dropped: nothing to wait for.
        let _ = rx.wait_for(|synced| *synced).await;
    }

    fn index_values(&self, obj: &K) -> Vec<(&'static str, Vec<String>)> {
        self.inner
            .indexers
            .read()
            .map(|ix| ix.iter().map(|(name, f)| (*name, f(obj))).collect())
            .unwrap_or_default()
    }

    /// Stores `obj` (or removes `key` when `obj` is `None`), keeping the indexes
    /// current; returns the previous version.
    fn store(&self, key: &ObjectKey, obj: Option<Arc<K>>) -> Option<Arc<K>> {
        let new_values = obj.as_ref().map(|o| self.index_values(o));
        let old = self.inner.cache.read().ok()?.objects.get(key).cloned();
        let old_values = old.as_ref().map(|o| self.index_values(o));
        let mut c = self.inner.cache.write().ok()?;
        for (name, values) in old_values.into_iter().flatten() {
            let ix = c.indexes.entry(name).or_default();
            for v in values {
                if let Some(keys) = ix.get_mut(&v) {
                    keys.remove(key);
                    if keys.is_empty() {
                        ix.remove(&v);
                    }
                }
            }
        }
        for (name, values) in new_values.into_iter().flatten() {
            let ix = c.indexes.entry(name).or_default();
            for v in values {
                ix.entry(v).or_default().insert(key.clone());
            }
        }
        match obj {
            Some(o) => c.objects.insert(key.clone(), o),
            None => c.objects.remove(key),
        }
    }

    fn emit(&self, change: &Change<K>) {
        if let Ok(hs) = self.inner.handlers.read() {
            for h in hs.iter() {
                h(change);
            }
        }
    }

    fn apply(&self, obj: K) {
        let key = ObjectKey::of(&obj);
        let new = Arc::new(obj);
        match self.store(&key, Some(new.clone())) {
            None => self.emit(&Change::Added(new)),
            Some(old) if old.resource_version() == new.resource_version() => {}
            Some(old) => self.emit(&Change::Updated { old, new }),
        }
    }

    fn delete(&self, obj: K) {
        let key = ObjectKey::of(&obj);
        let last = self.store(&key, None).unwrap_or_else(|| Arc::new(obj));
        self.emit(&Change::Deleted(last));
    }

    /// Ends a (re-)list whose objects were applied as they came: removes
    /// the cached objects it did not return (emitting their deletion) and
    /// marks the cache synced.
    fn finish_list(&self, listed: &HashSet<ObjectKey>) {
        let gone: Vec<ObjectKey> = self
            .inner
            .cache
            .read()
            .map(|c| {
                c.objects
                    .keys()
                    .filter(|k| !listed.contains(*k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for key in gone {
            if let Some(last) = self.store(&key, None) {
                self.emit(&Change::Deleted(last));
            }
        }
        self.inner.synced.send_replace(true);
    }

    /// Runs the watch until the stream ends (it retries with back-off on errors).
    pub async fn run(self) {
        let mut stream = watcher::watcher(self.api.clone(), watcher::Config::default())
            .default_backoff()
            .boxed();
        // The keys a (re-)list in progress has returned so far.
        let mut listing: Option<HashSet<ObjectKey>> = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => self.handle(&mut listing, event),
                Err(e) => {
                    tracing::warn!(kind = K::kind(&Default::default()).as_ref(), error = %e, "watch failed; retrying")
                }
            }
        }
    }

    /// Applies one watcher event; `listing` holds the keys a (re-)list in
    /// progress has returned so far.
    fn handle(&self, listing: &mut Option<HashSet<ObjectKey>>, event: Event<K>) {
        match event {
            Event::Init => *listing = Some(HashSet::new()),
            Event::InitApply(obj) => {
                if let Some(l) = listing.as_mut() {
                    l.insert(ObjectKey::of(&obj));
                    self.apply(without_managed_fields(obj));
                }
            }
            Event::InitDone => self.finish_list(&listing.take().unwrap_or_default()),
            Event::Apply(obj) => self.apply(without_managed_fields(obj)),
            Event::Delete(obj) => self.delete(without_managed_fields(obj)),
        }
    }
}

/// `obj` without `metadata.managedFields`, as cached (client-go's
/// `TransformStripManagedFields`): no controller reads them from the cache,
/// and with several Server-Side Apply managers they are often the larger part
/// of an object.
fn without_managed_fields<K: Resource>(mut obj: K) -> K {
    obj.meta_mut().managed_fields = None;
    obj
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use k8s_openapi::api::core::v1::Pod;

    use super::*;

    fn pod(name: &str, rv: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = Some(name.to_owned());
        p.metadata.namespace = Some("default".to_owned());
        p.metadata.resource_version = Some(rv.to_owned());
        p
    }

    #[tokio::test]
    async fn a_relist_updates_the_cache_as_its_objects_arrive() {
        let server = exitplan_apiserver::server::Server::builder()
            .store(exitplan_apiserver::storage::Store::in_memory().expect("store"))
            .build()
            .await
            .expect("server");
        let client = kube::Client::new(server.router(), "default");
        let informer: Informer<Pod> = Informer::new(Api::all(client));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        informer.on_change(move |c| {
            let what = match c {
                Change::Added(p) => format!("added {}", p.name_any()),
                Change::Updated { new, .. } => format!("updated {}", new.name_any()),
                Change::Deleted(p) => format!("deleted {}", p.name_any()),
            };
            log.lock().expect("log").push(what);
        });
        let rv = |name: &str| {
            informer
                .get(&ObjectKey::new(Some("default"), name))
                .and_then(|p| p.metadata.resource_version.clone())
        };
        let mut listing = None;
        informer.handle(&mut listing, Event::Init);
        informer.handle(&mut listing, Event::InitApply(pod("a", "1")));
        informer.handle(&mut listing, Event::InitApply(pod("b", "2")));
        informer.handle(&mut listing, Event::InitDone);
        assert!(informer.is_synced());
        // A relist: `a` changed, `b` is gone. The cache takes `a`'s new
        // version at once (no second copy of the list is kept) and drops
        // `b` when the list ends.
        informer.handle(&mut listing, Event::Init);
        informer.handle(&mut listing, Event::InitApply(pod("a", "3")));
        assert_eq!(
            (rv("a"), rv("b")),
            (Some("3".to_owned()), Some("2".to_owned()))
        );
        informer.handle(&mut listing, Event::InitDone);
        assert_eq!((rv("a"), rv("b")), (Some("3".to_owned()), None));
        assert_eq!(
            *seen.lock().expect("log"),
            ["added a", "added b", "updated a", "deleted b"]
        );
    }
}
