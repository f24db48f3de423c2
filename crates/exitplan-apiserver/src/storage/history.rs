//! Lists at a past revision, whole or by page.
//!
//! The state at revision `r` is the current index with the changes made
//! after `r` rewound: every log record knows the version it replaced, so the
//! first change to a key after `r` tells what that key was at `r` (absent,
//! for a creation). Those keys form an *overlay* merged, in key order, over
//! the index. At the current revision there is no overlay at all, so a page
//! costs what [`Store::list`](super::Store::list) costs.
//!
//! The changes still in the in-memory window are rewound from memory; older
//! ones are read from a redb snapshot of the log *without* holding the lock
//! writers need, after which the window is checked to still reach back to
//! where the disk read ended (else the gap is read too).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use redb::ReadableDatabase;

use super::{
    Inner, Key, LOG, META, META_COMPACTED, Prefix, StorageError, StoredObject, codec, io,
    load_version, read,
};

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
                let base = index_range(&state.index, prefix, start_after).map(|o| Ok(o.clone()));
                return merge(base, &overlay, prefix, revision, start_after, limit, filter);
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
    let snapshot = inner.db.begin_read().map_err(io)?;
    let meta = snapshot.open_table(META).map_err(io)?;
    let compacted = meta
        .get(META_COMPACTED)
        .map_err(io)?
        .map_or(0, |g| g.value());
    if revision < compacted {
        return Err(StorageError::Expired {
            requested: revision,
            oldest: compacted,
        });
    }
    let log = snapshot.open_table(LOG).map_err(io)?;
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

/// Merges `base` (a newer state, key order, under `prefix`, after
/// `start_after`) with `overlay` (what changed keys were at `revision`) into
/// a page of up to `limit` objects `filter` accepts.
fn merge(
    base: impl Iterator<Item = Result<Arc<StoredObject>, StorageError>>,
    overlay: &Overlay,
    prefix: &Prefix,
    revision: u64,
    start_after: Option<&Key>,
    limit: usize,
    mut filter: impl FnMut(&StoredObject) -> bool,
) -> Result<Page, StorageError> {
    let mut base = base.peekable();
    let lower = match start_after {
        Some(after) => Bound::Excluded(after),
        None => Bound::Unbounded,
    };
    let mut changed = overlay
        .range::<Key, _>((lower, Bound::Unbounded))
        .filter(|(k, _)| prefix.contains(k))
        .peekable();
    let mut items = Vec::new();
    let mut next = None;
    loop {
        // The next key in order: from the overlay when it is not after the
        // base's (it then replaces the base's version of the same key).
        let from_overlay = match (base.peek(), changed.peek()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(Err(_)), Some(_)) => false,
            (Some(Ok(b)), Some((k, _))) => *k <= &b.key,
        };
        let object = if from_overlay {
            let Some((key, version)) = changed.next() else {
                break;
            };
            if base
                .peek()
                .is_some_and(|b| b.as_ref().is_ok_and(|b| &b.key == key))
            {
                base.next();
            }
            match version {
                Some(o) => o.clone(),
                None => continue,
            }
        } else {
            match base.next() {
                Some(o) => o?,
                None => break,
            }
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
    Ok(Page {
        items,
        revision,
        next,
    })
}
