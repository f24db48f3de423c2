//! policy/v1: PodDisruptionBudget validation and strategy ([`pdb`]) and the pod
//! eviction subresource decision ([`eviction_subresource`], job-failure spec §12).

pub mod eviction_subresource;
pub mod pdb;
