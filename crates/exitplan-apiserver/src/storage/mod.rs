//! Durable object storage with a revision log — the server's etcd.
//!
//! ```text
//!   put/delete ──► writer (precondition check, revision assignment)
//!                    │  one redb transaction, committed durably
//!                    ▼
//!        in-memory index (current objects)   event ring + broadcast ──► watchers
//! ```
//!
//! * Every write gets the next revision of one global, monotonic sequence; it
//!   becomes the object's `metadata.resourceVersion`.
//! * A write is acknowledged only after its transaction is durable on disk.
//! * Current objects are also kept in memory as serialized JSON plus the
//!   attributes selectors need ([`Attrs`]), so LIST and GET never touch disk.
//! * Every change is appended to a revision log (on disk and, for the recent
//!   past, in memory) that watches replay from a resourceVersion.
//! * On restart the index and the revision sequence are recovered from disk.

mod codec;
mod watch;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use bytes::Bytes;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::broadcast;

pub use watch::{WatchError, WatchStream};

const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const META_REVISION: &str = "revision";

/// How many recent events stay in memory for watches to resume from.
pub const DEFAULT_EVENT_WINDOW: usize = 100_000;

/// Where an object lives: `<resource>/<namespace>/<name>`, with `resource` the
/// group-qualified plural (`pods`, `evictions.lifecycle.k8s.io`) and an empty
/// namespace for cluster-scoped objects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(String);

impl Key {
    /// The key of one object.
    pub fn new(resource: &str, namespace: &str, name: &str) -> Self {
        Key(format!("{resource}/{namespace}/{name}"))
    }

    /// The rendered key.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key from its rendered form (as stored on disk).
    pub fn from_stored(s: &str) -> Self {
        Key(s.to_owned())
    }
}

/// A key prefix selecting the objects of one resource, optionally of one namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix(String);

impl Prefix {
    /// Every object of `resource` in `namespace` (`None`: all namespaces, or a
    /// cluster-scoped resource).
    pub fn new(resource: &str, namespace: Option<&str>) -> Self {
        match namespace {
            Some(ns) => Prefix(format!("{resource}/{ns}/")),
            None => Prefix(format!("{resource}/")),
        }
    }

    /// Whether `key` falls under this prefix.
    pub fn contains(&self, key: &Key) -> bool {
        key.0.starts_with(&self.0)
    }
}

/// What selectors look at: labels and the resource's selectable fields,
/// extracted once when an object is written.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Attrs {
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// Selectable fields (`metadata.name`, `spec.nodeName`, …) by path.
    pub fields: BTreeMap<String, String>,
}

/// One stored object version.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredObject {
    /// Where it lives.
    pub key: Key,
    /// The revision that wrote this version (its `resourceVersion`).
    pub revision: u64,
    /// The object as JSON, `metadata.resourceVersion` included.
    pub json: Bytes,
    /// Labels and selectable fields.
    pub attrs: Attrs,
}

impl StoredObject {
    /// The object parsed back into a JSON value.
    pub fn value(&self) -> Result<Value, StorageError> {
        serde_json::from_slice(&self.json).map_err(|e| StorageError::Corrupt(e.to_string()))
    }
}

/// What kind of change an [`Event`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object was updated.
    Modified,
    /// The object was deleted; the event carries its last state.
    Deleted,
}

/// One change, as watches see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The kind of change.
    pub event_type: EventType,
    /// The object after the change (for deletes: its last state, stamped with
    /// the deletion's revision).
    pub object: Arc<StoredObject>,
}

/// A write's condition on the stored state (etcd-style compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// Unconditional.
    None,
    /// The key must not exist (create).
    Absent,
    /// The key must exist.
    Exists,
    /// The key must exist at exactly this revision (optimistic concurrency).
    Revision(u64),
}

/// Why storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database could not be read or written.
    #[error("storage error: {0}")]
    Io(String),
    /// A stored record could not be decoded.
    #[error("corrupt stored object: {0}")]
    Corrupt(String),
    /// The requested revision has been compacted away (HTTP 410 `Expired`).
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The revision asked for.
        requested: u64,
        /// The oldest revision still available.
        oldest: u64,
    },
}

/// Why a write was refused.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The precondition did not hold; carries the current object, if any.
    #[error("precondition failed")]
    Conflict {
        /// What is stored now.
        current: Option<Arc<StoredObject>>,
    },
    /// Storage itself failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

fn io(e: impl std::fmt::Display) -> StorageError {
    StorageError::Io(e.to_string())
}

/// Events and watchers: the in-memory tail of the revision log.
struct Feed {
    recent: VecDeque<Event>,
    capacity: usize,
    sender: broadcast::Sender<Event>,
}

