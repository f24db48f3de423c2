use super::*;

fn pod(name: &str) -> Value {
    serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}})
}

#[tokio::test]
async fn writes_get_increasing_revisions_and_survive_restart() {
    let dir = std::env::temp_dir().join(format!("exitplan-store-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    {
        let store = Store::open(&dir).expect("open");
        let a = store
            .put(
                Key::new("pods", "default", "a"),
                pod("a"),
                Attrs::default(),
                Precondition::Absent,
            )
            .await
            .expect("put a");
        let b = store
            .put(
                Key::new("pods", "default", "b"),
                pod("b"),
                Attrs::default(),
                Precondition::Absent,
            )
            .await
            .expect("put b");
        assert_eq!((a.revision, b.revision), (1, 2));
        assert_eq!(a.value().expect("json")["metadata"]["resourceVersion"], "1");
        let gone = store
            .delete(&Key::new("pods", "default", "a"), Precondition::Revision(1))
            .await
            .expect("delete");
        assert_eq!(gone.revision, 3);
    }
    let store = Store::open(&dir).expect("reopen");
    assert_eq!(store.revision(), 3);
    let (items, rev) = store.list(&Prefix::new("pods", Some("default")));
    assert_eq!(rev, 3);
    assert_eq!(
        items.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(),
        ["pods/default/b"]
    );
    let c = store
        .put(
            Key::new("pods", "default", "c"),
            pod("c"),
            Attrs::default(),
            Precondition::None,
        )
        .await
        .expect("put c");
    assert_eq!(c.revision, 4, "the sequence continues after restart");
    let _ = std::fs::remove_file(&dir);
}

#[tokio::test]
async fn preconditions_conflict() {
    let store = Store::in_memory().expect("store");
    let key = Key::new("pods", "default", "a");
    store
        .put(
            key.clone(),
            pod("a"),
            Attrs::default(),
            Precondition::Absent,
        )
        .await
        .expect("create");
    assert!(matches!(
        store
            .put(
                key.clone(),
                pod("a"),
                Attrs::default(),
                Precondition::Absent
            )
            .await,
        Err(WriteError::Conflict { current: Some(_) })
    ));
    assert!(matches!(
        store
            .put(
                key.clone(),
                pod("a"),
                Attrs::default(),
                Precondition::Revision(7)
            )
            .await,
        Err(WriteError::Conflict { .. })
    ));
    store
        .put(key, pod("a"), Attrs::default(), Precondition::Revision(1))
        .await
        .expect("update at rv 1");
}

#[tokio::test]
async fn watch_replays_then_follows_without_gaps() {
    let store = Store::in_memory().expect("store");
    for n in ["a", "b"] {
        store
            .put(
                Key::new("pods", "default", n),
                pod(n),
                Attrs::default(),
                Precondition::Absent,
            )
            .await
            .expect("put");
    }
    store
        .put(
            Key::new("nodes", "", "n"),
            pod("n"),
            Attrs::default(),
            Precondition::Absent,
        )
        .await
        .expect("node");
    let mut w = store
        .watch(Prefix::new("pods", None), Some(1))
        .expect("watch");
    store
        .delete(&Key::new("pods", "default", "a"), Precondition::None)
        .await
        .expect("delete");
    let first = w.next().await.expect("event");
    assert_eq!(
        (first.event_type, first.object.revision),
        (EventType::Added, 2)
    );
    let second = w.next().await.expect("event");
    assert_eq!(
        (second.event_type, second.object.key.as_str()),
        (EventType::Deleted, "pods/default/a")
    );
    assert_eq!(second.object.revision, 4);
}

#[tokio::test]
async fn watch_resumes_from_disk_after_restart() {
    let dir = std::env::temp_dir().join(format!("exitplan-store-watch-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    {
        let store = Store::open(&dir).expect("open");
        for n in ["a", "b", "c"] {
            store
                .put(
                    Key::new("pods", "default", n),
                    pod(n),
                    Attrs::default(),
                    Precondition::Absent,
                )
                .await
                .expect("put");
        }
    }
    let store = Store::open(&dir).expect("reopen");
    let mut w = store
        .watch(Prefix::new("pods", None), Some(1))
        .expect("watch from rv 1");
    store
        .put(
            Key::new("pods", "default", "d"),
            pod("d"),
            Attrs::default(),
            Precondition::Absent,
        )
        .await
        .expect("put d");
    let revs: Vec<u64> = [w.next().await, w.next().await, w.next().await]
        .into_iter()
        .map(|e| e.expect("event").object.revision)
        .collect();
    assert_eq!(revs, [2, 3, 4]);
    let _ = std::fs::remove_file(&dir);
}
