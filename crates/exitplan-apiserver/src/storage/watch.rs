//! A watch on the store: first the retained events after the requested
//! revision, then live ones, without gaps or repeats; and, for bookmarks,
//! the revision up to which the watcher has seen everything.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

use super::{Event, Prefix};

/// Why a watch ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// The watcher fell too far behind the writers (writers never wait for
    /// watchers). Watching again from [`WatchStream::last_revision`] resumes
    /// without gaps, served from the event window or the on-disk log.
    #[error("watcher fell behind by {0} events")]
    Lagged(u64),
    /// The store is gone.
    #[error("store closed")]
    Closed,
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

/// A stream of events under one prefix, in revision order.
pub struct WatchStream {
    prefix: Prefix,
    last: u64,
    backlog: VecDeque<Event>,
    receiver: broadcast::Receiver<Event>,
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
    pub(super) fn new(
        prefix: Prefix,
        since: u64,
        backlog: Vec<Event>,
        receiver: broadcast::Receiver<Event>,
        head: Arc<AtomicU64>,
    ) -> Self {
        WatchStream {
            prefix,
            last: since,
            backlog: backlog.into(),
            receiver,
            head,
        }
    }

    /// The revision up to which every change under the prefix has been
    /// delivered: the last event's, the starting revision, or the last
    /// [`WatchItem::Progress`]. Resume a watch from here.
    pub fn last_revision(&self) -> u64 {
        self.last
    }

    /// Whether `event` is one this watch still owes.
    fn wanted(&self, event: &Event) -> bool {
        event.object.revision > self.last && self.prefix.contains(&event.object.key)
    }

    fn deliver(&mut self, event: Event) -> Event {
        self.last = event.object.revision;
        event
    }

    /// The next event, waiting for one if needed.
    pub async fn next(&mut self) -> Result<Event, WatchError> {
        if let Some(e) = self.backlog.pop_front() {
            return Ok(self.deliver(e));
        }
        loop {
            match self.receiver.recv().await {
                Ok(e) if self.wanted(&e) => return Ok(self.deliver(e)),
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => return Err(WatchError::Lagged(n)),
                Err(RecvError::Closed) => return Err(WatchError::Closed),
            }
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
        // The writer broadcasts a revision's events before publishing the
        // revision here, so once the channel is drained, everything up to
        // `head` has been seen.
        let head = self.head.load(Ordering::Acquire);
        loop {
            match self.receiver.try_recv() {
                Ok(e) if self.wanted(&e) => return Ok(WatchItem::Event(self.deliver(e))),
                Ok(_) => {}
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Lagged(n)) => return Err(WatchError::Lagged(n)),
                Err(TryRecvError::Closed) => return Err(WatchError::Closed),
            }
        }
        self.last = self.last.max(head);
        Ok(WatchItem::Progress(self.last))
    }
}
