//! Damaged data on disk: a flipped byte inside a stored object is detected
//! by the record's checksum, reported, and never served — GET answers
//! kube-apiserver's corrupt-object error, LIST its `StorageReadError`,
//! other objects stay readable — and re-creating the object repairs it.

mod support;

use std::sync::Arc;

use exitplan_apiserver::clock::TokioClock;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::{Key, Precondition, Prefix, StorageError, Store};
use serde_json::json;
use support::*;

const PODS: &str = "/api/v1/namespaces/default/pods";
const JSON: (&str, &str) = ("content-type", "application/json");
const MARKER: &[u8] = b"damage-me-please";

async fn server_on(store: Store) -> Server {
    Server::builder()
        .store(store)
        .clock(Arc::new(TokioClock::starting_at(
            START.parse().expect("time"),
        )))
        .build()
        .await
        .expect("server")
}

fn marked_pod(name: &str) -> serde_json::Value {
    let mut p = pod(name);
    p["metadata"]["annotations"] = json!({"note": String::from_utf8_lossy(MARKER)});
    p
}

/// Flips one byte of every copy of [`MARKER`] in the file.
fn flip_marker(path: &std::path::Path) -> usize {
    let mut bytes = std::fs::read(path).expect("read db");
    let mut flipped = 0;
    let mut at = 0;
    while let Some(i) = bytes[at..].windows(MARKER.len()).position(|w| w == MARKER) {
        bytes[at + i + 3] ^= 0x20;
        flipped += 1;
        at += i + MARKER.len();
    }
    std::fs::write(path, bytes).expect("write db");
    flipped
}

/// A temporary directory for one test's database.
fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "exitplan-damage-{}-{}",
        std::process::id(),
        exitplan_apiserver::rest::meta::random_hex(4).expect("random")
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// A database at `path` holding pods `default/hurt` (damaged on disk once
/// this returns), `default/fine` and `other/elsewhere`; the server on it.
async fn damaged_server(path: &std::path::Path) -> Server {
    {
        let server = server_on(Store::open(path).expect("open")).await;
        for (uri, body) in [
            (
                "/api/v1/namespaces".to_owned(),
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}),
            ),
            (PODS.to_owned(), marked_pod("hurt")),
            (PODS.to_owned(), pod("fine")),
            ("/api/v1/namespaces/other/pods".to_owned(), pod("elsewhere")),
        ] {
            let (code, _, answer) = raw(&server, "POST", &uri, &[JSON], &body.to_string()).await;
            assert_eq!(code, 201, "{answer}");
        }
    }
    let store = reopen(path).await;
    drop(store);
    assert!(flip_marker(path) > 0, "the marker is on disk");

    let store = reopen(path).await;
    let damaged = store.damaged();
    assert_eq!(
        damaged.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        [Key::new("pods", "default", "hurt")],
        "the damaged key is reported"
    );
    server_on(store).await
}

/// The start of the message every request on the damaged pod answers.
const CORRUPT: &str = "Internal error occurred: StorageError: corrupt object, Code: 7, Key: pods/default/hurt, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=";

