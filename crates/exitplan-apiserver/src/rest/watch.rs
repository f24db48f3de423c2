//! WATCH (`?watch=1`): a stream of JSON events, one per line.
//!
//! * `resourceVersion` unset or `"0"`: synthetic ADDED events for the current
//!   objects, then changes; a non-zero value: changes after it (410
//!   `Expired` as an ERROR event when the store no longer has it).
//! * `sendInitialEvents=true`: the current objects, then a BOOKMARK annotated
//!   `k8s.io/initial-events-end`.
//! * `allowWatchBookmarks=true`: periodic BOOKMARK events.
//! * `timeoutSeconds` ends the stream, as kube-apiserver does: unset or `0`,
//!   after a random time between [`MIN_REQUEST_TIMEOUT_SECONDS`] and twice
//!   that; negative, at once. So does server shutdown and a watcher that
//!   falls behind the store (`Lagged`: its queue of unread events grew past
//!   its bound): the client re-watches from the last resourceVersion it saw.
//! * The initial events are rendered as the client reads them, from the
//!   list taken when the watch started.
//! * With selectors, an object that stops matching is sent as DELETED and one
//!   that starts matching as ADDED, like upstream's watch cache (what matched
//!   at the starting revision comes from the store's history).

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};

use super::errors::{ApiError, status_json};
use super::get::is_typed;
use super::list::{ReadAt, Selectors};
use super::meta::served;
use super::negotiate::{Output, output};
use super::state::{Call, State};
use crate::discovery;
use crate::registry::ResourceDef;
use crate::storage::{
    Event, EventType, Key, StorageError, StoredObject, WatchEnd, WatchError, WatchItem, WatchStream,
};

/// kube-apiserver's `--min-request-timeout` default: a watch without a
/// `timeoutSeconds` (or with `0`) ends after a random time between this and
/// twice this.
pub const MIN_REQUEST_TIMEOUT_SECONDS: u64 = 1800;

/// The annotation of the BOOKMARK that ends the initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

struct Watcher {
    state: Arc<State>,
    def: &'static ResourceDef,
    output: Output,
    selectors: Selectors,
    /// Keys of objects the client currently sees as matching (selectors only).
    known: HashSet<Key>,
    /// Initial objects not yet sent as ADDED (rendered as the client reads).
    initial: VecDeque<Arc<StoredObject>>,
    pending: VecDeque<Bytes>,
    stream: Option<WatchStream>,
    deadline: tokio::time::Instant,
    /// How long a quiet watch waits before a BOOKMARK (`allowWatchBookmarks`).
    bookmarks: Option<Duration>,
    shutdown: tokio::sync::watch::Receiver<bool>,
}

fn line(value: &Value) -> Bytes {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

/// The line `line(&json!({"type": ty, "object": object}))` writes for a
/// typed stored object, spliced from its stored bytes (keys sorted:
/// `object` before `type`) instead of parsing and re-encoding them for
/// every watcher.
fn event_line(ty: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + ty.len() + 22);
    out.extend_from_slice(b"{\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b",\"type\":\"");
    out.extend_from_slice(ty.as_bytes());
    out.extend_from_slice(b"\"}\n");
    Bytes::from(out)
}

impl Watcher {
    fn event(&self, ty: &str, object: &StoredObject) -> Option<Bytes> {
        if matches!(self.output, Output::Json) && is_typed(self.def, &object.json) {
            return Some(event_line(ty, &object.json));
        }
        let value = served(self.def, object.value().ok()?);
        let value = match self.output {
            Output::Json => value,
            Output::Table(include) => discovery::table(
                self.def,
                std::slice::from_ref(&value),
                json!({"resourceVersion": object.revision.to_string()}),
                include,
                self.state.clock.now(),
            ),
        };
        Some(line(&json!({"type": ty, "object": value})))
    }

    fn bookmark(&self, revision: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": revision.to_string()});
        if initial_end && let Some(m) = meta.as_object_mut() {
            m.insert("annotations".into(), json!({ INITIAL_EVENTS_END: "true" }));
        }
        line(&json!({
            "type": "BOOKMARK",
            "object": {"kind": self.def.kind, "apiVersion": self.def.api_version(), "metadata": meta}
        }))
    }

    /// The client-visible event for a store event, if any.
    fn translate(&mut self, e: &Event) -> Option<Bytes> {
        let object = &e.object;
        let ty = if self.selectors.is_empty() {
            match e.event_type {
                EventType::Added => "ADDED",
                EventType::Modified => "MODIFIED",
                EventType::Deleted => "DELETED",
            }
        } else {
            let matches = self.selectors.matches(object);
            let key = object.key.clone();
            match (e.event_type, matches) {
                (EventType::Deleted, _) => {
                    if self.known.remove(&key) || matches {
                        "DELETED"
                    } else {
                        return None;
                    }
                }
                (_, true) => {
                    if self.known.insert(key) {
                        "ADDED"
                    } else {
                        "MODIFIED"
                    }
                }
                (_, false) => {
                    if self.known.remove(&key) {
                        "DELETED"
                    } else {
                        return None;
                    }
                }
            }
        };
        self.event(ty, object)
    }

