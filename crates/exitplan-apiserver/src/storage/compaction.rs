//! Compaction: removing the revision log's old entries by the [`Retention`]
//! policy, and persisting the compacted revision.
//!
//! Compacting to revision `C` removes from the log every version replaced
//! by a change at or before `C`, and every deletion at or before `C`; what
//! stays at or before `C` is exactly the state at `C` (as etcd's MVCC keeps
//! it), so watches from `C` on and lists at `C` or later are still served.
//!
//! The writer records, once per batch, which revision was the newest at what
//! time — bucketed to the next whole second, so a revision never looks older
//! than it is — and, every [`StoreConfig::compaction_interval`], compacts up to
//! the newest revision that is both older than `retention.duration` and more
//! than `retention.min_revisions` behind the head. It also records how many
//! bytes of object versions it has written (the event window counts them):
//! once the history after the compacted revision exceeds `retention.max_bytes`
//! by an eighth, it compacts at once, whatever the age of the revisions, to
//! the oldest revision that leaves at most `retention.max_bytes` of history.
//! [`Store::compact`] compacts explicitly. All take the schedule's lock, so
//! the compacted revision only ever grows.
//!
//! A damaged record (its checksum fails) does not stop compaction: it is
//! logged (once: compaction reads each revision once) and passed over. Its
//! header, read unchecked, still says whether it was a deletion (which
//! goes) and which version it replaced (which goes if it is an older record
//! of the same key), so a deleted object cannot come back at the next
//! start; otherwise it stays on disk below the compacted revision, where
//! only recovery reads it (and reports its key damaged). Nothing at or
//! below the compacted revision is served.
//!
//! [`Retention`]: super::Retention
//! [`StoreConfig::compaction_interval`]: super::StoreConfig::compaction_interval
//! [`Store::compact`]: super::Store::compact

use std::collections::VecDeque;

use jiff::{SignedDuration, Timestamp};
use redb::{Durability, ReadableTable};

use super::{
    EventType, Inner, LOG, META, META_COMPACTED, StorageError, codec, io, lock, read, write,
};

/// The most revisions one compaction transaction covers.
const CHUNK: u64 = 50_000;

/// When revisions were written, and when to compact next.
#[derive(Debug)]
pub(super) struct Schedule {
    /// `(t, r)`: every revision up to `r` was written at or before `t`;
    /// oldest first.
    written: VecDeque<(Timestamp, u64)>,
    /// The newest revision known to be older than the retention duration.
    aged: u64,
    next_run: Timestamp,
    /// `(r, b)`: after revision `r`, `b` bytes of object versions had been
    /// written since the store was opened; oldest first, at least an
    /// eighth of `retention.max_bytes` apart but for the newest.
    logged: VecDeque<(u64, u64)>,
}

/// `now` rounded up to the next whole second.
fn bucket(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second().saturating_add(1)).unwrap_or(Timestamp::MAX)
}

impl Schedule {
    /// A schedule for a store recovered at revision `head` at `now`: the
    /// recovered revisions count as written now.
    pub(super) fn new(now: Timestamp, head: u64) -> Self {
        Schedule {
            written: VecDeque::from([(bucket(now), head)]),
            aged: 0,
            next_run: now,
            logged: VecDeque::from([(head, 0)]),
        }
    }

    /// Notes that `bytes` had been written when `head` was the newest
    /// revision.
    fn record_bytes(&mut self, head: u64, bytes: u64, step: u64) {
        let len = self.logged.len();
        let coalesce = len >= 2
            && self
                .logged
                .get(len - 2)
                .is_some_and(|&(_, b)| bytes - b < step);
        if coalesce && let Some(back) = self.logged.back_mut() {
            *back = (head, bytes);
        } else {
            self.logged.push_back((head, bytes));
        }
    }

    /// The revision to compact up to so that at most `max` bytes of
    /// history remain, once more than `max + step` have accumulated
    /// (0: not yet).
    fn bytes_target(&mut self, bytes: u64, max: u64, step: u64) -> u64 {
        let Some(&(_, oldest)) = self.logged.front() else {
            return 0;
        };
        if bytes - oldest <= max.saturating_add(step) {
            return 0;
        }
        // The newest entry is `(head, bytes)`, so the loop stops at one.
        while let Some(&(r, b)) = self.logged.front() {
            if bytes - b <= max {
                return r;
            }
            self.logged.pop_front();
        }
        0
    }

    /// Notes that `head` is the newest revision at `now`.
    fn record(&mut self, now: Timestamp, head: u64) {
        let at = bucket(now);
        match self.written.back_mut() {
            Some((t, r)) if *t >= at => *r = (*r).max(head),
            _ => self.written.push_back((at, head)),
        }
    }

