//! A set of async mutexes, one per key, created on first use and dropped
//! when nobody holds or waits for them: serializes work on one key (e.g.
//! creating one pod's Eviction) while other keys proceed in parallel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

/// One async mutex per key.
#[derive(Debug, Default)]
pub struct KeyedLock {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds the lock of one key until dropped.
#[derive(Debug)]
pub struct KeyedGuard<'a> {
    owner: &'a KeyedLock,
    key: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl KeyedLock {
    /// Waits for and takes the lock of `key`.
    pub async fn lock(&self, key: &str) -> KeyedGuard<'_> {
        let mutex = {
            let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            locks.entry(key.to_owned()).or_default().clone()
        };
        let guard = mutex.lock_owned().await;
        KeyedGuard {
            owner: self,
            key: key.to_owned(),
            guard: Some(guard),
        }
    }

    /// Keys with a live mutex (held or waited for).
    pub fn len(&self) -> usize {
        self.locks.lock().map(|l| l.len()).unwrap_or_default()
    }

    /// Whether no key has a live mutex.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for KeyedGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut locks = self.owner.locks.lock().unwrap_or_else(|e| e.into_inner());
        // Only the map's own reference left: no holder, no waiter.
        if locks
            .get(&self.key)
            .is_some_and(|m| Arc::strong_count(m) == 1)
        {
            locks.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn one_holder_per_key_and_keys_are_independent() {
        let locks = Arc::new(KeyedLock::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..8 {
            let (locks, inside, most) = (locks.clone(), inside.clone(), most.clone());
            tasks.push(tokio::spawn(async move {
                let _g = locks.lock("a").await;
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10 + i)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        // Another key is not blocked by "a".
        tokio::time::sleep(Duration::from_millis(1)).await;
        let other = tokio::time::timeout(Duration::from_millis(1), locks.lock("b")).await;
        assert!(other.is_ok(), "key b waited for key a");
        drop(other);
        for t in tasks {
            t.await.expect("task");
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert!(locks.is_empty(), "mutexes of released keys are dropped");
    }
}
