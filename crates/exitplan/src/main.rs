//! The `exitplan` command line.
//!
//! Reads the clock once and passes it down (one clock, injected); every
//! subcommand returns an exit status, and input problems exit with 2.

mod cmd;
mod input;
mod kinds;
mod output;
mod table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Run the sample eviction responder (works `--work` per eviction, then completes).
    Responder(cmd::responder::ResponderArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let clock = jiff::Timestamp::now();
    let result = match cli.command {
        Command::Up(args) => {
            return cmd::up::run(args).unwrap_or_else(|e| {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            });
        }
        Command::Validate(args) => cmd::validate::run(args, clock),
        Command::Explain(cmd) => cmd::explain::run(cmd, clock),
        Command::Responder(args) => cmd::responder::run(args),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}
