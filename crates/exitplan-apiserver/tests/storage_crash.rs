//! Crash test: a child process writes as fast as it can and prints each
//! acknowledged key and revision; the parent SIGKILLs it mid-stream, reopens
//! the store and checks that every acknowledged write survived, with its
//! revision, in the log too, and that the revision sequence continues.
//!
//! The child is this test binary re-executed with [`CHILD`] set, running
//! only [`crash_child`] (which does nothing otherwise).

mod storage_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use exitplan_apiserver::storage::{EventType, Precondition, Prefix, Store};
use storage_support::{TempDb, pod, pod_key};

/// Set (to the database path) in the child.
const CHILD: &str = "EXITPLAN_STORAGE_CRASH_CHILD";
/// Concurrent writers in the child.
const WRITERS: usize = 8;
/// Acknowledgements the parent waits for before killing the child.
const KILL_AFTER: usize = 400;

/// The child: writes until killed, printing `ACK <key> <revision>` for each
/// acknowledged write, after the acknowledgement.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let store = Store::open(path.as_ref()).expect("open");
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let store = store.clone();
                tokio::spawn(async move {
                    for i in 0.. {
                        let name = format!("w{w}-{i}");
                        let stored = store
                            .put(
                                pod_key(&name),
                                pod(&name),
                                Default::default(),
                                Precondition::Absent,
                            )
                            .await
                            .expect("put");
                        let mut out = std::io::stdout().lock();
                        writeln!(out, "ACK {} {}", stored.key.as_str(), stored.revision)
                            .expect("stdout");
                        out.flush().expect("flush");
                    }
                })
            })
            .collect();
        for w in writers {
            w.await.expect("writer");
        }
    });
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let db = TempDb::new("crash");
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe)
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, db.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("child stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut acked: BTreeMap<String, u64> = BTreeMap::new();
    let mut parse = |line: &str| {
        if let Some(ack) = line.strip_prefix("ACK ") {
            let (key, revision) = ack.split_once(' ').expect("ACK <key> <revision>");
            let revision = revision.parse().expect("revision");
            assert!(
                acked.insert(key.to_owned(), revision).is_none(),
                "{key} twice"
            );
        }
    };
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut seen = 0;
    while seen < KILL_AFTER && Instant::now() < deadline {
        let Some(line) = lines.next() else { break };
        let line = line.expect("line");
        seen += usize::from(line.starts_with("ACK "));
        parse(&line);
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    // Whatever the child printed before dying was acknowledged too.
    for line in lines {
        parse(&line.expect("line"));
    }
    assert!(
        acked.len() >= 50,
        "the child acknowledged only {} writes",
        acked.len()
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let store = Store::open(db.path()).expect("reopen after SIGKILL");
    let newest = acked.values().copied().max().expect("acks");
    assert!(store.revision() >= newest);
    for (key, revision) in &acked {
        let name = key.rsplit('/').next().expect("name");
        let stored = store
            .get(&pod_key(name))
            .unwrap_or_else(|| panic!("acknowledged {key} is gone"));
        assert_eq!(stored.revision, *revision, "{key}");
        let json = stored.value().expect("json");
        assert_eq!(json["metadata"]["resourceVersion"], revision.to_string());
    }
    // The log holds every revision up to the recovered one, in order, and
    // each acknowledged write at its revision.
    let mut watch = store
        .watch(Prefix::new("pods", None), Some(0))
        .expect("watch from 0");
    let mut logged = BTreeMap::new();
    for expected in 1..=store.revision() {
        let event = runtime.block_on(watch.next()).expect("event");
        assert_eq!(event.object.revision, expected);
        assert_eq!(event.event_type, EventType::Added);
        logged.insert(event.object.key.as_str().to_owned(), expected);
    }
    for (key, revision) in &acked {
        assert_eq!(logged.get(key), Some(revision), "{key} in the log");
    }

    let before = store.revision();
    let next = runtime
        .block_on(store.put(
            pod_key("after-crash"),
            pod("after-crash"),
            Default::default(),
            Precondition::Absent,
        ))
        .expect("write after recovery");
    assert_eq!(next.revision, before + 1);
    assert!(next.revision > newest);
    eprintln!(
        "crash test: {} acknowledged, newest revision {newest}, recovered revision {before}",
        acked.len()
    );
}
