//! Group commit: one writer at a time drains the queue of pending writes as a
//! batch, checks each precondition against the state *including the earlier
//! writes of the batch*, assigns revisions in order, commits the batch in one
//! durable redb transaction (one fsync), then publishes it (index, event
//! window, watchers) and answers every request.
//!
//! After answering a batch, the writer waits for the clients it answered to
//! send their next writes — at most a quarter of what the batch took, and
//! never over [`MAX_LINGER`] — because closed-loop clients answered together
//! come back together: taking a batch at once would split them into two
//! halves committing alternately, halving the writes per fsync.
//!
//! The writer is started on demand by the first write that finds it idle
//! and stops when the queue is empty. It runs on tokio's blocking pool, so
//! the whole commit-then-publish step is immune to cancellation, and under a
//! paused test clock time does not auto-advance while a commit is running.
//! If the writer dies midway (a panic, or a failed commit whose on-disk
//! outcome is unknown), the store refuses further writes instead of risking
//! a revision being assigned twice; reopening recovers.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use redb::{Database, Durability};
use serde_json::Value;
use tokio::sync::oneshot;

use super::{
    Attrs, Event, EventType, Inner, Key, LOG, MAX_REQUEST_BYTES, META, META_REVISION, Precondition,
    Record, StorageError, StoredObject, WriteError, codec, compaction, io, lock, read,
    set_resource_version, write,
};

/// One write asked of the store.
#[derive(Debug)]
pub(super) enum Op {
    /// Store `object` at `key`.
    Put {
        key: Key,
        object: Value,
        attrs: Attrs,
        precondition: Precondition,
    },
    /// Remove `key`.
    Delete {
        key: Key,
        precondition: Precondition,
    },
}

impl Op {
    fn key(&self) -> &Key {
        match self {
            Op::Put { key, .. } | Op::Delete { key, .. } => key,
        }
    }
}

/// What a write is answered with.
pub(super) type Outcome = Result<Arc<StoredObject>, WriteError>;

/// A queued write and where to answer it.
#[derive(Debug)]
pub(super) struct Request {
    /// The write.
    pub op: Op,
    /// Where its outcome goes.
    pub reply: oneshot::Sender<Outcome>,
}

/// Pending writes, and whether a writer is draining them. Shared by the
/// store and its writer, which holds the store itself only while running a
/// batch: once a write is answered, dropping the last [`Store`] closes the
/// database at once (so it can be reopened).
///
/// [`Store`]: super::Store
#[derive(Debug, Default)]
pub(super) struct Queue {
    state: Mutex<Pending>,
    /// Signalled on submit while the writer lingers.
    arrived: Condvar,
}

#[derive(Debug, Default)]
struct Pending {
    requests: VecDeque<Request>,
    running: bool,
    /// While the writer lingers: how many queued requests wake it.
    wake_at: Option<usize>,
    /// A commit failed or the writer died inside a batch: refuse writes.
    failed: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        lock(&self.state)
    }

    /// Marks the store failed: no more writes are accepted.
    pub(super) fn fail(&self) {
        self.lock().failed = true;
    }
}

/// The longest a writer waits for the clients it just answered to send
/// their next writes, so they share the next commit.
const MAX_LINGER: Duration = Duration::from_millis(2);

fn stopped() -> StorageError {
    StorageError::Io("storage writer failed; reopen the store to recover".to_owned())
}

/// Queues `request`, starting the writer if it is idle.
pub(super) fn submit(inner: &Arc<Inner>, request: Request) {
    let start = {
        let mut pending = inner.queue.lock();
        if pending.failed {
            let _ = request.reply.send(Err(stopped().into()));
            return;
        }
        pending.requests.push_back(request);
        if pending.wake_at.is_some_and(|n| pending.requests.len() >= n) {
            inner.queue.arrived.notify_one();
        }
        !std::mem::replace(&mut pending.running, true)
    };
    if start {
        let writer = Writer {
            queue: inner.queue.clone(),
            store: Arc::downgrade(inner),
            max_batch: inner.config.max_batch.max(1),
            done: false,
            in_batch: false,
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || writer.run());
            }
            Err(_) => {
                // Outside tokio (e.g. a plain executor): a thread of its own.
                // If it cannot start, dropping `writer` fails the queue.
                let _ = std::thread::Builder::new()
                    .name("exitplan-store-writer".to_owned())
                    .spawn(move || writer.run());
            }
        }
    }
}

