//! A work queue with client-go's semantics (`workqueue.TypedRateLimitingInterface`):
//!
//! * a key is queued at most once (adding a queued key is a no-op);
//! * a key being processed is not handed to a second worker; adding it meanwhile
//!   marks it dirty and it is queued again when the first worker calls [`Queue::done`];
//! * [`Queue::add_after`] queues a key once a delay has passed (tokio time, so
//!   paused-clock tests and simulations run instantly);
//! * [`Queue::add_rate_limited`] backs off per key (5 ms doubling to 1000 s,
//!   client-go's default item back-off) until [`Queue::forget`].

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// First back-off of a failing key.
pub const BASE_DELAY: Duration = Duration::from_millis(5);
/// Longest back-off of a failing key.
pub const MAX_DELAY: Duration = Duration::from_secs(1000);

struct State<K> {
    queue: VecDeque<K>,
    queued: HashSet<K>,
    processing: HashSet<K>,
    dirty: HashSet<K>,
    /// Delayed keys by due time (sequence number breaks ties, keeps order).
    delayed: BTreeSet<(Instant, u64, K)>,
    /// The earliest due time of each delayed key, with its sequence number
    /// (its entry in `delayed`, replaced in O(log n)); a later add_after for
    /// the same key is ignored, as client-go's delaying queue does.
    due: HashMap<K, (Instant, u64)>,
    failures: HashMap<K, u32>,
    seq: u64,
    shut_down: bool,
}

/// A work queue of keys. Cheap to clone; clones share the queue.
pub struct Queue<K> {
    name: Arc<str>,
    state: Arc<Mutex<State<K>>>,
    notify: Arc<Notify>,
}

impl<K> Clone for Queue<K> {
    fn clone(&self) -> Self {
        Queue {
            name: self.name.clone(),
            state: self.state.clone(),
            notify: self.notify.clone(),
        }
    }
}