#[tokio::test(start_paused = true)]
async fn a_flipped_byte_in_a_stored_object_is_never_served() {
    let dir = temp_dir();
    let path = dir.join("exitplan.redb");
    let server = damaged_server(&path).await;

    let (code, _, body) = raw(&server, "GET", &format!("{PODS}/hurt"), &[], "").await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(body["reason"], "InternalError");
    let message = body["message"].as_str().expect("message");
    assert!(message.starts_with(CORRUPT), "{message}");
    assert!(
        !message.contains("damage-me"),
        "nothing of the object leaks"
    );

    let (code, _, body) = raw(&server, "GET", PODS, &[], "").await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(body["reason"], "StorageReadError");
    assert_eq!(
        body["message"],
        "failed to read one or more pods from the storage"
    );
    assert_eq!(body["details"]["causes"][0]["field"], "pods/default/hurt");
    assert_eq!(
        body["details"]["causes"][0]["reason"],
        "UnexpectedServerResponse"
    );

    let (code, _, body) = raw(&server, "GET", &format!("{PODS}/fine"), &[], "").await;
    assert_eq!(code, 200, "{body}");
    let (code, _, body) = raw(&server, "GET", "/api/v1/namespaces/other/pods", &[], "").await;
    assert_eq!(code, 200, "other namespaces list: {body}");
    assert_eq!(body["items"].as_array().map(Vec::len), Some(1));

    // Recovery: create the object again.
    let (code, _, body) = raw(&server, "POST", PODS, &[JSON], &pod("hurt").to_string()).await;
    assert_eq!(code, 201, "{body}");
    let (code, _, body) = raw(&server, "GET", PODS, &[], "").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["items"].as_array().map(Vec::len), Some(2));
    assert!(server.store().damaged().is_empty());
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// kube-apiserver reads the stored object before it changes or deletes
/// it (`GuaranteedUpdate`, and the registry's `Get` before a delete); a
/// read that fails ends the request with that error, and the registry
/// interprets a corrupt object as `InternalError` (500) for updates and
/// deletes as for gets. So every write to a damaged object — not a 404,
/// which would tell a client the object is gone — fails as GET does, and
/// stores nothing.
#[tokio::test(start_paused = true)]
async fn writes_to_a_damaged_object_fail_as_its_read_does_and_store_nothing() {
    let dir = temp_dir();
    let path = dir.join("exitplan.redb");
    let server = damaged_server(&path).await;
    let hurt = format!("{PODS}/hurt");
    let mut replacement = pod("hurt");
    replacement["metadata"]["namespace"] = json!("default");
    let replacement = replacement.to_string();
    let merge = ("content-type", "application/merge-patch+json");
    let labels = r#"{"metadata":{"labels":{"x":"y"}}}"#;
    let binding = json!({"apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "hurt"}, "target": {"kind": "Node", "name": "node-1"}})
    .to_string();
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "hurt", "namespace": "default"}})
    .to_string();
    let requests: Vec<(&str, String, (&str, &str), String)> = vec![
        ("PUT", hurt.clone(), JSON, replacement.clone()),
        ("PUT", format!("{hurt}/status"), JSON, replacement.clone()),
        ("PATCH", hurt.clone(), merge, labels.to_owned()),
        (
            "PATCH",
            hurt.clone(),
            ("content-type", "application/json-patch+json"),
            r#"[{"op":"add","path":"/metadata/labels/x","value":"y"}]"#.to_owned(),
        ),
        (
            "PATCH",
            hurt.clone(),
            ("content-type", "application/strategic-merge-patch+json"),
            labels.to_owned(),
        ),
        (
            "PATCH",
            format!("{hurt}?fieldManager=test"),
            ("content-type", "application/apply-patch+yaml"),
            replacement.clone(),
        ),
        ("PATCH", format!("{hurt}/status"), merge, labels.to_owned()),
        ("DELETE", hurt.clone(), JSON, String::new()),
        (
            "DELETE",
            format!("{hurt}?gracePeriodSeconds=0"),
            JSON,
            String::new(),
        ),
        ("POST", format!("{hurt}/binding"), JSON, binding),
        ("POST", format!("{hurt}/eviction"), JSON, eviction),
    ];
    let revision = server.store().revision();
    let mut wrong = Vec::new();
    for (method, uri, content_type, body) in &requests {
        let (code, _, answer) = raw(&server, method, uri, &[*content_type], body).await;
        let message = answer["message"].as_str().unwrap_or_default();
        if code != 500 || answer["reason"] != "InternalError" || !message.starts_with(CORRUPT) {
            wrong.push(format!(
                "{method} {uri} ({}): {code} {answer}",
                content_type.1
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(server.store().revision(), revision, "nothing was written");
    assert_eq!(
        server.store().damaged().len(),
        1,
        "the damaged object is still there (and still reported)"
    );
    let (code, _, body) = raw(&server, "GET", &format!("{PODS}/fine"), &[], "").await;
    assert_eq!(code, 200, "{body}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A create checks its namespace (kube-apiserver's NamespaceLifecycle
/// reads it); a damaged Namespace fails the create as its GET fails.
#[tokio::test(start_paused = true)]
async fn a_create_in_a_damaged_namespace_fails_as_its_read_does() {
    let dir = temp_dir();
    let path = dir.join("exitplan.redb");
    {
        let server = server_on(Store::open(&path).expect("open")).await;
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "hurt", "annotations": {"note": String::from_utf8_lossy(MARKER)}}});
        let (code, _, answer) = raw(
            &server,
            "POST",
            "/api/v1/namespaces",
            &[JSON],
            &namespace.to_string(),
        )
        .await;
        assert_eq!(code, 201, "{answer}");
    }
    drop(reopen(&path).await);
    assert!(flip_marker(&path) > 0, "the marker is on disk");
    let server = server_on(reopen(&path).await).await;
    let (code, _, answer) = raw(
        &server,
        "POST",
        "/api/v1/namespaces/hurt/pods",
        &[JSON],
        &pod("p").to_string(),
    )
    .await;
    assert_eq!(code, 500, "{answer}");
    assert_eq!(answer["reason"], "InternalError", "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "Internal error occurred: StorageError: corrupt object, Code: 7, Key: namespaces//hurt,"
        ),
        "{message}"
    );
    assert!(
        server.store().get(&Key::new("pods", "hurt", "p")).is_none(),
        "nothing stored"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compaction reads every record it removes history up to; a damaged old
/// record (its checksum fails) is passed over instead of stopping
/// compaction for good, history behind it is still removed — the version a
/// damaged change replaced too, so a deleted object never comes back at
/// the next start — and nothing damaged is served.
#[tokio::test]
async fn compaction_passes_over_damaged_history_and_never_serves_it() {
    let dir = temp_dir();
    let path = dir.join("exitplan.redb");
    let key = |name: &str| Key::new("pods", "default", name);
    let marked = json!({"v": 2, "note": String::from_utf8_lossy(MARKER)});
    {
        let store = Store::open(&path).expect("open");
        let put = |name: &str, value: serde_json::Value, precondition| {
            store.put(key(name), value, Default::default(), precondition)
        };
        // a: a damaged version, replaced.
        put("a", marked.clone(), Precondition::Absent)
            .await
            .expect("a1");
        put("a", json!({"v": 3}), Precondition::Exists)
            .await
            .expect("a2");
        // b: replaced by a damaged version, then deleted (the deletion
        // record carries that version, so it is damaged too).
        put("b", json!({"v": 1}), Precondition::Absent)
            .await
            .expect("b1");
        put("b", marked.clone(), Precondition::Exists)
            .await
            .expect("b2");
        store
            .delete(&key("b"), Precondition::Exists)
            .await
            .expect("b3");
        // c: its current version is damaged.
        put("c", json!({"v": 1}), Precondition::Absent)
            .await
            .expect("c1");
        put("c", marked.clone(), Precondition::Exists)
            .await
            .expect("c2");
        // d: whole.
        put("d", json!({"v": 1}), Precondition::Absent)
            .await
            .expect("d1");
    }
    assert_eq!(flip_marker(&path), 4, "a1, b2, b's deletion and c2");

    let store = reopen(&path).await;
    assert_eq!(
        store
            .damaged()
            .iter()
            .map(|(k, _)| k.clone())
            .collect::<Vec<_>>(),
        [key("c")]
    );
    let head = store.revision();
    assert_eq!(
        store
            .compact(head)
            .await
            .expect("compaction passes over damage"),
        head
    );
    assert_eq!(store.compacted_revision(), head);
    let pods = Prefix::new("pods", None);
    assert!(
        matches!(
            store.watch(pods.clone(), Some(0)),
            Err(StorageError::Expired { .. })
        ),
        "the damaged history is gone for watches"
    );
    assert!(matches!(
        store.list_at(&pods, 1),
        Err(StorageError::Expired { .. } | StorageError::Unreadable { .. })
    ));
    // Compaction goes on after it.
    store
        .put(
            key("d"),
            json!({"v": 2}),
            Default::default(),
            Precondition::Exists,
        )
        .await
        .expect("d2");
    let head = store.revision();
    assert_eq!(store.compact(head).await.expect("again"), head);
    drop(store);

    let store = reopen(&path).await;
    assert_eq!(
        store
            .damaged()
            .iter()
            .map(|(k, _)| k.clone())
            .collect::<Vec<_>>(),
        [key("c")],
        "c is still reported damaged, not rolled back to its old version"
    );
    let value = |name: &str| {
        store
            .get(&key(name))
            .map(|o| o.value().expect("json")["v"].clone())
    };
    assert_eq!(value("a"), Some(json!(3)));
    assert_eq!(value("b"), None, "a deleted object does not come back");
    assert_eq!(value("c"), None);
    assert_eq!(value("d"), Some(json!(2)));
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
