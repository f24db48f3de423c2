//! `exitplan controller`: the evictionrequest-controller and the imperative
//! evictor against any Kubernetes API server (a real cluster or `exitplan
//! up`), behind leader election so several replicas can run.
//!
//! * Builds a client from `--kubeconfig` (its current context).
//! * Campaigns for the Lease `--lease-namespace`/`--lease-name` as
//!   `--identity` (default `<hostname>_<random>`, as kube-controller-manager)
//!   with client-go's timings (15 s lease, 10 s renew deadline, 2 s retry).
//! * Runs the components only while leading. Losing the lease stops them at
//!   once and exits 1 (as kube-controller-manager: a fresh process, fresh
//!   caches, campaigns again under its supervisor).
//! * Serves `/metrics` (OpenMetrics text) and `/healthz` (`ok`) on
//!   `--metrics-addr` whether or not it leads; prints the bound address.
//! * Ctrl-C / SIGTERM: stops the components, releases the lease (client-go's
//!   `ReleaseOnCancel`, so a standby takes over at once), exits 0.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use clap::Args;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;

use exitplan_clock::{SharedClock, SystemClock};
use exitplan_runtime::context::Context;
use exitplan_runtime::leader::{LeaderConfig, LeaderElector};
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};

/// The content type of `/metrics` (what prometheus-client's encoder writes).
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Arguments of `exitplan controller`.
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// The kubeconfig of the cluster to control (its current context).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: PathBuf,
    /// Namespace of the leader-election Lease.
    #[arg(long, value_name = "NS", default_value = "kube-system")]
    pub lease_namespace: String,
    /// Name of the leader-election Lease.
    #[arg(long, value_name = "NAME", default_value = "exitplan-controller")]
    pub lease_name: String,
    /// This replica's identity in the Lease. Default: <hostname>_<random>.
    #[arg(long, value_name = "ID")]
    pub identity: Option<String>,
    /// Address of the /metrics and /healthz endpoints (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub metrics_addr: SocketAddr,
}

/// kube-controller-manager's default identity: `<hostname>_<random>`.
fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_owned())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "exitplan".to_owned());
    let suffix = exitplan_apiserver::rest::meta::random_hex(8)
        .unwrap_or_else(|_| std::process::id().to_string());
    format!("{host}_{suffix}")
}

/// Runs the controllers until Ctrl-C or SIGTERM (0) or a lost lease (1).
pub fn run(args: ControllerArgs) -> Result<ExitCode> {
    crate::process::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))
}

fn http(ctx: &Context) -> Router {
    let metrics = ctx.metrics.clone();
    Router::new()
        .route(
            "/metrics",
            get(move || {
                let body = metrics.encode();
                async move { ([(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], body).into_response() }
            }),
        )
        .route("/healthz", get(|| async { "ok" }))
}

/// client-go's `leader_election_master_status{name}`: 1 while leading.
fn leader_gauge(ctx: &Context, lease: &str) -> Gauge {
    let family = Family::<Vec<(String, String)>, Gauge>::default();
    ctx.metrics.registry(|r| {
        r.register(
            "leader_election_master_status",
            "Whether this replica leads the lease (1) or not (0)",
            family.clone(),
        );
    });
    family
        .get_or_create(&vec![("name".to_owned(), lease.to_owned())])
        .clone()
}

/// The client of the kubeconfig's current context, without kube-rs' default
/// retry layer: that layer silently re-sends any 429/503/504 up to 15 times
/// with a growing back-off, so a budget refusal of `/eviction` would never
/// reach the evictor, which must see it to count it, report it and back off
/// itself (eviction spec §8; client-go does not retry a 429 that carries no
/// `Retry-After`). The work queues retry failed syncs.
async fn client(path: &Path) -> Result<kube::Client> {
    let mut config = crate::connect::config(Some(path)).await?;
    config.default_retry = false;
    let client = kube::Client::try_from(config).context("building the API client")?;
    crate::connect::check_reachable(&client).await?;
    Ok(client)
}

async fn serve(args: ControllerArgs) -> Result<ExitCode> {
    // Before anything reports ready (see `shutdown_signal`).
    let signal = crate::process::shutdown_signal();
    let client = client(&args.kubeconfig).await?;
    let clock: SharedClock = Arc::new(SystemClock);
    let ctx = Context::new(client, clock.clone());
    let identity = args.identity.clone().unwrap_or_else(default_identity);
    let gauge = leader_gauge(&ctx, &args.lease_name);

    let listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .with_context(|| format!("binding {}", args.metrics_addr))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let (stop_http, mut http_stopped) = watch::channel(false);
    let app = http(&ctx);
    let server = tokio::spawn(async move {
        let done = async move {
            let _ = http_stopped.wait_for(|s| *s).await;
        };
        axum::serve(listener, app)
            .with_graceful_shutdown(done)
            .await
    });
    println!("exitplan controller serving metrics on http://{addr}");
    tracing::info!(%addr, %identity, lease = %format!("{}/{}", args.lease_namespace, args.lease_name), "exitplan controller started");

    let elector = LeaderElector::new(
        ctx.leases(&args.lease_namespace),
        args.lease_name.clone(),
        identity.clone(),
        LeaderConfig::default(),
        clock,
    );
    let mut leading = elector.subscribe();
    let (stop_elector, mut elector_stopped) = watch::channel(false);
    let elector = tokio::spawn(elector.run(async move {
        let _ = elector_stopped.wait_for(|s| *s).await;
    }));

    let mut signal = std::pin::pin!(signal);
    let code = 'run: {
        // Standby until leading.
        tokio::select! {
            () = &mut signal => break 'run ExitCode::SUCCESS,
            r = leading.wait_for(|l| *l) => if r.is_err() { break 'run ExitCode::FAILURE },
        }
        gauge.set(1);
        tracing::info!(%identity, "started leading: starting the controllers");
        let config = RuntimeConfig {
            components: [Component::EvictionRequest, Component::ImperativeEvictor]
                .into_iter()
                .collect(),
            nodes: Vec::new(),
            clients: None,
        };
        let lost = async {
            let _ = leading.wait_for(|l| !*l).await;
        };
        let mut lost = std::pin::pin!(lost);
        let components = tokio::select! {
            () = &mut signal => break 'run ExitCode::SUCCESS,
            () = &mut lost => {
                tracing::error!(%identity, "leaderelection lost");
                break 'run ExitCode::FAILURE;
            }
            rt = Runtime::start(ctx.clone(), config) => rt,
        };
        tracing::info!("controllers running");
        let code = tokio::select! {
            () = &mut signal => ExitCode::SUCCESS,
            () = &mut lost => {
                tracing::error!(%identity, "leaderelection lost");
                ExitCode::FAILURE
            }
        };
        components.shutdown().await;
        tracing::info!("controllers stopped");
        code
    };
    gauge.set(0);
    // Components are stopped: now give up (release) the lease.
    let _ = stop_elector.send(true);
    if let Err(e) = elector.await {
        tracing::warn!(error = %e, "leader election task failed");
    }
    let _ = stop_http.send(true);
    match server.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "metrics server failed"),
        Err(e) => tracing::warn!(error = %e, "metrics server task failed"),
    }
    tracing::info!("stopped");
    Ok(code)
}
