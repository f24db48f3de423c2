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

mod batch {
    //! Group commit's planning: one batch, checked in order.

    use super::super::writer::{Op, plan};
    use super::*;

    fn put(name: &str, precondition: Precondition) -> Op {
        Op::Put {
            key: Key::new("pods", "default", name),
            object: pod(name),
            attrs: Attrs::default(),
            precondition,
        }
    }

    fn delete(name: &str, precondition: Precondition) -> Op {
        Op::Delete {
            key: Key::new("pods", "default", name),
            precondition,
        }
    }

    fn existing(name: &str, revision: u64) -> Arc<StoredObject> {
        let mut value = pod(name);
        set_resource_version(&mut value, revision);
        Arc::new(StoredObject {
            key: Key::new("pods", "default", name),
            revision,
            json: Bytes::from(serde_json::to_vec(&value).expect("json")),
            attrs: Attrs::default(),
        })
    }

    fn revision_of(outcome: &writer::Outcome) -> Option<u64> {
        outcome.as_ref().ok().map(|o| o.revision)
    }

    #[test]
    fn preconditions_see_earlier_writes_of_the_same_batch() {
        let ops = vec![
            put("a", Precondition::Absent),          // 11
            put("a", Precondition::Absent),          // refused: 11 exists
            put("a", Precondition::Revision(11)),    // 12
            put("a", Precondition::Revision(11)),    // refused: now 12
            delete("a", Precondition::Revision(12)), // 13
            put("a", Precondition::Exists),          // refused: deleted
            put("a", Precondition::Absent),          // 14
        ];
        let plan = plan(ops, 10, |_| None);
        let revisions: Vec<_> = plan.outcomes.iter().map(revision_of).collect();
        assert_eq!(
            revisions,
            [Some(11), None, Some(12), None, Some(13), None, Some(14)]
        );
        let types: Vec<_> = plan.records.iter().map(|r| r.event.event_type).collect();
        assert_eq!(
            types,
            [
                EventType::Added,
                EventType::Modified,
                EventType::Deleted,
                EventType::Added
            ]
        );
        // A refusal reports what the batch had written so far.
        match &plan.outcomes[3] {
            Err(WriteError::Conflict { current: Some(c) }) => assert_eq!(c.revision, 12),
            other => panic!("expected a conflict on revision 12, got {other:?}"),
        }
        // Each record remembers the version it replaced.
        let prevs: Vec<_> = plan
            .records
            .iter()
            .map(|r| r.prev.as_ref().map(|p| p.revision))
            .collect();
        assert_eq!(prevs, [None, Some(11), Some(12), None]);
    }

    #[test]
    fn a_refused_write_does_not_affect_the_others() {
        let stored = existing("b", 4);
        let ops = vec![
            put("a", Precondition::Revision(3)), // refused: absent
            put("b", Precondition::Revision(3)), // refused: at 4
            delete("c", Precondition::None),     // refused: absent
            put("b", Precondition::Revision(4)), // 6
            put("c", Precondition::None),        // 7
        ];
        let plan = plan(ops, 5, |key| (key == &stored.key).then(|| stored.clone()));
        let revisions: Vec<_> = plan.outcomes.iter().map(revision_of).collect();
        assert_eq!(revisions, [None, None, None, Some(6), Some(7)]);
        assert!(matches!(
            &plan.outcomes[1],
            Err(WriteError::Conflict { current: Some(c) }) if c.revision == 4
        ));
        assert!(matches!(
            &plan.outcomes[2],
            Err(WriteError::Conflict { current: None })
        ));
        let json = plan.records[0].event.object.value().expect("json");
        assert_eq!(json["metadata"]["resourceVersion"], "6");
    }

    #[test]
    fn a_delete_carries_the_last_state_stamped_with_its_revision() {
        let stored = existing("a", 2);
        let plan = plan(vec![delete("a", Precondition::Exists)], 8, |_| {
            Some(stored.clone())
        });
        let record = &plan.records[0];
        assert_eq!(record.event.event_type, EventType::Deleted);
        assert_eq!(record.event.object.revision, 9);
        let json = record.event.object.value().expect("json");
        assert_eq!(json["metadata"]["resourceVersion"], "9");
        assert_eq!(json["metadata"]["name"], "a");
        assert_eq!(record.prev.as_ref().map(|p| p.revision), Some(2));
    }
}

#[tokio::test]
async fn a_write_larger_than_etcd_accepts_is_refused_and_takes_no_revision() {
    let store = Store::in_memory().expect("store");
    let small = store
        .put(
            Key::new("pods", "default", "a"),
            pod("a"),
            Attrs::default(),
            Precondition::Absent,
        )
        .await
        .expect("small");
    let mut big = pod("a");
    big["data"] = Value::String("x".repeat(MAX_REQUEST_BYTES));
    let refused = store
        .put(
            Key::new("pods", "default", "a"),
            big.clone(),
            Attrs::default(),
            Precondition::None,
        )
        .await;
    match refused {
        Err(WriteError::TooLarge {
            error: e @ StorageError::RequestTooLarge { size, limit },
            object,
        }) => {
            assert_eq!(object["data"], big["data"], "the refused object comes back");
            assert_eq!(limit, 1_572_864);
            assert!(size > limit);
            assert_eq!(e.to_string(), "etcdserver: request is too large");
        }
        other => panic!("expected RequestTooLarge, got {other:?}"),
    }
    assert_eq!(store.revision(), 1, "no revision taken");
    assert_eq!(
        store.get(&Key::new("pods", "default", "a")),
        Some(small),
        "the stored object is unchanged"
    );
    // Just under the limit (key plus JSON) is accepted.
    let key = Key::new("pods", "default", "b");
    let mut fits = pod("b");
    fits["data"] = Value::String(String::new());
    let base = serde_json::to_vec(&{
        let mut v = fits.clone();
        set_resource_version(&mut v, 2);
        v
    })
    .expect("json")
    .len();
    fits["data"] = Value::String("x".repeat(MAX_REQUEST_BYTES - base - key.as_str().len()));
    let stored = store
        .put(key, fits, Attrs::default(), Precondition::Absent)
        .await
        .expect("at the limit");
    assert_eq!(
        stored.json.len() + "pods/default/b".len(),
        MAX_REQUEST_BYTES
    );
}

