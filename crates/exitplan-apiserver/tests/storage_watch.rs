//! Watches: revision order without gaps or repeats across the on-disk log,
//! the in-memory window and live events; lagging and resuming; progress
//! (bookmarks).

mod storage_support;

use std::time::Duration;

use exitplan_apiserver::storage::{
    EventType, Key, Precondition, Prefix, Store, StoreConfig, WatchError, WatchItem, WatchStream,
};
use storage_support::{pod, pod_key};

fn config(event_window: usize, watch_buffer: usize) -> StoreConfig {
    StoreConfig {
        event_window,
        watch_buffer,
        ..StoreConfig::default()
    }
}

/// Reads `w` until it has delivered revision `until`; returns the revisions.
async fn revisions_until(w: &mut WatchStream, until: u64) -> Vec<u64> {
    let mut seen = Vec::new();
    while w.last_revision() < until {
        seen.push(w.next().await.expect("event").object.revision);
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watchers_see_revision_order_without_gaps_across_backlog_and_live() {
    // A small window: early watchers start on disk, then memory, then live.
    let store = Store::in_memory_with(config(16, 100_000)).expect("store");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut pods = Vec::new();
                for i in 0..60 {
                    let name = format!("w{w}-{}", i % 7);
                    // Pods (created, updated, deleted) and nodes interleave.
                    let stored = if i % 5 == 4 {
                        store.delete(&pod_key(&name), Precondition::None).await.ok()
                    } else if i % 3 == 2 {
                        store
                            .put(
                                Key::new("nodes", "", &name),
                                pod(&name),
                                Default::default(),
                                Precondition::None,
                            )
                            .await
                            .map(|_| None)
                            .expect("node")
                    } else {
                        Some(
                            store
                                .put(
                                    pod_key(&name),
                                    pod(&name),
                                    Default::default(),
                                    Precondition::None,
                                )
                                .await
                                .expect("pod"),
                        )
                    };
                    pods.extend(stored.map(|o| o.revision));
                    tokio::task::yield_now().await;
                }
                pods
            })
        })
        .collect();
    // Watchers join while the writers run, from various past revisions.
    let mut watchers = Vec::new();
    for round in 0..12u64 {
        let now = store.revision();
        for since in [0, now.saturating_sub(40), now.saturating_sub(3), now] {
            let w = store
                .watch(Prefix::new("pods", None), Some(since))
                .expect("watch");
            watchers.push((round, since, w));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut pod_revisions = Vec::new();
    for w in writers {
        pod_revisions.extend(w.await.expect("writer"));
    }
    pod_revisions.sort_unstable();
    let last_pod = *pod_revisions.last().expect("pod writes");
    for (round, since, mut w) in watchers {
        let seen = revisions_until(&mut w, last_pod).await;
        let expected: Vec<u64> = pod_revisions
            .iter()
            .copied()
            .filter(|r| *r > since)
            .collect();
        assert_eq!(seen, expected, "watcher of round {round} from {since}");
    }
}

#[tokio::test]
async fn a_lagged_watcher_resumes_from_its_last_revision() {
    for window in [0, 16, 1000] {
        let store = Store::in_memory_with(config(window, 8)).expect("store");
        let mut w = store.watch(Prefix::new("pods", None), None).expect("watch");
        let put = |n: u64| {
            let store = store.clone();
            async move {
                let name = format!("p{n}");
                store
                    .put(
                        pod_key(&name),
                        pod(&name),
                        Default::default(),
                        Precondition::None,
                    )
                    .await
                    .expect("put")
            }
        };
        for n in 1..=5 {
            put(n).await;
        }
        assert_eq!(revisions_until(&mut w, 5).await, [1, 2, 3, 4, 5]);
        // Writers never wait for the watcher: it falls behind.
        for n in 6..=100 {
            put(n).await;
        }
        assert!(matches!(w.next().await, Err(WatchError::Lagged(_))));
        assert_eq!(w.last_revision(), 5);
        let mut resumed = store
            .watch(Prefix::new("pods", None), Some(w.last_revision()))
            .expect("resume");
        let seen = revisions_until(&mut resumed, 100).await;
        assert_eq!(seen, (6..=100).collect::<Vec<_>>(), "window {window}");
    }
}

#[tokio::test(start_paused = true)]
async fn progress_tells_the_revision_a_quiet_watcher_is_complete_up_to() {
    let store = Store::in_memory().expect("store");
    let tick = Duration::from_secs(1);
    let mut w = store.watch(Prefix::new("pods", None), None).expect("watch");
    assert_eq!(
        w.next_or_progress(tick).await.expect("item"),
        WatchItem::Progress(0)
    );
    // A change elsewhere moves progress, not events.
    store
        .put(
            Key::new("nodes", "", "n"),
            pod("n"),
            Default::default(),
            Precondition::None,
        )
        .await
        .expect("node");
    assert_eq!(
        w.next_or_progress(tick).await.expect("item"),
        WatchItem::Progress(1)
    );
    assert_eq!(w.last_revision(), 1);
    // A pending event comes before any progress.
    store
        .put(
            pod_key("a"),
            pod("a"),
            Default::default(),
            Precondition::None,
        )
        .await
        .expect("pod");
    match w.next_or_progress(tick).await.expect("item") {
        WatchItem::Event(e) => assert_eq!((e.event_type, e.object.revision), (EventType::Added, 2)),
        other => panic!("expected the pod's event, got {other:?}"),
    }
    let started = tokio::time::Instant::now();
    assert_eq!(
        w.next_or_progress(tick).await.expect("item"),
        WatchItem::Progress(2)
    );
    assert_eq!(started.elapsed(), tick, "progress comes after the timeout");
    // An event arriving within the timeout is delivered, not a progress.
    let writer = store.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer
            .put(
                pod_key("b"),
                pod("b"),
                Default::default(),
                Precondition::None,
            )
            .await
            .expect("pod");
    });
    match w.next_or_progress(tick).await.expect("item") {
        WatchItem::Event(e) => assert_eq!(e.object.revision, 3),
        other => panic!("expected the pod's event, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_from_the_future_waits_for_it() {
    let store = Store::in_memory().expect("store");
    let mut w = store
        .watch(Prefix::new("pods", None), Some(2))
        .expect("watch");
    for name in ["a", "b", "c"] {
        store
            .put(
                pod_key(name),
                pod(name),
                Default::default(),
                Precondition::None,
            )
            .await
            .expect("put");
    }
    assert_eq!(w.next().await.expect("event").object.revision, 3);
}

/// A pod whose annotation carries `size` bytes.
fn big_pod(name: &str, size: usize) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default",
                     "annotations": {"blob": "x".repeat(size)}}})
}

