//! `exitplan bench …`: benchmarks that print figures (they assert nothing;
//! speed and memory targets are checked by reading these, never by timed
//! assertions in tests). Build with `--release` for meaningful figures.

pub mod apiserver;
mod apiserver_auth;
mod apiserver_crd;
pub mod apiserver_memory;
mod connections;
pub mod drain;
pub mod jobs;
mod measure;

use std::process::ExitCode;

use clap::Subcommand;

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The embedded API server: durable creates/s, LIST, watch fan-out, RSS.
    Apiserver(apiserver::ApiserverArgs),
    /// The whole eviction loop in-process: end-to-end evictions/s, latency, RSS.
    Drain(drain::DrainArgs),
    /// Jobs with failure policies under chaos: time to converge, Job syncs/s.
    Jobs(jobs::JobsArgs),
}

/// Runs one benchmark.
pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Apiserver(args) => apiserver::run(args),
        BenchCommand::Drain(args) => drain::run(args),
        BenchCommand::Jobs(args) => jobs::run(args),
    }
}
