//! A complete eviction responder: copy this file to start your own.
//!
//! `example.com/migrator` "migrates" a pod's workload before the pod is
//! evicted. Pods opt in with
//!
//! ```yaml
//! spec:
//!   evictionResponders:
//!   - name: example.com/migrator
//!     priority: 10000
//! ```
//!
//! and when an EvictionRequest for such a pod comes, the evictionrequest
//! controller makes this responder Active on the pod's Eviction; this program
//! does its work, heartbeating (automatically) and reporting progress, then
//! reports completion so the next responder (finally the default evictor)
//! takes over.
//!
//! Run it with a kubeconfig in `$KUBECONFIG` (or in-cluster):
//! `cargo run -p exitplan-responder --example migrator`. In your own crate,
//! depend on `kube` with a TLS feature (`rustls-tls` or `openssl-tls`) to talk
//! to an HTTPS API server, and on `exitplan-responder`, `exitplan-clock`,
//! `tokio`, `jiff` and `tracing`.

use std::sync::Arc;
use std::time::Duration;

use exitplan_responder::{ActiveEviction, Responder, WorkResult};
use jiff::SignedDuration;

/// The responder's name: the key pods list in `spec.evictionResponders`.
const NAME: &str = "example.com/migrator";

/// Steps of the (pretend) migration.
const STEPS: u32 = 5;
const STEP: Duration = Duration::from_secs(60);

/// The work on one Eviction. Heartbeats run while this future runs; return
/// `Ok` only through `complete`, or an error to give up (heartbeats stop, and
/// the controller moves on after 20 minutes).
async fn migrate(work: ActiveEviction) -> WorkResult {
    let pod = work.target().name.clone();
    tracing::info!(pod = %pod, eviction = %work.name(), "migrating");
    for step in 0..STEPS {
        let remaining = STEP * (STEPS - step);
        let eta = work.now() + SignedDuration::try_from(remaining)?;
        work.progress(format!("migrating {pod}: step {step}/{STEPS}"), Some(eta))
            .await?;
        tokio::select! {
            () = tokio::time::sleep(STEP) => {}
            // Canceled (nobody wants the eviction any more), interrupted, or
            // the pod is gone: stop, leave things consistent.
            reason = work.canceled() => {
                tracing::info!(pod = %pod, %reason, "stopping");
                return Err(format!("stopped at step {step}: {reason}").into());
            }
        }
    }
    Ok(work.complete(format!("migrated {pod}")).await?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let client = kube::Client::try_default().await?;
    Responder::new(client, NAME, Arc::new(exitplan_clock::SystemClock))
        .namespace(std::env::var("NAMESPACE").ok())
        .heartbeat_interval(Duration::from_secs(3 * 60))
        .run(migrate)
        .await?;
    Ok(())
}
