//! Durable object storage with a revision log — the server's etcd.
//!
//! ```text
//!   put/delete ──► queue ──► writer (one at a time; drains the queue as a batch)
//!                              │ preconditions checked in order, against the
//!                              │ state including earlier writes of the batch;
//!                              │ revisions assigned in order
//!                              ▼
//!                    one redb transaction, committed durably (one fsync)
//!                              ▼
//!        in-memory index (current objects) + event window + watchers' queues
//!                              ▼
//!                    every request of the batch answered
//! ```
//!
//! * Every write gets the next revision of one global, monotonic sequence; it
//!   becomes the object's `metadata.resourceVersion`.
//! * A write is acknowledged only after its transaction is durable on disk.
//!   Concurrent writes share a transaction (group commit, see `writer.rs`), so
//!   durability does not serialise clients.
//! * Current objects are also kept in memory as serialized JSON plus the
//!   attributes selectors need ([`Attrs`]), so LIST and GET never touch disk.
//! * Every change is appended to a revision log (on disk and, for the recent
//!   past, in memory) that watches replay from a resourceVersion and
//!   historical lists ([`Store::list_at`], [`Store::list_page`]) rewind.
//! * Old log entries are compacted away ([`Retention`]); asking for a
//!   compacted revision fails with [`StorageError::Expired`].
//! * On disk there is only the log (each object version stored once, in the
//!   record that wrote it, appended in revision order) and three counters
//!   (revision, compacted revision, format); on restart the index is rebuilt
//!   by replaying the log.

mod codec;
mod compaction;
mod history;
mod memory;
mod watch;
mod writer;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use bytes::Bytes;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::clock::{SharedClock, SystemClock};

pub use history::Page;
pub use watch::{WatchEnd, WatchError, WatchItem, WatchStream};

/// Revision → log record ([`codec`]): the only copy of every object version,
/// appended to in revision order. Current objects are recovered by replaying it.
const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const META_REVISION: &str = "revision";
const META_COMPACTED: &str = "compacted";
const META_FORMAT: &str = "format";
/// The on-disk format this code reads and writes ([`codec`]).
const FORMAT: u64 = 3;
/// The earlier format that is migrated when opened: records without checksums.
const FORMAT_UNCHECKED: u64 = 2;

/// How many recent events stay in memory for watches to resume from and
/// historical lists to rewind with (older ones are read from the log on
/// disk); it matches [`Retention`]'s default minimum. The window is also
/// bounded by bytes ([`DEFAULT_EVENT_WINDOW_BYTES`]).
pub const DEFAULT_EVENT_WINDOW: usize = 10_000;

/// The most bytes of object versions the in-memory event window holds
/// (each event counts its object and the version it replaced).
pub const DEFAULT_EVENT_WINDOW_BYTES: usize = 64 * 1024 * 1024;

/// How many events a watcher may fall behind the writers before it gets
/// [`WatchError::Lagged`].
pub const DEFAULT_WATCH_BUFFER: usize = 4096;

/// How many bytes of events a watcher may fall behind the writers before it
/// gets [`WatchError::Lagged`].
pub const DEFAULT_WATCH_BUFFER_BYTES: usize = 16 * 1024 * 1024;

/// The most writes one transaction takes from the queue.
pub const DEFAULT_MAX_BATCH: usize = 1024;

/// redb's page cache. Small on purpose: current objects are served from
/// the in-memory index, so the cache only speeds up B-tree paths of writes
/// and reads of old history (redb's own default is 1 GiB, which recovery
/// would fill with every object a second time).
pub const DEFAULT_CACHE_SIZE: usize = 16 * 1024 * 1024;

