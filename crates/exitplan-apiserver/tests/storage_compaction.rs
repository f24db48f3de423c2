//! Compaction: the retention policy, explicit compaction, `Expired` for
//! watches and lists below the compacted revision, and persistence.

mod storage_support;

use std::sync::Arc;
use std::time::Duration;

use exitplan_apiserver::storage::{
    DEFAULT_EVENT_WINDOW, Precondition, Prefix, Retention, StorageError, Store, StoreConfig,
    WatchError,
};
use storage_support::{ManualClock, TempDb, pod, pod_key};

async fn put_n(store: &Store, from: u64, n: u64) {
    for i in from..from + n {
        let name = format!("p{}", i % 4);
        store
            .put(
                pod_key(&name),
                pod(&name),
                Default::default(),
                Precondition::None,
            )
            .await
            .expect("put");
    }
}

fn expired(result: Result<impl std::fmt::Debug, StorageError>) -> (u64, u64) {
    match result {
        Err(StorageError::Expired { requested, oldest }) => (requested, oldest),
        other => panic!("expected Expired, got {other:?}"),
    }
}

#[test]
fn default_retention_is_five_minutes_and_ten_thousand_revisions() {
    assert_eq!(
        Retention::default(),
        Retention {
            duration: Duration::from_secs(300),
            min_revisions: 10_000,
            max_bytes: 512 * 1024 * 1024,
        }
    );
}

#[tokio::test]
async fn an_in_memory_store_keeps_its_event_window_as_history() {
    // No log behind the window: the changes that left it are compacted,
    // and the ones in it still serve watches and lists.
    let store = Store::in_memory().expect("store");
    let total = DEFAULT_EVENT_WINDOW as u64 + 5;
    put_n(&store, 1, total).await;
    assert_eq!(store.compacted_revision(), 5);
    let pods = Prefix::new("pods", None);
    assert_eq!(expired(store.watch(pods.clone(), Some(4))), (4, 5));
    assert_eq!(expired(store.list_at(&pods, 4)), (4, 5));
    let mut w = store.watch(pods.clone(), Some(5)).expect("watch from 5");
    assert_eq!(w.next().await.expect("event").object.revision, 6);
    let (items, revision) = store.list_at(&pods, 5).expect("list at 5");
    assert_eq!(
        (
            items.iter().map(|o| o.revision).collect::<Vec<_>>(),
            revision
        ),
        (vec![4, 5, 2, 3], 5)
    );
}

#[tokio::test]
async fn compaction_expires_older_watches_and_lists() {
    let store = Store::in_memory().expect("store");
    put_n(&store, 1, 10).await;
    let pods = Prefix::new("pods", None);
    assert_eq!(store.compact(6).await.expect("compact"), 6);
    assert_eq!(store.compacted_revision(), 6);

    assert_eq!(expired(store.watch(pods.clone(), Some(5))), (5, 6));
    assert_eq!(expired(store.list_at(&pods, 5)), (5, 6));
    assert_eq!(expired(store.list_page(&pods, 0, None, 2)), (0, 6));
    // The compacted revision itself is still served.
    let mut w = store.watch(pods.clone(), Some(6)).expect("watch from 6");
    for expected in 7..=10 {
        assert_eq!(w.next().await.expect("event").object.revision, expected);
    }
    let (items, at) = store.list_at(&pods, 6).expect("list at 6");
    assert_eq!(at, 6);
    let revisions: Vec<u64> = items.iter().map(|o| o.revision).collect();
    assert_eq!(revisions, [4, 5, 6, 3], "p0..p3 as of revision 6");

    // The compacted revision never goes back, and is at most the head.
    assert_eq!(store.compact(2).await.expect("compact"), 6);
    assert_eq!(store.compact(100).await.expect("compact"), 10);
    assert!(store.list_at(&pods, 10).is_ok());
}

#[tokio::test]
async fn the_policy_keeps_both_the_retention_time_and_the_minimum_revisions() {
    let clock = Arc::new(ManualClock::new());
    let store = Store::in_memory_with(StoreConfig {
        clock: clock.clone(),
        retention: Retention {
            duration: Duration::from_secs(300),
            min_revisions: 5,
            ..Retention::default()
        },
        compaction_interval: Duration::ZERO,
        ..StoreConfig::default()
    })
    .expect("store");
    put_n(&store, 1, 10).await;
    assert_eq!(store.compacted_revision(), 0);
    // Four minutes on: more than 5 revisions back, but too recent.
    clock.advance(240);
    put_n(&store, 11, 1).await;
    assert_eq!(store.compacted_revision(), 0);
    // Six minutes on: revisions 1..=10 are old; keep the newest 5 (8..=12).
    clock.advance(120);
    put_n(&store, 12, 1).await;
    assert_eq!(store.compacted_revision(), 7);
    // Everything is old now; still keep the newest 5 (9..=13).
    clock.advance(600);
    put_n(&store, 13, 1).await;
    assert_eq!(store.compacted_revision(), 8);
    assert_eq!(
        expired(store.watch(Prefix::new("pods", None), Some(7))),
        (7, 8)
    );
}

