//! Concurrent writers against one durable store: conflicting preconditions
//! have exactly one winner per revision, and no acknowledgement is lost.

mod storage_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use exitplan_apiserver::storage::{
    EventType, Precondition, Prefix, Store, StoredObject, WriteError,
};
use serde_json::json;
use storage_support::{TempDb, pod, pod_key};

const WRITERS: usize = 16;

/// One successful compare-and-swap: the revision it required, the one it
/// got, and the counter value it wrote.
#[derive(Debug, Clone, Copy)]
struct Swap {
    base: u64,
    revision: u64,
    value: u64,
}

fn counter(object: &StoredObject) -> u64 {
    object.value().expect("json")["spec"]["n"]
        .as_u64()
        .expect("counter")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conflicting_updates_have_exactly_one_winner_per_revision() {
    let db = TempDb::new("cas");
    let store = Store::open(db.path()).expect("open");
    let key = pod_key("counter");
    let mut object = pod("counter");
    object["spec"] = json!({"n": 0});
    let first = store
        .put(
            key.clone(),
            object,
            Default::default(),
            Precondition::Absent,
        )
        .await
        .expect("create");
    const SWAPS: usize = 12;
    let tasks: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (store, key) = (store.clone(), key.clone());
            tokio::spawn(async move {
                let (mut swaps, mut conflicts) = (Vec::new(), 0);
                while swaps.len() < SWAPS {
                    let current = store.get(&key).expect("counter exists");
                    let value = counter(&current) + 1;
                    let mut object = current.value().expect("json");
                    object["spec"]["n"] = json!(value);
                    match store
                        .put(
                            key.clone(),
                            object,
                            Default::default(),
                            Precondition::Revision(current.revision),
                        )
                        .await
                    {
                        Ok(stored) => swaps.push(Swap {
                            base: current.revision,
                            revision: stored.revision,
                            value,
                        }),
                        Err(WriteError::Conflict { current: Some(now) }) => {
                            assert_ne!(now.revision, current.revision);
                            conflicts += 1;
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
                (swaps, conflicts)
            })
        })
        .collect();
    let mut swaps = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        let (s, c) = t.await.expect("writer");
        swaps.extend(s);
        conflicts += c;
    }
    swaps.sort_by_key(|s| s.revision);
    // One chain: every swap replaced the previous winner, so each revision
    // was won exactly once and no increment was lost.
    let mut previous = first.revision;
    for (i, swap) in swaps.iter().enumerate() {
        assert_eq!(
            swap.base, previous,
            "swap {i} did not build on the last winner"
        );
        assert_eq!(
            swap.revision,
            previous + 1,
            "revisions have a gap or repeat"
        );
        assert_eq!(swap.value, i as u64 + 1);
        previous = swap.revision;
    }
    let last = store.get(&key).expect("counter");
    assert_eq!(counter(&last), (WRITERS * SWAPS) as u64);
    assert_eq!(store.revision(), previous);
    eprintln!(
        "{} swaps, {conflicts} conflicts, {:?}",
        swaps.len(),
        store.stats()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_of_one_key_have_one_winner() {
    let db = TempDb::new("create-race");
    let store = Store::open(db.path()).expect("open");
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .put(
                        pod_key("only"),
                        pod("only"),
                        Default::default(),
                        Precondition::Absent,
                    )
                    .await
            })
        })
        .collect();
    let mut winners = Vec::new();
    let mut seen_by_losers = BTreeSet::new();
    for t in tasks {
        match t.await.expect("task") {
            Ok(stored) => winners.push(stored),
            Err(WriteError::Conflict { current: Some(c) }) => {
                seen_by_losers.insert(c.revision);
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(winners.len(), 1);
    assert_eq!(winners[0].revision, 1);
    assert_eq!(seen_by_losers, BTreeSet::from([1]));
    assert_eq!(store.revision(), 1, "refused creates take no revision");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_acknowledged_write_is_stored_logged_and_recovered() {
    let db = TempDb::new("acks");
    const PER_WRITER: usize = 40;
    let acks: Vec<(EventType, Arc<StoredObject>)> = {
        let store = Store::open(db.path()).expect("open");
        let tasks: Vec<_> = (0..WRITERS)
            .map(|w| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut acks = Vec::new();
                    for i in 0..PER_WRITER {
                        let name = format!("w{w}-{i}");
                        let stored = store
                            .put(
                                pod_key(&name),
                                pod(&name),
                                Default::default(),
                                Precondition::Absent,
                            )
                            .await
                            .expect("create");
                        acks.push((EventType::Added, stored));
                        // Every third object is deleted again.
                        if i % 3 == 0 {
                            let gone = store
                                .delete(&pod_key(&name), Precondition::Exists)
                                .await
                                .expect("delete");
                            acks.push((EventType::Deleted, gone));
                        }
                    }
                    acks
                })
            })
            .collect();
        let mut acks = Vec::new();
        for t in tasks {
            acks.extend(t.await.expect("writer"));
        }
        acks
    };
    let mut acks = acks;
    acks.sort_by_key(|(_, o)| o.revision);
    let revisions: Vec<u64> = acks.iter().map(|(_, o)| o.revision).collect();
    let expected: Vec<u64> = (1..=acks.len() as u64).collect();
    assert_eq!(revisions, expected, "acknowledged revisions are 1..=N");

    let store = Store::open(db.path()).expect("reopen");
    assert_eq!(store.revision(), acks.len() as u64);
    let mut watch = store
        .watch(Prefix::new("pods", None), Some(0))
        .expect("watch");
    for (event_type, object) in &acks {
        let event = watch.next().await.expect("event");
        assert_eq!((event.event_type, &event.object), (*event_type, object));
    }
    // The recovered index is the acknowledged writes replayed in order.
    let mut model = BTreeMap::new();
    for (event_type, object) in &acks {
        match event_type {
            EventType::Deleted => model.remove(&object.key),
            _ => model.insert(object.key.clone(), object.clone()),
        };
    }
    let (items, _) = store.list(&Prefix::new("pods", None));
    assert_eq!(items, model.into_values().collect::<Vec<_>>());
}
