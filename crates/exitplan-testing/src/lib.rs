//! # exitplan-testing — envtest for Rust
//!
//! A Kubernetes-compatible API server inside your test's process, with a
//! [`kube::Client`] on it: test a kube-rs controller — its CRDs, its
//! reconcile loop, its status writes, the API server's validation of its
//! custom resources (OpenAPI schema and CEL `x-kubernetes-validations`) —
//! without a cluster, a container or a downloaded binary.
//!
//! * **Fast**: the store is in memory and the client talks to the server's
//!   router directly (no socket); a [`TestEnv`] starts in milliseconds.
//! * **Virtual time**: the server's clock follows tokio time, so under
//!   `#[tokio::test(start_paused = true)]` a controller's 10-minute requeue
//!   passes in microseconds and timestamps are exact.
//! * **Independent**: each `TestEnv` is its own server; tests run in
//!   parallel in one process.
//! * **Optional extras**: exitplan's controllers (eviction, disruption,
//!   garbage collection, scheduling, Jobs) and simulated nodes that run
//!   pods; a real `127.0.0.1` port with a kubeconfig for kubectl or other
//!   processes.
//!
//! ```
//! use exitplan_testing::TestEnv;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, ObjectMeta, PostParams};
//!
//! // In a test: #[tokio::test(start_paused = true)] async fn …
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let env = TestEnv::builder()
//!     // .crds([Widget::crd()])  // your #[derive(CustomResource)] types
//!     .start_time("2026-01-01T00:00:00Z".parse()?)
//!     .start()
//!     .await?;
//! let client: kube::Client = env.client();
//! // tokio::spawn(my_operator::run(client.clone()));
//! let maps: Api<ConfigMap> = Api::default_namespaced(client);
//! let hello = ConfigMap {
//!     metadata: ObjectMeta { name: Some("hello".into()), ..ObjectMeta::default() },
//!     ..ConfigMap::default()
//! };
//! let created = maps.create(&PostParams::default(), &hello).await?;
//! // The server's clock follows tokio time: an hour passes at once.
//! tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
//! assert_eq!(env.now(), "2026-01-01T01:00:00Z".parse()?);
//! assert_eq!(
//!     created.metadata.creation_timestamp.map(|t| t.0),
//!     Some("2026-01-01T00:00:00Z".parse()?)
//! );
//! env.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Installing CRDs waits, as Go's envtest does, until each is `Established`
//! and its resource is served; an invalid CRD fails with the API server's
//! message ([`Error::CrdRefused`]). More can be installed later with
//! [`TestEnv::install_crds`]. `examples/widget-operator` in the repository
//! is a complete controller tested this way.
//!
//! * [`env`](mod@env) — [`TestEnv`] and [`TestEnvBuilder`].
//! * [`error`] — [`Error`].

mod crds;
pub mod env;
pub mod error;
mod listen;

pub use env::{CONTROLLERS, DEFAULT_CRD_TIMEOUT, TestEnv, TestEnvBuilder};
pub use error::Error;
pub use exitplan_clock::{Clock, SharedClock};
pub use exitplan_runtime::runtime::Component;
