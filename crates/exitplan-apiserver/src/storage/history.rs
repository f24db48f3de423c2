//! Lists at a past revision, whole or by page.
//!
//! The state at revision `r` is the current index with the changes made
//! after `r` rewound: every log record knows the version it replaced, so the
//! first change to a key after `r` tells what that key was at `r` (absent,
//! for a creation). Those keys form an *overlay* merged, in key order, over
//! the index. At the current revision there is no overlay at all, so a page
//! costs what [`Store::list`](super::Store::list) costs.
//!
//! The changes still in the in-memory [`Window`] are rewound from memory;
//! older ones are read from a redb snapshot of the log *without* holding the
//! lock writers need, after which the window is checked to still reach back
//! to where the disk read ended (else the gap is read too).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use super::{
    Inner, Key, Prefix, Record, StorageError, StoredObject, codec, io, load_version, read,
};

/// What an object version costs in memory, roughly: its JSON, key and
/// selector attributes plus a fixed overhead. The window, compaction and
/// watchers' queues count bytes with it.
pub(super) fn footprint(object: &StoredObject) -> usize {
    let attrs: usize = [&object.attrs.labels, &object.attrs.fields]
        .iter()
        .flat_map(|m| m.iter())
        .map(|(k, v)| k.len() + v.len() + 48)
        .sum();
    object.json.len() + object.key.as_str().len() + attrs + 96
}

/// The newest committed changes kept in memory, contiguous in revision and
/// oldest first, bounded both by count and by bytes (each record counts its
/// object and the version it replaced, which it keeps alive): whichever
/// bound is reached first drops the oldest records. Older changes are read
/// from the log.
#[derive(Debug)]
pub(super) struct Window {
    records: VecDeque<Record>,
    /// What the records hold, by [`footprint`].
    bytes: usize,
    /// The footprints of every object ever pushed: how much the log has
    /// grown since the store was opened (compaction bounds history by it).
    logged: u64,
    max_records: usize,
    max_bytes: usize,
}

fn record_bytes(record: &Record) -> usize {
    footprint(&record.event.object) + record.prev.as_deref().map_or(0, footprint)
}

impl Window {
    /// An empty window of at most `max_records` records and `max_bytes`.
    pub(super) fn new(max_records: usize, max_bytes: usize) -> Self {
        Window {
            records: VecDeque::new(),
            bytes: 0,
            logged: 0,
            max_records,
            max_bytes,
        }
    }

    /// Appends the next committed record, dropping the oldest ones beyond
    /// the bounds.
    pub(super) fn push(&mut self, record: Record) {
        self.bytes += record_bytes(&record);
        self.logged += footprint(&record.event.object) as u64;
        self.records.push_back(record);
        while self.records.len() > self.max_records || self.bytes > self.max_bytes {
            let Some(old) = self.records.pop_front() else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(record_bytes(&old));
        }
    }

    /// Drops the records up to and including `revision` (compacted away).
    pub(super) fn drop_through(&mut self, revision: u64) {
        while self
            .records
            .front()
            .is_some_and(|r| r.revision() <= revision)
        {
            if let Some(old) = self.records.pop_front() {
                self.bytes = self.bytes.saturating_sub(record_bytes(&old));
            }
        }
    }

    /// The oldest record's revision, if any.
    pub(super) fn oldest(&self) -> Option<u64> {
        self.records.front().map(Record::revision)
    }

    /// The bytes of every object written since the store was opened.
    pub(super) fn logged(&self) -> u64 {
        self.logged
    }

    /// The records after revision `since`, oldest first.
    pub(super) fn after(&self, since: u64) -> impl Iterator<Item = &Record> {
        let skip = match self.oldest() {
            Some(oldest) => since.saturating_add(1).saturating_sub(oldest),
            None => 0,
        };
        self.records
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
    }
}

/// One page of a list, consistent with one revision.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// The objects, in key order.
    pub items: Vec<Arc<StoredObject>>,
    /// The revision the page shows (a list's `resourceVersion`).
    pub revision: u64,
    /// When more objects follow: the key to pass as `start_after`, with
    /// `revision`, for the next page (what a `continue` token carries).
    pub next: Option<Key>,
}

/// What keys changed after a revision were at that revision (`None`: absent).
type Overlay = BTreeMap<Key, Option<Arc<StoredObject>>>;