#[tokio::test]
async fn the_policy_runs_at_most_once_per_interval() {
    let clock = Arc::new(ManualClock::new());
    let store = Store::in_memory_with(StoreConfig {
        clock: clock.clone(),
        retention: Retention {
            duration: Duration::ZERO,
            min_revisions: 2,
            ..Retention::default()
        },
        compaction_interval: Duration::from_secs(60),
        ..StoreConfig::default()
    })
    .expect("store");
    put_n(&store, 1, 1).await; // runs now: nothing old yet
    clock.advance(2);
    put_n(&store, 2, 9).await; // not due for another minute
    assert_eq!(store.compacted_revision(), 0);
    clock.advance(60);
    put_n(&store, 11, 1).await; // due: keep the newest 2
    assert_eq!(store.compacted_revision(), 9);
}

#[tokio::test]
async fn the_compacted_revision_survives_restart() {
    let db = TempDb::new("compaction-restart");
    {
        let store = Store::open(db.path()).expect("open");
        // p1, p2, p3, p0, then updates of p1 (5), p2 (6), p3 (7), ...
        put_n(&store, 1, 10).await;
        store.compact(6).await.expect("compact");
    }
    let store = Store::open(db.path()).expect("reopen");
    assert_eq!(store.compacted_revision(), 6);
    let pods = Prefix::new("pods", None);
    assert_eq!(expired(store.watch(pods.clone(), Some(5))), (5, 6));
    assert_eq!(expired(store.list_at(&pods, 5)), (5, 6));
    // After a restart the window is empty: these read the log on disk.
    let mut w = store.watch(pods.clone(), Some(6)).expect("watch");
    for expected in 7..=10 {
        assert_eq!(w.next().await.expect("event").object.revision, expected);
    }
    // The versions revision 6 saw (two of them replaced before it) survive.
    let (items, _) = store.list_at(&pods, 6).expect("list at 6 from disk");
    let revisions: Vec<u64> = items.iter().map(|o| o.revision).collect();
    assert_eq!(revisions, [4, 5, 6, 3]);
    let (items, _) = store.list(&pods);
    let revisions: Vec<u64> = items.iter().map(|o| o.revision).collect();
    assert_eq!(revisions, [8, 9, 10, 7], "recovered by replaying the log");
    put_n(&store, 11, 1).await;
    assert_eq!(store.revision(), 11);
}

/// A pod whose annotation carries `size` bytes.
fn big_pod(name: &str, size: usize, version: u64) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default",
                     "annotations": {"blob": "x".repeat(size), "v": version.to_string()}}})
}

#[tokio::test]
async fn history_beyond_max_bytes_is_compacted_whatever_its_age() {
    // Time and count would keep everything; bytes do not.
    let store = Store::in_memory_with(StoreConfig {
        retention: Retention {
            duration: Duration::from_secs(3600),
            min_revisions: 10_000,
            max_bytes: 100_000,
        },
        compaction_interval: Duration::from_secs(3600),
        ..StoreConfig::default()
    })
    .expect("store");
    let pods = Prefix::new("pods", None);
    let mut w = None;
    for v in 1..=100 {
        if v == 2 {
            // A watch with past events to read (revision 1).
            w = Some(store.watch(pods.clone(), Some(0)).expect("watch"));
        }
        store
            .put(
                pod_key("a"),
                big_pod("a", 10_000, v),
                Default::default(),
                Precondition::None,
            )
            .await
            .expect("put");
    }
    let head = store.revision();
    let compacted = store.compacted_revision();
    // 10 KB per version: at most 100 KB kept, plus the eighth that
    // accumulates before the next compaction, plus one version.
    assert!(
        compacted > 0 && head - compacted <= 13,
        "head {head}, compacted {compacted}"
    );
    assert_eq!(expired(store.watch(pods.clone(), Some(1))), (1, compacted));
    assert_eq!(expired(store.list_at(&pods, 1)), (1, compacted));
    // What is kept is served.
    let mut recent = store.watch(pods.clone(), Some(compacted)).expect("watch");
    for expected in compacted + 1..=head {
        assert_eq!(
            recent.next().await.expect("event").object.revision,
            expected
        );
    }
    // A watch whose past events were compacted before it read them ends
    // with Expired (they are read as it goes, not preloaded).
    let mut w = w.expect("watch");
    assert_eq!(
        w.next().await,
        Err(WatchError::Expired {
            requested: 0,
            oldest: compacted
        })
    );
}
