//! `exitplan demo [eviction|jobs]`: a built-in scenario.
//!
//! * `eviction` (the default, `examples/scenarios/demo.yaml`): a node drained
//!   through EvictionRequests while responders at different priorities
//!   work, one of them going silent, under a PodDisruptionBudget.
//! * `jobs` (`examples/scenarios/jobs.yaml`): a drain hitting two Jobs side
//!   by side, one whose pod failure policy ignores `DisruptionTarget`, one
//!   without, and what each spent of its backoffLimit.

use std::process::ExitCode;

use crate::output::Format;

/// Arguments of `exitplan demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Which demo.
    #[arg(value_enum, default_value_t = Which::Eviction)]
    which: Which,
    /// Replace the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Output format (as for `exitplan simulate`).
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    output: Format,
}

/// The built-in scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// A node drained through cooperative responders and a PDB.
    Eviction,
    /// A drain hitting two Jobs: one ignores DisruptionTarget, one does not.
    Jobs,
}

/// Runs the command.
pub fn run(args: DemoArgs) -> ExitCode {
    let (file, text) = match args.which {
        Which::Eviction => ("examples/scenarios/demo.yaml", exitplan_sim::DEMO),
        Which::Jobs => ("examples/scenarios/jobs.yaml", exitplan_sim::JOBS_DEMO),
    };
    super::simulate::simulate(file, text, args.seed, args.output)
}
