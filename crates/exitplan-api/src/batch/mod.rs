//! batch/v1 Job: validation, defaulting and strategy for everything failure
//! handling touches (spec `job-failure.md` §1, §5, §10, §15).

pub mod constants;
pub mod defaults;
pub mod equality;
pub mod generic_meta;
pub mod indexes;
pub mod label_selector;
pub mod nonnegative;
pub mod render;

pub use defaults::default_job;