/// The running writer. Dropped without finishing (panic, or never run),
/// it fails the queued writes; dropped inside a batch, it also fails the store.
struct Writer {
    queue: Arc<Queue>,
    store: Weak<Inner>,
    max_batch: usize,
    done: bool,
    in_batch: bool,
}

impl Writer {
    fn run(mut self) {
        // Closed-loop clients answered together come back together: waiting
        // for them (briefly, relative to what a commit costs) keeps them in
        // one batch instead of splitting into two alternating halves.
        let mut answered = 0;
        let mut linger = Duration::ZERO;
        loop {
            let batch: Vec<Request> = {
                let mut pending = self.queue.lock();
                let expected = (pending.requests.len() + answered).min(self.max_batch);
                let deadline = Instant::now() + linger;
                while pending.requests.len() < expected {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                        break;
                    };
                    pending.wake_at = Some(expected);
                    pending = self
                        .queue
                        .arrived
                        .wait_timeout(pending, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    pending.wake_at = None;
                }
                if pending.requests.is_empty() {
                    pending.running = false;
                    self.done = true;
                    return;
                }
                let n = pending.requests.len().min(self.max_batch);
                pending.requests.drain(..n).collect()
            };
            answered = batch.len();
            let (ops, replies): (Vec<Op>, Vec<_>) =
                batch.into_iter().map(|r| (r.op, r.reply)).unzip();
            let started = Instant::now();
            let outcomes = match self.store.upgrade() {
                Some(inner) => {
                    self.in_batch = true;
                    let outcomes = process(&inner, ops);
                    self.in_batch = false;
                    outcomes
                }
                // Every handle is gone: nobody waits for these.
                None => ops.iter().map(|_| Err(stopped().into())).collect(),
            };
            linger = (started.elapsed() / 4).min(MAX_LINGER);
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                // A caller that went away no longer needs its answer.
                let _ = reply.send(outcome);
            }
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut pending = self.queue.lock();
        if self.in_batch {
            tracing::error!("storage writer stopped inside a batch; refusing further writes");
            pending.failed = true;
        }
        pending.running = false;
        pending.wake_at = None;
        for request in pending.requests.drain(..) {
            let _ = request.reply.send(Err(stopped().into()));
        }
    }
}

/// The planned effect of a batch: the records to commit (consecutive
/// revisions) and each request's outcome, in request order.
#[derive(Debug)]
pub(super) struct Plan {
    pub records: Vec<Record>,
    pub outcomes: Vec<Outcome>,
}

/// Plans `ops` in order after revision `head`. `lookup` reads the committed
/// state; earlier ops of the batch shadow it. A refused op takes no revision
/// and changes nothing for the others.
pub(super) fn plan(
    ops: Vec<Op>,
    head: u64,
    lookup: impl Fn(&Key) -> Option<Arc<StoredObject>>,
) -> Plan {
    let mut batch: HashMap<Key, Option<Arc<StoredObject>>> = HashMap::new();
    let mut records = Vec::new();
    let mut outcomes = Vec::with_capacity(ops.len());
    let mut revision = head;
    for op in ops {
        let current = match batch.get(op.key()) {
            Some(written) => written.clone(),
            None => lookup(op.key()),
        };
        match apply(op, current, revision + 1) {
            Ok(record) => {
                revision += 1;
                let object = record.event.object.clone();
                let after = match record.event.event_type {
                    EventType::Deleted => None,
                    EventType::Added | EventType::Modified => Some(object.clone()),
                };
                batch.insert(object.key.clone(), after);
                records.push(record);
                outcomes.push(Ok(object));
            }
            Err(e) => outcomes.push(Err(e)),
        }
    }
    Plan { records, outcomes }
}