/// The most bytes one write may store: key plus object JSON. etcd refuses
/// a request above its `--max-request-bytes` (default 1.5 MiB) with
/// `etcdserver: request is too large`, whatever the path that produced the
/// object (create, update, any patch, apply, a subresource, a controller).
pub const MAX_REQUEST_BYTES: usize = 3 * 512 * 1024;

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

    /// The key from its rendered form (as stored on disk, or carried in a
    /// `continue` token).
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
        self.contains_str(&key.0)
    }

    fn contains_str(&self, key: &str) -> bool {
        key.starts_with(&self.0)
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
#[derive(Clone, Debug, thiserror::Error)]
pub enum StorageError {
    /// The database could not be read or written. After a failed commit the
    /// store refuses further writes (its on-disk state is then unknown);
    /// reopening it recovers every acknowledged write.
    #[error("storage error: {0}")]
    Io(String),
    /// A stored record could not be decoded.
    #[error("corrupt stored object: {0}")]
    Corrupt(String),
    /// The write would store more than [`MAX_REQUEST_BYTES`]; nothing was
    /// stored. Displays as etcd's error, which kube-apiserver passes through
    /// (HTTP 500, no reason).
    #[error("etcdserver: request is too large")]
    RequestTooLarge {
        /// The bytes the write would have stored (key plus object).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The database file is not readable as a database (truncated or
    /// overwritten); the message says what to do.
    #[error(
        "the database is damaged ({0}); restore it from a backup, or move it aside to start with an empty store"
    )]
    Damaged(String),
    /// The stored version of one object is damaged (kube-apiserver's
    /// `StorageError` with code `ErrCodeCorruptObj`).
    #[error(
        "StorageError: corrupt object, Code: 7, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision={revision}: {reason}"
    )]
    DamagedObject {
        /// The object's key.
        key: String,
        /// The revision of the damaged record.
        revision: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// A list met damaged objects (kube-apiserver's aggregated storage read
    /// error: HTTP 500 `StorageReadError`).
    #[error("unable to transform or decode {} objects", .objects.len())]
    Unreadable {
        /// The prefix listed.
        prefix: String,
        /// One [`StorageError::DamagedObject`] per damaged key.
        objects: Vec<StorageError>,
    },
    /// The requested revision has been compacted away (HTTP 410 `Expired`).
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The revision asked for.
        requested: u64,
        /// The oldest revision still available (the compacted revision).
        oldest: u64,
    },
    /// The requested revision is newer than the last committed one
    /// (kube-apiserver: `Too large resource version`, HTTP 504 with cause
    /// `ResourceVersionTooLarge`).
    #[error("too large resource version: {requested}, current: {current}")]
    TooLarge {
        /// The revision asked for.
        requested: u64,
        /// The last committed revision.
        current: u64,
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
    /// The object is larger than etcd accepts
    /// ([`StorageError::RequestTooLarge`]); nothing was stored. Carries the
    /// object back (its `resourceVersion` stamped) so the caller may retry
    /// with less, as kube-apiserver retries without `managedFields`.
    #[error("{error}")]
    TooLarge {
        /// [`StorageError::RequestTooLarge`].
        error: StorageError,
        /// The object that was refused.
        object: Value,
    },
    /// Storage itself failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// [`StorageError::Damaged`], on one line.
fn damaged(why: impl std::fmt::Display) -> StorageError {
    let why = why.to_string();
    StorageError::Damaged(why.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn io(e: impl std::fmt::Display) -> StorageError {
    StorageError::Io(e.to_string())
}

/// How much history the revision log keeps.
///
/// A revision is compacted away only once it is **both** older than
/// `duration` (by the store's clock) **and** more than `min_revisions` behind
/// the newest revision. So a client can always resume a watch (or continue a
/// paged list) from a revision of the last `duration` — etcd's and
/// kube-apiserver's default guarantee of 5 minutes — and on a quiet server the
/// last `min_revisions` changes stay available however old they are. Disk use
/// is therefore bounded by the write rate times `duration`, and by
/// `max_bytes`: history beyond `max_bytes` is compacted whatever its age, so
/// large objects written often cannot grow the log (in memory, for an
/// in-memory store) without bound. Memory is bounded separately by
/// [`StoreConfig::event_window`] and [`StoreConfig::event_window_bytes`].
///
/// Revision times are tracked at one-second granularity and err on the side
/// of keeping; after a restart, recovered revisions count as written at the
/// time of the restart, and `max_bytes` counts what was written since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Keep every revision written within this long.
    pub duration: Duration,
    /// Keep at least this many of the newest revisions.
    pub min_revisions: u64,
    /// Keep at most about this many bytes of the newest history (object
    /// versions written), overriding `duration` and `min_revisions`.
    pub max_bytes: u64,
}

impl Default for Retention {
    /// 5 minutes (etcd's default), and at least 10,000 revisions, within
    /// 512 MiB of history.
    fn default() -> Self {
        Retention {
            duration: Duration::from_secs(5 * 60),
            min_revisions: 10_000,
            max_bytes: 512 * 1024 * 1024,
        }
    }
}

impl Retention {
    /// The default for an in-memory store, whose history lives in memory:
    /// as [`Retention::default`] within 32 MiB of history.
    pub fn in_memory() -> Self {
        Retention {
            max_bytes: 32 * 1024 * 1024,
            ..Retention::default()
        }
    }
}

/// How a [`Store`] is run. [`Default`] suits production; tests shrink the
/// windows and inject a clock.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// The clock revision ages are measured with (the server's one clock).
    pub clock: SharedClock,
    /// How much history the log keeps.
    pub retention: Retention,
    /// How often (by `clock`) the writer checks for history to compact, right
    /// after committing a batch. An idle store compacts nothing (nothing grows).
    pub compaction_interval: Duration,
    /// How many recent events stay in memory ([`DEFAULT_EVENT_WINDOW`]).
    pub event_window: usize,
    /// How many bytes of recent events stay in memory
    /// ([`DEFAULT_EVENT_WINDOW_BYTES`]).
    pub event_window_bytes: usize,
    /// How many events a watcher may fall behind ([`DEFAULT_WATCH_BUFFER`]).
    pub watch_buffer: usize,
    /// How many bytes of events a watcher may fall behind
    /// ([`DEFAULT_WATCH_BUFFER_BYTES`]).
    pub watch_buffer_bytes: usize,
    /// The most writes per transaction ([`DEFAULT_MAX_BATCH`]).
    pub max_batch: usize,
    /// redb's page cache in bytes ([`DEFAULT_CACHE_SIZE`]).
    pub cache_size: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            clock: Arc::new(SystemClock),
            retention: Retention::default(),
            compaction_interval: Duration::from_secs(10),
            event_window: DEFAULT_EVENT_WINDOW,
            event_window_bytes: DEFAULT_EVENT_WINDOW_BYTES,
            watch_buffer: DEFAULT_WATCH_BUFFER,
            watch_buffer_bytes: DEFAULT_WATCH_BUFFER_BYTES,
            max_batch: DEFAULT_MAX_BATCH,
            cache_size: DEFAULT_CACHE_SIZE,
        }
    }
}

