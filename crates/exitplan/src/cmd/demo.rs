//! `exitplan demo`: the built-in scenario `examples/scenarios/demo.yaml` — a
//! node drained through EvictionRequests while responders at different
//! priorities work, one of them going silent, under a PodDisruptionBudget.

use std::process::ExitCode;

use crate::output::Format;

/// Arguments of `exitplan demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Replace the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Output format (as for `exitplan simulate`).
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    output: Format,
}

/// Runs the command.
pub fn run(args: DemoArgs) -> ExitCode {
    super::simulate::simulate(
        "examples/scenarios/demo.yaml",
        exitplan_sim::DEMO,
        args.seed,
        args.output,
    )
}
