//! Lists at a past revision, whole or by page.
//!
//! The state at revision `r` is a newer state with the changes made after `r`
//! rewound: every log record keeps the version it replaced, so the first
//! change to a key after `r` tells what that key was at `r` (absent, for a
//! creation). Those keys form an *overlay* merged, in key order, over the
//! newer state:
//!
//! * while the changes after `r` are all in the in-memory window, the newer
//!   state is the index (at the current revision: no overlay at all, so a
//!   page costs what [`Store::list`](super::Store::list) costs);
//! * otherwise both come from one redb read snapshot — its `objects` table
//!   and its log — read without holding any lock the writer needs.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use redb::ReadableDatabase;

use super::{
    Inner, Key, LOG, META, META_COMPACTED, META_REVISION, OBJECTS, Prefix, StorageError,
    StoredObject, codec, io, read,
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

/// Adds to `overlay` what `key` was before a change, unless an earlier change
/// (processed first) already said.
fn rewind(overlay: &mut Overlay, key: Key, before: Option<Arc<StoredObject>>) {
    overlay.entry(key).or_insert(before);
}

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
    {
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
        if revision + 1 >= state.oldest_in_window() {
            let mut overlay = Overlay::new();
            for r in state.window_after(revision) {
                if prefix.contains(r.key()) {
                    rewind(&mut overlay, r.key().clone(), r.prev.clone());
                }
            }
            let base = index_range(&state.index, prefix, start_after).map(|o| Ok(o.clone()));
            return merge(base, &overlay, prefix, revision, start_after, limit, filter);
        }
    }
    page_from_disk(inner, prefix, revision, start_after, limit, filter)
}

/// [`page`] from one redb read snapshot, for revisions older than the window.
fn page_from_disk(
    inner: &Inner,
    prefix: &Prefix,
    revision: u64,
    start_after: Option<&Key>,
    limit: usize,
    filter: impl FnMut(&StoredObject) -> bool,
) -> Result<Page, StorageError> {
    let snapshot = inner.db.begin_read().map_err(io)?;
    let meta = snapshot.open_table(META).map_err(io)?;
    let get = |name| -> Result<u64, StorageError> {
        Ok(meta.get(name).map_err(io)?.map_or(0, |g| g.value()))
    };
    let compacted = get(META_COMPACTED)?;
    if revision < compacted {
        return Err(StorageError::Expired {
            requested: revision,
            oldest: compacted,
        });
    }
    let log = snapshot.open_table(LOG).map_err(io)?;
    let mut overlay = Overlay::new();
    for row in log.range(revision + 1..=get(META_REVISION)?).map_err(io)? {
        let (_, v) = row.map_err(io)?;
        if prefix.contains_str(codec::event_key(v.value())?) {
            let (key, before) = codec::decode_before(v.value())?;
            rewind(&mut overlay, key, before);
        }
    }
    let objects = snapshot.open_table(OBJECTS).map_err(io)?;
    let lower = match start_after {
        Some(after) if after.0 >= prefix.0 => Bound::Excluded(after.as_str()),
        _ => Bound::Included(prefix.0.as_str()),
    };
    let base = objects
        .range::<&str>((lower, Bound::Unbounded))
        .map_err(io)?
        .map(|row| {
            let (k, v) = row.map_err(io)?;
            codec::decode_object(Key::from_stored(k.value()), v.value()).map(Arc::new)
        })
        .take_while(|o| o.as_ref().map_or(true, |o| prefix.contains(&o.key)));
    merge(base, &overlay, prefix, revision, start_after, limit, filter)
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
