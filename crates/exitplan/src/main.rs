//! The `exitplan` command line.
//!
//! Reads the clock once and passes it down (one clock, injected); every
//! subcommand returns an exit status, and input problems exit with 2.

mod cmd;
mod connect;
mod input;
mod kinds;
mod output;
mod process;
mod table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc malloc: the server and controllers allocate
/// heavily (JSON, field sets), and glibc's fragmentation handling took ~40%
/// of the drain benchmark's CPU.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// exitplan — how Kubernetes pods leave: cooperative eviction and Job failure handling.
#[derive(Debug, Parser)]
#[command(name = "exitplan", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate an object offline exactly as the API server would admit it.
    Validate(cmd::validate::ValidateArgs),
    /// Explain how a controller judges an object (`explain job`).
    #[command(subcommand)]
    Explain(cmd::explain::ExplainCommand),
    /// Run the embedded Kubernetes-compatible API server (durable, with a kubeconfig).
    Up(cmd::up::UpArgs),
    /// Print benchmark figures (`bench apiserver`); build with --release.
    #[command(subcommand)]
    Bench(cmd::bench::BenchCommand),
    /// Run the evictionrequest-controller and imperative evictor against a cluster, leader-elected.
    Controller(cmd::controller::ControllerArgs),
    /// Cordon a node and evict its pods through EvictionRequests, showing progress.
    Drain(cmd::drain::DrainArgs),
    /// Run a scenario in virtual time and print its timeline.
    Simulate(cmd::simulate::SimulateArgs),
    /// Run a built-in demo scenario: a drain with cooperative responders, or `jobs`.
    Demo(cmd::demo::DemoArgs),
    /// Run the sample eviction responder (works `--work` per eviction, then completes).
    Responder(cmd::responder::ResponderArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let clock = jiff::Timestamp::now();
    match cli.command {
        // Offline input checks: a bad input (not a Kubernetes object of a
        // supported kind) exits 2 with a one-line reason.
        Command::Validate(args) => input_status(cmd::validate::run(args, clock)),
        Command::Explain(cmd) => input_status(cmd::explain::run(cmd, clock)),
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        // Long-running commands: any error exits 1.
        Command::Up(args) => status(cmd::up::run(args)),
        Command::Bench(cmd) => status(cmd::bench::run(cmd)),
        Command::Controller(args) => status(cmd::controller::run(args)),
        Command::Drain(args) => status(cmd::drain::run(args)),
        Command::Responder(args) => status(cmd::responder::run(args)),
    }
}

/// The exit status of a command whose errors are input problems (exit 2).
fn input_status<E: std::fmt::Display>(result: Result<ExitCode, E>) -> ExitCode {
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}

/// The exit status of a command whose errors are failures (exit 1), with
/// the error's whole chain on one line — or, when the server could not be
/// reached, only that (it names the server and the cause; the step being
/// attempted adds nothing).
fn status(result: anyhow::Result<ExitCode>) -> ExitCode {
    result.unwrap_or_else(|e| {
        match e.downcast_ref::<connect::Unreachable>() {
            Some(unreachable) => eprintln!("error: {unreachable}"),
            None => eprintln!("error: {e:#}"),
        }
        ExitCode::FAILURE
    })
}
