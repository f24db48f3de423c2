//! The garbage collector of owner references (upstream
//! `pkg/controller/garbagecollector`), background propagation, on the pure
//! decisions of [`exitplan_control::gc`]:
//!
//! * a dependent whose owners are all gone is deleted, references to gone
//!   owners are stripped while others remain ([`dependent_action`]); before
//!   acting, every owner the cache reports gone is confirmed absent with a
//!   live GET (a cache that has not seen a new owner yet must not delete);
//! * an owner being deleted with the `orphan` finalizer releases its
//!   dependents first, one with `foregroundDeletion` deletes them first
//!   ([`owner_plan`]); then the finalizer goes.
//!
//! The kinds are one table, every kind the API server serves, each both a
//! possible owner and a possible dependent, namespaced or cluster-scoped.
//! A fixed part ([`kinds`]): the kinds with a shared informer are read from
//! its cache; namespaces, leases and events (numerous; the core and
//! `events.k8s.io` Events share one storage, hence one entry) have a light
//! watch of their own ([`Light`]). Every other served kind — the built-in
//! kinds without an informer (ConfigMaps, Deployments, …) and the custom
//! resources of established CRDs — is found by discovery, as upstream's
//! `GetDeletableResources` finds it (the resources with `delete`, `list` and
//! `watch`, preferred version, no subresources), at start, every 30 s and
//! whenever a CRD changes or goes, and gets a light watch on
//! [`DynamicObject`] ([`discovery`]); a kind no longer served stops being
//! watched. A light watch keeps only the metadata of the objects the
//! collector may act on — those with owner references and those being
//! deleted with one of its finalizers — so the memory they cost is that of
//! these few objects, not of every ConfigMap, Secret or event.
//!
//! The workers start once the fixed kinds have listed, and the kinds of the
//! first discovery too, but these for at most 30 s: a kind that fails to
//! list (a broken CRD) is logged and retried by its watch, it does not
//! stall the collector. A kind discovered later is not waited for: an owner
//! its cache does not have yet is confirmed gone with a live GET before any
//! dependent is touched, and the dependents already naming the new kind are
//! looked at again once it is watched.
//!
//! Namespaces: the API server itself runs the namespace deleter (content
//! deleted, then `kubernetes` removed from `spec.finalizers` through
//! `/finalize`); a namespace deleted with `Foreground` or `Orphan` keeps
//! that finalizer in `metadata.finalizers`, which the collector removes like
//! any owner's — the update that removes it removes the namespace.

mod discovery;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::{Arc, Mutex, RwLock};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, Preconditions,
    PropagationPolicy,
};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event as WatchEvent};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use exitplan_control::gc::{
    DependentAction, OwnerState, dependent_action, gc_meta, has_gc_finalizer, needs_tracking,
    owner_plan,
};

use crate::context::{Context, Task};
use crate::informer::{Change, Informer, ObjectKey};
use crate::queue::Queue;
use discovery::{DISCOVERY_PERIOD, Discovered};

/// Index of dependents by the UIDs of their owners.
const OWNER_UID_INDEX: &str = "gc/owner-uid";

/// Name of the dependents' work queue.
pub const DEPENDENT_QUEUE_NAME: &str = "garbage_collector_attempt_to_delete";
/// Name of the owners' (finalizer) work queue.
pub const OWNER_QUEUE_NAME: &str = "garbage_collector_attempt_to_orphan";

/// A change handler on metadata: `(old, new)`, `None` for an absent side.
type MetaHandler = Box<dyn Fn(Option<&ObjectMeta>, Option<&ObjectMeta>) + Send + Sync>;

