//! batch/v1 Job: validation, defaulting and strategy for everything failure
//! handling touches (spec `job-failure.md` §1, §10, §15).

pub mod constants;