/// The record `op` makes at `revision` over `current`, if its precondition holds.
fn apply(op: Op, current: Option<Arc<StoredObject>>, revision: u64) -> Result<Record, WriteError> {
    let precondition = match &op {
        Op::Put { precondition, .. } | Op::Delete { precondition, .. } => *precondition,
    };
    let holds = match precondition {
        Precondition::None => true,
        Precondition::Absent => current.is_none(),
        Precondition::Exists => current.is_some(),
        Precondition::Revision(r) => current.as_ref().is_some_and(|c| c.revision == r),
    };
    if !holds {
        return Err(WriteError::Conflict { current });
    }
    let to_json = |value: &Value| {
        serde_json::to_vec(value)
            .map(Bytes::from)
            .map_err(|e| StorageError::Corrupt(e.to_string()))
    };
    let (event_type, object) = match op {
        Op::Put {
            key,
            mut object,
            attrs,
            ..
        } => {
            set_resource_version(&mut object, revision);
            let event_type = match current {
                Some(_) => EventType::Modified,
                None => EventType::Added,
            };
            let json = to_json(&object)?;
            let size = key.as_str().len() + json.len();
            if size > MAX_REQUEST_BYTES {
                return Err(WriteError::TooLarge {
                    error: StorageError::RequestTooLarge {
                        size,
                        limit: MAX_REQUEST_BYTES,
                    },
                    object,
                });
            }
            (
                event_type,
                StoredObject {
                    key,
                    revision,
                    json,
                    attrs,
                },
            )
        }
        Op::Delete { key, .. } => {
            let Some(last) = &current else {
                return Err(WriteError::Conflict { current: None });
            };
            let mut value = last.value()?;
            set_resource_version(&mut value, revision);
            let json = to_json(&value)?;
            (
                EventType::Deleted,
                StoredObject {
                    key,
                    revision,
                    json,
                    attrs: last.attrs.clone(),
                },
            )
        }
    };
    Ok(Record {
        event: Event {
            event_type,
            object: Arc::new(object),
        },
        prev: current,
    })
}

/// Runs one batch — plan, commit, publish, housekeeping — and returns each
/// write's outcome, in order.
fn process(inner: &Inner, ops: Vec<Op>) -> Vec<Outcome> {
    let Plan { records, outcomes } = {
        let state = read(&inner.state);
        plan(ops, state.revision, |key| state.index.get(key).cloned())
    };
    if records.is_empty() {
        return outcomes;
    }
    let written = records.len() as u64;
    let started = Instant::now();
    let committed = match &inner.db {
        Some(db) => commit(db, &records),
        // An in-memory store without a log: publishing is committing.
        None => Ok(()),
    };
    if let Some(h) = inner.commit_seconds.get() {
        h.observe(started.elapsed().as_secs_f64());
    }
    if let Err(e) = committed {
        // The transaction may or may not be on disk: stop writing rather
        // than risk reusing its revisions.
        tracing::error!(error = %e, "storage commit failed; refusing further writes");
        inner.queue.fail();
        return outcomes
            .iter()
            .map(|_| Err(WriteError::Storage(e.clone())))
            .collect();
    }
    inner.commits.fetch_add(1, Ordering::Relaxed);
    inner.writes.fetch_add(written, Ordering::Relaxed);
    publish(inner, records);
    compaction::after_batch(inner);
    outcomes
}

/// Commits `records` (consecutive revisions) in one durable transaction.
fn commit(db: &Database, records: &[Record]) -> Result<(), StorageError> {
    let mut txn = db.begin_write().map_err(io)?;
    txn.set_durability(Durability::Immediate).map_err(io)?;
    {
        let mut log = txn.open_table(LOG).map_err(io)?;
        for record in records {
            log.insert(record.revision(), codec::encode_record(record).as_slice())
                .map_err(io)?;
        }
        if let Some(last) = records.last() {
            let mut meta = txn.open_table(META).map_err(io)?;
            meta.insert(META_REVISION, last.revision()).map_err(io)?;
        }
    }
    txn.commit().map_err(io)
}

/// Makes committed records visible: index, revision, window and watchers
/// change together under the state lock, so a list is consistent with the
/// revision it reports and a new watch sees each event either in its backlog
/// or live, never neither nor both.
fn publish(inner: &Inner, records: Vec<Record>) {
    let mut state = write(&inner.state);
    for record in records {
        let object = &record.event.object;
        state.damaged.remove(&object.key);
        match record.event.event_type {
            EventType::Deleted => state.index.remove(&object.key),
            EventType::Added | EventType::Modified => {
                state.index.insert(object.key.clone(), object.clone())
            }
        };
        state.revision = object.revision;
        inner.watchers.dispatch(&record.event);
        state.window.push(record);
    }
    if inner.db.is_none() {
        // Without a log, history is the window: what left it is compacted.
        let oldest = state.oldest_in_window();
        state.compacted = state.compacted.max(oldest - 1);
    }
    // After the dispatch: whoever reads this revision can drain them.
    inner.head.store(state.revision, Ordering::Release);
}
