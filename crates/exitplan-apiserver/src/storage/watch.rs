//! Watches on the store: first the past events after the requested
//! revision, then live ones, without gaps or repeats; and, for bookmarks,
//! the revision up to which the watcher has seen everything.
//!
//! Memory a watch holds is bounded:
//!
//! * **Past events** (the catch-up from the requested revision to the
//!   revision current when the watch started) are read as the watcher
//!   consumes them, [`CATCH_UP_BYTES`] at a time, from the event window while
//!   it still has them and from the log otherwise.
//! * **Live events** go into a queue per watcher, which the writer fills as
//!   it publishes a batch (only with events under the watcher's prefix) and
//!   never waits for. A watcher whose queue exceeds
//!   [`StoreConfig::watch_buffer`] events or
//!   [`StoreConfig::watch_buffer_bytes`] bytes is ended — its queue dropped
//!   at once — and reads [`WatchError::Lagged`], as kube-apiserver's cacher
//!   closes a watcher that does not keep up ("Forcing watcher close due to
//!   unresponsiveness"). Its client watches again from the last revision it
//!   received, served from the window or the log.
//!
//! [`StoreConfig::watch_buffer`]: super::StoreConfig::watch_buffer
//! [`StoreConfig::watch_buffer_bytes`]: super::StoreConfig::watch_buffer_bytes

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::Notify;

use super::history::footprint;
use super::{Event, Inner, Prefix, StorageError, codec, io, lock, read};

/// The most bytes of past events read into a watcher at a time (at least
/// one event is always read).
const CATCH_UP_BYTES: usize = 4 * 1024 * 1024;

/// Why a watch ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// The watcher fell too far behind the writers (writers never wait for
    /// watchers): it was ended and its queued events dropped. Watching again
    /// from [`WatchStream::last_revision`] resumes without gaps, served from
    /// the event window or the on-disk log.
    #[error("watcher fell behind by {0} events")]
    Lagged(u64),
    /// The past events the watcher still had to read were compacted away
    /// while it read them (HTTP 410 `Expired`).
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The revision the watcher had reached.
        requested: u64,
        /// The oldest revision still available.
        oldest: u64,
    },
    /// The log could not be read.
    #[error("storage error: {0}")]
    Failed(String),
    /// The store is gone.
    #[error("store closed")]
    Closed,
}

impl From<StorageError> for WatchError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Expired { requested, oldest } => {
                WatchError::Expired { requested, oldest }
            }
            other => WatchError::Failed(other.to_string()),
        }
    }
}

/// What [`WatchStream::next_or_progress`] yields.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchItem {
    /// A change under the watched prefix.
    Event(Event),
    /// No change arrived in time; the watcher has seen every change under its
    /// prefix up to this revision (a `BOOKMARK` event's `resourceVersion`).
    Progress(u64),
}

/// One watcher's queue of live events, filled by the writer.
#[derive(Debug)]
struct Queue {
    prefix: Prefix,
    state: Mutex<Queued>,
    /// Signalled when an event is queued or the watch is ended.
    notify: Notify,
    /// Signalled once when the watch is ended (for [`WatchEnd`]).
    ended: Notify,
}

#[derive(Debug, Default)]
struct Queued {
    events: VecDeque<Event>,
    /// What `events` hold, by [`footprint`].
    bytes: usize,
    /// Set once the watch is ended; nothing is queued afterwards.
    ended: Option<WatchError>,
}

/// The open watches, by resource, and how much each may fall behind.
#[derive(Debug)]
pub(super) struct Watchers {
    by_resource: Mutex<HashMap<String, Vec<Weak<Queue>>>>,
    /// How many [`WatchStream`]s exist.
    open: Arc<AtomicUsize>,
    max_events: usize,
    max_bytes: usize,
}

/// The resource part of a key or prefix (`pods/ns/name` → `pods`).
fn resource(key: &str) -> &str {
    key.split('/').next().unwrap_or(key)
}

impl Watchers {
    /// No watchers yet; each may hold up to `max_events` events and
    /// `max_bytes` bytes of them.
    pub(super) fn new(max_events: usize, max_bytes: usize) -> Self {
        Watchers {
            by_resource: Mutex::new(HashMap::new()),
            open: Arc::default(),
            max_events: max_events.max(1),
            max_bytes: max_bytes.max(1),
        }
    }

