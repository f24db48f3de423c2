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
//! The kinds are a table ([`dependent_kinds`], [`owner_kinds`]): adding a
//! kind is one line there.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions, PropagationPolicy};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use exitplan_control::gc::{DependentAction, OwnerState, dependent_action, owner_plan};

use crate::context::{Context, Task};
use crate::informer::{Change, Informer, ObjectKey};
use crate::queue::Queue;

/// Index of dependents by the UIDs of their owners.
const OWNER_UID_INDEX: &str = "gc/owner-uid";

/// Name of the dependents' work queue.
pub const DEPENDENT_QUEUE_NAME: &str = "garbage_collector_attempt_to_delete";
/// Name of the owners' (finalizer) work queue.
pub const OWNER_QUEUE_NAME: &str = "garbage_collector_attempt_to_orphan";

/// A change handler on metadata: `(old, new)`, `None` for an absent side.
type MetaHandler = Box<dyn Fn(Option<&ObjectMeta>, Option<&ObjectMeta>) + Send + Sync>;

/// One kind the collector handles, as an object-safe view of its informer
/// and API.
trait GcKind: Send + Sync {
    /// API group (`""` for core) and kind.
    fn group_kind(&self) -> (String, String);
    /// The cached object's metadata.
    fn cached(&self, key: &ObjectKey) -> Option<ObjectMeta>;
    /// Keys of cached objects referencing owner `uid` (dependent kinds only).
    fn referencing(&self, uid: &str) -> Vec<ObjectKey>;
    /// Adds the owner-UID index (dependent kinds only).
    fn index_owners(&self);
    /// Calls `f(old, new)` on every change (`None` for absent sides).
    fn watch(&self, f: MetaHandler);
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
    /// Deletes the object.
    fn delete(
        &self,
        key: ObjectKey,
        dp: DeleteParams,
    ) -> BoxFuture<'static, Result<(), kube::Error>>;
}

struct Typed<K> {
    informer: Informer<K>,
    client: kube::Client,
}

fn typed<K>(informer: &Informer<K>, client: &kube::Client) -> Arc<dyn GcKind>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    Arc::new(Typed {
        informer: informer.clone(),
        client: client.clone(),
    })
}

/// The dependents the collector looks after.
fn dependent_kinds(ctx: &Context) -> Vec<Arc<dyn GcKind>> {
    vec![
        // Evictions, owned by EvictionRequests.
        typed(&ctx.informers.evictions, &ctx.client),
        // Pods, owned by Jobs.
        typed(&ctx.informers.pods, &ctx.client),
    ]
}

/// The owners whose presence the collector checks.
fn owner_kinds(ctx: &Context) -> Vec<Arc<dyn GcKind>> {
    vec![
        typed(&ctx.informers.eviction_requests, &ctx.client),
        typed(&ctx.informers.jobs, &ctx.client),
    ]
}

impl<K> Typed<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    fn api(&self, key: &ObjectKey) -> Api<K> {
        Api::namespaced(
            self.client.clone(),
            key.namespace.as_deref().unwrap_or_default(),
        )
    }
}

impl<K> GcKind for Typed<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    fn group_kind(&self) -> (String, String) {
        (K::group(&()).into_owned(), K::kind(&()).into_owned())
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

    fn index_owners(&self) {
        self.informer.add_index(OWNER_UID_INDEX, |o: &K| {
            o.owner_references().iter().map(|r| r.uid.clone()).collect()
        });
    }

    fn watch(&self, f: MetaHandler) {
        self.informer
            .on_change(move |change: &Change<K>| match change {
                Change::Added(new) => f(None, Some(new.meta())),
                Change::Updated { old, new } => f(Some(old.meta()), Some(new.meta())),
                Change::Deleted(old) => f(Some(old.meta()), None),
            });
    }

    fn get_live(
        &self,
        key: ObjectKey,
    ) -> BoxFuture<'static, Result<Option<ObjectMeta>, kube::Error>> {
        let api = self.api(&key);
        Box::pin(async move { Ok(api.get_opt(&key.name).await?.map(|o| o.meta().clone())) })
    }

    fn merge_patch(
        &self,
        key: ObjectKey,
        patch: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), kube::Error>> {
        let api = self.api(&key);
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
        let api = self.api(&key);
        Box::pin(async move {
            match api.delete(&key.name, &dp).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
                Err(e) => Err(e),
            }
        })
    }
}

/// The API group of an apiVersion (`apps/v1` → `apps`, `v1` → core).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

#[derive(Clone)]
struct Collector {
    dependents: Arc<Vec<Arc<dyn GcKind>>>,
    owners: Arc<Vec<Arc<dyn GcKind>>>,
    dependent_queue: Queue<(usize, ObjectKey)>,
    owner_queue: Queue<(usize, ObjectKey)>,
}

