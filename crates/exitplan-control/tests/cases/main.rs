//! Table-driven ports of the spec's numbered controller cases, one module per
//! controller, each test named after its case number (`case_70_…`), plus the
//! property tests of the controllers' invariants.
//!
//! One test binary per crate keeps link time down on small machines.

mod disruption;
mod evictionrequest_controller;
mod imperative;
mod job_status_validity;
mod job_success_policy;
mod job_sync;
mod pod_failure_policy;
mod simulation;
