//! `exitplan simulate SCENARIO.yaml`: run a scenario in virtual time and print
//! its timeline (`docs/simulate.md`).
//!
//! Exit status: 0 the scenario ran, 1 it ran but a step failed (the report
//! lists it) or the simulation could not start, 2 the scenario is invalid
//! (`file:line: reason`, nothing run).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use exitplan_sim::responder::BuiltinResponders;
use exitplan_sim::{Scenario, engine};

use crate::output::Format;

/// Arguments of `exitplan simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The scenario (YAML; `-` reads stdin).
    #[arg(value_name = "SCENARIO.yaml")]
    scenario: PathBuf,
    /// Replace the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Output format: text (default) prints the timeline, the per-pod summary
    /// and the `show` objects; json and yaml print the same as data.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    output: Format,
}

/// Runs the command.
pub fn run(args: SimulateArgs) -> ExitCode {
    let (label, text) = if args.scenario.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        ("<stdin>".to_owned(), s)
    } else {
        let label = args.scenario.display().to_string();
        match std::fs::read_to_string(&args.scenario) {
            Ok(s) => (label, s),
            Err(e) => {
                eprintln!("error: cannot read {label}: {e}");
                return ExitCode::from(2);
            }
        }
    };
    simulate(&label, &text, args.seed, args.output)
}

/// Parses `text` (named `label` in errors), runs it and prints the report.
pub fn simulate(label: &str, text: &str, seed: Option<u64>, format: Format) -> ExitCode {
    let mut scenario = match Scenario::parse(label, text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    let report = match engine::run_blocking(&scenario, Arc::new(BuiltinResponders)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let out = match format {
        Format::Text => report.to_text(),
        Format::Json => report.to_json(),
        Format::Yaml => report.to_yaml(),
    };
    print!("{out}");
    if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        for e in &report.errors {
            eprintln!("error: {e}");
        }
        ExitCode::FAILURE
    }
}