/// One kind the collector handles, as an object-safe view of its cache and
/// API.
trait GcKind: Send + Sync {
    /// Whether owner references with API group `group` (`""` for core) and
    /// `kind` name this kind.
    fn is(&self, group: &str, kind: &str) -> bool;
    /// Whether its objects live in namespaces.
    fn namespaced(&self) -> bool;
    /// The cached object's metadata.
    fn cached(&self, key: &ObjectKey) -> Option<ObjectMeta>;
    /// Keys of cached objects referencing owner `uid`.
    fn referencing(&self, uid: &str) -> Vec<ObjectKey>;
    /// Keys of cached objects with an owner reference naming `group`
    /// (`""` for core) and `kind`.
    fn naming(&self, group: &str, kind: &str) -> Vec<ObjectKey>;
    /// Adds the owner-UID index (to a shared informer).
    fn index_owners(&self);
    /// Calls `f(old, new)` on every change (`None` for absent sides).
    fn watch(&self, f: MetaHandler);
    /// The kind's own watch loop, if it has no shared informer.
    fn run(&self) -> Option<Task>;
    /// Completes once the kind's cache holds a first full listing (at once
    /// for shared informers: the runtime starts workers after their sync).
    fn synced(&self) -> BoxFuture<'static, ()>;
    /// The kind's API.
    fn remote(&self) -> &dyn RemoteApi;
    /// The live object's metadata (`None` when not found).
    fn get_live(
        &self,
        key: ObjectKey,
    ) -> BoxFuture<'static, Result<Option<ObjectMeta>, kube::Error>> {
        self.remote().get_live(key)
    }
    /// A merge patch of the object.
    fn merge_patch(
        &self,
        key: ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), kube::Error>> {
        self.remote().merge_patch(key, patch)
    }
    /// Deletes the object.
    fn delete(
        &self,
        key: ObjectKey,
        dp: DeleteParams,
    ) -> BoxFuture<'static, Result<(), kube::Error>> {
        self.remote().delete(key, dp)
    }
}

/// The calls the collector makes on one kind's objects.
trait RemoteApi: Send + Sync {
    /// The live object's metadata (`None` when not found).
    fn get_live(
        &self,
        key: ObjectKey,
    ) -> BoxFuture<'static, Result<Option<ObjectMeta>, kube::Error>>;
    /// A merge patch of the object.
    fn merge_patch(
        &self,
        key: ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), kube::Error>>;
    /// Deletes the object (gone already counts as done).
    fn delete(
        &self,
        key: ObjectKey,
        dp: DeleteParams,
    ) -> BoxFuture<'static, Result<(), kube::Error>>;
}

/// What the collector needs of an object type (typed or dynamic).
trait Obj: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static {}
impl<K> Obj for K where K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static {}

/// What the collector needs of a typed resource.
trait Kind: Obj + Resource<DynamicType = ()> {}
impl<K> Kind for K where K: Obj + Resource<DynamicType = ()> {}

/// The API of one object of a kind, by namespace (`None` when
/// cluster-scoped).
type ApiOf<K> = Arc<dyn Fn(Option<&str>) -> Api<K> + Send + Sync>;

/// The API of a kind, namespaced or cluster-scoped.
struct Remote<K> {
    namespaced: bool,
    /// Every namespace (for the watch).
    all: Api<K>,
    api: ApiOf<K>,
}

impl<K: Clone> Clone for Remote<K> {
    fn clone(&self) -> Self {
        Remote {
            namespaced: self.namespaced,
            all: self.all.clone(),
            api: self.api.clone(),
        }
    }
}

impl<K: Kind> Remote<K> {
    fn namespaced(client: &kube::Client) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        let c = client.clone();
        Remote {
            namespaced: true,
            all: Api::all(client.clone()),
            api: Arc::new(move |ns| Api::namespaced(c.clone(), ns.unwrap_or_default())),
        }
    }

    fn cluster(client: &kube::Client) -> Self {
        let c = client.clone();
        Remote {
            namespaced: false,
            all: Api::all(client.clone()),
            api: Arc::new(move |_| Api::all(c.clone())),
        }
    }
}

impl Remote<DynamicObject> {
    /// A discovered resource's API.
    fn dynamic(client: &kube::Client, ar: &ApiResource, namespaced: bool) -> Self {
        let (c, r) = (client.clone(), ar.clone());
        Remote {
            namespaced,
            all: Api::all_with(client.clone(), ar),
            api: Arc::new(move |ns| match ns {
                Some(ns) if namespaced => Api::namespaced_with(c.clone(), ns, &r),
                _ => Api::all_with(c.clone(), &r),
            }),
        }
    }
}

impl<K: Obj> Remote<K> {
    fn of(&self, key: &ObjectKey) -> Api<K> {
        (self.api)(key.namespace.as_deref())
    }
}