    async fn next_chunk(&mut self) -> Option<Bytes> {
        if tokio::time::Instant::now() >= self.deadline {
            return None;
        }
        while let Some(o) = self.initial.pop_front() {
            if let Some(b) = self.event("ADDED", &o) {
                return Some(b);
            }
        }
        if let Some(b) = self.pending.pop_front() {
            return Some(b);
        }
        loop {
            let deadline = self.deadline;
            let bookmarks = self.bookmarks;
            let stream = self.stream.as_mut()?;
            let shutdown = &mut self.shutdown;
            let next = async {
                match bookmarks {
                    // The store reports progress when no change came in time.
                    Some(every) => stream.next_or_progress(every).await,
                    None => stream.next().await.map(WatchItem::Event),
                }
            };
            let wake = tokio::select! {
                biased;
                _ = shutdown.changed() => Wake::Stop,
                _ = tokio::time::sleep_until(deadline) => Wake::Stop,
                item = next => Wake::Item(item),
            };
            match wake {
                Wake::Stop => return None,
                Wake::Item(Ok(WatchItem::Progress(revision))) => {
                    return Some(self.bookmark(revision, false));
                }
                Wake::Item(Ok(WatchItem::Event(e))) => {
                    if let Some(b) = self.translate(&e) {
                        return Some(b);
                    }
                }
                Wake::Item(Err(WatchError::Expired { requested, oldest })) => {
                    // Past events compacted away while the client read them.
                    self.stream = None;
                    let status = super::errors::expired(requested, oldest);
                    return Some(line(&json!({
                        "type": "ERROR",
                        "object": status_json(&status.status),
                    })));
                }
                Wake::Item(Err(e)) => {
                    tracing::debug!(resource = self.def.plural, error = %e, "watch ended by the store");
                    return None;
                }
            }
        }
    }
}

/// What ends a watch whatever its client does: its deadline, server
/// shutdown, the store ending it (it fell behind).
struct Ends {
    deadline: tokio::time::Instant,
    shutdown: tokio::sync::watch::Receiver<bool>,
    store: Option<WatchEnd>,
}

/// A watcher shared by the response body, which renders its events as the
/// connection takes them, and [`reap`].
type Slot = Arc<tokio::sync::Mutex<Option<Watcher>>>;

/// Drops the watcher in `slot` once the watch is over, even if its
/// connection never takes another byte (a client that stops reading leaves
/// the body unpolled, so the body alone would hold the watcher — its place
/// in the store, past events read ahead, the initial objects not yet sent —
/// for as long as the connection lasts). Ends with the body. A body being
/// polled ends the watch itself.
async fn reap(
    slot: std::sync::Weak<tokio::sync::Mutex<Option<Watcher>>>,
    ends: Ends,
    body: tokio::sync::oneshot::Receiver<()>,
) {
    let Ends {
        deadline,
        mut shutdown,
        store,
    } = ends;
    let ended = async {
        match &store {
            Some(end) => end.wait().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = body => return,
        _ = shutdown.changed() => {}
        () = tokio::time::sleep_until(deadline) => {}
        () = ended => {}
    }
    if let Some(slot) = slot.upgrade()
        && let Ok(mut watcher) = slot.try_lock()
        && let Some(w) = watcher.take()
    {
        tracing::debug!(
            resource = w.def.plural,
            "watch over: released without waiting for its client"
        );
    }
}

enum Wake {
    Stop,
    Item(Result<WatchItem, WatchError>),
}

/// How long a watch lasts, as kube-apiserver's `GetTimeoutForWatch`:
/// `timeoutSeconds` if set and non-zero (negative: no time at all); unset
/// or `0`, [`MIN_REQUEST_TIMEOUT_SECONDS`] times a random factor in `[1, 2)`.
/// `random` is a uniformly random `u64`.
pub fn watch_timeout(timeout_seconds: Option<i64>, random: u64) -> Duration {
    match timeout_seconds {
        Some(t) if t > 0 => Duration::from_secs(t.unsigned_abs()),
        Some(t) if t < 0 => Duration::ZERO,
        _ => {
            // min × (1 + random / 2^64), in whole nanoseconds, below 2 × min.
            let min = Duration::from_secs(MIN_REQUEST_TIMEOUT_SECONDS).as_nanos();
            let extra = (min * u128::from(random)) >> 64;
            min.checked_add(extra)
                .and_then(|n| u64::try_from(n).ok())
                .map_or(
                    Duration::from_secs(MIN_REQUEST_TIMEOUT_SECONDS),
                    Duration::from_nanos,
                )
        }
    }
}

/// A random `u64` (0 if the system has no randomness to give).
fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    if getrandom::fill(&mut buf).is_err() {
        return 0;
    }
    u64::from_le_bytes(buf)
}