    /// How many watch streams exist (ended ones too, until dropped).
    pub(super) fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    fn register(&self, prefix: Prefix) -> Arc<Queue> {
        let queue = Arc::new(Queue {
            prefix,
            state: Mutex::new(Queued::default()),
            notify: Notify::new(),
            ended: Notify::new(),
        });
        let mut all = lock(&self.by_resource);
        let list = all.entry(resource(&queue.prefix.0).to_owned()).or_default();
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(&queue));
        queue
    }

    /// Queues `event` for every watcher under whose prefix it falls; ends
    /// the watchers it would put over their bounds. Called by the writer,
    /// in revision order, before it publishes the revision.
    pub(super) fn dispatch(&self, event: &Event) {
        let key = event.object.key.as_str();
        let mut all = lock(&self.by_resource);
        let Some(list) = all.get_mut(resource(key)) else {
            return;
        };
        let size = footprint(&event.object);
        list.retain(|weak| {
            let Some(queue) = weak.upgrade() else {
                return false; // the watch was dropped
            };
            if !queue.prefix.contains_str(key) {
                return true;
            }
            let mut q = lock(&queue.state);
            if q.ended.is_some() {
                return false;
            }
            q.events.push_back(event.clone());
            q.bytes += size;
            if q.events.len() > self.max_events || q.bytes > self.max_bytes {
                tracing::info!(
                    prefix = queue.prefix.0.as_str(),
                    queued = q.events.len(),
                    queued_bytes = q.bytes,
                    revision = event.object.revision,
                    "forcing watcher close due to unresponsiveness"
                );
                let dropped = q.events.len() as u64;
                q.events = VecDeque::new();
                q.bytes = 0;
                q.ended = Some(WatchError::Lagged(dropped));
                drop(q);
                queue.notify.notify_one();
                queue.ended.notify_one();
                return false;
            }
            drop(q);
            queue.notify.notify_one();
            true
        });
    }
}

impl Drop for Watchers {
    /// The store is gone: every open watch ends.
    fn drop(&mut self) {
        let all = std::mem::take(&mut *lock(&self.by_resource));
        for queue in all.into_values().flatten().filter_map(|w| w.upgrade()) {
            let mut q = lock(&queue.state);
            q.events.clear();
            q.bytes = 0;
            q.ended.get_or_insert(WatchError::Closed);
            drop(q);
            queue.notify.notify_one();
            queue.ended.notify_one();
        }
    }
}

/// The past events a watch still has to read: those in `(read, until]`.
#[derive(Debug)]
struct CatchUp {
    /// Read up to here (the events read are in `chunk`).
    read: u64,
    /// The revision current when the watch started; later events are queued.
    until: u64,
    chunk: VecDeque<Event>,
}

/// Starts a watch under `prefix` after `since` (see [`super::Store::watch`]).
pub(super) fn start(
    inner: &Arc<Inner>,
    prefix: Prefix,
    since: Option<u64>,
) -> Result<WatchStream, StorageError> {
    let state = read(&inner.state);
    let since = since.unwrap_or(state.revision);
    if since < state.compacted {
        return Err(StorageError::Expired {
            requested: since,
            oldest: state.compacted,
        });
    }
    // Registered under the lock the writer publishes under: every event up
    // to `state.revision` is in the window or the log, every later one is
    // queued.
    let queue = inner.watchers.register(prefix.clone());
    let catch_up = (since < state.revision).then(|| CatchUp {
        read: since,
        until: state.revision,
        chunk: VecDeque::new(),
    });
    drop(state);
    inner.watchers.open.fetch_add(1, Ordering::Relaxed);
    Ok(WatchStream {
        _open: Open(inner.watchers.open.clone()),
        prefix,
        last: since,
        catch_up,
        queue,
        store: Arc::downgrade(inner),
        head: inner.head.clone(),
    })
}

/// Completes once the store has ended a watch — it fell behind
/// ([`WatchError::Lagged`]) or the store closed — whether or not its reader
/// takes the rest: whoever waits for the reader's client can drop the
/// watch then (see [`WatchStream::end`]).
#[derive(Debug)]
pub struct WatchEnd(Arc<Queue>);

impl WatchEnd {
    /// Waits for the end. Cancel-safe.
    pub async fn wait(&self) {
        loop {
            if lock(&self.0.state).ended.is_some() {
                return;
            }
            // Only the store's end signals this; a permit stored since the
            // check wakes this at once.
            self.0.ended.notified().await;
        }
    }
}

/// Counts a [`WatchStream`] in [`Watchers::open`] while it exists.
#[derive(Debug)]
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A stream of events under one prefix, in revision order.
pub struct WatchStream {
    /// Held for its `Drop`.
    _open: Open,
    prefix: Prefix,
    last: u64,
    catch_up: Option<CatchUp>,
    queue: Arc<Queue>,
    store: Weak<Inner>,
    head: Arc<AtomicU64>,
}