impl<K: Obj> RemoteApi for Remote<K> {
    fn get_live(
        &self,
        key: ObjectKey,
    ) -> BoxFuture<'static, Result<Option<ObjectMeta>, kube::Error>> {
        let api = self.of(&key);
        Box::pin(async move { Ok(api.get_opt(&key.name).await?.map(|o| o.meta().clone())) })
    }

    fn merge_patch(
        &self,
        key: ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), kube::Error>> {
        let api = self.of(&key);
        Box::pin(async move {
            api.patch(&key.name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map(|_| ())
        })
    }

    fn delete(
        &self,
        key: ObjectKey,
        dp: DeleteParams,
    ) -> BoxFuture<'static, Result<(), kube::Error>> {
        let api = self.of(&key);
        Box::pin(async move {
            match api.delete(&key.name, &dp).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
                Err(e) => Err(e),
            }
        })
    }
}

/// A kind read from its shared informer.
struct Typed<K> {
    informer: Informer<K>,
    remote: Remote<K>,
}

fn typed<K>(informer: &Informer<K>, client: &kube::Client) -> Arc<dyn GcKind>
where
    K: Kind + Resource<Scope = NamespaceResourceScope>,
{
    Arc::new(Typed {
        informer: informer.clone(),
        remote: Remote::namespaced(client),
    })
}

fn typed_cluster<K: Kind>(informer: &Informer<K>, client: &kube::Client) -> Arc<dyn GcKind> {
    Arc::new(Typed {
        informer: informer.clone(),
        remote: Remote::cluster(client),
    })
}

/// The fixed kinds: those with a shared informer, and the light watches of
/// namespaces, leases and events; the other served kinds are discovered
/// ([`Discovered`]).
fn kinds(ctx: &Context) -> Vec<Arc<dyn GcKind>> {
    let i = &ctx.informers;
    let c = &ctx.client;
    vec![
        typed(&i.evictions, c),
        typed(&i.eviction_requests, c),
        typed(&i.pods, c),
        typed(&i.jobs, c),
        typed(&i.pdbs, c),
        typed_cluster(&i.nodes, c),
        Light::<Namespace>::typed(Remote::cluster(c), &[""]),
        Light::<Lease>::typed(Remote::namespaced(c), &["coordination.k8s.io"]),
        // One storage, two API groups.
        Light::<Event>::typed(Remote::namespaced(c), &["", "events.k8s.io"]),
    ]
}

impl<K: Kind> GcKind for Typed<K> {
    fn is(&self, group: &str, kind: &str) -> bool {
        K::group(&()) == group && K::kind(&()) == kind
    }

    fn namespaced(&self) -> bool {
        self.remote.namespaced
    }

    fn cached(&self, key: &ObjectKey) -> Option<ObjectMeta> {
        self.informer.get(key).map(|o| o.meta().clone())
    }

    fn referencing(&self, uid: &str) -> Vec<ObjectKey> {
        self.informer
            .by_index(OWNER_UID_INDEX, uid)
            .iter()
            .map(|o| ObjectKey::of(o.as_ref()))
            .collect()
    }

    fn naming(&self, group: &str, kind: &str) -> Vec<ObjectKey> {
        self.informer
            .list()
            .iter()
            .filter(|o| names(o.meta(), group, kind))
            .map(|o| ObjectKey::of(o.as_ref()))
            .collect()
    }

    fn index_owners(&self) {
        if !self.informer.has_index(OWNER_UID_INDEX) {
            self.informer.add_index(OWNER_UID_INDEX, |o: &K| {
                o.owner_references().iter().map(|r| r.uid.clone()).collect()
            });
        }
    }

    fn watch(&self, f: MetaHandler) {
        self.informer
            .on_change(move |change: &Change<K>| match change {
                Change::Added(new) => f(None, Some(new.meta())),
                Change::Updated { old, new } => f(Some(old.meta()), Some(new.meta())),
                Change::Deleted(old) => f(Some(old.meta()), None),
            });
    }

    fn run(&self) -> Option<Task> {
        None
    }

    fn synced(&self) -> BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }

    fn remote(&self) -> &dyn RemoteApi {
        &self.remote
    }
}

/// What a light watch remembers: the trimmed metadata of the objects
/// [`needs_tracking`] keeps, indexed by owner UID.
#[derive(Default)]
struct Tracked {
    objects: HashMap<ObjectKey, ObjectMeta>,
    by_owner: HashMap<String, BTreeSet<ObjectKey>>,
}

