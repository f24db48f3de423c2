//! A watch client that never reads, over a real socket. kube-apiserver sets
//! no write timeout (its `http.Server` has none, and a watch handler blocked
//! writing to such a client stays blocked), so the connection stays open
//! here too; what the server holds for it is bounded: once the watch is
//! over (the store ended it for falling behind, or its timeout passed) its
//! server-side state is released although the client never takes another
//! byte, and server shutdown waits for such a connection no longer than the
//! request timeout, as kube-apiserver's shutdown does.
//!
//! Every wait here is a generous safety bound on an outcome, not a speed
//! assertion.

use std::time::Duration;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::serving::ConnectionLimits;
use exitplan_apiserver::storage::{Attrs, Key, Precondition, Store, StoreConfig};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Upper bound on any wait that should end.
const SAFETY: Duration = Duration::from_secs(30);

/// A server on a loopback socket whose watchers may fall `behind` events
/// (and 64 MiB) behind.
async fn start(
    limits: ConnectionLimits,
    behind: usize,
) -> (
    Store,
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let store = Store::in_memory_with(StoreConfig {
        watch_buffer: behind,
        watch_buffer_bytes: 64 << 20,
        ..StoreConfig::default()
    })
    .expect("store");
    let server = Server::builder()
        .store(store.clone())
        .connection_limits(limits)
        .build()
        .await
        .expect("server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    (store, addr, stop, serving)
}

/// Opens a watch on leases and never reads the answer.
async fn never_reading_watch(addr: std::net::SocketAddr, query: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "GET /apis/coordination.k8s.io/v1/namespaces/default/leases?watch=1{query} HTTP/1.1\r\nhost: x\r\n\r\n"
    );
    s.write_all(request.as_bytes()).await.expect("send");
    s
}

/// Writes `n` leases of about 100 KB each.
async fn write_leases(store: &Store, n: usize) {
    let holder = "h".repeat(100_000);
    for i in 0..n {
        let name = format!("l{i}");
        store
            .put(
                Key::new("leases.coordination.k8s.io", "default", &name),
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": name, "namespace": "default"},
                       "spec": {"holderIdentity": holder}}),
                Attrs::default(),
                Precondition::None,
            )
            .await
            .expect("put");
    }
}

/// Waits (up to [`SAFETY`]) until the store has `n` open watches.
async fn open_watches_reach(store: &Store, n: usize) -> bool {
    let until = tokio::time::Instant::now() + SAFETY;
    while tokio::time::Instant::now() < until {
        if store.open_watches() == n {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_watch_whose_client_never_reads_is_released_once_the_store_ends_it() {
    let (store, addr, stop, serving) = start(ConnectionLimits::default(), 8).await;
    let client = never_reading_watch(addr, "").await;
    assert!(open_watches_reach(&store, 1).await, "the watch started");
    // Far more than the socket buffers take: the server's writes block, the
    // watcher falls more than 8 events behind and the store ends it.
    write_leases(&store, 300).await;
    assert!(
        open_watches_reach(&store, 0).await,
        "the ended watch is released while its client still reads nothing ({} open)",
        store.open_watches()
    );
    drop(client);
    let _ = stop.send(());
    tokio::time::timeout(SAFETY, serving)
        .await
        .expect("stops")
        .expect("task")
        .expect("serve");
}

#[tokio::test]
async fn a_watch_whose_client_never_reads_is_released_at_its_timeout() {
    let (store, addr, stop, serving) = start(ConnectionLimits::default(), 4096).await;
    // Blocked writing before the timeout (20 MB is more than the socket
    // buffers take), without falling behind enough to be ended by the store.
    let client = never_reading_watch(addr, "&timeoutSeconds=2").await;
    assert!(open_watches_reach(&store, 1).await, "the watch started");
    write_leases(&store, 200).await;
    assert!(
        open_watches_reach(&store, 0).await,
        "the watch is released at its timeout ({} open)",
        store.open_watches()
    );
    drop(client);
    let _ = stop.send(());
    let _ = tokio::time::timeout(SAFETY, serving).await;
}

#[tokio::test]
async fn shutdown_does_not_wait_for_a_client_that_never_reads_beyond_the_request_timeout() {
    let limits = ConnectionLimits {
        body_timeout: Duration::from_secs(1),
        ..ConnectionLimits::default()
    };
    let (store, addr, stop, serving) = start(limits, 4096).await;
    let client = never_reading_watch(addr, "").await;
    assert!(open_watches_reach(&store, 1).await, "the watch started");
    write_leases(&store, 200).await;
    let _ = stop.send(());
    tokio::time::timeout(SAFETY, serving)
        .await
        .expect("serve returns although the client never reads")
        .expect("task")
        .expect("serve");
    drop(client);
}
