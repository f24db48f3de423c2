//! Reading through the controller's own writes.
//!
//! After a write, the informer cache holds the previous version until the
//! watch delivers the new one. [`Fresh`] keeps the object each write returned
//! and serves it instead of an older cached version (by resourceVersion) — or
//! when the cache does not have it yet, as for a just-created Eviction —
//! until the watch catches up, then drops it.
//!
//! A write can return after the watch already reported the object deleted;
//! its result must not bring the object back. So deletions leave a short-lived
//! tombstone (the deleted UID), and results for a tombstoned UID are not kept.
//!
//! Correctness does not depend on this: every write pins the resourceVersion
//! it was computed from (see the parent module). This only avoids needless
//! 409s and duplicate creations. resourceVersions are compared as integers
//! (what kube-apiserver and the embedded server hand out); if one does not
//! parse, the cached version wins, and only not-yet-cached objects are served
//! from here.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use kube::Resource;
use serde::de::DeserializeOwned;

use crate::informer::{Change, Informer, ObjectKey};

/// How long a deletion blocks keeping a write result of the deleted object
/// (far longer than any write takes).
const TOMBSTONE_TTL: Duration = Duration::from_secs(60);

/// Recently deleted objects: key → (UID, when the watch reported it).
type Tombstones = HashMap<ObjectKey, (Option<String>, Instant)>;

/// An informer cache overlaid with the results of our own writes.
pub(super) struct Fresh<K> {
    informer: Informer<K>,
    written: Arc<Mutex<HashMap<ObjectKey, Arc<K>>>>,
    tombstones: Arc<Mutex<Tombstones>>,
}

fn resource_version<K: Resource>(obj: &K) -> Option<u64> {
    obj.meta().resource_version.as_deref()?.parse().ok()
}

/// Whether `a` is a strictly later version than `b`.
fn newer<K: Resource>(a: &K, b: &K) -> bool {
    matches!((resource_version(a), resource_version(b)), (Some(x), Some(y)) if x > y)
}

impl<K> Fresh<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default,
{
    /// An overlay on `informer`; drops entries as the watch delivers them.
    pub(super) fn new(informer: Informer<K>) -> Self {
        let written: Arc<Mutex<HashMap<ObjectKey, Arc<K>>>> = Arc::default();
        let tombstones: Arc<Mutex<Tombstones>> = Arc::default();
        let seen = written.clone();
        let graves = tombstones.clone();
        informer.on_change(move |change| {
            let (obj, deleted) = match change {
                Change::Added(o) | Change::Updated { new: o, .. } => (o, false),
                Change::Deleted(o) => (o, true),
            };
            let key = ObjectKey::of(obj.as_ref());
            if deleted && let Ok(mut t) = graves.lock() {
                let now = Instant::now();
                t.retain(|_, (_, at)| now.duration_since(*at) < TOMBSTONE_TTL);
                t.insert(key.clone(), (obj.meta().uid.clone(), now));
            }
            if let Ok(mut w) = seen.lock()
                && w.get(&key)
                    .is_some_and(|mine| deleted || !newer(mine.as_ref(), obj.as_ref()))
            {
                w.remove(&key);
            }
        });
        Fresh {
            informer,
            written,
            tombstones,
        }
    }

    /// The informer underneath.
    pub(super) fn informer(&self) -> &Informer<K> {
        &self.informer
    }

    /// Keeps `obj`, as returned by a write, until the cache has it (or a
    /// later version).
    pub(super) fn record(&self, obj: K) {
        let key = ObjectKey::of(&obj);
        let buried = self.tombstones.lock().ok().is_some_and(|t| {
            t.get(&key)
                .is_some_and(|(uid, at)| *uid == obj.meta().uid && at.elapsed() < TOMBSTONE_TTL)
        });
        if buried {
            return;
        }
        if self
            .informer
            .get(&key)
            .is_some_and(|cached| !newer(&obj, cached.as_ref()))
        {
            return;
        }
        if let Ok(mut w) = self.written.lock() {
            match w.get(&key) {
                Some(mine) if !newer(&obj, mine.as_ref()) => {}
                _ => {
                    w.insert(key, Arc::new(obj));
                }
            }
        }
    }

    /// Drops what is kept for `key` (the server said it is gone).
    pub(super) fn forget(&self, key: &ObjectKey) {
        if let Ok(mut w) = self.written.lock() {
            w.remove(key);
        }
    }

    fn pick(cached: Option<Arc<K>>, mine: Option<&Arc<K>>) -> Option<Arc<K>> {
        match (cached, mine) {
            (Some(c), Some(m)) if newer(m.as_ref(), c.as_ref()) => Some(m.clone()),
            (Some(c), _) => Some(c),
            (None, m) => m.cloned(),
        }
    }

    /// The freshest known version of the object at `key`.
    pub(super) fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let cached = self.informer.get(key);
        let w = self.written.lock().ok();
        Self::pick(cached, w.as_ref().and_then(|w| w.get(key)))
    }

    /// The freshest versions of the objects whose index `name` has `value`;
    /// `matches` tells which kept (not yet cached) objects belong there.
    pub(super) fn by_index(
        &self,
        name: &str,
        value: &str,
        matches: impl Fn(&K) -> bool,
    ) -> Vec<Arc<K>> {
        let cached = self.informer.by_index(name, value);
        let Ok(w) = self.written.lock() else {
            return cached;
        };
        let mut out: Vec<Arc<K>> = cached
            .iter()
            .filter_map(|c| {
                let key = ObjectKey::of(c.as_ref());
                Self::pick(Some(c.clone()), w.get(&key))
            })
            .collect();
        for (key, mine) in w.iter() {
            if matches(mine.as_ref()) && self.informer.get(key).is_none() {
                out.push(mine.clone());
            }
        }
        out
    }
}