/// The index entries under `prefix`, after `start_after` if given, in key order.
pub(super) fn index_range<'a>(
    index: &'a BTreeMap<Key, Arc<StoredObject>>,
    prefix: &'a Prefix,
    start_after: Option<&Key>,
) -> impl Iterator<Item = &'a Arc<StoredObject>> + 'a {
    let start = Key(prefix.0.clone());
    let lower = match start_after {
        Some(after) if *after >= start => Bound::Excluded(after.clone()),
        _ => Bound::Included(start),
    };
    index
        .range((lower, Bound::Unbounded))
        .take_while(move |(k, _)| prefix.contains(k))
        .map(|(_, v)| v)
}

/// A page of the objects under `prefix` at `revision`.
pub(super) fn page(
    inner: &Inner,
    prefix: &Prefix,
    revision: u64,
    start_after: Option<&Key>,
    limit: usize,
    filter: impl FnMut(&StoredObject) -> bool,
) -> Result<Page, StorageError> {
    // First changes after `revision`, up to `rewound`, read from disk.
    let mut overlay = Overlay::new();
    let mut rewound = revision;
    loop {
        let until = {
            let state = read(&inner.state);
            if revision > state.revision {
                return Err(StorageError::TooLarge {
                    requested: revision,
                    current: state.revision,
                });
            }
            if revision < state.compacted {
                return Err(StorageError::Expired {
                    requested: revision,
                    oldest: state.compacted,
                });
            }
            let oldest = state.oldest_in_window();
            if rewound + 1 >= oldest {
                for r in state.window_after(rewound) {
                    if prefix.contains(r.key()) && !overlay.contains_key(r.key()) {
                        overlay.insert(r.key().clone(), r.prev.clone());
                    }
                }
                let base = index_range(&state.index, prefix, start_after);
                return Ok(merge(base, &overlay, revision, start_after, limit, filter));
            }
            oldest - 1
        };
        rewind_from_disk(inner, prefix, revision, rewound, until, &mut overlay)?;
        rewound = until;
    }
}

/// Adds to `overlay` the first changes to keys under `prefix` in
/// `(from, until]` (all committed, so immutable unless compacted meanwhile).
fn rewind_from_disk(
    inner: &Inner,
    prefix: &Prefix,
    revision: u64,
    from: u64,
    until: u64,
    overlay: &mut Overlay,
) -> Result<(), StorageError> {
    let log = inner.history_from(revision)?;
    for row in log.range(from + 1..=until).map_err(io)? {
        let (_, v) = row.map_err(io)?;
        let header = codec::header(v.value())?;
        if !prefix.contains_str(header.key) {
            continue;
        }
        if let std::collections::btree_map::Entry::Vacant(first) =
            overlay.entry(Key::from_stored(header.key))
        {
            first.insert(match header.prev {
                0 => None,
                prev => Some(load_version(&log, prev)?),
            });
        }
    }
    Ok(())
}

/// Merges `base` (the current objects under the prefix after `start_after`,
/// in key order) with `overlay` (what changed keys under the prefix were at
/// `revision`) into a page of up to `limit` objects `filter` accepts.
fn merge<'a>(
    base: impl Iterator<Item = &'a Arc<StoredObject>>,
    overlay: &Overlay,
    revision: u64,
    start_after: Option<&Key>,
    limit: usize,
    mut filter: impl FnMut(&StoredObject) -> bool,
) -> Page {
    let mut base = base.peekable();
    let lower = start_after.map_or(Bound::Unbounded, Bound::Excluded);
    let mut changed = overlay
        .range::<Key, _>((lower, Bound::Unbounded))
        .peekable();
    let mut items = Vec::new();
    let mut next = None;
    loop {
        let from_base = match (base.peek(), changed.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(b), Some((k, _))) => b.key < **k,
        };
        let object = if from_base {
            base.next().cloned()
        } else {
            // A changed key: its version at `revision` replaces the current one.
            let Some((key, version)) = changed.next() else {
                break;
            };
            if base.peek().is_some_and(|b| &b.key == key) {
                base.next();
            }
            version.clone()
        };
        let Some(object) = object else {
            continue; // absent at `revision`
        };
        if items.len() == limit {
            // Something exists past the page.
            next = items.last().map(|o: &Arc<StoredObject>| o.key.clone());
            break;
        }
        if filter(&object) {
            items.push(object);
        }
    }
    Page {
        items,
        revision,
        next,
    }
}
