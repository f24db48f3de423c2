//! # exitplan-sim
//!
//! Scenarios in virtual time (`exitplan simulate`, `exitplan demo`): the
//! embedded API server, the controllers, the simulated scheduler and nodes
//! and in-process responders run in one process under tokio's paused clock,
//! driven by a scenario's steps; every change is recorded as a timeline line.
//! `docs/simulate.md` describes the format and the output.
//!
//! * [`scenario`] — the model and its parser (errors carry `file:line`).
//! * [`engine`] — running a scenario.
//! * [`timeline`] — changes turned into lines, the per-pod summary and the
//!   per-Job summary.
//! * [`names`] — `generateName` names drawn from the seed, so runs match.
//! * [`responder`] — the in-process responder hook, and the scenario
//!   responders on the `exitplan-responder` SDK.
//! * [`report`] — the result, as text, JSON or YAML.
//!
//! ```no_run
//! use std::sync::Arc;
//! use exitplan_sim::{Scenario, engine, responder::BuiltinResponders};
//!
//! let scenario = Scenario::parse("demo.yaml", exitplan_sim::DEMO).expect("valid");
//! let report = engine::run_blocking(&scenario, Arc::new(BuiltinResponders)).expect("ran");
//! print!("{}", report.to_text());
//! ```

pub mod duration;
pub mod engine;
pub mod kinds;
pub mod names;
pub mod report;
pub mod responder;
pub mod scenario;
pub mod timeline;

pub use report::Report;
pub use scenario::{Scenario, ScenarioError};

/// The built-in demo scenario (`examples/scenarios/demo.yaml`).
pub const DEMO: &str = include_str!("../../../examples/scenarios/demo.yaml");

/// The built-in Jobs demo (`examples/scenarios/jobs.yaml`, `exitplan demo jobs`).
pub const JOBS_DEMO: &str = include_str!("../../../examples/scenarios/jobs.yaml");
