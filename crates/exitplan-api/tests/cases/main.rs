//! Table-driven ports of the spec's numbered cases that concern the API layer.
//! Each module is named after a section of `eviction-cases.md` or
//! `job-failure-cases.md`; each test is named after its case number so a reader
//! can find it with one search (`case_27_…`).
//!
//! One test binary per crate keeps link time down on small machines.

mod eviction_request;
mod eviction_status;
mod eviction_subresource;
mod job_validation;
mod patch;
mod patch_schema;
mod pdb_validation;
mod pod_annotations;
mod pod_fixture;
mod pod_qos;
mod pod_responders;
mod pod_spec_validation;
mod pod_status;
mod pod_subresources;
mod pod_update;
mod pod_validation;
mod sort;
mod storage_network_samples;
mod support;