#[tokio::test]
async fn a_watcher_that_never_reads_is_ended_at_its_byte_bound_and_a_reader_is_not() {
    let store = Store::in_memory_with(StoreConfig {
        event_window: 0,
        watch_buffer: 100_000,
        watch_buffer_bytes: 200_000,
        ..StoreConfig::default()
    })
    .expect("store");
    let pods = Prefix::new("pods", None);
    let mut idle = store.watch(pods.clone(), None).expect("watch");
    let mut reader = store.watch(pods.clone(), None).expect("watch");
    let mut first = None;
    for n in 1..=50u64 {
        let stored = store
            .put(
                pod_key("a"),
                big_pod("a", 10_000),
                Default::default(),
                Precondition::None,
            )
            .await
            .expect("put");
        assert_eq!(reader.next().await.expect("event").object.revision, n);
        if n == 1 {
            first = Some(stored);
        } else if n == 2 {
            // Replaced in the index, out of the window: only the idle
            // watcher's queue still holds the first version.
            assert_eq!(first.as_ref().map(std::sync::Arc::strong_count), Some(2));
        }
    }
    // 50 events of 10 KB are over the idle watcher's 200 KB: it was ended
    // and its queue released.
    assert_eq!(first.as_ref().map(std::sync::Arc::strong_count), Some(1));
    assert!(matches!(idle.next().await, Err(WatchError::Lagged(_))));
    assert_eq!(idle.last_revision(), 0);
    // It resumes from where it was, from the log.
    let mut resumed = store
        .watch(pods, Some(idle.last_revision()))
        .expect("resume");
    assert_eq!(
        revisions_until(&mut resumed, 50).await,
        (1..=50).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn past_events_are_read_in_bounded_chunks_without_gaps() {
    // 60 versions of 100 KB: more than one chunk, from the log or the window.
    for window in [0, 10_000] {
        let store = Store::in_memory_with(config(window, 8)).expect("store");
        for _ in 0..60 {
            store
                .put(
                    pod_key("a"),
                    big_pod("a", 100_000),
                    Default::default(),
                    Precondition::None,
                )
                .await
                .expect("put");
            store
                .put(
                    Key::new("nodes", "", "n"),
                    pod("n"),
                    Default::default(),
                    Precondition::None,
                )
                .await
                .expect("node");
        }
        let mut w = store
            .watch(Prefix::new("pods", None), Some(0))
            .expect("watch");
        let expected: Vec<u64> = (0..60).map(|i| 2 * i + 1).collect();
        assert_eq!(
            revisions_until(&mut w, 119).await,
            expected,
            "window {window}"
        );
    }
}
