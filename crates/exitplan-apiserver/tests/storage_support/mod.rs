//! Helpers shared by the `storage_*` integration tests.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use exitplan_apiserver::clock::Clock;
use exitplan_apiserver::storage::{Attrs, Key};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

/// A small pod named `name` in namespace `default`.
pub fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}})
}

/// The key of pod `name` in `default`.
pub fn pod_key(name: &str) -> Key {
    Key::new("pods", "default", name)
}

/// Attrs with one label.
pub fn labelled(key: &str, value: &str) -> Attrs {
    Attrs {
        labels: [(key.to_owned(), value.to_owned())].into(),
        fields: Default::default(),
    }
}

/// A database file path of its own, removed when dropped.
#[derive(Debug)]
pub struct TempDb(PathBuf);

impl TempDb {
    /// A fresh path for test `tag`.
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "exitplan-{tag}-{}-{}.redb",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&path);
        TempDb(path)
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    /// A clock reading 2026-11-29T10:00:00Z.
    pub fn new() -> Self {
        ManualClock(Mutex::new(
            "2026-11-29T10:00:00Z".parse().expect("timestamp"),
        ))
    }

    /// Moves the clock forward by `secs` seconds.
    pub fn advance(&self, secs: i64) {
        let mut now = self.0.lock().expect("clock");
        *now = now
            .checked_add(SignedDuration::from_secs(secs))
            .expect("time");
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().expect("clock")
    }
}
