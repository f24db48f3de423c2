//! Damaged data on disk: a flipped byte inside a stored object is detected
//! by the record's checksum, reported, and never served — GET answers
//! kube-apiserver's corrupt-object error, LIST its `StorageReadError`,
//! other objects stay readable — and re-creating the object repairs it.

mod support;

use std::sync::Arc;

use exitplan_apiserver::clock::TokioClock;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::{Key, Store};
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

#[tokio::test(start_paused = true)]
async fn a_flipped_byte_in_a_stored_object_is_never_served() {
    let dir = std::env::temp_dir().join(format!(
        "exitplan-damage-{}-{}",
        std::process::id(),
        exitplan_apiserver::rest::meta::random_hex(4).expect("random")
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("exitplan.redb");
    {
        let server = server_on(Store::open(&path).expect("open")).await;
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
    let store = reopen(&path).await;
    drop(store);
    assert!(flip_marker(&path) > 0, "the marker is on disk");

    let store = reopen(&path).await;
    let damaged = store.damaged();
    assert_eq!(
        damaged.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        [Key::new("pods", "default", "hurt")],
        "the damaged key is reported"
    );
    let server = server_on(store).await;

    let (code, _, body) = raw(&server, "GET", &format!("{PODS}/hurt"), &[], "").await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(body["reason"], "InternalError");
    let message = body["message"].as_str().expect("message");
    assert!(
        message.starts_with(
            "Internal error occurred: StorageError: corrupt object, Code: 7, Key: pods/default/hurt, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision="
        ),
        "{message}"
    );
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