impl Tracked {
    fn unindex(&mut self, key: &ObjectKey, meta: &ObjectMeta) {
        for r in meta.owner_references.iter().flatten() {
            if let Some(keys) = self.by_owner.get_mut(&r.uid) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_owner.remove(&r.uid);
                }
            }
        }
    }

    /// Stores `meta` at `key` (or forgets `key` for `None`); the previous value.
    fn set(&mut self, key: &ObjectKey, meta: Option<ObjectMeta>) -> Option<ObjectMeta> {
        let old = self.objects.remove(key);
        if let Some(old) = &old {
            self.unindex(key, old);
        }
        if let Some(meta) = meta {
            for r in meta.owner_references.iter().flatten() {
                self.by_owner
                    .entry(r.uid.clone())
                    .or_default()
                    .insert(key.clone());
            }
            self.objects.insert(key.clone(), meta);
        }
        old
    }
}

/// A kind without a shared informer: its own watch, remembering only what
/// [`needs_tracking`] keeps (trimmed by [`gc_meta`]).
struct Light<K> {
    remote: Remote<K>,
    /// The API groups whose `kind` owner references name this kind.
    groups: Arc<[String]>,
    kind: Arc<str>,
    tracked: Arc<Mutex<Tracked>>,
    handlers: Arc<RwLock<Vec<MetaHandler>>>,
    /// Set once the first listing is in `tracked`.
    synced: Arc<tokio::sync::watch::Sender<bool>>,
}

impl<K: Clone> Clone for Light<K> {
    fn clone(&self) -> Self {
        Light {
            remote: self.remote.clone(),
            groups: self.groups.clone(),
            kind: self.kind.clone(),
            tracked: self.tracked.clone(),
            handlers: self.handlers.clone(),
            synced: self.synced.clone(),
        }
    }
}

impl<K: Kind> Light<K> {
    /// A typed kind's light watch, named in owner references by `groups`.
    fn typed(remote: Remote<K>, groups: &[&str]) -> Arc<dyn GcKind> {
        Arc::new(Light::new(remote, groups, &K::kind(&())))
    }
}

impl<K: Obj> Light<K> {
    fn new(remote: Remote<K>, groups: &[&str], kind: &str) -> Self {
        Light {
            remote,
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            kind: kind.into(),
            tracked: Arc::default(),
            handlers: Arc::default(),
            synced: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }

    /// Stores (or forgets) `key`, outside of which handlers run.
    fn set(&self, key: &ObjectKey, meta: Option<ObjectMeta>) -> Option<ObjectMeta> {
        match self.tracked.lock() {
            Ok(mut t) => t.set(key, meta),
            Err(_) => None,
        }
    }

    fn notify(&self, old: Option<&ObjectMeta>, new: Option<&ObjectMeta>) {
        if let Ok(hs) = self.handlers.read() {
            for h in hs.iter() {
                h(old, new);
            }
        }
    }

    fn applied(&self, meta: &ObjectMeta) {
        let key = key_of(meta);
        let new = needs_tracking(meta).then(|| gc_meta(meta));
        let old = self.set(&key, new.clone());
        if old.is_some() || new.is_some() {
            self.notify(old.as_ref(), Some(&new.unwrap_or_else(|| gc_meta(meta))));
        }
    }

    fn deleted(&self, meta: &ObjectMeta) {
        // Every deletion: dependents of the object may be waiting for it.
        let _ = self.set(&key_of(meta), None);
        self.notify(Some(&gc_meta(meta)), None);
    }

    /// A fresh listing, swapped in at once (a concurrent reader sees the
    /// old or the new cache, never a partial one): objects no longer there
    /// count as deleted. The first one marks the kind synced.
    fn replaced(&self, listing: HashMap<ObjectKey, ObjectMeta>) {
        let mut fresh = Tracked::default();
        for (key, meta) in &listing {
            let _ = fresh.set(key, Some(meta.clone()));
        }
        let before = match self.tracked.lock() {
            Ok(mut t) => std::mem::replace(&mut *t, fresh).objects,
            Err(_) => return,
        };
        self.synced.send_replace(true);
        for (key, old) in &before {
            if !listing.contains_key(key) {
                self.notify(Some(old), None);
            }
        }
        for (key, new) in &listing {
            self.notify(before.get(key), Some(new));
        }
    }

    async fn run_watch(self) {
        let mut stream = watcher::watcher(self.remote.all.clone(), watcher::Config::default())
            .default_backoff()
            .boxed();
        let mut listing: Option<HashMap<ObjectKey, ObjectMeta>> = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(WatchEvent::Init) => listing = Some(HashMap::new()),
                Ok(WatchEvent::InitApply(obj)) => {
                    if let Some(l) = listing.as_mut()
                        && needs_tracking(obj.meta())
                    {
                        l.insert(key_of(obj.meta()), gc_meta(obj.meta()));
                    }
                }
                Ok(WatchEvent::InitDone) => self.replaced(listing.take().unwrap_or_default()),
                Ok(WatchEvent::Apply(obj)) => self.applied(obj.meta()),
                Ok(WatchEvent::Delete(obj)) => self.deleted(obj.meta()),
                Err(e) => {
                    tracing::warn!(kind = &*self.kind, error = %e, "garbage collector watch failed; retrying")
                }
            }
        }
    }
}