/// Registers the collector's indexes and handlers and returns its workers.
pub fn register(ctx: &Context) -> Vec<Task> {
    let c = Collector {
        dependents: Arc::new(dependent_kinds(ctx)),
        owners: Arc::new(owner_kinds(ctx)),
        dependent_queue: Queue::new(DEPENDENT_QUEUE_NAME),
        owner_queue: Queue::new(OWNER_QUEUE_NAME),
    };
    for (i, kind) in c.dependents.iter().enumerate() {
        kind.index_owners();
        let h = c.clone();
        kind.watch(Box::new(move |old, new| h.dependent_changed(i, old, new)));
    }
    for (i, kind) in c.owners.iter().enumerate() {
        let h = c.clone();
        kind.watch(Box::new(move |old, new| h.owner_changed(i, old, new)));
    }
    let d = c.clone();
    vec![
        Box::pin(async move { d.dependent_work().await }),
        Box::pin(async move { c.owner_work().await }),
    ]
}

fn key_of(meta: &ObjectMeta) -> ObjectKey {
    ObjectKey::new(
        meta.namespace.as_deref(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

fn has_gc_finalizer(meta: &ObjectMeta) -> bool {
    meta.finalizers.iter().flatten().any(|f| {
        f == exitplan_control::gc::FINALIZER_ORPHAN
            || f == exitplan_control::gc::FINALIZER_FOREGROUND
    })
}

impl Collector {
    /// The owner kind a reference names, if the collector knows it.
    fn owner_kind(&self, r: &OwnerReference) -> Option<usize> {
        let group = group_of(&r.api_version);
        self.owners.iter().position(|k| {
            let (g, kind) = k.group_kind();
            g == group && kind == r.kind
        })
    }

    fn dependent_changed(&self, i: usize, old: Option<&ObjectMeta>, new: Option<&ObjectMeta>) {
        if let Some(new) = new
            && new.owner_references.as_ref().is_some_and(|r| !r.is_empty())
        {
            self.dependent_queue.add((i, key_of(new)));
        }
        // Owners waiting for their dependents (orphan, foreground) look again.
        for meta in [old, new].into_iter().flatten() {
            for r in meta.owner_references.iter().flatten() {
                if let Some(o) = self.owner_kind(r) {
                    let key = ObjectKey::new(meta.namespace.as_deref(), &r.name);
                    if self.owners[o]
                        .cached(&key)
                        .is_some_and(|m| has_gc_finalizer(&m))
                    {
                        self.owner_queue.add((o, key));
                    }
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
            for (d, kind) in self.dependents.iter().enumerate() {
                for key in kind.referencing(&uid) {
                    self.dependent_queue.add((d, key));
                }
            }
        }
    }

    /// Cached view of an owner reference of a dependent in `namespace`.
    fn cached_state(&self, namespace: Option<&str>, r: &OwnerReference) -> OwnerState {
        let Some(o) = self.owner_kind(r) else {
            // Unknown kinds are never collected.
            return OwnerState::Present;
        };
        match self.owners[o].cached(&ObjectKey::new(namespace, &r.name)) {
            Some(m) if m.uid.as_deref() == Some(r.uid.as_str()) => OwnerState::Present,
            _ => OwnerState::Gone,
        }
    }

    async fn live_state(
        &self,
        namespace: Option<&str>,
        r: &OwnerReference,
    ) -> Result<OwnerState, kube::Error> {
        let Some(o) = self.owner_kind(r) else {
            return Ok(OwnerState::Present);
        };
        let live = self.owners[o]
            .get_live(ObjectKey::new(namespace, &r.name))
            .await?;
        Ok(match live {
            Some(m) if m.uid.as_deref() == Some(r.uid.as_str()) => OwnerState::Present,
            _ => OwnerState::Gone,
        })
    }

    async fn dependent_work(self) {
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
        let Some(kind) = self.dependents.get(*i) else {
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
        let Some(kind) = self.owners.get(*i) else {
            return Ok(());
        };
        let Some(owner) = kind.cached(key) else {
            return Ok(());
        };
        let Some(uid) = owner.uid.as_deref() else {
            return Ok(());
        };
        let mut found: Vec<(usize, ObjectKey, ObjectMeta)> = Vec::new();
        for (d, dk) in self.dependents.iter().enumerate() {
            for dkey in dk.referencing(uid) {
                if let Some(m) = dk.cached(&dkey) {
                    found.push((d, dkey, m));
                }
            }
        }
        let metas: Vec<&ObjectMeta> = found.iter().map(|(_, _, m)| m).collect();
        let plan = owner_plan(&owner, &metas);
        for &j in &plan.release {
            if let Some((d, dkey, m)) = found.get(j) {
                tracing::info!(owner = %key, dependent = %dkey, "orphaning dependent");
                self.strip(self.dependents[*d].as_ref(), dkey, m, &[uid.to_owned()])
                    .await?;
            }
        }
        for &j in &plan.delete {
            if let Some((d, dkey, m)) = found.get(j) {
                tracing::info!(owner = %key, dependent = %dkey, "deleting dependent in the foreground");
                // Background for the dependent itself: a kind the collector
                // does not finalize as an owner must not get a finalizer.
                let dp = DeleteParams {
                    propagation_policy: Some(PropagationPolicy::Background),
                    preconditions: Some(Preconditions {
                        uid: m.uid.clone(),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                self.dependents[*d].delete(dkey.clone(), dp).await?;
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