/// The store. Cheap to clone; all clones share one database.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    db: Database,
    /// Current objects by key.
    index: RwLock<BTreeMap<Key, Arc<StoredObject>>>,
    /// The last committed revision.
    revision: RwLock<u64>,
    feed: Mutex<Feed>,
    /// Serializes writers (revision assignment and commit order).
    writer: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (or creates) the database at `path` and recovers its objects and
    /// revision sequence.
    pub fn open(path: &Path) -> Result<Store, StorageError> {
        let db = Database::create(path).map_err(io)?;
        Self::from_db(db)
    }

    /// A store whose database lives in memory (tests, `exitplan simulate`).
    pub fn in_memory() -> Result<Store, StorageError> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(io)?;
        Self::from_db(db)
    }

    fn from_db(db: Database) -> Result<Store, StorageError> {
        let txn = db.begin_write().map_err(io)?;
        {
            txn.open_table(OBJECTS).map_err(io)?;
            txn.open_table(LOG).map_err(io)?;
            txn.open_table(META).map_err(io)?;
        }
        txn.commit().map_err(io)?;
        let mut index = BTreeMap::new();
        let revision;
        {
            let read = db.begin_read().map_err(io)?;
            let objects = read.open_table(OBJECTS).map_err(io)?;
            for row in objects.iter().map_err(io)? {
                let (k, v) = row.map_err(io)?;
                let key = Key::from_stored(k.value());
                let object = codec::decode_object(key.clone(), v.value())?;
                index.insert(key, Arc::new(object));
            }
            let meta = read.open_table(META).map_err(io)?;
            revision = meta
                .get(META_REVISION)
                .map_err(io)?
                .map(|g| g.value())
                .unwrap_or(0);
        }
        let (sender, _) = broadcast::channel(4096);
        // The in-memory window starts empty after a restart; older events come from disk.
        Ok(Store {
            inner: Arc::new(Inner {
                db,
                index: RwLock::new(index),
                revision: RwLock::new(revision),
                feed: Mutex::new(Feed {
                    recent: VecDeque::new(),
                    capacity: DEFAULT_EVENT_WINDOW,
                    sender,
                }),
                writer: tokio::sync::Mutex::new(()),
            }),
        })
    }

    /// The last committed revision.
    pub fn revision(&self) -> u64 {
        self.inner.revision.read().map(|r| *r).unwrap_or(0)
    }

    /// The current version of `key`, if any.
    pub fn get(&self, key: &Key) -> Option<Arc<StoredObject>> {
        self.inner.index.read().ok()?.get(key).cloned()
    }

    /// Every current object under `prefix`, in key order, and the revision the
    /// list is consistent with.
    pub fn list(&self, prefix: &Prefix) -> (Vec<Arc<StoredObject>>, u64) {
        let Ok(index) = self.inner.index.read() else {
            return (Vec::new(), self.revision());
        };
        let revision = self.revision();
        let start = Key(prefix.0.clone());
        let items = index
            .range(start..)
            .take_while(|(k, _)| prefix.contains(k))
            .map(|(_, v)| v.clone())
            .collect();
        (items, revision)
    }

    /// Writes `object` at `key` if `precondition` holds; stamps its
    /// `metadata.resourceVersion` and returns the stored version once durable.
    pub async fn put(
        &self,
        key: Key,
        mut object: Value,
        attrs: Attrs,
        precondition: Precondition,
    ) -> Result<Arc<StoredObject>, WriteError> {
        let _writer = self.inner.writer.lock().await;
        let current = self.get(&key);
        check(precondition, current.as_ref())?;
        let revision = self.revision() + 1;
        set_resource_version(&mut object, revision);
        let json = Bytes::from(
            serde_json::to_vec(&object).map_err(|e| StorageError::Corrupt(e.to_string()))?,
        );
        let stored = Arc::new(StoredObject {
            key,
            revision,
            json,
            attrs,
        });
        let event_type = if current.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.commit(Event {
            event_type,
            object: stored.clone(),
        })
        .await?;
        Ok(stored)
    }

    /// Deletes `key` if `precondition` holds; returns its last state, stamped
    /// with the deletion's revision, once durable.
    pub async fn delete(
        &self,
        key: &Key,
        precondition: Precondition,
    ) -> Result<Arc<StoredObject>, WriteError> {
        let _writer = self.inner.writer.lock().await;
        let current = self.get(key);
        check(precondition, current.as_ref())?;
        let Some(current) = current else {
            return Err(WriteError::Conflict { current: None });
        };
        let revision = self.revision() + 1;
        let mut last = current.value()?;
        set_resource_version(&mut last, revision);
        let json = Bytes::from(
            serde_json::to_vec(&last).map_err(|e| StorageError::Corrupt(e.to_string()))?,
        );
        let stored = Arc::new(StoredObject {
            key: key.clone(),
            revision,
            json,
            attrs: current.attrs.clone(),
        });
        self.commit(Event {
            event_type: EventType::Deleted,
            object: stored.clone(),
        })
        .await?;
        Ok(stored)
    }

    /// Commits one event durably, then publishes it (index, feed, watchers).
    async fn commit(&self, event: Event) -> Result<(), StorageError> {
        let inner = self.inner.clone();
        let e = event.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StorageError> {
            let txn = inner.db.begin_write().map_err(io)?;
            {
                let mut objects = txn.open_table(OBJECTS).map_err(io)?;
                match e.event_type {
                    EventType::Deleted => {
                        objects.remove(e.object.key.as_str()).map_err(io)?;
                    }
                    _ => {
                        objects
                            .insert(
                                e.object.key.as_str(),
                                codec::encode_object(&e.object).as_slice(),
                            )
                            .map_err(io)?;
                    }
                }
                let mut log = txn.open_table(LOG).map_err(io)?;
                log.insert(e.object.revision, codec::encode_event(&e).as_slice())
                    .map_err(io)?;
                let mut meta = txn.open_table(META).map_err(io)?;
                meta.insert(META_REVISION, e.object.revision).map_err(io)?;
            }
            txn.commit().map_err(io)
        })
        .await
        .map_err(io)??;
        self.publish(event);
        Ok(())
    }

    /// Makes a committed event visible. The feed lock is held throughout, so a
    /// watch (which reads the revision and subscribes under the same lock)
    /// sees each event either in its backlog or live, never neither.
    fn publish(&self, event: Event) {
        let Ok(mut feed) = self.inner.feed.lock() else {
            return;
        };
        // Index and revision change together, so a list (which reads both under
        // the index lock) is consistent with the revision it reports.
        if let Ok(mut index) = self.inner.index.write() {
            match event.event_type {
                EventType::Deleted => index.remove(&event.object.key),
                _ => index.insert(event.object.key.clone(), event.object.clone()),
            };
            if let Ok(mut rev) = self.inner.revision.write() {
                *rev = event.object.revision;
            }
        }
        if feed.recent.len() == feed.capacity {
            feed.recent.pop_front();
        }
        feed.recent.push_back(event.clone());
        // No receivers is fine: nobody is watching.
        let _ = feed.sender.send(event);
    }

    /// Watches changes under `prefix` after revision `since` (`None`: from now).
    /// Events older than the in-memory window are replayed from the on-disk
    /// log; fails with [`StorageError::Expired`] when `since` is older than
    /// the retained history.
    pub fn watch(&self, prefix: Prefix, since: Option<u64>) -> Result<WatchStream, StorageError> {
        let feed = self.inner.feed.lock().map_err(io)?;
        let current = self.revision();
        let since = since.unwrap_or(current);
        let receiver = feed.sender.subscribe();
        let oldest_in_memory = feed
            .recent
            .front()
            .map_or(current + 1, |e| e.object.revision);
        let mut backlog = Vec::new();
        if since < current && since + 1 < oldest_in_memory {
            backlog = self.replay_from_disk(&prefix, since, oldest_in_memory)?;
        }
        backlog.extend(
            feed.recent
                .iter()
                .filter(|e| e.object.revision > since && prefix.contains(&e.object.key))
                .cloned(),
        );
        Ok(WatchStream::new(prefix, since, backlog, receiver))
    }

    /// Log events in `(since, before)` under `prefix`, from disk.
    fn replay_from_disk(
        &self,
        prefix: &Prefix,
        since: u64,
        before: u64,
    ) -> Result<Vec<Event>, StorageError> {
        let read = self.inner.db.begin_read().map_err(io)?;
        let log = read.open_table(LOG).map_err(io)?;
        let oldest = log.first().map_err(io)?.map_or(before, |(k, _)| k.value());
        if since + 1 < oldest {
            return Err(StorageError::Expired {
                requested: since,
                oldest: oldest.saturating_sub(1),
            });
        }
        let mut events = Vec::new();
        for row in log.range(since + 1..before).map_err(io)? {
            let (_, v) = row.map_err(io)?;
            let e = codec::decode_event(v.value())?;
            if prefix.contains(&e.object.key) {
                events.push(e);
            }
        }
        Ok(events)
    }
}

fn check(
    precondition: Precondition,
    current: Option<&Arc<StoredObject>>,
) -> Result<(), WriteError> {
    let ok = match precondition {
        Precondition::None => true,
        Precondition::Absent => current.is_none(),
        Precondition::Exists => current.is_some(),
        Precondition::Revision(r) => current.is_some_and(|c| c.revision == r),
    };
    if ok {
        Ok(())
    } else {
        Err(WriteError::Conflict {
            current: current.cloned(),
        })
    }
}

/// Sets `metadata.resourceVersion` of a JSON object.
pub fn set_resource_version(object: &mut Value, revision: u64) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert(
            "resourceVersion".to_owned(),
            Value::String(revision.to_string()),
        );
    } else if let Some(obj) = object.as_object_mut() {
        obj.insert(
            "metadata".to_owned(),
            serde_json::json!({ "resourceVersion": revision.to_string() }),
        );
    }
}

#[cfg(test)]
mod tests;