/// Counters of the store's work since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Durable write transactions committed for writes.
    pub commits: u64,
    /// Writes committed (so `writes / commits` is the mean batch size).
    pub writes: u64,
}

/// One committed change as the store keeps it: the event watchers see and
/// the version it replaced (`None` for creations), which lets a list rewind
/// the change.
#[derive(Clone, Debug)]
struct Record {
    event: Event,
    prev: Option<Arc<StoredObject>>,
}

impl Record {
    fn revision(&self) -> u64 {
        self.event.object.revision
    }

    fn key(&self) -> &Key {
        &self.event.object.key
    }
}

/// A key whose current version could not be read back whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The revision of the damaged record.
    pub revision: u64,
    /// What is wrong with it.
    pub reason: String,
}

impl Damage {
    fn new(revision: u64, e: &StorageError) -> Self {
        Damage {
            revision,
            reason: e.to_string(),
        }
    }

    /// The error reading `key` gives: kube-apiserver's corrupt-object
    /// storage error.
    pub fn error(&self, key: &Key) -> StorageError {
        StorageError::DamagedObject {
            key: key.as_str().to_owned(),
            revision: self.revision,
            reason: self.reason.clone(),
        }
    }
}

/// What readers see; changed only by the writer, all at once per batch.
struct State {
    /// Current objects by key.
    index: BTreeMap<Key, Arc<StoredObject>>,
    /// Keys whose current version is damaged on disk (found at recovery):
    /// not in `index`, so never served; a write of the key replaces it.
    damaged: BTreeMap<Key, Damage>,
    /// The last committed (and published) revision.
    revision: u64,
    /// Log entries up to and including this revision are gone.
    compacted: u64,
    /// The newest committed changes, contiguous in revision, oldest first.
    window: history::Window,
}

