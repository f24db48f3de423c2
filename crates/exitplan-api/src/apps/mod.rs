//! temp
pub mod defaults;
pub mod deployment;
pub mod workload;
