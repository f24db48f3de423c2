//! A watch on the store: first the retained events after the requested
//! revision, then live ones, without gaps or repeats.

use std::collections::VecDeque;

use tokio::sync::broadcast;

use super::{Event, Prefix};

/// Why a watch ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// The watcher fell too far behind the writers; it must re-list or
    /// re-watch from the last revision it saw.
    #[error("watcher fell behind by {0} events")]
    Lagged(u64),
    /// The store is gone.
    #[error("store closed")]
    Closed,
}

/// A stream of events under one prefix, in revision order.
pub struct WatchStream {
    prefix: Prefix,
    last: u64,
    backlog: VecDeque<Event>,
    receiver: broadcast::Receiver<Event>,
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
    ) -> Self {
        WatchStream {
            prefix,
            last: since,
            backlog: backlog.into(),
            receiver,
        }
    }

    /// The revision of the last event delivered (or the starting revision).
    pub fn last_revision(&self) -> u64 {
        self.last
    }

    /// The next event, waiting for one if needed.
    pub async fn next(&mut self) -> Result<Event, WatchError> {
        if let Some(e) = self.backlog.pop_front() {
            self.last = e.object.revision;
            return Ok(e);
        }
        loop {
            match self.receiver.recv().await {
                Ok(e) if e.object.revision > self.last && self.prefix.contains(&e.object.key) => {
                    self.last = e.object.revision;
                    return Ok(e);
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(n)) => return Err(WatchError::Lagged(n)),
                Err(broadcast::error::RecvError::Closed) => return Err(WatchError::Closed),
            }
        }
    }
}