impl std::fmt::Debug for WatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream")
            .field("prefix", &self.prefix)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl WatchStream {
    /// The revision up to which every change under the prefix has been
    /// delivered: the last event's, the starting revision, or the last
    /// [`WatchItem::Progress`]. Resume a watch from here.
    pub fn last_revision(&self) -> u64 {
        self.last
    }

    fn deliver(&mut self, event: Event) -> Event {
        self.last = event.object.revision;
        event
    }

    /// The next past event, reading a chunk when needed; `None` once the
    /// catch-up is done.
    fn next_past(&mut self) -> Result<Option<Event>, WatchError> {
        loop {
            let Some(catch_up) = self.catch_up.as_mut() else {
                return Ok(None);
            };
            if let Some(e) = catch_up.chunk.pop_front() {
                return Ok(Some(e));
            }
            if catch_up.read >= catch_up.until {
                self.catch_up = None;
                return Ok(None);
            }
            let inner = self.store.upgrade().ok_or(WatchError::Closed)?;
            read_chunk(&inner, &self.prefix, catch_up)?;
        }
    }

    /// The next queued live event still owed, or why the watch ended.
    fn next_live(&mut self) -> Result<Option<Event>, WatchError> {
        let mut q = lock(&self.queue.state);
        while let Some(e) = q.events.pop_front() {
            q.bytes = q.bytes.saturating_sub(footprint(&e.object));
            if e.object.revision > self.last {
                drop(q);
                return Ok(Some(self.deliver(e)));
            }
        }
        match &q.ended {
            Some(e) => Err(e.clone()),
            None => Ok(None),
        }
    }

    /// A handle that completes once the store ends this watch, usable
    /// while something else holds the stream.
    pub fn end(&self) -> WatchEnd {
        WatchEnd(self.queue.clone())
    }

    /// The next event, waiting for one if needed. Cancel-safe.
    pub async fn next(&mut self) -> Result<Event, WatchError> {
        if let Some(e) = self.next_past()? {
            return Ok(self.deliver(e));
        }
        loop {
            if let Some(e) = self.next_live()? {
                return Ok(e);
            }
            // A permit stored by an event queued since the check above
            // wakes this at once.
            self.queue.notify.notified().await;
        }
    }

    /// The next event, or — when none arrives within `timeout` — the
    /// revision the watcher is now known to be complete up to, for the REST
    /// layer to send as a bookmark (`allowWatchBookmarks`). Taking progress
    /// also advances [`WatchStream::last_revision`], so quiet watchers resume
    /// from recent revisions. Cancel-safe.
    pub async fn next_or_progress(&mut self, timeout: Duration) -> Result<WatchItem, WatchError> {
        if let Ok(next) = tokio::time::timeout(timeout, self.next()).await {
            return next.map(WatchItem::Event);
        }
        // `next` only waits once the catch-up is done, and the writer queues
        // a revision's events before publishing the revision here: once the
        // queue is drained, everything up to `head` has been seen.
        let head = self.head.load(Ordering::Acquire);
        if let Some(e) = self.next_live()? {
            return Ok(WatchItem::Event(e));
        }
        self.last = self.last.max(head);
        Ok(WatchItem::Progress(self.last))
    }
}

/// Reads the next chunk of past events under `prefix` into `catch_up`:
/// from the window if it still reaches back far enough, else from a
/// snapshot of the log (without holding the lock writers need).
fn read_chunk(inner: &Inner, prefix: &Prefix, catch_up: &mut CatchUp) -> Result<(), WatchError> {
    let from = catch_up.read;
    let until = catch_up.until;
    let mut bytes = 0;
    let disk_until = {
        let state = read(&inner.state);
        let oldest = state.oldest_in_window();
        if from + 1 >= oldest {
            for r in state.window_after(from) {
                if r.revision() > until || bytes >= CATCH_UP_BYTES {
                    break;
                }
                catch_up.read = r.revision();
                if prefix.contains(r.key()) {
                    bytes += footprint(&r.event.object);
                    catch_up.chunk.push_back(r.event.clone());
                }
            }
            if catch_up.read == from {
                // The window holds nothing more up to `until`: the revisions
                // left were taken by other writes than this prefix's, or the
                // window was emptied by compaction up to `until`.
                catch_up.read = until;
            }
            return Ok(());
        }
        (oldest - 1).min(until)
    };
    let log = inner.history_from(from)?;
    for row in log.range(from + 1..=disk_until).map_err(io)? {
        if bytes >= CATCH_UP_BYTES {
            break;
        }
        let (k, v) = row.map_err(io)?;
        catch_up.read = k.value();
        if prefix.contains_str(codec::header(v.value())?.key) {
            let event = codec::decode_event(v.value())?;
            bytes += footprint(&event.object);
            catch_up.chunk.push_back(event);
        }
    }
    if bytes < CATCH_UP_BYTES {
        // The whole range was read (records compacted away left gaps).
        catch_up.read = disk_until;
    }
    Ok(())
}