impl<K: Obj> GcKind for Light<K> {
    fn is(&self, group: &str, kind: &str) -> bool {
        &*self.kind == kind && self.groups.iter().any(|g| g == group)
    }

    fn namespaced(&self) -> bool {
        self.remote.namespaced
    }

    fn cached(&self, key: &ObjectKey) -> Option<ObjectMeta> {
        self.tracked.lock().ok()?.objects.get(key).cloned()
    }

    fn referencing(&self, uid: &str) -> Vec<ObjectKey> {
        self.tracked
            .lock()
            .ok()
            .and_then(|t| t.by_owner.get(uid).map(|k| k.iter().cloned().collect()))
            .unwrap_or_default()
    }

    fn naming(&self, group: &str, kind: &str) -> Vec<ObjectKey> {
        self.tracked
            .lock()
            .map(|t| {
                t.objects
                    .iter()
                    .filter(|(_, m)| names(m, group, kind))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn index_owners(&self) {}

    fn watch(&self, f: MetaHandler) {
        if let Ok(mut hs) = self.handlers.write() {
            hs.push(f);
        }
    }

    fn run(&self) -> Option<Task> {
        Some(Box::pin(self.clone().run_watch()))
    }

    fn synced(&self) -> BoxFuture<'static, ()> {
        let mut rx = self.synced.subscribe();
        Box::pin(async move {
            let _ = rx.wait_for(|synced| *synced).await;
        })
    }

    fn remote(&self) -> &dyn RemoteApi {
        &self.remote
    }
}

/// Whether `meta` has an owner reference naming `group`/`kind`.
fn names(meta: &ObjectMeta, group: &str, kind: &str) -> bool {
    meta.owner_references
        .iter()
        .flatten()
        .any(|r| r.kind == kind && group_of(&r.api_version) == group)
}

/// The API group of an apiVersion (`apps/v1` → `apps`, `v1` → core).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The kinds by slot: queue items name a slot, so a slot is never reused; a
/// discovered kind that disappears leaves `None`.
type Table = Arc<Vec<Option<Arc<dyn GcKind>>>>;

#[derive(Clone)]
struct Collector {
    /// Every kind, owner and dependent alike; queue items index into it.
    /// Copied on write: readers take the current table, never a lock
    /// across calls.
    kinds: Arc<RwLock<Table>>,
    /// The slots below this are the fixed table ([`kinds`]).
    fixed: usize,
    /// Set once the first discovery added its kinds (or failed).
    discovered: Arc<tokio::sync::watch::Sender<bool>>,
    dependent_queue: Queue<(usize, ObjectKey)>,
    owner_queue: Queue<(usize, ObjectKey)>,
}

/// Registers the collector's indexes and handlers and returns its workers,
/// the light watches and the discovery of the other served kinds.
pub fn register(ctx: &Context) -> Vec<Task> {
    let fixed = kinds(ctx);
    let c = Collector {
        fixed: fixed.len(),
        kinds: Arc::new(RwLock::new(Arc::new(fixed.into_iter().map(Some).collect()))),
        discovered: Arc::new(tokio::sync::watch::channel(false).0),
        dependent_queue: Queue::new(DEPENDENT_QUEUE_NAME),
        owner_queue: Queue::new(OWNER_QUEUE_NAME),
    };
    let mut tasks: Vec<Task> = Vec::new();
    for (i, kind) in c.table().iter().enumerate() {
        if let Some(kind) = kind {
            c.handle(i, kind.as_ref());
            tasks.extend(kind.run());
        }
    }
    let d = c.clone();
    tasks.push(Box::pin(async move { d.dependent_work().await }));
    let o = c.clone();
    tasks.push(Box::pin(async move { o.owner_work().await }));
    tasks.push(Box::pin(
        Discovered::new(c, ctx.client.clone()).run(DISCOVERY_PERIOD),
    ));
    tasks
}

fn key_of(meta: &ObjectMeta) -> ObjectKey {
    ObjectKey::new(
        meta.namespace.as_deref(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

impl Collector {
    /// The current table of kinds.
    fn table(&self) -> Table {
        match self.kinds.read() {
            Ok(t) => t.clone(),
            Err(e) => e.into_inner().clone(),
        }
    }

    /// The kind at slot `i`, if it is still there.
    fn kind(&self, i: usize) -> Option<Arc<dyn GcKind>> {
        self.table().get(i).cloned().flatten()
    }

    /// Changes the table (copy on write).
    fn edit<T>(&self, f: impl FnOnce(&mut Vec<Option<Arc<dyn GcKind>>>) -> T) -> T {
        let mut guard = match self.kinds.write() {
            Ok(g) => g,
            Err(e) => e.into_inner(),
        };
        let mut table = (**guard).clone();
        let out = f(&mut table);
        *guard = Arc::new(table);
        out
    }

    /// Routes the changes of the kind at slot `i` to the collector.
    fn handle(&self, i: usize, kind: &dyn GcKind) {
        kind.index_owners();
        let h = self.clone();
        kind.watch(Box::new(move |old, new| {
            h.dependent_changed(old, new, i);
            h.owner_changed(i, old, new);
        }));
    }

    /// Adds a discovered kind (its watch not yet started); its slot.
    fn add(&self, kind: Arc<dyn GcKind>) -> usize {
        let i = self.edit(|t| {
            t.push(Some(kind.clone()));
            t.len() - 1
        });
        self.handle(i, kind.as_ref());
        i
    }

    /// Forgets the discovered kind at slot `i`.
    fn remove(&self, i: usize) {
        self.edit(|t| {
            if let Some(slot) = t.get_mut(i) {
                *slot = None;
            }
        });
    }

    /// Queues every known dependent naming an owner of `group`/`kind` (a
    /// kind just discovered: its owners may be gone already).
    fn recheck_dependents_of(&self, group: &str, kind: &str) {
        for (d, k) in self.table().iter().enumerate() {
            if let Some(k) = k {
                for key in k.naming(group, kind) {
                    self.dependent_queue.add((d, key));
                }
            }
        }
    }

    /// The kind a reference names, if the collector knows it.
    fn owner_kind(&self, r: &OwnerReference) -> Option<usize> {
        let group = group_of(&r.api_version);
        self.table()
            .iter()
            .position(|k| k.as_ref().is_some_and(|k| k.is(group, &r.kind)))
    }

    /// The key of the owner `r` of a dependent in `namespace`: a
    /// cluster-scoped owner has none; `None` for a namespaced owner of a
    /// cluster-scoped dependent (invalid; such references are left alone).
    fn owner_key(
        &self,
        o: usize,
        namespace: Option<&str>,
        r: &OwnerReference,
    ) -> Option<ObjectKey> {
        if !self.kind(o)?.namespaced() {
            Some(ObjectKey::new(None, &r.name))
        } else {
            namespace.map(|ns| ObjectKey::new(Some(ns), &r.name))
        }
    }

    fn dependent_changed(&self, old: Option<&ObjectMeta>, new: Option<&ObjectMeta>, i: usize) {
        if let Some(new) = new
            && new.owner_references.as_ref().is_some_and(|r| !r.is_empty())
        {
            self.dependent_queue.add((i, key_of(new)));
        }
        // Owners waiting for their dependents (orphan, foreground) look again.
        for meta in [old, new].into_iter().flatten() {
            for r in meta.owner_references.iter().flatten() {
                if let Some(o) = self.owner_kind(r)
                    && let Some(key) = self.owner_key(o, meta.namespace.as_deref(), r)
                    && self
                        .kind(o)
                        .and_then(|k| k.cached(&key))
                        .is_some_and(|m| has_gc_finalizer(&m))
                {
                    self.owner_queue.add((o, key));
                }
            }
        }
    }

    fn owner_changed(&self, i: usize, old: Option<&ObjectMeta>, new: Option<&ObjectMeta>) {
        if let Some(new) = new
            && new.deletion_timestamp.is_some()
            && has_gc_finalizer(new)
        {
            self.owner_queue.add((i, key_of(new)));
        }
        // A deleted (or replaced) owner: its dependents are looked at again.
        let gone_uid = match (old, new) {
            (Some(old), None) => old.uid.clone(),
            (Some(old), Some(new)) if old.uid != new.uid => old.uid.clone(),
            _ => None,
        };
        if let Some(uid) = gone_uid {
            for (d, kind) in self.table().iter().enumerate() {
                for key in kind.iter().flat_map(|k| k.referencing(&uid)) {
                    self.dependent_queue.add((d, key));
                }
            }
        }
    }

    /// Cached view of an owner reference of a dependent in `namespace`.
    fn cached_state(&self, namespace: Option<&str>, r: &OwnerReference) -> OwnerState {
        // Unknown kinds (and invalid references) are never collected.
        let Some((o, key)) = self
            .owner_kind(r)
            .and_then(|o| Some((o, self.owner_key(o, namespace, r)?)))
        else {
            return OwnerState::Present;
        };
        match self.kind(o).and_then(|k| k.cached(&key)) {
            Some(m) if m.uid.as_deref() == Some(r.uid.as_str()) => OwnerState::Present,
            _ => OwnerState::Gone,
        }
    }

    async fn live_state(
        &self,
        namespace: Option<&str>,
        r: &OwnerReference,
    ) -> Result<OwnerState, kube::Error> {
        let Some((o, key)) = self
            .owner_kind(r)
            .and_then(|o| Some((o, self.owner_key(o, namespace, r)?)))
        else {
            return Ok(OwnerState::Present);
        };
        let Some(kind) = self.kind(o) else {
            return Ok(OwnerState::Present);
        };
        let live = kind.get_live(key).await?;
        Ok(match live {
            Some(m) if m.uid.as_deref() == Some(r.uid.as_str()) => OwnerState::Present,
            _ => OwnerState::Gone,
        })
    }

    /// Completes once every kind's cache has its first listing: until then
    /// an owner would look dependent-less and a dependent owner-less
    /// (upstream's collector waits for all its monitors to sync too). The
    /// fixed kinds are waited for; the kinds of the first discovery for at
    /// most [`DISCOVERY_PERIOD`] (one that fails to list must not stall the
    /// collector; upstream likewise times out its sync); kinds discovered
    /// later are not waited for (a dependent's owner reported gone by a
    /// cache is confirmed with a live GET anyway).
    async fn synced(&self) {
        let table = self.table();
        for kind in table.iter().take(self.fixed).flatten() {
            kind.synced().await;
        }
        let discovered = async {
            let mut discovered = self.discovered.subscribe();
            let _ = discovered.wait_for(|done| *done).await;
            let table = self.table();
            let kinds = table.iter().skip(self.fixed).flatten().map(|k| k.synced());
            futures_util::future::join_all(kinds).await;
        };
        if tokio::time::timeout(DISCOVERY_PERIOD, discovered)
            .await
            .is_err()
        {
            tracing::warn!(
                "garbage collector: discovered kinds did not all list in time; going on without them"
            );
        }
    }

    async fn dependent_work(self) {
        self.synced().await;
        while let Some(item) = self.dependent_queue.get().await {
            match self.sync_dependent(&item).await {
                Ok(()) => self.dependent_queue.forget(&item),
                Err(err) => {
                    tracing::warn!(dependent = %item.1, error = %err, "garbage collection failed; retrying");
                    self.dependent_queue.add_rate_limited(item.clone());
                }
            }
            self.dependent_queue.done(&item);
        }
    }

    async fn sync_dependent(&self, (i, key): &(usize, ObjectKey)) -> Result<(), kube::Error> {
        let Some(kind) = self.kind(*i) else {
            return Ok(());
        };
        let Some(meta) = kind.cached(key) else {
            return Ok(());
        };
        let ns = meta.namespace.as_deref();
        if dependent_action(&meta, |r| self.cached_state(ns, r)) == DependentAction::Keep {
            return Ok(());
        }
        // Confirm with the API server what the cache says is gone.
        let mut gone = BTreeSet::new();
        for r in meta.owner_references.iter().flatten() {
            if self.cached_state(ns, r) == OwnerState::Gone
                && self.live_state(ns, r).await? == OwnerState::Gone
            {
                gone.insert(r.uid.clone());
            }
        }
        let action = dependent_action(&meta, |r| {
            if gone.contains(&r.uid) {
                OwnerState::Gone
            } else {
                OwnerState::Present
            }
        });
        match action {
            DependentAction::Keep => Ok(()),
            DependentAction::RemoveOwnerReferences(uids) => {
                tracing::info!(dependent = %key, owners = ?uids, "removing references to deleted owners");
                self.strip(kind.as_ref(), key, &meta, &uids).await
            }
            DependentAction::Delete { propagation } => {
                tracing::info!(dependent = %key, propagation, "deleting object whose owners are all gone");
                let dp = DeleteParams {
                    propagation_policy: Some(policy(propagation)),
                    preconditions: Some(Preconditions {
                        uid: meta.uid.clone(),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                kind.delete(key.clone(), dp).await
            }
        }
    }

    /// Removes the references to `uids` (resourceVersion precondition: a
    /// concurrent change makes it retry on fresh data).
    async fn strip(
        &self,
        kind: &dyn GcKind,
        key: &ObjectKey,
        meta: &ObjectMeta,
        uids: &[String],
    ) -> Result<(), kube::Error> {
        let kept: Vec<&OwnerReference> = meta
            .owner_references
            .iter()
            .flatten()
            .filter(|r| !uids.contains(&r.uid))
            .collect();
        let patch = serde_json::json!({
            "metadata": {
                "resourceVersion": meta.resource_version,
                "ownerReferences": kept,
            }
        });
        kind.merge_patch(key.clone(), patch).await
    }

    async fn owner_work(self) {
        self.synced().await;
        while let Some(item) = self.owner_queue.get().await {
            match self.sync_owner(&item).await {
                Ok(()) => self.owner_queue.forget(&item),
                Err(err) => {
                    tracing::warn!(owner = %item.1, error = %err, "owner finalization failed; retrying");
                    self.owner_queue.add_rate_limited(item.clone());
                }
            }
            self.owner_queue.done(&item);
        }
    }

    async fn sync_owner(&self, (i, key): &(usize, ObjectKey)) -> Result<(), kube::Error> {
        let Some(kind) = self.kind(*i) else {
            return Ok(());
        };
        let Some(owner) = kind.cached(key) else {
            return Ok(());
        };
        let Some(uid) = owner.uid.as_deref() else {
            return Ok(());
        };
        let mut found: Vec<(Arc<dyn GcKind>, ObjectKey, ObjectMeta)> = Vec::new();
        for dk in self.table().iter().flatten() {
            for dkey in dk.referencing(uid) {
                if let Some(m) = dk.cached(&dkey) {
                    found.push((dk.clone(), dkey, m));
                }
            }
        }
        let metas: Vec<&ObjectMeta> = found.iter().map(|(_, _, m)| m).collect();
        let plan = owner_plan(&owner, &metas);
        for &j in &plan.release {
            if let Some((d, dkey, m)) = found.get(j) {
                tracing::info!(owner = %key, dependent = %dkey, "orphaning dependent");
                self.strip(d.as_ref(), dkey, m, &[uid.to_owned()]).await?;
            }
        }
        for &j in &plan.delete {
            if let Some((d, dkey, m)) = found.get(j) {
                tracing::info!(owner = %key, dependent = %dkey, "deleting dependent in the foreground");
                // Background for the dependent itself: its own dependents
                // are collected once it is gone (upstream deletes it in the
                // foreground when it has some: an order difference only).
                let dp = DeleteParams {
                    propagation_policy: Some(PropagationPolicy::Background),
                    preconditions: Some(Preconditions {
                        uid: m.uid.clone(),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                d.delete(dkey.clone(), dp).await?;
            }
        }
        if let Some(finalizer) = plan.remove_finalizer {
            let kept: Vec<&String> = owner
                .finalizers
                .iter()
                .flatten()
                .filter(|f| f.as_str() != finalizer)
                .collect();
            tracing::info!(owner = %key, finalizer, "removing the garbage collector's finalizer");
            let patch = serde_json::json!({
                "metadata": {
                    "resourceVersion": owner.resource_version,
                    "finalizers": kept,
                }
            });
            kind.merge_patch(key.clone(), patch).await?;
        }
        Ok(())
    }
}

fn policy(name: &str) -> PropagationPolicy {
    match name {
        "Orphan" => PropagationPolicy::Orphan,
        "Foreground" => PropagationPolicy::Foreground,
        _ => PropagationPolicy::Background,
    }
}