impl State {
    /// The oldest revision held in the window (`revision + 1` when empty).
    fn oldest_in_window(&self) -> u64 {
        self.window.oldest().unwrap_or(self.revision + 1)
    }

    /// The window's records after revision `since`.
    fn window_after(&self, since: u64) -> impl Iterator<Item = &Record> {
        self.window.after(since)
    }
}

/// The store. Cheap to clone; all clones share one database.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// The revision log. `None` for a [`Store::in_memory`] store, whose
    /// history is its event window alone.
    db: Option<Database>,
    config: StoreConfig,
    state: RwLock<State>,
    /// `state.revision`, readable without the lock; stored after the
    /// revision's events were dispatched (see [`WatchStream::next_or_progress`]).
    head: Arc<AtomicU64>,
    /// The open watches, fed by the writer.
    watchers: watch::Watchers,
    queue: Arc<writer::Queue>,
    compaction: Mutex<compaction::Schedule>,
    commits: AtomicU64,
    writes: AtomicU64,
    /// Where each commit's duration is observed, once metrics are on.
    commit_seconds: std::sync::OnceLock<prometheus_client::metrics::histogram::Histogram>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Store {
    /// Opens (or creates) the database at `path` with the default
    /// [`StoreConfig`] and recovers its objects and revision sequence.
    pub fn open(path: &Path) -> Result<Store, StorageError> {
        Self::open_with(path, StoreConfig::default())
    }

    /// Opens (or creates) the database at `path` and recovers its objects,
    /// revision sequence and compacted revision.
    ///
    /// A database file that cannot be read as one (truncated, overwritten)
    /// is [`StorageError::Damaged`]. redb asserts some of its invariants
    /// instead of returning errors; such a panic while opening is caught
    /// and reported the same way (the panic hook still runs: a binary that
    /// wants one line only silences it around this call).
    pub fn open_with(path: &Path, config: StoreConfig) -> Result<Store, StorageError> {
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let db = Database::builder()
                .set_cache_size(config.cache_size)
                .create(path)
                .map_err(|e| match e {
                    redb::DatabaseError::Storage(redb::StorageError::Corrupted(why)) => {
                        damaged(why)
                    }
                    other => io(other),
                })?;
            Self::from_db(db, config)
        }));
        opened.unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the storage engine failed to read it".to_owned());
            Err(damaged(why))
        })
    }

    /// A store that lives in memory (tests, `exitplan simulate`, the
    /// benchmarks' `--in-memory`), with no revision log: its history is its
    /// event window ([`DEFAULT_EVENT_WINDOW`] changes within
    /// [`DEFAULT_EVENT_WINDOW_BYTES`], and within [`Retention::in_memory`]),
    /// and whatever leaves the window is compacted. A log in memory would
    /// hold every current object a second time (the index has them), in
    /// B-tree pages.
    pub fn in_memory() -> Result<Store, StorageError> {
        let config = StoreConfig {
            retention: Retention::in_memory(),
            ..StoreConfig::default()
        };
        Ok(Self::assemble(
            None,
            config,
            BTreeMap::new(),
            BTreeMap::new(),
            0,
            0,
        ))
    }

    /// A store whose revision log is a database in memory, run with
    /// `config`: the durable store's code paths without a disk (tests of
    /// the log run with a small event window).
    pub fn in_memory_with(config: StoreConfig) -> Result<Store, StorageError> {
        let db = Database::builder()
            .set_cache_size(config.cache_size)
            .create_with_backend(memory::ChunkedMemory::new())
            .map_err(io)?;
        Self::from_db(db, config)
    }

    fn from_db(db: Database, config: StoreConfig) -> Result<Store, StorageError> {
        let txn = db.begin_write().map_err(io)?;
        {
            txn.open_table(LOG).map_err(io)?;
            let mut meta = txn.open_table(META).map_err(io)?;
            let format = meta.get(META_FORMAT).map_err(io)?.map(|g| g.value());
            let revision = meta.get(META_REVISION).map_err(io)?.map(|g| g.value());
            match (format, revision) {
                (Some(FORMAT), _) => {}
                (None, None) => {
                    meta.insert(META_FORMAT, FORMAT).map_err(io)?;
                }
                (Some(FORMAT_UNCHECKED), _) => {
                    let mut log = txn.open_table(LOG).map_err(io)?;
                    let mut migrated = Vec::new();
                    for row in log.iter().map_err(io)? {
                        let (k, v) = row.map_err(io)?;
                        migrated.push((k.value(), codec::migrate_v2(v.value())));
                    }
                    for (revision, record) in &migrated {
                        log.insert(revision, record.as_slice()).map_err(io)?;
                    }
                    meta.insert(META_FORMAT, FORMAT).map_err(io)?;
                    tracing::info!(
                        records = migrated.len(),
                        "storage migrated to format {FORMAT} (a checksum with every record)"
                    );
                }
                (format, _) => {
                    return Err(StorageError::Corrupt(format!(
                        "storage format {} is not supported (this server reads format {FORMAT})",
                        format.unwrap_or(1)
                    )));
                }
            }
        }
        txn.commit().map_err(io)?;
        let mut index = BTreeMap::new();
        let mut damaged = BTreeMap::new();
        let mut unattributed = 0u64;
        let mut records = 0u64;
        let (revision, compacted, last_logged);
        {
            let read = db.begin_read().map_err(io)?;
            let log = read.open_table(LOG).map_err(io)?;
            // What compaction keeps is the state at the compacted revision
            // plus every later change: replayed in order, the current state.
            // A damaged record leaves its key damaged until a later record
            // of the key replaces it.
            let mut live: BTreeMap<String, Result<u64, Damage>> = BTreeMap::new();
            for row in log.iter().map_err(io)? {
                records += 1;
                let (k, v) = row.map_err(io)?;
                let revision = k.value();
                match codec::header(v.value()) {
                    Ok(header) => match header.event_type {
                        EventType::Deleted => live.remove(header.key),
                        EventType::Added | EventType::Modified => {
                            live.insert(header.key.to_owned(), Ok(revision))
                        }
                    },
                    Err(e) => match codec::header_hint(v.value()) {
                        // A damaged deletion still deleted its key (no single
                        // flipped bit turns a creation or update into one):
                        // the key is not reported damaged for it.
                        Some(hint) if hint.event_type == EventType::Deleted => {
                            tracing::error!(
                                revision,
                                key = hint.key,
                                error = %e,
                                "stored deletion record is damaged; its key stays deleted"
                            );
                            unattributed += 1;
                            live.remove(hint.key)
                        }
                        Some(hint) => {
                            live.insert(hint.key.to_owned(), Err(Damage::new(revision, &e)))
                        }
                        None => {
                            tracing::error!(
                                revision,
                                error = %e,
                                "stored record is damaged and names no readable key"
                            );
                            unattributed += 1;
                            None
                        }
                    },
                };
            }
            for (key, version) in live {
                let loaded = version.and_then(|revision| {
                    load_version(&log, revision).map_err(|e| Damage::new(revision, &e))
                });
                match loaded {
                    Ok(object) => {
                        index.insert(Key(key), object);
                    }
                    Err(damage) => {
                        damaged.insert(Key(key), damage);
                    }
                }
            }
            let meta = read.open_table(META).map_err(io)?;
            let get = |name| -> Result<u64, StorageError> {
                Ok(meta.get(name).map_err(io)?.map_or(0, |g| g.value()))
            };
            revision = get(META_REVISION)?;
            compacted = get(META_COMPACTED)?;
            last_logged = log.last().map_err(io)?.map_or(0, |(k, _)| k.value());
        }
        if revision > compacted && last_logged != revision {
            // Both are written by one transaction, so this means corruption.
            return Err(StorageError::Corrupt(format!(
                "log ends at revision {last_logged} but the store is at {revision}"
            )));
        }
        for (key, damage) in &damaged {
            tracing::error!(
                key = key.as_str(),
                revision = damage.revision,
                error = %damage.reason,
                "stored object is damaged: it is not served (GET and LIST of it fail) until it is re-created"
            );
        }
        if !damaged.is_empty() || unattributed > 0 {
            tracing::error!(
                damaged_objects = damaged.len(),
                damaged_records = unattributed,
                "storage holds damaged records; see docs/apiserver.md (damaged data) for recovery"
            );
        }
        tracing::info!(
            objects = index.len(),
            log_records = records,
            revision,
            compacted,
            "storage recovered"
        );
        Ok(Self::assemble(
            Some(db),
            config,
            index,
            damaged,
            revision,
            compacted,
        ))
    }

    /// A store over `db` (or none) holding `index` at `revision`.
    fn assemble(
        db: Option<Database>,
        config: StoreConfig,
        index: BTreeMap<Key, Arc<StoredObject>>,
        damaged: BTreeMap<Key, Damage>,
        revision: u64,
        compacted: u64,
    ) -> Store {
        let watchers = watch::Watchers::new(config.watch_buffer, config.watch_buffer_bytes);
        let window = history::Window::new(config.event_window, config.event_window_bytes);
        let schedule = compaction::Schedule::new(config.clock.now(), revision);
        // The in-memory window starts empty after a restart; older events come from disk.
        Store {
            inner: Arc::new(Inner {
                db,
                state: RwLock::new(State {
                    index,
                    damaged,
                    revision,
                    compacted,
                    window,
                }),
                head: Arc::new(AtomicU64::new(revision)),
                watchers,
                queue: Arc::default(),
                compaction: Mutex::new(schedule),
                commits: AtomicU64::new(0),
                writes: AtomicU64::new(0),
                commit_seconds: std::sync::OnceLock::new(),
                config,
            }),
        }
    }

    /// Observes the duration of every later durable commit in `histogram`
    /// (the first histogram given stays).
    pub fn observe_commits(&self, histogram: prometheus_client::metrics::histogram::Histogram) {
        let _ = self.inner.commit_seconds.set(histogram);
    }

    /// The last committed revision.
    pub fn revision(&self) -> u64 {
        self.inner.head.load(Ordering::Acquire)
    }

    /// The compacted revision: the oldest revision watches and historical
    /// lists may still start from.
    pub fn compacted_revision(&self) -> u64 {
        read(&self.inner.state).compacted
    }

    /// Counters of the work done since the store was opened.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            commits: self.inner.commits.load(Ordering::Relaxed),
            writes: self.inner.writes.load(Ordering::Relaxed),
        }
    }

    /// The current version of `key`, if any. A [damaged](Store::damage) key
    /// has none.
    pub fn get(&self, key: &Key) -> Option<Arc<StoredObject>> {
        read(&self.inner.state).index.get(key).cloned()
    }

    /// The current version of `key` as a request that reads before it
    /// writes needs it: `None` if absent, [`StorageError::DamagedObject`] if
    /// its stored version is damaged — so an update, patch or delete of a
    /// damaged object fails as its GET does instead of finding nothing.
    pub fn current(&self, key: &Key) -> Result<Option<Arc<StoredObject>>, StorageError> {
        let state = read(&self.inner.state);
        if let Some(damage) = state.damaged.get(key) {
            return Err(damage.error(key));
        }
        Ok(state.index.get(key).cloned())
    }

    /// Why `key` cannot be read, if its stored version is damaged.
    pub fn damage(&self, key: &Key) -> Option<StorageError> {
        read(&self.inner.state)
            .damaged
            .get(key)
            .map(|d| d.error(key))
    }

    /// Every damaged key (found when the store was opened and not written since).
    pub fn damaged(&self) -> Vec<(Key, Damage)> {
        read(&self.inner.state)
            .damaged
            .iter()
            .map(|(k, d)| (k.clone(), d.clone()))
            .collect()
    }

    /// [`StorageError::Unreadable`] if damaged keys fall under `prefix`.
    fn check_readable(&self, prefix: &Prefix) -> Result<(), StorageError> {
        let state = read(&self.inner.state);
        let objects: Vec<StorageError> = state
            .damaged
            .iter()
            .filter(|(k, _)| prefix.contains(k))
            .map(|(k, d)| d.error(k))
            .collect();
        if objects.is_empty() {
            return Ok(());
        }
        Err(StorageError::Unreadable {
            prefix: prefix.0.clone(),
            objects,
        })
    }

    /// Every current object under `prefix`, in key order, and the revision the
    /// list is consistent with.
    pub fn list(&self, prefix: &Prefix) -> (Vec<Arc<StoredObject>>, u64) {
        let state = read(&self.inner.state);
        let items = history::index_range(&state.index, prefix, None)
            .cloned()
            .collect();
        (items, state.revision)
    }

    /// A cheap fingerprint of what lives under `prefix`: how many objects and
    /// the newest revision among them. Any write under the prefix changes it
    /// (a put brings a newer revision, a delete lowers the count), so caches
    /// derived from a few objects (the RBAC policy, webhook configurations)
    /// can tell whether to rebuild without copying anything.
    pub fn fingerprint(&self, prefix: &Prefix) -> (usize, u64) {
        let state = read(&self.inner.state);
        history::index_range(&state.index, prefix, None)
            .fold((0, 0), |(n, rev), o| (n + 1, rev.max(o.revision)))
    }

    /// Writes `object` at `key` if `precondition` holds; stamps its
    /// `metadata.resourceVersion` and returns the stored version once durable.
    ///
    /// Concurrent writes are committed together (group commit); the
    /// precondition is checked against the state including the writes queued
    /// before this one. Once submitted (first poll), a write is not cancelled
    /// by dropping the future.
    pub async fn put(
        &self,
        key: Key,
        object: Value,
        attrs: Attrs,
        precondition: Precondition,
    ) -> Result<Arc<StoredObject>, WriteError> {
        self.write(writer::Op::Put {
            key,
            object,
            attrs,
            precondition,
        })
        .await
    }

    /// Deletes `key` if `precondition` holds; returns its last state, stamped
    /// with the deletion's revision, once durable. Deleting an absent key is
    /// a [`WriteError::Conflict`] with no current object.
    pub async fn delete(
        &self,
        key: &Key,
        precondition: Precondition,
    ) -> Result<Arc<StoredObject>, WriteError> {
        self.write(writer::Op::Delete {
            key: key.clone(),
            precondition,
        })
        .await
    }

    async fn write(&self, op: writer::Op) -> Result<Arc<StoredObject>, WriteError> {
        let (reply, answer) = oneshot::channel();
        writer::submit(&self.inner, writer::Request { op, reply });
        answer
            .await
            .map_err(|_| StorageError::Io("storage writer stopped".to_owned()))?
    }

    /// Compacts the log up to `revision` (clamped to the current revision)
    /// now, whatever the [`Retention`]: only the state at `revision` and the
    /// changes after it remain. Returns the compacted revision, which never
    /// decreases. Afterwards, watches and historical lists from an older
    /// revision fail with [`StorageError::Expired`]. The writer also compacts
    /// by itself, by the configured retention.
    pub async fn compact(&self, revision: u64) -> Result<u64, StorageError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || compaction::compact(&inner, revision))
            .await
            .map_err(io)?
    }

    /// Every object under `prefix` as it was at `revision`, in key order, and
    /// `revision` itself (for `resourceVersionMatch=Exact`).
    ///
    /// At the current revision this is [`Store::list`]; an older one is
    /// rebuilt by rewinding the changes made since — from memory while they
    /// are in the event window, else from a consistent snapshot of the
    /// on-disk log. Fails with [`StorageError::Expired`] below the compacted
    /// revision and [`StorageError::TooLarge`] above the current one.
    pub fn list_at(
        &self,
        prefix: &Prefix,
        revision: u64,
    ) -> Result<(Vec<Arc<StoredObject>>, u64), StorageError> {
        let page = self.list_page(prefix, revision, None, 0)?;
        Ok((page.items, page.revision))
    }

    /// One page of the objects under `prefix` as they were at `revision`:
    /// those with keys after `start_after`, in key order, at most `limit` of
    /// them (`0`: no limit, as Kubernetes' `limit=0`). Serve `limit` /
    /// `continue` by listing the first page at the current revision, then
    /// passing [`Page::revision`] and [`Page::next`] back for the next one;
    /// every page is then consistent with that one revision. Errors as
    /// [`Store::list_at`].
    pub fn list_page(
        &self,
        prefix: &Prefix,
        revision: u64,
        start_after: Option<&Key>,
        limit: usize,
    ) -> Result<Page, StorageError> {
        self.list_page_where(prefix, revision, start_after, limit, |_| true)
    }

    /// [`Store::list_page`] counting only the objects `filter` accepts
    /// (label and field selectors): the page holds up to `limit` accepted
    /// objects. As with etcd-backed kube-apiserver, [`Page::next`] is set when
    /// any object (accepted or not) follows the page.
    pub fn list_page_where(
        &self,
        prefix: &Prefix,
        revision: u64,
        start_after: Option<&Key>,
        limit: usize,
        filter: impl FnMut(&StoredObject) -> bool,
    ) -> Result<Page, StorageError> {
        self.check_readable(prefix)?;
        let limit = if limit == 0 { usize::MAX } else { limit };
        history::page(&self.inner, prefix, revision, start_after, limit, filter)
    }

    /// Watches changes under `prefix` after revision `since` (`None`: from
    /// now; a future revision waits for it). Past events are read as the
    /// watcher consumes them, a bounded chunk at a time: from the event
    /// window while they are in it, else from the on-disk log (read outside
    /// any lock writers need). Fails with [`StorageError::Expired`] when
    /// `since` is below the compacted revision.
    ///
    /// A watch that [lags](WatchError::Lagged) resumes without gaps by
    /// watching again from its [`WatchStream::last_revision`].
    pub fn watch(&self, prefix: Prefix, since: Option<u64>) -> Result<WatchStream, StorageError> {
        watch::start(&self.inner, prefix, since)
    }

    /// How many watch streams exist: open ones, and ended ones (the store
    /// ended them, or they lagged) until their holder drops them.
    pub fn open_watches(&self) -> usize {
        self.inner.watchers.open()
    }
}