    /// The revision the policy allows compacting up to at `now`.
    fn target(&mut self, now: Timestamp, head: u64, inner: &Inner) -> u64 {
        let retention = inner.config.retention;
        let duration = SignedDuration::try_from(retention.duration).unwrap_or(SignedDuration::MAX);
        let horizon = exitplan_api::time::add(now, -duration);
        while let Some(&(t, r)) = self.written.front() {
            if t > horizon {
                break;
            }
            self.aged = self.aged.max(r);
            self.written.pop_front();
        }
        self.aged.min(head.saturating_sub(retention.min_revisions))
    }
}

/// After each batch: note the head and the bytes written, and compact by
/// the policy when due (at once when the history exceeds its bytes).
pub(super) fn after_batch(inner: &Inner) {
    let now = inner.config.clock.now();
    let (head, bytes) = {
        let state = read(&inner.state);
        (state.revision, state.window.logged())
    };
    let max_bytes = inner.config.retention.max_bytes;
    let step = (max_bytes / 8).max(1);
    let mut schedule = lock(&inner.compaction);
    schedule.record(now, head);
    schedule.record_bytes(head, bytes, step);
    let mut target = schedule.bytes_target(bytes, max_bytes, step);
    if now >= schedule.next_run {
        let interval = SignedDuration::try_from(inner.config.compaction_interval)
            .unwrap_or(SignedDuration::MAX);
        schedule.next_run = exitplan_api::time::add(now, interval);
        target = target.max(schedule.target(now, head, inner));
    } else if target == 0 {
        return;
    }
    if let Err(e) = compact_locked(inner, target) {
        tracing::warn!(error = %e, target, "storage compaction failed");
    }
}

/// Compacts up to `revision` (clamped to the head) regardless of the
/// policy; returns the compacted revision.
pub(super) fn compact(inner: &Inner, revision: u64) -> Result<u64, StorageError> {
    let _schedule = lock(&inner.compaction);
    compact_locked(inner, revision)
}

/// Compacts up to `target`; the caller holds the schedule's lock.
fn compact_locked(inner: &Inner, target: u64) -> Result<u64, StorageError> {
    let (from, head) = {
        let state = read(&inner.state);
        (state.compacted, state.revision)
    };
    let target = target.min(head);
    if target <= from {
        return Ok(from);
    }
    let Some(db) = &inner.db else {
        // No log: the window is the history.
        let mut state = write(&inner.state);
        state.compacted = target;
        state.window.drop_through(target);
        return Ok(target);
    };
    let mut done = from;
    let mut removed = 0;
    while done < target {
        let to = target.min(done.saturating_add(CHUNK));
        let mut txn = db.begin_write().map_err(io)?;
        txn.set_durability(Durability::Immediate).map_err(io)?;
        {
            let mut log = txn.open_table(LOG).map_err(io)?;
            // Each change up to `to` retires the version it replaced, and a
            // deletion itself: what stays up to `to` is the state at `to`.
            let mut retired = Vec::new();
            // (revision of a damaged record, the version it names as replaced, its key)
            let mut damaged = Vec::new();
            for row in log.range(done + 1..=to).map_err(io)? {
                let (k, v) = row.map_err(io)?;
                let revision = k.value();
                match codec::header(v.value()) {
                    Ok(header) => {
                        if header.prev != 0 {
                            retired.push(header.prev);
                        }
                        if header.event_type == EventType::Deleted {
                            retired.push(revision);
                        }
                    }
                    Err(e) => {
                        let hint = codec::header_hint(v.value());
                        tracing::error!(
                            revision,
                            key = hint.map(|h| h.key),
                            error = %e,
                            "compaction passes over a damaged log record"
                        );
                        if let Some(h) = hint {
                            if h.event_type == EventType::Deleted {
                                retired.push(revision);
                            }
                            if h.prev != 0 && h.prev < revision {
                                damaged.push((revision, h.prev, h.key.to_owned()));
                            }
                        }
                    }
                }
            }
            // What a damaged record says it replaced is read unchecked: it
            // goes only if it is an older record of the same key.
            for (revision, prev, key) in damaged {
                let same_key = log
                    .get(prev)
                    .map_err(io)?
                    .is_some_and(|r| codec::header_hint(r.value()).is_some_and(|h| h.key == key));
                if same_key {
                    retired.push(prev);
                } else {
                    tracing::warn!(
                        revision,
                        prev,
                        "the version a damaged log record replaced is not found; it is kept"
                    );
                }
            }
            for revision in retired {
                removed += usize::from(log.remove(revision).map_err(io)?.is_some());
            }
            let mut meta = txn.open_table(META).map_err(io)?;
            meta.insert(META_COMPACTED, to).map_err(io)?;
        }
        txn.commit().map_err(io)?;
        let mut state = write(&inner.state);
        state.compacted = to;
        state.window.drop_through(to);
        done = to;
    }
    tracing::info!(compacted = target, removed, head, "storage log compacted");
    Ok(target)
}