impl<K> std::fmt::Debug for Queue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<K: Clone + Eq + Hash + Ord + Send + 'static> Queue<K> {
    /// An empty queue; `name` labels its logs and metrics.
    pub fn new(name: &str) -> Self {
        Queue {
            name: name.into(),
            state: Arc::new(Mutex::new(State {
                queue: VecDeque::new(),
                queued: HashSet::new(),
                processing: HashSet::new(),
                dirty: HashSet::new(),
                delayed: BTreeSet::new(),
                due: HashMap::new(),
                failures: HashMap::new(),
                seq: 0,
                shut_down: false,
            })),
            notify: Arc::new(Notify::new()),
        }
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn with<R>(&self, f: impl FnOnce(&mut State<K>) -> R) -> Option<R> {
        self.state.lock().ok().map(|mut s| f(&mut s))
    }

    /// Queues `key` now.
    pub fn add(&self, key: K) {
        let woke = self.with(|s| Self::enqueue(s, key)).unwrap_or(false);
        if woke {
            self.notify.notify_one();
        }
    }

    fn enqueue(s: &mut State<K>, key: K) -> bool {
        if s.shut_down {
            return false;
        }
        if s.processing.contains(&key) {
            s.dirty.insert(key);
            return false;
        }
        if s.queued.insert(key.clone()) {
            s.queue.push_back(key);
            return true;
        }
        false
    }

    /// Queues `key` once `delay` has passed (at once for a zero delay).
    pub fn add_after(&self, key: K, delay: Duration) {
        if delay.is_zero() {
            self.add(key);
            return;
        }
        let at = Instant::now() + delay;
        let woke = self
            .with(|s| {
                if s.shut_down {
                    return false;
                }
                match s.due.get(&key).copied() {
                    Some((existing, _)) if existing <= at => false,
                    existing => {
                        if let Some((old, old_seq)) = existing {
                            s.delayed.remove(&(old, old_seq, key.clone()));
                        }
                        s.seq += 1;
                        let seq = s.seq;
                        s.delayed.insert((at, seq, key.clone()));
                        s.due.insert(key, (at, seq));
                        true
                    }
                }
            })
            .unwrap_or(false);
        if woke {
            // A waiting worker must recompute its deadline.
            self.notify.notify_waiters();
            self.notify.notify_one();
        }
    }

    /// Queues `key` after its per-key back-off (5 ms · 2^failures, capped at 1000 s).
    pub fn add_rate_limited(&self, key: K) {
        let failures = self
            .with(|s| {
                let n = s.failures.entry(key.clone()).or_insert(0);
                let before = *n;
                *n = n.saturating_add(1);
                before
            })
            .unwrap_or(0);
        let delay = BASE_DELAY
            .checked_mul(1u32.checked_shl(failures.min(31)).unwrap_or(u32::MAX))
            .map_or(MAX_DELAY, |d| d.min(MAX_DELAY));
        self.add_after(key, delay);
    }

    /// Clears the back-off history of `key` (after a successful sync).
    pub fn forget(&self, key: &K) {
        self.with(|s| s.failures.remove(key));
    }

    /// How many times `key` failed since it was last forgotten.
    pub fn failures(&self, key: &K) -> u32 {
        self.with(|s| s.failures.get(key).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// The next key to process, waiting for one; `None` once shut down.
    /// Call [`Queue::done`] when finished with it.
    pub async fn get(&self) -> Option<K> {
        enum Next<K> {
            Key(K),
            Wait(Option<Instant>),
            Closed,
        }
        loop {
            // Registered before looking, so a wake-up between the look and the
            // wait is not lost.
            let notified = self.notify.notified();
            let next = self.with(|s| {
                let now = Instant::now();
                while s.delayed.first().is_some_and(|(at, _, _)| *at <= now) {
                    if let Some((_, _, key)) = s.delayed.pop_first() {
                        s.due.remove(&key);
                        Self::enqueue(s, key);
                    }
                }
                if let Some(key) = s.queue.pop_front() {
                    s.queued.remove(&key);
                    s.processing.insert(key.clone());
                    Next::Key(key)
                } else if s.shut_down {
                    Next::Closed
                } else {
                    Next::Wait(s.delayed.first().map(|(at, _, _)| *at))
                }
            })?;
            match next {
                Next::Key(key) => return Some(key),
                Next::Closed => return None,
                Next::Wait(None) => notified.await,
                Next::Wait(Some(at)) => {
                    tokio::select! {
                        () = notified => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
            }
        }
    }

    /// Runs one worker until the queue shuts down (client-go's
    /// `processNextWorkItem` loop): each key goes to `sync`; success clears
    /// its back-off, an error is logged (`what` names the sync) and the key
    /// queued again after its back-off.
    pub async fn run_worker<F, Fut, E>(&self, what: &str, mut sync: F)
    where
        K: std::fmt::Display,
        F: FnMut(K) -> Fut,
        Fut: std::future::Future<Output = Result<(), E>>,
        E: std::fmt::Display,
    {
        while let Some(key) = self.get().await {
            match sync(key.clone()).await {
                Ok(()) => self.forget(&key),
                Err(err) => {
                    tracing::warn!(queue = %self.name, key = %key, error = %err, "{what} failed; retrying");
                    self.add_rate_limited(key.clone());
                }
            }
            self.done(&key);
        }
    }

    /// Marks `key` processed; a key added while it was processed is queued again.
    pub fn done(&self, key: &K) {
        let woke = self
            .with(|s| {
                s.processing.remove(key);
                if s.dirty.remove(key) {
                    Self::enqueue(s, key.clone())
                } else {
                    false
                }
            })
            .unwrap_or(false);
        if woke {
            self.notify.notify_one();
        }
    }

    /// Stops the queue: waiting and future `get` calls return `None`.
    pub fn shut_down(&self) {
        self.with(|s| s.shut_down = true);
        self.notify.notify_waiters();
    }

    /// Keys queued now (not counting delayed or in-process ones).
    pub fn len(&self) -> usize {
        self.with(|s| s.queue.len()).unwrap_or(0)
    }

    /// Whether nothing is queued now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn deduplicates_and_requeues_dirty_keys() {
        let q: Queue<String> = Queue::new("t");
        q.add("a".into());
        q.add("a".into());
        q.add("b".into());
        assert_eq!(q.len(), 2);
        let a = q.get().await.expect("a");
        q.add("a".into()); // while processing: dirty, not handed out twice
        let b = q.get().await.expect("b");
        assert_eq!((a.as_str(), b.as_str()), ("a", "b"));
        assert!(q.is_empty());
        q.done(&a);
        assert_eq!(q.get().await.as_deref(), Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_adds_wait_in_virtual_time() {
        let q: Queue<u32> = Queue::new("t");
        let start = Instant::now();
        q.add_after(1, Duration::from_secs(300));
        q.add_after(2, Duration::from_secs(5));
        q.add_after(1, Duration::from_secs(600)); // later than pending: ignored
        assert_eq!(q.get().await, Some(2));
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        assert_eq!(q.get().await, Some(1));
        assert_eq!(start.elapsed(), Duration::from_secs(300));
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limited_backoff_doubles_until_forgotten() {
        let q: Queue<u32> = Queue::new("t");
        let start = Instant::now();
        for _ in 0..3 {
            q.add_rate_limited(7);
            let k = q.get().await.expect("key");
            q.done(&k);
        }
        assert_eq!(start.elapsed(), Duration::from_millis(5 + 10 + 20));
        assert_eq!(q.failures(&7), 3);
        q.forget(&7);
        assert_eq!(q.failures(&7), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_wakes_waiters() {
        let q: Queue<u32> = Queue::new("t");
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        assert_eq!(waiter.await.expect("join"), None);
    }
}