#[tokio::test]
async fn a_truncated_database_is_an_error_not_a_panic() {
    let path = std::env::temp_dir().join(format!(
        "exitplan-store-truncated-{}-{}",
        std::process::id(),
        crate::rest::meta::random_hex(4).expect("random")
    ));
    {
        let store = Store::open(&path).expect("open");
        for i in 0..200 {
            let name = format!("p{i}");
            store
                .put(
                    Key::new("pods", "default", &name),
                    pod(&name),
                    Attrs::default(),
                    Precondition::Absent,
                )
                .await
                .expect("put");
        }
    }
    let len = std::fs::metadata(&path).expect("metadata").len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("file");
    file.set_len(len / 2 - 1).expect("truncate");
    drop(file);
    let opened = std::panic::catch_unwind(|| Store::open(&path));
    let _ = std::fs::remove_file(&path);
    match opened {
        Ok(Err(e)) => {
            let message = e.to_string();
            assert!(message.contains("damaged"), "{message}");
            assert!(!message.contains('\n'), "one line: {message}");
        }
        Ok(Ok(_)) => panic!("a truncated database opened"),
        Err(_) => panic!("opening a truncated database panicked"),
    }
}

#[tokio::test]
async fn a_format_2_database_is_migrated_to_checksummed_records() {
    let path = std::env::temp_dir().join(format!(
        "exitplan-store-v2-{}-{}",
        std::process::id(),
        crate::rest::meta::random_hex(4).expect("random")
    ));
    {
        let store = Store::open(&path).expect("open");
        for name in ["a", "b"] {
            store
                .put(
                    Key::new("pods", "default", name),
                    pod(name),
                    Attrs::default(),
                    Precondition::Absent,
                )
                .await
                .expect("put");
        }
    }
    {
        // What format 2 wrote: the same records without their checksum.
        let db = Database::create(&path).expect("db");
        let txn = db.begin_write().expect("txn");
        {
            let mut log = txn.open_table(LOG).expect("log");
            let rows: Vec<(u64, Vec<u8>)> = log
                .iter()
                .expect("iter")
                .map(|r| {
                    let (k, v) = r.expect("row");
                    (k.value(), v.value()[4..].to_vec())
                })
                .collect();
            for (k, v) in rows {
                log.insert(k, v.as_slice()).expect("insert");
            }
            let mut meta = txn.open_table(META).expect("meta");
            meta.insert(META_FORMAT, FORMAT_UNCHECKED).expect("format");
        }
        txn.commit().expect("commit");
    }
    let store = Store::open(&path).expect("migrated");
    let (items, revision) = store.list(&Prefix::new("pods", None));
    assert_eq!((items.len(), revision), (2, 2));
    assert!(store.damaged().is_empty());
    drop(store);
    let db = Database::create(&path).expect("db");
    let read = db.begin_read().expect("read");
    let meta = read.open_table(META).expect("meta");
    assert_eq!(
        meta.get(META_FORMAT).expect("get").map(|g| g.value()),
        Some(FORMAT)
    );
    let log = read.open_table(LOG).expect("log");
    for row in log.iter().expect("iter") {
        let (_, v) = row.expect("row");
        codec::decode_event(v.value()).expect("checksummed");
    }
    drop((log, meta, read, db));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn fingerprint_changes_with_every_write_under_its_prefix_only() {
    let store = Store::in_memory().expect("store");
    let pods = Prefix::new("pods", Some("default"));
    assert_eq!(store.fingerprint(&pods), (0, 0));
    let put = |name: &'static str, pre| {
        store.put(
            Key::new("pods", "default", name),
            pod(name),
            Attrs::default(),
            pre,
        )
    };
    put("a", Precondition::Absent).await.expect("a");
    put("b", Precondition::Absent).await.expect("b");
    assert_eq!(store.fingerprint(&pods), (2, 2));
    put("a", Precondition::None).await.expect("update a");
    assert_eq!(store.fingerprint(&pods), (2, 3), "an update");
    store
        .delete(&Key::new("pods", "default", "b"), Precondition::None)
        .await
        .expect("delete b");
    assert_eq!(
        store.fingerprint(&pods),
        (1, 3),
        "a delete of an older object"
    );
    store
        .put(
            Key::new("pods", "other", "c"),
            pod("c"),
            Attrs::default(),
            Precondition::Absent,
        )
        .await
        .expect("c");
    assert_eq!(
        store.fingerprint(&pods),
        (1, 3),
        "other prefixes do not count"
    );
}