/// `GET …?watch=1`.
pub async fn watch(call: &Call) -> Result<Response, ApiError> {
    let out = output(&call.headers, &call.query)?;
    let selectors = Selectors::of(call)?;
    super::resourceversion::validate_list_options(&call.query, true)?;
    // A watch is served by the watch cache, which passes a resourceVersion
    // that is not a number through as a 500.
    let at = match call.query.non_empty("resourceVersion") {
        None => ReadAt::Latest,
        Some(v) => match super::resourceversion::parse_cached(v)? {
            0 => ReadAt::Any,
            n => ReadAt::NotOlderThan(n),
        },
    };
    let send_initial = match call.query.get("sendInitialEvents") {
        None => None,
        Some(_) => Some(call.query.flag("sendInitialEvents")?),
    };
    let bookmarks_allowed = call.query.flag("allowWatchBookmarks")?;
    let timeout = watch_timeout(call.query.int("timeoutSeconds")?, random_u64());
    let state = call.state.clone();
    let prefix = call.def.prefix(call.ns());
    let initial = matches!(
        (at, send_initial),
        (_, Some(true)) | (ReadAt::Latest | ReadAt::Any, None)
    );
    let mut watcher = Watcher {
        state: state.clone(),
        def: call.def,
        output: out,
        selectors,
        known: HashSet::new(),
        initial: VecDeque::new(),
        pending: VecDeque::new(),
        stream: None,
        deadline: tokio::time::Instant::now() + timeout,
        bookmarks: None,
        shutdown: state.shutdown.clone(),
    };
    let (current, revision) = state.store.list(&prefix);
    if !watcher.selectors.is_empty() {
        // What the client sees at the watch's start: the current objects for
        // an initial list, else the objects as they were at its revision.
        let seen = match at {
            ReadAt::NotOlderThan(v) | ReadAt::Exact(v) if !initial && v <= revision => state
                .store
                .list_at(&prefix, v)
                .map(|(items, _)| items)
                .unwrap_or_default(),
            _ => current.clone(),
        };
        watcher.known = seen
            .iter()
            .filter(|o| watcher.selectors.matches(o))
            .map(|o| o.key.clone())
            .collect();
    }
    let since = if initial {
        watcher.initial = current
            .into_iter()
            .filter(|o| watcher.selectors.matches(o))
            .collect();
        if send_initial == Some(true) && bookmarks_allowed {
            let b = watcher.bookmark(revision, true);
            watcher.pending.push_back(b);
        }
        Some(revision)
    } else {
        match at {
            ReadAt::NotOlderThan(v) | ReadAt::Exact(v) => Some(v),
            ReadAt::Latest | ReadAt::Any => None,
        }
    };
    match state.store.watch(prefix, since) {
        Ok(stream) => watcher.stream = Some(stream),
        Err(StorageError::Expired { requested, oldest }) => {
            let status = super::errors::expired(requested, oldest);
            watcher.pending.push_back(line(&json!({
                "type": "ERROR",
                "object": status_json(&status.status),
            })));
        }
        Err(e) => return Err(e.into()),
    }
    if bookmarks_allowed {
        watcher.bookmarks = Some(state.bookmark_interval);
    }
    tracing::debug!(resource = call.def.plural, namespace = ?call.namespace, ?since, "watch started");
    let ends = Ends {
        deadline: watcher.deadline,
        shutdown: watcher.shutdown.clone(),
        store: watcher.stream.as_ref().map(WatchStream::end),
    };
    let slot: Slot = Arc::new(tokio::sync::Mutex::new(Some(watcher)));
    // Dropped with the body: ends the reaper.
    let (body_alive, body_gone) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(reap(Arc::downgrade(&slot), ends, body_gone));
    let stream = futures_util::stream::unfold((slot, body_alive), |(slot, alive)| async move {
        let chunk = {
            let mut watcher = slot.lock().await;
            let chunk = watcher.as_mut()?.next_chunk().await;
            if chunk.is_none() {
                *watcher = None;
            }
            chunk?
        };
        Some((Ok::<Bytes, Infallible>(chunk), (slot, alive)))
    });
    let mut resp = Body::from_stream(stream).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_event_lines_are_the_encoded_events() {
        let def =
            crate::registry::find("lifecycle.k8s.io", "v1alpha1", "evictions").expect("served");
        let object = json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": "e<1>", "namespace": "default", "resourceVersion": "7",
                         "labels": {"a": "b\u{2028}"}},
            "spec": {"target": {"pod": {"name": "p", "uid": "u"}}, "n": 1.5, "m": -3},
            "status": {"conditions": [{"type": "X", "status": "True"}]},
        });
        let json = serde_json::to_vec(&object).expect("encode");
        assert!(is_typed(def, &json));
        for ty in ["ADDED", "MODIFIED", "DELETED"] {
            assert_eq!(
                event_line(ty, &json),
                line(&json!({"type": ty, "object": object.clone()})),
                "{ty}"
            );
        }
    }
}