impl Inner {
    /// A snapshot of the log for reading history from revision `requested`
    /// on. Committed records are immutable, except that compaction may have
    /// removed them since the caller looked: the snapshot's compacted
    /// revision tells ([`StorageError::Expired`]).
    fn history_from(
        &self,
        requested: u64,
    ) -> Result<redb::ReadOnlyTable<u64, &'static [u8]>, StorageError> {
        let Some(db) = &self.db else {
            // No log: what is not in the window is compacted.
            return Err(StorageError::Expired {
                requested,
                oldest: read(&self.state).compacted.max(requested.saturating_add(1)),
            });
        };
        let snapshot = db.begin_read().map_err(io)?;
        let meta = snapshot.open_table(META).map_err(io)?;
        let compacted = meta
            .get(META_COMPACTED)
            .map_err(io)?
            .map_or(0, |g| g.value());
        if requested < compacted {
            return Err(StorageError::Expired {
                requested,
                oldest: compacted,
            });
        }
        snapshot.open_table(LOG).map_err(io)
    }
}

/// The object version written at `revision`, from the log.
fn load_version(
    log: &impl ReadableTable<u64, &'static [u8]>,
    revision: u64,
) -> Result<Arc<StoredObject>, StorageError> {
    let record = log
        .get(revision)
        .map_err(io)?
        .ok_or_else(|| StorageError::Corrupt(format!("revision {revision} is missing")))?;
    codec::decode_version(record.value(), revision)
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
