//! `exitplan responder`: the sample eviction responder, on the
//! `exitplan-responder` SDK.
//!
//! Watches the Evictions labelled for `--name` and, on each one where it is
//! Active, works for `--work` (reporting progress and
//! `expectedCompletionTime`, heartbeating every `--heartbeat`), then reports
//! completion. `--fail` stops heartbeating halfway: the controller interrupts
//! the responder 20 minutes after its last heartbeat.
//!
//! Connects with `--kubeconfig`, else `$KUBECONFIG`, else the kubeconfig
//! `exitplan up` writes by default (`<data>/kubeconfig`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use exitplan_responder::Responder;
use exitplan_responder::sample::TimedWork;

/// Arguments of `exitplan responder`.
#[derive(Debug, Args)]
pub struct ResponderArgs {
    /// The responder's name: the key pods list in spec.evictionResponders.
    #[arg(long, value_name = "NAME", default_value = "example.com/migrator")]
    pub name: String,
    /// How long the work on each eviction takes (5m, 90s, 1h30m).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = super::parse_duration)]
    pub work: Duration,
    /// Stop heartbeating halfway instead of completing (the controller
    /// interrupts the responder 20 min after its last heartbeat).
    #[arg(long)]
    pub fail: bool,
    /// How long after its last report the responder heartbeats (20s..19m).
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = super::parse_duration)]
    pub heartbeat: Duration,
    /// The kubeconfig. Default: $KUBECONFIG, else `exitplan up`'s <data>/kubeconfig.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Watch only this namespace. Default: all namespaces.
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
}

/// Runs the sample responder until Ctrl-C or SIGTERM. Connection and watch
/// failures are reported and exit 1.
pub fn run(args: ResponderArgs) -> Result<ExitCode> {
    crate::process::init_logging();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(respond(args))
}

async fn respond(args: ResponderArgs) -> Result<ExitCode> {
    let client = crate::connect::client(args.kubeconfig.as_deref()).await?;
    // Before anything reports ready (see `shutdown_signal`).
    let signal = crate::process::shutdown_signal();
    let work = TimedWork {
        duration: args.work,
        fail: args.fail,
    };
    tracing::info!(
        responder = %args.name,
        work = ?args.work,
        fail = args.fail,
        "starting the sample responder"
    );
    let responder = Responder::new(client, &args.name, Arc::new(exitplan_clock::SystemClock))
        .namespace(args.namespace)
        .heartbeat_interval(args.heartbeat);
    tokio::select! {
        r = responder.run(move |eviction| work.run(eviction)) => {
            r.map_err(|e| anyhow!(e))?;
            Ok(ExitCode::SUCCESS)
        }
        () = signal => Ok(ExitCode::SUCCESS),
    }
}
